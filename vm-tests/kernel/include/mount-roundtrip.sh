# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Shared by mount-crc32c.sh and mount-sha256.sh, which set CSUM first.
#
# The host makes a filesystem with checksum type $CSUM prefilled with known
# files; the guest mounts it read-write with the module under test, reads
# the files back, writes a new one, remounts, reads everything again and
# scrubs; the host then checks the image and restores the guest's file.

BA_TIMEOUT=240

host_prepare() {
	local root=$BA_WORK/rootdir
	mkdir -p "$root/dir/sub" "$root/empty-dir"
	printf 'hello from the host\n' >"$root/hello.txt"
	: >"$root/empty-file"
	printf 'inline\n' >"$root/dir/sub/small.txt"
	head -c 1M /dev/urandom >"$root/random-1m.bin"
	# Larger than one extent's worth of checksums in a leaf would hold
	# inline, so the checksum tree gets real items.
	head -c 6M /dev/urandom >"$root/dir/random-6m.bin"
	head -c 2M /dev/zero >"$root/zeros-2m.bin"
	ln -s hello.txt "$root/link-to-hello"
	(cd "$root" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$BA_TO_GUEST/manifest.sha256"

	vm_mkfs disk.img 256M --csum "$CSUM" --rootdir "$root"
	"$BA_BTRFS" inspect-internal dump-super disk.img >dump-super.txt
	grep -Eq "^csum_type[[:space:]]+[0-9]+ \\($CSUM\\)" dump-super.txt ||
		ba_die "mkfs did not make a $CSUM filesystem: $(grep csum_type dump-super.txt)"
	vm_disk disk.img
	vm_guest_env CSUM "$CSUM"
}

guest_readback() { cd /mnt && sha256sum -c "$@"; }

guest_csum_is() { guest_csum_driver | grep -q "^$1 "; }

# The checksum driver the kernel chose, e.g. "crc32c (crc32c-intel)".
guest_csum_driver() {
	local f
	for f in /sys/fs/btrfs/*/checksum; do cat "$f"; done
}

guest() {
	local dev
	dev=$(ba_disk 0)
	check mount mount -t btrfs "$dev" /mnt || return 0
	check csum-type guest_csum_is "$CSUM"
	guest_csum_driver >"$BA_OUT/csum-driver.txt"
	check files-identical guest_readback /ba/in/manifest.sha256
	check symlink [ "$(readlink /mnt/link-to-hello)" = hello.txt ]
	check write-file dd if=/dev/urandom of=/mnt/written-in-vm.bin bs=64k count=48
	(cd /mnt && sha256sum written-in-vm.bin) >"$BA_OUT/written.sha256"
	check umount umount /mnt
	check remount mount -t btrfs "$dev" /mnt
	check files-identical-after-remount guest_readback /ba/in/manifest.sha256
	check written-file-survives guest_readback "$BA_OUT/written.sha256"
	check scrub btrfs scrub start -B /mnt
	check final-umount umount /mnt
	expect_no_dmesg no-checksum-errors 'csum failed|checksum verify failed|bad tree block|BTRFS (error|critical)'
}

host_check() {
	# --check-data-csum recomputes every data checksum the guest's kernel
	# wrote with btrfs-progs' own implementation.
	"$BA_BTRFS" check --readonly --check-data-csum disk.img >check.log 2>&1 ||
		ba_die "btrfs check of the image after the VM run failed: $(tail -n 5 check.log)"
	mkdir restored
	"$BA_BTRFS" restore disk.img restored >restore.log 2>&1 ||
		ba_die "btrfs restore failed: $(tail -n 5 restore.log)"
	(cd restored && sha256sum -c --quiet "$BA_TO_GUEST/manifest.sha256" "$BA_FROM_GUEST/written.sha256") ||
		ba_die "files restored from the image differ from what was written"
}
