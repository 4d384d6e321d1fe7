#!/bin/bash
# Benchmarks: the measured cost of authentication, side by side.
#
# Every figure is taken in one run, next to its unkeyed counterpart, in
# rotating order, several times, because the machines this runs on are
# shared and noisy: what counts are the ratios, not the absolute numbers.
#
#   kernel  one VM (TCG, 1 vCPU), three identical disks formatted crc32c,
#           sha256 and hmac-sha256: sequential write with fsync, sequential
#           read after dropping caches, random 4 KiB reads, create/stat/
#           unlink, scrub, and the checksum drivers alone through AF_ALG
#           (bench/kernel-io.sh, a vm-tests scenario)
#   progs   the patched btrfs-progs on the host: mkfs.btrfs --rootdir and
#           btrfs check --check-data-csum of the same tree in all three
#           checksums, btrfstune rekey against openssl speed -hmac sha256
#   tpm     btrfs-auth load timed and its TPM commands captured (pcap
#           TCTI), in a VM against swtpm (bench/tpm-load.sh) and on the host
#   boot    Debian booted from an authenticated root (key sealed to the TPM)
#           and from a plain sha256 root without TPM: kernel start to
#           sysroot.mount and the key step (vm-tests/boot/run-boot.sh)
#
# usage: bench/run-bench.sh --out DIR [options]
#   --out DIR           results: bench.md, bench.png, summary.tsv, ratios.tsv,
#                       results.tsv (every measurement), machine.txt, raw/, logs/
#   --smoke             few repetitions, small sizes: checks that every figure
#                       is produced (the meson test), not what it is
#   --only LIST         comma-separated parts (default kernel,progs,tpm,boot)
#   --reps N            rounds of the kernel and progs measurements (default 5;
#                       smoke 1); the kernel's are rounded up to a multiple
#                       of 3, one VM per order of the disks
#   --check-rounds N    rounds of btrfs check (default 60; smoke: --reps): its
#                       goal is 0.5 % above what the hashing alone asks for,
#                       and one run varies by several percent on a shared
#                       machine, so the paired mean needs many rounds
#   --boots N           boots of each root (default 3; smoke 1)
#   --parallel-boots    prepare and boot both roots at the same time (the
#                       smoke run's default: faster, but no clean timings)
#   --build-dir DIR     a configured and built meson build directory of the
#                       project (default: $BA_BUILDDIR or ./build, configured
#                       and built if needed)
#   --install-info FILE, --tool PATH, --iobench PATH, --pcap-tool PATH
#                       what meson passes instead of --build-dir
#   --keep              keep the work directory (a /tmp/ba-bench.* directory:
#                       images, VM work dirs; never the keys)
# environment: BTRFS_AUTH_CACHE (the cached kernel module, progs, rootfs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../vm-tests/lib/common.sh
source "$here/../vm-tests/lib/common.sh"

usage() {
	sed -n '/^# usage:/,/^# environment:/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

out='' smoke=0 parts=kernel,progs,tpm,boot reps='' check_rounds='' boots='' build_dir='' keep=0 parallel_boots=''
install_info='' tool='' iobench='' pcap_tool=''
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=${2:?}; shift 2 ;;
	--smoke) smoke=1; shift ;;
	--only) parts=${2:?}; shift 2 ;;
	--reps) reps=${2:?}; shift 2 ;;
	--check-rounds) check_rounds=${2:?}; shift 2 ;;
	--boots) boots=${2:?}; shift 2 ;;
	--build-dir) build_dir=${2:?}; shift 2 ;;
	--install-info) install_info=${2:?}; shift 2 ;;
	--tool) tool=${2:?}; shift 2 ;;
	--iobench) iobench=${2:?}; shift 2 ;;
	--pcap-tool) pcap_tool=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--parallel-boots) parallel_boots=1; shift ;;
	-h|--help) usage ;;
	*) ba_log "unknown argument '$1'"; usage ;;
	esac
done
[ -n "$out" ] || usage
for p in ${parts//,/ }; do
	case $p in kernel|progs|tpm|boot) ;; *) ba_die "--only: unknown part '$p' (kernel, progs, tpm, boot)" ;; esac
done
want() { [[ ,$parts, == *,$1,* ]]; }

