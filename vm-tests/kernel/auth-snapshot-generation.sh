# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# A snapshot rollback on the running system is not a disk rollback: the
# generation that btrfs-auth's anti-rollback records (the newest authentic
# superblock copy of every device) only rises.  On an authenticated
# filesystem of two devices (RAID1 data and metadata), the guest writes
# "v1", snapshots the top level, writes "v2", and makes the snapshot the
# default subvolume (btrfs subvolume set-default, what snapper's rollback
# does); the next mount shows "v1"; then writes "v3" there, and sets the
# top level back as the default.  After each step every superblock copy
# (primary and 64 MiB) of both devices has a generation above the newest
# one before it.
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

host_prepare() {
	auth_key_new key
	# Over 64 MiB each, so that every device has its copy at 64 MiB.
	truncate -s 256M disk0.img disk1.img
	"$BA_MKFS" -q -f --csum hmac-sha256 --auth-key-file key -d raid1 -m raid1 disk0.img disk1.img \
		>mkfs.log 2>&1 || ba_die "mkfs.btrfs of two devices failed: $(tail -n 3 mkfs.log)"
	vm_disk disk0.img
	vm_disk disk1.img
	auth_key_to_guest KEY key
}

guest_mount() { mount -t btrfs -o "device=$D1,auth_key=btrfs:test" "$D0" /mnt; }

# The generation of each superblock copy (4 KiB blocks 16 and 16384) of both devices, one per line.
guest_generations() {
	local d b
	for d in "$D0" "$D1"; do
		for b in 16 16384; do
			dd if="$d" bs=4096 skip="$b" count=1 2>/dev/null | od -An -tu8 -j 72 -N 8 | tr -d ' '
		done
	done
}

# guest_all_above FLOOR: four copies, each above FLOOR; the newest becomes the next floor.
guest_all_above() {
	local g n=0
	for g in $(guest_generations); do
		[ "$g" -gt "$1" ] || { echo "a superblock copy has generation $g, not above $1"; return 1; }
		n=$((n + 1))
	done
	[ "$n" = 4 ] || { echo "found $n superblock copies, not 4"; return 1; }
	guest_generations | sort -n | tail -n 1 >/tmp/floor
}

guest_step() { # the changes of one step, then umount (the commit)
	guest_mount && "$@" && umount /mnt
}

guest_write_v1() { echo v1 >/mnt/state; }
guest_snapshot_and_set_default() {
	btrfs subvolume snapshot /mnt /mnt/snap && echo v2 >/mnt/state &&
		btrfs subvolume set-default /mnt/snap
}
guest_in_snapshot_write_v3() { grep -qx v1 /mnt/state && [ ! -e /mnt/snap ] && echo v3 >/mnt/state; }
guest_top_level_default() { btrfs subvolume set-default 5 /mnt; }
guest_top_level_shows_v2() { grep -qx v2 /mnt/state && grep -qx v3 /mnt/snap/state; }

guest() {
	D0=$(ba_disk 0)
	D1=$(ba_disk 1)
	check add-key add_logon_key btrfs:test "$KEY"
	guest_generations | sort -n | tail -n 1 >/tmp/floor
	check write-v1 guest_step guest_write_v1 || return 0
	check v1-raised-every-copy guest_all_above "$(cat /tmp/floor)"
	check snapshot-set-default guest_step guest_snapshot_and_set_default || return 0
	check set-default-raised-every-copy guest_all_above "$(cat /tmp/floor)"
	check snapshot-mounted-by-default guest_step guest_in_snapshot_write_v3
	check snapshot-write-raised-every-copy guest_all_above "$(cat /tmp/floor)"
	check top-level-default-again guest_step guest_top_level_default
	check rollback-back-raised-every-copy guest_all_above "$(cat /tmp/floor)"
	check top-level-mounted guest_step guest_top_level_shows_v2
	expect_no_dmesg no-checksum-errors 'csum failed|checksum verify failed|bad tree block|BTRFS (error|critical)'
}
