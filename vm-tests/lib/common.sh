# shellcheck shell=bash
# Host-side helpers shared by the vm-tests scripts.  Sourced, not run.

BA_VM_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # for the scripts and scenarios sourcing this
BA_VM_TOP=${BA_VM_LIB%/lib}
# shellcheck source=../../tools/lib.sh
source "$BA_VM_LIB/../../tools/lib.sh"

# The kernel ABI the tests boot: the one the installed linux-image-amd64
# meta-package depends on, so a Debian point release that moves the ABI
# needs no edit here.  BA_KERNEL_ABI overrides it (for trying another
# installed kernel by hand).
ba_vm_abi() {
	if [ -n "${BA_KERNEL_ABI:-}" ]; then
		printf '%s\n' "$BA_KERNEL_ABI"
		return
	fi
	local dep abi
	dep=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null) ||
		ba_die "linux-image-amd64 is not installed; run tools/deps.sh (or apt-get install linux-image-amd64)"
	abi=$(printf '%s\n' "$dep" | tr ',|' '\n' | sed -n 's/^ *linux-image-\([^ ]*\).*/\1/p' | head -n1)
	abi=${abi%-unsigned}
	[ -n "$abi" ] || ba_die "cannot find the kernel ABI in linux-image-amd64's Depends: '$dep'"
	[ -d "/lib/modules/$abi" ] ||
		ba_die "/lib/modules/$abi is missing although linux-image-amd64 depends on it; reinstall linux-image-$abi"
	printf '%s\n' "$abi"
}

ba_vm_bzimage() {
	local abi=$1 k="/boot/vmlinuz-$1"
	[ -r "$k" ] || ba_die "kernel image $k is missing or unreadable; reinstall linux-image-$abi"
	printf '%s\n' "$k"
}

# The kernel QEMU boots: Debian's vmlinuz for ABI, decompressed once into
# the cache.  QEMU starts the decompressed ELF through its PVH entry point
# (Debian has CONFIG_PVH=y), which skips the xz decompressor: under TCG
# that alone took 5 of the 12 seconds of a boot.  The kernel code is the
# same; only the real-mode setup and KASLR are skipped.  BA_VM_BZIMAGE=1
# boots the compressed image the usual way instead.
ba_vm_kernel() {
	local abi=$1 bz key out
	bz=$(ba_vm_bzimage "$abi")
	if [ "${BA_VM_BZIMAGE:-0}" = 1 ]; then
		printf '%s\n' "$bz"
		return
	fi
	key=$(ba_hash_files "$bz")
	out=$BA_CACHE/vm-kernel/vmlinux-$abi-$key
	mkdir -p "$BA_CACHE/vm-kernel" || ba_die "cannot create $BA_CACHE/vm-kernel; set BTRFS_AUTH_CACHE to a writable directory"
	ba_locked vm-kernel _ba_vm_extract "$bz" "$out"
	printf '%s\n' "$out"
}

# The bzImage's payload is one xz stream after the setup code; find its
# magic, decompress (xz stops at the stream's end and complains about the
# trailer, hence the status is not trusted) and accept the result only if
# it is an ELF with the PVH entry note (Xen note type 0x12).
_ba_vm_extract() {
	local bz=$1 out=$2 off
	[ -s "$out" ] && return 0
	command -v xz >/dev/null || ba_die "xz not found; apt-get install xz-utils"
	off=$(LC_ALL=C grep -abo -m 1 $'\xfd7zXZ\x00' "$bz" | head -n 1 | cut -d: -f1)
	[ -n "$off" ] || ba_die "no xz payload in $bz; boot it with BA_VM_BZIMAGE=1"
	tail -c +$((off + 1)) "$bz" | xz -dc >"$out.tmp.$$" 2>/dev/null || true
	if [ "$(head -c 4 "$out.tmp.$$" | od -An -tx1 | tr -d ' ')" != 7f454c46 ] ||
		! LC_ALL=C readelf -n "$out.tmp.$$" 2>/dev/null | grep -qE '\(0x00000012\)|PHYS32_ENTRY'; then
		rm -f "$out.tmp.$$"
		ba_die "the kernel in $bz did not decompress to an ELF with a PVH entry; boot it with BA_VM_BZIMAGE=1"
	fi
	mv "$out.tmp.$$" "$out"
}