# Sizes.  The full run takes its time; the smoke run only has to produce
# every figure, so it uses one round and small sizes.
if [ "$smoke" = 1 ]; then
	: "${reps:=1}" "${boots:=1}" "${parallel_boots:=1}" "${check_rounds:=$reps}"
	k_mib=24 k_rand=300 k_files=300 k_hash=512 k_img=1G
	p_mib=32 p_small=200 p_seconds=1 p_blocks=5000
	t_loads=2
else
	: "${reps:=5}" "${boots:=3}" "${parallel_boots:=0}" "${check_rounds:=60}"
	k_mib=256 k_rand=4000 k_files=4000 k_hash=8192 k_img=2G
	p_mib=512 p_small=2000 p_seconds=3 p_blocks=100000
	t_loads=7
fi
[[ $reps =~ ^[1-9][0-9]*$ ]] || ba_die "--reps wants a positive number"
[[ $check_rounds =~ ^[1-9][0-9]*$ ]] || ba_die "--check-rounds wants a positive number"
[[ $boots =~ ^[1-9][0-9]*$ ]] || ba_die "--boots wants a positive number"

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/raw" "$out/logs"
mkdir -p "$out/raw" "$out/logs"
# The VMs' work directories hold swtpm's socket, whose path must stay
# under 108 bytes: a short directory, not one inside a deep build tree.
work=$(mktemp -d "${TMPDIR:-/tmp}/ba-bench.XXXXXX")
results=$out/results.tsv
printf '# part\ttest\tvariant\tround\tseconds\tamount\tunit\n' >"$results"
# Keys: throwaway test keys, never kept.
keys=$work/keys
(umask 077 && mkdir -p "$keys")
progs_tmp=''
cleanup() {
	rm -rf "$keys" "$work/kernel-io/to-guest/key" "$work/kernel-io/initrd.img"
	[ -z "$progs_tmp" ] || rm -rf "$progs_tmp"
	ba_swtpm_tcp_stop
	if [ "$keep" = 1 ]; then echo "bench: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT

say() { printf 'bench: %s\n' "$*"; }
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$results"; }
new_key() { (umask 077 && head -c 32 /dev/urandom >"$1"); }
started=$(ba_now)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# The variants in the order of round $1 (for measurement number $2):
# rotated, so each takes each position once in every three rounds.
order3() {
	local v=(crc32c sha256 hmac) i=$((($1 + ${2:-0}) % 3))
	echo "${v[@]:i}" "${v[@]:0:i}"
}

# --- inputs -------------------------------------------------------------

resolve_build() {
	if [ -z "$install_info" ] || [ -z "$tool" ]; then
		: "${build_dir:=${BA_BUILDDIR:-$BA_TOP/build}}"
		if [ ! -e "$build_dir/build.ninja" ]; then
			ba_meson_setup "$build_dir"
		else
			meson compile -C "$build_dir" >&2 || ba_die "building $build_dir failed"
		fi
		build_dir=$(cd "$build_dir" && pwd)
		: "${install_info:=$build_dir/vm-tests/boot-install-info.sh}"
		: "${tool:=$build_dir/tpm-sealing/btrfs-auth}"
	fi
	[ -f "$install_info" ] || ba_die "no $install_info (meson writes it)"
	[ -x "$tool" ] || ba_die "no btrfs-auth at $tool"
	# The two small C programs: meson builds them; by hand, cc does.
	mkdir -p "$work/bin"
	local name var
	for name in ba-iobench ba-tpm-pcap; do
		var=iobench
		[ "$name" = ba-iobench ] || var=pcap_tool
		if [ -z "${!var}" ]; then
			"${CC:-cc}" -O2 -Wall -Wextra -Werror -o "$work/bin/$name" "$here/$name.c" ||
				ba_die "compiling $name.c failed"
			printf -v "$var" '%s' "$work/bin/$name"
		fi
	done
	if [ ! -x "$iobench" ] || [ ! -x "$pcap_tool" ]; then ba_die "ba-iobench or ba-tpm-pcap is missing"; fi
	progs=$(ba_locked vm-build-progs bash "$BA_TOP/progs-patch/build-progs.sh" | sed '/^$/d' | tail -n 1) ||
		ba_die "progs-patch/build-progs.sh failed"
	for name in mkfs.btrfs btrfs btrfstune; do
		[ -x "$progs/$name" ] || ba_die "no patched $name in '$progs'"
	done
	# The default build's SHA-256 is btrfs-progs' own; libgcrypt's is
	# several times faster, which matters most to rekey.
	if want progs; then
		progs_gcrypt=$(ba_locked vm-build-progs bash "$BA_TOP/progs-patch/build-progs.sh" --crypto libgcrypt |
			sed '/^$/d' | tail -n 1) || ba_die "progs-patch/build-progs.sh --crypto libgcrypt failed"
		[ -x "$progs_gcrypt/btrfstune" ] || ba_die "no patched btrfstune in '$progs_gcrypt'"
	fi
	# The VM scenarios take the same build.
	export BA_PROGS_DIR=$progs
}

# --- kernel I/O --------------------------------------------------------

# The disks' order, one VM per order: each file system takes each
# position (vda, vdb, vdc) once, because the position alone moves the
# figures by up to 25 % (measured: docs/performance.md).
kernel_orders=("crc32c sha256 hmac" "sha256 hmac crc32c" "hmac crc32c sha256")

part_kernel() {
	local d t fs r rest s a u o per norders=3
	per=$(((reps + 2) / 3))
	[ "$smoke" = 0 ] || norders=1 per=$reps
	say "kernel I/O: crc32c / sha256 / hmac-sha256 disks, $norders VM(s) with the disks in rotated order, $per round(s) each of ${k_mib} MiB"
	new_key "$keys/kernel.key"
	for ((o = 0; o < norders; o++)); do
		d=$out/raw/kernel/order-$o
		BA_BENCH_IOTOOL=$iobench BA_BENCH_KEY=$keys/kernel.key BA_BENCH_RESULTS=$d \
			BA_BENCH_MIB=$k_mib BA_BENCH_REPS=$per BA_BENCH_RANDREADS=$k_rand \
			BA_BENCH_FILES=$k_files BA_BENCH_HASH_BLOCKS=$k_hash BA_BENCH_IMG_SIZE=$k_img \
			BA_BENCH_DISK_ORDER=${kernel_orders[o]} \
			bash "$BA_TOP/vm-tests/run-scenario.sh" --workdir "$work/kernel-io" "$here/kernel-io.sh" \
			>"$out/logs/kernel-io-$o.log" 2>&1 ||
			ba_die "the kernel I/O VM failed: $(tail -n 3 "$out/logs/kernel-io-$o.log")"
		rm -f "$work/kernel-io/to-guest/key" "$work/kernel-io/initrd.img"
		echo "${kernel_orders[o]}" >"$d/disk-order.txt"
		while read -r t fs r rest; do
			s=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$rest")
			case $t in
			write|read|hash) a=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' <<<"$rest") u=MB/s ;;
			randread) a=$(sed -n 's/.*ops=\([0-9]*\).*/\1/p' <<<"$rest") u=IOPS ;;
			meta) a=$(sed -n 's/.*ops=\([0-9]*\).*/\1/p' <<<"$rest") u=ops/s ;;
			scrub) a=$(sed -n 's/.*scrubbed=\([0-9]*\).*/\1/p' <<<"$rest") u=MB/s ;;
			*) continue ;;
			esac
			record kernel "$t" "$fs" $((o * per + r)) "$s" "$a" "$u"
		done <"$d/results.txt"
	done
	# What the figures depend on (the same in every VM).
	cp "$out/raw/kernel/order-0/"{guest-cpu,csum-drivers,crypto}.txt "$out/raw/kernel/"
}

