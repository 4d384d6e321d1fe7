# shellcheck shell=bash
# Helpers for the progs-patch tests.  Sourced, not run.
#
# Every test gets the patched binaries from build-progs.sh ($BIN), a private
# scratch directory ($T, removed at exit, keys included) and assertions that
# fail the test with a message.

set -euo pipefail

PP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../../tools/lib.sh
source "$PP_DIR/../tools/lib.sh"

T_NAME=${0##*/}
T_FAILS=0
T_START=$SECONDS

t_log() { printf '%s: %s\n' "$T_NAME" "$*" >&2; }
t_fail() {
	printf '%s: FAIL: %s\n' "$T_NAME" "$*" >&2
	T_FAILS=$((T_FAILS + 1))
}
t_ok() { printf '%s: ok: %s\n' "$T_NAME" "$*" >&2; }

t_cleanup() {
	# Keys are secrets even in tests: wipe them before removing.
	if [ -n "${T:-}" ] && [ -d "$T" ]; then
		find "$T" -name '*.key' -type f -exec shred -u {} + 2>/dev/null || true
		rm -rf "$T"
	fi
}

t_init() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/progs-test.XXXXXX")
	trap t_cleanup EXIT
	BIN=$("$PP_DIR/build-progs.sh" "$@") || ba_die "build-progs.sh failed"
	[ -x "$BIN/btrfs" ] || ba_die "no btrfs in $BIN"
	export LANG=C LC_ALL=C
	# Uninitialized heap memory is garbage, not zeros, also outside meson.
	export MALLOC_PERTURB_=${MALLOC_PERTURB_:-165}
}

# Finish: exit status says whether every assertion held.
t_done() {
	local secs=$((SECONDS - T_START))
	if [ "$T_FAILS" -gt 0 ]; then
		t_log "$T_FAILS assertion(s) failed (${secs}s)"
		exit 1
	fi
	t_log "all assertions passed (${secs}s)"
	exit 0
}

# A random key of $2 bytes (default 32) in file $1, mode 0600.
t_key() {
	(umask 077 && head -c "${2:-32}" /dev/urandom >"$1")
}

# Run "$@" with output in $T/out; sets RC.  Never fails the shell.
t_run() {
	set +e
	"$@" >"$T/out" 2>&1
	RC=$?
	set -e
	return 0
}

# The command succeeds.
t_expect_ok() {
	local what=$1; shift
	t_run "$@"
	if [ "$RC" -eq 0 ]; then
		t_ok "$what"
	else
		t_fail "$what: exit status $RC: $(tail -n 5 "$T/out")"
	fi
}

# Run the test build btrfstune-failpoints with "$@", killed at kill point $1
# (NAME[:N]); its output and bash's "Killed" report are dropped.
t_tune_killed_at() {
	local point=$1; shift
	{ BTRFSTUNE_CSUM_CHANGE_KILL_AT=$point "$BIN/btrfstune-failpoints" "$@"; } >/dev/null 2>&1 || true
}

# Killed by a signal: bash reports 128 + the signal number (1..64).  Statuses
# above 192 are exit() codes (some btrfs commands return -errno from main).
t_signalled() { [ "$1" -gt 128 ] && [ "$1" -le 192 ]; }

# The command fails cleanly (not killed by a signal) and its output matches
# the extended regex $2.
t_expect_refusal() {
	local what=$1 pattern=$2; shift 2
	t_run "$@"
	if [ "$RC" -eq 0 ]; then
		t_fail "$what: succeeded, expected a refusal"
	elif t_signalled "$RC"; then
		t_fail "$what: died with status $RC (signal $((RC - 128)))"
	elif ! grep -Eq -- "$pattern" "$T/out"; then
		t_fail "$what: status $RC but no /$pattern/ in: $(tail -n 5 "$T/out")"
	else
		t_ok "$what (status $RC)"
	fi
}

# The last command's output matches / does not match.
t_expect_output() {
	local what=$1 pattern=$2
	if grep -Eq -- "$pattern" "$T/out"; then
		t_ok "$what"
	else
		t_fail "$what: no /$pattern/ in: $(tail -n 5 "$T/out")"
	fi
}

# Flip bit 0 of the byte at offset $2 of file $1.
t_flip() {
	python3 - "$1" "$2" <<'EOF'
import sys
with open(sys.argv[1], 'r+b') as f:
    off = int(sys.argv[2])
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 1]))
EOF
}

# Physical offset of copy $3 (1-based) of logical $2 on image $1, using key
# file $4 if given.
t_physical() {
	local img=$1 logical=$2 copy=$3 key=${4:-}
	local -a k=()
	[ -n "$key" ] && k=(--auth-key-file "$key")
	"$BIN/btrfs-map-logical" "${k[@]}" -l "$logical" -b 4096 "$img" >"$T/map" 2>/dev/null || true
	awk -v c="$copy" '$1 == "mirror" && $2 == c { print $6; exit }' "$T/map"
}

# Data sectors with a checksum on image $1 (key file $2 if given): their
# logical addresses, one per line, in the checksum tree's order.  Select
# with sed, which reads them all: head's early exit would fail the pipe.
t_csum_logicals() {
	local -a k=()
	[ -z "${2:-}" ] || k=(--auth-key-file "$2")
	"$BIN/btrfs" inspect-internal dump-tree "${k[@]}" -t csum --csum-items \
		"$1" >"$T/csums" || ba_die "cannot list the data checksums of $1"
	sed -n 's/^[[:space:]]*\[\([0-9]*\)\] 0x.*/\1/p' "$T/csums"
}

# Remember the content of image $1; t_expect_unchanged compares it later.
t_remember() {
	sha256sum <"$1" >"$1.sum"
}

# Image $1 is byte-identical to what t_remember saw: after $2 (a refusal)
# nothing was written.
t_expect_unchanged() {
	local img=$1 what=$2
	if sha256sum <"$img" | cmp -s - "$img.sum"; then
		t_ok "$what: the image is byte-identical"
	else
		t_fail "$what: the image changed"
	fi
	rm -f "$img.sum"
}

# Sparse image file $1 of size $2.
t_image() {
	rm -f "$1"
	truncate -s "$2" "$1"
}

# For the crash tests: keys $T/k1.key and $T/k2.key, and on image $1 (size
# $2) a crc32c filesystem of $3 files of 6 MiB and 300 small ones, from the
# tree $T/root.  Over 64 MiB of data takes two transactions of new data
# checksums.
t_change_fixture() {
	local img=$1 size=$2 big=$3 i
	t_key "$T/k1.key"
	t_key "$T/k2.key"
	mkdir -p "$T/root/big" "$T/root/small"
	for i in $(seq 1 "$big"); do head -c 6M /dev/urandom >"$T/root/big/f$i"; done
	for i in $(seq 1 300); do seq 1 $((i * 7)) >"$T/root/small/s$i"; done
	t_image "$img" "$size"
	"$BIN/mkfs.btrfs" -q -f --rootdir "$T/root" "$img" >/dev/null 2>&1 || ba_die "mkfs failed"
}
