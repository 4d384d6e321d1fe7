# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Kernel I/O benchmark, a vm-tests scenario run by bench/run-bench.sh
# (vm-tests/run-scenario.sh bench/kernel-io.sh): one VM, three identical
# virtio disks formatted crc32c, sha256 and hmac-sha256 (its key loaded as
# the logon key btrfs:bench).  Each measurement covers the three at once,
# interleaved in small steps by ba-iobench (see there why), and is repeated
# in rounds that rotate which one starts; a scrub cannot be interleaved, so
# the three scrubs of a round run one after the other in rotating order.
#
# Inputs (environment, set by run-bench.sh): BA_BENCH_IOTOOL (ba-iobench),
# BA_BENCH_KEY (a throwaway key file), BA_BENCH_RESULTS (where the results
# go), BA_BENCH_MIB, BA_BENCH_REPS, BA_BENCH_RANDREADS, BA_BENCH_FILES,
# BA_BENCH_HASH_BLOCKS, BA_BENCH_IMG_SIZE, BA_BENCH_DISK_ORDER.
#
# Besides the file system measurements, "hash" times the kernel's own
# checksum drivers (the ones btrfs uses) on 4 KiB blocks through AF_ALG:
# the checksum's cost without the I/O around it.
BA_NEEDS_PATCHED_PROGS=1
BA_MEM=1024
BA_TIMEOUT=${BA_BENCH_TIMEOUT:-3600}

host_prepare() {
	local size=${BA_BENCH_IMG_SIZE:-2G} fs
	: "${BA_BENCH_IOTOOL:?}" "${BA_BENCH_KEY:?}" "${BA_BENCH_RESULTS:?}"
	vm_mkfs crc32c.img "$size" --csum crc32c
	vm_mkfs sha256.img "$size" --csum sha256
	vm_mkfs hmac.img "$size" --csum hmac-sha256 --auth-key-file "$BA_BENCH_KEY"
	# The disks' order (which is vda, vdb, vdc): BA_BENCH_DISK_ORDER, for
	# checking that a figure does not depend on the position of the disk.
	for fs in ${BA_BENCH_DISK_ORDER:-crc32c sha256 hmac}; do
		case $fs in crc32c | sha256 | hmac) vm_disk "$fs.img" ;; *) ba_die "BA_BENCH_DISK_ORDER: '$fs'?" ;; esac
	done
	vm_guest_env DISK_ORDER "${BA_BENCH_DISK_ORDER:-crc32c sha256 hmac}"
	vm_guest_binary "$BA_BENCH_IOTOOL:/usr/bin/ba-iobench"
	install -m 0600 "$BA_BENCH_KEY" "$BA_TO_GUEST/key"
	vm_guest_env MIB "${BA_BENCH_MIB:-256}"
	vm_guest_env REPS "${BA_BENCH_REPS:-3}"
	vm_guest_env RANDREADS "${BA_BENCH_RANDREADS:-4000}"
	vm_guest_env FILES "${BA_BENCH_FILES:-4000}"
	vm_guest_env HASH_BLOCKS "${BA_BENCH_HASH_BLOCKS:-8192}"
	vm_module algif_hash
}

guest_drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

guest_mount_all() {
	local n=0 fs opts
	for fs in $DISK_ORDER; do
		mkdir -p "/mnt/$fs"
		opts=noatime
		[ "$fs" != hmac ] || opts=noatime,auth_key=btrfs:bench
		mount -t btrfs -o "$opts" "$(ba_disk "$n")" "/mnt/$fs" || return 1
		n=$((n + 1))
	done
}

# The file systems in the order of round $1 for test number $2: rotated,
# so over three rounds each one runs first, second and third once.
guest_order() {
	case $((($1 + $2) % 3)) in
	0) echo crc32c sha256 hmac ;;
	1) echo sha256 hmac crc32c ;;
	*) echo hmac crc32c sha256 ;;
	esac
}

