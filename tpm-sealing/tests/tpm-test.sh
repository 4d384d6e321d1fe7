#!/bin/bash
# Integration tests of btrfs-auth against a private swtpm on loopback.
#
#   tpm-test.sh CASE
#
# Environment (set by meson): BA_TOOL, BA_TOOL_NOENC, BA_HELPER, BA_SRC_ROOT;
# BA_WRAP="valgrind" runs every btrfs-auth invocation under valgrind, which
# must report no error and no leak; BA_NO_PROGS=1 skips the patched
# mkfs.btrfs even where it is available.
set -euo pipefail

CASE=${1:?usage: tpm-test.sh CASE}
: "${BA_TOOL:?}" "${BA_TOOL_NOENC:?}" "${BA_HELPER:?}" "${BA_SRC_ROOT:?}"
# shellcheck source=../../tools/lib.sh
source "$BA_SRC_ROOT/tools/lib.sh" # ba_swtpm_tcp_start, ba_free_port_pair

# Every case runs in a session keyring of its own, so keys never leak
# between tests or into the caller's keyrings.
if [ -z "${BA_IN_SESSION:-}" ]; then
	export BA_IN_SESSION=1
	exec keyctl session - bash "$0" "$@"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ba-tpm-$CASE.XXXXXX")
TCTI=
USER_KEYS=()
cleanup() {
	local id
	for id in "${USER_KEYS[@]}"; do keyctl unlink "$id" @u >/dev/null 2>&1 || true; done
	stop_swtpm
	rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
	echo "FAIL [$CASE]: $*" >&2
	for f in "$WORK"/out "$WORK"/err "$WORK"/vg.*; do
		[ -s "$f" ] && { echo "--- ${f##*/}:"; cat "$f"; } >&2
	done
	exit 1
}
step() { echo "--- $*"; }

WRAP=()
if [ "${BA_WRAP:-}" = valgrind ]; then
	# shellcheck disable=SC2054 # the commas belong to valgrind's option values
	WRAP=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
		--show-leak-kinds=definite,indirect --log-file="$WORK/vg.%p")
fi

# ---- swtpm ------------------------------------------------------------------

# swtpm with its state in $WORK/tpm, kept across restarts: a restart is
# a reboot, PCRs reset, seeds stay.
start_swtpm() {
	ba_swtpm_tcp_start "$WORK/tpm" "$WORK/swtpm.log" || fail "cannot start swtpm"
	TCTI=$BA_SWTPM_TCTI
	export TPM2TOOLS_TCTI=$TCTI
}

stop_swtpm() { ba_swtpm_tcp_stop; }

# ---- running btrfs-auth -----------------------------------------------------

# run ARGS...: runs btrfs-auth ($BIN, default $BA_TOOL) with stdin from
# $STDIN (default /dev/null), output in $WORK/out and $WORK/err, exit code
# in RC, which must never be a signal nor a valgrind report.
run() {
	RC=0
	rm -f "$WORK"/vg.*
	"${WRAP[@]}" "${BIN:-$BA_TOOL}" "$@" <"${STDIN:-/dev/null}" >"$WORK/out" 2>"$WORK/err" || RC=$?
	[ "$RC" -lt 128 ] || fail "btrfs-auth $* died of signal $((RC - 128))"
	[ "$RC" != 99 ] || fail "valgrind reports errors for: btrfs-auth $*"
}

# expect RC ARGS...: run, and assert the exit code.
expect() {
	local want=$1
	shift
	run "$@"
	[ "$RC" = "$want" ] || fail "btrfs-auth $* exited $RC, expected $want"
}

err_has() { grep -qF -- "$1" "$WORK/err" || fail "stderr does not mention '$1'"; }
err_lacks() { ! grep -qF -- "$1" "$WORK/err" || fail "stderr mentions '$1'"; }
out_has() { grep -qF -- "$1" "$WORK/out" || fail "stdout does not mention '$1'"; }

hex_of() { od -An -tx1 -v "$1" | tr -d ' \n'; }

# flip_byte FILE OFFSET [MASK]: XORs the byte, so it always changes (writing a fixed value may not).
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
	[ -n "$b" ] || fail "$1 has no byte at offset $2"
	# shellcheck disable=SC2059 # the format is the octal escape of the new byte
	printf "\\$(printf %03o $((b ^ ${3:-0x55})))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# The key bytes must never show up in anything btrfs-auth prints.
assert_no_key_in_output() {
	local k
	k=$(hex_of "$1")
	! grep -qi -- "$k" "$WORK/out" "$WORK/err" || fail "key material printed"
}

have_key() { keyctl search "${2:-@s}" logon "$1" >/dev/null 2>&1; }

new_key() { head -c "${2:-32}" /dev/urandom >"$1"; }

pcr_value() { # PCR -> hex of its sha256 value
	tpm2_pcrread "sha256:$1" -o "$WORK/pcr.bin" >/dev/null
	hex_of "$WORK/pcr.bin"
}

sha256_hex() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
zeros64() { printf '0%.0s' {1..64}; }
sha256_of_hex() { python3 -c 'import hashlib, sys; print(hashlib.sha256(bytes.fromhex(sys.argv[1])).hexdigest())' "$1"; }

# measurement KEYFILE DESCRIPTION [UUID]: what the lock measures for a loaded key (measure.h),
# computed independently of the tool.
measurement() { python3 "$BA_SRC_ROOT/tpm-sealing/tests/lock-measurement.py" measurement "$@"; }

# ---- superblock images ------------------------------------------------------

MKFS_DIR=
find_mkfs() {
	local script=$BA_SRC_ROOT/progs-patch/build-progs.sh dir
	if [ -n "${BA_NO_PROGS:-}" ]; then
		echo "superblock images: constructed by ba-test-helper mksb (BA_NO_PROGS set)"
		return
	fi
	if [ ! -f "$script" ]; then
		echo "superblock images: constructed by ba-test-helper mksb ($script does not exist)"
		return
	fi
	if dir=$(bash "$script" 2>"$WORK/progs.log" | tail -n 1) && [ -x "$dir/mkfs.btrfs" ]; then
		MKFS_DIR=$dir
		echo "superblock images: made by the patched $dir/mkfs.btrfs"
	else
		echo "superblock images: constructed by ba-test-helper mksb ($script failed or printed no mkfs.btrfs dir)"
		tail -n 5 "$WORK/progs.log" || true
	fi
}

make_image() { # IMAGE KEYFILE UUID
	if [ -n "$MKFS_DIR" ]; then
		truncate -s 256M "$1"
		"$MKFS_DIR/mkfs.btrfs" -q -f --csum hmac-sha256 --auth-key-file "$2" -U "$3" "$1" >"$WORK/mkfs.log" 2>&1 ||
			{ cat "$WORK/mkfs.log" >&2; fail "patched mkfs.btrfs failed on $1"; }
	else
		"$BA_HELPER" mksb "$1" "$2" "$3"
	fi
}

# ---- cases --------------------------------------------------------------------

case_seal_load() {
	local name="t$$-root" id desc before
	start_swtpm
	new_key "$WORK/key"

	step "enroll by NAME creates <config-dir>/NAME.sealed, 0600 in a 0700 directory"
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 0,7 --config-dir "$WORK/etc" "$name"
	[ "$(stat -c %a "$WORK/etc/$name.sealed")" = 600 ] || fail "key file mode is not 0600"
	[ "$(stat -c %a "$WORK/etc")" = 700 ] || fail "config dir mode is not 0700"
	assert_no_key_in_output "$WORK/key"

	step "enroll refuses to replace without --force, replaces with it"
	before=$(sha256sum <"$WORK/etc/$name.sealed")
	expect 1 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 7 --config-dir "$WORK/etc" "$name"
	err_has "already exists"
	[ "$(sha256sum <"$WORK/etc/$name.sealed")" = "$before" ] || fail "key file changed without --force"
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --force --key-file "$WORK/key" --pcrs 0,7 --config-dir "$WORK/etc" "$name"

	step "load puts a logon key btrfs:NAME into the chosen keyring"
	expect 0 load --keyring @s --config-dir "$WORK/etc" "$name"
	assert_no_key_in_output "$WORK/key"
	id=$(keyctl search @s logon "btrfs:$name") || fail "btrfs:$name not in the session keyring"
	desc=$(keyctl rdescribe "$id")
	# Possessor: view, search, link; owner: view.  No write, no setattr: nobody updates, revokes or reopens it.
	[ "$desc" = "logon;0;0;19010000;btrfs:$name" ] || fail "key is '$desc', expected logon;0;0;19010000;btrfs:$name"
	! printf forged | keyctl pupdate "$id" 2>/dev/null || fail "another process could update the loaded key"
	! keyctl setperm "$id" 0x3f3f0000 2>/dev/null || fail "another process could change the key's permissions"
	grep -q "^$(printf '%08x' "$id") .* logon *btrfs:$name: 32\$" /proc/keys || fail "/proc/keys lacks the logon key"
	! keyctl pipe "$id" >/dev/null 2>&1 || fail "the logon key's payload is readable from userspace"

	step "loading again finds the key and leaves it, without asking the TPM (which may be locked by then)"
	stop_swtpm
	expect 0 load --keyring session --config-dir "$WORK/etc" --tpm-wait 0 "$name"
	err_has "btrfs:$name is already in the session keyring (key $id)"
	[ "$(keyctl search @s logon "btrfs:$name")" = "$id" ] || fail "a second key was added"
	start_swtpm

	step "default keyring is root's user keyring (@u)"
	expect 0 load --config-dir "$WORK/etc" "$name"
	id=$(keyctl search @u logon "btrfs:$name") || fail "btrfs:$name not in @u"
	USER_KEYS+=("$id")
	err_has "user keyring"

	step "key from stdin, path target, NAME from the file name"
	STDIN=$WORK/key expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file - --pcrs 7 "$WORK/other.sealed"
	expect 0 status --no-tpm "$WORK/other.sealed"
	out_has "btrfs:other"

	step "--generate writes the recovery key once, 0600, never over an existing file"
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --generate --recovery-file "$WORK/recovery.key" --pcrs 7 "$WORK/gen.sealed"
	[ "$(stat -c %s:%a "$WORK/recovery.key")" = 32:600 ] || fail "recovery key is not 32 bytes, mode 0600"
	assert_no_key_in_output "$WORK/recovery.key"
	before=$(sha256sum <"$WORK/recovery.key")
	expect 1 enroll --no-recovery --allow-unmeasured-initramfs --generate --recovery-file "$WORK/recovery.key" --pcrs 7 "$WORK/gen2.sealed"
	err_has "already exists"
	[ "$(sha256sum <"$WORK/recovery.key")" = "$before" ] || fail "recovery key overwritten"
	[ ! -e "$WORK/gen2.sealed" ] || fail "a key file was written for a refused enrollment"
	expect 0 load --keyring @s "$WORK/gen.sealed"
	have_key btrfs:gen || fail "generated key not loaded"

	step "a key file for another NAME is refused by NAME"
	cp "$WORK/gen.sealed" "$WORK/etc/renamed.sealed"
	expect 7 load --keyring @s --config-dir "$WORK/etc" renamed
	err_has "holds the key btrfs:gen, not btrfs:renamed"
}

