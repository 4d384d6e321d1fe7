#!/bin/bash
# btrfstune: convert to hmac-sha256 from every unkeyed type, change the key,
# go back to an unkeyed type; the result checks with the new key and not with
# the old one; tampered images are refused and left byte-identical; a resume
# with another key is refused, also of a change recorded by an older version
# (key check value without the fsid); both copies of DUP data are verified;
# data that cannot be read is refused cleanly; progress on a terminal.
source "$(dirname "$0")/lib.sh"
t_init "$@" # build-progs.sh options, e.g. --crypto libgcrypt

t_key "$T/old.key"
t_key "$T/new.key"
mkdir -p "$T/root/d"
head -c 6M /dev/urandom >"$T/root/d/random"
seq 1 100000 >"$T/root/text"
printf 'inline' >"$T/root/small"

tune() { "$BIN/btrfstune" "$@"; }
check() { "$BIN/btrfs" check --check-data-csum "$@"; }
same_files() {
	rm -rf "$T/out.d" && mkdir "$T/out.d"
	"$BIN/btrfs" restore "$@" "$T/out.d" >/dev/null 2>&1 &&
		diff -r "$T/root" "$T/out.d" >/dev/null
}

# --- every unkeyed type to hmac-sha256 ---
for csum in crc32c xxhash sha256 blake2; do
	t_image "$T/$csum.img" 300M
	"$BIN/mkfs.btrfs" -q -f --csum "$csum" --rootdir "$T/root" "$T/$csum.img" >/dev/null 2>&1 ||
		ba_die "mkfs --csum $csum failed"
	t_expect_ok "convert $csum to hmac-sha256" \
		tune --csum hmac-sha256 --new-auth-key-file "$T/new.key" "$T/$csum.img"
	t_expect_ok "converted from $csum: checks with the key" check --auth-key-file "$T/new.key" "$T/$csum.img"
	t_expect_refusal "converted from $csum: no key is refused" -- '--auth-key-file' check "$T/$csum.img"
	t_expect_refusal "converted from $csum: the old key is refused" 'wrong key' \
		check --auth-key-file "$T/old.key" "$T/$csum.img"
	if same_files --auth-key-file "$T/new.key" "$T/$csum.img"; then
		t_ok "converted from $csum: all files intact"
	else
		t_fail "converted from $csum: restored files differ"
	fi
done
img=$T/crc32c.img
t_expect_ok "rerun of a finished conversion" tune --csum hmac-sha256 --new-auth-key-file "$T/new.key" "$img"
t_expect_output "it says there is nothing to do" 'already uses hmac-sha256'

# --- change the key: new.key -> old.key, then refusals ---
t_expect_refusal "rekey without the current key" 'give its current key' \
	tune --new-auth-key-file "$T/old.key" "$img"
t_expect_refusal "rekey with a wrong current key" 'superblock' \
	tune --auth-key-file "$T/old.key" --new-auth-key-file "$T/old.key" "$img"
t_expect_refusal "--new-auth-key-file with an unkeyed type" 'needs a keyed checksum' \
	tune --csum crc32c --auth-key-file "$T/new.key" --new-auth-key-file "$T/old.key" "$img"
t_expect_ok "rekey" tune --auth-key-file "$T/new.key" --new-auth-key-file "$T/old.key" "$img"
t_expect_ok "rekeyed: checks with the new key" check --auth-key-file "$T/old.key" "$img"
t_expect_refusal "rekeyed: the previous key is refused" 'wrong key' check --auth-key-file "$T/new.key" "$img"
t_expect_ok "python: rekeyed superblock MAC" python3 "$PP_DIR/tests/oracle.py" super "$T/old.key" "$img"
t_expect_ok "rerun of a finished rekey" tune --auth-key-file "$T/new.key" --new-auth-key-file "$T/old.key" "$img"
t_expect_output "it says there is nothing to do" 'already uses hmac-sha256 with this key'

# --- back to an unkeyed checksum ---
t_expect_refusal "leaving hmac-sha256 without the key" 'give its current key' tune --csum crc32c "$img"
t_expect_ok "hmac-sha256 back to crc32c" tune --csum crc32c --auth-key-file "$T/old.key" "$img"
t_expect_ok "crc32c again: checks without a key" check "$img"
if same_files "$img"; then t_ok "all files intact after three changes"; else t_fail "files differ after three changes"; fi

