#!/bin/bash
# End-to-end boot of a Debian 12 root on authenticated btrfs, the key
# sealed to a TPM (swtpm) and loaded by the project's initramfs.
#
#   1. a minimal Debian root (boot/rootfs.sh, cached) with the project
#      installed into it by "meson install --destdir";
#   2. an enrollment boot: "btrfs-auth enroll" in the VM against its TPM,
#      bound to the PCRs the VM's firmware produces (boot/enroll.sh);
#   3. the root image made with the patched "mkfs.btrfs --csum hmac-sha256
#      --rootdir", holding the sealed key in /etc/btrfs-auth;
#   4. an initramfs built by this machine's dracut with the patched btrfs.ko
#      and the 91btrfs-auth module;
#   5. the boot(s), judged by what the booted system reports over the
#      serial port (guest/ba-report), or, for boots that must fail closed,
#      by the console.
#
# usage: run-boot.sh [--keep] --install-info FILE SCENARIO
#   SCENARIO      a file in vm-tests/boot/scenarios/ (name or path)
#   --install-info the file meson writes with the build dir and the paths
#                 the project installs to (vm-tests/meson.build)
#   --keep        keep the work directory (images, logs) even on success
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
source "$here/../lib/common.sh"
# shellcheck source=../lib/uefi.sh
source "$here/../lib/uefi.sh"

keep=0 info=''
while [ $# -gt 1 ]; do
	case $1 in
	--keep) keep=1; shift ;;
	--install-info) info=${2:?}; shift 2 ;;
	*) break ;;
	esac
