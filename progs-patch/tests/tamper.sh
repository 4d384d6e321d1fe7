#!/bin/bash
# Modifications made without the key are detected: one flipped data byte,
# one flipped byte in either copy of a tree block, a valid copy of a tree
# block of another generation put into one mirror, a filesystem rewritten
# with plain sha256 checksums, a modified superblock and a modified backup
# superblock.
source "$(dirname "$0")/lib.sh"
t_init "$@" # build-progs.sh options, e.g. --crypto libgcrypt

t_key "$T/k.key"
mkdir -p "$T/root"
head -c 2M /dev/urandom >"$T/root/data"
seq 1 50000 >"$T/root/text"
t_image "$T/good.img" 300M
"$BIN/mkfs.btrfs" -q -f --csum hmac-sha256 --auth-key-file "$T/k.key" \
	--rootdir "$T/root" "$T/good.img" >/dev/null 2>&1 || ba_die "mkfs failed"
check() { "$BIN/btrfs" check --check-data-csum --auth-key-file "$T/k.key" "$@"; }
t_expect_ok "the untouched image checks clean" check "$T/good.img"

# --- one data byte ---
logical=$(t_csum_logicals "$T/good.img" "$T/k.key" | sed -n 1p)
[ -n "$logical" ] || ba_die "no data checksum found"
phys=$(t_physical "$T/good.img" "$logical" 1 "$T/k.key")
[ -n "$phys" ] || ba_die "cannot map data at $logical"
cp "$T/good.img" "$T/bad.img"
t_flip "$T/bad.img" $((phys + 1234))
t_expect_refusal "a flipped data byte is a checksum error" "mirror 1 bytenr $logical csum" \
	check "$T/bad.img"
mkdir "$T/out.d"
t_expect_refusal "restore does not hand out the modified data" \
	"data at logical $logical does not match its hmac-sha256 checksum" \
	"$BIN/btrfs" restore --auth-key-file "$T/k.key" "$T/bad.img" "$T/out.d"

# --- one byte in each copy of a leaf of the fs tree (DUP metadata) ---
"$BIN/btrfs" inspect-internal dump-tree --auth-key-file "$T/k.key" -t 5 "$T/good.img" >"$T/fstree"
leaf=$(awk '$1 == "leaf" { print $2; exit }' "$T/fstree")
for copy in 1 2; do
	phys=$(t_physical "$T/good.img" "$leaf" "$copy" "$T/k.key")
	[ -n "$phys" ] || ba_die "cannot map copy $copy of tree block $leaf"
	cp "$T/good.img" "$T/bad.img"
	t_flip "$T/bad.img" $((phys + 3000))
	t_expect_refusal "a flipped byte in copy $copy of a tree block fails check" \
		"tree block $leaf copy $copy does not verify" check "$T/bad.img"
	t_expect_output "check says errors were found" 'error\(s\) found|do not verify with the key'
done

# --- another valid copy of a tree block put into one mirror ---
# Without the key nobody makes a MAC, but a block the key made can be copied
# back: here one made with the key at another generation, in one copy only.
nodesize=$("$BIN/btrfs" inspect-internal dump-super --auth-key-file "$T/k.key" "$T/good.img" |
	awk '$1 == "nodesize" { print $2 }')
for copy in 1 2; do
	phys=$(t_physical "$T/good.img" "$leaf" $((3 - copy)) "$T/k.key")
	[ -n "$phys" ] || ba_die "cannot map copy $((3 - copy)) of tree block $leaf"
	cp "$T/good.img" "$T/bad.img"
	"$BIN/btrfs-corrupt-block" --auth-key-file "$T/k.key" -m "$leaf" -f generation \
		"$T/bad.img" >"$T/corrupt.log" 2>&1 || ba_die "btrfs-corrupt-block failed: $(tail -n 3 "$T/corrupt.log")"
	dd if="$T/good.img" of="$T/bad.img" bs="$nodesize" iflag=skip_bytes oflag=seek_bytes \
		skip="$phys" seek="$phys" count=1 conv=notrunc status=none
	t_expect_refusal "a valid copy of another generation in copy $copy fails check" \
		"tree block $leaf copy $copy has generation [0-9]+, its parent records" check "$T/bad.img"
done

# --- a flipped byte in a backup superblock (copy 1, at 64 MiB) ---
cp "$T/good.img" "$T/bad.img"
t_flip "$T/bad.img" $((64 * 1048576 + 0x12b))
t_expect_refusal "a modified backup superblock fails check" \
	'superblock copy 1 of .* does not verify with the key' check "$T/bad.img"

# --- a flipped superblock byte (the label) ---
cp "$T/good.img" "$T/bad.img"
t_flip "$T/bad.img" $((65536 + 0x12b))
t_expect_refusal "a modified superblock is refused" 'does not match' check "$T/bad.img"

# --- the whole filesystem rewritten with unkeyed sha256 checksums ---
# sha256 has the size of hmac-sha256, anyone can do this without the key; here
# btrfstune does it with the key, the result is the same.
cp "$T/good.img" "$T/sha.img"
"$BIN/btrfstune" --csum sha256 --auth-key-file "$T/k.key" "$T/sha.img" >/dev/null 2>&1 ||
	ba_die "cannot make the sha256 copy"
t_expect_ok "the sha256 copy is a valid filesystem" "$BIN/btrfs" check --check-data-csum "$T/sha.img"
t_expect_refusal "check with the key refuses the sha256 copy" 'not authenticated' \
	check "$T/sha.img"
t_expect_refusal "restore with the key refuses the sha256 copy" 'not authenticated' \
	"$BIN/btrfs" restore --auth-key-file "$T/k.key" "$T/sha.img" "$T"
t_run "$BIN/btrfs" inspect-internal dump-super --auth-key-file "$T/k.key" "$T/sha.img"
t_expect_output "dump-super with the key says it is not authenticated" 'NOT AUTHENTICATED'

t_done
