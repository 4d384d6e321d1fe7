# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# One metadata byte flipped offline (inside a file name in the filesystem
# tree's leaf; metadata kept single so no good copy remains), with the right
# key loaded: the mount or the access fails with a checksum error, and the
# altered name is never returned.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	mkdir -p root
	echo data >root/BA-META-FLIP-TARGET-name
	auth_key_new key
	auth_mkfs disk.img 128M key -m single --rootdir root
	# "BA-META" becomes "BA-LETA": an altered name the guest must never see.
	auth_flip disk.img BA-META-FLIP-TARGET 3 >flipped-at
	vm_disk disk.img
	auth_key_to_guest KEY key
}

# Mounting may fail (the leaf holds the root directory's inode), or the
# access to the leaf does; either way with an error, never altered content.
guest_never_altered() {
	local listing
	if ! mount -t btrfs -o auth_key=btrfs:test "$(ba_disk 0)" /mnt; then
		echo "mount refused"
		return 0
	fi
	if listing=$(ls -a /mnt 2>&1); then
		echo "$listing"
		echo "$listing" | grep -q 'BA-LETA' && { echo "altered name returned"; return 1; }
		cat /mnt/BA-META-FLIP-TARGET-name && { echo "tampered leaf read back"; return 1; }
	fi
	echo "$listing"
	umount /mnt
	return 0
}

guest() {
	check add-key add_logon_key btrfs:test "$KEY"
	dmesg_mark
	check refused-never-altered guest_never_altered
	expect_dmesg checksum-error-logged 'checksum verify failed on logical [0-9]+ mirror 1 wanted 0x[0-9a-f]{64} found 0x level 0'
}
