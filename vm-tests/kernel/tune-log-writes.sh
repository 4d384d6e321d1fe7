# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Power cuts as the kernel's block layer sees them (issue 14): a checksum
# change and a rekey by the patched btrfstune, each on a device-mapper
# log-writes target, which records every write the kernel completes and
# every cache flush.  Replaying such a log up to a flush gives the disk after
# a power cut right after that flush: what completed later was still in a
# volatile cache.
#   guest: crc32c -> hmac-sha256 on disk 0 (log on disk 1), then a rekey of
#          an hmac-sha256 filesystem on disk 2 (log on disk 3).
#   host:  for each change, the kernel's flushes are as many as the fsyncs
#          that tests/lostwrites.so (the power cut of progs-tune-lost-writes)
#          counts for the same command on the host; at every flush, the
#          replayed disk is byte for byte the image lostwrites.so leaves
#          after a power cut at that point, also with the primary
#          superblock's last write torn (its first 2 KiB landed), and the
#          same command run again completes the change, which then checks
#          clean with the new key; the rerun also completes where every
#          other write after the flush landed (a cache that wrote out of
#          order, in the kernel's bios).  The whole log replayed is the
#          guest's disk, which is what the change makes on the host.
# So the host test's power cuts are those of a real disk behind the kernel,
# and what it shows for them (every mode, cancels, super-recover) holds for
# the kernel's.
BA_NEEDS_PATCHED_PROGS=1
BA_TIMEOUT=600
BA_MEM=1024
BA_SECRETS='k1.key k2.key to-guest initrd.img'

host_prepare() {
	local progs i
	progs=$(dirname "$BA_MKFS")
	[ -x "$progs/btrfstune" ] || ba_die "no patched btrfstune in $progs"
	command -v dmsetup >/dev/null || ba_die "dmsetup not found; apt-get install dmsetup"
	(
		umask 077
		head -c 32 /dev/urandom >k1.key
		head -c 32 /dev/urandom >k2.key
	)
	# The fixture of progs-tune-lost-writes: 72 MiB of data, two
	# transactions of new data checksums, and 300 small files.
	mkdir -p data/big data/small
	for i in $(seq 1 12); do head -c 6M /dev/urandom >"data/big/f$i"; done
	for i in $(seq 1 300); do seq 1 $((i * 7)) >"data/small/s$i"; done
	vm_mkfs crc.img 300M --rootdir data
	rm -rf data
	cp --sparse=always crc.img hmac.img
	"$progs/btrfstune" --csum hmac-sha256 --new-auth-key-file k1.key hmac.img >convert.log 2>&1 ||
		ba_die "converting the rekey's image failed: $(tail -n 3 convert.log)"
	cp --sparse=always crc.img crc.before
	cp --sparse=always hmac.img hmac.before
	truncate -s 256M conv.log rekey.log
	vm_disk crc.img
	vm_disk conv.log
	vm_disk hmac.img
	vm_disk rekey.log
	vm_module dm-log-writes
	vm_guest_binary "$progs/btrfstune:/usr/sbin/btrfstune"
	vm_guest_binary "$(command -v dmsetup):/usr/sbin/dmsetup"
	install -m 0600 k1.key "$BA_TO_GUEST/k1.key"
	install -m 0600 k2.key "$BA_TO_GUEST/k2.key"
}

