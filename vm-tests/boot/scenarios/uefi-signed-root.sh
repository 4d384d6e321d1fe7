# shellcheck shell=bash disable=SC2034,SC2154 # sourced by run-boot.sh, which sets work, kernel, ...
# The trusted boot chain (the README's main job): UEFI with Secure Boot
# on, a unified kernel image signed with the db key, its PCR 11 signed for
# the enter-initrd phase, the patched btrfs.ko signed with the db key, the
# root's key sealed to the signed PCR 11 plus PCRs 7, 12, 13 and the lock
# PCR 15 (enroll's default on a UKI).
#   1. Unattended boot: root authenticated, key loaded in the initramfs,
#      Secure Boot on, kernel locked down, module signed, the command line
#      the UKI's; after switch-root neither btrfs-auth nor tpm2-tools
#      unseal the key; PCR 15 holds the key's measurement and the lock.
#   2. An update: a rebuilt initramfs and a changed kernel image, signed
#      with the same keys, nothing resealed: unattended again, with
#      another PCR 11.
#   3. An image the firmware accepts without a PCR signature: the load
#      says so (exit 16), the recovery passphrase typed on the console
#      still opens the key and the boot goes on; the passphrase is in no
#      console log.
# shellcheck source=../attacker.sh
source "$here/attacker.sh"
FIRMWARE=uefi
RECOVERY=1
ENROLL_ARGS="--signed-policy=/ba/in/pcr.pem --argon2-memory=32 --argon2-time=1"
BOOT_PLAN=first,updated,recovered
PROMPT='Recovery passphrase for btrfs:root'

scenario_finish_root() {
	local r=$work/root
	mkdir -p "$work/initrd-keys"
	printf 'BTRFS_AUTH_PIN_TIMEOUT=600\n' | tee "$r/etc/btrfs-auth/btrfs-auth.conf" >"$work/initrd-keys/btrfs-auth.conf"
}

scenario_boot_args() {
	[ "$1" = 3 ] || return 0
	attacker_uki "$work/no-pcrsig.efi" db --no-pcrsig
	ba_uefi_esp "$work/esp.img" "$work/no-pcrsig.efi"
	(umask 077 && printf '%s\t%s\n' "$PROMPT" "$(cat "$work/passphrase")" >"$work/boot-3.typing")
	boot_extra_args+=(--console-input "$work/boot-3.typing")
}

scenario_after_boot() {
	! grep -qF -f "$work/passphrase" "$work/console-$1.log" "$work/console-$1.markers" ||
		ba_die "boot $1: the recovery passphrase appears in the console log"
	if [ "$1" = 3 ]; then
		grep -q -E 'btrfs-auth\[[0-9]+\]: .*btrfs:root is sealed to signed PCR values, but the unified kernel image booted has no PCR signature' \
			"$work/console-3.log" || ba_die "boot 3: the console does not say that the image has no PCR signature"
		step "boot 3: no PCR signature, said so; the recovery passphrase opened the key"
	fi
	[ "$1" = 1 ] || return 0
	sha256sum <"$work/root.sealed" >"$work/root.sealed.sum"
	# A rebuilt initramfs (one more file in it) ...
	date >"$work/update-note"
	DRACUT_EXTRA_ARGS=(--include "$work/update-note" /etc/btrfs-auth-test-update)
	rm -rf "$work/modroot" "$work/dracut"
	ba_timed "dracut for the update" make_initramfs
	# ... and another kernel image: Debian's, signed once more (other bytes, the same code).
	sbsign --key "$work/keys/db.key" --cert "$work/keys/db.crt" --output "$work/vmlinuz-updated" "$kernel" \
		>"$work/sbsign-kernel.log" 2>&1 || ba_die "sbsign of the kernel failed: $(tail -n 2 "$work/sbsign-kernel.log")"
	cmp -s "$work/vmlinuz-updated" "$kernel" && ba_die "the updated kernel image is the same as the old one"
	ba_timed "the updated UKI" make_uki "$work/uki-updated.efi" "" "$work/initrd.img" "$work/vmlinuz-updated"
	ba_uefi_esp "$work/esp.img" "$work/uki-updated.efi"
	step "installed an updated UKI (new initramfs, new kernel image), signed by the same keys; no reseal"
}

pcr11_of() { tr -d '\r' <"$work/console-$1.markers" | sed -n 's/^BA-INFO: pcr11 //p'; }

scenario_finish() {
	[ "$(sha256sum <"$work/root.sealed")" = "$(cat "$work/root.sealed.sum")" ] ||
		ba_die "root.sealed changed: the update was resealed"
	if [ -z "$(pcr11_of 1)" ] || [ "$(pcr11_of 1)" = "$(pcr11_of 2)" ]; then
		ba_die "PCR 11 did not change with the boot image ('$(pcr11_of 1)' then '$(pcr11_of 2)')"
	fi
	step "the updated image measured differently (PCR 11) and unsealed the same key file"
}
