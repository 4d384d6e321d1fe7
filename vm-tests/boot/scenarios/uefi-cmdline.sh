# shellcheck shell=bash disable=SC2034,SC2154 # sourced by run-boot.sh, which sets work, uuid, ...
# Boot images the firmware accepts (signed with a db key: a debug image,
# an older one, another distribution's) but that were not signed for
# unsealing, with the command lines an attacker would choose; the real
# PCR signature and public key are copied in.  PCR 7 matches, PCR 11 does
# not: each time the TPM does not release the key and the authenticated
# root is not mounted.
#   1. rd.break          2. rd.shell=1 rd.emergency=shell
#   3. init=/bin/sh      4. rootflags without auth_key= (the kernel refuses
#                           the keyed root; the initramfs halts)
#   5. root= another filesystem
# Afterwards the root is intact: btrfs check with the key is clean.
# shellcheck source=../attacker.sh
source "$here/attacker.sh"
FIRMWARE=uefi
BOOT_PLAN=no-unseal,no-unseal,no-unseal,fail-closed,no-unseal
SIGNATURE='No signature in /.extra/tpm2-pcr-signature.json for this boot.s PCR 11'

edited_cmdline() {
	local c
	c=$(ba_vm_cmdline 0 " $(boot_cmdline)")
	case $1 in
	1) echo "$c rd.break" ;;
	2) echo "$c rd.shell=1 rd.emergency=shell" ;;
	3) echo "$c init=/bin/sh" ;;
	4) echo "${c/rootflags=auth_key=btrfs:root/rootflags=ro}" ;;
	5) echo "${c/root=UUID=$uuid/root=UUID=$(cat /proc/sys/kernel/random/uuid)}" ;;
	esac
}

scenario_boot_args() {
	attacker_uki "$work/cmdline-$1.efi" db --cmdline "$(edited_cmdline "$1")"
	ba_uefi_esp "$work/esp.img" "$work/cmdline-$1.efi"
}

scenario_patterns() {
	case $1 in
	4) FAIL_CLOSED_PATTERNS=('BTRFS error .*checksum algorithm hmac\(sha256\) needs a key'
		'FAILED.*Failed to mount .*sysroot') ;;
	*) FAIL_CLOSED_PATTERNS=("btrfs-auth\\[[0-9]+\\]: .*$SIGNATURE") ;;
	esac
}

scenario_finish() {
	check_image final
}
