#!/bin/bash
# The administrator's path on a real Debian 12 machine (docs/install.md),
# booted in QEMU (SeaBIOS, TCG) against swtpm:
#
#   1. the packages (tools/build-packages, cached) installed with
#      "apt-get install ./*.deb" in a chroot of a debootstrapped root that
#      has the kernel, its headers and source, DKMS and dracut
#      (rootfs-admin.sh, cached): DKMS builds and signs btrfs.ko there;
#      a root that is not btrfs is refused (the chroot's is not), and the
#      DKMS build refuses a linux-source of another Debian version;
#   2. boot 1 of that root on a crc32c btrfs: the bad inputs of
#      btrfs-auth-convert are refused, changing nothing; then
#      "btrfs-auth-convert" prepares the conversion (enroll to the TPM,
#      fstab, dracut configuration);
#   3. boot 2: its initramfs converts the root (btrfstune with the
#      throwaway key, then btrfs-auth rekey to the sealed key) and mounts
#      it with the key, unattended; the booted system finishes;
#   4. "apt-get install --reinstall" of the kernel image in the chroot: the
#      DKMS, guard and dracut hooks in that order; boot 3, unattended;
#   5. a second kernel version whose module build breaks, then one without
#      headers: the kernel hooks stop, the guard says why, its initramfs is
#      not replaced;
#   6. the way back: "btrfs-auth-convert back --prepare" at the end of boot
#      3, then "btrfs-auth-convert back" with the recovery key, as from a
#      rescue system (the chroot, on the image); boot 4 on crc32c.
#
# The host keeps the root as a directory (the chroot) and the VM's disk as
# an image: what the VM changes in /etc comes back over a second disk (the
# "USB stick", which also carries the recovery key), and the initramfs
# rebuilds the VM asks for (BTRFS_AUTH_UPDATE_INITRAMFS) are made by the
# same dracut in the chroot: dracut under TCG takes many minutes.  The VM
# boots the chroot's kernel and initramfs directly (SeaBIOS): the boot
# loader's part is not tested, nothing measures the initramfs, and the key
# is bound to PCRs 0, 2, 4, 7 and the lock PCR 15.
#
# usage: debian-install.sh [--keep]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
source "$here/../lib/common.sh"
# shellcheck source=chroot.sh
source "$here/chroot.sh"