done
if [ $# != 1 ] || [ -z "$info" ]; then
	ba_die "usage: run-boot.sh [--keep] --install-info FILE SCENARIO"
fi
# shellcheck source=/dev/null
source "$info"   # MESON BUILD_DIR TOOL_PATH DRACUT_MODDIR
scenario=$1
[ -f "$scenario" ] || scenario=$here/scenarios/$1.sh
[ -f "$scenario" ] || ba_die "no boot scenario '$1' in $here/scenarios"
name=$(basename "$scenario" .sh)

# What a scenario may set (defaults: the authenticated root boots).
# FIRMWARE=uefi: OVMF with Secure Boot on, a signed UKI (kernel, initramfs,
# command line, PCR signature) on an EFI system partition, the module
# signed with the db key, the key sealed to the signed PCR 11 (enroll's
# default on a UKI: PCRs 7, 12, 13 sealed, lock PCR 15).  With SeaBIOS
# the kernel and initramfs are loaded directly and nothing measures the
# initramfs or the command line: those boots test kernel and unit
# behaviour, and enroll with --allow-unmeasured-initramfs.
FIRMWARE=seabios
ENROLL_ARGS=''             # empty: the firmware's default below
BOOT_TPM=enrolled          # or "fresh": a TPM that never saw the key
ROOT_IMAGE=authenticated   # or "sha256-same-uuid": a swapped, unkeyed root
# ROOT_IMAGE may also be "sha256-plain": an unkeyed root booted without
# auth_key= and without a TPM or an enrollment (the benchmarks' baseline).
REPORT=$here/guest/ba-report  # what the booted system reports with
BOOT_PLAN=first            # per boot: first, tampered, or any word ba-report knows; "," separated
                           # "fail-closed": that boot must stop in the initramfs (FAIL_CLOSED_PATTERNS)
RECOVERY=0                 # 1: enroll with a recovery passphrase (random, in $work/passphrase)
# Scenario hooks, all optional: scenario_finish_root (the image's root is
# in $work/root), scenario_before_boot N (host steps before boot N),
# scenario_boot_args N (append run-vm.sh arguments to the array
# boot_extra_args), scenario_after_boot N (host steps after boot N),
# scenario_finish (host checks once every boot went as planned).
EXPECT=pass                # or "fail-closed"
FAIL_CLOSED_PATTERNS=()    # EREs the console must all show when failing closed
# How such a boot ends: halted, or (in case it does not fail closed) got
# as far as the root; the firmware refusing a boot image ends it too.
FAIL_CLOSED_STOP='System halted|reboot: Power down|Reached target .*Switch Root|Mounted .*/sysroot|No bootable option or device was found'
# A boot plan entry "no-unseal" ends at the key's load failing (whatever the
# attacker's command line makes of the boot after that).
NO_UNSEAL_STOP="Failed to start .*btrfs-auth|$FAIL_CLOSED_STOP"
# Scenario hooks for such boots: scenario_patterns N may set FAIL_CLOSED_PATTERNS per boot.

MEM=1024
DRACUT_EXTRA_ARGS=()       # more dracut arguments, e.g. from a scenario hook before a rebuild
# shellcheck source=/dev/null
source "$scenario"
if [ -z "$ENROLL_ARGS" ] && [ "$FIRMWARE" = uefi ]; then
	ENROLL_ARGS="--signed-policy=/ba/in/pcr.pem"
elif [ -z "$ENROLL_ARGS" ]; then
	ENROLL_ARGS="--pcrs=0,2,4,7 --lock-pcr=15 --allow-unmeasured-initramfs"
fi

work=${BA_BUILD_ROOT:-/tmp/ba-boot}/vm-tests/boot/$name
logdir=${BA_BUILD_ROOT:+$BA_BUILD_ROOT/meson-logs/vm-tests}
: "${logdir:=$work/..}"
rm -rf "$work"
mkdir -p "$work" "$logdir"
passed=0
cleanup() {
	ba_swtpm_tcp_stop
	ba_uefi_signing_tpm_stop
	# The key file is a test secret; never leave it behind on success.
	if [ "$passed" = 1 ] && [ "$keep" = 0 ]; then
		rm -rf "$work"
	else
		rm -rf "$work/key" "$work/passphrase" "$work"/*.typing "$work/keys" "$work"/attacker*.key
		echo "boot-$name: kept $work (images, initramfs, console logs)"
	fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT
step() { echo "boot-$name: $*"; }

resolve_inputs() {
	abi=$(ba_vm_abi)
	kernel=$(ba_vm_bzimage "$abi")
	btrfs_ko=$(bash "$BA_TOP/kernel-patch/build-module.sh" | tail -n1)/btrfs.ko
	progs=${BA_PROGS_DIR:-$(bash "$BA_TOP/progs-patch/build-progs.sh" | tail -n1)}
	rootfs=$(bash "$here/rootfs.sh" | tail -n1)
	[ -f "$btrfs_ko" ] || ba_die "no patched btrfs.ko ($btrfs_ko)"
	[ -x "$progs/mkfs.btrfs" ] || ba_die "no patched mkfs.btrfs in '$progs'"
	[ -d "$rootfs/etc" ] || ba_die "no root file system in '$rootfs'"
	uuid=$(cat /proc/sys/kernel/random/uuid)
}

stage_project() {
	# The project as an administrator installs it, into the image's root.
	DESTDIR=$work/root "$MESON" install -C "$BUILD_DIR" --no-rebuild --quiet \
		>"$work/meson-install.log" 2>&1 ||
		ba_die "meson install into the image failed: $(tail -n 5 "$work/meson-install.log")"
	[ -x "$work/root$TOOL_PATH" ] || ba_die "meson install did not put the tool at $TOOL_PATH"
}

make_key() {
	(umask 077 && head -c 32 /dev/urandom >"$work/key")
	# A throwaway test passphrase: typed on the console, never logged.
	[ "$RECOVERY" != 1 ] || (umask 077 && head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$work/passphrase")
}

call_hook() { if declare -F "$1" >/dev/null; then "$@"; fi; }

enroll() {
	BA_ENROLL_TOOL=$work/root$TOOL_PATH BA_ENROLL_KEY=$work/key \
		BA_ENROLL_ARGS="$ENROLL_ARGS --uuid=$uuid" BA_ENROLL_OUT=$work/root.sealed \
		BA_ENROLL_OUT_TPM=$work/tpm BA_ENROLL_PASS=$([ "$RECOVERY" != 1 ] || echo "$work/passphrase") \
		BA_ENROLL_FIRMWARE=$FIRMWARE BA_ENROLL_PCR_PUB=$([ "$FIRMWARE" != uefi ] || echo "$work/keys/pcr.pem") \
		bash "$here/../run-scenario.sh" --workdir "$work/enroll" "$here/enroll.sh" \
		>"$work/enroll.log" 2>&1 ||
		ba_die "the enrollment boot failed: $(tail -n 5 "$work/enroll.log")"
	[ -s "$work/root.sealed" ] || ba_die "the enrollment boot wrote no sealed key"
}

stage_root() {
	mkdir -p "$work/root"
	cp -a "$rootfs/." "$work/root/"
	stage_project
}

finish_root() {
	local r=$work/root
	install -d -m 0700 "$r/etc/btrfs-auth"
	if [ "$ROOT_IMAGE" = sha256-plain ]; then
		printf 'UUID=%s / btrfs defaults 0 0\n' "$uuid" >"$r/etc/fstab"
	else
		install -m 0600 "$work/root.sealed" "$r/etc/btrfs-auth/root.sealed"
		# enroll --rollback-index: the anchor beside the key file, as enroll leaves it.
		[ ! -f "$work/root.rollback" ] || install -m 0644 "$work/root.rollback" "$r/etc/btrfs-auth/root.rollback"
		printf 'UUID=%s / btrfs auth_key=btrfs:root 0 0\n' "$uuid" >"$r/etc/fstab"
	fi
	echo ba-boot-test >"$r/etc/hostname"
	ba_mask_idle_units "$r"
	tr -d '-' </proc/sys/kernel/random/uuid >"$r/etc/machine-id"
	install -D -m 0755 "$REPORT" "$r/usr/local/libexec/ba-report"
	install -D -m 0644 "$here/guest/ba-report.service" "$r/etc/systemd/system/ba-report.service"
	ln -sf ../ba-report.service "$r/etc/systemd/system/multi-user.target.wants/ba-report.service"
	# ba-report counts the boots that reach it: those failing closed do not.
	echo "BA_BOOT_PLAN=$(echo ",$BOOT_PLAN," | sed -E 's/,(fail-closed|no-unseal|refused-by-firmware),/,/g; s/,(fail-closed|no-unseal|refused-by-firmware),/,/g; s/^,//; s/,$//')" >"$r/etc/ba-report.conf"
	call_hook scenario_finish_root
}

make_image() {
	local csum=(--csum hmac-sha256 --auth-key-file "$work/key")
	[ "$ROOT_IMAGE" != sha256-same-uuid ] || csum=(--csum sha256)
	[ "$ROOT_IMAGE" != sha256-plain ] || csum=(--csum sha256)
	truncate -s 2G "$work/root.img"
	"$progs/mkfs.btrfs" -q -f -U "$uuid" "${csum[@]}" --rootdir "$work/root" \
		"$work/root.img" >"$work/mkfs.log" 2>&1 ||
		ba_die "mkfs.btrfs failed: $(tail -n 5 "$work/mkfs.log")"
}

# Debian's modules with the patched btrfs.ko in place of Debian's, for
# dracut --kmoddir.  Hard links: nothing of /lib/modules is modified.
# Under Secure Boot the kernel loads only signed modules: signed with the
# db key, as an administrator signs with theirs (or DKMS with its MOK).
stage_modules() {
	local m=$work/modroot/lib/modules/$abi
	mkdir -p "${m%/*}"
	cp -al "/lib/modules/$abi" "$m"
	rm -f "$m/kernel/fs/btrfs/btrfs.ko"
	if [ "$FIRMWARE" = uefi ]; then
		ba_uefi_sign_module "$btrfs_ko" "$m/kernel/fs/btrfs/btrfs.ko" "$work/keys/db.key" "$work/keys/db.crt"
	else
		cp "$btrfs_ko" "$m/kernel/fs/btrfs/btrfs.ko"
	fi
	depmod -b "$work/modroot" "$abi" || ba_die "depmod for the staged modules failed"
}

make_initramfs() {
	local d=$work/dracut e
	stage_modules
	# dracut takes its modules from $dracutbasedir/modules.d: the host's
	# plus the staged 91btrfs-auth.
	mkdir -p "$d/base/modules.d" "$d/conf.d" "$d/tmp" "$d/keys"
	for e in /usr/lib/dracut/*; do
		[ "${e##*/}" = modules.d ] || ln -s "$e" "$d/base/"
	done
	for e in /usr/lib/dracut/modules.d/*; do
		[ "${e##*/}" = 91btrfs-auth ] || ln -s "$e" "$d/base/modules.d/"
	done
	ln -s "$work/root$DRACUT_MODDIR" "$d/base/modules.d/91btrfs-auth"
	[ "$ROOT_IMAGE" = sha256-plain ] || install -m 0600 "$work/root.sealed" "$d/keys/root.sealed"
	[ ! -f "$work/root.rollback" ] || install -m 0644 "$work/root.rollback" "$d/keys/root.rollback"
	# More files for the initramfs' /etc/btrfs-auth (btrfs-auth.conf, .previous), from scenario hooks.
	[ ! -d "$work/initrd-keys" ] || cp -a "$work/initrd-keys/." "$d/keys/"
	printf 'btrfs_auth_stagedir="%s"\nbtrfs_auth_confdir="%s"\n' "$work/root" "$d/keys" >"$d/dracut.conf"
	dracutbasedir=$d/base dracut --conf "$d/dracut.conf" --confdir "$d/conf.d" --tmpdir "$d/tmp" \
		--no-hostonly --no-hostonly-cmdline --no-early-microcode --compress "$BA_GUEST_INITRD_COMPRESS" \
		--kmoddir "$work/modroot/lib/modules/$abi" --kver "$abi" \
		--add "btrfs btrfs-auth" --drivers "$BA_GUEST_INITRD_DRIVERS" \
		--omit "$BA_GUEST_UNUSED_DRACUT_MODULES" "${DRACUT_EXTRA_ARGS[@]}" \
		--force "$work/initrd.img" >"$work/dracut.log" 2>&1 ||
		ba_die "dracut failed: $(tail -n 5 "$work/dracut.log")"
	grep -q 'Including module: btrfs-auth' "$work/dracut.log" ||
		ba_die "dracut did not include the btrfs-auth module (see $work/dracut.log)"
}

