# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# auth_key= on a filesystem whose checksum takes no key (crc32c, sha256) is
# refused with a message naming the checksum; without it the filesystem
# still mounts.
BA_TIMEOUT=180

host_prepare() {
	mkdir -p root
	echo data >root/file
	vm_mkfs crc32c.img 128M --csum crc32c --rootdir root
	vm_mkfs sha256.img 128M --csum sha256 --rootdir root
	vm_disk crc32c.img
	vm_disk sha256.img
}

guest_refused() {
	local dev=$1 csum=$2
	dmesg_mark
	check_fails "$csum-auth-key-refused" mount -t btrfs -o auth_key=btrfs:test "$dev" /mnt
	expect_dmesg "$csum-says-why" \
		"auth_key=btrfs:test given, but checksum algorithm $csum takes no key: mount without auth_key="
	check "$csum-mounts-without-key" mount -t btrfs "$dev" /mnt
	check "$csum-no-auth-key-shown" sh -c '! grep -q auth_key= /proc/mounts'
	check "$csum-remount-with-key-refused" sh -c \
		'! mount -o remount,auth_key=btrfs:test /mnt'
	check "$csum-umount" umount /mnt
}

guest() {
	check add-key add_logon_key btrfs:test \
		000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
	guest_refused "$(ba_disk 0)" crc32c
	guest_refused "$(ba_disk 1)" sha256
}
