# shellcheck shell=bash disable=SC2034,SC2154 # sourced by run-boot.sh, which sets work, here, ...
# Recovery passphrase and reseal for a planned PCR change.  The key is
# enrolled with a recovery passphrase, bound to PCRs 0,1,2,4,7 and the lock
# PCR 15.  Every boot then runs with another SMBIOS system serial, which
# SeaBIOS measures into PCR 1: the "firmware update" the key was not
# sealed for.
#   1. The TPM refuses; the console asks for the recovery passphrase; three
#      wrong ones are typed: the load fails, root is not mounted, the
#      initramfs halts.
#   2. A wrong one, then the right one: the system boots with the key from
#      the recovery copy.  There "btrfs-auth reseal root" (the passphrase
#      typed at systemd's console agent) binds the key to this boot's PCRs,
#      keeps the old file as root.sealed.previous and runs the initramfs
#      update command, which here hands the files to the host; the host
#      rebuilds the initramfs with them.
#   3. The old firmware again (no SMBIOS serial: the state enrolled first),
#      before any confirm: root.sealed does not unseal, root.sealed.previous
#      (which the initramfs carries) does, unattended; "btrfs-auth confirm
#      root" refuses and keeps it.
#   4. The new firmware, unattended: root.sealed unseals; "btrfs-auth
#      confirm root" retires root.sealed.previous.
# The passphrase must appear in no console log and in no journal.
ENROLL_ARGS="--pcrs=0,1,2,4,7 --lock-pcr=15 --allow-unmeasured-initramfs --argon2-memory=32 --argon2-time=1"
RECOVERY=1
BOOT_PLAN=fail-closed,recovery-reseal,previous,resealed
FAIL_CLOSED_PATTERNS=(
	'btrfs-auth\[[0-9]+\]: .*PCR 1 differs from the value sealed to'
	'btrfs-auth\[[0-9]+\]: .*Wrong recovery passphrase for btrfs:root; 2 more tries'
	'btrfs-auth\[[0-9]+\]: .*Wrong recovery passphrase for btrfs:root, no tries left'
	'FAILED.*Failed to start .*btrfs-auth'
)
SMBIOS=type=1,serial=ba-firmware-update-2
PROMPT='Recovery passphrase for btrfs:root'

scenario_finish_root() {
	local r=$work/root
	install -D -m 0755 "$here/guest/ba-export-keys" "$r/usr/local/libexec/ba-export-keys"
	mkdir -p "$work/initrd-keys"
	# Time for a person at the prompt; the initramfs update hands the files to the host.
	printf 'BTRFS_AUTH_PIN_TIMEOUT=600\nBTRFS_AUTH_UPDATE_INITRAMFS=/usr/local/libexec/ba-export-keys\n' |
		tee "$r/etc/btrfs-auth/btrfs-auth.conf" >"$work/initrd-keys/btrfs-auth.conf"
}

# boot N: the lines run-vm.sh types (ERE<TAB>text), mode 0600.
typing() {
	local pass wrong f=$work/boot-$1.typing
	pass=$(cat "$work/passphrase")
	wrong="not-$pass"
	(
		umask 077
		case $1 in
		1) printf '%s\t%s\n' "$PROMPT" "$wrong" "$PROMPT" "${wrong}2" "$PROMPT" "${wrong}3" ;;
		2) printf '%s\t%s\n' "$PROMPT" "$wrong" "$PROMPT" "$pass" "$PROMPT" "$pass" ;;
		esac >"$f"
	)
	echo "$f"
}

scenario_boot_args() {
	[ "$1" = 3 ] || boot_extra_args+=(--qemu-arg -smbios --qemu-arg "$SMBIOS")
	[ "$1" -ge 3 ] || boot_extra_args+=(--console-input "$(typing "$1")")
}

# The last key files the guest exported (ba-export-keys) into DIR.
take_key_files() {
	local n=$1 dir=$2 line file
	rm -rf "$dir"
	mkdir -p "$dir"
	tr -d '\r' <"$work/console-$n.markers" | sed -n 's/^BA-KEYFILE: //p' >"$work/keyfiles-$n.txt"
	while read -r file line; do
		[ "$file" != end ] || continue
		case $file in root.sealed | root.sealed.previous) ;; *) ba_die "unexpected key file '$file' exported" ;; esac
		printf '%s' "$line" | base64 -d >"$dir/$file"
	done <"$work/keyfiles-$n.txt"
}

no_passphrase_in() {
	local f
	for f in "$@"; do
		! grep -qF -f "$work/passphrase" "$f" || ba_die "the recovery passphrase appears in $f"
	done
}

scenario_after_boot() {
	no_passphrase_in "$work/console-$1.log" "$work/console-$1.markers"
	case $1 in
	2)
		grep -q '^BA-VERDICT: PASS' <(tr -d '\r' <"$work/console-2.markers") || ba_die "boot 2 did not pass"
		take_key_files 2 "$work/exported"
		if [ ! -s "$work/exported/root.sealed" ] || [ ! -s "$work/exported/root.sealed.previous" ]; then
			ba_die "the reseal did not export root.sealed and root.sealed.previous"
		fi
		cmp -s "$work/exported/root.sealed.previous" "$work/root.sealed" ||
			ba_die "root.sealed.previous is not the file enrolled first"
		! cmp -s "$work/exported/root.sealed" "$work/root.sealed" || ba_die "reseal did not change root.sealed"
		step "reseal in the guest: new root.sealed, the enrolled one kept as root.sealed.previous"
		install -m 0600 "$work/exported/root.sealed" "$work/root.sealed"
		install -m 0600 "$work/exported/root.sealed.previous" "$work/initrd-keys/root.sealed.previous"
		rm -rf "$work/modroot" "$work/dracut"
		ba_timed "dracut with the resealed key" make_initramfs
		;;
	3)
		grep -q '^BA-VERDICT: PASS' <(tr -d '\r' <"$work/console-3.markers") || ba_die "boot 3 did not pass"
		grep -q 'btrfs-auth\[[0-9]*\]: .*Unsealed btrfs:root with its previous sealed copy' "$work/console-3.log" ||
			ba_die "boot 3 did not unseal root.sealed.previous in the initramfs"
		step "the old firmware again: root.sealed.previous in the initramfs unsealed, confirm refused"
		;;
	4)
		take_key_files 4 "$work/exported"
		[ -s "$work/exported/root.sealed" ] || ba_die "the guest exported no root.sealed after confirm"
		[ ! -e "$work/exported/root.sealed.previous" ] || ba_die "after confirm the guest still has root.sealed.previous"
		# The journals the guest kept on its root: the passphrase is in none.
		if LC_ALL=C grep -c -F -f "$work/passphrase" "$work/root.img" >/dev/null; then
			ba_die "the recovery passphrase is stored on the root file system (journal?)"
		fi
		LC_ALL=C grep -q -a '__CURSOR=' "$work/root.img" || ba_die "no exported journal found in the image"
		step "confirm retired root.sealed.previous; the passphrase is in no log and no journal"
		;;
	esac
}
