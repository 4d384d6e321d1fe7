#!/bin/bash
# Build (once) a minimal Debian root with systemd for the end-to-end boot
# tests and print its directory.  debootstrap downloads from the archive the
# machine's own apt sources name; the result is cached in
# $BTRFS_AUTH_CACHE/rootfs/<key>, keyed by this script and the package list.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/lib.sh"

# What the booted system needs: systemd as init, udev for the TPM and
# disks, the libraries btrfs-auth links against, keyctl for the tests,
# tpm2-tools for the tests' raw unseal attempt after switch-root.
packages=(systemd systemd-sysv udev kmod keyutils util-linux
	libtss2-esys-3.0.2-0 libtss2-mu0 libtss2-rc0 libtss2-tctildr0
	libtss2-tcti-device0 libkeyutils1 libssl3 libjson-c5 tpm2-tools)

build() {
	local out=$1 codename mirror
	[ -e "$out/.complete" ] && return 0
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	mirror=$(ba_debian_mirror)
	rm -rf "$out"
	mkdir -p "$out"
	ba_log "debootstrap $codename (minbase + systemd) into $out/root"
	if ! debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
		"$codename" "$out/root" "$mirror" >"$out/debootstrap.log" 2>&1; then
		ba_die "debootstrap failed, see $out/debootstrap.log"
	fi
	# Nothing in the image may depend on the build host's identity.
	rm -f "$out/root/etc/machine-id" "$out/root/var/lib/dbus/machine-id"
	: >"$out/root/etc/machine-id"
	rm -rf "$out/root/var/cache/apt/archives/"*.deb "$out/root/var/lib/apt/lists/"*
	touch "$out/.complete"
}

key=$( { printf '%s\n' "${packages[@]}"; cat "$0"; } | sha256sum | cut -c1-16)
out="$BA_CACHE/rootfs/$key"
ba_locked "rootfs-$key" build "$out"
echo "$out/root"
