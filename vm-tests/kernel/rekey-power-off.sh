# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Rotating the HMAC key, interrupted by a power-off: "btrfs-auth rekey"
# (with the patched btrfstune) in a rescue system, here this busybox
# initramfs with a TPM.  The key files live on a second disk (ext4) that
# survives the power-off.
#   boot 1: enroll the current key with a recovery passphrase, start the
#           rekey; once btrfstune has been changing the filesystem for a
#           few seconds the host pulls the plug (QEMU killed).
#   host:   the filesystem is in the middle of the change (superblock flag
#           CHANGING_CSUM, still the old key), root.sealed.new is there.
#   boot 2: the same command again resumes and finishes, with both keys
#           from the TPM; the new key loads and mounts, every file is
#           intact.
#   host:   btrfs check --check-data-csum with the new key is clean, with
#           the old key it is not; root.sealed is the new key's and has no
#           .new or .previous beside it.
BA_TIMEOUT=900
BA_BOOTS=2
BA_MEM=1024
BA_NEEDS_PATCHED_PROGS=1
BA_STOPPED_BOOTS=1
# Test keys and passphrase: removed even when the work directory is kept.
BA_SECRETS='old.key new.key pass to-guest initrd.img'
REKEY_UUID=5e5e1234-0000-4000-8000-00000000be11

