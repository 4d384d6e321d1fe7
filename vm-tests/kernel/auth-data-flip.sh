# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# One data byte flipped offline, with the right key loaded: reading that
# file gives EIO (never the altered data), the kernel log shows the stored
# MAC but not the one it computed (no MAC oracle), other files still read,
# and scrub reports the error.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	mkdir -p root
	head -c 65536 < <(yes 'BA-DATA-FLIP-TARGET-0123456789') >root/target.bin
	head -c 65536 /dev/urandom >root/other.bin
	(cd root && sha256sum other.bin) >"$BA_TO_GUEST/other.sha256"
	auth_key_new key
	auth_mkfs disk.img 128M key --rootdir root
	auth_flip disk.img BA-DATA-FLIP-TARGET 5000 >flipped-at
	vm_disk disk.img
	auth_key_to_guest KEY key
}

guest_read_eio() {
	local out
	out=$(cat /mnt/target.bin 2>&1 >/dev/null) && { echo "read succeeded"; return 1; }
	echo "$out"
	echo "$out" | grep -q 'Input/output error'
}
guest_other_reads() { cd /mnt && sha256sum -c /ba/in/other.sha256; }
guest_scrub_reports() {
	local out
	out=$(btrfs scrub start -B /mnt 2>&1) && { echo "$out"; echo "scrub found nothing"; return 1; }
	echo "$out"
	echo "$out" | grep -Eq 'csum=[1-9]'
}

guest() {
	check add-key add_logon_key btrfs:test "$KEY"
	check mount mount -t btrfs -o auth_key=btrfs:test "$(ba_disk 0)" /mnt || return 0
	dmesg_mark
	check tampered-file-eio guest_read_eio
	expect_dmesg csum-failed-logged 'BTRFS warning .*csum failed root 5 ino [0-9]+ off [0-9]+ csum 0x expected csum 0x[0-9a-f]{64} mirror 1'
	expect_no_dmesg computed-mac-not-logged 'csum failed .* csum 0x[0-9a-f]+ expected'
	check other-file-reads guest_other_reads
	dmesg_mark
	check scrub-reports-error guest_scrub_reports
	expect_dmesg scrub-logs-error 'checksum error at logical [0-9]+ on dev /dev/vda'
	check umount umount /mnt
}