case_srk() {
	start_swtpm
	new_key "$WORK/key"

	step "without a persistent SRK the ECC template is created transiently, the same every time"
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 7 "$WORK/transient.sealed"

	step "a persistent SRK at 0x81000001 is used when present"
	tpm2_createprimary -Q -C o -g sha256 -G ecc256:aes128cfb -c "$WORK/srk.ctx"
	tpm2_evictcontrol -Q -C o -c "$WORK/srk.ctx" 0x81000001
	tpm2_flushcontext -t # no resource manager on swtpm: free the transient copy
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 7 "$WORK/persistent.sealed"
	expect 0 load --keyring @s "$WORK/persistent.sealed"

	step "a different persistent key does not hide the transient SRK a file was sealed under"
	tpm2_evictcontrol -Q -C o -c 0x81000001
	tpm2_createprimary -Q -C o -g sha256 -G ecc256:aes256cfb -c "$WORK/other.ctx"
	tpm2_evictcontrol -Q -C o -c "$WORK/other.ctx" 0x81000001
	tpm2_flushcontext -t
	expect 0 load --keyring @s "$WORK/transient.sealed"
	have_key btrfs:transient || fail "key sealed under the transient SRK not loaded"

	step "a reseal salts to the SRK the file names, not to the other key now at 0x81000001"
	name_of() { "$BA_TOOL" status --no-tpm "$1" | sed -n 's/^Parent key name: *//p'; }
	before=$(name_of "$WORK/transient.sealed")
	expect 0 reseal --key-file "$WORK/key" --config-dir "$WORK" --no-update-initramfs transient
	[ "$(name_of "$WORK/transient.sealed")" = "$before" ] || fail "the reseal moved the key under another SRK"
	keyctl clear @s
	expect 0 load --keyring @s "$WORK/transient.sealed"

	step "the SRK a file was sealed under is gone: exit 10, named as another TPM or a cleared one"
	expect 10 load --keyring @s "$WORK/persistent.sealed"
	err_has "This TPM has no storage root key named"
	expect 10 status "$WORK/persistent.sealed"
	out_has "lacks the storage root key"
}

case_check_image() {
	local u1=11111111-2222-3333-4444-555555555555 u2=66666666-7777-8888-9999-aaaaaaaaaaaa
	start_swtpm
	find_mkfs
	new_key "$WORK/key"
	new_key "$WORK/other"
	make_image "$WORK/a.img" "$WORK/key" "$u1"
	make_image "$WORK/b.img" "$WORK/other" "$u2"

	step "enroll --device records the fsid and refuses a key that is not the filesystem's"
	expect 8 enroll --no-recovery --key-file "$WORK/other" --device "$WORK/a.img" "$WORK/x.sealed"
	err_has "is not the key of btrfs $u1 on $WORK/a.img"
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --device "$WORK/a.img" --pcrs 7 "$WORK/a.sealed"
	expect 0 status --no-tpm "$WORK/a.sealed"
	out_has "$u1"

	step "--check accepts the right key for the right filesystem"
	expect 0 load --check "$WORK/a.img" --keyring @s "$WORK/a.sealed"
	have_key btrfs:a || fail "key not loaded after a good --check"

	step "--check names the device and both UUIDs when the file is for another filesystem, before the TPM"
	expect 8 load --check "$WORK/b.img" --keyring @s --tcti "device:$WORK/no-tpm" --tpm-wait 0 "$WORK/a.sealed"
	err_has "$WORK/b.img holds btrfs $u2, but btrfs:a was enrolled for btrfs $u1"

	step "--check refuses a key that does not authenticate the superblock; nothing is loaded"
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 7 "$WORK/nouuid.sealed"
	expect 8 load --check "$WORK/b.img" --keyring @s "$WORK/nouuid.sealed"
	err_has "The key btrfs:nouuid is not the key of btrfs $u2 on $WORK/b.img"
	! have_key btrfs:nouuid || fail "a key that failed --check was loaded"

	step "--check refuses what is not an authenticated btrfs, and unreadable devices"
	truncate -s 1M "$WORK/zero.img"
	expect 8 load --check "$WORK/zero.img" --keyring @s "$WORK/nouuid.sealed"
	err_has "not a btrfs filesystem"
	expect 12 load --check "$WORK/missing.img" --keyring @s "$WORK/nouuid.sealed"
	err_has "Cannot read the btrfs superblock of $WORK/missing.img"
}

case_pcr_policy() {
	local d future
	start_swtpm
	new_key "$WORK/key"
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 7,8 "$WORK/p.sealed"
	expect 0 status "$WORK/p.sealed"
	out_has "would unseal now"

	step "a PCR extended after sealing: policy error naming that PCR, nothing loaded"
	tpm2_pcrextend "8:sha256=$(sha256_hex boot-change)"
	expect 4 load --keyring @s "$WORK/p.sealed"
	err_has "PCR 8 differs"
	err_has "PCR 8 (sha256) is $(pcr_value 8)"
	err_lacks "PCR 7 ("
	! have_key btrfs:p || fail "key loaded despite the policy failure"
	expect 4 status "$WORK/p.sealed"
	out_has "would not unseal now: PCR 8 changed"

	step "--pcr-value seals to a planned future value"
	d=$(sha256_hex planned-update)
	future=$("$BA_HELPER" pcr-extend "$(pcr_value 8)" "$d")
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 7 --pcr-value "8=$future" "$WORK/f.sealed"
	expect 4 load --keyring @s "$WORK/f.sealed"
	tpm2_pcrextend "8:sha256=$d"
	expect 0 load --keyring @s "$WORK/f.sealed"
	have_key btrfs:f || fail "key sealed to the planned value not loaded"
}

case_pin() {
	start_swtpm
	new_key "$WORK/key"
	echo 1234 >"$WORK/pin"
	echo 9999 >"$WORK/badpin"
	echo 403 >"$WORK/pin403" # SHA-256("403") ends in a zero byte

	STDIN=$WORK/pin expect 0 enroll --no-recovery --allow-unmeasured-initramfs --pin --pin-from stdin --key-file "$WORK/key" --pcrs 7 "$WORK/pin.sealed"
	expect 0 status "$WORK/pin.sealed"
	out_has "required"
	out_has "would unseal now with the right PIN"

	step "right PIN"
	STDIN=$WORK/pin expect 0 load --pin-from stdin --keyring @s "$WORK/pin.sealed"
	have_key btrfs:pin || fail "key not loaded with the right PIN"

	step "wrong PIN and no PIN"
	keyctl clear @s
	STDIN=$WORK/badpin expect 5 load --pin-from stdin --keyring @s "$WORK/pin.sealed"
	err_has "Wrong PIN"
	! have_key btrfs:pin || fail "key loaded with a wrong PIN"
	expect 5 load --pin-from stdin --keyring @s "$WORK/pin.sealed"
	err_has "No PIN was entered"

	if [ -n "${BA_WRAP:-}" ]; then
		step "PIN from the terminal: skipped under valgrind (it relies on timing)"
	else
		step "PIN from the terminal: not echoed; a wrong first try is asked again (--pin-tries)"
		keyctl clear @s
		# The delays let btrfs-auth switch echo off first; it flushes typed-ahead input, as it should.
		{ sleep 1; echo 9999; sleep 1; echo 1234; } | timeout 30 script -qec \
			"$BA_TOOL load --pin-from tty --pin-tries 2 --keyring @s $WORK/pin.sealed" /dev/null >"$WORK/tty.out" ||
			{ cat "$WORK/tty.out" >&2; fail "load with a PIN from the terminal failed"; }
		grep -qF "PIN for btrfs:pin:" "$WORK/tty.out" || fail "no PIN prompt on the terminal"
		grep -qF "1 more PIN attempt" "$WORK/tty.out" || fail "no second PIN attempt"
		! grep -qE "1234|9999" "$WORK/tty.out" || fail "the PIN was echoed"
		have_key btrfs:pin || fail "key not loaded with the PIN from the terminal"
	fi

	step "PIN through systemd-ask-password: the configured timeout, a cached answer first, then the person"
	mkdir -p "$WORK/bin" "$WORK/askconf"
	# A cached answer (--accept-cached) is a stale, wrong PIN here.
	cat >"$WORK/bin/systemd-ask-password" <<-EOS
		#!/bin/sh
		n=\$(ls "$WORK"/ask-args.* 2>/dev/null | wc -l)
		printf '%s\n' "\$@" >"$WORK/ask-args.\$((n + 1))"
		[ -e "$WORK/ask-cancel" ] && exit 1
		case " \$* " in *" --accept-cached "*) echo 9999 ;; *) echo 1234 ;; esac
	EOS
	chmod +x "$WORK/bin/systemd-ask-password"
	printf 'BTRFS_AUTH_PIN_TIMEOUT = 123\n' >"$WORK/askconf/btrfs-auth.conf"
	keyctl clear @s
	tpm2_dictionarylockout --clear-lockout # the wrong PINs above
	PATH="$WORK/bin:$PATH" expect 0 load --config-dir "$WORK/askconf" --pin-from ask-password --keyring @s \
		"$WORK/pin.sealed"
	for f in "$WORK/ask-args.1" "$WORK/ask-args.2"; do
		grep -qx -- "--id=btrfs-auth:btrfs:pin" "$f" || fail "systemd-ask-password got no --id"
		grep -qx -- "PIN for btrfs:pin: " "$f" || fail "systemd-ask-password got no prompt"
		grep -qx -- "--timeout=123" "$f" || fail "systemd-ask-password did not get BTRFS_AUTH_PIN_TIMEOUT"
		grep -qx -- "--keyname=btrfs-auth-pin" "$f" || fail "systemd-ask-password got no --keyname"
	done
	grep -qx -- "--accept-cached" "$WORK/ask-args.1" || fail "the first PIN prompt does not accept a cached PIN"
	! grep -qx -- "--accept-cached" "$WORK/ask-args.2" || fail "after a wrong PIN the cached one was offered again"
	[ ! -e "$WORK/ask-args.3" ] || fail "systemd-ask-password ran more than twice"
	have_key btrfs:pin || fail "key not loaded with the PIN from systemd-ask-password"
	touch "$WORK/ask-cancel"
	keyctl clear @s
	PATH="$WORK/bin:$PATH" expect 5 load --pin-from ask-password --keyring @s "$WORK/pin.sealed"
	err_has "cancelled"

	step "PIN-only policy, and a PIN whose hash ends in zero"
	STDIN=$WORK/pin403 expect 0 enroll --no-recovery --allow-unmeasured-initramfs --pin --pin-from stdin --key-file "$WORK/key" --pcrs none "$WORK/z.sealed"
	STDIN=$WORK/pin403 expect 0 load --pin-from stdin --keyring @s "$WORK/z.sealed"
	keyctl clear @s
	STDIN=$WORK/pin expect 5 load --pin-from stdin --keyring @s "$WORK/z.sealed"
}

case_lockout() {
	local i saw_bad=0
	start_swtpm
	new_key "$WORK/key"
	echo 1234 >"$WORK/pin"
	echo 9999 >"$WORK/badpin"
	tpm2_dictionarylockout --setup-parameters --max-tries=3 --recovery-time=1000 --lockout-recovery-time=1000
	STDIN=$WORK/pin expect 0 enroll --no-recovery --allow-unmeasured-initramfs --pin --pin-from stdin --key-file "$WORK/key" --pcrs 7 "$WORK/pin.sealed"

	step "wrong PINs until the TPM locks out (max-tries 3)"
	for i in 1 2 3 4 5; do
		STDIN=$WORK/badpin run load --pin-from stdin --keyring @s "$WORK/pin.sealed"
		[ "$RC" = 5 ] || break
		err_has "Wrong PIN"
		saw_bad=$((saw_bad + 1))
	done
	[ "$RC" = 6 ] || fail "attempt $i exited $RC, expected the lockout (6)"
	[ "$saw_bad" = 3 ] || fail "$saw_bad wrong-PIN errors before the lockout, expected 3"
	err_has "dictionary-attack lockout"
	err_has "tpm2_dictionarylockout --clear-lockout"
	err_has "Lockout state: 3 of 3"

	step "even the right PIN is refused in lockout; status says so"
	STDIN=$WORK/pin expect 6 load --pin-from stdin --keyring @s "$WORK/pin.sealed"
	! have_key btrfs:pin || fail "key loaded during lockout"
	expect 6 status "$WORK/pin.sealed"
	out_has "dictionary-attack lockout"

	step "after clearing the lockout the right PIN works"
	tpm2_dictionarylockout --clear-lockout
	STDIN=$WORK/pin expect 0 load --pin-from stdin --keyring @s "$WORK/pin.sealed"
}