host_prepare() {
	local progs tool=${BA_BUILD_ROOT:-}/tpm-sealing/btrfs-auth i
	[ -x "$tool" ] || ba_die "no btrfs-auth at $tool: run this under meson (BA_BUILD_ROOT)"
	progs=$(dirname "$BA_MKFS")
	[ -x "$progs/btrfstune" ] || ba_die "no patched btrfstune in $progs"
	vm_tpm
	(
		umask 077
		head -c 32 /dev/urandom >"$BA_WORK/old.key"
		head -c 32 /dev/urandom >"$BA_WORK/new.key"
		head -c 18 /dev/urandom | base64 >"$BA_WORK/pass"
	)
	# Enough data that the change takes a while under TCG: 48 files of 4 MiB.
	mkdir -p data/dir
	for i in $(seq 1 48); do head -c 4M /dev/urandom >"data/dir/f$i"; done
	echo "small file" >data/small
	(cd data && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$BA_TO_GUEST/sums"
	vm_mkfs fs.img 2G --csum hmac-sha256 --auth-key-file "$BA_WORK/old.key" -U "$REKEY_UUID" --rootdir data
	rm -rf data
	mkdir -p store/btrfs-auth
	truncate -s 64M store.img
	mke2fs -q -t ext4 -d store store.img || ba_die "mke2fs of the key store failed"
	# Writes slowed to 256 KiB/s: the change after the verify pass writes the
	# new checksums (kept from that pass) and rewrites the tree blocks, a few
	# seconds of TCG at full speed, too short to land the power-off in.
	# Reads, and with them the verify pass, are not slowed.
	vm_disk fs.img write-bps=262144
	vm_disk store.img
	vm_module ext4
	vm_guest_binary "$tool:/usr/sbin/btrfs-auth"
	vm_guest_binary "$progs/btrfstune:/usr/sbin/btrfstune"
	vm_guest_binary "$(ldconfig -p | awk '/libtss2-tcti-device.so.0 / { print $NF; exit }')"
	install -m 0600 "$BA_WORK/old.key" "$BA_TO_GUEST/old.key"
	install -m 0600 "$BA_WORK/new.key" "$BA_TO_GUEST/new.key"
	install -m 0600 "$BA_WORK/pass" "$BA_TO_GUEST/pass"
	vm_guest_env REKEY_UUID "$REKEY_UUID"
}

host_boot() {
	# The plug is pulled 1 s after the guest says btrfstune is well under way.
	[ "$1" != 1 ] || vm_boot_arg --stop-on 'BA-PULL-THE-PLUG'
}

guest_store() {
	mkdir -p /store && mount -t ext4 "$(ba_disk 1)" /store
}

guest_enroll() {
	btrfs-auth enroll root --key-file=/ba/in/old.key --uuid="$REKEY_UUID" --config-dir=/store/btrfs-auth \
		--pcrs=0,7 --lock-pcr=15 --allow-unmeasured-initramfs --recovery-passphrase --passphrase-from=stdin --argon2-memory=16 --argon2-time=1 \
		--tpm-wait=30 </ba/in/pass && sync
}

guest_rekey() {
	btrfs-auth rekey root --device="$(ba_disk 0)" --config-dir=/store/btrfs-auth --no-update-initramfs \
		--passphrase-from=stdin --tpm-wait=30 "$@"
}

# The superblock flag btrfstune sets once it starts writing (BTRFS_SUPER_FLAG_CHANGING_CSUM,
# bit 37 of the u64 at offset 56 of the superblock at 64 KiB), as the disk has it: read past the
# page cache, which has it before the (slowed) write reaches the disk.
guest_changing() {
	local b
	b=$(dd if="$(ba_disk 0)" bs=4096 skip=16 count=1 iflag=direct 2>/dev/null |
		dd bs=1 skip=$((56 + 4)) count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
	[ $((b & 32)) != 0 ]
}

# Start the rekey; once btrfstune has been changing the filesystem for a few seconds, ask the host
# to pull the plug.
guest_rekey_until_power_off() {
	local i=0
	guest_rekey --new-key-file=/ba/in/new.key </ba/in/pass >"$BA_OUT/rekey-1.log" 2>&1 &
	while ! guest_changing; do
		i=$((i + 1))
		pidof btrfstune >/dev/null || [ "$i" -lt 300 ] || { echo "btrfstune is not running"; cat "$BA_OUT/rekey-1.log"; return 1; }
		[ "$i" -lt 3000 ] || { echo "btrfstune never started changing the filesystem"; return 1; }
		sleep 0.2
	done
	[ -s /store/btrfs-auth/root.sealed.new ] || { echo "btrfstune changes the filesystem before root.sealed.new is written"; return 1; }
	sleep "${REKEY_RUN_SECONDS:-4}"
	pidof btrfstune >/dev/null || { echo "btrfstune finished before the power-off"; cat "$BA_OUT/rekey-1.log"; return 1; }
	# On the console, where the host watches (check captures stdout).
	echo "BA-PULL-THE-PLUG" >/dev/console
	sleep 600
}

guest_files_intact() {
	btrfs-auth load root --config-dir=/store/btrfs-auth --check="$(ba_disk 0)" --tpm-wait=30 --recovery-tries=0 &&
		mount -t btrfs -o ro,auth_key=btrfs:root "$(ba_disk 0)" /mnt &&
		(cd /mnt && sha256sum -c /ba/in/sums) && umount /mnt
}

guest() {
	check store-mounted guest_store
	# shellcheck disable=SC2153 # guest-lib.sh sets BA_BOOT from ba.boot=
	if [ "$BA_BOOT" = 1 ]; then
		check enroll guest_enroll
		rm -f /ba/in/old.key
		check rekey-until-power-off guest_rekey_until_power_off
		return
	fi
	check pending-key-file-kept [ -s /store/btrfs-auth/root.sealed.new ]
	check rekey-resumes guest_rekey </dev/null
	check pending-key-file-gone [ ! -e /store/btrfs-auth/root.sealed.new ]
	check new-key-unseals-mounts-files-intact guest_files_intact
	cp /store/btrfs-auth/root.sealed "$BA_OUT/root.sealed"
	umount /store
}

host_between() {
	local sb flags
	sb=$("$BA_BTRFS" inspect-internal dump-super fs.img)
	flags=$(awk '$1 == "flags" { print $2; exit }' <<<"$sb")
	# BTRFS_SUPER_FLAG_CHANGING_CSUM (1 << 37): btrfstune was writing when the power went.
	if [[ $flags != 0x* ]] || ! (((flags >> 37) & 1)); then
		ba_die "the power-off did not land in the middle of the change: superblock flags '$flags'"
	fi
	debugfs -R 'ls -l /btrfs-auth' store.img 2>/dev/null | grep -q 'root.sealed.new' ||
		ba_die "the key store has no root.sealed.new after the power-off"
	echo "vm-rekey-power-off: powered off in the middle of the change ($(grep -m1 '^flags' <<<"$sb" | tr -s ' '))"
}

host_check() {
	"$BA_BTRFS" check --readonly --check-data-csum --auth-key-file "$BA_WORK/new.key" fs.img >check-new.log 2>&1 ||
		ba_die "btrfs check with the new key failed: $(tail -n 5 check-new.log)"
	if "$BA_BTRFS" check --readonly --auth-key-file "$BA_WORK/old.key" fs.img >check-old.log 2>&1; then
		ba_die "the old key still opens the filesystem"
	fi
	debugfs -R 'ls -l /btrfs-auth' store.img 2>/dev/null >store.ls
	! grep -qE 'root.sealed.(new|previous)' store.ls || ba_die "leftover key files: $(cat store.ls)"
	rm -rf "$BA_WORK/old.key" "$BA_WORK/new.key" "$BA_WORK/pass" "$BA_TO_GUEST" "$BA_WORK/initrd.img"
}
