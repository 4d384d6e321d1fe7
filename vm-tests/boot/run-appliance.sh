#!/bin/bash
# End-to-end test of an appliance image (appliance/btrfs-auth-image):
#
#   1. one image, built by the one command from the cached Debian root with
#      the project installed into it, the patched btrfs.ko (signed with the
#      test's db key) and btrfs-progs: a signed UKI on its ESP;
#   2. machines with OVMF, Secure Boot on, each its own swtpm, booting the
#      image's ESP, in rounds of two boots, one after the other (one guest
#      at a time, so that beside another test no more guests run than
#      there are cores):
#        round 1  a: first boot, provisions; c: the image with one byte of
#                 the root's superblock changed in transit and re-MACed with
#                 the provisioning key: refused before anything is written;
#        round 2  a: second boot, unattended; b: first boot, provisions;
#        round 3  b: second boot; a: key store emptied and the root replaced
#                 with c's forged one: refused (the TPM recorded a's first
#                 boot), the root not rewritten, not mounted;
#   3. host checks: the two keys differ (their ids), neither is the
#      provisioning key, whose MAC no longer verifies either root's
#      superblock (it still does on the unbooted image); machine A's key file
#      does not unseal on machine B's TPM (wrong storage root key), B's own
#      does get past that check.
#
# usage: run-appliance.sh [--keep] --install-info FILE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
source "$here/../lib/common.sh"
# shellcheck source=../lib/uefi.sh
source "$here/../lib/uefi.sh"

keep=0 info=''
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=1; shift ;;
	--install-info) info=${2:?}; shift 2 ;;
	*) ba_die "usage: run-appliance.sh [--keep] --install-info FILE" ;;
	esac
done
[ -n "$info" ] || ba_die "usage: run-appliance.sh [--keep] --install-info FILE"
# shellcheck source=/dev/null
source "$info" # MESON BUILD_DIR TOOL_PATH DRACUT_MODDIR

name=appliance
work=${BA_BUILD_ROOT:-/tmp/ba-boot}/vm-tests/boot/$name
logdir=${BA_BUILD_ROOT:+$BA_BUILD_ROOT/meson-logs/vm-tests}
: "${logdir:=$work/..}"
rm -rf "$work"
mkdir -p "$work" "$logdir"
passed=0
cleanup() {
	ba_swtpm_tcp_stop
	ba_uefi_signing_tpm_stop
	if [ "$passed" = 1 ] && [ "$keep" = 0 ]; then
		rm -rf "$work"
	else
		echo "boot-$name: kept $work (images, console logs)"
	fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT
step() { echo "boot-$name: $*"; }
ESP_MIB=256

resolve_inputs() {
	ba_uefi_check
	ba_uefi_keys "$work/keys"
	abi=$(ba_vm_abi)
	kernel=$(ba_vm_bzimage "$abi")
	btrfs_ko=$(bash "$BA_TOP/kernel-patch/build-module.sh" | tail -n1)/btrfs.ko
	progs=${BA_PROGS_DIR:-$(ba_locked vm-build-progs bash "$BA_TOP/progs-patch/build-progs.sh" | tail -n1)}
	rootfs=$(bash "$here/rootfs.sh" | tail -n1)
	[ -f "$btrfs_ko" ] || ba_die "no patched btrfs.ko ($btrfs_ko)"
	[ -x "$progs/btrfstune" ] || ba_die "no patched btrfstune in '$progs'"
	[ -d "$rootfs/etc" ] || ba_die "no root file system in '$rootfs'"
}

# The tree the image is built from: Debian, the project as meson installs
# it, and the reporting service of the boot tests.
stage_tree() {
	local t=$work/tree
	mkdir -p "$t"
	cp -a "$rootfs/." "$t/"
	# As an appliance would: no documentation or translations (a quarter
	# less for the first boot to verify and rewrite under TCG).
	rm -rf "$t/usr/share/doc" "$t/usr/share/man" "$t/usr/share/locale"
	DESTDIR=$t "$MESON" install -C "$BUILD_DIR" --no-rebuild --quiet >"$work/meson-install.log" 2>&1 ||
		ba_die "meson install into the tree failed: $(tail -n 5 "$work/meson-install.log")"
	echo ba-appliance >"$t/etc/hostname"
	ba_mask_idle_units "$t"
	: >"$t/etc/machine-id"
	install -D -m 0755 "$here/guest/ba-report" "$t/usr/local/libexec/ba-report"
	install -D -m 0644 "$here/guest/ba-report.service" "$t/etc/systemd/system/ba-report.service"
	ln -sf ../ba-report.service "$t/etc/systemd/system/multi-user.target.wants/ba-report.service"
	printf 'BA_BOOT_PLAN=appliance-first,appliance-again\nBA_FIRMWARE=uefi-appliance\n' >"$t/etc/ba-report.conf"
}

# Debian's modules with the patched btrfs.ko, and a dracut base whose
# 91btrfs-auth is the one installed into the tree (as run-boot.sh does).
stage_dracut() {
	local m=$work/modroot/lib/modules/$abi e d=$work/dracut-base
	mkdir -p "${m%/*}" "$d/modules.d"
	cp -al "/lib/modules/$abi" "$m"
	rm -f "$m/kernel/fs/btrfs/btrfs.ko"
	# Under Secure Boot Debian's kernel loads only signed modules; db keys count.
	ba_uefi_sign_module "$btrfs_ko" "$m/kernel/fs/btrfs/btrfs.ko" "$work/keys/db.key" "$work/keys/db.crt"
	depmod -b "$work/modroot" "$abi" || ba_die "depmod for the staged modules failed"
	for e in /usr/lib/dracut/*; do
		[ "${e##*/}" = modules.d ] || ln -s "$e" "$d/"
	done
	for e in /usr/lib/dracut/modules.d/*; do
		[ "${e##*/}" = 91btrfs-auth ] || ln -s "$e" "$d/modules.d/"
	done
	ln -s "$work/tree$DRACUT_MODDIR" "$d/modules.d/91btrfs-auth"
}