case_corrupt() {
	local size k off step_size=1 sealed=$WORK/c.sealed
	start_swtpm
	new_key "$WORK/key"
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 7 "$sealed"
	size=$(stat -c %s "$sealed")
	[ -z "${BA_WRAP:-}" ] || step_size=37 # valgrind is slow; every 37th length still crosses every record

	step "missing, empty, garbage: distinct errors, no crash"
	expect 11 load --keyring @s "$WORK/missing.sealed"
	err_has "does not exist"
	expect 11 status "$WORK/missing.sealed"
	: >"$WORK/empty.sealed"
	expect 7 load --keyring @s "$WORK/empty.sealed"
	head -c 600 /dev/urandom >"$WORK/garbage.sealed"
	expect 7 status --no-tpm "$WORK/garbage.sealed"
	err_has "bad magic"

	step "every truncation of a $size-byte key file (step $step_size) is refused"
	for ((k = 0; k < size; k += step_size)); do
		head -c "$k" "$sealed" >"$WORK/cut.sealed"
		expect 7 status --no-tpm "$WORK/cut.sealed"
	done
	for k in 16 100 $((size - 1)); do
		head -c "$k" "$sealed" >"$WORK/cut.sealed"
		expect 7 load --keyring @s "$WORK/cut.sealed"
		err_has "unusable"
	done

	step "unknown version"
	cp "$sealed" "$WORK/v2.sealed"
	printf '\002' | dd of="$WORK/v2.sealed" bs=1 seek=8 conv=notrunc status=none
	"$BA_HELPER" refix "$WORK/v2.sealed"
	expect 7 load --keyring @s "$WORK/v2.sealed"
	err_has "format version 2 is not supported"

	step "a flipped byte: checksum error; with the checksum forged, the TPM refuses the blob"
	off=$("$BA_HELPER" record-offset "$sealed" 11) # TPM_PRIVATE
	cp "$sealed" "$WORK/flip.sealed"
	flip_byte "$WORK/flip.sealed" $((off + 40))
	expect 7 load --keyring @s "$WORK/flip.sealed"
	err_has "checksum mismatch"
	"$BA_HELPER" refix "$WORK/flip.sealed"
	expect 7 load --keyring @s "$WORK/flip.sealed"
	err_has "TPM2_Load"
	! have_key btrfs:flip || fail "a corrupted key was loaded"

	step "a flipped byte in the public part with the checksum forged: inconsistent file"
	off=$("$BA_HELPER" record-offset "$sealed" 10) # TPM_PUBLIC
	cp "$sealed" "$WORK/pub.sealed"
	flip_byte "$WORK/pub.sealed" $((off + 10)) 0x01
	"$BA_HELPER" refix "$WORK/pub.sealed"
	expect 7 load --keyring @s "$WORK/pub.sealed"
}

case_lock() {
	local expected
	start_swtpm
	new_key "$WORK/key"
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 7 --lock-pcr 15 "$WORK/lk.sealed"
	expect 0 status --no-tpm "$WORK/lk.sealed"
	out_has "Lock PCR:         15"

	step "load --lock loads, then measures the key into PCR 15 and locks it, as documented"
	expect 0 load --lock --keyring @s --state-dir "$WORK/run" "$WORK/lk.sealed"
	have_key btrfs:lk || fail "key not loaded"
	err_has "Extended PCR 15"
	m=$(measurement "$WORK/key" btrfs:lk)
	[ "$(tr -d '\n' <"$WORK/run/lk.measure")" = "$m" ] || fail "lk.measure is not HMAC(key, label, description, fsid)"
	expected=$("$BA_HELPER" pcr-extend "$(zeros64)" "$(sha256_of_hex "$m")")
	expected=$("$BA_HELPER" pcr-extend "$expected" "$(sha256_hex btrfs-auth-lock-v1)")
	[ "$(pcr_value 15)" = "$expected" ] || fail "PCR 15 is $(pcr_value 15), expected $expected"

	step "a second load in the same boot fails with the policy error, naming the lock"
	keyctl clear @s
	expect 4 load --keyring @s "$WORK/lk.sealed"
	err_has "PCR 15 is this key's lock PCR"
	! have_key btrfs:lk || fail "key loaded after lock"

	step "lock on its own measures the recorded keys and extends again; resettable PCRs are refused"
	expect 0 lock --config-dir "$WORK" --state-dir "$WORK/run"
	err_has "Measured 1 loaded key into PCR 15"
	expected=$("$BA_HELPER" pcr-extend "$expected" "$(sha256_of_hex "$m")")
	expected=$("$BA_HELPER" pcr-extend "$expected" "$(sha256_hex btrfs-auth-lock-v1)")
	[ "$(pcr_value 15)" = "$expected" ] || fail "btrfs-auth lock did not extend PCR 15 as documented"

	step "lock forgets the PINs and passphrases systemd-ask-password cached in root's user keyring"
	keyctl link @u @s # as the lock unit's KeyringMode=shared does
	USER_KEYS+=("$(printf cached-secret | keyctl padd user btrfs-auth-recovery @u)")
	expect 0 lock --config-dir "$WORK" --state-dir "$WORK/run"
	err_has "Forgot the answers cached as btrfs-auth-recovery"
	! keyctl search @u user btrfs-auth-recovery >/dev/null 2>&1 || fail "the cached passphrase outlived the lock"
	keyctl unlink @u @s >/dev/null

	step "without --pcr, lock takes the lock PCR every key file names"
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 7 --lock-pcr 14 \
		--config-dir "$WORK/etc14" k14
	before14=$(pcr_value 14)
	expect 0 lock --config-dir "$WORK/etc14" --state-dir "$WORK/empty-run"
	err_has "Measured 0 loaded keys into PCR 14"
	[ "$(pcr_value 14)" = "$("$BA_HELPER" pcr-extend "$before14" "$(sha256_hex btrfs-auth-lock-v1)")" ] ||
		fail "lock did not extend the key file's lock PCR 14"
	expect 2 lock --pcr 16
	err_has "locality 0"
	expect 2 enroll --no-recovery --key-file "$WORK/key" --lock-pcr 23 "$WORK/x.sealed"

	expect 2 lock --pcr 17
	err_has "D-RTM"

	step "after a reboot (swtpm restart: PCRs reset) the key unseals again"
	stop_swtpm
	start_swtpm
	expect 0 load --keyring @s "$WORK/lk.sealed"

	step "the key already loaded: load --lock does not unseal, and still locks"
	expect 0 load --lock --keyring @s "$WORK/lk.sealed"
	err_has "btrfs:lk is already in the session keyring"
	expected=$("$BA_HELPER" pcr-extend "$(zeros64)" "$(sha256_hex btrfs-auth-lock-v1)")
	[ "$(pcr_value 15)" = "$expected" ] || fail "PCR 15 is $(pcr_value 15): an already loaded key was not locked"

	step "unsealed but refused by --check: the key is not loaded, and still the TPM is locked"
	keyctl clear @s
	stop_swtpm
	start_swtpm
	new_key "$WORK/key2"
	"$BA_HELPER" mksb "$WORK/other.img" "$WORK/key2" 11111111-2222-3333-4444-555555555555
	expect 8 load --lock --keyring @s --check "$WORK/other.img" "$WORK/lk.sealed"
	! have_key btrfs:lk || fail "a key that does not authenticate the device was loaded"
	expected=$("$BA_HELPER" pcr-extend "$(zeros64)" "$(sha256_hex btrfs-auth-lock-v1)")
	[ "$(pcr_value 15)" = "$expected" ] || fail "PCR 15 is $(pcr_value 15): the unsealed key was not locked away"
	expect 4 load --keyring @s "$WORK/lk.sealed"
}

case_param_encryption() {
	local k
	start_swtpm
	new_key "$WORK/key"
	k=$(hex_of "$WORK/key")
	echo 5678 >"$WORK/pin"

	step "enroll traffic carries the key encrypted"
	STDIN=$WORK/pin TCTI_PCAP_FILE=$WORK/enroll.pcap expect 0 enroll --no-recovery --allow-unmeasured-initramfs --tcti "pcap:$TCTI" --pin --pin-from stdin \
		--key-file "$WORK/key" --pcrs 7 "$WORK/e.sealed"
	"$BA_HELPER" contains "$WORK/enroll.pcap" 00000153 || fail "capture holds no TPM2_Create: nothing was captured"
	! "$BA_HELPER" contains "$WORK/enroll.pcap" "$k" || fail "the key crossed the TPM bus in clear during enroll"

	step "load traffic carries the key encrypted, the PIN never"
	STDIN=$WORK/pin TCTI_PCAP_FILE=$WORK/load.pcap expect 0 load --tcti "pcap:$TCTI" --pin-from stdin \
		--keyring @s "$WORK/e.sealed"
	"$BA_HELPER" contains "$WORK/load.pcap" 0000015e || fail "capture holds no TPM2_Unseal: nothing was captured"
	! "$BA_HELPER" contains "$WORK/load.pcap" "$k" || fail "the key crossed the TPM bus in clear during load"
	! "$BA_HELPER" contains "$WORK/load.pcap" "$(printf 5678 | od -An -tx1 | tr -d ' \n')" ||
		fail "the PIN crossed the TPM bus"

	step "the same capture without parameter encryption shows the key: the check above can fail"
	keyctl clear @s
	STDIN=$WORK/pin TCTI_PCAP_FILE=$WORK/noenc.pcap BIN=$BA_TOOL_NOENC expect 0 load --tcti "pcap:$TCTI" \
		--pin-from stdin --keyring @s "$WORK/e.sealed"
	err_has "TEST BUILD"
	"$BA_HELPER" contains "$WORK/noenc.pcap" "$k" || fail "key not visible without encryption: the capture check is blind"
	STDIN=$WORK/pin TCTI_PCAP_FILE=$WORK/noenc-enroll.pcap BIN=$BA_TOOL_NOENC expect 0 enroll --no-recovery --allow-unmeasured-initramfs --tcti "pcap:$TCTI" \
		--pin --pin-from stdin --key-file "$WORK/key" --pcrs 7 "$WORK/n.sealed"
	"$BA_HELPER" contains "$WORK/noenc-enroll.pcap" "$k" || fail "key not visible in an unencrypted TPM2_Create"
}