# --- userspace ----------------------------------------------------------

# timed LOG CMD...: run CMD with its output appended to LOG; prints
# "REAL CPU" in seconds (CPU: user + system).
timed() {
	local log=$1 t r u s
	shift
	t=$( { TIMEFORMAT='%R %U %S'; time "$@" >>"$log" 2>&1; } 2>&1 ) ||
		ba_die "$* failed: $(tail -n 3 "$log")"
	read -r r u s <<<"$t"
	awk -v r="$r" -v u="$u" -v s="$s" 'BEGIN { printf "%s %.3f\n", r, u + s }'
}

make_tree() {
	local dir=$1 mib=$2 small=$3 i
	mkdir -p "$dir/big" "$dir/small"
	for i in 1 2 3 4 5 6 7 8; do
		head -c $((mib * 1048576 / 8)) /dev/urandom >"$dir/big/$i"
	done
	for ((i = 0; i < small; i++)); do
		head -c $(((i % 16 + 1) * 1024)) /dev/urandom >"$dir/small/$i"
	done
}

# openssl speed on 4 KiB blocks, single process: prints bytes per second.
# $1 "cpu": openssl's default divisor, user CPU time; "wall": -elapsed;
# then openssl's options, e.g. -hmac sha256.
openssl_rate() {
	local mode=$1 args=(speed -seconds "$p_seconds" -bytes 4096 -mr)
	shift
	[ "$mode" = cpu ] || args+=(-elapsed)
	openssl "${args[@]}" "$@" 2>>"$out/logs/openssl.log" |
		awk -F: '/^\+F:/ { r = $4 } END { if (r == "") exit 1; print r }'
}

