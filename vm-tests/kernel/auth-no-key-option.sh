# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# An authenticated filesystem mounted without auth_key= is refused, even
# read-only and even with its key in the keyring, and the message names
# the option.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	auth_key_new key
	auth_mkfs disk.img 128M key
	vm_disk disk.img
	auth_key_to_guest KEY key
}

guest() {
	local dev
	dev=$(ba_disk 0)
	check add-key add_logon_key btrfs:test "$KEY"
	dmesg_mark
	check_fails mount-refused mount -t btrfs "$dev" /mnt
	check_fails mount-ro-refused mount -t btrfs -o ro "$dev" /mnt
	expect_dmesg names-the-option \
		'checksum algorithm hmac\(sha256\) needs a key: mount with auth_key=btrfs:<name> naming its logon key'
	check nothing-mounted sh -c '! grep -q " /mnt " /proc/mounts'
}
