#!/bin/bash
# Power cuts, not only kill -9: after a kill the page cache still holds every
# write, after a power cut what was not flushed is gone.  lostwrites.so (an
# LD_PRELOAD library, built here from lostwrites.c) makes the image behave
# like a disk with a volatile write cache: at the Nth fsync of the image the
# writes since the previous one are undone and btrfstune exits.  For a
# conversion (crc32c to hmac-sha256) and a rekey, at every flush of the run:
#   - every unflushed write lost: the same command completes the change, the
#     filesystem checks clean with the new key and every file is intact; a
#     cancel, where the change still allows one, gives back the filesystem
#     as it was, checking clean with the old checksum or key;
#   - every other unflushed write lost (the cache wrote out of order);
#   - the last write of the primary superblock torn (its first 2 KiB landed):
#     the rerun goes on from a superblock copy if the copies hold the change
#     in progress; if they do not (the change's first commit was torn), it
#     refuses to go on from one, btrfs rescue super-recover restores the
#     primary from them, and the same command starts the change again.
# A power cut before the change's first commit leaves the filesystem as it
# was: it checks clean with the old checksum or key.
source "$(dirname "$0")/lib.sh"
t_init "$@" # build-progs.sh options, e.g. --crypto libgcrypt

LIB=$T/lostwrites.so
gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$LIB" "$PP_DIR/tests/lostwrites.c" -ldl ||
	ba_die "cannot build lostwrites.so"

# 72 MiB of data: two transactions of new data checksums.
t_change_fixture "$T/crc.img" 300M 12
cp --sparse=always "$T/crc.img" "$T/hmac.img"
"$BIN/btrfstune" --csum hmac-sha256 --new-auth-key-file "$T/k1.key" "$T/hmac.img" >/dev/null 2>&1 ||
	ba_die "conversion failed"

# Clean with the key file $2 ("" for none), every file intact; what went
# wrong in $T/intact.log.
intact() {
	local img=$1 key=$2
	local -a k=()
	[ -n "$key" ] && k=(--auth-key-file "$key")
	"$BIN/btrfs" check --check-data-csum "${k[@]}" "$img" >"$T/intact.log" 2>&1 || return 1
	rm -rf "$T/restored" && mkdir "$T/restored"
	"$BIN/btrfs" restore "${k[@]}" "$img" "$T/restored" >"$T/intact.log" 2>&1 &&
		diff -r "$T/root" "$T/restored" >"$T/intact.log" 2>&1
}

# The superblock says a change is in progress (flag 1 << 37).
changing() {
	local flags
	flags=$("$BIN/btrfs" inspect-internal dump-super "$1" | awk '$1 == "flags" { print $2 }')
	[ -n "$flags" ] && (( flags & (1 << 37) ))
}

# The primary superblock of $1 restored from its copies, with the key file $2
# ("" for none): the filesystem before the change, clean and intact.
recover() {
	local img=$1 key=$2
	local -a k=()
	[ -n "$key" ] && k=(--auth-key-file "$key")
	"$BIN/btrfs" rescue super-recover -y "${k[@]}" "$img" >"$T/recover.log" 2>&1
	grep -q 'Recovered bad superblocks successful' "$T/recover.log" && intact "$img" "$key"
}

# Number of fsyncs of the image in a whole change "$@" of copy of $1.
count_flushes() {
	local src=$1; shift
	cp --sparse=always "$src" "$T/w.img"
	LD_PRELOAD=$LIB LOSTWRITES_FILE=$T/w.img LOSTWRITES_COUNT=$T/count \
		"$BIN/btrfstune" "$@" "$T/w.img" >/dev/null 2>&1 || ba_die "the counting run failed"
	cat "$T/count"
}

