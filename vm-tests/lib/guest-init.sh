#!/bin/sh
# shellcheck shell=dash
# /init of the test VM (busybox ash, PID 1): set the machine up, run the
# scenario's guest part in a subshell, then give the verdict and power off.
# PID 1 must never exit (the kernel would panic), so everything that can
# fail runs in the subshell or in functions that only record failures.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root

# The initramfs has no /dev/console node; devtmpfs provides it.
mount -t devtmpfs devtmpfs /dev
exec 0</dev/console 1>/dev/console 2>&1

# shellcheck source=guest-lib.sh
. /ba/guest-lib.sh
ba_boot

rc=0
if ba_boot_failed; then
	rc=1
elif [ -f /ba/scenario.sh ]; then
	ba_scenario_begin
	# shellcheck source=/dev/null
	(. /ba/scenario.sh && guest)
	rc=$?
else
	_ba_record FAIL boot-scenario "the initramfs has no /ba/scenario.sh"
fi
verdict "$rc"
