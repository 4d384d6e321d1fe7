# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# A key description that does not start with "btrfs:" is refused before
# anything is read, even when such a logon key exists, so keys meant for
# other kernel users cannot be borrowed.  "btrfs:" alone is refused too.
BA_TIMEOUT=180

host_prepare() {
	mkdir -p root
	echo data >root/file
	vm_mkfs disk.img 128M --csum sha256 --rootdir root
	vm_disk disk.img
}

guest_prefix_refused() {
	local dev=$1 desc=$2
	dmesg_mark
	check_fails "refused-$desc" mount -t btrfs -o "auth_key=$desc" "$dev" /mnt
	expect_dmesg "says-why-$desc" \
		"auth_key=$desc refused: the key description must be btrfs:<name>"
}

guest() {
	local dev
	dev=$(ba_disk 0)
	check add-foreign-key add_logon_key fscrypt:0011223344556677 \
		000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
	guest_prefix_refused "$dev" fscrypt:0011223344556677
	guest_prefix_refused "$dev" ecryptfs
	guest_prefix_refused "$dev" btrfs:
	guest_prefix_refused "$dev" BTRFS:root
	check nothing-mounted sh -c '! grep -q " /mnt " /proc/mounts'
}