# --- tampered images are refused before anything is written ---
t_image "$T/t.img" 300M
"$BIN/mkfs.btrfs" -q -f --rootdir "$T/root" "$T/t.img" >/dev/null 2>&1 || ba_die "mkfs failed"
logical=$(t_csum_logicals "$T/t.img" | sed -n 1p)
[ -n "$logical" ] || ba_die "no data checksum found"
"$BIN/btrfs" inspect-internal dump-tree -t 5 "$T/t.img" >"$T/fstree"
leaf=$(awk '$1 == "leaf" { print $2; exit }' "$T/fstree")
for what in data metadata-copy-1 metadata-copy-2; do
	cp "$T/t.img" "$T/bad.img"
	case $what in
	data) off=$(t_physical "$T/bad.img" "$logical" 1) ;;
	metadata-copy-*) off=$(t_physical "$T/bad.img" "$leaf" "${what##*-}") ;;
	esac
	[ -n "$off" ] || ba_die "cannot map the block to tamper with"
	off=$((off + 1000))
	t_flip "$T/bad.img" "$off"
	t_remember "$T/bad.img"
	t_expect_refusal "convert refuses tampered $what" 'does not match|nothing was changed' \
		tune --csum hmac-sha256 --new-auth-key-file "$T/new.key" "$T/bad.img"
	t_expect_unchanged "$T/bad.img" "tampered $what, conversion refused"
done
# The same for a rekey: an hmac image with a modified block.
cp "$T/t.img" "$T/bad.img"
tune --csum hmac-sha256 --new-auth-key-file "$T/old.key" "$T/bad.img" >/dev/null 2>&1 || ba_die "convert failed"
"$BIN/btrfs" inspect-internal dump-tree --auth-key-file "$T/old.key" -t 5 "$T/bad.img" >"$T/fstree"
leaf=$(awk '$1 == "leaf" { print $2; exit }' "$T/fstree")
t_flip "$T/bad.img" $(( $(t_physical "$T/bad.img" "$leaf" 2 "$T/old.key") + 2000 ))
t_remember "$T/bad.img"
t_expect_refusal "rekey refuses a tampered tree block copy" 'checksum does not match' \
	tune --auth-key-file "$T/old.key" --new-auth-key-file "$T/new.key" "$T/bad.img"
t_expect_unchanged "$T/bad.img" "tampered tree block copy, rekey refused"

# --- data in two copies (-d dup): a rekey verifies both, batch after batch ---
# The 6 MiB file spans several 1 MiB batches, each read while the one before
# is hashed; the flipped sector is in copy 2, past the first batch.
t_image "$T/dup.img" 300M
"$BIN/mkfs.btrfs" -q -f -d dup --csum hmac-sha256 --auth-key-file "$T/old.key" \
	--rootdir "$T/root" "$T/dup.img" >/dev/null 2>&1 || ba_die "mkfs -d dup failed"
logical=$(t_csum_logicals "$T/dup.img" "$T/old.key" | sed -n 1000p)
[ -n "$logical" ] || ba_die "fewer than 1000 data checksums in the dup image"
cp "$T/dup.img" "$T/bad.img"
off=$(t_physical "$T/bad.img" "$logical" 2 "$T/old.key")
[ -n "$off" ] || ba_die "cannot map copy 2 of data at $logical"
t_flip "$T/bad.img" $((off + 100))
t_remember "$T/bad.img"
t_expect_refusal "rekey refuses a flipped byte in copy 2 of the data" \
	"data at logical $logical, copy 2, does not match" \
	tune --auth-key-file "$T/old.key" --new-auth-key-file "$T/new.key" "$T/bad.img"
t_expect_unchanged "$T/bad.img" "tampered copy 2, rekey refused"
t_expect_ok "rekey of dup data" tune --auth-key-file "$T/old.key" --new-auth-key-file "$T/new.key" "$T/dup.img"
t_expect_ok "dup data rekeyed: checks with the new key" check --auth-key-file "$T/new.key" "$T/dup.img"
if same_files --auth-key-file "$T/new.key" "$T/dup.img"; then
	t_ok "dup data rekeyed: all files intact"
else
	t_fail "dup data rekeyed: files differ"
fi

