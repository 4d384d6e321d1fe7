# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# On an authenticated filesystem everything that would store or read data
# without a MAC is refused with a message naming it: the mount options
# nodatasum, nodatacow, rescue=ignoredatacsums, rescue=ignorebadroots and
# the v1 space cache (at mount and at remount), chattr +C, and swapfiles.
# The key in use cannot change: a remount or a second mount naming another
# key is refused, and the filesystem stays mounted with its key.  Only the
# name is compared: after the payload of the key in use is updated, a
# remount naming it is accepted, and the filesystem goes on with the payload
# it read at mount (what the guest writes afterwards verifies on the host
# with the original key).
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	auth_key_new key
	auth_key_new other
	auth_mkfs disk.img 256M key
	vm_disk disk.img
	auth_key_to_guest KEY key
	auth_key_to_guest OTHER other
	vm_guest_binary "$(command -v chattr)"
}

# guest_option_refused OPTIONS NAME CHECK: mounting with OPTIONS fails, and
# the kernel names NAME.
guest_option_refused() {
	dmesg_mark
	check_fails "mount-$3-refused" mount -t btrfs -o "auth_key=btrfs:test,$1" "$(ba_disk 0)" /mnt
	expect_dmesg "mount-$3-says-why" "$2 refused: it would leave data of an authenticated filesystem unverified"
}

guest_nocow_refused() {
	local out
	: >/mnt/nocow
	out=$(chattr +C /mnt/nocow 2>&1) && { echo "chattr +C succeeded"; return 1; }
	echo "$out"
	echo "$out" | grep -q 'Operation not permitted'
}

guest_swap_refused() {
	dd if=/dev/zero of=/mnt/swapfile bs=1M count=16 2>/dev/null && chmod 600 /mnt/swapfile &&
		mkswap /mnt/swapfile >/dev/null || return 1
	! swapon /mnt/swapfile
}

guest_key_unchanged() { grep -E " /mnt btrfs .*auth_key=btrfs:test(,|$)" /proc/mounts; }

# The payload of btrfs:test becomes the other key's.
guest_update_payload() {
	local id
	id=$(keyctl search @u logon btrfs:test) &&
		printf '%s' "$OTHER" | xxd -r -p | keyctl pupdate "$id"
}

guest() {
	local dev
	dev=$(ba_disk 0)
	check add-key add_logon_key btrfs:test "$KEY"
	check add-other-key add_logon_key btrfs:other "$OTHER"
	guest_option_refused nodatasum nodatasum nodatasum
	guest_option_refused nodatacow nodatacow nodatacow
	guest_option_refused ro,rescue=ignoredatacsums rescue=ignoredatacsums ignoredatacsums
	guest_option_refused ro,rescue=ignorebadroots rescue=ignorebadroots ignorebadroots
	guest_option_refused ro,rescue=all rescue=ignoredatacsums rescue-all
	dmesg_mark
	check_fails space-cache-v1-refused mount -t btrfs -o auth_key=btrfs:test,clear_cache,space_cache=v1 "$dev" /mnt
	expect_dmesg space-cache-v1-says-why 'an authenticated filesystem needs the free space tree'

	check mount mount -t btrfs -o auth_key=btrfs:test "$dev" /mnt || return 0
	dmesg_mark
	check_fails remount-nodatacow-refused mount -o remount,nodatacow /mnt
	expect_dmesg remount-nodatacow-says-why 'nodatacow refused'
	check_fails remount-other-key-refused mount -o remount,auth_key=btrfs:other /mnt
	expect_dmesg remount-other-key-says-why \
		'auth_key=btrfs:other refused: the filesystem is mounted with auth_key=btrfs:test until it is unmounted'
	mkdir -p /mnt2
	check_fails second-mount-other-key-refused mount -t btrfs -o auth_key=btrfs:other "$dev" /mnt2
	check key-unchanged guest_key_unchanged
	dmesg_mark
	check chattr-nocow-refused guest_nocow_refused
	expect_dmesg chattr-says-why 'NOCOW refused: files without data checksums cannot be authenticated'
	dmesg_mark
	check swapfile-refused guest_swap_refused
	expect_dmesg swapfile-says-why 'swapfile refused: swap is written without checksums'
	check update-key-payload guest_update_payload
	check remount-same-name-after-update mount -o remount,auth_key=btrfs:test /mnt
	check key-name-unchanged-after-update guest_key_unchanged
	check still-writable sh -c 'echo ok >/mnt/after && sync'
	check umount umount /mnt
}

host_check() { auth_check disk.img key; }
