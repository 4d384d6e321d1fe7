#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds a real initramfs with this host's dracut and the module as
# "meson install --destdir" stages it, then checks with lsinitrd that the
# tool, its libraries, the TCTI it dlopen()s, the units, the generator,
# the sealed keys and the TPM drivers are inside, and runs the generator
# from the image against the image's own /etc.
#
# dracut takes its modules from $dracutbasedir/modules.d, so the test
# builds a private dracutbasedir: links to the host's dracut, its modules
# and the staged 91btrfs-auth.  The keys come from a temporary directory
# (btrfs_auth_confdir), the pieces from the staging root
# (btrfs_auth_stagedir): nothing is written outside the temporary tree.
#
# usage: test-dracut.sh MESON BUILD_DIR DRACUTDIR TOOL GENERATORDIR UNITDIR
set -euo pipefail

meson=$1 build=$2 dracutdir=$3 tool=$4 generatordir=$5 unitdir=$6
if ! command -v dracut >/dev/null || ! command -v lsinitrd >/dev/null; then
	echo "dracut not found: install dracut-core" >&2
	exit 1
fi

tmp=$(mktemp -d /tmp/btrfs-auth-dracut.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $*"; }

# A Debian kernel whose modules include the TPM drivers.
kver=${BTRFS_AUTH_TEST_KVER:-}
if [ -z "$kver" ]; then
	for d in /lib/modules/*-amd64 /lib/modules/*; do
		[ -f "$d/modules.dep" ] && [ -d "$d/kernel/drivers/char/tpm" ] && { kver=${d##*/}; break; }
	done
fi
[ -n "$kver" ] || { echo "no kernel with TPM modules in /lib/modules: install linux-image-amd64" >&2; exit 1; }
echo "# kernel $kver"

"$meson" install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log" >&2; exit 1; }
[ -x "$tmp/root$tool" ] || { echo "the tool is not staged at $tool" >&2; exit 1; }

mkdir -p "$tmp/dracut/modules.d" "$tmp/conf.d" "$tmp/keys" "$tmp/work"
for e in /usr/lib/dracut/*; do
	[ "${e##*/}" = modules.d ] || ln -s "$e" "$tmp/dracut/"
done
for m in /usr/lib/dracut/modules.d/*; do
	[ "${m##*/}" = 91btrfs-auth ] || ln -s "$m" "$tmp/dracut/modules.d/"
done
ln -s "$tmp/root$dracutdir/modules.d/91btrfs-auth" "$tmp/dracut/modules.d/"

# A dummy sealed key: the image only carries it.
head -c 256 /dev/urandom >"$tmp/keys/test.sealed"
head -c 256 /dev/urandom >"$tmp/keys/test.sealed.previous"
chmod 600 "$tmp/keys/test.sealed" "$tmp/keys/test.sealed.previous"
head -c 72 /dev/urandom >"$tmp/keys/test.rollback"
chmod 644 "$tmp/keys/test.rollback"
echo 'BTRFS_AUTH_TPM_WAIT=20' >"$tmp/keys/btrfs-auth.conf"
printf 'btrfs_auth_stagedir="%s"\nbtrfs_auth_confdir="%s"\n' "$tmp/root" "$tmp/keys" >"$tmp/dracut.conf"

start=$SECONDS
if dracutbasedir=$tmp/dracut dracut --conf "$tmp/dracut.conf" --confdir "$tmp/conf.d" \
	--tmpdir "$tmp/work" --no-hostonly --no-hostonly-cmdline --no-early-microcode --no-compress \
	--modules "base systemd-initrd" --add btrfs-auth --kver "$kver" --force "$tmp/initrd.img" \
	>"$tmp/dracut.log" 2>&1; then
	ok "dracut built the image in $((SECONDS - start)) s"
else
	not_ok "dracut failed:"
	sed 's/^/#   /' "$tmp/dracut.log"
	echo "$pass passed, $fail failed"
	exit 1
fi
if grep -qiE 'btrfs-auth.*(fail|error|not be installed)|FAILED' "$tmp/dracut.log"; then
	not_ok "dracut complained:"
	grep -iE 'btrfs-auth|FAILED' "$tmp/dracut.log" | sed 's/^/#   /'
fi
if grep -q "Including module: btrfs-auth" "$tmp/dracut.log"; then
	ok "module included"
else
	not_ok "module not included"
fi

lsinitrd "$tmp/initrd.img" >"$tmp/list" 2>&1

# has MODE REGEX WHAT: a line of lsinitrd's listing with that mode and path.
has() {
	if grep -qE "^$1 .* $2( -> .*)?\$" "$tmp/list"; then
		ok "$3"
	else
		not_ok "$3: no ${1:+$1 }$2 in the image"
	fi
}
L='(usr/)?lib'
has '-rwxr-xr-x' "${tool#/}" "the tool at $tool"
has '-rwxr-xr-x' "$L/systemd/system-generators/btrfs-auth-generator" "the generator"
has '-rw-r--r--' "$L/systemd/system/btrfs-auth-load@\\.service" "the load unit"
has '-rw-r--r--' "$L/systemd/system/btrfs-auth-lock\\.service" "the lock unit"
has '-rw-------' 'etc/btrfs-auth/test\.sealed' "the sealed key, still 0600"
has '-rw-------' 'etc/btrfs-auth/test\.sealed\.previous' "the previous seal a reseal kept, still 0600"
has '-rw-r--r--' 'etc/btrfs-auth/test\.rollback' "the rollback anchor"
has '-rw-r--r--' 'etc/btrfs-auth/btrfs-auth\.conf' "btrfs-auth.conf"
has '\S+' "$L/x86_64-linux-gnu/libtss2-tcti-device\\.so\\.0" "the device TCTI"
has '\S+' "$L/modules/$kver/kernel/fs/fat/vfat\\.ko.*" "vfat, for an appliance's key store, without reading btrfs-auth.conf"
has '\S+' '(usr/)?bin/systemd-ask-password' "systemd-ask-password, for PINs"
has '\S+' '(usr/)?sbin/halt' "halt, which dracut's emergency handler runs to fail closed"
has '\S+' "$L/systemd/system/systemd-pcrphase-initrd\\.service" "systemd-pcrphase-initrd: PCR 11's boot phases"
has '\S+' "((usr/)?lib|etc)/systemd/system/initrd\\.target\\.wants/systemd-pcrphase-initrd\\.service" "systemd-pcrphase-initrd runs in the initrd"
for lib in libtss2-esys libtss2-rc libtss2-mu; do
	has '\S+' "$L/x86_64-linux-gnu/$lib\\.so\\.0" "$lib, which systemd-pcrphase dlopen()s"