# --- a read error while the data is mapped: reported, not a SIGBUS ---
# The hashing threads read the page cache's pages of a mapping; a device that
# cannot be read must make the read fail and the rekey refuse, not kill a
# thread.  A device shorter than its filesystem, cut inside its last data
# (64 MiB of it, so that it lies past the metadata), cannot be read there.
mkdir -p "$T/big"
head -c 64M /dev/urandom >"$T/big/random"
t_image "$T/short.img" 300M
"$BIN/mkfs.btrfs" -q -f --csum hmac-sha256 --auth-key-file "$T/old.key" \
	--rootdir "$T/big" "$T/short.img" >/dev/null 2>&1 || ba_die "mkfs of the 64 MiB tree failed"
logical=$(t_csum_logicals "$T/short.img" "$T/old.key" | tail -n 1)
off=$(t_physical "$T/short.img" "$logical" 1 "$T/old.key")
[ -n "$off" ] || ba_die "cannot map the last data sector of the 64 MiB tree"
truncate -s $((off / 4096 * 4096)) "$T/short.img"
t_remember "$T/short.img"
t_expect_refusal "rekey of a device that ends inside its data" "cannot read data at logical" \
	tune --auth-key-file "$T/old.key" --new-auth-key-file "$T/new.key" "$T/short.img"
t_expect_output "it says nothing was changed" 'nothing was changed'
t_expect_unchanged "$T/short.img" "unreadable data, rekey refused"
rm -rf "$T/big" "$T/short.img"

# --- a resume needs the key the change started with ---
cp "$T/t.img" "$T/r.img"
t_tune_killed_at data-batch --csum hmac-sha256 --new-auth-key-file "$T/new.key" "$T/r.img"
t_expect_refusal "other tools refuse a filesystem mid-change" 'same btrfstune command' \
	"$BIN/btrfs" check --auth-key-file "$T/new.key" "$T/r.img"
t_expect_refusal "resuming with another key is refused" 'not the one the interrupted change started with|keys the change was started with' \
	tune --csum hmac-sha256 --new-auth-key-file "$T/old.key" "$T/r.img"
t_expect_ok "resuming with the right key completes" tune --csum hmac-sha256 --new-auth-key-file "$T/new.key" "$T/r.img"
t_expect_ok "resumed: checks clean" check --auth-key-file "$T/new.key" "$T/r.img"

# --- the key check value of a change in progress is salted with the fsid ---
KEYCHECK=$PP_DIR/tests/keycheck.py
for n in 1 2; do
	t_image "$T/s$n.img" 300M
	"$BIN/mkfs.btrfs" -q -f --rootdir "$T/root" "$T/s$n.img" >/dev/null 2>&1 || ba_die "mkfs failed"
	t_tune_killed_at started --csum hmac-sha256 --new-auth-key-file "$T/new.key" "$T/s$n.img"
	t_expect_ok "filesystem $n: the change is recorded" python3 "$KEYCHECK" show "$T/new.key" "$T/s$n.img"
	t_expect_output "filesystem $n: the key check value is salted with the fsid (flag 1)" '^salted 1 '
	cp "$T/out" "$T/check$n"
done
if [ "$(cut -d ' ' -f 3 "$T/check1")" != "$(cut -d ' ' -f 3 "$T/check2")" ]; then
	t_ok "the same key gives different check values on two filesystems"
else
	t_fail "the same key gives the same check value on two filesystems"
fi
t_expect_ok "an item as an older btrfstune wrote it (no fsid, flags 0)" \
	python3 "$KEYCHECK" unsalt "$T/new.key" "$T/s1.img"
t_expect_refusal "older item: resuming with another key is refused" 'not the one the interrupted change started with|keys the change was started with' \
	tune --csum hmac-sha256 --new-auth-key-file "$T/old.key" "$T/s1.img"
t_expect_ok "older item: resuming with the right key completes" \
	tune --csum hmac-sha256 --new-auth-key-file "$T/new.key" "$T/s1.img"
t_expect_ok "older item: resumed, checks clean" check --auth-key-file "$T/new.key" "$T/s1.img"

# --- progress on a terminal ---
cp "$T/t.img" "$T/p.img"
t_run script -qec "$BIN/btrfstune --csum hmac-sha256 --new-auth-key-file $T/new.key $T/p.img" /dev/null
if [ "$RC" -eq 0 ] && grep -q $'\r''rewriting data checksums: [0-9]*/[0-9]* MiB' "$T/out"; then
	t_ok "progress shown on a terminal"
else
	t_fail "no progress on a terminal (status $RC): $(tr '\r' '\n' <"$T/out" | tail -n 3)"
fi

t_done
