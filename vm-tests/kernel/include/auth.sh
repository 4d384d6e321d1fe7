# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Shared by the scenarios on authenticated (hmac-sha256) filesystems: they
# need the patched btrfs-progs on the host and a key known to both sides.
# The key is a throwaway test key made per run; the guest gets it as hex in
# its environment file and loads it with keyctl padd (never on argv).
BA_NEEDS_PATCHED_PROGS=1
BA_TIMEOUT=240

# auth_key_new FILE: 32 random bytes, mode 0600.
auth_key_new() {
	(umask 077 && head -c 32 /dev/urandom >"$1")
}

# auth_key_to_guest NAME FILE: the guest sees the key as $NAME (hex).
auth_key_to_guest() {
	vm_guest_env "$1" "$(od -An -tx1 -v "$2" | tr -d ' \n')"
}

# auth_mkfs IMG SIZE KEYFILE [mkfs.btrfs args]: an hmac-sha256 filesystem.
auth_mkfs() {
	local img=$1 size=$2 key=$3
	shift 3
	vm_mkfs "$img" "$size" --csum hmac-sha256 --auth-key-file "$key" "$@"
}

# auth_check IMG KEYFILE: the host's patched btrfs check verifies every MAC
# the guest's kernel wrote, data included.
auth_check() {
	"$BA_BTRFS" check --readonly --check-data-csum --auth-key-file "$2" "$1" >"$1.check.log" 2>&1 ||
		ba_die "btrfs check --check-data-csum with the key failed on $1: $(tail -n 5 "$1.check.log")"
}

# auth_flip IMG PATTERN DELTA: flip one byte DELTA bytes after the first
# occurrence of PATTERN in the image; prints the offset.
auth_flip() {
	local img=$1 pattern=$2 delta=$3 off byte
	off=$(LC_ALL=C grep -obUa -m 1 -F -e "$pattern" "$img" | head -n 1 | cut -d: -f1)
	[ -n "$off" ] || ba_die "pattern '$pattern' not found in $img"
	off=$((off + delta))
	byte=$(od -An -tu1 -j "$off" -N 1 "$img" | tr -d ' ')
	printf '%b' "\\$(printf '%03o' $((byte ^ 0x01)))" |
		dd of="$img" bs=1 seek="$off" conv=notrunc status=none
	echo "$off"
}

# Guest helper: the mounted btrfs checks with HMAC(SHA-256).
guest_csum_is_hmac() {
	local f
	for f in /sys/fs/btrfs/*/checksum; do cat "$f"; done | grep '^hmac(sha256) '
}

# Guest helper: since the last dmesg_mark, the kernel logged exactly one
# btrfs error or warning, and it matches ERE.  A refused mount also logs
# the generic "open_ctree failed", which names no cause and is not counted.
guest_one_btrfs_error() {
	local lines
	lines=$(_ba_dmesg_window | grep -E 'BTRFS (warning|error|critical|alert|emergency)' |
		grep -Ev 'open_ctree failed(: -?[0-9]+)?$')
	printf '%s\n' "$lines"
	[ "$(printf '%s\n' "$lines" | grep -c .)" = 1 ] && printf '%s\n' "$lines" | grep -qE -e "$1"
}

# Guest helper: mount -o OPTIONS DEV fails and mount(8) shows strerror TEXT
# (a mount that succeeds is undone, so that the scenario goes on).
guest_refused_with() {
	local opts=$1 dev=$2 text=$3 out
	out=$(mount -t btrfs ${opts:+-o "$opts"} "$dev" /mnt 2>&1) && { umount /mnt; return 1; }
	echo "$out"
	echo "$out" | grep -q "$text"
}

# Guest helper: nothing is mounted on /mnt.
guest_nothing_mounted() { ! grep -q ' /mnt ' /proc/mounts; }