case_no_tpm() {
	local start elapsed port late
	new_key "$WORK/key"
	start_swtpm
	expect 0 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --pcrs 7 "$WORK/k.sealed"
	stop_swtpm

	step "a device TCTI that never appears: bounded wait, exit 3"
	start=$(date +%s%N)
	expect 3 load --keyring @s --tcti "device:$WORK/tpmrm0" --tpm-wait 1 "$WORK/k.sealed"
	elapsed=$((($(date +%s%N) - start) / 1000000))
	err_has "$WORK/tpmrm0 did not appear within 1 s"
	if [ "$elapsed" -lt 900 ] || [ "$elapsed" -ge 5000 ]; then fail "waited $elapsed ms for a 1 s --tpm-wait"; fi

	step "a missing key file is reported without waiting for the TPM"
	expect 11 load --keyring @s --tcti "device:$WORK/tpmrm0" --tpm-wait 30 "$WORK/none.sealed"

	step "a TCTI whose library is missing, or a malformed one: exit 3 at once"
	expect 3 load --keyring @s --tcti nosuch:x --tpm-wait 30 "$WORK/k.sealed"
	err_has "libtss2-tcti-nosuch.so.0 is not installed"
	expect 3 load --keyring @s --tcti swtpm:bogus=1 --tpm-wait 30 "$WORK/k.sealed"
	err_has "is invalid"

	step "a TCTI that cannot connect: exit 3; TPM2TOOLS_TCTI is honoured"
	port=$(ba_free_port_pair)
	TPM2TOOLS_TCTI="swtpm:host=127.0.0.1,port=$port" expect 3 load --keyring @s --tpm-wait 0 "$WORK/k.sealed"
	err_has "Cannot open the TPM through TCTI \"swtpm:host=127.0.0.1,port=$port\""
	expect 3 status "$WORK/k.sealed" --tcti "swtpm:host=127.0.0.1,port=$port"
	out_has "Key description:  btrfs:k"
	out_has "cannot check"
	expect 0 status --no-tpm "$WORK/k.sealed"

	step "the TPM may show up while load waits; --tcti wins over TPM2TOOLS_TCTI"
	(
		sleep 2
		exec swtpm socket --tpm2 --server "type=tcp,port=$port,bindaddr=127.0.0.1" \
			--ctrl "type=tcp,port=$((port + 1)),bindaddr=127.0.0.1" --tpmstate "dir=$WORK/tpm" \
			--flags not-need-init,startup-clear --log "file=$WORK/swtpm-late.log"
	) &
	late=$!
	TPM2TOOLS_TCTI="device:$WORK/tpmrm0" run load --keyring @s --tcti "swtpm:host=127.0.0.1,port=$port" \
		--tpm-wait 20 "$WORK/k.sealed"
	if [ "$RC" != 0 ] && ! kill -0 "$late" 2>/dev/null; then
		fail "the late swtpm on port $port exited: $(tail -n 2 "$WORK/swtpm-late.log" 2>/dev/null)"
	fi
	[ "$RC" = 0 ] || fail "load exited $RC, expected 0, with the TPM appearing late: $(tail -n 2 "$WORK/err")"
	kill "$late" 2>/dev/null || true
	wait "$late" 2>/dev/null || true
	have_key btrfs:k || fail "key not loaded once the TPM appeared"
}

# A fake btrfstune for rekey: checks that both keys arrive through the
# pipes, fails once when asked to (an interruption), then signs a new
# superblock with the new key as the real one does last.
make_fake_btrfstune() { # UUID
	mkdir -p "$WORK/bin"
	cat >"$WORK/bin/fake-btrfstune" <<-EOS
		#!/bin/bash
		set -euo pipefail
		[ "\$1 \$2 \$3 \$4" = "--auth-key-file /proc/self/fd/3 --new-auth-key-file /proc/self/fd/4" ] || exit 64
		cat /proc/self/fd/3 >"$WORK/tune-old"
		cat /proc/self/fd/4 >"$WORK/tune-new"
		cmp -s "$WORK/tune-old" "$WORK/key" || { echo "fake btrfstune: not the old key" >&2; exit 65; }
		if [ -e "$WORK/tune-fail" ]; then rm "$WORK/tune-fail"; echo "fake btrfstune: interrupted" >&2; exit 1; fi
		"$BA_HELPER" mksb "\$5" "$WORK/tune-new" "$1"
	EOS
	chmod +x "$WORK/bin/fake-btrfstune"
}

case_recovery() {
	local u=12345678-1234-1234-1234-123456789abc etc=$WORK/etc before
	start_swtpm
	new_key "$WORK/key"
	"$BA_HELPER" mksb "$WORK/fs.img" "$WORK/key" "$u"
	echo 'correct horse battery staple' >"$WORK/pass"
	echo 'wrong horse' >"$WORK/badpass"
	mkdir -p "$etc" "$WORK/run"
	printf 'BTRFS_AUTH_UPDATE_INITRAMFS="echo ran >>%s/initramfs-updates"\n' "$WORK" >"$etc/btrfs-auth.conf"
	C=(--config-dir "$etc")

	step "enroll with a recovery passphrase: a warning; the file records Argon2id and AES-256-GCM, never the passphrase"
	STDIN=$WORK/pass expect 0 enroll --allow-unmeasured-initramfs "${C[@]}" --key-file "$WORK/key" --uuid "$u" --pcrs 7 --lock-pcr 15 \
		--recovery-passphrase --passphrase-from stdin --argon2-memory 8 --argon2-time 2 rk
	err_has "A recovery passphrase is weaker against offline guessing than a recovery key"
	err_has "Added a recovery copy of btrfs:rk, opened by the recovery passphrase (Argon2id m=8 MiB t=2 p=4"
	! grep -qF 'correct horse' "$etc/rk.sealed" || fail "the passphrase is in the key file"
	[ ! -s "$WORK/out" ] || fail "enroll printed something on stdout for a passphrase copy"
	expect 0 status "${C[@]}" --no-tpm rk
	out_has "Recovery copy:    passphrase, Argon2id m=8 MiB t=2 p=4, AES-256-GCM"
	expect 0 load "${C[@]}" --state-dir "$WORK/run" --keyring @s --check "$WORK/fs.img" rk
	[ "$(cat "$WORK/run/rk.source")" = sealed ] || fail "load did not record the TPM as the source"

	step "PCR 7 changes: the TPM refuses, the recovery passphrase loads the right key"
	keyctl clear @s
	tpm2_pcrextend "7:sha256=$(sha256_hex firmware-update)"
	STDIN=$WORK/pass expect 0 load "${C[@]}" --state-dir "$WORK/run" --keyring @s --check "$WORK/fs.img" \
		--passphrase-from stdin rk
	err_has "PCR 7 differs"
	err_has "Unlocked btrfs:rk with the recovery passphrase"
	have_key btrfs:rk || fail "key not loaded through the recovery passphrase"
	[ "$(cat "$WORK/run/rk.source")" = recovery ] || fail "load did not record the passphrase as the source"
	assert_no_key_in_output "$WORK/key"
	err_lacks "correct horse"

	step "a wrong passphrase: exit 13, nothing loaded; no recovery tries: the TPM's error"
	keyctl clear @s
	STDIN=$WORK/badpass expect 13 load "${C[@]}" --keyring @s --passphrase-from stdin rk
	err_has "Wrong recovery passphrase for btrfs:rk, no tries left"
	! have_key btrfs:rk || fail "key loaded with a wrong passphrase"
	STDIN=$WORK/pass expect 4 load "${C[@]}" --keyring @s --recovery-tries 0 --passphrase-from stdin rk

	if [ -z "${BA_WRAP:-}" ]; then
		step "the passphrase from a terminal: not echoed, a wrong one is asked again"
		{ sleep 1; echo 'wrong horse'; sleep 3; echo 'correct horse battery staple'; } | timeout 60 script -qec \
			"$BA_TOOL load --config-dir $etc --passphrase-from tty --keyring @s rk" /dev/null >"$WORK/tty.out" ||
			{ cat "$WORK/tty.out" >&2; fail "load with the passphrase from the terminal failed"; }
		grep -qF "Recovery passphrase for btrfs:rk:" "$WORK/tty.out" || fail "no passphrase prompt on the terminal"
		grep -qF "2 more tries" "$WORK/tty.out" || fail "no second try"
		! grep -qF "horse" "$WORK/tty.out" || fail "the passphrase was echoed"
		have_key btrfs:rk || fail "key not loaded with the passphrase from the terminal"
	fi

	step "reseal: same key, this boot's PCR 7; the old file stays as .previous; the initramfs hook runs"
	cp "$etc/rk.sealed" "$WORK/v1.sealed"
	STDIN=$WORK/pass expect 0 reseal "${C[@]}" --passphrase-from stdin rk
	err_has "Resealed btrfs:rk to sha256 PCRs 7,15"
	cmp -s "$etc/rk.sealed.previous" "$WORK/v1.sealed" || fail "the previous copy is not the old file"
	[ "$(cat "$WORK/initramfs-updates")" = ran ] || fail "the initramfs update command did not run"
	keyctl clear @s
	expect 0 load "${C[@]}" --state-dir "$WORK/run" --keyring @s --check "$WORK/fs.img" rk
	[ "$(cat "$WORK/run/rk.source")" = sealed ] || fail "the resealed file did not unseal"
	expect 0 status "${C[@]}" --no-tpm rk
	out_has "Recovery copy:    passphrase, Argon2id m=8 MiB t=2"

	step "after btrfs-auth lock the TPM cannot give the key: reseal goes to the passphrase"
	expect 0 lock
	STDIN=$WORK/pass expect 0 reseal "${C[@]}" --passphrase-from stdin --no-update-initramfs rk
	err_has "PCR 15 was extended by btrfs-auth lock"
	err_has "Keeping $etc/rk.sealed.previous"
	cmp -s "$etc/rk.sealed.previous" "$WORK/v1.sealed" || fail "an unconfirmed reseal replaced the previous copy"

	step "reboot into the old state: NAME.sealed fails, .previous unseals; confirm refuses"
	stop_swtpm
	start_swtpm
	keyctl clear @s
	expect 0 load "${C[@]}" --state-dir "$WORK/run" --keyring @s rk
	err_has "Unsealed btrfs:rk with its previous sealed copy"
	[ "$(cat "$WORK/run/rk.source")" = previous ] || fail "load did not record the previous copy"
	expect 4 confirm "${C[@]}" --state-dir "$WORK/run" rk
	err_has "through its previous, not through"
	[ -e "$etc/rk.sealed.previous" ] || fail "confirm removed the previous copy after a boot that needed it"

	step "reboot into the new state: NAME.sealed unseals, confirm retires .previous"
	tpm2_pcrextend "7:sha256=$(sha256_hex firmware-update)"
	keyctl clear @s
	expect 0 load "${C[@]}" --state-dir "$WORK/run" --keyring @s rk
	expect 0 confirm "${C[@]}" --state-dir "$WORK/run" rk
	[ ! -e "$etc/rk.sealed.previous" ] || fail "confirm kept the previous copy"
	[ "$(wc -l <"$WORK/initramfs-updates")" = 2 ] || fail "confirm did not update the initramfs"

	step "rekey: interrupted once (both keys kept, exit 14), then resumed to the end"
	make_fake_btrfstune "$u"
	touch "$WORK/tune-fail"
	before=$(sha256sum <"$etc/rk.sealed")
	STDIN=$WORK/pass expect 14 rekey "${C[@]}" --device "$WORK/fs.img" --btrfstune "$WORK/bin/fake-btrfstune" \
		--passphrase-from stdin --recovery-file "$WORK/new.key" rk
	err_has "run btrfs-auth rekey again to resume"
	[ -s "$etc/rk.sealed.new" ] || fail "no pending key file after an interrupted rekey"
	[ "$(sha256sum <"$etc/rk.sealed")" = "$before" ] || fail "the key file changed before the rekey finished"
	cmp -s "$WORK/new.key" "$WORK/tune-new" || fail "btrfstune did not get the new key written to --recovery-file"
	assert_no_key_in_output "$WORK/new.key"
	expect 0 rekey "${C[@]}" --device "$WORK/fs.img" --btrfstune "$WORK/bin/fake-btrfstune" --no-update-initramfs rk
	err_has "Resuming the rekey of btrfs:rk"
	[ ! -e "$etc/rk.sealed.new" ] || fail "the pending file is still there"
	cmp -s "$WORK/new.key" "$WORK/tune-new" || fail "the resumed rekey used another new key"
	keyctl clear @s
	expect 0 load "${C[@]}" --keyring @s --check "$WORK/fs.img" rk
	expect 8 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$WORK/key" --device "$WORK/fs.img" --pcrs 7 "$WORK/old-key.sealed"
	err_has "is not the key of btrfs $u"

	step "the new key's recovery copy opens with the same passphrase"
	tpm2_pcrextend "7:sha256=$(sha256_hex another-change)"
	keyctl clear @s
	STDIN=$WORK/pass expect 0 load "${C[@]}" --keyring @s --check "$WORK/fs.img" --passphrase-from stdin rk
	err_has "Unlocked btrfs:rk with the recovery passphrase"
	expect 2 rekey "${C[@]}" rk
	err_has "rekey needs --device"

	step "reseal from the raw key (--key-file): no device to check it against here, said so"
	expect 0 reseal "${C[@]}" --key-file "$WORK/new.key" --no-update-initramfs rk
	err_has "Cannot check the key in the given file against the filesystem (its device is not here)"
	keyctl clear @s
	expect 0 load "${C[@]}" --keyring @s --check "$WORK/fs.img" rk
}

