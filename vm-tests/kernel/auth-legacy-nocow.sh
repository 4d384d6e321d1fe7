# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# NOCOW inodes left from before a filesystem's checksum was converted to
# hmac-sha256.  In one boot: a crc32c filesystem gets a NOCOW directory
# and an empty NOCOW file (chattr +C, allowed there); btrfstune converts it
# to hmac-sha256 (it accepts NOCOW inodes without data); mounted with its
# key:
#   - chattr +A on the NOCOW directory works and keeps its NOCOW (chattr
#     passes the flags it does not change, NOCOW among them, and only
#     setting NOCOW is refused), and chattr -C clears it;
#   - setting NOCOW on a directory or an empty file is refused with EPERM
#     and one btrfs warning;
#   - a file created in the NOCOW directory does not inherit NOCOW;
#   - the empty NOCOW file cannot be opened (EIO): it has no checksums.
# The host's btrfs check --check-data-csum with the key is clean.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"
BA_TIMEOUT=300

host_prepare() {
	local progs
	progs=$(dirname "$BA_MKFS")
	[ -x "$progs/btrfstune" ] || ba_die "no patched btrfstune in $progs"
	auth_key_new key
	vm_mkfs disk.img 256M --csum crc32c
	vm_disk disk.img
	auth_key_to_guest KEY key
	vm_guest_binary "$progs/btrfstune:/usr/sbin/btrfstune"
	vm_guest_binary "$(command -v chattr)"
	vm_guest_binary "$(command -v lsattr)"
}

# guest_attr_has PATH LETTER: lsattr shows attribute LETTER on PATH.
guest_attr_has() { lsattr -d "$1" | cut -d ' ' -f 1 | grep -q "$2"; }
guest_attr_lacks() { ! guest_attr_has "$@"; }

guest_legacy_inodes() {
	mkdir /mnt/nocow-dir && chattr +C /mnt/nocow-dir && guest_attr_has /mnt/nocow-dir C &&
		: >/mnt/empty-nocow && chattr +C /mnt/empty-nocow && guest_attr_has /mnt/empty-nocow C &&
		echo data >/mnt/normal && sync
}

guest_convert() {
	printf '%s' "$KEY" | xxd -r -p >/tmp/key &&
		btrfstune --csum hmac-sha256 --new-auth-key-file /tmp/key "$(ba_disk 0)"
}

# guest_set_nocow_refused PATH: chattr +C PATH fails with EPERM.
guest_set_nocow_refused() {
	local out
	out=$(chattr +C "$1" 2>&1) && { echo "chattr +C $1 succeeded"; return 1; }
	echo "$out"
	echo "$out" | grep -q 'Operation not permitted'
}

guest() {
	check mount-crc32c mount -t btrfs "$(ba_disk 0)" /mnt || return 0
	check make-nocow-inodes guest_legacy_inodes
	check umount-crc32c umount /mnt
	check convert-to-hmac guest_convert || return 0

	check add-key add_logon_key btrfs:test "$KEY"
	check mount mount -t btrfs -o auth_key=btrfs:test "$(ba_disk 0)" /mnt || return 0
	check checksum-is-hmac guest_csum_is_hmac
	check legacy-dir-is-nocow guest_attr_has /mnt/nocow-dir C

	dmesg_mark
	check legacy-dir-other-flag-settable chattr +A /mnt/nocow-dir
	check legacy-dir-has-both guest_attr_has /mnt/nocow-dir 'A.*C'
	expect_no_dmesg legacy-dir-no-warning 'NOCOW refused'
	check new-file-in-legacy-dir sh -c 'head -c 65536 /dev/urandom >/mnt/nocow-dir/new && sync'
	check new-file-not-nocow guest_attr_lacks /mnt/nocow-dir/new C

	check fresh-dir mkdir /mnt/fresh-dir
	dmesg_mark
	check set-nocow-dir-refused guest_set_nocow_refused /mnt/fresh-dir
	check set-nocow-dir-one-line guest_one_btrfs_error \
		'NOCOW refused: files without data checksums cannot be authenticated'
	check fresh-file sh -c ': >/mnt/fresh-file'
	dmesg_mark
	check set-nocow-file-refused guest_set_nocow_refused /mnt/fresh-file
	check set-nocow-file-one-line guest_one_btrfs_error 'NOCOW refused'

	check legacy-dir-nocow-clearable chattr -C /mnt/nocow-dir
	check legacy-dir-nocow-cleared guest_attr_lacks /mnt/nocow-dir C

	dmesg_mark
	check legacy-empty-nocow-not-opened sh -c '! cat /mnt/empty-nocow'
	expect_dmesg legacy-empty-nocow-says-why 'has no data checksums and cannot be authenticated'
	check normal-file-intact grep -qx data /mnt/normal
	check umount umount /mnt
}

host_check() { auth_check disk.img key; }
