#!/bin/bash
# Every tool that reads a filesystem from its devices: without the key it
# refuses, naming --auth-key-file, with a non-zero status and without
# crashing; with the key it works where it works for other filesystems, and
# what it writes still verifies.  Except listing (filesystem show) and
# reading the label, which identify without the key and say that nothing
# was verified.
source "$(dirname "$0")/lib.sh"
t_init "$@" # build-progs.sh options, e.g. --crypto libgcrypt

t_key "$T/k.key"
K=(--auth-key-file "$T/k.key")
mkdir -p "$T/root/d"
head -c 1M /dev/urandom >"$T/root/d/data"
seq 1 20000 >"$T/root/text"
t_image "$T/a.img" 300M
"$BIN/mkfs.btrfs" -q -f --csum hmac-sha256 "${K[@]}" --rootdir "$T/root" "$T/a.img" >/dev/null 2>&1 ||
	ba_die "mkfs failed"
cp --sparse=always "$T/a.img" "$T/pristine.img"
fresh() { cp --sparse=always "$T/pristine.img" "$T/a.img"; }
still_clean() {
	t_expect_ok "$1: the filesystem still checks clean" \
		"$BIN/btrfs" check --check-data-csum "${K[@]}" "$T/a.img"
}
NOKEY='--auth-key-file'

# Refused for the missing key alone: a valid filesystem is not also called
# missing ("No valid Btrfs found") or unreadable (an I/O error).
t_expect_key_refusal() {
	local false_claim
	t_expect_refusal "$@"
	false_claim=$(grep -Eo -m 1 'No valid Btrfs found|Input/output error' "$T/out") || true
	[ -z "$false_claim" ] || t_fail "$1: the missing key is also reported as '$false_claim'"
}

# Never a signal, whatever the outcome.
t_expect_no_crash() {
	local what=$1; shift
	t_run "$@"
	if t_signalled "$RC"; then
		t_fail "$what: died with status $RC"
	else
		t_ok "$what: status $RC, no crash"
	fi
}

# --- read-only tools ---
t_expect_key_refusal "check without key" "$NOKEY" "$BIN/btrfs" check "$T/a.img"
t_expect_key_refusal "restore without key" "$NOKEY" "$BIN/btrfs" restore "$T/a.img" "$T/r1"
mkdir "$T/r2"
t_expect_ok "restore with key" "$BIN/btrfs" restore "${K[@]}" "$T/a.img" "$T/r2"
if diff -r "$T/root" "$T/r2" >/dev/null; then t_ok "restored files identical"; else t_fail "restored files differ"; fi

for sub in dump-tree tree-stats; do
	t_expect_key_refusal "inspect-internal $sub without key" "$NOKEY" "$BIN/btrfs" inspect-internal "$sub" "$T/a.img"
	t_expect_ok "inspect-internal $sub with key" "$BIN/btrfs" inspect-internal "$sub" "${K[@]}" "$T/a.img"
done
t_expect_ok "inspect-internal dump-super without key" "$BIN/btrfs" inspect-internal dump-super -a "$T/a.img"
t_expect_output "dump-super -a: not verified without key" 'NOT VERIFIED'
t_expect_ok "inspect-internal dump-super -a with key" "$BIN/btrfs" inspect-internal dump-super -a "${K[@]}" "$T/a.img"
if [ "$(grep -c '\[match\]' "$T/out")" -ge 4 ]; then
	t_ok "dump-super -a: all copies match (and magic)"
else
	t_fail "dump-super -a with key: not every copy matches"
fi
# logical-resolve and min-dev-size work on mounted filesystems only.
t_expect_no_crash "inspect-internal logical-resolve on an image" \
	"$BIN/btrfs" inspect-internal logical-resolve 30588928 "$T/a.img"

# Listing is identification only (as blkid): no key needed, but it says so.
t_expect_ok "filesystem show without key" "$BIN/btrfs" filesystem show "$T/a.img"
t_expect_output "filesystem show without key says nothing was verified" 'read without the key: nothing was verified'
t_expect_ok "filesystem show with key" "$BIN/btrfs" filesystem show "${K[@]}" "$T/a.img"
t_expect_ok "filesystem label without key" "$BIN/btrfs" filesystem label "$T/a.img"
t_expect_output "filesystem label without key says it is not verified" 'the label is not verified'
t_expect_ok "filesystem label with key" "$BIN/btrfs" filesystem label "${K[@]}" "$T/a.img"

