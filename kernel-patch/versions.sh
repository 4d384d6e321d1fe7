# shellcheck shell=bash
# Resolve, at run time, the Debian kernel the patched module is built for:
# the ABI the installed linux-image-amd64 points at, and the Debian version
# that linux-image-<abi>, linux-headers-<abi> and linux-source-6.1 must share.
# Sourced; sets KABI, KDEBVER, KHEADERS, KVMLINUZ, KSRC_TARBALL, KSTOCK_MODDIR.

ba_pkg_version() {
	dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "installed" { print $2 }'
}

ba_kernel_resolve() {
	local dep img_ver hdr_ver src_ver
	dep=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null) ||
		ba_die "linux-image-amd64 is not installed; run tools/deps.sh"
	KABI=$(sed -n 's/.*linux-image-\([^ ,]*\).*/\1/p' <<<"$dep")
	[ -n "$KABI" ] || ba_die "cannot find the kernel ABI in linux-image-amd64's dependencies ($dep)"

	img_ver=$(ba_pkg_version "linux-image-$KABI")
	hdr_ver=$(ba_pkg_version "linux-headers-$KABI")
	src_ver=$(ba_pkg_version linux-source-6.1)
	[ -n "$img_ver" ] || ba_die "linux-image-$KABI is not installed"
	[ -n "$hdr_ver" ] || ba_die "linux-headers-$KABI is not installed: apt-get install linux-headers-$KABI"
	[ -n "$src_ver" ] || ba_die "linux-source-6.1 is not installed: apt-get install linux-source-6.1"
	if [ "$img_ver" != "$hdr_ver" ] || [ "$img_ver" != "$src_ver" ]; then
		ba_die "Debian kernel packages differ in version: linux-image-$KABI $img_ver," \
			"linux-headers-$KABI $hdr_ver, linux-source-6.1 $src_ver." \
			"A module built from this source would not match the kernel; upgrade them together" \
			"(apt-get install linux-image-amd64 linux-headers-amd64 linux-source-6.1)"
	fi

	KDEBVER=$img_ver
	KHEADERS=/usr/src/linux-headers-$KABI
	KVMLINUZ=/boot/vmlinuz-$KABI
	KSRC_TARBALL=/usr/src/linux-source-6.1.tar.xz
	# shellcheck disable=SC2034 # for build-module.sh
	KSTOCK_MODDIR=/lib/modules/$KABI
	local f
	for f in "$KHEADERS/Makefile" "$KVMLINUZ" "$KSRC_TARBALL"; do
		[ -e "$f" ] || ba_die "$f is missing although its package is installed; reinstall it"
	done
}

# The pristine tree of this Debian version, extracted once and shared by every
# series.  Never modified: patched trees are hard-linked copies of it.
ba_kernel_pristine() {
	local dir="$BA_CACHE/kernel/$KDEBVER/pristine"
	if [ ! -e "$dir/.complete" ]; then
		ba_log "extracting $KSRC_TARBALL (Debian $KDEBVER)"
		rm -rf "$dir" "$dir.tmp"
		mkdir -p "$dir.tmp"
		tar -xJf "$KSRC_TARBALL" -C "$dir.tmp" --strip-components=1 ||
			ba_die "cannot extract $KSRC_TARBALL (disk full?)"
		touch "$dir.tmp/.complete"
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

# Hard-linked copy of the pristine tree at $1 (GNU patch replaces files
# instead of writing through the link, so the pristine tree stays intact).
ba_kernel_tree_copy() {
	local pristine=$1 dest=$2
	rm -rf "$dest"
	cp -al "$pristine" "$dest" || ba_die "cannot copy the kernel tree to $dest"
	rm -f "$dest/.complete"
}

ba_kernel_apply() {
	local tree=$1 patch=$2
	patch -d "$tree" -p1 -s --no-backup-if-mismatch -f <"$patch" ||
		ba_die "${patch##*/} does not apply to linux-source-6.1 $KDEBVER"
}

# Build fs/btrfs of $1 as an external module against Debian's headers.  The
# series changes a uapi header, so the tree's own include directories go
# first on the include path.
ba_kernel_build_btrfs() {
	local tree=$1
	make -s -C "$KHEADERS" M="$tree/fs/btrfs" -j"$(nproc)" \
		NOSTDINC_FLAGS="-nostdinc -I$tree/include -I$tree/include/uapi" \
		modules
}
