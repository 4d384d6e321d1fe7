#!/bin/bash
# What the tools must refuse, or do without the key (issue 14, item 1):
#   1. a key change (--auth-key-file OLD --new-auth-key-file NEW) of a
#      filesystem that is not authenticated (rewritten without the key as
#      sha256); making an unkeyed filesystem authentic is its own form;
#   2. a key on the command line (--auth-key KEY), in every tool;
#   3. checksum comparisons that are not constant time (source scan, and the
#      helper's own known answers in hash-vectest);
#   4. listing an authenticated filesystem and reading its label without the
#      key (btrfs filesystem show / label IMAGE), saying that nothing was
#      verified; setting a label asks for the key;
#   5. a checksum change that cannot finish safely: RAID5/6 metadata (torn
#      in-place rewrites); the estimate of the metadata space the new
#      checksums need beside the old ones is printed (no test here makes a
#      real shortage: mkfs always leaves a spare metadata chunk); a
#      device replace in progress is vm-tune-replace-running (only the
#      kernel makes one);
#   6. kill points that whoever sets the environment could use to stop a
#      change at a chosen step: only the test build btrfstune-failpoints
#      has them;
#   7. a key change from an older commit: the primary superblock garbled
#      and an older superblock copy that verifies put back (read from the
#      device before); btrfstune goes on from a copy only in the middle of
#      a change, which is what a power cut leaves.
source "$(dirname "$0")/lib.sh"
t_init "$@"

t_key "$T/k1.key"
t_key "$T/k2.key"
t_key "$T/k3.key"
mkdir -p "$T/root"
head -c 2M /dev/urandom >"$T/root/data"
echo "attacker's content" >"$T/evil"

mkfs() { "$BIN/mkfs.btrfs" -q -f "$@" >/dev/null 2>&1; }
tune() { "$BIN/btrfstune" "$@"; }
check() { "$BIN/btrfs" check --check-data-csum "$@"; }

# --- 1. a rekey needs an authenticated filesystem that verifies ---
t_image "$T/a.img" 300M
mkfs --csum hmac-sha256 --auth-key-file "$T/k1.key" --rootdir "$T/root" "$T/a.img" ||
	ba_die "mkfs failed"
# What anyone can do without the key: the same filesystem with unkeyed
# sha256 checksums (here made with btrfstune and the key; same result).
cp "$T/a.img" "$T/sha.img"
tune --csum sha256 --auth-key-file "$T/k1.key" "$T/sha.img" >/dev/null 2>&1 ||
	ba_die "cannot make the sha256 copy"
t_remember "$T/sha.img"
t_expect_refusal "rekey of a filesystem rewritten as sha256" 'not authenticated' \
	tune --auth-key-file "$T/k1.key" --new-auth-key-file "$T/k2.key" "$T/sha.img"
t_expect_unchanged "$T/sha.img" "the refused rekey"
t_remember "$T/sha.img"
t_expect_refusal "the rewritten copy does not check with the new key" 'not authenticated' \
	check --auth-key-file "$T/k2.key" "$T/sha.img"
t_expect_refusal "--csum hmac-sha256 --auth-key-file on an unkeyed filesystem" \
	'--new-auth-key-file' tune --csum hmac-sha256 --auth-key-file "$T/k2.key" "$T/sha.img"
t_expect_refusal "--new-auth-key-file alone on an unkeyed filesystem needs --csum" \
	'--csum hmac-sha256' tune --new-auth-key-file "$T/k2.key" "$T/sha.img"
t_expect_unchanged "$T/sha.img" "the refused conversions"
t_expect_ok "authenticating an unkeyed filesystem, the explicit form" \
	tune --csum hmac-sha256 --new-auth-key-file "$T/k3.key" "$T/sha.img"
t_expect_output "it says what it trusts" 'trusted as it is, unauthenticated'
t_expect_ok "authenticated: checks with the new key" check --auth-key-file "$T/k3.key" "$T/sha.img"
t_expect_ok "a rerun of the explicit form" \
	tune --csum hmac-sha256 --new-auth-key-file "$T/k3.key" "$T/sha.img"
t_expect_output "it says there is nothing to do" 'already uses hmac-sha256 with this key'
t_expect_refusal "the explicit form on an authenticated filesystem with another key" \
	'does not match|matches neither' tune --csum hmac-sha256 --new-auth-key-file "$T/k2.key" "$T/sha.img"
