#!/bin/bash
# Build the patched btrfs.ko for Debian's kernel and print the directory
# holding it.  Cached by (Debian version, series hash): a warm call takes
# well under a second.
#
# usage: build-module.sh [--tree]   (--tree prints the patched tree instead)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/lib.sh"
source "$here/versions.sh"

series_hash() {
	local -a files=("$here/series" "$here/versions.sh" "$0")
	local p
	while read -r p; do
		files+=("$here/$p")
	done < <(grep -v '^\s*\(#\|$\)' "$here/series")
	ba_hash_files "${files[@]}"
}

build() {
	local out=$1 pristine p
	[ -e "$out/.complete" ] && return 0
	pristine=$(ba_kernel_pristine)
	ba_log "applying the series to linux-source-6.1 $KDEBVER"
	ba_kernel_tree_copy "$pristine" "$out/tree"
	while read -r p; do
		ba_kernel_apply "$out/tree" "$here/$p"
	done < <(grep -v '^\s*\(#\|$\)' "$here/series")

	ba_log "building fs/btrfs against linux-headers-$KABI"
	ba_kernel_build_btrfs "$out/tree" >"$out/build.log" 2>&1 ||
		ba_die "module build failed, see $out/build.log"
	strip --strip-debug -o "$out/btrfs.ko" "$out/tree/fs/btrfs/btrfs.ko"

	local want got
	want=$(modinfo -F vermagic "$KSTOCK_MODDIR/kernel/fs/btrfs/btrfs.ko")
	got=$(modinfo -F vermagic "$out/btrfs.ko")
	[ "$want" = "$got" ] ||
		ba_die "vermagic '$got' of the built module differs from Debian's '$want'"
	echo "$KABI" >"$out/abi"
	touch "$out/.complete"
}

main() {
	ba_kernel_resolve
	local out
	out="$BA_CACHE/kernel/$KDEBVER/btrfs-$(series_hash)"
	mkdir -p "$out"
	ba_locked "kernel-$KDEBVER" build "$out"
	case "${1:-}" in
	--tree) echo "$out/tree" ;;
	"") echo "$out" ;;
	*) ba_die "usage: build-module.sh [--tree]" ;;
	esac
}

main "$@"
