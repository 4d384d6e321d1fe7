# shellcheck shell=bash disable=SC2034,SC2154 # sourced by run-boot.sh, which sets work, here, ...
# Anti-rollback: the root's newest generation recorded in the TPM at every
# boot, and an older copy of the disk refused.  UEFI, Secure Boot, signed
# UKI as in uefi-signed-root; the key enrolled with a recovery passphrase
# and --rollback-index=0x01b7a000: enroll defines the record (that index,
# written only by a boot image whose PCR 11 the PCR key signed) and a TPM
# counter (0x01b7a001), and writes the anchor root.rollback, which the
# image's /etc/btrfs-auth and the initramfs carry.  One swtpm state for
# all boots.
#   1-2. Unattended boots: each records the generation it finds, then
#      commits newer ones (the journal, ba-report's count of the root's
#      boots; the host checks that the primary superblock's grows).  A copy
#      of the root image is kept as mkfs made it, before boot 1: boot 1
#      records its generation, boot 2 a newer one.
#   3. That copy booted (boot 2 recorded a newer generation): "is older
#      than this machine's last boot", nobody types the recovery
#      passphrase, the prompt times out (BTRFS_AUTH_PIN_TIMEOUT, short
#      here), the root is not mounted, the initramfs halts.
#   4. Only the copy's primary superblock (4 KiB at 64 KiB) written over
#      the current image, whose backup superblock is current: refused the
#      same way.
#   5. The whole copy again, and the recovery passphrase typed at the
#      prompt: the older disk is accepted and booted (its own boot count
#      says 1: it is the copy, not the image of boots 1 and 2); it is the
#      current disk from now on.
#   6. Unattended again: the generation boot 5 recorded is the floor now.
#   7. The record deleted from the TPM on the host (owner authorization,
#      tpm2_nvundefine on the swtpm state): "rollback record", fail closed.
# The passphrase must appear in no console log.
FIRMWARE=uefi
RECOVERY=1
ROLLBACK_INDEX=0x01b7a000
ENROLL_ARGS="--signed-policy=/ba/in/pcr.pem --argon2-memory=32 --argon2-time=1 --rollback-index=$ROLLBACK_INDEX"
# ba-report counts boots on the root itself: boots 5 and 6 (the copy made
# before boot 1) are its 1st and 2nd; the refused boots never reach it.
BOOT_PLAN=first,again,fail-closed,fail-closed,restored,again,fail-closed
PROMPT='Recovery passphrase for btrfs:root'
# Long enough to type at under TCG (boot 5), short enough that the
# refused boots 3 and 4 do not wait long for nobody.
PIN_TIMEOUT=20
SB_PRIMARY=65536
SB_BACKUP=67108864

scenario_finish_root() {
	local r=$work/root
	[ -s "$work/root.rollback" ] || ba_die "enroll --rollback-index wrote no root.rollback"
	[ -s "$r/etc/btrfs-auth/root.rollback" ] || ba_die "the image's /etc/btrfs-auth has no root.rollback"
	mkdir -p "$work/initrd-keys"
	printf 'BTRFS_AUTH_PIN_TIMEOUT=%s\n' "$PIN_TIMEOUT" |
		tee "$r/etc/btrfs-auth/btrfs-auth.conf" >"$work/initrd-keys/btrfs-auth.conf"
}

# The copy of the root image kept before boot 1.
saved() { echo "$work/root-before-boot-1.img"; }

# sb_generation IMAGE OFFSET: the generation field of the superblock copy at OFFSET.
sb_generation() {
	od -An -t u8 -j $(($2 + 0x48)) -N 8 "$1" | tr -d ' '
}

# The image as mkfs made it: older than what boot 2 finds.
scenario_before_boot() {
	[ "$1" = 1 ] || return 0
	cp --sparse=always "$work/root.img" "$(saved)" || ba_die "cannot copy the root image"
	step "kept a copy of the root image before boot 1 (generation $(sb_generation "$(saved)" "$SB_PRIMARY"))"
}

scenario_boot_args() {
	case $1 in
	3) boot_root_img=$(saved) ;;
	5)
		(umask 077 && printf '%s\t%s\n' "$PROMPT" "$(cat "$work/passphrase")" >"$work/boot-5.typing")
		boot_extra_args+=(--console-input "$work/boot-5.typing")
		;;
	esac
}

scenario_patterns() {
	case $1 in
	3 | 4) FAIL_CLOSED_PATTERNS=(
		'btrfs-auth\[[0-9]+\]: .*is older than this machine.s last boot'
		'FAILED.*Failed to start .*btrfs-auth')
		;;
	7) FAIL_CLOSED_PATTERNS=(
		'btrfs-auth\[[0-9]+\]: .*rollback record'
		'FAILED.*Failed to start .*btrfs-auth')
		;;
	*) ba_die "boot $1 was not to fail closed" ;;
	esac
}