t_expect_ok "the rekey form on an authenticated filesystem" \
	tune --auth-key-file "$T/k1.key" --new-auth-key-file "$T/k2.key" "$T/a.img"
t_expect_ok "rekeyed: checks with the new key" check --auth-key-file "$T/k2.key" "$T/a.img"

# --- 2. no key on the command line ---
secret=not-a-key-file-but-a-key-5f3a
for cmd in "mkfs.btrfs --csum hmac-sha256" "btrfs check" "btrfs inspect-internal dump-super" \
	btrfstune btrfs-image btrfs-find-root btrfs-map-logical btrfs-select-super; do
	read -r -a argv <<<"$cmd"
	argv[0]=$BIN/${argv[0]}
	for form in "--auth-key $secret" "--auth-key=$secret"; do
		read -r -a opt <<<"$form"
		t_expect_refusal "$cmd ${opt[0]%%=*}: refused, pointing to --auth-key-file" \
			'--auth-key-file' "${argv[@]}" "${opt[@]}" "$T/a.img"
		if grep -q "$secret" "$T/out"; then
			t_fail "$cmd ${opt[0]%%=*}: the key is in the output"
		fi
	done
done
t_expect_refusal "btrfstune --new-auth-key KEY" '--new-auth-key-file' \
	tune --auth-key-file "$T/k2.key" --new-auth-key "$secret" "$T/a.img"
t_expect_ok "the image is intact after the refusals" check --auth-key-file "$T/k2.key" "$T/a.img"

# --- 3. checksums are compared in constant time ---
SRC=$("$PP_DIR/build-progs.sh" --source-dir "$@") || ba_die "no source tree"
t_expect_ok "hash-vectest (crypto_memneq known answers)" "$BIN/hash-vectest"
t_expect_output "hash-vectest tests crypto_memneq" 'crypto_memneq'
# Every place that compares a computed checksum with a stored one.
sites="kernel-shared/disk-io.c kernel-shared/print-tree.c check/main.c cmds/restore.c
cmds/rescue-chunk-recover.c image/main.c tune/change-csum.c tune/csum-data.c btrfs-sb-mod.c"
for f in $sites; do
	if grep -nE 'memcmp(_extent_buffer)? *\(((result|check|csum|sb) *,|[a-z_]+, *result\b)' "$SRC/$f" |
		grep -v 'memcmp(exist' >"$T/memcmp"; then
		t_fail "$f compares checksums with memcmp: $(head -n 3 "$T/memcmp")"
	else
		t_ok "$f: no memcmp of checksums"
	fi
done
n=0
for f in $sites; do
	n=$((n + $(grep -c 'crypto_memneq' "$SRC/$f" || true)))
done
if [ "$n" -ge 9 ]; then
	t_ok "crypto_memneq is used at $n places"
else
	t_fail "crypto_memneq is used at only $n places"
fi

# --- 4. identification without the key ---
t_image "$T/s.img" 300M
mkfs --csum hmac-sha256 --auth-key-file "$T/k1.key" -L keyed-label "$T/s.img" || ba_die "mkfs failed"
uuid=$("$BIN/btrfs" inspect-internal dump-super "$T/s.img" | awk '$1 == "fsid" { print $2 }')
t_expect_ok "filesystem show IMAGE without the key" "$BIN/btrfs" filesystem show "$T/s.img"
t_expect_output "it lists the filesystem" "uuid: $uuid"
t_expect_output "it shows the label" "keyed-label"
t_expect_output "it says nothing was authenticated" 'read without the key: nothing was verified'
t_expect_ok "filesystem show IMAGE with the key" "$BIN/btrfs" filesystem show --auth-key-file "$T/k1.key" "$T/s.img"
t_expect_output "with the key it lists the filesystem" "uuid: $uuid"
t_expect_ok "filesystem label IMAGE without the key" "$BIN/btrfs" filesystem label "$T/s.img"
t_expect_output "it prints the label" '^keyed-label$'
t_expect_output "it says the label is not verified" 'read without the key: the label is not verified'
t_remember "$T/s.img"
t_expect_refusal "setting a label without the key" "$T/s.img is authenticated .* --auth-key-file" \
	"$BIN/btrfs" filesystem label "$T/s.img" attacker-label
if grep -q 'No valid Btrfs' "$T/out"; then
	t_fail "the refusal also claims there is no btrfs"
