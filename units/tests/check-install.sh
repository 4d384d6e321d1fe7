#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Stages the build with "meson install --destdir" and checks that each
# expected file lands there with its mode, and that the units run the tool
# where it was installed.
#
# usage: check-install.sh MESON BUILD_DIR TOOL_PATH [MODE PATH]...
set -euo pipefail

meson=$1 build=$2 tool=$3
shift 3
tmp=$(mktemp -d /tmp/btrfs-auth-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

if ! "$meson" install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >"$tmp/log" 2>&1; then
	echo "meson install --destdir failed:" >&2
	cat "$tmp/log" >&2
	exit 1
fi

check() {
	local mode=$1 path=$2 got
	if [ ! -f "$tmp/root$path" ]; then
		fail=$((fail + 1)); echo "not ok - $path is not installed"
		return
	fi
	got=$(stat -c %a "$tmp/root$path")
	if [ "$got" = "$mode" ]; then
		pass=$((pass + 1)); echo "ok - $path mode $mode"
	else
		fail=$((fail + 1)); echo "not ok - $path has mode $got, expected $mode"
	fi
}

while [ $# -ge 2 ]; do
	check "$1" "$2"
	shift 2
done

# Every installed unit that runs the tool must name the installed tool.
while read -r u; do
	while read -r exe; do
		if [ "$exe" = "$tool" ]; then
			pass=$((pass + 1)); echo "ok - ${u#"$tmp/root"} runs $tool"
		else
			fail=$((fail + 1)); echo "not ok - ${u#"$tmp/root"} runs $exe, not $tool"
		fi
	done < <(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$u")
done < <(find "$tmp/root" -name 'btrfs-auth-*.service' -type f)

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
