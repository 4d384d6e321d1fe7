#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The DKMS build of btrfs-auth-dkms (dkms.conf's MAKE): fs/btrfs from
# linux-source-6.1, the series in patches/ applied in the order of
# "series", built as an external module against the kernel's headers.
#
# usage: build.sh KERNELVER [KERNEL_BUILD_DIR] | build.sh --clean
#
# It refuses, before building anything, when linux-source-6.1 is not of
# the same Debian version as the kernel: fs/btrfs of another version would
# not match the kernel it is loaded into.
set -euo pipefail
cd "$(dirname "$0")"
log() { echo "btrfs-auth-dkms: $*" >&2; }
die() { echo "btrfs-auth-dkms: error: $*" >&2; exit 1; }

if [ "${1:-}" = --clean ]; then
	rm -rf linux
	exit 0
fi
kver=${1:?usage: build.sh KERNELVER [KERNEL_BUILD_DIR]}
kdir=${2:-/lib/modules/$kver/build}
tarball=${BTRFS_AUTH_LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}

# The Debian version of a package whose files are on disk (also while
# dpkg configures it: a kernel's postinst hooks run before it is "installed");
# nothing for a package dpkg does not know (dpkg-query then fails: not an
# error here, under pipefail).
pkg_version() {
	{ dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null || true; } |
		awk '$1 != "not-installed" && $1 != "config-files" { print $2 }'
}

[ -e "$kdir/Makefile" ] ||
	die "no headers for kernel $kver in $kdir: apt-get install linux-headers-$kver"
kpkg='' kdeb=''
for p in "linux-image-$kver" "linux-image-$kver-unsigned" "linux-headers-$kver"; do
	kdeb=$(pkg_version "$p")
	if [ -n "$kdeb" ]; then
		kpkg=$p
		break
	fi
done
[ -n "$kdeb" ] ||
	die "kernel $kver belongs to no Debian package (linux-image-$kver or linux-headers-$kver):" \
		"the series is for Debian's own 6.1 kernels, whose source linux-source-6.1 is"
src=$(pkg_version linux-source-6.1)
if [ -z "$src" ] || [ ! -f "$tarball" ]; then
	die "linux-source-6.1 is not installed: apt-get install linux-source-6.1=$kdeb"
fi
if [ "$src" != "$kdeb" ]; then
	die "linux-source-6.1 is Debian $src, but kernel $kver ($kpkg) is Debian $kdeb:" \
		"fs/btrfs must come from the source of the kernel it is loaded into." \
		"Install the matching source (apt-get install linux-source-6.1=$kdeb, or upgrade" \
		"kernel, headers and source together: apt-get install linux-image-amd64" \
		"linux-headers-amd64 linux-source-6.1), then: dkms autoinstall -k $kver"
fi

log "fs/btrfs of linux-source-6.1 $src for $kver"
rm -rf linux
mkdir linux
# Only what the series touches and the build reads: the whole tarball is
# decompressed, but only these trees are written.
tar -xJf "$tarball" -C linux --strip-components=1 \
	linux-source-6.1/fs/btrfs linux-source-6.1/include \
	linux-source-6.1/Documentation/filesystems linux-source-6.1/MAINTAINERS ||
	die "cannot extract fs/btrfs from $tarball"
while read -r p; do
	case $p in '' | '#'*) continue ;; esac
	patch -d linux -p1 -s --no-backup-if-mismatch -f <"patches/$p" ||
		die "$p does not apply to linux-source-6.1 $src"
done <patches/series

# The series changes a uapi header the headers package also ships: the
# patched tree's include directories go first.
log "building btrfs.ko against $kdir"
make -C "$kdir" M="$PWD/linux/fs/btrfs" -j"$(nproc)" \
	NOSTDINC_FLAGS="-nostdinc -I$PWD/linux/include -I$PWD/linux/include/uapi" modules

ko=linux/fs/btrfs/btrfs.ko
modinfo -F parm "$ko" | grep -q '^require_auth:' ||
	die "the built $ko lacks the series' require_auth parameter"
want="$kver "
got=$(modinfo -F vermagic "$ko")
[ "${got#"$want"}" != "$got" ] || die "vermagic '$got' of the built module is not for $kver"
stock=/lib/modules/$kver/kernel/fs/btrfs/btrfs.ko
if [ -f "$stock" ] && [ "$(modinfo -F vermagic "$stock")" != "$got" ]; then
	die "vermagic '$got' differs from Debian's module's '$(modinfo -F vermagic "$stock")'"
fi
log "built $ko for $kver"
