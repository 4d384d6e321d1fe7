# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Harness self-test: the guest library's helpers behave, one failing check
# turns the verdict into FAIL naming that check, and a kernel WARN in the
# log is reported as well.  meson.build expects exactly that reason, so
# any other failure (a broken helper, no keyctl) fails the test.
BA_BTRFS_MODULE=stock
BA_TIMEOUT=120

host_prepare() {
	printf 'from the host\n' >"$BA_TO_GUEST/note.txt"
	vm_guest_env SELFTEST_WORD "it's \"quoted\" \$here"
}

# keyctl search prints the key's serial; a logon key's payload must stay
# unreadable from user space.
guest_logon_key_unreadable() {
	local id
	id=$(keyctl search @u logon btrfs:selftest) || return 2
	keyctl print "$id"
}

guest() {
	check true-passes true
	check_fails false-fails false
	check host-file-arrived grep -qx 'from the host' /ba/in/note.txt
	check env-quoting [ "$SELFTEST_WORD" = "it's \"quoted\" \$here" ]
	check cwd-isolated cd /tmp
	check cwd-unchanged [ "$(pwd)" = / ]
	expect_dmesg kernel-log-readable '^\[ *[0-9.]+\] Linux version'
	dmesg_mark
	expect_no_dmesg window-starts-at-mark 'Linux version'
	echo "ba-selftest: hello kmsg" >/dev/kmsg
	expect_dmesg window-sees-new 'ba-selftest: hello kmsg'
	check add-logon-key add_logon_key btrfs:selftest 00112233445566778899aabbccddeeff
	check key-findable keyctl search @u logon btrfs:selftest
	check_fails logon-key-unreadable guest_logon_key_unreadable
	echo "a file for the host" >"$BA_OUT/selftest.txt"
	check deliberate-failure false
	# What a kernel WARN prints: the verdict must report it too.
	echo "WARNING: CPU: 0 PID: 1 at ba-selftest (injected)" >/dev/kmsg
}

host_check() {
	# Not reached: host_check runs only after a PASS.
	ba_die "host_check ran although the guest failed"
}