# The typed form a person would type: upper case, spaces for dashes.
sloppy() { tr 'a-z-' 'A-Z ' <"$1"; }

# python3 edit of the recovery record (type 0x8003) of a key file, framing and checksum fixed after:
#   recovery_edit FILE kind=N | mcost=N | cut=N
recovery_edit() {
	local off
	off=$("$BA_HELPER" record-offset "$1" 32771) || fail "no version-2 recovery record in $1"
	python3 - "$1" "$off" "$2" <<-'PY'
		import struct, sys
		path, off, edit = sys.argv[1], int(sys.argv[2]), sys.argv[3]
		b = bytearray(open(path, "rb").read())
		what, n = edit.split("=")
		n = int(n)
		if what == "kind":
		    b[off] = n
		elif what == "mcost":
		    b[off + 6:off + 10] = struct.pack("<I", n)
		elif what == "cut":  # the record's last n bytes go, its length field says so
		    (length,) = struct.unpack("<I", b[off - 4:off])
		    b[off - 4:off] = struct.pack("<I", length - n)
		    del b[off + length - n:off + length]
		open(path, "wb").write(b)
	PY
	"$BA_HELPER" refix "$1" || fail "cannot refix $1"
}

# A key file that is refused must stay as it was: nothing is written on bad input.
expect_untouched() { # FILE SHA256
	[ "$(sha256sum <"$1")" = "$2" ] || fail "$1 was changed"
}

case_recovery_key() {
	local u=0b0c0d0e-2222-3333-4444-555566667777 etc=$WORK/etc sum
	start_swtpm
	new_key "$WORK/key"
	"$BA_HELPER" mksb "$WORK/fs.img" "$WORK/key" "$u"
	mkdir -p "$etc" "$WORK/run"
	printf 'BTRFS_AUTH_UPDATE_INITRAMFS="echo ran >>%s/initramfs-updates"\n' "$WORK" >"$etc/btrfs-auth.conf"
	C=(--config-dir "$etc")
	E=(--allow-unmeasured-initramfs --key-file "$WORK/key" --uuid "$u" --pcrs 7 --lock-pcr 15)

	step "no recovery option and stdout not a terminal: refused before anything is done"
	expect 2 enroll "${C[@]}" "${E[@]}" k
	err_has "which is not a terminal here: pass --recovery-key"
	[ ! -e "$etc/k.sealed" ] || fail "a key file was written by a refused enrollment"

	step "enroll --recovery-key: the key once on stdout, 9 groups of 8 modhex; not in the file nor on stderr"
	expect 0 enroll "${C[@]}" "${E[@]}" --recovery-key --argon2-memory 8 k
	cp "$WORK/out" "$WORK/rkey"
	[ "$(wc -l <"$WORK/rkey")" = 1 ] || fail "stdout is not one line"
	grep -qxE '([cbdefghijklnrtuv]{8}-){8}[cbdefghijklnrtuv]{8}' "$WORK/rkey" || fail "not a recovery key: $(cat "$WORK/rkey")"
	err_has "Added a recovery copy of btrfs:k, opened by the recovery key (Argon2id m=8 MiB t=1 p=4"
	err_has "follows, on standard output, this once"
	! grep -qF -f "$WORK/rkey" "$WORK/err" || fail "the recovery key is on stderr"
	! grep -qF "$(tr -d '-' <"$WORK/rkey")" "$etc/k.sealed" || fail "the recovery key is in the key file"
	expect 0 status "${C[@]}" --no-tpm k
	out_has "Recovery copy:    recovery key, Argon2id m=8 MiB t=1 p=4, AES-256-GCM"

	if [ -z "${BA_WRAP:-}" ]; then
		step "with a terminal on stdout the recovery key is the default"
		timeout 60 script -qec "$BA_TOOL enroll --config-dir $etc ${E[*]} --argon2-memory 8 tty" /dev/null \
			</dev/null >"$WORK/tty.out" 2>&1 || { cat "$WORK/tty.out" >&2; fail "enroll with a terminal failed"; }
		grep -qE '([cbdefghijklnrtuv]{8}-){8}[cbdefghijklnrtuv]{8}' "$WORK/tty.out" || fail "no recovery key on the terminal"
		rm -f "$etc/tty.sealed"
	fi

	step "PCR 7 changes: the recovery key, typed in capitals with spaces, loads the key"
	tpm2_pcrextend "7:sha256=$(sha256_hex firmware-update)"
	sloppy "$WORK/rkey" >"$WORK/typed"
	STDIN=$WORK/typed expect 0 load "${C[@]}" --state-dir "$WORK/run" --keyring @s --check "$WORK/fs.img" \
		--passphrase-from stdin k
	err_has "asking for its recovery key"
	err_has "Unlocked btrfs:k with the recovery key"
	have_key btrfs:k || fail "key not loaded through the recovery key"
	[ "$(cat "$WORK/run/k.source")" = recovery ] || fail "load did not record the recovery copy as the source"
	assert_no_key_in_output "$WORK/key"
	keyctl clear @s

	step "a typo in group 3: exit 40, named, nothing tried, nothing loaded"
	python3 -c 'import sys; t = open(sys.argv[1]).read(); i = 20; c = "b" if t[i] != "b" else "c"
open(sys.argv[2], "w").write(t[:i] + c + t[i + 1:])' "$WORK/rkey" "$WORK/typo"
	STDIN=$WORK/typo expect 40 load "${C[@]}" --keyring @s --passphrase-from stdin k
	err_has "the recovery key has a typo in group 3"
	err_has "nothing was tried with it"
	! have_key btrfs:k || fail "key loaded with a mistyped recovery key"
	head -c 40 "$WORK/rkey" >"$WORK/short"
	STDIN=$WORK/short expect 40 load "${C[@]}" --keyring @s --passphrase-from stdin k
	err_has "the recovery key has"

	step "another key's recovery key: well formed, wrong: exit 13"
	expect 0 enroll "${C[@]}" "${E[@]}" --recovery-key --argon2-memory 8 other
	cp "$WORK/out" "$WORK/other-rkey"
	STDIN=$WORK/other-rkey expect 13 load "${C[@]}" --keyring @s --passphrase-from stdin k
	err_has "Wrong recovery key for btrfs:k, no tries left"

	step "reseal through the recovery key: NAME.sealed.previous kept; list shows both seals and copies"
	STDIN=$WORK/typed expect 0 reseal "${C[@]}" --passphrase-from stdin k
	[ -e "$etc/k.sealed.previous" ] || fail "reseal kept no previous seal"
	expect 0 list "${C[@]}" k
	out_has "btrfs:k"
	out_has "  seal current   $etc/k.sealed: PCRs 7,15 (lock 15)"
	out_has "  seal previous  $etc/k.sealed.previous: PCRs 7,15 (lock 15)"
	out_has "  seal new       none"
	out_has "  recovery       recovery key, Argon2id m=8 MiB t=1 p=4, AES-256-GCM (in $etc/k.sealed)"
	out_has "  recovery       recovery key, Argon2id m=8 MiB t=1 p=4, AES-256-GCM (in $etc/k.sealed.previous)"
	expect 0 list "${C[@]}"
	out_has "btrfs:k"
	out_has "btrfs:other"
	expect 11 list "${C[@]}" nosuch

	step "a version-1 (scrypt) recovery copy, as older btrfs-auth wrote it, still opens"
	tpm2_pcrextend "7:sha256=$(sha256_hex second-update)"
	cp "$etc/other.sealed" "$WORK/other.orig"
	echo 'old style passphrase' >"$WORK/oldpass"
	"$BA_HELPER" scrypt-recovery "$etc/other.sealed" "$WORK/key" "$WORK/oldpass" || fail "cannot write a scrypt copy"
	expect 0 list "${C[@]}" other
	out_has "  recovery       passphrase, scrypt N=2^10 r=8 p=1, AES-256-GCM"
	STDIN=$WORK/oldpass expect 0 load "${C[@]}" --keyring @s --passphrase-from stdin other
	err_has "Unlocked btrfs:other with the recovery passphrase"
	keyctl clear @s
	cp "$WORK/other.orig" "$etc/other.sealed"

	step "a damaged recovery copy: truncated or of an unknown kind, exit 41; beyond the cost bound, exit 42; nothing written"
	cp "$etc/other.sealed" "$WORK/bad.sealed"
	recovery_edit "$WORK/bad.sealed" cut=40
	sum=$(sha256sum <"$WORK/bad.sealed")
	STDIN=$WORK/other-rkey expect 41 load --keyring @s --passphrase-from stdin "$WORK/bad.sealed"
	err_has "has a damaged recovery copy"
	expect_untouched "$WORK/bad.sealed" "$sum"
	cp "$etc/other.sealed" "$WORK/bad.sealed"
	recovery_edit "$WORK/bad.sealed" kind=7
	expect 41 status --no-tpm "$WORK/bad.sealed"
	err_has "unknown kind"
	cp "$etc/other.sealed" "$WORK/bad.sealed"
	recovery_edit "$WORK/bad.sealed" mcost=4194304
	sum=$(sha256sum <"$WORK/bad.sealed")
	STDIN=$WORK/other-rkey expect 42 load --keyring @s --passphrase-from stdin "$WORK/bad.sealed"
	err_has "memory cost is beyond the bound of 1 GiB"
	expect_untouched "$WORK/bad.sealed" "$sum"
	cp "$WORK/bad.sealed" "$etc/other.sealed"
	STDIN=$WORK/other-rkey expect 42 reseal "${C[@]}" --passphrase-from stdin --no-update-initramfs other
	expect_untouched "$etc/other.sealed" "$sum"
	[ ! -e "$etc/other.sealed.previous" ] || fail "reseal wrote a previous seal on bad input"
	expect 42 wipe "${C[@]}" --recovery other
	expect_untouched "$etc/other.sealed" "$sum"
	! have_key btrfs:other || fail "a key was loaded on bad input"
	cp "$WORK/other.orig" "$etc/other.sealed"

	step "wipe: the previous seal; the current seal only with --force when it is the last; the recovery copy"
	: >"$WORK/initramfs-updates"
	expect 0 wipe "${C[@]}" --seal previous k
	err_has "Removed the previous seal of btrfs:k"
	[ ! -e "$etc/k.sealed.previous" ] || fail "wipe --seal previous left the file"
	[ "$(wc -l <"$WORK/initramfs-updates")" = 1 ] || fail "wipe did not update the initramfs"
	expect 0 wipe "${C[@]}" --seal previous k
	err_has "has no previous seal: nothing was removed"
	sum=$(sha256sum <"$etc/k.sealed")
	expect 1 wipe "${C[@]}" --seal current k
	err_has "is the last seal of btrfs:k"
	expect_untouched "$etc/k.sealed" "$sum"
	expect 0 wipe "${C[@]}" --recovery k
	err_has "Removed the recovery copy (recovery key, Argon2id m=8 MiB t=1 p=4, AES-256-GCM) from $etc/k.sealed"
	err_has "now opens only through the TPM"
	expect 0 list "${C[@]}" k
	! grep -qF "  recovery " "$WORK/out" || fail "list still shows a recovery copy"
	STDIN=$WORK/typed expect 4 load "${C[@]}" --keyring @s --passphrase-from stdin k
	err_lacks "asking for its recovery"
	! have_key btrfs:k || fail "a key was loaded after its recovery copy was wiped"
	expect 0 wipe "${C[@]}" --recovery k
	err_has "has no recovery copy: nothing was removed"
	expect 0 wipe "${C[@]}" --seal current --force other
	err_has "btrfs:other is no longer enrolled"
	[ ! -e "$etc/other.sealed" ] || fail "wipe --seal current --force left the file"
	expect 11 wipe "${C[@]}" --recovery other
}