fi
t_expect_unchanged "$T/s.img" "the refused label change"
t_expect_ok "setting a label with the key" \
	"$BIN/btrfs" filesystem label --auth-key-file "$T/k1.key" "$T/s.img" new-label
t_expect_ok "reading it back with the key" \
	"$BIN/btrfs" filesystem label --auth-key-file "$T/k1.key" "$T/s.img"
t_expect_output "the new label, verified" '^new-label$'
t_flip "$T/s.img" $((65536 + 0x12b))
t_expect_refusal "filesystem show of a modified image with the key" 'does not match' \
	"$BIN/btrfs" filesystem show --auth-key-file "$T/k1.key" "$T/s.img"

# --- 5. changes that could not finish safely are not started ---
# Image files are not scanned, so each device of a multi-device filesystem
# opens with the others missing (RAID5 tolerates one).
t_image "$T/r1.img" 300M
t_image "$T/r2.img" 300M
mkfs -d raid1 -m raid5 "$T/r1.img" "$T/r2.img" || ba_die "mkfs -m raid5 failed"
t_remember "$T/r1.img"
t_expect_refusal "a change of RAID5 metadata" 'metadata is RAID5/6' \
	tune --csum hmac-sha256 --new-auth-key-file "$T/k1.key" "$T/r1.img"
t_expect_unchanged "$T/r1.img" "the refused RAID5 change"
rm -f "$T"/r[12]*.img
# --- 6. kill points only in the test build ---
t_image "$T/f.img" 300M
mkfs --rootdir "$T/root" "$T/f.img" || ba_die "mkfs failed"
t_expect_ok "BTRFSTUNE_CSUM_CHANGE_KILL_AT does not stop the installed btrfstune" \
	env BTRFSTUNE_CSUM_CHANGE_KILL_AT=started "$BIN/btrfstune" --csum sha256 "$T/f.img"
t_expect_output "it completes the change" 'complete'
t_expect_output "it says how much space the new checksums need" \
	'The new checksums need about [0-9]+ MiB of metadata space, [0-9]+ MiB is free'
if grep -q BTRFSTUNE_CSUM_CHANGE_KILL_AT "$BIN/btrfstune"; then
	t_fail "the installed btrfstune knows the kill point variable"
else
	t_ok "the installed btrfstune has no kill points"
fi
# (The group silences bash's "Killed" report.)
{ t_run env BTRFSTUNE_CSUM_CHANGE_KILL_AT=started "$BIN/btrfstune-failpoints" --csum crc32c "$T/f.img"; } 2>/dev/null
if [ "$RC" = 137 ]; then
	t_ok "the test build is killed at the point (status 137)"
else
	t_fail "the test build was not killed at 'started' (status $RC)"
fi

# --- 7. no roll back through older superblock copies ---
t_image "$T/o.img" 300M
mkfs --csum hmac-sha256 --auth-key-file "$T/k1.key" --rootdir "$T/root" "$T/o.img" ||
	ba_die "mkfs failed"
"$BIN/btrfs" filesystem label --auth-key-file "$T/k1.key" "$T/o.img" older >/dev/null ||
	ba_die "cannot set the first label"
copy=$((64 * 1048576))
dd if="$T/o.img" of="$T/older-copy" bs=4096 skip=$((copy / 4096)) count=1 status=none
"$BIN/btrfs" filesystem label --auth-key-file "$T/k1.key" "$T/o.img" newer >/dev/null ||
	ba_die "cannot set the second label"
dd if="$T/older-copy" of="$T/o.img" bs=4096 seek=$((copy / 4096)) conv=notrunc status=none
t_flip "$T/o.img" $((65536 + 3000))
t_remember "$T/o.img"
t_expect_refusal "a rekey over a garbled primary and an older copy put back" \
	'does not go on from a copy outside a change' \
	tune --auth-key-file "$T/k1.key" --new-auth-key-file "$T/k2.key" "$T/o.img"
t_expect_output "it says the copies may be older ones put back" 'older ones put back'
t_expect_unchanged "$T/o.img" "the refused rekey from an older copy"
t_remember "$T/o.img"
t_expect_refusal "a conversion from the older copy too" \
	'does not go on from a copy outside a change' \
	tune --csum sha256 --auth-key-file "$T/k1.key" "$T/o.img"
t_expect_unchanged "$T/o.img" "the refused conversion from an older copy"
rm -f "$T"/o.img "$T/older-copy"

t_done