older_said() { grep -q -E 'btrfs-auth\[[0-9]+\]: .*is older than this machine.s last boot' "$work/console-$1.log"; }

# The record deleted with the owner's authorization (empty in these tests),
# on the machine's TPM state, while the machine is off.
delete_record() {
	ba_swtpm_tcp_start "$work/tpm" "$work/swtpm-nvundefine.log" || ba_die "swtpm on the machine's TPM state did not start"
	tpm2_nvreadpublic -T "$BA_SWTPM_TCTI" "$ROLLBACK_INDEX" >/dev/null 2>&1 ||
		ba_die "the TPM has no NV index $ROLLBACK_INDEX after six boots"
	tpm2_nvundefine -T "$BA_SWTPM_TCTI" -C o "$ROLLBACK_INDEX" >"$work/nvundefine.log" 2>&1 ||
		ba_die "tpm2_nvundefine $ROLLBACK_INDEX failed: $(tail -n 3 "$work/nvundefine.log")"
	! tpm2_nvreadpublic -T "$BA_SWTPM_TCTI" "$ROLLBACK_INDEX" >/dev/null 2>&1 ||
		ba_die "NV index $ROLLBACK_INDEX is still defined"
	ba_swtpm_tcp_stop
	step "deleted the rollback record (NV index $ROLLBACK_INDEX) from the machine's TPM with tpm2_nvundefine"
}

scenario_after_boot() {
	local g s b
	! grep -qF -f "$work/passphrase" "$work/console-$1.log" "$work/console-$1.markers" ||
		ba_die "boot $1: the recovery passphrase appears in the console log"
	case $1 in
	[1-2] | 6)
		! older_said "$1" || ba_die "boot $1: an unattended boot of the current disk was called older"
		# Each boot must leave a newer disk than the one it recorded, or nothing here could be older.
		g=$(sb_generation "$work/root.img" "$SB_PRIMARY")
		[ "$g" -gt "${last_generation:-0}" ] ||
			ba_die "boot $1 committed nothing: the root's generation is still $g"
		last_generation=$g
		step "boot $1: unattended; the root's generation is $g now"
		;;
	esac
	case $1 in
	1)
		lsinitrd "$work/initrd.img" >"$work/lsinitrd.txt" 2>&1 || ba_die "lsinitrd failed: $(tail -n 3 "$work/lsinitrd.txt")"
		grep -q 'etc/btrfs-auth/root\.rollback$' "$work/lsinitrd.txt" || ba_die "the initramfs has no root.rollback"
		;;
	2)
		step "boot 3 boots the copy from before boot 1: generation $(sb_generation "$(saved)" "$SB_PRIMARY"), the disk is at $last_generation"
		;;
	3)
		# Its superblock copy, written over the current image's primary one only.
		dd if="$(saved)" of="$work/root.img" bs=4096 skip=$((SB_PRIMARY / 4096)) seek=$((SB_PRIMARY / 4096)) \
			count=1 conv=notrunc status=none || ba_die "cannot write the old primary superblock"
		s=$(sb_generation "$work/root.img" "$SB_PRIMARY") b=$(sb_generation "$work/root.img" "$SB_BACKUP")
		if [ "$s" != "$(sb_generation "$(saved)" "$SB_PRIMARY")" ] || [ "$b" != "$last_generation" ]; then
			ba_die "the image's superblocks are not as planned: primary $s, backup $b"
		fi
		step "wrote the copy's primary superblock (generation $s) over the current image (backup at $b)"
		;;
	4)
		# The image with the old primary superblock is not needed again: the whole copy replaces it.
		mv "$(saved)" "$work/root.img"
		step "put back the whole copy from before boot 1 (generation $(sb_generation "$work/root.img" "$SB_PRIMARY"))"
		;;
	5)
		older_said 5 || ba_die "boot 5: the console does not say the disk is older than the last boot"
		[ -s "$work/console-5.log.typed" ] || ba_die "boot 5: the recovery passphrase was never asked for"
		tr -d '\r' <"$work/console-5.markers" | grep -q '^BA-INFO: boots-of-this-root 1$' ||
			ba_die "boot 5 did not boot the copy kept before boot 1 (ba-report counts $(tr -d '\r' <"$work/console-5.markers" | sed -n 's/^BA-INFO: boots-of-this-root //p'))"
		last_generation=$(sb_generation "$work/root.img" "$SB_PRIMARY")
		step "boot 5: the older disk, accepted with the recovery passphrase, booted (its 1st boot)"
		;;
	6) delete_record ;;
	esac
}
