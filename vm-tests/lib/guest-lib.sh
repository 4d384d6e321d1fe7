# shellcheck shell=dash
# Guest-side library of the VM tests, sourced by /init (busybox ash) before
# the scenario runs.  A scenario's guest part calls:
#
#   check NAME CMD...          CMD must succeed
#   check_fails NAME CMD...    CMD must fail (exit 1..128; a crash is no refusal)
#                              (CMD runs in a subshell; it may be a function)
#   expect_dmesg NAME ERE      the kernel log since the last dmesg_mark matches
#   expect_no_dmesg NAME ERE   ... and does not match
#   dmesg_mark                 start a new window for expect_dmesg
#   add_logon_key DESC HEX     keyctl padd logon DESC @u, payload from hex
#   ba_disk N                  the device of scenario disk N (0 = first = vda)
#   allow_kernel_warnings      a WARN/BUG splat does not fail the verdict
#   verdict                    optional: /init calls it after guest returns
#
# Results: every check is written to /ba/out/checks.log; anything the
# scenario puts under $BA_OUT (/ba/out) comes back to the host, with the
# kernel log, on the results disk.  Files the host put in the scenario's
# to-guest directory are in $BA_IN (/ba/in).
#
# Markers: each check prints "BA-CHECK: ok NAME" or "BA-CHECK: FAIL NAME:
# DETAIL", and the last line is "BA-VERDICT: PASS" or "BA-VERDICT: FAIL
# REASON", on the console and on the second serial port, which carries
# nothing else, so kernel messages never break a marker line.

BA_OUT=/ba/out
BA_IN=/ba/in
BA_CHECKS=$BA_OUT/checks.log
BA_MARKERS=
BA_BOOT=1
BA_DISKS=0

# Patterns that mean the kernel hit a bug, whatever the scenario checked.
# (The line that names the problem, not the "cut here" line before it.)
BA_KERNEL_BUG_ERE='WARNING: CPU:|BUG: |kernel BUG at|Oops: |general protection fault|UBSAN:|KASAN:|Kernel panic'

ba_emit() {
	printf '%s\n' "$*"
	[ -z "$BA_MARKERS" ] || printf '%s\n' "$*" >&8
}

# A check name is one word, so the host can parse marker lines.
_ba_name_ok() {
	case $1 in
	'' | *[!A-Za-z0-9._:+-]*) return 1 ;;
	*) return 0 ;;
	esac
}

# _ba_record ok|FAIL NAME [DETAIL]
_ba_record() {
	local kind="$1" name="$2" detail
	detail=$(printf '%s' "${3:-}" | tr '\n\r\t' '   ' | cut -c1-300)
	if [ "$kind" = ok ]; then
		echo "ok $name" >>"$BA_CHECKS"
		ba_emit "BA-CHECK: ok $name"
	else
		echo "FAIL $name: $detail" >>"$BA_CHECKS"
		ba_emit "BA-CHECK: FAIL $name: $detail"
	fi
}

# The last non-empty line a command printed, for a failure's detail.
_ba_last_line() { grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n 1; }

_ba_outfile() {
	local f="$BA_OUT/checks/$1.out" n=1
	while [ -e "$f" ]; do n=$((n + 1)); f="$BA_OUT/checks/$1.$n.out"; done
	printf '%s\n' "$f"
}

