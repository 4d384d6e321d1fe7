# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# An attacker without the key recomputes every checksum as plain SHA-256.
# Mounted with auth_key=, both forgeries are refused:
#   disk 0: csum_type set to sha256 -> "takes no key";
#   disk 1: csum_type left at 32 (hmac-sha256), superblock checksum a plain
#           SHA-256 -> "superblock authentication failed".
# shellcheck source=include/auth.sh
source "$BA_VM_TOP/kernel/include/auth.sh"

# Set csum_type (offset 196 of struct btrfs_super_block) to 32 in every
# superblock copy and rewrite its checksum as plain SHA-256.
forge_type_32() {
	python3 - "$1" <<'PY'
import hashlib, struct, sys
with open(sys.argv[1], "r+b") as f:
    size = f.seek(0, 2)
    for off in (64 << 10, 64 << 20, 256 << 30):
        if off + 4096 > size:
            break
        f.seek(off)
        sb = bytearray(f.read(4096))
        if sb[64:72] != b"_BHRfS_M":
            continue
        struct.pack_into("<H", sb, 196, 32)
        sb[0:32] = hashlib.sha256(bytes(sb[32:4096])).digest()
        f.seek(off)
        f.write(sb)
PY
}

host_prepare() {
	mkdir -p root
	echo 'attacker data' >root/file
	vm_mkfs sha256.img 128M --csum sha256 --rootdir root
	cp sha256.img type32.img
	forge_type_32 type32.img
	"$BA_BTRFS" inspect-internal dump-super type32.img | grep -q '^csum_type.*32' ||
		ba_die "the forged image does not claim checksum type 32"
	auth_key_new key
	vm_disk sha256.img
	vm_disk type32.img
	auth_key_to_guest KEY key
}

guest() {
	check add-key add_logon_key btrfs:test "$KEY"
	dmesg_mark
	check_fails sha256-type-refused mount -t btrfs -o auth_key=btrfs:test "$(ba_disk 0)" /mnt
	expect_dmesg sha256-type-says-why \
		'auth_key=btrfs:test given, but checksum algorithm sha256 takes no key'
	dmesg_mark
	check_fails type-32-refused mount -t btrfs -o auth_key=btrfs:test "$(ba_disk 1)" /mnt
	expect_dmesg type-32-says-why \
		'superblock authentication failed: the key btrfs:test is probably wrong, or the superblock was modified'
	check nothing-mounted sh -c '! grep -q " /mnt " /proc/mounts'
}
