# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# btrfs send refuses the data of a file without data checksums (NODATASUM)
# on an authenticated filesystem, with EIO and one btrfs error naming the
# inode: its data would be read without verification and streamed as if
# authentic.  Sending a subvolume without such a file works, and so does a
# send without file data (--no-data).
#
# How the image is made: the kernel never creates a NODATASUM file on an
# authenticated filesystem (nodatasum, nodatacow and chattr +C are refused,
# NOCOW is not inherited) and btrfstune refuses to convert a filesystem
# that has one with data.  One can still remain from a conversion by other
# tools or a kernel without the series; here the host makes the
# filesystem with mkfs.btrfs --rootdir and then sets NODATASUM (bit 0 of
# the inode item's flags, byte 64 of the item) on the file's inode with
# btrfs-corrupt-block given the key, which writes the leaf back with its
# MAC, as any holder of the key could.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	local progs ino
	progs=$(dirname "$BA_MKFS")
	[ -x "$progs/btrfs-corrupt-block" ] || ba_die "no patched btrfs-corrupt-block in $progs"
	mkdir -p root
	# Not inline: 64 KiB of data in a data extent, read through the page cache.
	head -c 64K /dev/urandom >root/legacy.bin
	auth_key_new key
	auth_mkfs disk.img 256M key --rootdir root
	# mkfs --rootdir numbers inodes as the host's files: find legacy.bin's.
	"$BA_BTRFS" inspect-internal dump-tree --auth-key-file key -t 5 disk.img >tree.txt 2>&1 ||
		ba_die "dump-tree failed: $(tail -n 3 tree.txt)"
	ino=$(awk '/ INODE_REF / { ino = $4; sub(/^\(/, "", ino); getline
		if ($0 ~ /name: legacy\.bin$/) { print ino; exit } }' tree.txt)
	[ -n "$ino" ] || ba_die "no inode of legacy.bin in the dump of tree 5"
	"$progs/btrfs-corrupt-block" --auth-key-file key -r 5 -I "$ino,1,0" --offset 64 -b 1 --value 1 disk.img \
		>corrupt.log 2>&1 || ba_die "btrfs-corrupt-block failed: $(tail -n 3 corrupt.log)"
	"$BA_BTRFS" inspect-internal dump-tree --auth-key-file key -t 5 disk.img >tree.txt 2>&1
	grep -A3 "key ($ino INODE_ITEM 0)" tree.txt | grep -q 'flags 0x1(NODATASUM)' ||
		ba_die "inode $ino did not get NODATASUM: $(grep -A3 "key ($ino INODE_ITEM 0)" tree.txt)"
	vm_guest_env LEGACY_INO "$ino"
	vm_disk disk.img
	auth_key_to_guest KEY key
}

guest_send_refused() {
	local out
	out=$(btrfs send -f /tmp/stream /mnt/root-snap 2>&1) && { echo "send succeeded"; return 1; }
	echo "$out"
	echo "$out" | grep -q 'Input/output error'
}

guest() {
	check add-key add_logon_key btrfs:test "$KEY"
	check mount mount -t btrfs -o auth_key=btrfs:test "$(ba_disk 0)" /mnt || return 0
	check open-refused sh -c '! cat /mnt/legacy.bin >/dev/null'
	check subvolume btrfs subvolume create /mnt/sub
	check write-sub sh -c 'head -c 65536 /dev/urandom >/mnt/sub/data && sync'
	check snapshot-sub btrfs subvolume snapshot -r /mnt/sub /mnt/sub-snap
	check send-without-nodatasum-works btrfs send -f /tmp/sub-stream /mnt/sub-snap
	check snapshot-root btrfs subvolume snapshot -r /mnt /mnt/root-snap
	dmesg_mark
	check send-refused-eio guest_send_refused
	check send-one-btrfs-line guest_one_btrfs_error \
		"send refused: inode $LEGACY_INO in root [0-9]+ has no data checksums and cannot be authenticated"
	check send-no-data-works btrfs send --no-data -f /tmp/meta-stream /mnt/root-snap
	check umount umount /mnt
}
