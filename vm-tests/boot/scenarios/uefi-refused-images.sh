# shellcheck shell=bash disable=SC2034,SC2154 # sourced by run-boot.sh, which sets work, progs, uuid, ...
# The attacker writes the powered-off disk: the EFI system partition and
# the root partition.  Each boot tries one thing (the key was enrolled by
# the administrator as in uefi-signed-root); none may unseal the key or
# get anything into the authenticated root.
#   1. The UKI with an archive appended to its initramfs (a unit that
#      remounts /sysroot read-write after the key load and writes a file):
#      its Secure Boot signature no longer holds; the firmware refuses it.
#   2. The legitimate UKI signed with the attacker's key: refused.
#   3. Secure Boot turned off, the legitimate UKI: it boots, PCR 7 differs,
#      the TPM refuses the key, the initramfs halts.
#   4. Secure Boot off, the tampered UKI of 1: no signature for its PCR 11
#      (and PCR 7 differs): no unseal.
#   5. Secure Boot off, a UKI whose initramfs carries the attacker's own key
#      file, sealed under this TPM's storage root key to the very policy
#      of the real one, and a root filesystem made with that key (same
#      UUID): no unseal, the root is not mounted.
#   6. Secure Boot on, the legitimate UKI, the root partition replaced by
#      the attacker's filesystem: the real key unseals, the kernel refuses
#      the filesystem (its superblock does not verify), the initramfs halts.
#   7. Secure Boot on, the legitimate UKI and the real root, a credential
#      dropped next to the UKI (systemd-stub hands it to the initramfs and
#      measures it into PCR 12): PCR 12 differs, no unseal.
# Afterwards the real root holds nothing the attacker wrote.
# shellcheck source=../attacker.sh
source "$here/attacker.sh"
FIRMWARE=uefi
BOOT_PLAN=refused-by-firmware,refused-by-firmware,fail-closed,no-unseal,no-unseal,fail-closed,fail-closed
SIGNATURE='No signature in /.extra/tpm2-pcr-signature.json for this boot.s PCR 11'

scenario_finish_root() {
	attacker_unit_dir "$work/attacker-add"
	attacker_unit_dir "$work/attacker-add-key"
}

# The attacker's key sealed to the real key's policy: the same signer, the
# sealed PCRs' values read from the real key file (which is public).
attacker_key_file() {
	local args=() line pcr value
	(umask 077 && head -c 32 /dev/urandom >"$work/attacker.key")
	while read -r line; do
		[[ $line =~ ^PCR\ ([0-9]+):\ +([0-9a-f]{64})$ ]] || continue
		pcr=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
		[ "$pcr" = 15 ] || args+=(--pcr-value "$pcr=$value")
	done < <("$work/root$TOOL_PATH" status --no-tpm "$work/root.sealed")
	[ "${#args[@]}" = 6 ] || ba_die "cannot read PCRs 7, 12 and 13 from the real key file"
	ba_swtpm_tcp_start "$work/tpm" "$work/attacker-swtpm.log" || ba_die "cannot open the machine's TPM"
	"$work/root$TOOL_PATH" enroll --tcti="$BA_SWTPM_TCTI" --key-file="$work/attacker.key" --no-recovery \
		--signed-policy="$work/keys/pcr.pem" --pcrs=7,12,13 "${args[@]}" --uuid="$uuid" \
		"$work/attacker-add-key/etc/btrfs-auth/root.sealed" >"$work/attacker-enroll.log" 2>&1 ||
		ba_die "the attacker's enrollment failed: $(tail -n 3 "$work/attacker-enroll.log")"
	ba_swtpm_tcp_stop
	"$progs/mkfs.btrfs" -q -f -U "$uuid" --csum hmac-sha256 --auth-key-file "$work/attacker.key" \
		--rootdir "$work/root" "$work/attacker-root.img" >"$work/attacker-mkfs.log" 2>&1 ||
		ba_die "mkfs of the attacker's root failed: $(tail -n 3 "$work/attacker-mkfs.log")"
}

scenario_boot_args() {
	case $1 in
	1)
		attacker_initrd "$work/tampered-initrd" "$work/attacker-add"
		attacker_uki "$work/tampered.efi" none --initrd "$work/tampered-initrd"
		ba_uefi_esp "$work/esp.img" "$work/tampered.efi"
		;;
	2)
		attacker_uki "$work/attacker-signed.efi" attacker
		ba_uefi_esp "$work/esp.img" "$work/attacker-signed.efi"
		;;
	3)
		ba_uefi_vars "$work/uefi-vars.fd" off
		ba_uefi_esp "$work/esp.img" "$work/uki.efi"
		;;
	4)
		ba_uefi_esp "$work/esp.img" "$work/tampered.efi"
		;;
	5)
		mkdir -p "$work/attacker-add-key/etc/btrfs-auth"
		attacker_key_file
		attacker_initrd "$work/attacker-key-initrd" "$work/attacker-add-key"
		attacker_uki "$work/attacker-key.efi" none --initrd "$work/attacker-key-initrd"
		ba_uefi_esp "$work/esp.img" "$work/attacker-key.efi"
		boot_root_img=$work/attacker-root.img
		;;
	6)
		ba_uefi_vars "$work/uefi-vars.fd" secureboot
		ba_uefi_esp "$work/esp.img" "$work/uki.efi" "/btrfs-auth/root.sealed:$work/attacker-add-key/etc/btrfs-auth/root.sealed"
		boot_root_img=$work/attacker-root.img
		;;
	7)
		printf 'tmpfiles.extra: f /sysroot/attacker-was-here - - - - BA-ATTACKER-WAS-HERE\n' >"$work/attacker.cred"
		ba_uefi_esp "$work/esp.img" "$work/uki.efi" "/EFI/BOOT/BOOTX64.EFI.extra.d/ba-attacker.cred:$work/attacker.cred"
		;;
	esac
}

scenario_patterns() {
	case $1 in
	3) FAIL_CLOSED_PATTERNS=('btrfs-auth\[[0-9]+\]: .*PCR 7 differs from the value sealed to'
		'btrfs-auth\[[0-9]+\]: .*PCR 7 \(sha256\) is [0-9a-f]+, sealed to' 'FAILED.*Failed to start .*btrfs-auth') ;;
	4) FAIL_CLOSED_PATTERNS=('BA-ATTACKER-CODE-RAN' "btrfs-auth\\[[0-9]+\\]: .*$SIGNATURE"
		'btrfs-auth\[[0-9]+\]: .*PCR 7 \(sha256\) is [0-9a-f]+, sealed to') ;;
	5) FAIL_CLOSED_PATTERNS=('BA-ATTACKER-CODE-RAN' "btrfs-auth\\[[0-9]+\\]: .*$SIGNATURE") ;;
	6) FAIL_CLOSED_PATTERNS=('btrfs-auth\[[0-9]+\]: .*Loaded btrfs:root'
		'BTRFS error .*superblock authentication failed: the key btrfs:root is probably wrong'
		'FAILED.*Failed to mount .*sysroot') ;;
	7) FAIL_CLOSED_PATTERNS=('btrfs-auth\[[0-9]+\]: .*PCR 12 differs from the value sealed to'
		'FAILED.*Failed to start .*btrfs-auth') ;;
	esac
}

scenario_finish() {
	attacker_left_no_trace "$work/root.img"
	attacker_left_no_trace "$work/attacker-root.img"
	check_image refused
}