build_image() {
	ba_uefi_signing_tpm "$work/signing-tpm"
	"$BA_TOP/appliance/btrfs-auth-image" --rootdir "$work/tree" --out "$work/appliance.img" --size 2G \
		--esp-size "$ESP_MIB" --kver "$abi" --kernel "$kernel" --kmoddir "$work/modroot/lib/modules/$abi" \
		--progs "$progs" --dracutbasedir "$work/dracut-base" --pcrs 7 --lock-pcr 15 \
		--secureboot-key "$work/keys/db.key" --secureboot-cert "$work/keys/db.crt" --pcr-key "$work/keys/pcr.key" \
		--tpm2-device "$BA_SIGNING_TCTI" \
		--dracut-arg --drivers --dracut-arg "$BA_GUEST_INITRD_DRIVERS" \
		--dracut-arg --omit --dracut-arg "$BA_GUEST_UNUSED_DRACUT_MODULES" \
		--dracut-arg --compress --dracut-arg "$BA_GUEST_INITRD_COMPRESS" \
		--cmdline "$(ba_vm_cmdline 0 ' systemd.firstboot=off ba.report=1')" \
		--provisioning-key-out "$work/provisioning.key" >"$work/build.log" 2>&1 ||
		ba_die "btrfs-auth-image failed: $(tail -n 5 "$work/build.log")"
	rm -rf "$work/tree" "$work/modroot"
	ba_uefi_signing_tpm_stop
}

# One machine: OVMF with Secure Boot (its own variable store) booting the
# image's ESP, on a SATA disk that also holds the root; its own swtpm.
boot_vm() {
	local vm=$1 n=$2 rc=0
	[ -e "$work/vars-$vm.fd" ] || ba_uefi_vars "$work/vars-$vm.fd" secureboot
	bash "$here/../lib/run-vm.sh" --firmware uefi --uefi-vars "$work/vars-$vm.fd" --esp "$work/vm-$vm.img" \
		--tpm-state "$work/tpm-$vm" --mem 1024 --timeout 1500 \
		--poweroff-grace "$BA_SYSTEMD_POWEROFF_GRACE" \
		--log "$work/console-$vm-$n.log" --outcome "$work/outcome-$vm-$n" --quiet \
		--stop-on 'reboot: System halted' >/dev/null 2>&1 || rc=$?
	cp "$work/console-$vm-$n.log" "$logdir/boot-$name-console-$vm-$n.log"
	return "$rc"
}