t_expect_key_refusal "btrfs-find-root without key" "$NOKEY" "$BIN/btrfs-find-root" "$T/a.img"
t_expect_ok "btrfs-find-root with key" "$BIN/btrfs-find-root" "${K[@]}" "$T/a.img"
t_expect_output "btrfs-find-root finds the tree root" 'Found tree root at'
root=$("$BIN/btrfs" inspect-internal dump-super "${K[@]}" "$T/a.img" | awk '$1 == "root" { print $2 }')
t_expect_key_refusal "btrfs-map-logical without key" "$NOKEY" "$BIN/btrfs-map-logical" -l "$root" "$T/a.img"
t_expect_ok "btrfs-map-logical with key" "$BIN/btrfs-map-logical" "${K[@]}" -l "$root" -b 4096 "$T/a.img"

# --- btrfs-image: dump and restore ---
# A dump changes blocks (zeroed unused space, data checksums, inline data;
# names with -s): signed with the filesystem's key, a dump would hand out
# blocks that verify on the filesystem.  It is signed with a throwaway key.
t_key "$T/dump.key"
D=(--dump-key-file "$T/dump.key")
t_expect_key_refusal "btrfs-image without key" "$NOKEY" "$BIN/btrfs-image" "${D[@]}" "$T/a.img" "$T/dump"
t_expect_refusal "btrfs-image without a throwaway key" 'throwaway key .*--dump-key-file' \
	"$BIN/btrfs-image" "${K[@]}" "$T/a.img" "$T/dump"
if [ -e "$T/dump" ]; then t_fail "the refused dump left $T/dump"; else t_ok "the refused dump left no file"; fi
t_expect_refusal "btrfs-image with the filesystem's key as the dump key" "is the filesystem's key" \
	"$BIN/btrfs-image" "${K[@]}" --dump-key-file "$T/k.key" "$T/a.img" "$T/dump"
t_expect_ok "btrfs-image with key and throwaway key" "$BIN/btrfs-image" "${K[@]}" "${D[@]}" "$T/a.img" "$T/dump"
t_expect_key_refusal "btrfs-image -r without key" "$NOKEY" "$BIN/btrfs-image" -r "$T/dump" "$T/restored.img"
t_expect_refusal "btrfs-image -r with the filesystem's key" 'does not match' \
	"$BIN/btrfs-image" "${K[@]}" -r "$T/dump" "$T/restored.img"
t_expect_ok "btrfs-image -r with the throwaway key" \
	"$BIN/btrfs-image" --auth-key-file "$T/dump.key" -r "$T/dump" "$T/restored.img"
t_expect_ok "the restored image checks with the throwaway key" \
	"$BIN/btrfs" check --auth-key-file "$T/dump.key" "$T/restored.img"
# Every tree block of the dump, by Python's hmac: the throwaway key's MAC,
# never the filesystem key's.
"$BIN/btrfs" inspect-internal dump-tree --auth-key-file "$T/dump.key" "$T/restored.img" |
	awk '$1 == "leaf" || $1 == "node" { print $2 }' | sort -u >"$T/blocks"
n=0 fs_signed=0 unsigned=0
while read -r logical; do
	phys=$(t_physical "$T/restored.img" "$logical" 1 "$T/dump.key")
	[ -n "$phys" ] || { unsigned=$((unsigned + 1)); continue; }
	n=$((n + 1))
	python3 "$PP_DIR/tests/oracle.py" block "$T/dump.key" "$T/restored.img" "$phys" 16384 || unsigned=$((unsigned + 1))
	! python3 "$PP_DIR/tests/oracle.py" block "$T/k.key" "$T/restored.img" "$phys" 16384 || fs_signed=$((fs_signed + 1))
done <"$T/blocks"
if [ "$n" -gt 5 ] && [ "$fs_signed" = 0 ] && [ "$unsigned" = 0 ]; then
	t_ok "all $n tree blocks of the dump carry the throwaway key's MAC, none the filesystem's"
else
	t_fail "tree blocks of the dump: $n checked, $fs_signed with the filesystem key's MAC, $unsigned without the throwaway key's"
fi
t_expect_ok "btrfs-image -s (sanitize)" "$BIN/btrfs-image" -s "${K[@]}" "${D[@]}" "$T/a.img" "$T/dump-s"
t_expect_ok "btrfs-image -r of the sanitized image" \
	"$BIN/btrfs-image" --auth-key-file "$T/dump.key" -r "$T/dump-s" "$T/restored-s.img"
t_expect_ok "sanitized image: every tree block MAC verifies with the throwaway key" \
	"$BIN/btrfs" inspect-internal dump-tree --auth-key-file "$T/dump.key" "$T/restored-s.img"