# ba_vm_cmdline DISKS APPEND: the kernel command line of every test VM (a
# UKI for --firmware uefi embeds it).  panic=-1 reboots at once on a
# panic and -no-reboot turns that into QEMU's exit; oops=panic makes an
# oops do the same rather than leave a half-dead guest to run into the
# timeout.  no_timer_check: on an overloaded host TCG's timer interrupts
# arrive late enough for the kernel's IO-APIC timer check to fail and
# panic at boot.  DISKS is the number of scenario disks (ba.disks=).
ba_vm_cmdline() {
	printf '%s' "console=ttyS0 panic=-1 oops=panic no_timer_check loglevel=4 ba.disks=$1$2"
}

# What the initramfs of a test guest (run-vm.sh's machine) needs before
# the root is mounted: dracut --drivers takes these instead of every
# storage driver a generic initramfs carries (three times the size and
# twice dracut's time, the longest step of a boot test before this); its
# modules still add what they need.  AHCI, sd_mod and vfat: the ESP of
# UEFI boots, which the appliance reads its key store from.
# shellcheck disable=SC2034 # for the boot scripts sourcing this
BA_GUEST_INITRD_DRIVERS='virtio_blk virtio_pci virtio_rng ahci sd_mod vfat nls_cp437 nls_ascii nls_utf8'
# shellcheck disable=SC2034
BA_GUEST_UNUSED_DRACUT_MODULES='crypt dm nvdimm lunmask resume terminfo virtiofs kernel-modules-extra'
# How dracut compresses a test guest's initramfs.  Its own zstd setting is
# level 15: 21.6 s of CPU for the 64 MiB archive, most of dracut's time;
# level 9 takes 3.3 s and makes it 1.3 % larger (20.84 MB, not 20.57).
# shellcheck disable=SC2034
BA_GUEST_INITRD_COMPRESS='zstd -9 -q -T0'

# ba_mask_idle_units ROOT: in a Debian root the boot tests install, mask
# what Debian's minimal system starts that no test looks at: logins on
# consoles nobody uses (and none on ttyS0, where scenarios type recovery
# passphrases), ext4 housekeeping and the periodic timers.  Under TCG they
# made switch-root to multi-user.target take 33-42 s instead of 21-23 s.
ba_mask_idle_units() {
	local u
	for u in getty@.service serial-getty@.service getty-static.service \
		systemd-user-sessions.service e2scrub_reap.service e2scrub_all.timer \
		fstrim.timer apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer; do
		ln -sf /dev/null "$1/etc/systemd/system/$u"
	done
}

# Seconds since the epoch with centiseconds, for timing reports.
ba_now() { date +%s.%N | cut -c1-13; }
ba_elapsed() { awk -v a="$1" -v b="$(ba_now)" 'BEGIN { printf "%.1f", b - a }'; }
# ba_timed WHAT COMMAND...: runs COMMAND, then reports through the
# caller's step() how long WHAT took.
ba_timed() {
	local what=$1 t
	shift
	t=$(ba_now)
	"$@"
	step "$what took $(ba_elapsed "$t") s"
}

# How long a Debian root booted with systemd may take from its verdict to
# power-off.  An orderly shutdown takes 2-5 s, but a TCG guest can stand
# still for tens of seconds (CI once missed 20 s); systemd's own stop
# timeout (90 s) bounds a stuck unit, so this only catches a hung shutdown.
# shellcheck disable=SC2034 # for the boot scripts sourcing this
BA_SYSTEMD_POWEROFF_GRACE=120
