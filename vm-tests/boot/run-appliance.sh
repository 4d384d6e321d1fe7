#!/bin/bash
# End-to-end test of an appliance image (appliance/btrfs-auth-image):
#
#   1. one image, built by the one command from the cached Debian root with
#      the project installed into it, the patched btrfs.ko and btrfs-progs;
#   2. two copies, two machines (two swtpm states); each boots with the
#      kernel, initramfs and command line taken from the image's EFI system
#      partition.  First boot: the initramfs gives the root a key of the
#      machine's own (btrfstune, before mounting), seals it into the key
#      store on the ESP; the booted system reports.  Second boot: unattended;
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
	if [ "$passed" = 1 ] && [ "$keep" = 0 ]; then
		rm -rf "$work"
	else
		echo "boot-$name: kept $work (images, console logs)"
	fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT
step() { echo "boot-$name: $*"; }
timed() {
	local what=$1 t
	shift
	t=$(ba_now)
	"$@"
	step "$what took $(ba_elapsed "$t") s"
}
ESP_MIB=256

resolve_inputs() {
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
	: >"$t/etc/machine-id"
	install -D -m 0755 "$here/guest/ba-report" "$t/usr/local/libexec/ba-report"
	install -D -m 0644 "$here/guest/ba-report.service" "$t/etc/systemd/system/ba-report.service"
	ln -sf ../ba-report.service "$t/etc/systemd/system/multi-user.target.wants/ba-report.service"
	echo "BA_BOOT_PLAN=appliance-first,appliance-again" >"$t/etc/ba-report.conf"
}

# Debian's modules with the patched btrfs.ko, and a dracut base whose
# 91btrfs-auth is the one installed into the tree (as run-boot.sh does).
stage_dracut() {
	local m=$work/modroot/lib/modules/$abi e d=$work/dracut-base
	mkdir -p "${m%/*}" "$d/modules.d"
	cp -al "/lib/modules/$abi" "$m"
	rm -f "$m/kernel/fs/btrfs/btrfs.ko"
	cp "$btrfs_ko" "$m/kernel/fs/btrfs/btrfs.ko"
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
	"$BA_TOP/appliance/btrfs-auth-image" --rootdir "$work/tree" --out "$work/appliance.img" --size 2G \
		--esp-size "$ESP_MIB" --kver "$abi" --kernel "$kernel" --kmoddir "$work/modroot/lib/modules/$abi" \
		--progs "$progs" --dracutbasedir "$work/dracut-base" --pcrs 0,2,4,7 --lock-pcr 15 \
		--dracut-arg --add-drivers --dracut-arg "virtio_blk virtio_pci" \
		--cmdline "systemd.firstboot=off ba.report=1" \
		--provisioning-key-out "$work/provisioning.key" >"$work/build.log" 2>&1 ||
		ba_die "btrfs-auth-image failed: $(tail -n 5 "$work/build.log")"
	rm -rf "$work/tree" "$work/modroot"
}

# What a boot loader would load, read from the image's ESP (mtools, no mount).
extract_boot_files() {
	local f
	mkdir -p "$work/boot"
	for f in vmlinuz initrd.img cmdline.txt; do
		mcopy -n -i "$work/appliance.img@@1M" "::/$f" "$work/boot/$f" || ba_die "the image's ESP has no /$f"
	done
}

boot_vm() {
	local vm=$1 n=$2 rc=0
	bash "$here/../lib/run-vm.sh" --kernel "$work/boot/vmlinuz" --initrd "$work/boot/initrd.img" \
		--disk "$work/vm-$vm.img,serial=ba-root" --tpm-state "$work/tpm-$vm" --mem 1024 --timeout 1500 \
		--poweroff-grace "$BA_SYSTEMD_POWEROFF_GRACE" \
		--log "$work/console-$vm-$n.log" --outcome "$work/outcome-$vm-$n" --quiet \
		--stop-on 'reboot: System halted' \
		--append "$(cat "$work/boot/cmdline.txt")" >/dev/null 2>&1 || rc=$?
	cp "$work/console-$vm-$n.log" "$logdir/boot-$name-console-$vm-$n.log"
	return "$rc"
}

# Boot N of both machines at once (one TCG thread each).
boot_both() {
	local n=$1 a=0 b=0 vm outcome secs reason
	boot_vm a "$n" &
	local pa=$!
	boot_vm b "$n" &
	wait $pa || a=$?
	wait $! || b=$?
	for vm in a b; do
		IFS=$'\t' read -r outcome secs reason <"$work/outcome-$vm-$n" || outcome=none
		step "machine $vm, boot $n: $outcome after $secs s${reason:+: $reason}"
		tr -d '\r' <"$work/console-$vm-$n.markers" | grep '^BA-CHECK: FAIL' | sed "s/^/boot-$name:   /" || true
	done
	if [ "$a" != 0 ] || [ "$b" != 0 ]; then
		ba_die "boot $n failed (consoles: $logdir/boot-$name-console-{a,b}-$n.log)"
	fi
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
	b=$(key_id_of "$work/console-b-1.log")
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
check_cross_tpm() {
	local vm rc
	for vm in a b; do
		mcopy -n -i "$work/vm-$vm.img@@1M" ::/btrfs-auth/root.sealed "$work/$vm.sealed" ||
			ba_die "machine $vm's ESP has no btrfs-auth/root.sealed"
		if mdir -i "$work/vm-$vm.img@@1M" ::/btrfs-auth 2>/dev/null | grep -qi 'new'; then
			ba_die "machine $vm's key store still has a pending key file"
		fi
	done
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
timed "staging the tree" stage_tree
stage_dracut
timed "btrfs-auth-image" build_image
extract_boot_files
cp --sparse=always "$work/appliance.img" "$work/vm-a.img"
cp --sparse=always "$work/appliance.img" "$work/vm-b.img"
timed "first boots (a and b at once)" boot_both 1
timed "second boots (a and b at once)" boot_both 2
check_keys
check_cross_tpm
passed=1
step PASS
