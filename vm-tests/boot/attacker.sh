# shellcheck shell=bash
# What an attacker with write access to the powered-off disk can make of
# the boot image on the EFI system partition, for the UEFI scenarios:
# take the signed UKI apart, change a part, put it together again, sign
# it with whatever key they have (or none).  Everything the attacker uses
# is public: the UKI's sections, its PCR signature and public key.
# Sourced by scenarios (run-boot.sh sets work, kernel, ...).  Test only.
# shellcheck disable=SC2154 # work is run-boot.sh's

# attacker_unpack UKI DIR: the sections systemd-stub reads, one file each.
attacker_unpack() {
	local s
	mkdir -p "$2"
	for s in linux initrd cmdline osrel pcrpkey pcrsig; do
		objcopy -O binary --only-section=".$s" "$1" "$2/$s" || ba_die "cannot extract .$s from $1"
	done
}

# attacker_uki OUT SIGNER [--cmdline TEXT] [--initrd FILE] [--no-pcrsig]:
# the legitimate UKI ($work/uki.efi) with the given parts replaced, the
# legitimate PCR signature and public key copied in (unless --no-pcrsig),
# signed by SIGNER: db (a key the firmware trusts), attacker (one it does
# not) or none.
attacker_uki() {
	local out=$1 signer=$2 parts=$work/attacker-parts cmdline initrd pcr=(--pcr-public-key) sign=()
	shift 2
	attacker_unpack "$work/uki.efi" "$parts"
	cmdline=$(cat "$parts/cmdline") initrd=$parts/initrd
	pcr+=("$parts/pcrpkey" --pcr-signature "$parts/pcrsig")
	while [ $# -gt 0 ]; do
		case $1 in
		--cmdline) cmdline=$2; shift 2 ;;
		--initrd) initrd=$2; shift 2 ;;
		--no-pcrsig) pcr=(); shift ;;
		*) ba_die "attacker_uki: unknown option $1" ;;
		esac
	done
	case $signer in
	db) sign=(--secureboot-private-key "$work/keys/db.key" --secureboot-certificate "$work/keys/db.crt") ;;
	attacker) sign=(--secureboot-private-key "$work/keys/attacker.key" --secureboot-certificate "$work/keys/attacker.crt") ;;
	none) ;;
	*) ba_die "attacker_uki: signer '$signer' is not db, attacker or none" ;;
	esac
	"$BA_UKI_TOOL" --linux "$parts/linux" --initrd "$initrd" --cmdline "$cmdline" --os-release "$parts/osrel" \
		"${pcr[@]}" "${sign[@]}" --out "$out" 2>"$out.log" || ba_die "assembling $out failed: $(cat "$out.log")"
}

# attacker_initrd OUT DIR: the legitimate initramfs with DIR appended as
# another cpio archive, whose files win over the ones before them.
attacker_initrd() {
	local size
	attacker_unpack "$work/uki.efi" "$work/attacker-parts"
	cp "$work/attacker-parts/initrd" "$1"
	# The kernel takes an uncompressed archive only at a 4-byte boundary; zeros between are skipped.
	size=$(stat -c %s "$1")
	head -c $(((4 - size % 4) % 4)) /dev/zero >>"$1"
	(cd "$2" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >>"$1" || ba_die "cpio of $2 failed"
}

# An initramfs addition that waits for the authenticated root, remounts it
# read-write and writes a file there: if the key ever unsealed, this would
# land in the root with valid MACs.
attacker_unit_dir() {
	local d=$1
	mkdir -p "$d/etc/systemd/system/initrd.target.wants"
	cat >"$d/etc/systemd/system/ba-attacker.service" <<'UNIT'
[Unit]
Description=The attacker's addition to the initramfs
DefaultDependencies=no
After=sysroot.mount
Requires=sysroot.mount

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'mount -o remount,rw /sysroot && echo BA-ATTACKER-WAS-HERE >/sysroot/attacker-was-here && sync'
UNIT
	ln -sf ../ba-attacker.service "$d/etc/systemd/system/initrd.target.wants/ba-attacker.service"
	# Proof that the addition really runs in the initramfs (a test of the test): it says so on
	# the console, early, before the key's load.
	mkdir -p "$d/etc/systemd/system/sysinit.target.wants"
	cat >"$d/etc/systemd/system/ba-attacker-here.service" <<'UNIT'
[Unit]
Description=The attacker's code runs in the initramfs
DefaultDependencies=no
Before=btrfs-auth-load@root.service

[Service]
Type=oneshot
ExecStart=/bin/echo BA-ATTACKER-CODE-RAN
StandardOutput=journal+console
UNIT
	ln -sf ../ba-attacker-here.service "$d/etc/systemd/system/sysinit.target.wants/ba-attacker-here.service"
}

# Nothing the attacker wrote reached the authenticated root.
attacker_left_no_trace() {
	! LC_ALL=C grep -q -a -F 'BA-ATTACKER-WAS-HERE' "$1" || ba_die "the attacker's file is in $1"
}