# The checksums alone, as btrfs-progs computes them: hash-speedtest over
# $p_blocks blocks of 4 KiB each (SHA-NI and CRC32 instructions where the
# CPU has them), round $1.  Its contestants run one after the other in a
# fixed order, so only the rounds are interleaved with the other figures.
time_hashes() {
	local r=$1 log=$out/logs/hash-speedtest.log impl v name ns
	"$progs/hash-speedtest" --time "$p_blocks" >"$out/raw/hash-speedtest.txt" 2>>"$log" ||
		ba_die "hash-speedtest failed (see $log)"
	cat "$out/raw/hash-speedtest.txt" >>"$log"
	for v in crc32c sha256 hmac; do
		case $v in
		crc32c) name=CRC32C ;;
		sha256) name=SHA256 ;;
		hmac) name=HMAC-SHA256 ;;
		esac
		impl=NI
		grep -q "^ *$name-NI: nsecs:" "$out/raw/hash-speedtest.txt" || impl=ref
		ns=$(awk -v n="$name-$impl:" '$1 == n && $2 == "nsecs:" { sub(",", "", $3); print $3 }' \
			"$out/raw/hash-speedtest.txt")
		[ -n "$ns" ] || ba_die "no $name time in hash-speedtest's output (see $log)"
		record progs hash "$v" "$r" "$(awk -v ns="$ns" 'BEGIN { printf "%.6f", ns / 1e9 }')" 0 s
	done
}

# $1: bin dir of a btrfs-progs build, $2: figure name, $3: round.  Rekeys
# the hmac image from the current key to the other one, then swaps them.
time_rekey() {
	local t wc cpu v
	t=$(timed "$out/logs/rekey.log" "$1/btrfstune" \
		--auth-key-file "$keys/$cur.key" --new-auth-key-file "$keys/$next.key" "$d/hmac.img")
	read -r wc cpu <<<"$t"
	record progs "$2" wall "$3" "$wc" "$bytes" MB/s
	record progs "$2" cpu "$3" "$cpu" "$bytes" MB/s
	v=$cur cur=$next next=$v
}

# btrfs check --check-data-csum of the three images, round $1.
time_checks() {
	local v key_args t wc cpu
	for v in $(order3 "$1" 1); do
		key_args=()
		[ "$v" != hmac ] || key_args=(--auth-key-file "$keys/old.key")
		t=$(timed "$out/logs/check.log" "$progs/btrfs" check --readonly --check-data-csum \
			"${key_args[@]}" "$progs_tmp/$v.img")
		read -r wc cpu <<<"$t"
		record progs check "$v" "$1" "$wc" 0 s
		record progs check-cpu "$v" "$1" "$cpu" 0 s
	done
}

