# shellcheck shell=bash
# Host-side helpers for UEFI, Secure Boot, measured boots (run-vm.sh
# --firmware uefi): Debian's OVMF with the snakeoil keys enrolled, test
# keys, signed unified kernel images on an EFI system partition, signed
# modules.  Sourced after common.sh, not run.

BA_OVMF_CODE=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd
# PK, KEK and db hold the snakeoil certificate: Secure Boot is on.
BA_OVMF_VARS_SECUREBOOT=/usr/share/OVMF/OVMF_VARS_4M.snakeoil.fd
# No keys enrolled: setup mode, Secure Boot off.
BA_OVMF_VARS_NOKEYS=/usr/share/OVMF/OVMF_VARS_4M.fd
BA_SNAKEOIL_KEY=/usr/share/ovmf/PkKek-1-snakeoil.key
BA_SNAKEOIL_CERT=/usr/share/ovmf/PkKek-1-snakeoil.pem
BA_SIGN_FILE=/usr/lib/linux-kbuild-6.1/scripts/sign-file
# shellcheck disable=SC2034 # for the scripts sourcing this
BA_UKI_TOOL=$BA_TOP/boot-image/btrfs-auth-uki

ba_uefi_check() {
	local f
	for f in "$BA_OVMF_CODE" "$BA_OVMF_VARS_SECUREBOOT" "$BA_OVMF_VARS_NOKEYS" "$BA_SNAKEOIL_KEY"; do
		[ -r "$f" ] || ba_die "$f is missing: apt-get install ovmf"
	done
	[ -r /usr/lib/systemd/boot/efi/linuxx64.efi.stub ] ||
		ba_die "systemd-stub is missing: apt-get install systemd-boot-efi"
	command -v sbsign >/dev/null || ba_die "sbsign is missing: apt-get install sbsigntool"
	command -v mcopy >/dev/null || ba_die "mcopy is missing: apt-get install mtools"
	[ -x "$BA_SIGN_FILE" ] || ba_die "$BA_SIGN_FILE is missing: apt-get install linux-kbuild-6.1"
}

# ba_uefi_keys DIR: the tests' signing keys, all throwaway, mode 0600 in DIR:
#   db.key db.crt      the snakeoil key (in OVMF's db), its passphrase removed
#   attacker.key/.crt  a self-signed key in no firmware database
#   pcr.key pcr.pem    the RSA pair that signs PCR 11 policies
# The snakeoil passphrase is public ("snakeoil", README.Debian of ovmf); it
# reaches openssl on a pipe all the same.
ba_uefi_keys() {
	local d=$1
	(
		umask 077
		mkdir -p "$d"
		echo snakeoil | openssl pkey -in "$BA_SNAKEOIL_KEY" -passin stdin -out "$d/db.key" 2>/dev/null
		cp "$BA_SNAKEOIL_CERT" "$d/db.crt"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/attacker.key" -out "$d/attacker.crt" \
			-days 1 -subj "/CN=btrfs-auth test attacker/" 2>/dev/null
		openssl genrsa -out "$d/pcr.key" 2048 2>/dev/null
		openssl rsa -in "$d/pcr.key" -pubout -out "$d/pcr.pem" 2>/dev/null
	) || ba_die "cannot make the test signing keys in $d"
}

# ba_uefi_vars OUT secureboot|off: a writable copy of OVMF's variable store.
ba_uefi_vars() {
	case $2 in
	secureboot) cp "$BA_OVMF_VARS_SECUREBOOT" "$1" ;;
	off) cp "$BA_OVMF_VARS_NOKEYS" "$1" ;;
	*) ba_die "ba_uefi_vars: '$2' is not secureboot or off" ;;
	esac
}

# ba_uefi_esp IMG UKI [ESP-PATH:FILE ...]: a FAT EFI system partition
# image (made and filled without mounting) whose removable-media boot path
# EFI/BOOT/BOOTX64.EFI is UKI, plus more files if given.
ba_uefi_esp() {
	local img=$1 uki=$2 spec d
	shift 2
	rm -f "$img"
	truncate -s 96M "$img"
	mkfs.vfat -F 32 -n ESP "$img" >/dev/null || ba_die "mkfs.vfat failed for $img"
	mmd -i "$img" ::/EFI ::/EFI/BOOT || ba_die "mmd failed on $img"
	mcopy -i "$img" "$uki" ::/EFI/BOOT/BOOTX64.EFI || ba_die "mcopy failed on $img"
	for spec in "$@"; do
		d=$(dirname "${spec%%:*}")
		[ "$d" = / ] || mmd -i "$img" "::$d" 2>/dev/null || true
		mcopy -i "$img" "${spec#*:}" "::${spec%%:*}" || ba_die "mcopy of ${spec#*:} failed on $img"
	done
}

# ba_uefi_sign_module KO OUT KEY CERT: KO signed as Debian's kernel checks
# modules (sha256, appended PKCS#7); the kernel trusts keys in the UEFI
# db or the MOK list (its platform keyring) besides Debian's own.
ba_uefi_sign_module() {
	cp "$1" "$2"
	"$BA_SIGN_FILE" sha256 "$3" "$4" "$2" || ba_die "sign-file failed on $2"
}

# A TPM for systemd-measure sign's policy arithmetic (a trial session,
# no secret): a throwaway swtpm under DIR.  Sets BA_SIGNING_TCTI.
ba_uefi_signing_tpm() {
	[ -z "${BA_SIGNING_TCTI:-}" ] || return 0
	ba_swtpm_tcp_start "$1" "$1/swtpm.log" || ba_die "the swtpm for systemd-measure did not start"
	# Its own variables: a scenario may start (and stop) the machine's swtpm meanwhile.
	BA_SIGNING_TCTI=$BA_SWTPM_TCTI BA_SIGNING_PID=$BA_SWTPM_PID
	BA_SWTPM_TCTI='' BA_SWTPM_PID=''
}

ba_uefi_signing_tpm_stop() {
	[ -n "${BA_SIGNING_PID:-}" ] || return 0
	kill "$BA_SIGNING_PID" 2>/dev/null || true
	wait "$BA_SIGNING_PID" 2>/dev/null || true
	BA_SIGNING_PID='' BA_SIGNING_TCTI=''
}
