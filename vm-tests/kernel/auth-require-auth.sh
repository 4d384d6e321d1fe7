# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# The module parameter btrfs.require_auth: off by default, and then a
# filesystem without a keyed checksum mounts; on, such a mount is refused
# with EPERM and one btrfs error naming the checksum and the parameter,
# nothing mounted and nothing written (the host compares the image), while
# an authenticated filesystem still mounts with auth_key=.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	mkdir -p root
	echo 'not authenticated' >root/file
	vm_mkfs plain.img 128M --csum sha256 --rootdir root
	cp plain.img refused.img
	sha256sum refused.img >refused.sha256
	auth_key_new key
	auth_mkfs auth.img 128M key
	vm_disk plain.img
	vm_disk refused.img
	vm_disk auth.img
	auth_key_to_guest KEY key
}

guest_param() { cat /sys/module/btrfs/parameters/require_auth; }
guest_set_param() { echo "$1" >/sys/module/btrfs/parameters/require_auth && [ "$(guest_param)" = "$2" ]; }

guest() {
	check default-off [ "$(guest_param)" = N ]
	check off-unkeyed-mounts mount -t btrfs "$(ba_disk 0)" /mnt &&
		check off-unkeyed-readable grep -qx 'not authenticated' /mnt/file &&
		check off-umount umount /mnt

	check set-on guest_set_param 1 Y
	dmesg_mark
	# busybox mount's words for EPERM (strerror's for EACCES would be
	# "Permission denied")
	check on-unkeyed-refused-eperm guest_refused_with '' "$(ba_disk 1)" 'permission denied (are you root?)'
	check on-one-btrfs-line-says-why guest_one_btrfs_error \
		'mount refused: checksum algorithm sha256 is not authenticated and btrfs.require_auth is set'
	check on-nothing-mounted guest_nothing_mounted
	check on-ro-refused-too guest_refused_with ro "$(ba_disk 1)" 'permission denied (are you root?)'

	check add-key add_logon_key btrfs:test "$KEY"
	check on-keyed-mounts mount -t btrfs -o auth_key=btrfs:test "$(ba_disk 2)" /mnt &&
		check on-keyed-writable sh -c 'echo ok >/mnt/written && sync' &&
		check on-keyed-umount umount /mnt

	check set-off guest_set_param 0 N
	check off-again-unkeyed-mounts mount -t btrfs -o ro "$(ba_disk 0)" /mnt &&
		check off-again-umount umount /mnt
}

host_check() {
	sha256sum -c --quiet refused.sha256 ||
		ba_die "refused.img changed although every mount of it was refused"
	auth_check auth.img key
}