# btrfstune with the rest of the arguments on a log-writes target named $1
# over disk $2, logging to disk $3.  No udev here: dmsetup makes the node.
guest_logged() {
	local name=$1 dev log rc=0
	dev=$(ba_disk "$2") && log=$(ba_disk "$3") || return 1
	shift 3
	DM_DISABLE_UDEV=1 dmsetup create "$name" \
		--table "0 $(cat "/sys/block/${dev#/dev/}/size") log-writes $dev $log" || return 1
	btrfstune "$@" "/dev/mapper/$name" || rc=$?
	# Removing the target writes the log's superblock, with its entry count.
	DM_DISABLE_UDEV=1 dmsetup remove "$name" || return 1
	return "$rc"
}

guest() {
	check conversion-logged guest_logged conv 0 1 --csum hmac-sha256 --new-auth-key-file /ba/in/k1.key
	check rekey-logged guest_logged rekey 2 3 --auth-key-file /ba/in/k1.key --new-auth-key-file /ba/in/k2.key
	check sync sync
}

# After a power cut ($1) of the change "$@", image $2: the same command
# completes it, and it checks clean with the new key $key.
rerun() {
	local cut=$1 img=$2
	shift 2
	"$tune" "$@" "$img" >rerun.log 2>&1 ||
		ba_die "$name: after a power cut at $cut the rerun failed: $(grep -m 2 -E 'ERROR|WARN' rerun.log)"
	"$BA_BTRFS" check --check-data-csum --auth-key-file "$key" "$img" >check.log 2>&1 ||
		ba_die "$name: after a power cut at $cut and the rerun, btrfs check failed: $(tail -n 3 check.log)"
}

# Image $1: disk $before after a power cut right after flush $2 of $log,
# the writes after it lost as $3 says (log-replay: "", odd, torn=OFFSET).
replay_to() {
	cp --sparse=always "$before" "$1"
	"$replay" "$log" "$2" "$1" ${3:+"$3"} || ba_die "$name: replaying up to flush $2 ${3:+($3)} failed"
}

# Image $1: disk $before after the change "$@" lost power at its fsync $2
# under lostwrites.so, with more of its settings in $3 (NAME=VALUE or "").
cut_at_fsync() {
	local img=$1 n=$2 more=$3
	shift 3
	cp --sparse=always "$before" "$img"
	env LD_PRELOAD="$lib" LOSTWRITES_FILE="$PWD/$img" LOSTWRITES_CRASH_AT="$n" ${more:+"$more"} \
		"$tune" "$@" "$img" >cut.log 2>&1 && ba_die "$name: lostwrites.so cut no power at fsync $n"
	return 0
}

# A power cut right after flush $1 of the change "$@": the replayed disk is
# the image lostwrites.so leaves for a cut at the next fsync, also with the
# primary superblock's last write torn (counted in torn_cuts where that
# changes the disk), and the rerun completes on it.  So it does where every
# other write after the flush landed too, where that is neither this nor
# the next flush's disk (counted in odd_cuts).
cut_after_flush() {
	local k=$1
	shift
	replay_to replay.img "$k"
	cut_at_fsync cut.img $((k + 1)) '' "$@"
	cmp -s replay.img cut.img ||
		ba_die "$name: after flush $k the kernel's disk differs from lostwrites.so's ($(cmp replay.img cut.img | head -n 1))"
	replay_to torn.img "$k" torn=65536
	cut_at_fsync cut.img $((k + 1)) LOSTWRITES_TEAR=65536 "$@"
	cmp -s torn.img cut.img ||
		ba_die "$name: after flush $k with a torn superblock the kernel's disk differs from lostwrites.so's ($(cmp torn.img cut.img | head -n 1))"
	cmp -s torn.img replay.img || torn_cuts=$((torn_cuts + 1))
	replay_to odd.img "$k" odd
	replay_to next.img $((k + 1))
	if ! cmp -s odd.img replay.img && ! cmp -s odd.img next.img; then
		rerun "flush $k with every other later write landed" odd.img "$@"
		odd_cuts=$((odd_cuts + 1))
	fi
	rerun "flush $k" replay.img "$@"
}

# The change "$@" of image $2 (as it was before: $3), logged in $4, checked
# against lostwrites.so; $1 names it, $5 is the new key.
replayed() {
	local name=$1 disk=$2 before=$3 log=$4 key=$5 flushes fsyncs k
	shift 5
	flushes=$("$replay" --flushes "$log") || ba_die "$name: the log cannot be read"
	[ "$flushes" -gt 2 ] || ba_die "$name: only $flushes flushes in the log"
	cp --sparse=always "$before" host.img
	LD_PRELOAD=$lib LOSTWRITES_FILE=$PWD/host.img LOSTWRITES_COUNT=$PWD/fsyncs \
		"$tune" "$@" host.img >host.log 2>&1 || ba_die "$name on the host failed: $(tail -n 3 host.log)"
	fsyncs=$(cat fsyncs)
	[ "$flushes" = "$fsyncs" ] ||
		ba_die "$name: the kernel flushed the device $flushes times, lostwrites.so counts $fsyncs fsyncs"
	cmp -s "$disk" host.img || ba_die "$name: the guest's disk is not what the change makes on the host"
	replay_to replay.img all
	cmp -s replay.img host.img || ba_die "$name: the whole log replayed is not the guest's disk"
	odd_cuts=0 torn_cuts=0
	for ((k = 0; k < flushes; k++)); do cut_after_flush "$k" "$@"; done
	# A flush that made one write durable has no other order to lose them in.
	[ "$odd_cuts" -ge 2 ] || ba_die "$name: only $odd_cuts flushes had writes to lose out of order"
	[ "$torn_cuts" -ge 2 ] || ba_die "$name: only $torn_cuts flushes had a superblock write to tear"
	echo "vm-tune-log-writes: $name: $flushes flushes, as many as lostwrites.so's fsyncs; after each the replayed disk is its image, also with a torn superblock ($torn_cuts differ so), and the rerun completes, clean; so it does after $odd_cuts of them with every other later write landed"
}

host_check() {
	local replay=$BA_WORK/log-replay lib=$BA_WORK/lostwrites.so tune scratch w=$BA_WORK
	local tests=$BA_TOP/progs-patch/tests
	tune=$(dirname "$BA_MKFS")/btrfstune
	gcc -O2 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all \
		-o "$replay" "$tests/log-replay.c" || ba_die "cannot build log-replay"
	gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$lib" "$tests/lostwrites.c" -ldl ||
		ba_die "cannot build lostwrites.so"
	# About 40 images per flush are made and compared: on tmpfs when there
	# is one, they cost no disk writes.
	scratch=$(mktemp -d /dev/shm/ba-log-writes.XXXXXX 2>/dev/null) || scratch=$(mktemp -d "$w/scratch.XXXXXX")
	# shellcheck disable=SC2064 # the path now: host_check's locals are gone at exit
	trap "rm -rf '$scratch'" EXIT
	cd "$scratch" || ba_die "cannot enter $scratch"
	replayed conversion "$w/crc.img" "$w/crc.before" "$w/conv.log" "$w/k1.key" \
		--csum hmac-sha256 --new-auth-key-file "$w/k1.key"
	replayed rekey "$w/hmac.img" "$w/hmac.before" "$w/rekey.log" "$w/k2.key" \
		--auth-key-file "$w/k1.key" --new-auth-key-file "$w/k2.key"
	cd "$w" || ba_die "cannot enter $w"
	rm -rf k1.key k2.key "$BA_TO_GUEST" initrd.img
}