# A boot the attacker set up: it must end in the initramfs with the reason on
# the console, the root never mounted, the booted system never reporting.
refused() { # VM N ERE
	local log=$work/console-$1-$2.log
	tr -d '\r' <"$log" | grep -qE "btrfs-auth\[[0-9]+\]: .*$3" ||
		{ echo "no btrfs-auth message matching '$3'"; return 1; }
	grep -q 'reboot: System halted' "$log" || { echo "the initramfs did not halt"; return 1; }
	! grep -qE 'Mounted (sysroot.mount|/sysroot)' "$log" || { echo "the root was mounted"; return 1; }
	! grep -q '^BA-VERDICT' "$work/console-$1-$2.markers" 2>/dev/null || { echo "the booted system reported"; return 1; }
}

# A round: two boots, one after the other.  Each is "pass" (the booted
# system reported PASS) or "refused:ERE" (see refused).
boot_round() { # N VM EXPECT VM EXPECT
	local n=$1 vm outcome secs reason why failed=0
	boot_vm "$2" "$n" || true
	boot_vm "$4" "$n" || true
	for vm in "$2:$3" "$4:$5"; do
		IFS=$'\t' read -r outcome secs reason <"$work/outcome-${vm%%:*}-$n" || outcome=none
		step "machine ${vm%%:*}, boot $n: $outcome after $secs s${reason:+: $reason}"
		case ${vm#*:} in
		pass)
			tr -d '\r' <"$work/console-${vm%%:*}-$n.markers" | grep '^BA-CHECK: FAIL' | sed "s/^/boot-$name:   /" || true
			grep -q '^BA-VERDICT: PASS' <(tr -d '\r' <"$work/console-${vm%%:*}-$n.markers") || failed=1
			;;
		refused:*)
			if why=$(refused "${vm%%:*}" "$n" "${vm#*:refused:}"); then
				step "machine ${vm%%:*}, boot $n: refused as it must be, root not mounted"
			else
				step "machine ${vm%%:*}, boot $n: NOT refused as expected: $why"
				failed=1
			fi
			;;
		esac
	done
	[ "$failed" = 0 ] || ba_die "round $n failed (consoles: $logdir/boot-$name-console-*-$n.log)"
}

root_offset() { echo $(((1 + ESP_MIB) * 1048576)); }

# The attacker's image: one byte of the root's superblock (its label) changed
# in transit, the superblock MAC recomputed with the public provisioning key.
tamper_in_transit() { # IMAGE
	python3 - "$work/provisioning.key" "$1" "$(root_offset)" <<-'PY' || ba_die "cannot tamper with $1"
		import hashlib, hmac, sys
		key = open(sys.argv[1], "rb").read()
		off = int(sys.argv[3]) + 65536
		with open(sys.argv[2], "r+b") as f:
		    f.seek(off)
		    sb = bytearray(f.read(4096))
		    sb[0x12b] ^= 0x41  # the label, 299 bytes in
		    sb[:32] = hmac.new(key, bytes(sb[32:]), hashlib.sha256).digest()
		    f.seek(off)
		    f.write(sb)
	PY
}

# The attacker on machine a's powered-off disk: the key store emptied, the
# root replaced with the forged one (made with the provisioning key).
empty_store_forge_root() {
	mdel -i "$work/vm-a.img@@1M" ::/btrfs-auth/root.sealed || ba_die "machine a's key store has no root.sealed"
	dd if="$work/vm-c.img" of="$work/vm-a.img" bs=1M skip=$((1 + ESP_MIB)) seek=$((1 + ESP_MIB)) \
		conv=notrunc,sparse status=none
	sha256sum <"$work/vm-a.img" >"$work/vm-a.forged.sha256"
}

key_id_of() { # console log -> the key id the first boot printed
	tr -d '\r' <"$1" | sed -n 's/.*Provisioned btrfs:root (key id \([0-9a-f]\{16\}\)).*/\1/p' | head -n 1
}

# HMAC checks without putting a key in argv: python3 reads the key file.
hmac_py='
import hashlib, hmac, sys
key = open(sys.argv[2], "rb").read()
if sys.argv[1] == "id":
    print(hmac.new(key, b"btrfs-auth key id v1", hashlib.sha256).hexdigest()[:16])
else:
    with open(sys.argv[3], "rb") as f:
        f.seek(int(sys.argv[4]) + 65536)
        sb = f.read(4096)
    ok = hmac.compare_digest(hmac.new(key, sb[32:], hashlib.sha256).digest(), sb[:32])
    sys.exit(0 if ok else 1)
'
superblock_verifies() { # IMAGE: does the provisioning key authenticate its root's superblock?
	python3 -c "$hmac_py" sb "$work/provisioning.key" "$1" $(((1 + ESP_MIB) * 1048576))
}

