#!/bin/bash
# Build (once) the Debian 12 root an administrator would install btrfs-auth
# into, and print its directory: debootstrap (minbase, from the archive the
# machine's own apt sources name), then in a chroot, with apt as an
# administrator would: the kernel, its headers and source, DKMS and dracut
# (which replaces initramfs-tools; its kernel hook built the initramfs).
# Everything btrfs-auth's packages depend on is installed, so that
# "apt-get install ./*.deb" in a copy needs no download; apt's lists and the
# kernel's .deb stay, for "apt-get install --reinstall".  Cached in
# $BTRFS_AUTH_CACHE/rootfs-admin/<key>, keyed by this script and the list.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/lib.sh"
# shellcheck source=chroot.sh
source "$here/chroot.sh"

base=(systemd systemd-sysv udev kmod keyutils util-linux ca-certificates)
admin=(dracut linux-image-amd64 linux-headers-amd64 linux-source-6.1 dkms openssl
	btrfs-progs tpm2-tools libtss2-tcti-device0 libtss2-esys-3.0.2-0 libtss2-mu0 libtss2-rc0
	libtss2-tctildr0 libkeyutils1 libssl3 libjson-c5 patch xz-utils)

# The deb822 stanzas of the machine's apt sources for this release's suites
# (so no third-party repository), and its one-line entries as stanzas.
debian_sources() {
	local codename f
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		awk -v rel="$codename" '
			function flush() {
				if (st ~ ("(^|\n)Suites:[^\n]*" rel) && st !~ /(^|\n)Enabled: *no/) print st "\n"
				st = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			{ st = (st == "" ? $0 : st "\n" $0) }
			END { flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] || continue
		awk -v rel="$codename" '$1 == "deb" && $3 ~ ("^" rel) && $2 !~ /^\[/ {
			printf "Types: deb\nURIs: %s\nSuites: %s\nComponents:", $2, $3
			for (i = 4; i <= NF; i++) printf " %s", $i
			printf "\n\n" }' "$f"
	done
}

build() {
	local out=$1 codename mirror r
	[ -e "$out/.complete" ] && return 0
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	mirror=$(ba_debian_mirror)
	rm -rf "$out"
	mkdir -p "$out"
	r=$out/root
	ba_log "debootstrap $codename (minbase + systemd) into $r"
	debootstrap --variant=minbase --include="$(IFS=,; echo "${base[*]}")" \
		"$codename" "$r" "$mirror" >"$out/debootstrap.log" 2>&1 ||
		ba_die "debootstrap failed, see $out/debootstrap.log"
	# Nothing in the image may depend on the build host's identity.
	rm -f "$r/etc/machine-id" "$r/var/lib/dbus/machine-id"
	: >"$r/etc/machine-id"
	echo 'APT::Install-Recommends "false";' >"$r/etc/apt/apt.conf.d/90btrfs-auth-test"
	# The machine's own Debian sources (updates, security): the kernel,
	# headers and source of this machine's version, as on an installed one.
	debian_sources >"$r/etc/apt/sources.list.d/debian.sources"
	rm -f "$r/etc/apt/sources.list"
	ba_log "apt-get install ${admin[*]} (in the chroot)"
	{ ba_chroot "$r" apt-get -q update && ba_chroot "$r" apt-get -q -y install "${admin[@]}"; } \
		>"$out/apt.log" 2>&1 || ba_die "installing the kernel, DKMS and dracut failed, see $out/apt.log"
	# Keep only the kernel's .deb (for --reinstall), not the rest.
	find "$r/var/cache/apt/archives" -name '*.deb' ! -name 'linux-image-6.1*' -delete
	touch "$out/.complete"
}

key=$( { printf '%s\n' "${base[@]}" "${admin[@]}"; cat "$0" "$here/chroot.sh"; } | sha256sum | cut -c1-16)
out="$BA_CACHE/rootfs-admin/$key"
ba_locked "rootfs-admin-$key" build "$out"
echo "$out/root"