# The kernel command line of every boot (a UKI embeds it).
boot_cmdline() {
	local rootflags='rootflags=auth_key=btrfs:root '
	[ "$ROOT_IMAGE" != sha256-plain ] || rootflags=''
	printf '%s' "root=UUID=$uuid ${rootflags}rootfstype=btrfs systemd.firstboot=off ba.report=1"
}

# make_uki OUT [CMDLINE [INITRD [KERNEL]]]: the UKI of these boots,
# PCR 11 signed for enter-initrd with the test's PCR key, signed with the
# db key.  systemd-measure computes the policy digest in a trial session
# on a throwaway swtpm.
make_uki() {
	local out=$1 cmdline=${2:-$(ba_vm_cmdline 0 " $(boot_cmdline)")}
	ba_uefi_signing_tpm "$work/signing-tpm"
	"$BA_UKI_TOOL" --linux "${4:-$kernel}" --initrd "${3:-$work/initrd.img}" --cmdline "$cmdline" \
		--os-release "$work/root/etc/os-release" --out "$out" \
		--pcr-private-key "$work/keys/pcr.key" --pcr-public-key "$work/keys/pcr.pem" --tpm2-device "$BA_SIGNING_TCTI" \
		--secureboot-private-key "$work/keys/db.key" --secureboot-certificate "$work/keys/db.crt" \
		2>"$out.log" || ba_die "building the UKI $out failed: $(tail -n 3 "$out.log")"
}

