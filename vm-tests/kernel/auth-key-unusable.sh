# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# A key that is not in the keyring, revoked, or expired: each refused with
# a message naming the key.  Keyring searches skip expired keys, so an
# expired key gives ENOKEY like a missing one; a revoked key EKEYREVOKED.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	auth_key_new key
	auth_mkfs disk.img 128M key
	vm_disk disk.img
	auth_key_to_guest KEY key
}

# guest_mount_fails_with DESC TEXT: the mount fails and mount(8) shows
# strerror TEXT.
guest_mount_fails_with() {
	local out
	out=$(mount -t btrfs -o "auth_key=$1" "$(ba_disk 0)" /mnt 2>&1) && return 1
	echo "$out"
	echo "$out" | grep -q "$2"
}

guest_revoke() {
	local id
	id=$(add_logon_key btrfs:revoked "$KEY") && keyctl revoke "$id"
}

guest_expire() {
	local id
	id=$(add_logon_key btrfs:expiring "$KEY") && keyctl timeout "$id" 1 && sleep 2
}

guest() {
	dmesg_mark
	check absent-enokey guest_mount_fails_with btrfs:absent 'Required key not available'
	expect_dmesg absent-named 'authentication key btrfs:absent not found or expired: add it as a logon key'

	check add-then-revoke guest_revoke
	dmesg_mark
	check revoked-ekeyrevoked guest_mount_fails_with btrfs:revoked 'Key has been revoked'
	expect_dmesg revoked-named 'authentication key btrfs:revoked has been revoked'

	check add-then-expire guest_expire
	dmesg_mark
	check expired-enokey guest_mount_fails_with btrfs:expiring 'Required key not available'
	expect_dmesg expired-named 'authentication key btrfs:expiring not found or expired'

	check add-good-key add_logon_key btrfs:good "$KEY"
	check good-key-still-mounts mount -t btrfs -o auth_key=btrfs:good "$(ba_disk 0)" /mnt
	check umount umount /mnt
}