check() {
	local name="$1" out rc
	shift
	_ba_name_ok "$name" || { _ba_record FAIL "bad-check-name" "'$name'"; return 1; }
	[ $# -gt 0 ] || { _ba_record FAIL "$name" "check without a command"; return 1; }
	out=$(_ba_outfile "$name")
	# A subshell, so a command that changes directory or variables does
	# not change the rest of the scenario (a cd into /mnt keeps it busy).
	("$@") >"$out" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		_ba_record ok "$name"
		return 0
	fi
	_ba_record FAIL "$name" "'$*' exited $rc: $(_ba_last_line "$out")"
	return 1
}

check_fails() {
	local name="$1" out rc
	shift
	_ba_name_ok "$name" || { _ba_record FAIL "bad-check-name" "'$name'"; return 1; }
	[ $# -gt 0 ] || { _ba_record FAIL "$name" "check_fails without a command"; return 1; }
	out=$(_ba_outfile "$name")
	("$@") >"$out" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		_ba_record FAIL "$name" "'$*' succeeded but must fail: $(_ba_last_line "$out")"
		return 1
	fi
	# 129..192 is a signal (ash reports 128+N): a crash is not a refusal.
	if [ "$rc" -gt 128 ] && [ "$rc" -le 192 ]; then
		_ba_record FAIL "$name" "'$*' was killed by signal $((rc - 128))"
		return 1
	fi
	_ba_record ok "$name"
	return 0
}

# The kernel log since the last dmesg_mark (all of it before the first).
_ba_dmesg_window() {
	local mark
	mark=$(cat "$BA_OUT/.mark" 2>/dev/null || echo 0)
	if [ "$mark" = 0 ]; then
		dmesg
	else
		dmesg | sed -n "/ba-mark: $mark\$/,\$p"
	fi
}

dmesg_mark() {
	local mark
	mark=$(cat "$BA_OUT/.mark" 2>/dev/null || echo 0)
	mark=$((mark + 1))
	echo "$mark" >"$BA_OUT/.mark"
	echo "ba-mark: $mark" >/dev/kmsg
}

expect_dmesg() {
	local name="$1" ere="$2" line
	_ba_name_ok "$name" || { _ba_record FAIL "bad-check-name" "'$name'"; return 1; }
	line=$(_ba_dmesg_window | grep -E -e "$ere" | head -n 1)
	if [ -n "$line" ]; then
		_ba_record ok "$name"
		return 0
	fi
	_ba_record FAIL "$name" "no kernel message matches /$ere/; last: $(_ba_dmesg_window | tail -n 1)"
	return 1
}

expect_no_dmesg() {
	local name="$1" ere="$2" line
	_ba_name_ok "$name" || { _ba_record FAIL "bad-check-name" "'$name'"; return 1; }
	line=$(_ba_dmesg_window | grep -E -e "$ere" | head -n 1)
	if [ -z "$line" ]; then
		_ba_record ok "$name"
		return 0
	fi
	_ba_record FAIL "$name" "kernel said: $line"
	return 1
}

# Load a logon key into root's user keyring, where the kernel's
# request_key() for a mount finds it.  The payload is given in hex and
# goes through a pipe, never argv.  Prints the key's serial.
add_logon_key() {
	printf '%s' "$2" | xxd -r -p | keyctl padd logon "$1" @u
}

ba_disk() {
	local s
	for s in /sys/block/vd*; do
		[ "$(cat "$s/serial" 2>/dev/null)" = "ba-disk$1" ] && { echo "/dev/${s##*/}"; return 0; }
	done
	echo "ba_disk: no scenario disk $1" >&2
	return 1
}

allow_kernel_warnings() { : >"$BA_OUT/.allow-kernel-warnings"; }

_ba_cmdline_value() {
	local w
	# shellcheck disable=SC2013 # the words are what we want
	for w in $(cat /proc/cmdline); do
		case $w in "$1="*) echo "${w#*=}"; return 0 ;; esac
	done
	return 1
}

_ba_load_modules() {
	local path kind failed='' out
	out=$(_ba_outfile boot-modules)
	while read -r path kind; do
		[ -n "$path" ] || continue
		if ! insmod "$path" >>"$out" 2>&1; then
			if [ "$kind" = required ]; then
				failed="$failed ${path##*/}"
			else
				echo "optional module ${path##*/} did not load" >>"$out"
			fi
		fi
	done </ba/modules.order
	if [ -n "$failed" ]; then
		_ba_record FAIL boot-modules "insmod failed:$failed: $(_ba_last_line "$out")"
	else
		_ba_record ok boot-modules
	fi
}

# Scenario disks carry serial ba-diskN, the results disk ba-results; wait
# for all of them (udev is absent, devtmpfs creates the nodes).
_ba_wait_disks() {
	local n=0 tries=0 missing
	while :; do
		missing=
		n=0
		while [ "$n" -lt "$BA_DISKS" ]; do
			ba_disk "$n" >/dev/null 2>&1 || missing="$missing ba-disk$n"
			n=$((n + 1))
		done
		[ -z "$missing" ] && break
		tries=$((tries + 1))
		if [ "$tries" -ge 100 ]; then
			_ba_record FAIL boot-disks "missing after 10 s:$missing; have: $(cd /sys/block && echo *)"
			return 1
		fi
		sleep 0.1
	done
	_ba_record ok boot-disks
}

ba_boot() {
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t tmpfs -o mode=1777 tmpfs /tmp
	mkdir -p "$BA_OUT/checks" "$BA_IN" /mnt
	: >"$BA_CHECKS"
	# Scenario values from the host (vm_guest_env), before anything else.
	# shellcheck source=/dev/null
	[ ! -f /ba/env ] || . /ba/env
	# Only errors and worse on the console; the full log goes to the host
	# in dmesg.txt, and on failure to the console too.
	dmesg -n "${BA_CONSOLE_LEVEL:-4}"
	if [ -c /dev/ttyS1 ] && (: >/dev/ttyS1) 2>/dev/null; then
		exec 8>/dev/ttyS1
		BA_MARKERS=/dev/ttyS1
	fi
	BA_BOOT=$(_ba_cmdline_value ba.boot || echo 1)
	BA_DISKS=$(_ba_cmdline_value ba.disks || echo 0)
	export BA_OUT BA_IN BA_BOOT BA_DISKS
	ba_emit "BA-BOOT: $BA_BOOT $(uname -r)"
	_ba_load_modules
	_ba_wait_disks
}

ba_boot_failed() { grep -q '^FAIL ' "$BA_CHECKS"; }

ba_scenario_begin() { wc -l <"$BA_CHECKS" >"$BA_OUT/.boot-checks"; }

_ba_results_disk() {
	local s
	for s in /sys/block/vd*; do
		[ "$(cat "$s/serial" 2>/dev/null)" = ba-results ] && { echo "/dev/${s##*/}"; return 0; }
	done
	return 1
}

# The results disk is a raw tar archive: no filesystem to set up on either
# side, and the host reads it with tar.
_ba_save_results() {
	local dev
	dev=$(_ba_results_disk) || return 0
	tar -cf "$dev" -C "$BA_OUT" . 2>"/tmp/results.err" || {
		echo "writing the results disk $dev failed: $(cat /tmp/results.err)"
		return 1
	}
	sync
}

# verdict [STATUS]: STATUS is the guest part's exit status (0 if omitted).
verdict() {
	local rc="${1:-0}" reason='' nfail nboot ntotal bug
	dmesg -n 1
	nfail=$(grep -c '^FAIL ' "$BA_CHECKS")
	ntotal=$(wc -l <"$BA_CHECKS")
	nboot=$(cat "$BA_OUT/.boot-checks" 2>/dev/null || echo "$ntotal")
	if [ "$nfail" -gt 0 ]; then
		reason="$nfail check(s) failed, first: $(grep -m 1 '^FAIL ' "$BA_CHECKS" | cut -c6-)"
	elif [ "$rc" != 0 ]; then
		reason="the scenario's guest part returned status $rc"
	elif [ "$ntotal" -le "$nboot" ]; then
		reason="the scenario ran no check"
	fi
	bug=$(dmesg | grep -E -m 1 -e "$BA_KERNEL_BUG_ERE")
	if [ -n "$bug" ] && [ ! -e "$BA_OUT/.allow-kernel-warnings" ]; then
		reason="${reason:+$reason; }kernel bug report: $bug"
	fi
	dmesg >"$BA_OUT/dmesg.txt"
	if [ -n "$reason" ]; then
		echo "----- BA: kernel log (test failed) -----"
		cat "$BA_OUT/dmesg.txt"
		echo "----- BA: end of kernel log -----"
	fi
	local saved
	saved=$(_ba_save_results) || reason="${reason:+$reason; }$saved"
	if [ -z "$reason" ]; then
		ba_emit "BA-VERDICT: PASS"
	else
		ba_emit "BA-VERDICT: FAIL $(printf '%s' "$reason" | tr '\n\r' '  ' | cut -c1-500)"
	fi
	sync
	poweroff -f
	# poweroff -f does not return; never let PID 1 fall off the end.
	while :; do sleep 60; done
}