boot() {
	local n=$1 args=() rc=0 tpm=$work/tpm tpm_args
	if [ "$BOOT_TPM" = fresh ]; then
		tpm=$work/tpm-fresh
		mkdir -p "$tpm"
	fi
	tpm_args=(--tpm-state "$tpm")
	[ "$ROOT_IMAGE" != sha256-plain ] || tpm_args=()
	boot_root_img=$work/root.img boot_extra_args=()
	call_hook scenario_before_boot "$n"
	call_hook scenario_boot_args "$n"
	args=(--disk "$boot_root_img,serial=ba-root"
		"${tpm_args[@]}" --mem "$MEM" --timeout 900 --poweroff-grace "$BA_SYSTEMD_POWEROFF_GRACE"
		--log "$work/console-$n.log" --outcome "$work/outcome-$n")
	if [ "$FIRMWARE" = uefi ]; then
		args+=(--firmware uefi --uefi-vars "$work/uefi-vars.fd" --esp "$work/esp.img")
	else
		args+=(--kernel "$kernel" --initrd "$work/initrd.img" --append "$(boot_cmdline)")
	fi
	case ${2:-} in
	no-unseal) args+=(--stop-on "$NO_UNSEAL_STOP") ;;
	fail-closed) args+=(--stop-on "$FAIL_CLOSED_STOP") ;;
	*) [ "$EXPECT" = pass ] || args+=(--stop-on "$FAIL_CLOSED_STOP") ;;
	esac
	args+=("${boot_extra_args[@]}")
	bash "$here/../lib/run-vm.sh" "${args[@]}" || rc=$?
	cp "$work/console-$n.log" "$logdir/boot-$name-console-$n.log"
	IFS=$'\t' read -r outcome secs reason <"$work/outcome-$n"
	step "boot $n: $outcome after $secs s${reason:+: $reason}"
	grep -h '^BA-INFO:' "$work/console-$n.markers" 2>/dev/null | tr -d '\r' | sed "s/^/boot-$name: /" || true
	return "$rc"
}

