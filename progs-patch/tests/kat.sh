#!/bin/bash
# Known-answer tests of HMAC-SHA256 (RFC 4231, including keys longer than
# the block size, plus messages of 0, 64, 4096 and 16384 bytes) in every
# crypto backend the series supports and this machine builds: builtin (what
# Debian ships; reference and SHA-NI code), libgcrypt and libsodium.  Then the
# backends must agree on real filesystems: each one checks what the others
# made.  libkcapi cannot be tested here (AF_ALG does not work), its
# hmac-sha256 refuses to run.
source "$(dirname "$0")/lib.sh"
t_init "$@" # build-progs.sh options, e.g. --crypto libgcrypt

# $1: bin dir, $2: provider, $3..: names of the HMAC test runs to expect.
kat() {
	local bin=$1 provider=$2 run n; shift 2
	t_run "$bin/hash-vectest"
	if [ "$RC" -ne 0 ]; then
		t_fail "$provider: hash-vectest failed (status $RC): $(grep -E 'MISMATCH|FAIL' "$T/out" | head -n 3)"
		return
	fi
	t_expect_output "$provider: built with that provider" "^crypto provider: $provider\$"
	for run in "$@"; do
		n=$(grep -c "^$run vector [0-9]*: match\$" "$T/out" || true)
		if [ "$n" -eq 12 ]; then
			t_ok "$provider: $run, 7 RFC 4231 vectors + 2 at the block boundary + 3 of whole blocks match"
		else
			t_fail "$provider: $run: $n of 12 vectors match"
		fi
	done
	t_expect_output "$provider: no vector of any algorithm mismatches" '^all vectors match$'
}

runs=(hmac-sha256-ref)
if grep -qw sha_ni /proc/cpuinfo; then
	runs+=(hmac-sha256-ni)
else
	t_log "no SHA-NI on this CPU: only the reference SHA-256 is tested"
fi
kat "$BIN" builtin "${runs[@]}"

declare -A bins=([builtin]=$BIN)
for provider in libgcrypt libsodium; do
	bins[$provider]=$("$PP_DIR/build-progs.sh" --crypto "$provider") ||
		ba_die "cannot build the $provider variant"
	kat "${bins[$provider]}" "$provider" hmac-sha256
done
t_expect_refusal "libkcapi is refused, not shipped untested" 'libkcapi is not supported' \
	"$PP_DIR/build-progs.sh" --crypto libkcapi

# Every backend checks what every other one made, data included.
t_key "$T/k.key" 45
mkdir -p "$T/root"
head -c 1M /dev/urandom >"$T/root/data"
seq 1 30000 >"$T/root/text"
for maker in builtin libgcrypt libsodium; do
	t_image "$T/$maker.img" 300M
	t_expect_ok "mkfs with $maker" "${bins[$maker]}/mkfs.btrfs" -q -f --csum hmac-sha256 \
		--auth-key-file "$T/k.key" --rootdir "$T/root" "$T/$maker.img"
	t_expect_ok "python agrees with $maker on the superblock" \
		python3 "$PP_DIR/tests/oracle.py" super "$T/k.key" "$T/$maker.img"
	for checker in builtin libgcrypt libsodium; do
		[ "$checker" = "$maker" ] && continue
		t_expect_ok "$checker verifies every MAC $maker wrote" \
			"${bins[$checker]}/btrfs" check --check-data-csum --auth-key-file "$T/k.key" "$T/$maker.img"
	done
done

t_done