# The first boot of an appliance image (provision.c), with the key store as
# a directory (an ESP mounted already) and a fake btrfstune.
case_provision() {
	local u=0a0b0c0d-1111-2222-3333-444455556666 etc=$WORK/etc store=$WORK/esp/btrfs-auth
	start_swtpm
	new_key "$WORK/key" # the provisioning key: the fake btrfstune expects it as the old key
	"$BA_HELPER" mksb "$WORK/fs.img" "$WORK/key" "$u"
	mkdir -p "$etc" "$WORK/esp" "$WORK/run"
	cp "$WORK/key" "$etc/root.provisioning"
	cat >"$etc/btrfs-auth.conf" <<-EOF
		BTRFS_AUTH_STORE=$WORK/esp
		BTRFS_AUTH_PROVISION_DEVICE=$WORK/fs.img
		BTRFS_AUTH_PROVISION_PCRS=0,7
		BTRFS_AUTH_PROVISION_LOCK_PCR=15
	EOF
	make_fake_btrfstune "$u"
	export PATH="$WORK/bin:$PATH"
	ln -sf fake-btrfstune "$WORK/bin/btrfstune"
	C=(--config-dir "$etc" --state-dir "$WORK/run" --keyring @s)

	step "first boot, interrupted in btrfstune: the new key is sealed in the store first, nothing loaded"
	touch "$WORK/tune-fail"
	expect 14 load "${C[@]}" root
	err_has "First boot: the key store has no root.sealed"
	if [ ! -s "$store/root.sealed.new" ] || [ -e "$store/root.sealed" ]; then
		fail "store after an interrupted first boot: $(ls "$store")"
	fi
	! have_key btrfs:root || fail "a key was loaded although the rekey did not finish"

	step "the next boot resumes: the device key is loaded, the provisioning key no longer opens the filesystem"
	expect 0 load "${C[@]}" root
	err_has "Resuming the rekey of btrfs:root"
	err_has "Provisioned btrfs:root (key id"
	if [ ! -s "$store/root.sealed" ] || [ -e "$store/root.sealed.new" ]; then
		fail "store after the first boot: $(ls "$store")"
	fi
	[ "$(cat "$WORK/run/root.source")" = provisioned ] || fail "the source is not recorded as provisioned"
	have_key btrfs:root || fail "the device key is not loaded"
	expect 8 enroll --no-recovery --allow-unmeasured-initramfs --key-file "$etc/root.provisioning" --device "$WORK/fs.img" --pcrs 7 "$WORK/x.sealed"
	assert_no_key_in_output "$WORK/tune-new"

	step "later boots unseal from the store and never read the provisioning key"
	keyctl clear @s
	chmod 000 "$etc/root.provisioning"
	mv "$etc/root.provisioning" "$WORK/prov.hidden"
	expect 0 load "${C[@]}" --check "$WORK/fs.img" root
	[ "$(cat "$WORK/run/root.source")" = sealed ] || fail "a later boot did not unseal the store's key file"
	expect 0 status --no-tpm "$store/root.sealed"
	out_has "Lock PCR:         15"
	out_has "PCRs:             0,7,15"

	step "the store's key file deleted: no provisioning key, exit 11; with it, the filesystem refuses it, exit 8"
	rm "$store/root.sealed"
	keyctl clear @s
	expect 11 load "${C[@]}" root
	err_has "The key store has no root.sealed, and there is no provisioning key"
	mv "$WORK/prov.hidden" "$etc/root.provisioning"
	chmod 600 "$etc/root.provisioning"
	expect 8 load "${C[@]}" root
	err_has "Neither the current nor the new key of btrfs:root authenticates the superblock"
}

# ---- signed PCR policies (unified kernel images) ----------------------------

MEASURE=/lib/systemd/systemd-measure

# A unified kernel image's sections, for systemd-measure and the replayed stub.
make_uki_sections() { # DIR PUBKEY
	mkdir -p "$1"
	head -c 8192 /dev/urandom >"$1/linux"
	head -c 4096 /dev/urandom >"$1/initrd"
	printf 'ID=debian\n' >"$1/osrel"
	printf 'root=UUID=0 rootflags=auth_key=btrfs:sp' >"$1/cmdline"
	cp "$2" "$1/pcrpkey"
}

uki_args() { # DIR: systemd-measure's section options
	printf '%s\n' "--linux=$1/linux" "--osrel=$1/osrel" "--cmdline=$1/cmdline" "--initrd=$1/initrd" \
		"--pcrpkey=$1/pcrpkey"
}

# What systemd-stub measures into PCR 11 when it boots those sections (each section's name with its
# NUL, then its contents, in the stub's order), then systemd-pcrphase's enter-initrd.
fake_uki_boot() { # DIR
	local s
	for s in linux osrel cmdline initrd pcrpkey; do
		tpm2_pcrextend "11:sha256=$(printf '.%s\0' "$s" | sha256sum | cut -c1-64)"
		tpm2_pcrextend "11:sha256=$(sha256sum <"$1/$s" | cut -c1-64)"
	done
	tpm2_pcrextend "11:sha256=$(sha256_hex enter-initrd)"
}

sign_uki() { # DIR PRIVATE PUBLIC OUT: systemd-measure's signature, a trial session on our swtpm
	local args
	mapfile -t args < <(uki_args "$1")
	"$MEASURE" sign "${args[@]}" --bank=sha256 --phase=enter-initrd --private-key="$2" --public-key="$3" \
		--tpm2-device="$TCTI" >"$4" 2>"$WORK/measure.log" || { cat "$WORK/measure.log" >&2; fail "systemd-measure sign failed"; }
}

new_rsa_key() { # PRIVATE PUBLIC
	openssl genrsa -out "$1" 2048 2>/dev/null || fail "openssl cannot make an RSA key"
	openssl rsa -in "$1" -pubout -out "$2" 2>/dev/null || fail "openssl cannot write the RSA public key"
}

case_signed_policy() {
	local uki=$WORK/uki args expected m
	[ -x "$MEASURE" ] || fail "$MEASURE is missing (Debian package systemd 252)"
	start_swtpm
	new_key "$WORK/key"
	new_rsa_key "$WORK/pcr.key" "$WORK/pcr.pem"
	make_uki_sections "$uki" "$WORK/pcr.pem"
	sign_uki "$uki" "$WORK/pcr.key" "$WORK/pcr.pem" "$WORK/sig.json"
	fake_uki_boot "$uki"

	step "the replayed stub measurements give the PCR 11 value systemd-measure signs"
	mapfile -t args < <(uki_args "$uki")
	expected=$("$MEASURE" calculate "${args[@]}" --bank=sha256 --phase=enter-initrd | sed -n 's/^11:sha256=//p')
	[ "$(pcr_value 11)" = "$expected" ] || fail "PCR 11 is $(pcr_value 11), systemd-measure expects $expected"

	step "a binding that measures neither the initramfs nor the command line is refused unless asked for"
	expect 2 enroll --no-recovery --key-file "$WORK/key" --pcrs 0,7 "$WORK/weak.sealed"
	err_has "Refusing to seal btrfs:weak to PCRs that do not measure the initramfs or the kernel command line"
	# The default binding without a UKI (GRUB's PCRs 8, 9) is refused while they are all zeros ...
	expect 2 enroll --no-recovery --key-file "$WORK/key" "$WORK/weak.sealed"
	err_has "do not measure the initramfs or the kernel command line"
	# ... and while only one of them measured something.
	tpm2_pcrextend "9:sha256=$(sha256_hex initramfs)"
	expect 2 enroll --no-recovery --key-file "$WORK/key" "$WORK/weak.sealed"
	err_has "do not measure the kernel command line"
	[ ! -e "$WORK/weak.sealed" ] || fail "a refused binding left a key file"
	expect 0 enroll --no-recovery --key-file "$WORK/key" --pcrs 0,7 --allow-unmeasured-initramfs "$WORK/weak.sealed"

	step "enroll --signed-policy: PCR 11 signed, PCR 7 sealed, lock PCR 15 by default"
	expect 0 enroll --no-recovery --key-file "$WORK/key" --signed-policy "$WORK/pcr.pem" --pcrs 7 \
		--uuid 5e1f0000-0000-4000-8000-000000000011 "$WORK/sp.sealed"
	expect 0 status --no-tpm "$WORK/sp.sealed"
	out_has "Signed PCRs:      11"
	out_has "Lock PCR:         15"
	out_has "PCR 11 signed  UKI sections"
	S=(--pcr-signature "$WORK/sig.json" --pcr-public-key "$WORK/pcr.pem")

	step "load and status with the image's signature and public key"
	expect 0 status "${S[@]}" "$WORK/sp.sealed"
	out_has "would unseal now"
	expect 0 load --keyring @s --state-dir "$WORK/run" "${S[@]}" "$WORK/sp.sealed"
	have_key btrfs:sp || fail "key not loaded"
	assert_no_key_in_output "$WORK/key"
	keyctl clear @s

	step "tpm2-tools alone unseal it too while the PCRs hold the signed values (the raw attempt works)"
	python3 "$BA_SRC_ROOT/tpm-sealing/tests/raw-unseal-inputs.py" "$WORK/sp.sealed" "$WORK/sig.json" "$WORK/raw"
	sh "$BA_SRC_ROOT/tpm-sealing/tests/raw-unseal.sh" "$WORK/raw" "$WORK/pcr.pem" "$WORK/raw.key" >"$WORK/raw.log" 2>&1 ||
		{ cat "$WORK/raw.log" >&2; fail "the tpm2-tools unseal failed although the policy holds"; }
	cmp -s "$WORK/raw.key" "$WORK/key" || fail "tpm2-tools unsealed something else than the key"
	rm -f "$WORK/raw.key"

	step "bad input, each its own exit code, and the key not loaded"
	expect 16 load --keyring @s --pcr-signature "$WORK/none.json" --pcr-public-key "$WORK/pcr.pem" "$WORK/sp.sealed"
	err_has "the PCR signature file $WORK/none.json does not exist"
	expect 15 load --keyring @s --pcr-public-key "$WORK/pcr.pem" "$WORK/sp.sealed"
	err_has "did not go through a unified kernel image's systemd-stub"
	printf '{"sha256": [' >"$WORK/bad.json"
	expect 17 load --keyring @s --pcr-signature "$WORK/bad.json" --pcr-public-key "$WORK/pcr.pem" "$WORK/sp.sealed"
	err_has "is malformed: not JSON"
	new_rsa_key "$WORK/other.key" "$WORK/other.pem"
	expect 19 load --keyring @s --pcr-signature "$WORK/sig.json" --pcr-public-key "$WORK/other.pem" "$WORK/sp.sealed"
	err_has "is not the one btrfs:sp was sealed to"
	# A signature by another key, in a file that names ours: only the TPM can tell.
	python3 - "$WORK/sig.json" "$WORK/other.key" "$WORK/forged.json" <<'PY'
import base64, json, subprocess, sys
sig = json.load(open(sys.argv[1]))
pol = bytes.fromhex(sig["sha256"][0]["pol"])
forged = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", sys.argv[2], "-pkeyopt", "digest:sha256"],
                        input=__import__("hashlib").sha256(pol).digest(), capture_output=True, check=True).stdout