check_image() {
	"$progs/btrfs" check --readonly --check-data-csum --auth-key-file "$work/key" \
		"$work/root.img" >"$work/check-$1.log" 2>&1 ||
		ba_die "btrfs check of the root after boot $1 failed: $(tail -n 5 "$work/check-$1.log")"
	step "btrfs check --check-data-csum with the key: clean after boot $1"
}

# Flip one byte inside the file the booted system wrote (its pattern is
# assembled at run time, so only the file's data holds it).
tamper_witness() {
	local pattern off
	pattern='BA-WITNESS-0123456789abcdef'
	off=$(LC_ALL=C grep -obUa -m 1 -F "$pattern" "$work/root.img" | head -n1 | cut -d: -f1)
	[ -n "$off" ] || ba_die "the file written in the VM is not in the image"
	off=$((off + 4096))
	printf '\x58' | dd of="$work/root.img" bs=1 seek="$off" conv=notrunc status=none
	step "flipped the byte at offset $off of the image (inside the witness file)"
}

# expect_fail_closed N [no-unseal]: the boot stopped before the root was
# mounted, the console says why (FAIL_CLOSED_PATTERNS), and the initramfs
# halted; with no-unseal, it is enough that the key's load failed.
expect_fail_closed() {
	local log=$work/console-${1:-1}.log p
	[ "$outcome" = stopped ] || ba_die "expected the boot to stop failing closed, got $outcome: $reason"
	if tr -d '\r' <"$log" | grep -q -E 'Mounted .*/sysroot|Reached target .*Switch Root|Reached target .*Initrd Root File System'; then
		ba_die "the root file system was mounted although the boot had to fail closed"
	fi
	if [ "${2:-}" = no-unseal ]; then
		! grep -q -E 'btrfs-auth\[[0-9]+\]: .*Loaded btrfs:' "$log" || ba_die "boot ${1:-1}: the key was loaded"
	else
		tr -d '\r' <"$log" | grep -q -E 'System halted' ||
			ba_die "the initramfs did not halt (last console lines: $(tail -n 3 "$log" | tr -d '\r' | tr '\n' ' '))"
	fi
	call_hook scenario_patterns "${1:-1}"
	[ "${#FAIL_CLOSED_PATTERNS[@]}" -gt 0 ] || ba_die "scenario $name sets no FAIL_CLOSED_PATTERNS"
	for p in "${FAIL_CLOSED_PATTERNS[@]}"; do
		grep -q -E -e "$p" "$log" || ba_die "boot ${1:-1}: the console does not say why: no line matches '$p'"
	done
	if [ "${2:-}" = no-unseal ]; then
		step "boot ${1:-1}: the key did not unseal, the root was not mounted, the console says why"
	else
		step "boot ${1:-1}: failed closed: root not mounted, the console says why, the initramfs halted"
	fi
}

