#!/bin/bash
# Build Debian's btrfs-progs with the patch series of this folder, cached.
#
# Prints ONE line on stdout: the absolute path of a directory with the built
# executables (mkfs.btrfs btrfs btrfstune btrfs-image btrfs-find-root
# btrfs-convert btrfs-map-logical btrfs-select-super btrfs-corrupt-block
# hash-vectest hash-speedtest fssum, and btrfstune-failpoints: btrfstune with
# the kill points the crash tests use, which the btrfstune that is installed
# lacks).  Everything else goes to stderr.
#
# The result lives in $BTRFS_AUTH_CACHE/progs/<source-version>-<series-hash>/
# (series hash over series, patches and this script), so a warm call only
# hashes a few files.  Concurrent callers build once (ba_locked).
#
# Options:
#   --source-dir      print the patched, built source tree instead (for
#                     running the upstream test suites in it)
#   --crypto NAME     crypto backend: builtin (default, what Debian ships),
#                     libgcrypt or libsodium; cached separately
#   --unpatched       build the pristine Debian source, for comparisons
#   --pristine-dir    print the unpacked pristine Debian source (fetched and
#                     cached on first use), build nothing
#   --refresh-source  fetch the Debian source again (new Debian revision)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../tools/lib.sh
source "$here/../tools/lib.sh"

want=bin
crypto=builtin
patched=1
refresh=0
while [ $# -gt 0 ]; do
	case $1 in
	--source-dir) want=src ;;
	--pristine-dir) want=pristine ;;
	--crypto) [ $# -ge 2 ] || ba_die "--crypto needs a value"; crypto=$2; shift ;;
	--crypto=*) crypto=${1#*=} ;;
	--unpatched) patched=0 ;;
	--refresh-source) refresh=1 ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
	*) ba_die "unknown option: $1 (see --help)" ;;
	esac
	shift
done
case $crypto in
builtin|libgcrypt|libsodium) ;;
libkcapi) ba_die "libkcapi is not supported: its hmac-sha256 is untested here (AF_ALG) and refuses to run" ;;
*) ba_die "unknown crypto backend '$crypto' (builtin, libgcrypt, libsodium)" ;;
esac

progs_cache=$BA_CACHE/progs
pristine_root=$progs_cache/pristine
# Executables every caller may rely on; btrfs-convert only if configured.
required_bins="mkfs.btrfs btrfs btrfstune btrfs-image btrfs-find-root btrfs-map-logical btrfs-select-super btrfs-corrupt-block hash-vectest hash-speedtest fssum"
# Built only by the patched series (tests of the change's crash safety).
patched_bins="btrfstune-failpoints"

# Fetch and unpack the Debian source once; later calls only read VERSION.
fetch_pristine() {
	local tmp dir version
	if [ -s "$pristine_root/VERSION" ] && [ "$refresh" = 0 ]; then
		return 0
	fi
	tmp=$(mktemp -d "$progs_cache/pristine.tmp.XXXXXX")
	ba_log "fetching the btrfs-progs source package"
	dir=$(ba_apt_source btrfs-progs "$tmp") || ba_die "cannot fetch btrfs-progs source"
	if [ -z "$dir" ] || [ ! -f "$dir/debian/changelog" ]; then
		ba_die "no unpacked btrfs-progs source in $tmp"
	fi
	version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$dir/debian/changelog")
	[ -n "$version" ] || ba_die "cannot read the version from $dir/debian/changelog"
	mv "$dir" "$tmp/source"
	printf '%s\n' "$version" >"$tmp/VERSION"
	rm -rf "$pristine_root.old"
	[ -e "$pristine_root" ] && mv "$pristine_root" "$pristine_root.old"
	mv "$tmp" "$pristine_root"
	rm -rf "$pristine_root.old"
	ba_log "btrfs-progs $version unpacked in $pristine_root/source"
}

# Apply the series to $1 patch by patch, failing with the patch's name.
apply_series() {
	local src=$1 p
	while read -r p; do
		case $p in ''|'#'*) continue ;; esac
		[ -f "$here/$p" ] || ba_die "series lists $p, which does not exist"
		patch -d "$src" -p1 --forward --batch --quiet <"$here/$p" >&2 ||
			ba_die "patch $p does not apply to btrfs-progs $(cat "$pristine_root/VERSION")"
	done <"$here/series"
}

configure_flags() {
	# No documentation (needs sphinx) and no Python bindings (not
	# needed); everything else as Debian configures it.
	printf '%s\n' --disable-documentation --disable-python "--with-crypto=$crypto"
}

build_tree() {
	local src=$1 log=$2
	local -a flags
	mapfile -t flags < <(configure_flags)
	(
		cd "$src"
		./autogen.sh
		./configure "${flags[@]}"
		make -j2 all hash-vectest hash-speedtest btrfs-corrupt-block fssum
		[ "$patched" = 0 ] || make -j2 "$patched_bins"
	) >"$log" 2>&1 || {
		tail -n 40 "$log" >&2
		ba_die "building btrfs-progs failed, full log: $log"
	}
}

build() {
	local out=$1 tmp b
	[ -e "$out/.done" ] && return 0
	fetch_pristine
	tmp="$out.tmp"
	rm -rf "$tmp"
	mkdir -p "$tmp/bin"
	cp -a "$pristine_root/source" "$tmp/src"
	[ "$patched" = 1 ] && apply_series "$tmp/src"
	ba_log "building btrfs-progs ($([ "$patched" = 1 ] && echo patched || echo unpatched), crypto $crypto) in $out"
	build_tree "$tmp/src" "$tmp/build.log"
	local bins=$required_bins
	[ "$patched" = 0 ] || bins="$bins $patched_bins"
	for b in $bins btrfs-convert btrfsck; do
		if [ -x "$tmp/src/$b" ]; then
			ln -s "../src/$b" "$tmp/bin/$b"
		elif [ "$b" != btrfs-convert ]; then
			ba_die "the build did not produce $b"
		fi
	done
	rm -rf "$out"
	mv "$tmp" "$out"
	touch "$out/.done"
}

mkdir -p "$progs_cache"
if [ "$want" = pristine ]; then
	ba_locked progs-pristine fetch_pristine
	echo "$pristine_root/source"
	exit 0
fi
if [ ! -s "$pristine_root/VERSION" ] || [ "$refresh" = 1 ]; then
	ba_locked progs-pristine fetch_pristine
fi
version=$(cat "$pristine_root/VERSION")
if [ "$patched" = 1 ]; then
	[ -f "$here/series" ] || ba_die "no series file in $here"
	mapfile -t patches < <(sed -e '/^#/d' -e '/^$/d' "$here/series")
	key=$(cd "$here" && ba_hash_files series "${patches[@]}" build-progs.sh)
else
	key=unpatched-$(ba_hash_files "$here/build-progs.sh")
fi
[ "$crypto" = builtin ] || key=$key-$crypto
out=$progs_cache/$version-$key

ba_locked "progs-$version-$key" build "$out"
case $want in
bin) echo "$out/bin" ;;
src) echo "$out/src" ;;
esac