sig["sha256"][0]["sig"] = base64.b64encode(forged).decode()
json.dump(sig, open(sys.argv[3], "w"))
PY
	expect 20 load --keyring @s --pcr-signature "$WORK/forged.json" --pcr-public-key "$WORK/pcr.pem" "$WORK/sp.sealed"
	err_has "The TPM rejects the PCR signature"
	! have_key btrfs:sp || fail "a key was loaded on bad input"

	step "the recovery passphrase still opens a key whose signature is missing"
	printf 'correct horse battery\n' >"$WORK/pass"
	STDIN=$WORK/pass expect 0 enroll --key-file "$WORK/key" --signed-policy "$WORK/pcr.pem" --pcrs 7 \
		--recovery-passphrase --passphrase-from stdin --argon2-memory 8 --argon2-time 1 "$WORK/rk.sealed"
	STDIN=$WORK/pass expect 0 load --keyring @s --pcr-public-key "$WORK/pcr.pem" --passphrase-from stdin \
		--recovery-tries 1 "$WORK/rk.sealed"
	err_has "Unlocked btrfs:rk with the recovery passphrase"
	keyctl clear @s

	step "a boot image not signed for this (PCR 11 moves on): no signature, and the TPM refuses the raw attempt"
	tpm2_pcrextend "11:sha256=$(sha256_hex leave-initrd)"
	expect 18 load --keyring @s "${S[@]}" "$WORK/sp.sealed"
	err_has "No signature in $WORK/sig.json for this boot's PCR 11"
	! sh "$BA_SRC_ROOT/tpm-sealing/tests/raw-unseal.sh" "$WORK/raw" "$WORK/pcr.pem" "$WORK/raw.key" >"$WORK/raw.log" 2>&1 ||
		fail "tpm2-tools unsealed the key after PCR 11 changed"
	grep -q 'PolicyAuthorize\|policyauthorize' "$WORK/raw.log" || { cat "$WORK/raw.log" >&2; fail "the raw attempt failed elsewhere than at PolicyAuthorize"; }
	[ ! -e "$WORK/raw.key" ] || fail "the raw attempt left a key behind"

	step "a signed image but another Secure Boot state (PCR 7): the sealed PCR is named"
	stop_swtpm
	start_swtpm
	fake_uki_boot "$uki"
	tpm2_pcrextend "7:sha256=$(sha256_hex secure-boot-off)"
	expect 4 load --keyring @s "${S[@]}" "$WORK/sp.sealed"
	err_has "PCR 7 differs"

	step "after the lock, the key does not unseal again in this boot"
	stop_swtpm
	start_swtpm
	fake_uki_boot "$uki"
	expect 0 load --keyring @s --state-dir "$WORK/run2" "${S[@]}" "$WORK/sp.sealed"
	m=$(measurement "$WORK/key" btrfs:sp 5e1f0000-0000-4000-8000-000000000011)
	[ "$(tr -d '\n' <"$WORK/run2/sp.measure")" = "$m" ] || fail "sp.measure does not bind the key to its filesystem UUID"
	expect 0 lock --config-dir "$WORK/none" --state-dir "$WORK/run2"
	keyctl clear @s
	expect 4 load --keyring @s "${S[@]}" "$WORK/sp.sealed"
	err_has "PCR 15 is this key's lock PCR"
}

# An appliance booted through its signed UKI: the first boot is recorded in
# the TPM, the root must be the image built, and the attacker who writes the
# disk (key store included) is refused at every step.
NV=0x01800b7a

nv_attributes() { tpm2_nvreadpublic "$NV" 2>/dev/null | sed -n 's/^ *friendly: //p'; }

case_provision_record() {
	local u=0a0b0c0d-1111-2222-3333-777755556666 etc=$WORK/etc store=$WORK/esp/btrfs-auth uki=$WORK/uki
	[ -x "$MEASURE" ] || fail "$MEASURE is missing (Debian package systemd 252)"
	start_swtpm
	new_rsa_key "$WORK/pcr.key" "$WORK/pcr.pem"
	make_uki_sections "$uki" "$WORK/pcr.pem"
	sign_uki "$uki" "$WORK/pcr.key" "$WORK/pcr.pem" "$WORK/sig.json"
	fake_uki_boot "$uki"
	new_key "$WORK/key" # the provisioning key, public in every copy of the image
	"$BA_HELPER" mksb "$WORK/fs.img" "$WORK/key" "$u"
	head -c 65536 /dev/urandom >>"$WORK/fs.img" # contents beyond the superblock
	cp "$WORK/fs.img" "$WORK/fs.built"
	mkdir -p "$etc" "$WORK/esp" "$WORK/run"
	cp "$WORK/key" "$etc/root.provisioning"
	cat >"$etc/btrfs-auth.conf" <<-EOF
		BTRFS_AUTH_STORE=$WORK/esp
		BTRFS_AUTH_PROVISION_DEVICE=$WORK/fs.img
		BTRFS_AUTH_PROVISION_PCRS=7
		BTRFS_AUTH_PROVISION_NV=$NV
		BTRFS_AUTH_PROVISION_DIGEST=$(sha256sum <"$WORK/fs.img" | cut -c1-64)
		BTRFS_AUTH_PROVISION_SIZE=$(stat -c %s "$WORK/fs.img")
	EOF
	make_fake_btrfstune "$u"
	export PATH="$WORK/bin:$PATH"
	ln -sf fake-btrfstune "$WORK/bin/btrfstune"
	C=(--config-dir "$etc" --state-dir "$WORK/run" --keyring @s --pcr-signature "$WORK/sig.json"
		--pcr-public-key "$WORK/pcr.pem")

	step "one byte of the image changed in transit, superblock MAC intact: refused before anything is written"
	printf 'X' | dd of="$WORK/fs.img" bs=1 seek=70000 conv=notrunc 2>/dev/null
	expect 32 load "${C[@]}" root
	err_has "is not the image this boot image was built for"
	[ -z "$(ls -A "$store" 2>/dev/null)" ] || fail "a refused first boot wrote the key store: $(ls "$store")"
	[ -z "$(nv_attributes)" ] || fail "a refused first boot defined the TPM record"
	! have_key btrfs:root || fail "a key was loaded"
	cp "$WORK/fs.built" "$WORK/fs.img"

	step "first boot, interrupted in btrfstune: the new key is recorded in the TPM before the root changes"
	touch "$WORK/tune-fail"
	expect 14 load "${C[@]}" root
	err_has "is the image this boot image was built for"
	err_has "Recorded the first boot in TPM NV index 0x01800b7a"
	[ -s "$store/root.sealed.new" ] || fail "no root.sealed.new after an interrupted first boot"
	case "$(nv_attributes)" in *written*writelocked* | *writelocked*written*) ;;
	*) fail "the TPM record is not written and locked: '$(nv_attributes)'" ;; esac
	cp "$store/root.sealed.new" "$WORK/genuine.new"

	step "a .new the attacker sealed to the same policy is refused on resume, before the root changes"
	new_key "$WORK/attacker.key"
	expect 0 enroll --no-recovery --key-file "$WORK/attacker.key" --signed-policy "$WORK/pcr.pem" --pcrs 7 \
		--uuid "$u" --description btrfs:root "$WORK/attacker.sealed"
	cp "$WORK/attacker.sealed" "$store/root.sealed.new"
	expect 30 load "${C[@]}" root
	err_has "is not the key this machine's first boot recorded in the TPM"
	cmp -s "$WORK/fs.img" "$WORK/fs.built" || fail "the root changed"
	cp "$WORK/genuine.new" "$store/root.sealed.new"

	step "the next boot resumes and loads the recorded key; later boots unseal it unattended"
	expect 0 load "${C[@]}" root
	err_has "Provisioned btrfs:root (key id"
	have_key btrfs:root || fail "the device key is not loaded"
	expect 0 status --no-tpm "$store/root.sealed"
	out_has "Signed PCRs:      11"
	keyctl clear @s
	expect 0 load "${C[@]}" root
	[ "$(cat "$WORK/run/root.source")" = sealed ] || fail "a later boot did not unseal the store's key file"
	keyctl clear @s
	cp "$store/root.sealed" "$WORK/genuine.sealed"
	cp "$WORK/fs.img" "$WORK/fs.provisioned"

	step "the attacker's key file sealed to the same policy, and their root: unsealed, refused, not loaded"
	cp "$WORK/attacker.sealed" "$store/root.sealed"
	"$BA_HELPER" mksb "$WORK/fs.img" "$WORK/attacker.key" "$u"
	expect 30 load "${C[@]}" root
	err_has "unseals, but not to the key this machine's first boot recorded"
	! have_key btrfs:root || fail "the attacker's key was loaded"
	cp "$WORK/genuine.sealed" "$store/root.sealed"

	step "the key store emptied and a root made with the provisioning key: refused, nothing rekeyed"
	rm -f "$store"/root.sealed*
	"$BA_HELPER" mksb "$WORK/fs.img" "$WORK/key" "$u"
	cp "$WORK/fs.img" "$WORK/fs.forged"
	expect 30 load "${C[@]}" root
	err_has "it was emptied. Nothing is provisioned again"
	cmp -s "$WORK/fs.img" "$WORK/fs.forged" || fail "the forged root was rewritten"
	! have_key btrfs:root || fail "a key was loaded"
	cp "$WORK/genuine.sealed" "$store/root.sealed"
	cp "$WORK/fs.provisioned" "$WORK/fs.img"

	step "the record cannot be rewritten outside the signed boot, even by the TPM owner"
	printf 'forged' >"$WORK/forged"
	! tpm2_nvwrite "$NV" -C "$NV" -i "$WORK/forged" 2>/dev/null || fail "the record was written without the policy"
	! tpm2_nvwrite "$NV" -C o -i "$WORK/forged" 2>/dev/null || fail "the owner wrote the record"

	step "the record deleted by the TPM owner: the key file is refused"
	tpm2_nvundefine "$NV" -C o
	expect 30 load "${C[@]}" root
	err_has "the TPM has no record of this machine's first boot (NV index 0x01800b7a missing)"
	! have_key btrfs:root || fail "a key was loaded"

	step "an index of another kind at the handle: refused, and unprovision does not delete it"
	tpm2_nvdefine "$NV" -C o -s 64 -a "ownerread|ownerwrite|authread|authwrite" >/dev/null
	expect 31 load "${C[@]}" root
	err_has "is not btrfs-auth's provisioning record (attributes)"
	expect 31 unprovision --config-dir "$etc"
	tpm2_nvundefine "$NV" -C o

	step "provisioning again on purpose: unprovision, the image written again, an empty key store"
	expect 0 unprovision --config-dir "$etc"
	err_has "does not exist: there is no record of a first boot to delete"
	cp "$WORK/fs.built" "$WORK/fs.img"
	rm -f "$store"/root.sealed*
	expect 0 load "${C[@]}" root
	err_has "Provisioned btrfs:root (key id"
	have_key btrfs:root || fail "the re-provisioned key is not loaded"
	keyctl clear @s
	expect 0 unprovision --config-dir "$etc"
	err_has "Deleted the record of this machine's first boot"
	[ -z "$(nv_attributes)" ] || fail "unprovision left the index"
}

# Anti-rollback: each boot records the root's generation in the TPM (a record
# only the signed boot image writes, and a counter), and a disk older than
# the last boot's is refused unless the recovery passphrase accepts it.
# The superblock images are made by ba-test-helper: only their generations matter.
RB=0x01b7a000
RB_COUNTER=0x01b7a001
SB_BACKUP=67108864

# A reboot into the same signed boot image: PCRs reset (the lock too), PCR 11 measured again.
reboot_signed() {
	keyctl clear @s
	stop_swtpm
	start_swtpm
	fake_uki_boot "$WORK/uki"
}

# disk GENERATION [BACKUP_GENERATION]: the root's superblocks, primary and backup copy.
disk() {
	"$BA_HELPER" mksb "$WORK/fs.img" "$WORK/key" "$RB_UUID" "$1"
	"$BA_HELPER" mksb "$WORK/fs.img" "$WORK/key" "$RB_UUID" "${2:-$1}" "$SB_BACKUP"
}

# boot_load EXIT: a boot (every load locks PCR 15, also a refused one) and its load of
# the root's key, which must exit EXIT; the key loaded exactly when 0.
boot_load() {
	reboot_signed
	expect "$1" load "${L[@]}" root
	if [ "$1" = 0 ]; then
		have_key btrfs:root || fail "exit 0 but the key is not loaded"
	else
		! have_key btrfs:root || fail "the key was loaded although load exited $1"
	fi
	! grep -qF -f "$WORK/pass" "$WORK/out" "$WORK/err" || fail "the recovery passphrase was printed"
	assert_no_key_in_output "$WORK/key"
}