part_progs() {
	local d tree bytes r v img t wc cpu key_args cur=old next=new rate order what i
	d=$(mktemp -d /dev/shm/ba-bench.XXXXXX 2>/dev/null) || d=$(mktemp -d "$work/progs.XXXXXX")
	# On tmpfs when there is room: the images' writes and fsyncs then
	# cost no disk time, which only adds noise to checksum figures.
	if [ "$(df -Pk "$d" | awk 'NR == 2 { print $4 }')" -lt $((p_mib * 1024 * 8)) ]; then
		rm -rf "$d"
		d=$(mktemp -d "$work/progs.XXXXXX")
	fi
	progs_tmp=$d
	echo "$d ($(df -PT "$d" | awk 'NR == 2 { print $2 }'))" >"$out/raw/progs-workdir.txt"
	say "userspace: a ${p_mib} MiB tree plus $p_small small files, $reps round(s), in $(cat "$out/raw/progs-workdir.txt")"
	tree=$d/tree
	make_tree "$tree" "$p_mib" "$p_small"
	bytes=$(find "$tree" -type f -printf '%s\n' | awk '{ n += $1 } END { print n }')
	echo "$bytes" >"$out/raw/progs-data-bytes.txt"
	echo "$p_blocks" >"$out/raw/hash-blocks.txt"
	new_key "$keys/old.key"
	new_key "$keys/new.key"
	for ((r = 0; r < reps; r++)); do
		for v in $(order3 "$r" 0); do
			img=$d/$v.img key_args=()
			[ "$v" != hmac ] || key_args=(--csum hmac-sha256 --auth-key-file "$keys/old.key")
			[ "$v" = hmac ] || key_args=(--csum "$v")
			rm -f "$img"
			truncate -s $((bytes * 2 + 512 * 1048576)) "$img"
			t=$(timed "$out/logs/mkfs.log" "$progs/mkfs.btrfs" -q -f "${key_args[@]}" --rootdir "$tree" "$img")
			read -r wc cpu <<<"$t"
			record progs mkfs "$v" "$r" "$wc" 0 s
			record progs mkfs-cpu "$v" "$r" "$cpu" 0 s
		done
	done
	say "userspace: btrfs check, $check_rounds round(s)"
	for ((r = 0; r < check_rounds || r < reps; r++)); do
		[ "$r" -ge "$check_rounds" ] || time_checks "$r"
		[ "$r" -ge "$reps" ] || time_hashes "$r"
	done
	# Rekey (two HMACs per data block: verify with the old key, sign with
	# the new, on every core; tree blocks more) next to openssl's
	# HMAC-SHA256 on 4 KiB.
	for ((r = 0; r < reps; r++)); do
		order=(rekey rekey-libgcrypt ossl-cpu ossl-wall)
		i=$((r % 4))
		for what in "${order[@]:i}" "${order[@]:0:i}"; do
			case $what in
			rekey) time_rekey "$progs" rekey "$r" ;;
			rekey-libgcrypt) time_rekey "$progs_gcrypt" rekey-libgcrypt "$r" ;;
			ossl-cpu)
				rate=$(openssl_rate cpu -hmac sha256) || ba_die "openssl speed failed (see logs/openssl.log)"
				record progs openssl-hmac cpu "$r" 1 "$rate" MB/s ;;
			ossl-wall)
				rate=$(openssl_rate wall -hmac sha256) || ba_die "openssl speed failed (see logs/openssl.log)"
				record progs openssl-hmac wall "$r" 1 "$rate" MB/s ;;
			esac
		done
	done
	# The other bound of the rekey goal: how fast the image reads.
	t=$(timed "$out/logs/read.log" dd if="$d/hmac.img" of=/dev/null bs=1M)
	read -r wc cpu <<<"$t"
	record progs read wall 0 "$wc" "$(stat -c %s "$d/hmac.img")" MB/s
	record progs cores n 0 1 "$(nproc)" cores
	rate=$(openssl_rate cpu -evp sha256) || ba_die "openssl speed -evp sha256 failed"
	record progs openssl-sha256 cpu 0 1 "$rate" MB/s
	rate=$(openssl "speed" -seconds "$p_seconds" -bytes 4096 -mr -elapsed -multi "$(nproc)" -hmac sha256 \
		2>>"$out/logs/openssl.log" | awk -F: '/^Got: \+F:/ { s += $5 } END { if (s == 0) exit 1; printf "%.0f", s }') ||
		ba_die "openssl speed -multi failed"
	record progs openssl-hmac "wall-$(nproc)proc" 0 1 "$rate" MB/s
	# The rekeyed image is still a valid file system under the last key.
	timed "$out/logs/check.log" "$progs/btrfs" check --readonly --check-data-csum \
		--auth-key-file "$keys/$cur.key" "$d/hmac.img" >/dev/null
	rm -rf "$d"
}

