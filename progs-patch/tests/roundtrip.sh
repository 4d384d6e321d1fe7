#!/bin/bash
# mkfs.btrfs --csum hmac-sha256, btrfs check and dump-super round trips:
# file and stdin keys, --rootdir, DUP, two-device RAID1, odd key sizes and
# binary keys; every refusal (no key, wrong key, empty key, key without a
# keyed checksum); and the MACs on disk recomputed independently by Python.
source "$(dirname "$0")/lib.sh"
t_init "$@" # build-progs.sh options, e.g. --crypto libgcrypt

ORACLE=$PP_DIR/tests/oracle.py
mkfs() { "$BIN/mkfs.btrfs" -q -f "$@"; }

# Tree root, node size and both copies of the tree root block.
check_oracle_metadata() {
	local img=$1 key=$2 root nodesize p copy
	"$BIN/btrfs" inspect-internal dump-super --auth-key-file "$key" "$img" >"$T/sb"
	root=$(awk '$1 == "root" { print $2 }' "$T/sb")
	nodesize=$(awk '$1 == "nodesize" { print $2 }' "$T/sb")
	t_expect_ok "python: superblock MAC of $img" python3 "$ORACLE" super "$key" "$img"
	for copy in 1 2; do
		p=$(t_physical "$img" "$root" "$copy" "$key")
		[ -n "$p" ] || continue
		t_expect_ok "python: tree root MAC, copy $copy" \
			python3 "$ORACLE" block "$key" "$img" "$p" "$nodesize"
	done
}

# The first data checksum in the csum tree against the data it covers.
check_oracle_data() {
	local img=$1 key=$2 logical mac p
	"$BIN/btrfs" inspect-internal dump-tree --auth-key-file "$key" -t csum \
		--csum-items "$img" >"$T/csums"
	read -r logical mac < <(sed -n 's/^[[:space:]]*\[\([0-9]*\)\] \(0x[0-9a-f]*\).*/\1 \2/p;T;q' "$T/csums")
	if [ -z "${logical:-}" ]; then
		t_fail "no data checksum found in $img"
		return
	fi
	p=$(t_physical "$img" "$logical" 1 "$key")
	t_expect_ok "python: data sector MAC at logical $logical" \
		python3 "$ORACLE" data "$key" "$img" "$p" "$mac"
}

t_key "$T/k1.key"
t_key "$T/k2.key"
t_image "$T/a.img" 300M

# --- file key, defaults (DUP metadata) ---
t_expect_ok "mkfs with --auth-key-file" mkfs --csum hmac-sha256 --auth-key-file "$T/k1.key" "$T/a.img"
t_expect_ok "check with the key" "$BIN/btrfs" check --auth-key-file "$T/k1.key" "$T/a.img"
t_expect_ok "check with the key as a global option" "$BIN/btrfs" --auth-key-file "$T/k1.key" check "$T/a.img"
t_expect_ok "dump-super with the key" "$BIN/btrfs" inspect-internal dump-super --auth-key-file "$T/k1.key" "$T/a.img"
t_expect_output "dump-super names type 32" '^csum_type[[:space:]]+32 \(hmac-sha256\)'
t_expect_output "dump-super says the MAC matches" '^csum[[:space:]]+0x[0-9a-f]{64} \[match\]'
t_expect_ok "dump-super without a key" "$BIN/btrfs" inspect-internal dump-super "$T/a.img"
t_expect_output "dump-super without a key cannot verify" '\[NOT VERIFIED: no key'
grep -q '\[match\]' <(grep '^csum[[:space:]]' "$T/out") &&
	t_fail "dump-super without a key claims a match"
check_oracle_metadata "$T/a.img" "$T/k1.key"

t_expect_refusal "check without a key names the option" -- '--auth-key-file' \
	"$BIN/btrfs" check "$T/a.img"
t_expect_refusal "check with a wrong key" 'does not match: wrong key' \
	"$BIN/btrfs" check --auth-key-file "$T/k2.key" "$T/a.img"
t_run "$BIN/btrfs" inspect-internal dump-super --auth-key-file "$T/k2.key" "$T/a.img"
t_expect_output "dump-super with a wrong key says it does not match" "\[DON'T MATCH\]"

# --- refusals at mkfs time ---
t_image "$T/r.img" 300M
: >"$T/empty.key"
chmod 600 "$T/empty.key"
t_expect_refusal "mkfs hmac-sha256 without a key" 'needs a key.*--auth-key-file' \
	mkfs --csum hmac-sha256 "$T/r.img"
t_expect_refusal "mkfs with a key but crc32c" 'does not use one' \
	mkfs --auth-key-file "$T/k1.key" "$T/r.img"
t_expect_refusal "mkfs with an empty key file" 'empty' \
	mkfs --csum hmac-sha256 --auth-key-file "$T/empty.key" "$T/r.img"
# shellcheck disable=SC2016 # expanded by the inner sh
t_expect_refusal "mkfs with an empty key on stdin" 'empty' \
	sh -c '"$1" -q -f --csum hmac-sha256 --auth-key-file - "$2" </dev/null' sh "$BIN/mkfs.btrfs" "$T/r.img"
t_expect_refusal "mkfs with an empty --auth-key (refused as any --auth-key)" 'auth-key-file' \
	mkfs --csum hmac-sha256 --auth-key '' "$T/r.img"
t_expect_refusal "check with an empty key file" 'empty' \
	"$BIN/btrfs" check --auth-key-file "$T/empty.key" "$T/a.img"
