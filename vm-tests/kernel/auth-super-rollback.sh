# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Rollback of an authenticated filesystem through its superblock.  Every
# superblock ever written with the key stays authentic, and the mount reads
# only the primary one (64 KiB); every commit also writes the copy at
# 64 MiB.  On two disks, the guest writes /mnt/state "v1", keeps the
# superblocks (4 KiB each) as an attacker would, writes "v2", and then:
#   disk 0: the old primary alone is written back.  The mount is refused
#           with ESTALE and one btrfs error giving both generations,
#           nothing is mounted or written; btrfs rescue super-recover with
#           the key then restores the newest copy and "v2" mounts.
#           (Without the check, the mount shows "v1".)
#   disk 1: the old primary and the old copy are written back.  That is
#           not detected: the filesystem mounts and shows "v1", the limit
#           the documentation states.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	auth_key_new key
	# Over 64 MiB, so that the device has the copy at 64 MiB.
	auth_mkfs disk0.img 256M key
	auth_mkfs disk1.img 256M key
	vm_disk disk0.img
	vm_disk disk1.img
	auth_key_to_guest KEY key
}

guest_mount() { mount -t btrfs -o "${2:+$2,}auth_key=btrfs:test" "$1" /mnt; }

# Superblock N of a device: the primary (0) at 64 KiB, copy 1 at 64 MiB,
# as 4 KiB block numbers.
guest_sb_block() { if [ "$1" = 0 ]; then echo 16; else echo 16384; fi; }
# guest_sb_save DEV N FILE / guest_sb_put DEV N FILE / guest_sb_same DEV N FILE
guest_sb_save() { dd if="$1" of="$3" bs=4096 skip="$(guest_sb_block "$2")" count=1 2>/dev/null; }
guest_sb_put() { dd if="$3" of="$1" bs=4096 seek="$(guest_sb_block "$2")" count=1 conv=notrunc,fsync 2>/dev/null; }
guest_sb_same() { guest_sb_save "$1" "$2" /tmp/sb.now && cmp /tmp/sb.now "$3"; }
# The generation of a saved superblock (a __le64 at offset 72).
guest_sb_gen() { od -An -tu8 -j 72 -N 8 "$1" | tr -d ' '; }
# guest_sb_same_gen DEV FILE: the primary has the generation of FILE.
guest_sb_same_gen() {
	guest_sb_save "$1" 0 /tmp/sb.now && [ "$(guest_sb_gen /tmp/sb.now)" = "$(guest_sb_gen "$2")" ]
}

# guest_two_generations DEV NAME: "v1" with its superblocks kept in
# /tmp/NAME.sb[01].v1, then "v2" (one commit, at umount) with
# /tmp/NAME.sb[01].v2.
guest_two_generations() {
	guest_mount "$1" && echo v1 >/mnt/state && umount /mnt &&
		guest_sb_save "$1" 0 "/tmp/$2.sb0.v1" && guest_sb_save "$1" 1 "/tmp/$2.sb1.v1" &&
		guest_mount "$1" && echo v2 >/mnt/state && umount /mnt &&
		guest_sb_save "$1" 0 "/tmp/$2.sb0.v2" && guest_sb_save "$1" 1 "/tmp/$2.sb1.v2" &&
		[ "$(guest_sb_gen "/tmp/$2.sb0.v2")" -gt "$(guest_sb_gen "/tmp/$2.sb0.v1")" ] &&
		[ "$(guest_sb_gen "/tmp/$2.sb1.v2")" = "$(guest_sb_gen "/tmp/$2.sb0.v2")" ]
}

guest_rollback_all() { guest_sb_put "$1" 0 "/tmp/$2.sb0.v1" && guest_sb_put "$1" 1 "/tmp/$2.sb1.v1"; }

guest_state_is() { mount | grep -q ' /mnt ' && grep -qx "$1" /mnt/state; }

# btrfs rescue super-recover exits 2 when it rewrote bad superblocks.
guest_super_recover() {
	printf '%s' "$KEY" | xxd -r -p >/tmp/key || return 1
	btrfs rescue super-recover -y --auth-key-file /tmp/key "$1"
	[ $? = 2 ]
}

guest() {
	local d0 d1 old new
	d0=$(ba_disk 0)
	d1=$(ba_disk 1)
	check add-key add_logon_key btrfs:test "$KEY"
	check disk0-two-generations guest_two_generations "$d0" d0 || return 0
	check disk1-two-generations guest_two_generations "$d1" d1 || return 0
	old=$(guest_sb_gen /tmp/d0.sb0.v1)
	new=$(guest_sb_gen /tmp/d0.sb1.v2)

	# disk 0: the primary superblock alone rolled back
	check primary-rolled-back guest_sb_put "$d0" 0 /tmp/d0.sb0.v1
	dmesg_mark
	check primary-rollback-refused-estale guest_refused_with auth_key=btrfs:test "$d0" 'Stale file handle'
	check primary-rollback-one-btrfs-line guest_one_btrfs_error \
		"primary superblock rolled back: generation $old, but its authentic copy 1 has $new"
	check primary-rollback-nothing-mounted guest_nothing_mounted
	check primary-rollback-nothing-written guest_sb_same "$d0" 0 /tmp/d0.sb0.v1
	check copy-untouched guest_sb_same "$d0" 1 /tmp/d0.sb1.v2
	check super-recover guest_super_recover "$d0"
	check primary-restored guest_sb_same_gen "$d0" /tmp/d0.sb1.v2
	check recovered-mounts guest_mount "$d0" ro
	check recovered-is-v2 guest_state_is v2
	check recovered-umount umount /mnt

	# disk 1: every copy rolled back, which the mount cannot tell
	check every-copy-rolled-back guest_rollback_all "$d1" d1
	check every-copy-rollback-mounts guest_mount "$d1" ro
	check every-copy-rollback-is-v1 guest_state_is v1
	check every-copy-umount umount /mnt
}
