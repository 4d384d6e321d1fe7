#!/bin/bash
# Build the initramfs a VM test boots: busybox-static, Debian's modules for
# virtio and btrfs's dependencies, the btrfs.ko under test, the guest
# library and /init, plus whatever binaries and files the scenario asks for.
#
# The result is two compressed newc archives back to back, which the
# kernel unpacks in turn.  The first (busybox and Debian's modules) only
# changes with the installed kernel and busybox, so it is cached in
# $BTRFS_AUTH_CACHE/vm-initramfs keyed by those inputs; the second (the
# module under test, the scenario, extra binaries) is small and built
# every time.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"

# Bump when the layout of the cached base archive changes.
BASE_LAYOUT=1

usage() {
	cat <<EOF
usage: ${0##*/} --btrfs-ko PATH --out FILE.cpio [options]
  --btrfs-ko PATH             the btrfs.ko to test (replaces Debian's)
  --out FILE                  where to write the initramfs
  --add-binary HOST[:GUEST]   a program or shared library with the libraries
                              ldd lists; GUEST defaults to /usr/bin/NAME for
                              programs and to HOST for *.so* libraries
  --add-file HOST:GUEST       a file or directory copied to GUEST (absolute)
  --scenario SCRIPT           guest scenario, installed as /ba/scenario.sh
  --module NAME               one more Debian module (with its dependencies)
                              loaded before btrfs; may be repeated
  --abi ABI                   kernel ABI (default: linux-image-amd64's)
  --no-load-btrfs             put the btrfs.ko under test in, but let the
                              scenario load it (its dependencies still load)
EOF
	exit 2
}

btrfs_ko='' out='' scenario='' abi='' load_btrfs=1
binaries=() files=() extra_modules=()
while [ $# -gt 0 ]; do
	case $1 in
	--btrfs-ko) btrfs_ko=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--add-binary) binaries+=("${2:?}"); shift 2 ;;
	--add-file) files+=("${2:?}"); shift 2 ;;
	--scenario) scenario=${2:?}; shift 2 ;;
	--module) extra_modules+=("${2:?}"); shift 2 ;;
	--abi) abi=${2:?}; shift 2 ;;
	--no-load-btrfs) load_btrfs=0; shift ;;
	-h|--help) usage ;;
	*) ba_log "unknown argument '$1'"; usage ;;
	esac
done
if [ -z "$btrfs_ko" ] || [ -z "$out" ]; then usage; fi
[ -f "$btrfs_ko" ] || ba_die "--btrfs-ko $btrfs_ko: no such file; build the module first (kernel-patch/build-module.sh)"
[ -z "$scenario" ] || [ -f "$scenario" ] || ba_die "--scenario $scenario: no such file"
[ -n "$abi" ] || abi=$(ba_vm_abi)
moddir=/lib/modules/$abi

for tool in modprobe modinfo cpio ldd; do
	command -v "$tool" >/dev/null || ba_die "$tool not found; install the packages in vm-tests/apt-packages"
done

# Compress with zstd when we have it (Debian's kernel has RD_ZSTD), else gzip.
if command -v zstd >/dev/null; then
	compress() { zstd -q -T1 "-$1" -c; }
	ext=zst
else
	compress() { gzip -n -c "-$(( $1 > 9 ? 9 : $1 ))"; }
	ext=gz
fi

stage_tmp=
cleanup() { [ -z "$stage_tmp" ] || rm -rf "$stage_tmp"; }
trap cleanup EXIT
stage_tmp=$(mktemp -d "${TMPDIR:-/tmp}/ba-initramfs.XXXXXX")

# A module that cannot load is useless and the kernel says why only in the
# guest; catch the common mistake (a module built for another kernel) here.
check_vermagic() {
	local vm
	vm=$(modinfo -F vermagic "$btrfs_ko") || ba_die "modinfo cannot read $btrfs_ko; is it a kernel module?"
	[ "${vm%% *}" = "$abi" ] ||
		ba_die "$btrfs_ko was built for kernel '${vm%% *}', the VM boots '$abi'; rebuild it against linux-headers-$abi"
}

# Print "PATH" lines, in load order, for the modules NAME needs (itself
# included), skipping built-ins.  Aliases (crypto-crc32c) work too.
# Debian's own configuration under /etc/modprobe.d is ignored (-C).
show_depends() {
	modprobe -C /dev/null -S "$abi" --show-depends "$1" 2>/dev/null |
		awk '$1 == "insmod" { print $2 }'
}