t_expect_refusal "a missing key file" 'cannot open key file' \
	"$BIN/btrfs" check --auth-key-file "$T/nonexistent.key" "$T/a.img"

# --- stdin key and the kernel's spelling of the type ---
# shellcheck disable=SC2016 # expanded by the inner sh
t_expect_ok "mkfs with the key on stdin, --csum 'hmac(sha256)'" \
	sh -c '"$1" -q -f --csum "hmac(sha256)" --auth-key-file - "$2" <"$3"' sh \
	"$BIN/mkfs.btrfs" "$T/a.img" "$T/k1.key"
# shellcheck disable=SC2016 # expanded by the inner sh
t_expect_ok "check with the key on stdin" \
	sh -c '"$1" check --auth-key-file - "$2" <"$3"' sh "$BIN/btrfs" "$T/a.img" "$T/k1.key"
t_expect_ok "python: superblock of the stdin-key filesystem" python3 "$ORACLE" super "$T/k1.key" "$T/a.img"

# --- --auth-key KEY (2020 form) is refused: tests/refusals.sh; a text key file ---
t_expect_refusal "mkfs --auth-key" 'auth-key-file' mkfs --csum hmac-sha256 --auth-key 'text key 0123456' "$T/a.img"
printf '%s' 'text key 0123456' >"$T/text.key"
chmod 600 "$T/text.key"
t_expect_ok "mkfs with a text key file" mkfs --csum hmac-sha256 --auth-key-file "$T/text.key" "$T/a.img"
t_expect_ok "check with the same bytes from a file" "$BIN/btrfs" check --auth-key-file "$T/text.key" "$T/a.img"

# --- binary keys: NUL and newline bytes count, the length is not strlen() ---
printf 'ab\000cd\nef\000' >"$T/bin.key"
printf 'ab' >"$T/bin-prefix.key"
chmod 600 "$T/bin.key" "$T/bin-prefix.key"
t_expect_ok "mkfs with a binary key" mkfs --csum hmac-sha256 --auth-key-file "$T/bin.key" "$T/a.img"
t_expect_ok "check with the binary key" "$BIN/btrfs" check --auth-key-file "$T/bin.key" "$T/a.img"
t_expect_refusal "check with the key cut at its first NUL" 'wrong key' \
	"$BIN/btrfs" check --auth-key-file "$T/bin-prefix.key" "$T/a.img"
t_expect_ok "python: superblock with the binary key" python3 "$ORACLE" super "$T/bin.key" "$T/a.img"

# --- 1 byte key and a key longer than the HMAC block (hashed first) ---
for size in 1 131; do
	t_key "$T/k$size.key" "$size"
	t_expect_ok "mkfs with a $size byte key" mkfs --csum hmac-sha256 --auth-key-file "$T/k$size.key" "$T/a.img"
	t_expect_ok "check with the $size byte key" "$BIN/btrfs" check --auth-key-file "$T/k$size.key" "$T/a.img"
	check_oracle_metadata "$T/a.img" "$T/k$size.key"
done

# --- --rootdir with a populated directory, data checksums ---
mkdir -p "$T/root/dir/sub" "$T/root/empty"
head -c 3M /dev/urandom >"$T/root/dir/random"
seq 1 200000 >"$T/root/dir/sub/text"
printf 'small' >"$T/root/inline"
: >"$T/root/zero"
ln -s dir/random "$T/root/link"
t_expect_ok "mkfs --rootdir" mkfs --csum hmac-sha256 --auth-key-file "$T/k1.key" --rootdir "$T/root" "$T/a.img"
t_expect_ok "check --check-data-csum with the key" \
	"$BIN/btrfs" check --check-data-csum --auth-key-file "$T/k1.key" "$T/a.img"
check_oracle_data "$T/a.img" "$T/k1.key"
mkdir "$T/restored"
t_expect_ok "restore with the key" "$BIN/btrfs" restore -S --auth-key-file "$T/k1.key" "$T/a.img" "$T/restored"
if diff -r --no-dereference "$T/root" "$T/restored" >/dev/null; then
	t_ok "restored files are identical to the --rootdir source"
else
	t_fail "restored files differ from the --rootdir source"
fi

# --- DUP data and metadata ---
t_expect_ok "mkfs -d dup -m dup" mkfs --csum hmac-sha256 --auth-key-file "$T/k1.key" -d dup -m dup --rootdir "$T/root" "$T/a.img"
t_expect_ok "check --check-data-csum, DUP" \
	"$BIN/btrfs" check --check-data-csum --auth-key-file "$T/k1.key" "$T/a.img"
check_oracle_metadata "$T/a.img" "$T/k1.key"

# --- two image files, RAID1 data and metadata ---
# Image files are not scanned like block devices, so each is checked on its
# own (the other one missing): every copy of everything gets verified.
t_image "$T/d1.img" 300M
t_image "$T/d2.img" 300M
t_expect_ok "mkfs -d raid1 -m raid1 on two files" \
	mkfs --csum hmac-sha256 --auth-key-file "$T/k1.key" -d raid1 -m raid1 "$T/d1.img" "$T/d2.img"
for d in d1 d2; do
	t_expect_ok "check $d of the RAID1 pair" \
		"$BIN/btrfs" check --check-data-csum --auth-key-file "$T/k1.key" "$T/$d.img"
	t_expect_ok "python: superblock of $d" python3 "$ORACLE" super "$T/k1.key" "$T/$d.img"
	t_expect_refusal "check $d without a key" -- '--auth-key-file' "$BIN/btrfs" check "$T/$d.img"
done

t_done