check_keys() {
	local a b p
	a=$(key_id_of "$work/console-a-1.log")
	b=$(key_id_of "$work/console-b-2.log") # b first boots in round 2
	p=$(python3 -c "$hmac_py" id "$work/provisioning.key")
	if [ -z "$a" ] || [ -z "$b" ]; then ba_die "a first boot did not report 'Provisioned btrfs:root (key id ...)'"; fi
	[ "$a" != "$b" ] || ba_die "both machines ended with the same key (id $a)"
	if [ "$a" = "$p" ] || [ "$b" = "$p" ]; then ba_die "a machine kept the provisioning key (id $p)"; fi
	step "machine keys: a $a, b $b; the provisioning key is $p"
	superblock_verifies "$work/appliance.img" || ba_die "the provisioning key does not verify the unbooted image: the check is broken"
	! superblock_verifies "$work/vm-a.img" || ba_die "machine a's root still verifies with the provisioning key"
	! superblock_verifies "$work/vm-b.img" || ba_die "machine b's root still verifies with the provisioning key"
	step "the provisioning key verifies the unbooted image's root, neither machine's"
}

# Machine A's key file against machine B's TPM, on the host (swtpm on a copy of B's state).
extract_key_files() {
	local vm
	for vm in a b; do
		mcopy -n -i "$work/vm-$vm.img@@1M" ::/btrfs-auth/root.sealed "$work/$vm.sealed" ||
			ba_die "machine $vm's ESP has no btrfs-auth/root.sealed"
		if mdir -i "$work/vm-$vm.img@@1M" ::/btrfs-auth 2>/dev/null | grep -qi 'new'; then
			ba_die "machine $vm's key store still has a pending key file"
		fi
	done
}

check_cross_tpm() {
	local rc
	cp -a "$work/tpm-b" "$work/tpm-b-copy"
	rm -f "$work/tpm-b-copy/swtpm.sock" "$work/tpm-b-copy/swtpm.pid"
	ba_swtpm_tcp_start "$work/tpm-b-copy" "$work/swtpm-host.log" || ba_die "swtpm on a copy of b's TPM state did not start"
	rc=0
	"$BUILD_DIR/tpm-sealing/btrfs-auth" status --tcti "$BA_SWTPM_TCTI" --tpm-wait 10 \
		"$work/a.sealed" >"$work/cross-a.log" 2>&1 || rc=$?
	if [ "$rc" != 10 ] || ! grep -q 'lacks the storage root key' "$work/cross-a.log"; then
		ba_die "machine a's key file on machine b's TPM: status $rc, not 10 (no storage root key): $(tail -n 3 "$work/cross-a.log")"
	fi
	rc=0
	"$BUILD_DIR/tpm-sealing/btrfs-auth" status --tcti "$BA_SWTPM_TCTI" --tpm-wait 10 \
		"$work/b.sealed" >"$work/cross-b.log" 2>&1 || rc=$?
	[ "$rc" != 10 ] || ba_die "machine b's own key file is refused by its TPM's storage root key: $(tail -n 3 "$work/cross-b.log")"
	step "a's key file does not unseal on b's TPM (no storage root key named so); b's passes that check (status $rc)"
}

resolve_inputs
ba_timed "staging the tree" stage_tree
stage_dracut
ba_timed "btrfs-auth-image" build_image
for vm in a b c; do cp --sparse=always "$work/appliance.img" "$work/vm-$vm.img"; done
tamper_in_transit "$work/vm-c.img"
ba_timed "round 1 (a first boot, c tampered in transit)" boot_round 1 a pass c \
	'refused:is not the image this boot image was built for'
superblock_verifies "$work/vm-c.img" || ba_die "the refused first boot changed c's root"
ba_timed "round 2 (a second boot, b first boot)" boot_round 2 a pass b pass
check_keys
extract_key_files
empty_store_forge_root
ba_timed "round 3 (b second boot, a emptied and forged)" boot_round 3 b pass a \
	'refused:it was emptied. Nothing is provisioned again'
sha256sum -c --status <(sed "s|-\$|$work/vm-a.img|" "$work/vm-a.forged.sha256") ||
	ba_die "the refused boot rewrote machine a's disk"
step "machine a: the emptied key store and forged root were refused, the disk left as the attacker wrote it"
check_cross_tpm
passed=1
step PASS