# The load list: "PATH required|optional" lines.  Required are virtio and
# what btrfs.ko links against (its modinfo "depends", read from the module
# under test, not Debian's, since the patch may add some); optional are
# its softdeps (crc32c, sha256, xxhash64, blake2b-256 providers), which
# the kernel can replace with generic built-ins or whose CPU-specific
# variants may refuse this CPU.
resolve_modules() {
	local -a required=(virtio_pci virtio_blk "${extra_modules[@]}") optional=()
	local deps soft tok name path
	deps=$(modinfo -F depends "$btrfs_ko")
	local -a dep_list
	IFS=',' read -r -a dep_list <<<"$deps"
	required+=("${dep_list[@]}")
	soft=$(modinfo -F softdep "$btrfs_ko")
	for tok in $soft; do
		case $tok in pre:|post:) ;; *) optional+=("$tok") ;; esac
	done
	declare -A seen=()
	for name in "${required[@]}"; do
		[ -n "$name" ] || continue
		# A name that is neither a module nor built in is an error: the
		# guest could not load btrfs without it.
		modprobe -C /dev/null -S "$abi" --show-depends "$name" >/dev/null 2>&1 ||
			ba_die "module '$name' (needed by the VM) is not in $moddir; reinstall linux-image-$abi"
		while read -r path; do
			[ -n "${seen[$path]:-}" ] && continue
			seen[$path]=1
			printf '%s required\n' "$path"
		done < <(show_depends "$name")
	done
	for name in "${optional[@]}"; do
		while read -r path; do
			[ -n "${seen[$path]:-}" ] && continue
			seen[$path]=1
			printf '%s optional\n' "$path"
		done < <(show_depends "$name")
	done
}

# Copy HOST to STAGE/GUEST and each shared library ldd lists to the same
# path inside STAGE.
install_with_libs() {
	local stage=$1 host=$2 guest=$3 lib libs
	[ -f "$host" ] || ba_die "--add-binary $host: no such file"
	install -D -m 0755 "$host" "$stage$guest"
	# Captured first, so that list_libs failing stops the script.
	libs=$(list_libs "$host")
	for lib in $libs; do
		[ -e "$stage$lib" ] || install -D -m 0755 "$lib" "$stage$lib"
	done
}

list_libs() {
	local out
	if ! out=$(LC_ALL=C ldd "$1" 2>&1); then
		case $out in *"not a dynamic executable"*|*"statically linked"*) return 0 ;; esac
		ba_die "ldd $1 failed: $out"
	fi
	case $out in *"not found"*) ba_die "ldd $1: a library is missing: $(grep 'not found' <<<"$out")" ;; esac
	awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$out" | sort -u
}

write_cpio() {
	local stage=$1 level=$2 dest=$3 size pad
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --reproducible --quiet) | compress "$level" >"$dest"
	# Keep each archive 4-byte aligned so the next one starts where the
	# kernel's unpacker looks for it; it skips the zero padding.
	size=$(stat -c %s "$dest")
	pad=$(( (4 - size % 4) % 4 ))
	[ "$pad" = 0 ] || truncate -s $((size + pad)) "$dest"
}

busybox_path() {
	local bb
	bb=$(command -v busybox) || ba_die "busybox not found; apt-get install busybox-static"
	readlink -f "$bb"
}

build_base() {
	local dest=$1 stage="$stage_tmp/base" bb path applet
	bb=$(busybox_path)
	mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,mnt,etc,root,ba}
	install_with_libs "$stage" "$bb" /bin/busybox
	while read -r applet; do
		if [ -z "$applet" ] || [ -e "$stage/$applet" ]; then continue; fi
		mkdir -p "$stage/$(dirname "$applet")"
		ln -s /bin/busybox "$stage/$applet"
	done < <("$bb" --list-full)
	for path in "${base_modules[@]}"; do
		install -D -m 0644 "$path" "$stage$path"
	done
	write_cpio "$stage" 9 "$dest.tmp.$$"
	mv "$dest.tmp.$$" "$dest"
}