# Power cut at flush $2 (mode $3: all, odd, torn) of the change "$@" on a
# copy of $1; $4 is the key file of the state before ("" for crc32c).
cut_at() {
	local src=$1 n=$2 mode=$3 before=$4 what
	local -a env=(LOSTWRITES_FILE="$T/w.img" LOSTWRITES_CRASH_AT="$n")
	shift 4
	what="${src##*/} flush $n ($mode lost)"
	case $mode in
	odd) env+=(LOSTWRITES_KEEP=odd) ;;
	torn) env+=(LOSTWRITES_TEAR=65536) ;;
	esac
	cp --sparse=always "$src" "$T/w.img"
	t_run env LD_PRELOAD="$LIB" "${env[@]}" "$BIN/btrfstune" "$@" "$T/w.img"
	if [ "$RC" -ne 137 ]; then
		t_fail "$what: no power cut (status $RC): $(tail -n 2 "$T/out")"
		return
	fi
	# No change in progress: not started (the filesystem as it was), or
	# finished (the primary superblock of the new key; its copies may still
	# be of the commit before, which the rerun writes again).
	if [ "$mode" != torn ] && ! changing "$T/w.img" && ! intact "$T/w.img" "$before" &&
	   ! python3 "$PP_DIR/tests/oracle.py" super "$NEW" "$T/w.img" >/dev/null 2>&1; then
		t_fail "$what: neither the old filesystem, nor the new, nor a change in progress"
	fi
	if [ "$mode" = all ]; then
		cp --sparse=always "$T/w.img" "$T/c.img"
		t_run "$BIN/btrfstune" --cancel-csum-change "$@" "$T/c.img"
		if [ "$RC" -eq 0 ] && ! intact "$T/c.img" "$before"; then
			t_fail "$what: cancelled, but not the filesystem it was"
		elif [ "$RC" -ne 0 ] && ! grep -Eq 'nothing to cancel|can no longer be cancelled' "$T/out"; then
			t_fail "$what: the cancel failed: $(tail -n 2 "$T/out")"
		fi
		[ "$RC" -eq 0 ] && CANCELLED=$((CANCELLED + 1))
	fi
	t_run "$BIN/btrfstune" "$@" "$T/w.img"
	# The change's first commit torn: its copies hold no change in progress.
	if [ "$mode" = torn ] && [ "$RC" -ne 0 ] &&
	   grep -q 'does not go on from a copy outside a change' "$T/out"; then
		if ! recover "$T/w.img" "$before"; then
			t_fail "$what: super-recover did not give back the filesystem as it was: $(tail -n 2 "$T/recover.log" "$T/intact.log")"
			return 1
		fi
		RECOVERED=$((RECOVERED + 1))
		t_run "$BIN/btrfstune" "$@" "$T/w.img"
	fi
	if [ "$RC" -ne 0 ]; then
		t_fail "$what: the rerun failed (status $RC): $(grep -m 2 -E 'ERROR|WARN' "$T/out")"
	elif ! intact "$T/w.img" "$NEW"; then
		t_fail "$what: completed, but not clean or not intact: $(tail -n 3 "$T/intact.log")"
	else
		[ "$mode" = torn ] && grep -q 'going on from its copy' "$T/out" && TORN=$((TORN + 1))
		return 0
	fi
	return 1
}

# Every flush of a change, in every mode.
every_flush() {
	local src=$1 before=$2 name=$3 n total mode ok
	shift 3
	total=$(count_flushes "$src" "$@")
	for mode in all odd torn; do
		ok=0 CANCELLED=0 TORN=0 RECOVERED=0
		for n in $(seq 1 "$total"); do
			cut_at "$src" "$n" "$mode" "$before" "$@" && ok=$((ok + 1))
		done
		t_log "$name, $mode unflushed writes lost: $ok of $total completed, $CANCELLED cancelled, $TORN from a superblock copy, $RECOVERED after super-recover"
		[ "$ok" = "$total" ] && t_ok "$name: a power cut at each of its $total flushes ($mode unflushed writes lost), then the same command: complete, clean, intact"
		if [ "$mode" = all ] && [ "$CANCELLED" -lt 2 ]; then
			t_fail "$name: only $CANCELLED power cuts left a change that could be cancelled"
		fi
		if [ "$mode" = torn ] && [ "$TORN" -lt 2 ]; then
			t_fail "$name: only $TORN torn primary superblocks were resumed from a copy"
		fi
	done
}

NEW=$T/k1.key
every_flush "$T/crc.img" "" "conversion to hmac-sha256" --csum hmac-sha256 --new-auth-key-file "$T/k1.key"
NEW=$T/k2.key
every_flush "$T/hmac.img" "$T/k1.key" "rekey" --auth-key-file "$T/k1.key" --new-auth-key-file "$T/k2.key"

t_done