# --- TPM: btrfs-auth load -------------------------------------------------

start_swtpm() {
	ba_swtpm_tcp_start "$work/swtpm" "$work/swtpm/swtpm.log" || ba_die "swtpm did not start"
	host_tcti=$BA_SWTPM_TCTI
}

# The host side, in a session keyring of its own (keyctl session), so the
# loaded test key never reaches this machine's user keyring.
host_loads() {
	local n=$1
	# shellcheck disable=SC2016 # expanded by the inner bash
	keyctl session - bash -c '
		set -euo pipefail
		tool=$1 tcti=$2 dir=$3 n=$4 iobench=$5 args=$6
		# shellcheck disable=SC2086 # a word list
		"$tool" enroll bench --generate --recovery-file="$dir/recovery.key" --no-recovery --config-dir="$dir" \
			--tcti="$tcti" $args -q
		rm -f "$dir/recovery.key"
		TCTI_PCAP_FILE=$dir/load.pcap "$tool" load bench --config-dir="$dir" --keyring=@s \
			--tcti="pcap:$tcti" -q
		for ((i = 0; i < n; i++)); do
			echo "$i $("$iobench" run "$tool" load bench --config-dir="$dir" --keyring=@s --tcti="$tcti" -q)"
		done
		keyctl clear @s' _ "$tool" "$host_tcti" "$keys/host-tpm" "$n" "$iobench" \
		"--pcrs=0,2,4,7 --lock-pcr=15 --allow-unmeasured-initramfs"
}

part_tpm() {
	local d=$out/raw/tpm kind r rest s
	mkdir -p "$d" "$keys/host-tpm"
	say "TPM: btrfs-auth load, $t_loads times in a VM (swtpm, /dev/tpmrm0 and /dev/tpm0) and on the host"
	BA_BENCH_TOOL=$tool BA_BENCH_IOTOOL=$iobench BA_BENCH_RESULTS=$d BA_BENCH_LOADS=$t_loads \
		bash "$BA_TOP/vm-tests/run-scenario.sh" --workdir "$work/tpm-load" "$here/tpm-load.sh" \
		>"$out/logs/tpm-load.log" 2>&1 ||
		ba_die "the TPM VM failed: $(tail -n 3 "$out/logs/tpm-load.log")"
	while read -r kind s r rest; do
		[ "$kind" = load ] || [ "$kind" = startup ] || continue
		record tpm "$kind" "vm-$s" "$r" "$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$rest")" 0 s
	done <"$d/results.txt"
	"$pcap_tool" "$d/load.pcap" >"$d/vm-commands.txt" || ba_die "cannot read the VM's TPM capture"
	start_swtpm
	host_loads "$t_loads" >"$d/host-loads.txt" 2>"$out/logs/tpm-host.log" ||
		ba_die "btrfs-auth against swtpm on the host failed: $(tail -n 3 "$out/logs/tpm-host.log")"
	ba_swtpm_tcp_stop
	while read -r r rest; do
		record tpm load host "$r" "$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$rest")" 0 s
	done <"$d/host-loads.txt"
	"$pcap_tool" "$keys/host-tpm/load.pcap" >"$d/host-commands.txt" || ba_die "cannot read the host's TPM capture"
}

# --- boot ----------------------------------------------------------------------

run_boot() {
	BA_BENCH_BOOTS=$boots BA_BUILD_ROOT=$work/boot \
		bash "$BA_TOP/vm-tests/boot/run-boot.sh" --install-info "$install_info" "$here/boot-$1.sh" \
		>"$out/logs/boot-$1.log" 2>&1
}