build_overlay() {
	local dest=$1 stage="$stage_tmp/overlay" spec host guest
	mkdir -p "$stage/ba" "$stage$moddir/kernel/fs/btrfs"
	install -m 0755 "$BA_VM_LIB/guest-init.sh" "$stage/init"
	install -m 0644 "$BA_VM_LIB/guest-lib.sh" "$stage/ba/guest-lib.sh"
	install -m 0644 "$btrfs_ko" "$stage$moddir/kernel/fs/btrfs/btrfs.ko"
	printf '%s\n' "${load_order[@]}" >"$stage/ba/modules.order"
	[ "$load_btrfs" = 0 ] || printf '%s\n' "$moddir/kernel/fs/btrfs/btrfs.ko required" >>"$stage/ba/modules.order"
	printf '%s\n' "$abi" >"$stage/ba/kernel-abi"
	[ -z "$scenario" ] || install -m 0644 "$scenario" "$stage/ba/scenario.sh"
	for spec in "${binaries[@]}"; do
		host=${spec%%:*}
		if [ "$spec" != "$host" ]; then
			guest=${spec#*:}
		else
			case ${host##*/} in
			*.so|*.so.*) guest=$host ;;
			*) guest=/usr/bin/${host##*/} ;;
			esac
		fi
		install_with_libs "$stage" "$host" "$guest"
	done
	# glibc dlopen()s libgcc_s for pthread_cancel (btrfs scrub uses it),
	# which ldd cannot see.
	if [ -e "$stage/lib/x86_64-linux-gnu/libc.so.6" ] && [ -e "$libgcc_s" ]; then
		install -D -m 0644 "$libgcc_s" "$stage$libgcc_s"
	fi
	# btrfs-progs reads the mount table from /etc/mtab and keeps scrub
	# status under /var/lib/btrfs.
	mkdir -p "$stage/etc" "$stage/var/lib/btrfs"
	ln -s /proc/self/mounts "$stage/etc/mtab"
	for spec in "${files[@]}"; do
		host=${spec%%:*} guest=${spec#*:}
		if [ "$spec" = "$host" ] || [ "${guest#/}" = "$guest" ]; then
			ba_die "--add-file $spec: expected HOSTSRC:/ABSOLUTE/GUEST/PATH"
		fi
		[ -e "$host" ] || ba_die "--add-file $spec: $host does not exist"
		mkdir -p "$(dirname "$stage$guest")"
		cp -a "$host" "$stage$guest"
	done
	write_cpio "$stage" 3 "$dest"
}

# (awk reads all of ldconfig's output: an early exit would kill ldconfig
# with SIGPIPE, which pipefail turns into a silent failure.)
libgcc_s=$(ldconfig -p 2>/dev/null | awk '$1 == "libgcc_s.so.1" && /x86-64/ && !f { print $NF; f = 1 }') || true
: "${libgcc_s:=/lib/x86_64-linux-gnu/libgcc_s.so.1}"
check_vermagic
# Not "mapfile < <(resolve_modules)": an error inside a process
# substitution would not stop this script.
resolve_modules >"$stage_tmp/load-order"
mapfile -t load_order <"$stage_tmp/load-order"
[ "${#load_order[@]}" -gt 0 ] || ba_die "module resolution for $btrfs_ko gave nothing"
base_modules=()
for line in "${load_order[@]}"; do base_modules+=("${line%% *}"); done

# The base archive's key: everything that goes into it.
kver=$(dpkg-query -W -f='${Version}' "linux-image-$abi" 2>/dev/null || echo unknown)
base_key=$({
	printf '%s\n' "layout=$BASE_LAYOUT" "abi=$abi" "kver=$kver" "ext=$ext" "${base_modules[@]}"
	ba_hash_files "$(busybox_path)" "${base_modules[@]}"
} | sha256sum | cut -c1-16)
base_dir=$BA_CACHE/vm-initramfs
base=$base_dir/base-$abi-$base_key.cpio.$ext
mkdir -p "$base_dir" || ba_die "cannot create $base_dir; set BTRFS_AUTH_CACHE to a writable directory"

# Parallel tests build the same base once; the others wait for it.
build_base_once() { [ -s "$base" ] || build_base "$base"; }
ba_locked "vm-initramfs-base" build_base_once

build_overlay "$stage_tmp/overlay.cpio"
mkdir -p "$(dirname "$out")"
cat "$base" "$stage_tmp/overlay.cpio" >"$out.tmp.$$"
mv "$out.tmp.$$" "$out"
