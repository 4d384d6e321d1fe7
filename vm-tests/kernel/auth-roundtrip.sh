# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Kernel and btrfs-progs agree on every MAC, both ways: a filesystem made by
# the patched mkfs.btrfs --rootdir mounts with its key loaded by keyctl;
# files read back identical; files written in the VM survive umount and
# remount, a remount with other options keeps the key, scrub is clean; then
# the host's patched btrfs check --check-data-csum with the key finds the
# image clean and btrfs restore with the key returns the files.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	mkdir -p root/dir
	head -c 3M /dev/urandom >root/dir/random.bin
	printf 'inline\n' >root/small.txt
	(cd root && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$BA_TO_GUEST/manifest.sha256"
	auth_key_new key
	auth_mkfs disk.img 256M key --rootdir root
	vm_disk disk.img
	auth_key_to_guest KEY key
}

guest_readback() { cd /mnt && sha256sum -c "$@"; }
guest_shows_key() { grep -E " /mnt btrfs .*auth_key=btrfs:test(,|$)" /proc/mounts; }
guest_write() {
	dd if=/dev/urandom of=/mnt/written.bin bs=64k count=64 &&
		cp -r /mnt/dir /mnt/dir-copy && sync &&
		(cd /mnt && sha256sum written.bin) >"$BA_OUT/written.sha256"
}

guest() {
	local dev
	dev=$(ba_disk 0)
	check add-key add_logon_key btrfs:test "$KEY"
	check mount mount -t btrfs -o auth_key=btrfs:test "$dev" /mnt || return 0
	check checksum-is-hmac guest_csum_is_hmac
	check auth-key-in-proc-mounts guest_shows_key
	check files-identical guest_readback /ba/in/manifest.sha256
	check write-in-vm guest_write
	check remount-other-options mount -o remount,compress=zstd,commit=5 /mnt
	check remount-keeps-key guest_shows_key
	check remount-same-key mount -o remount,auth_key=btrfs:test /mnt
	check umount umount /mnt
	check mount-again mount -t btrfs -o auth_key=btrfs:test "$dev" /mnt
	check files-identical-after-remount guest_readback /ba/in/manifest.sha256
	check written-file-survives guest_readback "$BA_OUT/written.sha256"
	check scrub-clean btrfs scrub start -B /mnt
	check final-umount umount /mnt
	expect_no_dmesg no-checksum-errors 'csum failed|checksum verify failed|bad tree block|BTRFS (error|critical)'
}

host_check() {
	auth_check disk.img key
	mkdir restored
	"$BA_BTRFS" restore --auth-key-file key disk.img restored >restore.log 2>&1 ||
		ba_die "btrfs restore with the key failed: $(tail -n 5 restore.log)"
	(cd restored && sha256sum -c --quiet "$BA_TO_GUEST/manifest.sha256" "$BA_FROM_GUEST/written.sha256")
}
