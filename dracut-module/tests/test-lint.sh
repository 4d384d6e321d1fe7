#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bash -n and shellcheck on the configured module-setup.sh and on the test
# scripts of units/ and dracut-module/.
#
# usage: test-lint.sh SHELLCHECK SCRIPT...
set -euo pipefail

shellcheck=$1
shift
[ -x "$shellcheck" ] || { echo "shellcheck not found: install the shellcheck package" >&2; exit 1; }
pass=0 fail=0

for f in "$@"; do
	if bash -n "$f"; then
		pass=$((pass + 1)); echo "ok - bash -n $f"
	else
		fail=$((fail + 1)); echo "not ok - bash -n $f"
	fi
	if out=$("$shellcheck" -s bash "$f" 2>&1); then
		pass=$((pass + 1)); echo "ok - shellcheck $f"
	else
		fail=$((fail + 1)); echo "not ok - shellcheck $f"
		printf '%s\n' "$out" | sed 's/^/#   /'
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
