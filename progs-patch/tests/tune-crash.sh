#!/bin/bash
# kill -9 a btrfstune conversion and a rekey at every step (named kill points
# in the test build btrfstune-failpoints, see tune/csum-failpoint.c) and at
# timed moments, rerun the same command: it must complete, check clean, and
# every file must be intact.
source "$(dirname "$0")/lib.sh"
t_init "$@" # build-progs.sh options, e.g. --crypto libgcrypt

# About 100 MiB of data: two transactions of new data checksums.
t_change_fixture "$T/base.img" 400M 17

convert=(--csum hmac-sha256 --new-auth-key-file "$T/k1.key")
rekey=(--auth-key-file "$T/k1.key" --new-auth-key-file "$T/k2.key")

# Rerun after a kill, then verify everything with key $2.
complete_and_verify() {
	local what=$1 key=$2; shift 2
	t_run "$BIN/btrfstune" "$@" "$T/w.img"
	if [ "$RC" -ne 0 ]; then
		t_fail "$what: the rerun failed (status $RC): $(tail -n 3 "$T/out")"
		return
	fi
	t_run "$BIN/btrfs" check --check-data-csum --auth-key-file "$key" "$T/w.img"
	if [ "$RC" -ne 0 ]; then
		t_fail "$what: check after the rerun failed: $(tail -n 3 "$T/out")"
		return
	fi
	rm -rf "$T/restored" && mkdir "$T/restored"
	if "$BIN/btrfs" restore --auth-key-file "$key" "$T/w.img" "$T/restored" >/dev/null 2>&1 &&
	   diff -r "$T/root" "$T/restored" >/dev/null; then
		t_ok "$what: completed, checks clean, all files intact"
	else
		t_fail "$what: files lost or changed"
	fi
}

# Kill at the named point of the change "$@" applied to image $1.
kill_at() {
	local point=$1 src=$2 key=$3; shift 3
	cp --sparse=always "$src" "$T/w.img"
	set +e
	# The group's redirection also silences bash's "Killed" report.
	{ BTRFSTUNE_CSUM_CHANGE_KILL_AT=$point "$BIN/btrfstune-failpoints" "$@" "$T/w.img" >"$T/killed.log" 2>&1; } 2>/dev/null
	local rc=$?
	set -e
	if [ "$rc" -ne 137 ]; then
		t_fail "kill point $point not reached (status $rc): $(tail -n 2 "$T/killed.log")"
		return
	fi
	complete_and_verify "killed at $point" "$key" "$@"
}

# Conversion crc32c -> hmac-sha256: every step.
for point in started data-batch:1 data-batch:2 phase:1 delete-old-csums phase:2 \
	     activate-new-csums phase:3 metadata-block:1 metadata-block:5 \
	     metadata-done finished; do
	kill_at "$point" "$T/base.img" "$T/k1.key" "${convert[@]}"
done

# A converted image for the rekey.
cp --sparse=always "$T/base.img" "$T/hmac.img"
"$BIN/btrfstune" "${convert[@]}" "$T/hmac.img" >/dev/null 2>&1 || ba_die "conversion failed"
for point in started data-batch:2 activate-new-csums metadata-block:3 finished; do
	kill_at "$point" "$T/hmac.img" "$T/k2.key" "${rekey[@]}"
done
# Killed twice in a row, in different steps.
cp --sparse=always "$T/hmac.img" "$T/w.img"
t_tune_killed_at data-batch:1 "${rekey[@]}" "$T/w.img"
t_tune_killed_at metadata-block:2 "${rekey[@]}" "$T/w.img"
complete_and_verify "rekey killed twice" "$T/k2.key" "${rekey[@]}"

# kill -9 from outside at moments spread over a whole run, wherever they land.
cp --sparse=always "$T/base.img" "$T/w.img"
start=$(date +%s%N)
"$BIN/btrfstune" "${convert[@]}" "$T/w.img" >/dev/null 2>&1 || ba_die "timing run failed"
full_ms=$(( ($(date +%s%N) - start) / 1000000 ))
t_log "a full conversion takes ${full_ms} ms"
for pct in 20 50 80; do
	cp --sparse=always "$T/base.img" "$T/w.img"
	"$BIN/btrfstune" "${convert[@]}" "$T/w.img" >"$T/killed.log" 2>&1 &
	pid=$!
	sleep "$(awk -v ms="$full_ms" -v p="$pct" 'BEGIN { printf "%.3f", ms * p / 100000 }')"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	complete_and_verify "kill -9 at ${pct}% ($(tail -n 1 "$T/killed.log"))" "$T/k1.key" "${convert[@]}"
done

t_done