# Restoring a multi-device filesystem rewrites its chunk tree leaves and signs
# them again: a leaf changed in the dump is refused, not signed.  (Made from
# the single-device dump: the superblock says 2 devices, signed again with
# the throwaway key, as whoever holds that key could.)
chunk=$("$BIN/btrfs" inspect-internal dump-super "$T/a.img" | awk '$1 == "chunk_root" { print $2 }')
for leaf in intact changed; do
	cp "$T/dump" "$T/dump-2dev"
	t_run python3 "$PP_DIR/tests/image-2dev.py" "$T/dump-2dev" "$T/dump.key" "$chunk" "$leaf"
	[ "$RC" = 0 ] || ba_die "cannot prepare the two-device dump: $(cat "$T/out")"
	rm -f "$T/restored-2dev.img"
	if [ "$leaf" = intact ]; then
		t_expect_ok "a two-device dump with its chunk tree intact restores" \
			"$BIN/btrfs-image" --auth-key-file "$T/dump.key" -r "$T/dump-2dev" "$T/restored-2dev.img"
	else
		t_expect_refusal "a chunk tree leaf changed in the dump is not signed again" \
			"chunk tree block $chunk in the image does not match" \
			"$BIN/btrfs-image" --auth-key-file "$T/dump.key" -r "$T/dump-2dev" "$T/restored-2dev.img"
	fi
done

# --- tools that write ---
t_expect_key_refusal "btrfs-select-super without key" "$NOKEY" "$BIN/btrfs-select-super" -s 1 "$T/a.img"
t_expect_ok "btrfs-select-super with key" "$BIN/btrfs-select-super" "${K[@]}" -s 1 "$T/a.img"
still_clean "btrfs-select-super"

t_expect_ok "filesystem label set with key" "$BIN/btrfs" filesystem label "${K[@]}" "$T/a.img" authlabel
t_run "$BIN/btrfs" filesystem label "${K[@]}" "$T/a.img"
t_expect_output "the new label is there" '^authlabel$'
still_clean "label set"

for sub in "super-recover -y" zero-log fix-device-size clear-uuid-tree; do
	# shellcheck disable=SC2086
	t_expect_key_refusal "rescue $sub without key" "$NOKEY" "$BIN/btrfs" rescue $sub "$T/a.img"
	# shellcheck disable=SC2086
	t_expect_ok "rescue $sub with key" "$BIN/btrfs" rescue $sub "${K[@]}" "$T/a.img"
	still_clean "rescue $sub"
done
# chunk-recover fails on such small images for any checksum type in 6.2; it
# must still refuse without the key, and not crash with it.
fresh
t_expect_key_refusal "rescue chunk-recover without key" "$NOKEY" "$BIN/btrfs" rescue chunk-recover -y "$T/a.img"
t_expect_no_crash "rescue chunk-recover with key" "$BIN/btrfs" rescue chunk-recover -y "${K[@]}" "$T/a.img"

fresh
t_expect_key_refusal "btrfstune -m without key" "$NOKEY" "$BIN/btrfstune" -m "$T/a.img"
t_expect_ok "btrfstune -m with key" "$BIN/btrfstune" -m "${K[@]}" "$T/a.img"
still_clean "btrfstune -m"
t_expect_key_refusal "btrfs check --repair without key" "$NOKEY" "$BIN/btrfs" check --repair --force "$T/a.img"

# --- btrfs-convert: create an authenticated filesystem, roll it back ---
if command -v mkfs.ext4 >/dev/null && command -v debugfs >/dev/null; then
	t_image "$T/e.img" 300M
	mkfs.ext4 -q -F -b 4096 "$T/e.img"
	debugfs -w -R "write $T/root/text text" "$T/e.img" >/dev/null 2>&1
	t_remember "$T/e.img"
	t_expect_refusal "btrfs-convert to hmac-sha256 without key" 'needs a key' \
		"$BIN/btrfs-convert" --csum hmac-sha256 "$T/e.img"
	t_expect_refusal "btrfs-convert hmac-sha256 --no-datasum" 'unauthenticated' \
		"$BIN/btrfs-convert" --csum hmac-sha256 --no-datasum "${K[@]}" "$T/e.img"
	t_expect_unchanged "$T/e.img" "the refused conversions of ext4"
	t_expect_ok "btrfs-convert to hmac-sha256 with key" "$BIN/btrfs-convert" --csum hmac-sha256 "${K[@]}" "$T/e.img"
	t_expect_ok "converted: checks with the key" "$BIN/btrfs" check --check-data-csum "${K[@]}" "$T/e.img"
	t_expect_key_refusal "btrfs-convert -r without key" "$NOKEY" "$BIN/btrfs-convert" -r "$T/e.img"
	t_expect_ok "btrfs-convert -r with key" "$BIN/btrfs-convert" -r "${K[@]}" "$T/e.img"
	t_expect_ok "rolled back: e2fsck clean" e2fsck -fn "$T/e.img"
	if debugfs -R "cat text" "$T/e.img" 2>/dev/null | cmp -s - "$T/root/text"; then
		t_ok "rolled back: file intact"
	else
		t_fail "rolled back: file differs"
	fi
else
	t_fail "mkfs.ext4/debugfs missing (e2fsprogs): cannot test btrfs-convert"
fi

t_done