# guest_fs_of TARGET: the file system a target of ba-iobench belongs to.
guest_fs_of() {
	case $1 in
	/mnt/*) echo "$1" | cut -d/ -f3 ;;
	'hmac(sha256)') echo hmac ;;
	*) echo "$1" ;;
	esac
}

# guest_measure TEST ROUND FS...: one measurement of all three file systems
# at once, interleaved by ba-iobench in small steps (the first one given
# starts); appended to results.txt as "TEST FS ROUND seconds=S bytes=B ops=N".
guest_measure() {
	local t=$1 r=$2 fs targets='' target rest
	shift 2
	case $t in
	write)
		for fs; do rm -f "/mnt/$fs/big"; targets="$targets /mnt/$fs/big"; done
		guest_drop_caches
		# shellcheck disable=SC2086 # a list of paths without blanks
		ba-iobench write "$MIB" $targets >/tmp/measure.out ;;
	read | randread)
		for fs; do targets="$targets /mnt/$fs/big"; done
		guest_drop_caches
		if [ "$t" = read ]; then
			# shellcheck disable=SC2086
			ba-iobench read $targets >/tmp/measure.out
		else
			# shellcheck disable=SC2086
			ba-iobench randread "$RANDREADS" $targets >/tmp/measure.out
		fi ;;
	meta)
		for fs; do rm -rf "/mnt/$fs/meta"; targets="$targets /mnt/$fs/meta"; done
		guest_drop_caches
		# shellcheck disable=SC2086
		ba-iobench meta "$FILES" $targets >/tmp/measure.out ;;
	hash)
		for fs; do
			case $fs in hmac) targets="$targets hmac(sha256)" ;; *) targets="$targets $fs" ;; esac
		done
		# shellcheck disable=SC2086
		ba-iobench hash "$HASH_BLOCKS" $targets >/tmp/measure.out ;;
	esac || { cat /tmp/measure.out; return 1; }
	while read -r target rest; do
		echo "$t $(guest_fs_of "$target") $r $rest" | tee -a "$BA_OUT/results.txt"
	done </tmp/measure.out
	[ "$(wc -l </tmp/measure.out)" = 3 ]
}

# guest_scrub FS ROUND: a scrub cannot be interleaved (the kernel runs it);
# the three run one after the other, in rotating order.
guest_scrub() {
	local fs=$1 r=$2 line
	guest_drop_caches
	line=$(ba-iobench run btrfs scrub start -B -R "/mnt/$fs" 2>/tmp/scrub.out) || {
		cat /tmp/scrub.out
		return 1
	}
	# The bytes the scrub verified, data and both copies of metadata.
	line="${line#* } $(awk '/data_bytes_scrubbed|tree_bytes_scrubbed/ { n += $2 }
		END { printf "scrubbed=%d", n }' /tmp/scrub.out)"
	echo "scrub $fs $r $line" | tee -a "$BA_OUT/results.txt"
}

guest() {
	local r=0 k t fs
	check add-key sh -c 'keyctl padd logon btrfs:bench @u </ba/in/key'
	rm -f /ba/in/key
	check mount-all guest_mount_all || return 1
	# What the numbers depend on: the guest CPU's features and the
	# checksum drivers each file system uses.
	grep -m 1 '^flags' /proc/cpuinfo >"$BA_OUT/guest-cpu.txt"
	grep -m 1 '^model name' /proc/cpuinfo >>"$BA_OUT/guest-cpu.txt"
	dmesg | grep -E 'BTRFS info .*(using|checksum)' >"$BA_OUT/csum-drivers.txt"
	awk '/^name/ { n = $3 } /^driver/ { d = $3 } /^priority/ { print n, d, $3 }' \
		/proc/crypto >"$BA_OUT/crypto.txt"
	: >"$BA_OUT/results.txt"
	while [ "$r" -lt "$REPS" ]; do
		k=0
		for t in write read randread meta hash; do
			# shellcheck disable=SC2046 # the order is three words
			check "$t-r$r" guest_measure "$t" "$r" $(guest_order "$r" "$k")
			k=$((k + 1))
		done
		for fs in $(guest_order "$r" "$k"); do
			check "scrub-$fs-r$r" guest_scrub "$fs" "$r"
		done
		r=$((r + 1))
	done
	check umount-all umount /mnt/crc32c /mnt/sha256 /mnt/hmac
}

host_check() {
	mkdir -p "$BA_BENCH_RESULTS"
	cp "$BA_FROM_GUEST/results.txt" "$BA_FROM_GUEST/guest-cpu.txt" \
		"$BA_FROM_GUEST/csum-drivers.txt" "$BA_FROM_GUEST/crypto.txt" "$BA_BENCH_RESULTS/"
}