done
# What dracut's tpm2-tss module would add (through its systemd-pcrphase
# module): nothing in the initramfs runs it.
for extra in '(usr/)?bin/tpm2$' "$L/x86_64-linux-gnu/libtss2-fapi\\.so" "$L/x86_64-linux-gnu/libcurl" \
	"$L/x86_64-linux-gnu/libgnutls" "$L/x86_64-linux-gnu/libkrb5\\.so"; do
	if grep -qE " $extra" "$tmp/list"; then
		not_ok "$extra is in the image (dracut's tpm2-tss module came in)"
	else
		ok "no ${extra##*/} in the image"
	fi
done
if lsinitrd -f etc/cmdline.d/00-btrfs-auth.conf "$tmp/initrd.img" 2>/dev/null |
	grep -qx 'rd.shell=0 rd.emergency=halt'; then
	ok "failures halt instead of opening a shell"
else
	not_ok "no rd.shell=0 rd.emergency=halt in etc/cmdline.d/00-btrfs-auth.conf"
fi

while read -r lib; do
	has '\S+' "$L/x86_64-linux-gnu/${lib//./\\.}" "the tool's library $lib"
done < <(ldd "$tmp/root$tool" | awk '$1 ~ /^lib/ && $3 ~ /^\// { print $1 }')

has '\S+' "$L/modules/$kver/kernel/arch/x86/crypto/sha256-ssse3\\.ko.*" "sha256_ssse3: the root's checksums on SSSE3/AVX2/SHA-NI"
if lsinitrd -f etc/modprobe.d/btrfs-auth.conf "$tmp/initrd.img" 2>/dev/null | grep -qx 'softdep btrfs pre: sha256_ssse3'; then
	ok "btrfs.ko loads sha256_ssse3 first"
else
	not_ok "no 'softdep btrfs pre: sha256_ssse3' in etc/modprobe.d/btrfs-auth.conf"
fi
for ko in /lib/modules/"$kver"/kernel/drivers/char/tpm/*.ko* \
	/lib/modules/"$kver"/kernel/drivers/char/tpm/*/*.ko*; do
	[ -f "$ko" ] || continue
	has '\S+' "$L/modules/$kver/${ko#/lib/modules/"$kver"/}" "TPM driver ${ko##*/}"
done

# The image's own generator, in initrd mode, over the image's /etc.
mkdir "$tmp/unpacked"
(cd "$tmp/unpacked" && lsinitrd --unpack "$tmp/initrd.img") >/dev/null 2>&1
g=$(find "$tmp/unpacked" -path '*/system-generators/btrfs-auth-generator' | head -n1)
if [ -z "$g" ]; then
	not_ok "cannot unpack the generator"
else
	mkdir -p "$tmp/gen"/{n,e,l}
	SYSTEMD_LOG_TARGET=console SYSTEMD_IN_INITRD=1 SYSTEMD_FSTAB=/nonexistent \
		SYSTEMD_SYSROOT_FSTAB=/nonexistent BTRFS_AUTH_SYSCONFDIR="$tmp/unpacked/etc" \
		SYSTEMD_PROC_CMDLINE='root=UUID=1 rootflags=auth_key=btrfs:root' \
		"$g" "$tmp/gen/n" "$tmp/gen/e" "$tmp/gen/l"
	if grep -qx 'After=btrfs-auth-load@test.service' "$tmp/gen/n/btrfs-auth-lock.service.d/50-btrfs-auth.conf" &&
		grep -qx 'Requires=btrfs-auth-load@root.service' "$tmp/gen/n/sysroot.mount.d/50-btrfs-auth.conf" &&
		grep -qx 'Environment=BTRFS_AUTH_TPM_WAIT=20' "$tmp/gen/n/btrfs-auth-load@.service.d/50-btrfs-auth.conf"; then
		ok "the image's generator finds the image's key and conf"
	else
		not_ok "the image's generator output is wrong:"
		find "$tmp/gen/n" -type f -exec sh -c 'echo "#   $1"; sed "s/^/#     /" "$1"' _ {} \;
	fi
fi

# Every unit in the image runs a tool that is in the image.
while read -r u; do
	exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$u")
	if [ -x "$tmp/unpacked$exe" ]; then
		ok "${u##*/} runs $exe, present in the image"
	else
		not_ok "${u##*/} runs $exe, missing from the image"
	fi
done < <(find "$tmp/unpacked" -path '*/systemd/system/btrfs-auth-*.service' -type f)

echo "# generatordir $generatordir, unitdir $unitdir on the host"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