part_boot() {
	local s n line v mounted device start loaded end estart eend pid_plain pid_auth failed=''
	if [ "$parallel_boots" = 1 ]; then
		say "boot: Debian from a plain sha256 root and from the authenticated root, $boots boot(s) each, both at once"
		run_boot plain &
		pid_plain=$!
		run_boot authenticated &
		pid_auth=$!
		wait "$pid_plain" || failed=' plain'
		wait "$pid_auth" || failed="$failed authenticated"
	else
		say "boot: Debian from a plain sha256 root, then from the authenticated root, $boots boot(s) each"
		for s in plain authenticated; do run_boot "$s" || { failed=" $s"; break; }; done
	fi
	[ -z "$failed" ] || ba_die "the boot(s)$failed failed: see $out/logs/boot-*.log"
	for s in plain authenticated; do
		cp "$work/boot/meson-logs/vm-tests/boot-boot-$s-console-"*.log "$out/logs/" 2>/dev/null || true
		n=-1
		while read -r line; do
			v=${line#*BA-INFO: }
			case $v in
			mode\ *) n=$((n + 1)) ;;
			sysroot-mounted-at\ *)
				mounted=${v#* }
				record boot sysroot "$s" "$n" "$mounted" 0 s ;;
			root-device-at\ *)
				device=${v#* }
				[ "$device" = unknown ] || record boot root-device "$s" "$n" "$device" 0 s ;;
			root-checksum\ *)
				echo "$s $n ${v#* }" >>"$out/raw/boot-root-checksum.txt" ;;
			key-step\ *)
				read -r start loaded end <<<"${v#* }"
				record boot key-step journal "$n" "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.6f", b - a }')" 0 s
				record boot key-share journal "$n" 0 \
					"$(awk -v a="$start" -v b="$end" -v m="$mounted" 'BEGIN { printf "%.4f", (b - a) * 100 / m }')" %
				# How long the mount waited for the key after its device
				# was there: the key step's share of the critical path.
				[ "$device" = unknown ] || record boot key-wait journal "$n" \
					"$(awk -v d="$device" -v b="$end" 'BEGIN { w = b - d; printf "%.6f", (w > 0 ? w : 0) }')" 0 s
				echo "$n $start $loaded $end" >>"$out/raw/boot-key-step.txt" ;;
			key-exec\ *)
				read -r estart eend <<<"${v#* }"
				[ -n "$eend" ] || continue
				record boot key-step process "$n" "$(awk -v a="$estart" -v b="$eend" 'BEGIN { printf "%.6f", b - a }')" 0 s ;;
			esac
		done < <(grep -a "^boot-boot-$s: BA-INFO: " "$out/logs/boot-$s.log")
		[ "$n" -ge 0 ] || ba_die "the $s boot reported no timing (see logs/boot-$s.log)"
	done
}

# --- the report ---------------------------------------------------------------

machine_info() {
	local cpu
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "cpu: $cpu"
		echo "cores: $(nproc)"
		echo "host sha_ni: $(grep -q -w sha_ni /proc/cpuinfo && echo yes || echo no)"
		echo "memory: $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
		echo "host kernel: $(uname -r)"
		echo "qemu: $(qemu-system-x86_64 --version | head -n 1) (TCG, -cpu max, 1 vCPU; KVM not used)"
		echo "openssl: $(openssl version)"
		echo "load average at start: $load_before; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
		if [ -f "$out/raw/kernel/guest-cpu.txt" ]; then
			echo "guest cpu: $(sed -n 's/^model name[[:space:]]*: //p' "$out/raw/kernel/guest-cpu.txt")"
			echo "guest sha_ni: $(grep -q -w sha_ni "$out/raw/kernel/guest-cpu.txt" && echo yes || echo no)," \
				"avx2: $(grep -q -w avx2 "$out/raw/kernel/guest-cpu.txt" && echo yes || echo no)"
			echo "guest checksum drivers: $(sed -n 's/.*using \(.*\) checksum algorithm.*/\1/p' "$out/raw/kernel/csum-drivers.txt" | paste -sd ';' | sed 's/;/; /g')"
		fi
	} >"$out/machine.txt"
}

resolve_build
want kernel && part_kernel
want progs && part_progs
want tpm && part_tpm
want boot && part_boot
machine_info
bash "$here/report.sh" --out "$out" --parts "$parts" --reps "$reps" --boots "$boots" \
	--command "bench/run-bench.sh$([ "$smoke" = 0 ] || echo ' --smoke')$([ "$parts" = kernel,progs,tpm,boot ] || echo " --only $parts") --out DIR" ||
	ba_die "writing the report failed"
bash "$here/check-output.sh" "$out" "$parts"
say "done in $(ba_elapsed "$started") s: $out/bench.md, $out/bench.png"