# A firmware that refuses the boot image (Secure Boot) never starts a kernel.
expect_firmware_refused() {
	local log=$work/console-$1.log
	[ "$outcome" = stopped ] || ba_die "expected the firmware to refuse boot $1, got $outcome: $reason"
	tr -d '\r' <"$log" | grep -q -E 'BdsDxe: failed to load .*: (Access Denied|Security Violation)' ||
		ba_die "the firmware did not say it refused the image (console: $log)"
	! tr -d '\r' <"$log" | grep -q -E 'EFI stub: |Linux version' || ba_die "a kernel started although the image was refused"
	step "boot $1: the firmware refused the boot image (Secure Boot), no kernel started"
}

# What the booted system checks against (ba-report): the raw unseal's inputs, the PCR
# signature and its public key (all public), and the command line the UKI carries.
uefi_report_inputs() {
	local r=$work/root/var/lib/ba-report
	mkdir -p "$r"
	objcopy -O binary --only-section=.pcrsig "$work/uki.efi" "$r/tpm2-pcr-signature.json"
	install -m 0644 "$work/keys/pcr.pem" "$r/tpm2-pcr-public-key.pem"
	python3 "$BA_TOP/tpm-sealing/tests/raw-unseal-inputs.py" "$work/root.sealed" "$r/tpm2-pcr-signature.json" "$r/raw"
	install -m 0755 "$BA_TOP/tpm-sealing/tests/raw-unseal.sh" "$work/root/usr/local/libexec/raw-unseal"
	printf 'BA_FIRMWARE=uefi\nBA_UKI_CMDLINE=%s\n' "'$(ba_vm_cmdline 0 " $(boot_cmdline)")'" >>"$work/root/etc/ba-report.conf"
}

# PCR 15 after the lock, from the key: its measurement (measure.h), then the lock event.
expected_pcr15() {
	python3 "$BA_TOP/tpm-sealing/tests/lock-measurement.py" pcr "$work/key" btrfs:root "$uuid"
}

check_pcr15() {
	local got want
	got=$(tr -d '\r' <"$work/console-$1.markers" | sed -n 's/^BA-INFO: pcr15 //p' | tr 'A-F' 'a-f')
	want=$(expected_pcr15)
	[ "$got" = "$want" ] || ba_die "boot $1: PCR 15 is '$got', the key's measurement and the lock give $want"
	step "boot $1: PCR 15 holds the measurement of the key that was loaded, then the lock"
}

resolve_inputs
ba_timed "rootfs, module and progs" true
make_key
if [ "$FIRMWARE" = uefi ]; then
	ba_uefi_check
	ba_uefi_keys "$work/keys"
	ba_uefi_vars "$work/uefi-vars.fd" secureboot
fi
ba_timed "staging the root" stage_root
[ "$ROOT_IMAGE" = sha256-plain ] || ba_timed "enrollment boot" enroll
finish_root
ba_timed "dracut" make_initramfs
if [ "$FIRMWARE" = uefi ]; then
	ba_timed "the signed UKI" make_uki "$work/uki.efi"
	ba_uefi_esp "$work/esp.img" "$work/uki.efi"
	uefi_report_inputs
fi
ba_timed "mkfs.btrfs --rootdir" make_image

if [ "$EXPECT" = fail-closed ]; then
	boot 1 || true
	expect_fail_closed
	passed=1
	exit 0
fi

IFS=, read -r -a plan <<<"$BOOT_PLAN"
for ((i = 1; i <= ${#plan[@]}; i++)); do
	if [ "${plan[i-1]}" = fail-closed ] || [ "${plan[i-1]}" = no-unseal ]; then
		boot "$i" "${plan[i-1]}" || true
		expect_fail_closed "$i" "${plan[i-1]}"
	elif [ "${plan[i-1]}" = refused-by-firmware ]; then
		boot "$i" fail-closed || true
		expect_firmware_refused "$i"
	else
		boot "$i" || ba_die "boot $i failed: $outcome: $reason (console: $logdir/boot-$name-console-$i.log)"
		[ "$FIRMWARE" != uefi ] || [ "$ROOT_IMAGE" = sha256-plain ] || check_pcr15 "$i"
	fi
	call_hook scenario_after_boot "$i"
	[ "${plan[i-1]}" != first ] || check_image "$i"
	[ "${plan[i]:-}" != tampered ] || tamper_witness
done
call_hook scenario_finish
passed=1
step PASS