case_rollback() {
	local etc=$WORK/etc anchor=$WORK/etc/root.rollback
	RB_UUID=7b0a7b0a-5555-4444-8888-000000000016
	[ -x "$MEASURE" ] || fail "$MEASURE is missing (Debian package systemd 252)"
	start_swtpm
	new_rsa_key "$WORK/pcr.key" "$WORK/pcr.pem"
	make_uki_sections "$WORK/uki" "$WORK/pcr.pem"
	sign_uki "$WORK/uki" "$WORK/pcr.key" "$WORK/pcr.pem" "$WORK/sig.json"
	fake_uki_boot "$WORK/uki"
	new_key "$WORK/key"
	disk 10
	mkdir -p "$etc" "$WORK/run"
	printf 'correct horse battery staple\n' >"$WORK/pass"
	printf 'not the passphrase\n' >"$WORK/wrong"
	L=(--config-dir "$etc" --state-dir "$WORK/run" --keyring @s --pcr-signature "$WORK/sig.json"
		--pcr-public-key "$WORK/pcr.pem" --check "$WORK/fs.img" --recovery-tries 1 --passphrase-from stdin)

	step "bad enrollments: no signed policy, an index outside the owner range"
	expect 2 enroll --config-dir "$etc" --no-recovery --key-file "$WORK/key" --pcrs 7 --allow-unmeasured-initramfs \
		--uuid "$RB_UUID" --rollback-index "$RB" root
	err_has "--rollback-index needs --signed-policy"
	expect 2 enroll --config-dir "$etc" --no-recovery --key-file "$WORK/key" --signed-policy "$WORK/pcr.pem" \
		--pcrs 7 --uuid "$RB_UUID" --rollback-index 0x81000001 root
	err_has "is not an owner NV index"
	[ ! -e "$anchor" ] || fail "a refused enrollment wrote the anchor"

	step "enroll --rollback-index: record and counter defined, the anchor written (no secret: 0644)"
	STDIN=$WORK/pass expect 0 enroll --config-dir "$etc" --key-file "$WORK/key" --signed-policy "$WORK/pcr.pem" \
		--pcrs 7 --uuid "$RB_UUID" --recovery-passphrase --passphrase-from stdin --argon2-memory 8 \
		--argon2-time 1 --rollback-index "$RB" root
	err_has "Anti-rollback: TPM NV index 0x01b7a000 records the generation of each boot"
	[ "$(stat -c '%s %a' "$anchor")" = "72 644" ] || fail "the anchor is not 72 bytes, mode 0644: $(stat -c '%s %a' "$anchor")"
	tpm2_nvreadpublic "$RB_COUNTER" >/dev/null 2>&1 || fail "enroll defined no counter at $RB_COUNTER"
	cp "$anchor" "$WORK/anchor.good"

	step "boot 1: generation 10 recorded; boot 2, same disk: nothing to write"
	boot_load 0
	err_has "1 device(s), 2 authentic superblock copies, newest generation 10"
	err_has "Recorded generation 10 of btrfs:root in TPM NV index 0x01b7a000"
	boot_load 0
	err_lacks "Recorded generation"

	step "the record cannot be written outside the signed boot, even by the TPM owner"
	printf 'BAGENR01' >"$WORK/forged"
	! tpm2_nvwrite "$RB" -C "$RB" -i "$WORK/forged" 2>/dev/null || fail "the record was written without the policy"
	! tpm2_nvwrite "$RB" -C o -i "$WORK/forged" 2>/dev/null || fail "the owner wrote the record"

	step "boot 3: a newer disk (generation 12) recorded"
	disk 12
	cp "$WORK/fs.img" "$WORK/fs.12"
	boot_load 0
	err_has "Recorded generation 12 of btrfs:root"

	step "the whole disk put back from generation 10: refused, no passphrase typed or a wrong one"
	disk 10
	boot_load 50
	err_has "the disk is older than this machine's last boot: its superblocks have generation 10"
	err_has "the TPM recorded 12 at the last boot"
	err_has "The disk was not accepted: the root is not mounted"
	STDIN=$WORK/wrong boot_load 50

	step "only the primary superblock put back (the backup copy is current): refused"
	cp "$WORK/fs.12" "$WORK/fs.img"
	"$BA_HELPER" mksb "$WORK/fs.img" "$WORK/key" "$RB_UUID" 10 65536
	boot_load 50
	err_has "its superblocks have generation 12 (primary 10)"

	step "the administrator accepts the restored disk with the recovery passphrase; later boots pass unattended"
	disk 10
	STDIN=$WORK/pass boot_load 0
	err_has "accepted with the recovery passphrase"
	err_has "Recorded generation 10 of btrfs:root"
	boot_load 0
	err_lacks "older"

	step "a boot that cannot sign (no PCR signature; the recovery passphrase opened the key): checked, not recorded"
	NOSIG=("${L[@]/$WORK\/sig.json/$WORK/none.json}")
	disk 14
	reboot_signed
	STDIN=$WORK/pass expect 0 load "${NOSIG[@]}" root
	err_has "checks the disk against the rollback record but does not update it"
	err_lacks "Recorded generation"
	disk 9
	reboot_signed
	STDIN=$WORK/pass expect 50 load "${NOSIG[@]}" root
	err_has "the disk is older than this machine's last boot"
	! have_key btrfs:root || fail "an older disk was loaded in a boot without a signature"
	disk 14
	boot_load 0
	err_has "Recorded generation 14 of btrfs:root"
	disk 10
	STDIN=$WORK/pass boot_load 0

	step "the anchor forged, truncated, or for another filesystem: refused (53)"
	printf '\x01' | dd of="$anchor" bs=1 seek=20 conv=notrunc 2>/dev/null
	boot_load 53
	err_has "root.rollback was not made with the key of btrfs:root"
	head -c 40 "$WORK/anchor.good" >"$anchor"
	boot_load 53
	err_has "is not a rollback anchor"
	cp "$WORK/anchor.good" "$anchor"

	step "the counter incremented by someone else: refused (51) unless the recovery passphrase repairs it"
	tpm2_nvincrement "$RB_COUNTER" -C "$RB_COUNTER" || fail "tpm2_nvincrement failed"
	boot_load 51
	err_has "does not match the record's"
	STDIN=$WORK/pass boot_load 0
	err_has "Recorded generation 10 of btrfs:root"
	boot_load 0

	step "an index of another kind at the record's handle: refused (51), never overwritten"
	cp "$WORK/fs.12" "$WORK/fs.img"
	tpm2_nvundefine "$RB" -C o
	tpm2_nvdefine "$RB" -C o -s 48 -a "ownerread|ownerwrite|authread|authwrite" >/dev/null
	boot_load 51
	err_has "is not btrfs-auth's rollback record (attributes)"
	STDIN=$WORK/pass boot_load 51
	tpm2_nvundefine "$RB" -C o
	tpm2_nvdefine "$RB" -C o -s 64 -a "ownerread|ownerwrite|authread|authwrite" >/dev/null
	boot_load 51
	err_has "is not btrfs-auth's rollback record (name algorithm or size)"
	tpm2_nvundefine "$RB" -C o

	step "the record deleted (TPM owner): refused (54); the recovery passphrase defines it again"
	boot_load 54
	err_has "The rollback record (TPM NV index 0x01b7a000) is missing"
	STDIN=$WORK/pass boot_load 0
	err_has "Recorded generation 12 of btrfs:root"
	disk 10
	boot_load 50

	step "the record deleted and defined again, empty, with its real policy: refused (51) until the passphrase"
	tpm2_nvundefine "$RB" -C o
	# enroll in another directory defines it as the real one would; this machine's anchor stays the old one.
	expect 0 enroll --config-dir "$WORK/etc2" --no-recovery --key-file "$WORK/key" --signed-policy "$WORK/pcr.pem" \
		--pcrs 7 --uuid "$RB_UUID" --rollback-index "$RB" root
	disk 10
	boot_load 51
	err_has "is empty and its counter (0x01b7a001) is not where enrollment left it"
	STDIN=$WORK/pass boot_load 0
	err_has "Recorded generation 10 of btrfs:root"

	step "another filesystem on the same index: refused at enrollment (52); its record refused at boot (52)"
	new_key "$WORK/key2"
	"$BA_HELPER" mksb "$WORK/fs2.img" "$WORK/key2" 7b0a7b0a-5555-4444-8888-0000000000ff 5
	E2=(enroll --config-dir "$etc" --no-recovery --key-file "$WORK/key2" --signed-policy "$WORK/pcr.pem" --pcrs 7
		--uuid 7b0a7b0a-5555-4444-8888-0000000000ff --rollback-index "$RB" other)
	expect 52 "${E2[@]}"
	err_has "holds another filesystem's rollback record"
	if [ -e "$etc/other.rollback" ] || [ -e "$etc/other.sealed" ]; then fail "a refused enrollment wrote files"; fi
	tpm2_nvundefine "$RB" -C o
	expect 0 "${E2[@]}"
	reboot_signed
	expect 0 load "${L[@]/$WORK\/fs.img/$WORK/fs2.img}" other
	err_has "Recorded generation 5 of btrfs:other"
	cp "$WORK/fs.12" "$WORK/fs.img"
	boot_load 52
	err_has "holds the generation of btrfs 7b0a7b0a-5555-4444-8888-0000000000ff, not of $RB_UUID"
	STDIN=$WORK/pass boot_load 52

	step "the anchor for another filesystem, MACed with the right key: refused (53)"
	cp "$WORK/anchor.good" "$anchor"
	python3 - "$anchor" "$WORK/key" <<'PY'
import hashlib, hmac, sys
p, key = sys.argv[1], open(sys.argv[2], "rb").read()
a = bytearray(open(p, "rb").read())
a[24:40] = b"\xff" * 16  # another filesystem's UUID
a[40:72] = hmac.new(key, b"btrfs-auth rollback anchor v1" + bytes(a[:40]), hashlib.sha256).digest()
open(p, "wb").write(a)
PY
	boot_load 53
	err_has "names another filesystem than btrfs:root was enrolled for"

	step "rekey: the anchor follows the new key (MACed again, nothing else changed)"
	cp "$WORK/anchor.good" "$anchor"
	make_fake_btrfstune "$RB_UUID"
	reboot_signed
	STDIN=$WORK/pass expect 0 rekey --config-dir "$etc" --device "$WORK/fs.img" --key-file "$WORK/key" \
		--btrfstune "$WORK/bin/fake-btrfstune" --passphrase-from stdin --no-update-initramfs root
	err_has "root.rollback: MACed with the new key"
	cmp -s -n 40 "$anchor" "$WORK/anchor.good" || fail "rekey changed the anchor's content"
	! cmp -s "$anchor" "$WORK/anchor.good" || fail "rekey left the anchor's MAC"
	cp "$WORK/tune-new" "$WORK/key"
	disk 12
	boot_load 52 # past the anchor (53 otherwise), up to the other filesystem's record
}

# ---- main ---------------------------------------------------------------------

echo "case $CASE${BA_WRAP:+ (under $BA_WRAP)}"
case "$CASE" in
seal-load) case_seal_load ;;
srk) case_srk ;;
check-image) case_check_image ;;
pcr-policy) case_pcr_policy ;;
pin) case_pin ;;
lockout) case_lockout ;;
corrupt) case_corrupt ;;
lock) case_lock ;;
param-encryption) case_param_encryption ;;
no-tpm) case_no_tpm ;;
recovery) case_recovery ;;
recovery-key) case_recovery_key ;;
provision) case_provision ;;
signed-policy) case_signed_policy ;;
provision-record) case_provision_record ;;
rollback) case_rollback ;;
*) fail "unknown case" ;;
esac
echo "PASS [$CASE]"