keep=0
[ "${1:-}" != --keep ] || keep=1
name=debian-install
work=${BA_BUILD_ROOT:-/tmp/ba-boot}/vm-tests/boot/$name
logdir=${BA_BUILD_ROOT:+$BA_BUILD_ROOT/meson-logs/vm-tests}
: "${logdir:=$work/..}"
rm -rf "$work"
mkdir -p "$work" "$logdir"
root=$work/root
passed=0
cleanup() {
	ba_swtpm_tcp_stop
	# The recovery key is a (throwaway) secret: never left behind.
	rm -f "$work/recovery.key" "$root/run/rescue.key"
	rm -rf "$work/usb" "${debs:-}"
	if [ "$passed" = 1 ] && [ "$keep" = 0 ]; then
		rm -rf "$work"
	else
		echo "boot-$name: kept $work (root, images, logs)"
	fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT
step() { echo "boot-$name: $*"; }
# expect_in LOG ERE...: each ERE matches a line of LOG, in this order.
expect_in() {
	local log=$1 prev=0 n p
	shift
	for p in "$@"; do
		n=$(grep -n -E -e "$p" "$log" | head -n1 | cut -d: -f1)
		[ -n "$n" ] || ba_die "$log has no line matching '$p'"
		[ "$n" -gt "$prev" ] || ba_die "in $log, '$p' (line $n) does not come after line $prev"
		prev=$n
	done
}

resolve() {
	# build-packages refuses an OUTDIR inside the source tree, where CI's
	# build directory (and so $work) is.
	debs=$(mktemp -d "${TMPDIR:-/tmp}/ba-debian-install-debs.XXXXXX")
	# The packages as an administrator gets them (one command, cached).
	bash "$BA_TOP/tools/build-packages" "$debs" >"$work/build-packages.log" 2>&1 ||
		ba_die "tools/build-packages failed: $(tail -n 5 "$work/build-packages.log")"
	rootfs=$(bash "$here/rootfs-admin.sh" | tail -n1)
	[ -d "$rootfs/etc" ] || ba_die "no root file system in '$rootfs'"
	progs=${BA_PROGS_DIR:-$(bash "$BA_TOP/progs-patch/build-progs.sh" | tail -n1)}
	uuid=$(cat /proc/sys/kernel/random/uuid)
}

install_packages() {
	cp -a "$rootfs/." "$root/"
	# shellcheck disable=SC2016 # a dpkg-query format
	abi=$(ba_chroot "$root" dpkg-query -W -f='${Depends}' linux-image-amd64 | sed -n 's/.*linux-image-\([^ ,]*\).*/\1/p')
	[ -n "$abi" ] || ba_die "cannot tell the root's kernel"
	# Debian's generic initramfs (every driver) takes minutes to build
	# here, and dracut runs five times: this machine has virtio disks.
	# The hooks and dracut modules that run are the same.
	printf '# debian-install.sh: a VM with virtio disks\ndrivers="virtio_blk virtio_pci"\n' \
		>"$root/etc/dracut.conf.d/10-test-vm.conf"
	mkdir -p "$root/tmp/debs"
	cp "$debs"/btrfs-auth_*.deb "$debs"/btrfs-auth-dkms_*.deb "$debs"/btrfs-progs_*+auth*.deb "$root/tmp/debs/"
	ba_chroot "$root" sh -c 'apt-get -q -y install /tmp/debs/*.deb' >"$work/apt-install.log" 2>&1 ||
		ba_die "apt-get install ./*.deb failed: $(tail -n 8 "$work/apt-install.log")"
	rm -rf "$root/tmp/debs"
	# DKMS built, signed and installed the module for the root's kernel.
	local m=$root/lib/modules/$abi/updates/dkms/btrfs.ko
	[ -f "$m" ] || ba_die "DKMS did not install $m (see $work/apt-install.log)"
	modinfo -F parm "$m" | grep -q '^require_auth:' || ba_die "$m is not the patched module"
	[ "$(modinfo -F signer "$m")" = 'DKMS module signing key' ] || ba_die "$m is not signed with DKMS's key"
	[ "$(modinfo -F sig_key "$m" | tr -d ':' | tr 'A-F' 'a-f')" = \
		"$(openssl x509 -inform DER -in "$root/var/lib/dkms/mok.pub" -noout -serial | sed 's/^serial=//' | tr 'A-F' 'a-f')" ] ||
		ba_die "$m is signed by another key than /var/lib/dkms/mok.pub"
	ba_chroot "$root" dkms status | grep -q "^btrfs-auth/.*, $abi, x86_64: installed" ||
		ba_die "dkms status does not show btrfs-auth installed for $abi"
	step "apt-get install ./*.deb: DKMS built btrfs.ko for $abi, signed with its MOK key ($(grep -c . "$work/apt-install.log") lines of output)"
}

# Bad input that needs no boot: the chroot's root is not btrfs; a
# linux-source of another Debian version makes the DKMS build refuse.
bad_input_on_host() {
	local rc=0
	ba_chroot "$root" btrfs-auth-convert --check >"$work/refused-not-btrfs.log" 2>&1 || rc=$?
	{ [ "$rc" = 2 ] && grep -q 'not btrfs' "$work/refused-not-btrfs.log"; } ||
		ba_die "a root that is not btrfs was not refused: $(cat "$work/refused-not-btrfs.log")"
	step "btrfs-auth-convert refuses a root that is not btrfs: $(grep -m1 'cannot convert' "$work/refused-not-btrfs.log")"
	mkdir -p "$root/run/shim"
	printf '#!/bin/sh\ncase "$*" in *linux-source-6.1*) echo "installed 6.1.999-1"; exit 0 ;; esac\nexec /usr/bin/dpkg-query "$@"\n' \
		>"$root/run/shim/dpkg-query"
	chmod 0755 "$root/run/shim/dpkg-query"
	rc=0
	ba_chroot "$root" sh -c "cd /tmp && cp -r /usr/src/btrfs-auth-* /tmp/dkms-src && PATH=/run/shim:\$PATH bash /tmp/dkms-src/build.sh $abi" \
		>"$work/refused-other-source.log" 2>&1 || rc=$?
	rm -rf "$root/run/shim" "$root/tmp/dkms-src"
	{ [ "$rc" = 1 ] && grep -q "linux-source-6.1 is Debian 6.1.999-1, but kernel $abi" "$work/refused-other-source.log"; } ||
		ba_die "the DKMS build did not refuse another linux-source: $(tail -n 3 "$work/refused-other-source.log")"
	step "the DKMS build refuses linux-source-6.1 of another Debian version, before extracting anything"
}

stage_machine() {
	local r=$root
	echo ba-install-test >"$r/etc/hostname"
	ba_mask_idle_units "$r"
	tr -d '-' </proc/sys/kernel/random/uuid >"$r/etc/machine-id"
	printf 'UUID=%s / btrfs defaults 0 0\n' "$uuid" >"$r/etc/fstab"
	# GRUB's configuration, without GRUB: the host is the boot loader and
	# passes GRUB_CMDLINE_LINUX (boot_cmdline), as update-grub would.
	mkdir -p "$r/etc/default"
	echo 'GRUB_CMDLINE_LINUX=""' >"$r/etc/default/grub"
	install -D -m 0755 "$here/guest/ba-install-report" "$r/usr/local/libexec/ba-install-report"
	install -D -m 0755 "$here/guest/ba-handoff" "$r/usr/local/libexec/ba-handoff"
	install -D -m 0644 "$here/guest/ba-install-report.service" "$r/etc/systemd/system/ba-install-report.service"
	ln -sf ../ba-install-report.service "$r/etc/systemd/system/multi-user.target.wants/ba-install-report.service"
	printf 'BA_INSTALL_PLAN=before,converted,updated,reverted\nBA_ENROLL_ARGS="--pcrs=0,2,4,7 --lock-pcr=15 --allow-unmeasured-initramfs --no-recovery"\n' \
		>"$r/etc/ba-install.conf"
	install -d -m 0700 "$r/etc/btrfs-auth"
	echo 'BTRFS_AUTH_UPDATE_INITRAMFS=/usr/local/libexec/ba-handoff' >"$r/etc/btrfs-auth/btrfs-auth.conf"
	# An initramfs for this machine (the one the kernel's install built
	# has Debian's module: DKMS came later, and nothing rebuilt it).
	local t0
	t0=$(ba_now)
	ba_chroot "$r" dracut --force --regenerate-all >"$work/dracut-0.log" 2>&1 ||
		ba_die "dracut failed: $(tail -n 5 "$work/dracut-0.log")"
	step "dracut in the chroot took $(ba_elapsed "$t0") s"
}

# The VM's disk leaves out what no boot reads and only the chroot uses: the
# kernel's source tarball and all of its headers but the Makefile that
# btrfs-auth-convert --check looks for, apt's lists and cache, the
# compiler and its sanitizer libraries, the documentation, the drivers of
# hardware the VM does not have, the network protocols of a VM without a
# network and the file systems it does not mount.  Under TCG each 100 MiB
# costs the converting boot about 40 s (two btrfstune passes).
make_image() {
	local t=$work/image-tree m d
	rm -rf "$t"
	# A copy, not hard links: mkfs.btrfs --rootdir of btrfs-progs 6.2
	# copies each link as a file of its own but keeps the link count, which
	# btrfs check then reports as "link count wrong" for every such file.
	cp -a --no-preserve=links "$root" "$t"
	rm -rf "$t/usr/src/linux-source-6.1.tar.xz" "$t"/var/cache/apt/archives/*.deb "$t"/var/lib/apt/lists/* \
		"$t/usr/lib/gcc" "$t/usr/share/doc" "$t/usr/share/man" "$t/usr/share/locale" \
		"$t"/usr/bin/x86_64-linux-gnu-lto-dump-* "$t"/usr/lib/x86_64-linux-gnu/lib{a,hwa,l,t,ub}san.so.*
	find "$t"/usr/src/linux-headers-* -mindepth 1 -maxdepth 1 ! -name Makefile -exec rm -rf {} +
	m=$t/lib/modules/$abi/kernel
	for d in net sound drivers/{gpu,net,media,infiniband,iio,staging,hwmon,target,mtd,comedi,isdn,mmc,nvme,usb} \
		fs/{xfs,smb,ocfs2,nfs,nfsd,gfs2,f2fs,ceph}; do
		rm -rf "${m:?}/$d"
	done
	# SCSI host adapters; the SCSI core stays.
	find "$m/drivers/scsi" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
	truncate -s 4G "$work/root.img"
	"$progs/mkfs.btrfs" -q -f -U "$uuid" --csum crc32c --rootdir "$t" "$work/root.img" >"$work/mkfs.log" 2>&1 ||
		ba_die "mkfs.btrfs failed: $(tail -n 5 "$work/mkfs.log")"
	rm -rf "$t"
	"$progs/btrfs" check --readonly --check-data-csum "$work/root.img" >"$work/check-0.log" 2>&1 ||
		ba_die "btrfs check of the new image failed: $(grep -m3 -i 'error\|wrong' "$work/check-0.log")"
	truncate -s 64M "$work/usb.img"
	step "the VM's disk: $(du -sm "$work/root.img" | cut -f1) MiB used of 4 GiB"
}

# The kernel command line GRUB would give: root= and GRUB_CMDLINE_LINUX.
boot_cmdline() {
	local extra
	extra=$(sed -n 's/^GRUB_CMDLINE_LINUX=["\x27]\{0,1\}\([^"\x27]*\)["\x27]\{0,1\}$/\1/p' "$root/etc/default/grub" | tail -n1)
	printf '%s' "root=UUID=$uuid ro${extra:+ $extra} systemd.firstboot=off ba.report=1"
}

boot() {
	local n=$1 timeout=${2:-600} rc=0
	: >"$work/usb.img.zero" && dd if=/dev/zero of="$work/usb.img" bs=1M count=64 conv=notrunc status=none
	rm -f "$work/usb.img.zero"
	bash "$here/../lib/run-vm.sh" --kernel "$root/boot/vmlinuz-$abi" --initrd "$root/boot/initrd.img-$abi" \
		--append "$(boot_cmdline)" \
		--disk "$work/root.img,serial=ba-root" --disk "$work/usb.img,format=raw,serial=ba-usb" \
		--tpm-state "$work/tpm" --mem 1024 --timeout "$timeout" --poweroff-grace "$BA_SYSTEMD_POWEROFF_GRACE" \
		--log "$work/console-$n.log" --outcome "$work/outcome-$n" || rc=$?
	cp "$work/console-$n.log" "$logdir/boot-$name-console-$n.log"
	IFS=$'\t' read -r outcome secs reason <"$work/outcome-$n"
	step "boot $n ($(boot_cmdline)): $outcome after $secs s${reason:+: $reason}"
	[ "$rc" = 0 ] || ba_die "boot $n failed: $outcome: $reason (console: $logdir/boot-$name-console-$n.log)"
}

# What the VM changed in /etc, from the "USB stick", into the chroot.
apply_state() {
	rm -rf "$work/usb" && mkdir -m 0700 "$work/usb"
	tar -C "$work/usb" -xf "$work/usb.img" || ba_die "boot $1 left no state on the ba-usb disk"
	rm -rf "$root/etc/btrfs-auth" "$root/etc/dracut.conf.d" "$root/etc/systemd/system"
	cp -a "$work/usb/etc/." "$root/etc/"
	if [ -f "$work/usb/run/ba-usb/root.key" ]; then
		install -m 0600 "$work/usb/run/ba-usb/root.key" "$work/recovery.key"
	fi
	rm -rf "$work/usb"
}

initramfs_as_asked() {
	grep -q 'BA-CHECK: ok initramfs-update-requested' "$work/console-$1.markers" ||
		ba_die "boot $1 did not ask for an initramfs update"
	ba_chroot "$root" /usr/local/libexec/ba-handoff >"$work/dracut-$1.log" 2>&1 ||
		ba_die "dracut after boot $1 failed: $(tail -n 5 "$work/dracut-$1.log")"
}

reinstall_kernel() {
	ba_chroot "$root" apt-get -q -y install --reinstall "linux-image-$abi" >"$work/reinstall.log" 2>&1 ||
		ba_die "apt-get install --reinstall linux-image-$abi failed: $(tail -n 8 "$work/reinstall.log")"
	# The hooks in their order: DKMS, the guard, dracut.
	expect_in "$work/reinstall.log" "dkms: running auto installation service for kernel $abi" \
		"btrfs-auth: the patched btrfs module for $abi is in place" "dracut: Generating /boot/initrd.img-$abi"
	local i=$root/boot/initrd.img-$abi
	lsinitrd "$i" >"$work/lsinitrd-3.txt" 2>&1 || ba_die "lsinitrd $i failed"
	# Its path in the initramfs: usr/lib/modules/... (merged /usr) or lib/modules/...
	local ko
	ko=$(grep -o "[a-z/]*lib/modules/$abi/updates/dkms/btrfs.ko$" "$work/lsinitrd-3.txt" | head -n1)
	[ -n "$ko" ] || ba_die "the new initramfs does not hold the DKMS module"
	cmp -s <(lsinitrd -f "$ko" "$i") "$root/lib/modules/$abi/updates/dkms/btrfs.ko" ||
		ba_die "the initramfs' btrfs.ko is not the one DKMS installed"
	grep -q 'etc/btrfs-auth/root.sealed$' "$work/lsinitrd-3.txt" || ba_die "the new initramfs has no root.sealed"
	! grep -q 'convert-key\|btrfs-auth-convert.service' "$work/lsinitrd-3.txt" ||
		ba_die "the new initramfs still converts"
	step "apt-get install --reinstall linux-image-$abi: dkms, then the guard, then dracut; the initramfs holds DKMS's btrfs.ko and the sealed key"
}

# A second kernel version (a copy of this one's files under another name,
# of no Debian package): DKMS's build for it fails; then without headers
# DKMS skips it and the guard stops the hooks.
guard() {
	local k2=${abi/-[0-9]*-/-9999-} r=$root sum rc
	[ "$k2" != "$abi" ] || k2=6.1.0-9999-amd64
	cp -al "$r/lib/modules/$abi" "$r/lib/modules/$k2"
	rm -rf "$r/lib/modules/$k2/updates" "$r/lib/modules/$k2/build"
	ln -s "/usr/src/linux-headers-$abi" "$r/lib/modules/$k2/build"
	ba_chroot "$r" depmod "$k2"
	for f in vmlinuz System.map config initrd.img; do cp "$r/boot/$f-$abi" "$r/boot/$f-$k2"; done
	sum=$(sha256sum <"$r/boot/initrd.img-$k2")
	# What the kernel package's postinst runs.
	rc=0
	ba_chroot "$r" run-parts --report --exit-on-error --arg="$k2" --arg="/boot/vmlinuz-$k2" /etc/kernel/postinst.d \
		>"$work/guard-build.log" 2>&1 || rc=$?
	[ "$rc" != 0 ] || ba_die "the kernel hooks went on although the module build failed for $k2"
	expect_in "$work/guard-build.log" "Bad return status for module build on kernel: $k2" "dkms exited with return code"
	grep -q "kernel $k2 belongs to no Debian package" "$r/var/lib/dkms/btrfs-auth/"*/build/make.log ||
		ba_die "the failed module build's make.log does not say why"
	! grep -q "dracut: Generating" "$work/guard-build.log" || ba_die "dracut ran although the module build failed"
	[ "$(sha256sum <"$r/boot/initrd.img-$k2")" = "$sum" ] || ba_die "the initramfs of $k2 was replaced"
	step "kernel $k2, module build broken: the hooks stop at DKMS ($(grep -m1 -o 'exited with return code [0-9]*' "$work/guard-build.log")), its initramfs is kept"
	rm "$r/lib/modules/$k2/build"
	rc=0
	ba_chroot "$r" run-parts --report --exit-on-error --arg="$k2" --arg="/boot/vmlinuz-$k2" /etc/kernel/postinst.d \
		>"$work/guard-headers.log" 2>&1 || rc=$?
	[ "$rc" != 0 ] || ba_die "the kernel hooks went on without a module for $k2"
	expect_in "$work/guard-headers.log" "autoinstall for kernel $k2 was skipped" \
		"btrfs-auth: ERROR: the btrfs module of $k2 .* is Debian's own" \
		"btrfs-auth: ERROR: /boot/initrd.img-$k2 is NOT rebuilt" "dkms-btrfs-auth exited with return code 1"
	! grep -q "dracut: Generating" "$work/guard-headers.log" || ba_die "dracut ran although the guard failed"
	[ "$(sha256sum <"$r/boot/initrd.img-$k2")" = "$sum" ] || ba_die "the initramfs of $k2 was replaced"
	step "kernel $k2 without headers: DKMS skips it, the guard fails the hooks, its initramfs is kept"
	rm -rf "$r/lib/modules/$k2" "$r"/boot/*-"$k2" "$r/var/lib/dkms/btrfs-auth/kernel-$k2-x86_64"
}

# chroot_with_disk IMAGE PATH COMMAND...: ba_chroot with IMAGE at PATH in the root.
chroot_with_disk() {
	local img=$1 at=$2
	shift 2
	: >"$root$at"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m -- /bin/bash -c 'mount --make-rprivate / && mount --bind "$1" "$2" && shift 2 && source "$0" && ba_chroot "$@"' \
		"$here/chroot.sh" "$img" "$root$at" "$root" "$@"
}

# The way back, offline part, as from a rescue system (the chroot, which has
# the packages): btrfstune to crc32c with the recovery key.  Boot 3 did
# the first part (btrfs-auth-convert back --prepare) in the machine.
way_back() {
	install -m 0600 "$work/recovery.key" "$root/run/rescue.key"
	chroot_with_disk "$work/root.img" /run/disk.img \
		btrfs-auth-convert back --key-file=/run/rescue.key --device=/run/disk.img >"$work/back.log" 2>&1 ||
		ba_die "btrfs-auth-convert back failed: $(tail -n 5 "$work/back.log")"
	rm -f "$root/run/rescue.key" "$root/run/disk.img"
	[ "$(od -An -tu2 -j $((65536 + 196)) -N2 "$work/root.img" | tr -d ' ')" = 0 ] || ba_die "the image is not crc32c after the way back"
	"$progs/btrfs" check --readonly --check-data-csum "$work/root.img" >"$work/check-back.log" 2>&1 ||
		ba_die "btrfs check after the way back failed: $(tail -n 5 "$work/check-back.log")"
	step "btrfs-auth-convert back (rescue part): crc32c again, btrfs check --check-data-csum clean without a key"
}

check_authenticated_image() {
	"$progs/btrfs" check --readonly --check-data-csum --auth-key-file "$work/recovery.key" "$work/root.img" \
		>"$work/check-$1.log" 2>&1 || ba_die "btrfs check with the recovery key after boot $1 failed: $(tail -n 5 "$work/check-$1.log")"
	step "btrfs check --check-data-csum with the recovery key: clean after boot $1"
}

ba_timed "packages, root file system, progs" resolve
ba_timed "apt-get install ./*.deb in the chroot" install_packages
bad_input_on_host
stage_machine
ba_timed "mkfs.btrfs --csum crc32c --rootdir" make_image
ba_timed "boot 1 (btrfs-auth-convert)" boot 1
apply_state 1
[ -s "$work/recovery.key" ] || ba_die "boot 1 exported no recovery key"
ba_timed "dracut as btrfs-auth-convert asked" initramfs_as_asked 1
ba_timed "boot 2 (conversion in the initramfs)" boot 2 1200
check_authenticated_image 2
apply_state 2
ba_timed "apt-get install --reinstall of the kernel" reinstall_kernel
ba_timed "boot 3 (after the kernel update; back --prepare)" boot 3
# Before the state of boot 3 comes back: the machine still has its key.
ba_timed "the guard" guard
apply_state 3
ba_timed "dracut as btrfs-auth-convert back asked" initramfs_as_asked 3
ba_timed "the way back" way_back
ba_timed "boot 4 (crc32c again)" boot 4
passed=1
step PASS
