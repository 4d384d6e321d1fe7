# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Under Secure Boot, Debian's kernel locks itself down and loads only
# signed modules (Debian enforces module signatures under Secure Boot):
# the patched btrfs.ko unsigned, or signed with a key the firmware does
# not trust, is refused with a clear message; signed with
# the db key (the kernel's platform keyring: UEFI db and MOK list) it
# loads, as Debian's own modules do.
BA_FIRMWARE=uefi
BA_UEFI_SIGN_MODULE=0
BA_LOAD_MODULE=0
BA_TIMEOUT=240

host_prepare() {
	vm_guest_env BA_CONSOLE_LEVEL 7
	ba_uefi_sign_module "$BA_BTRFS_KO" "$BA_TO_GUEST/btrfs-db.ko" "$BA_WORK/keys/db.key" "$BA_WORK/keys/db.crt"
	ba_uefi_sign_module "$BA_BTRFS_KO" "$BA_TO_GUEST/btrfs-other.ko" "$BA_WORK/keys/attacker.key" \
		"$BA_WORK/keys/attacker.crt"
}

guest_lockdown() {
	mount -t securityfs securityfs /sys/kernel/security 2>/dev/null || true
	cat /sys/kernel/security/lockdown
	grep -q '\[integrity\]' /sys/kernel/security/lockdown
}

guest_not_loaded() { ! grep -q '^btrfs ' /proc/modules; }

# busybox insmod exits with the errno, here EKEYREJECTED (129), which
# check_fails would take for a signal: judge the refusal here.
guest_insmod_refused() {
	local rc=0
	insmod "$1" || rc=$?
	echo "insmod exited $rc"
	[ "$rc" != 0 ]
}

guest() {
	local ko
	ko=/lib/modules/$(uname -r)/kernel/fs/btrfs/btrfs.ko
	check kernel-locked-down guest_lockdown
	dmesg_mark
	check unsigned-module-refused guest_insmod_refused "$ko"
	expect_dmesg unsigned-says-why 'Loading of unsigned module is rejected'
	check unsigned-not-loaded guest_not_loaded
	dmesg_mark
	check foreign-key-refused guest_insmod_refused /ba/in/btrfs-other.ko
	expect_dmesg foreign-says-why 'Loading of module with unavailable key is rejected'
	check foreign-not-loaded guest_not_loaded
	dmesg_mark
	check db-signed-module-loads insmod /ba/in/btrfs-db.ko
	check db-signed-loaded grep -q '^btrfs ' /proc/modules
	expect_no_dmesg no-verification-failure 'module verification failed'
}
