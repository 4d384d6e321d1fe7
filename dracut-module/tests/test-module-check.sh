#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check() of module-setup.sh against fake hosts: for a hostonly initramfs
# 0 when the host has a sealed key or auth_key= in its fstab, 255 (only
# with --add) when not; for a generic one always 0; 1 without the tool.
# dracut's require_binaries is stubbed.
#
# usage: test-module-check.sh MODULE_SETUP TOOL_PATH
set -euo pipefail

setup=$1 tool=$2
tmp=$(mktemp -d /tmp/btrfs-auth-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# The running host's own command line and mounts count too; a host booted
# with auth_key= makes every case "needed".
host_needs=0
grep -qs 'auth_key=' /proc/cmdline /proc/self/mountinfo && host_needs=1

# expect NAME WANT [HOSTONLY]: runs check() for the fake host set up in
# $tmp/NAME, for a hostonly initramfs unless HOSTONLY is empty.
expect() {
	local name=$1 want=$2 rc=0
	(
		# shellcheck disable=SC2034 # read by check()
		hostonly=${3-yes}
		# shellcheck disable=SC2317,SC2034 # used by the sourced module-setup.sh
		require_binaries() { [ -x "$1" ]; }
		# shellcheck disable=SC2034
		dracutsysrootdir=$tmp/$name/sys btrfs_auth_stagedir=$tmp/$name/stage btrfs_auth_confdir=$tmp/$name/keys
		# shellcheck source=/dev/null
		. "$setup"
		check
	) || rc=$?
	if [ "$rc" = "$want" ]; then
		pass=$((pass + 1)); echo "ok - $name${3+ (generic)}: check() returns $rc"
	else
		fail=$((fail + 1)); echo "not ok - $name${3+ (generic)}: check() returns $rc, expected $want"
	fi
}

# host NAME [TOOL(1|0)]: a fake host with (or without) the staged tool.
host() {
	mkdir -p "$tmp/$1"/{sys/etc,keys,stage"${tool%/*}"}
	if [ "${2:-1}" = 1 ]; then
		printf '#!/bin/sh\n' >"$tmp/$1/stage$tool"
		chmod +x "$tmp/$1/stage$tool"
	fi
	printf 'UUID=1 / ext4 defaults 0 1\n' >"$tmp/$1/sys/etc/fstab"
}

host plain
expect plain $((host_needs ? 0 : 255))

host sealed-key
touch "$tmp/sealed-key/keys/root.sealed"
expect sealed-key 0

host fstab-key
printf 'UUID=2 /data btrfs noatime,auth_key=btrfs:data 0 0\n' >>"$tmp/fstab-key/sys/etc/fstab"
expect fstab-key 0

host fstab-comment
printf '#UUID=2 /data btrfs auth_key=btrfs:data 0 0\n' >>"$tmp/fstab-comment/sys/etc/fstab"
expect fstab-comment $((host_needs ? 0 : 255))

# A generic initramfs may boot any machine: the module goes in.
expect plain 0 ""

host no-tool 0
touch "$tmp/no-tool/keys/root.sealed"
expect no-tool 1
expect no-tool 1 ""

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
