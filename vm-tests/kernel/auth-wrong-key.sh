# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Mounting with another key is refused at the superblock: one btrfs error
# says the key is probably wrong, and the error is EKEYREJECTED, which no
# other refusal returns (a negative key gives ENOKEY: auth-key-unusable).
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	auth_key_new key
	auth_key_new wrong
	auth_mkfs disk.img 128M key
	vm_disk disk.img
	auth_key_to_guest WRONG wrong
}

guest_mount_says() {
	local out
	out=$(mount -t btrfs -o auth_key=btrfs:other "$(ba_disk 0)" /mnt 2>&1) && return 1
	echo "$out"
	echo "$out" | grep -q 'Key was rejected by service'
}

guest() {
	check add-wrong-key add_logon_key btrfs:other "$WRONG"
	dmesg_mark
	check refused-with-ekeyrejected guest_mount_says
	check says-key-is-wrong guest_one_btrfs_error \
		'superblock authentication failed: the key btrfs:other is probably wrong, or the superblock was modified'
	check nothing-mounted sh -c '! grep -q " /mnt " /proc/mounts'
}
