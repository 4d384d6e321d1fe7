#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# systemd-analyze verify on the units together with what the generators
# (ours and systemd-fstab-generator) write for an initrd and for a booted
# system, next to this host's systemd units: syntax, unknown settings and
# ordering cycles in the start transactions.  systemd-analyze exits 0 on
# mere warnings, so any output at all fails the test.  A cycle planted on
# purpose must be found, so the check is known to be able to fail.
#
# usage: test-verify.sh SYSTEMD_ANALYZE GENERATOR FSTAB_GENERATOR UNIT...
set -euo pipefail

analyze=$1 gen=$2 sysgen=$3
shift 3
[ -x "$analyze" ] || { echo "systemd-analyze not found: install systemd" >&2; exit 1; }

tmp=$(mktemp -d /tmp/btrfs-auth-verify.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# The units as built, with the tool replaced by a stub: verify insists that
# ExecStart= binaries exist, and the tool is checked by the install test.
mkdir -p "$tmp/units"
printf '#!/bin/sh\nexit 0\n' >"$tmp/stub"
chmod +x "$tmp/stub"
for u in "$@"; do
	sed -E "s|^(ExecStart=)[^ ]*/btrfs-auth |\\1$tmp/stub |" "$u" >"$tmp/units/${u##*/}"
done
grep -q "ExecStart=$tmp/stub load" "$tmp/units/btrfs-auth-load@.service" ||
	{ echo "could not point ExecStart= at the stub" >&2; exit 1; }

# generate DIR INITRD CMDLINE FSTAB: both generators into DIR.
generate() {
	local d=$1
	mkdir -p "$d"/{n,e,l}
	for g in "$sysgen" "$gen"; do
		env SYSTEMD_LOG_TARGET=console SYSTEMD_LOG_LEVEL=err SYSTEMD_IN_INITRD="$2" \
			SYSTEMD_PROC_CMDLINE="$3" SYSTEMD_FSTAB="$4" SYSTEMD_SYSROOT_FSTAB="$4" \
			BTRFS_AUTH_SYSCONFDIR="$tmp/etc" "$g" "$d/n" "$d/e" "$d/l" ||
			{ echo "$g failed" >&2; exit 1; }
	done
}

# verify NAME DIR EXPECT(clean|cycle) UNIT...
verify() {
	local name=$1 d=$2 expect=$3 out rc=0
	shift 3
	out=$(SYSTEMD_UNIT_PATH="$d/n:$tmp/units:" "$analyze" verify --man=no "$@" 2>&1) || rc=$?
	if [ "$expect" = clean ] && [ "$rc" = 0 ] && [ -z "$out" ]; then
		pass=$((pass + 1)); echo "ok - $name: verifies cleanly"
	elif [ "$expect" = cycle ] && [ "$rc" != 0 ] && grep -q 'ordering cycle' <<<"$out"; then
		pass=$((pass + 1)); echo "ok - $name: the planted cycle is found"
	else
		fail=$((fail + 1)); echo "not ok - $name: exit $rc, expected $expect"
		printf '%s\n' "$out" | sed 's/^/#   /'
	fi
}

mkdir -p "$tmp/etc/btrfs-auth"
touch "$tmp/etc/btrfs-auth/data.sealed"
printf 'BTRFS_AUTH_TPM_WAIT=20\n' >"$tmp/etc/btrfs-auth/btrfs-auth.conf"

cat >"$tmp/sysroot-fstab" <<'X'
UUID=1 /usr btrfs subvol=usr,auth_key=btrfs:root 0 0
UUID=2 /var btrfs auth_key=btrfs:var,x-initrd.mount 0 0
X
generate "$tmp/initrd" 1 'root=UUID=1 rootflags=auth_key=btrfs:root' "$tmp/sysroot-fstab"
initrd_units=(sysroot.mount sysroot-usr.mount sysroot-var.mount 'btrfs-auth-load@root.service'
	'btrfs-auth-load@data.service' btrfs-auth-lock.service initrd-root-fs.target initrd-fs.target
	initrd.target initrd-cleanup.service initrd-switch-root.target initrd-switch-root.service)
verify initrd "$tmp/initrd" clean "${initrd_units[@]}"

cat >"$tmp/fstab" <<'X'
UUID=1 /           btrfs auth_key=btrfs:root 0 0
UUID=1 /home       btrfs subvol=home,auth_key=btrfs:root 0 0
UUID=2 /srv/backup btrfs auth_key=btrfs:backup,_netdev 0 0
UUID=3 /mnt/usb    btrfs auth_key=btrfs:usb,noauto 0 0
X
generate "$tmp/main" 0 'root=UUID=1 rootflags=auth_key=btrfs:root' "$tmp/fstab"
main_units=(home.mount srv-backup.mount mnt-usb.mount 'btrfs-auth-load@root.service'
	btrfs-auth-lock.service local-fs.target remote-fs.target sysinit.target)
verify main "$tmp/main" clean "${main_units[@]}"

# The lock after the root, and the root after the lock: a cycle.
echo 'Before=sysroot.mount' >>"$tmp/initrd/n/btrfs-auth-lock.service.d/50-btrfs-auth.conf"
verify initrd-planted-cycle "$tmp/initrd" cycle "${initrd_units[@]}"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
