# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# A checksum change refuses a filesystem with a device replace in progress
# (issue 14): the replace copies blocks by their old checksums and the
# kernel resumes it at the next mount, so the change would race it.  Only
# the kernel makes such a filesystem: the guest starts
# "btrfs replace start" of the only device onto a blank one, and the power
# goes off while it runs (on disk: started; a clean unmount would suspend
# it, the same refusal).  On the host btrfstune (the
# patched one) refuses to convert that image, one line saying why, and
# leaves it byte for byte as it was.
BA_NEEDS_PATCHED_PROGS=1
BA_TIMEOUT=300

host_prepare() {
	# Zeros are copied as fast as anything else, and enough of them keep
	# the replace running under TCG well past the power-off.
	mkdir -p data
	head -c 768M /dev/zero >data/zeros
	vm_mkfs disk0.img 1G --rootdir data
	rm -rf data
	# mkfs --rootdir may grow the image: the target must not be smaller.
	truncate -s "$(stat -c %s disk0.img)" disk1.img
	vm_disk disk0.img
	vm_disk disk1.img
}

# The replace must still be running when the power goes off.  "replace
# start" returns before its background child has issued the ioctl, so the
# status may say "Never started" for a moment: wait for it to start.
guest_replace_running() {
	local tries=0
	while btrfs replace status -1 /mnt >/tmp/status 2>&1 &&
		grep -q 'Never started' /tmp/status && [ "$tries" -lt 100 ]; do
		tries=$((tries + 1))
		sleep 0.2
	done
	cat /tmp/status
	grep -q '% done' /tmp/status
}

guest() {
	D0=$(ba_disk 0)
	D1=$(ba_disk 1)
	check mount mount -t btrfs "$D0" /mnt || return 0
	check replace-start btrfs replace start -f 1 "$D1" /mnt || return 0
	check replace-running guest_replace_running
	# The power goes off with the replace running: on disk it is started.
	check sync sync
}

host_check() {
	local before
	"$BA_BTRFS" inspect-internal dump-tree -t dev disk0.img >devtree.txt 2>&1
	grep -q 'DEV_REPLACE' devtree.txt || ba_die "the image has no device replace item"
	before=$(sha256sum <disk0.img)
	if "$(dirname "$BA_MKFS")/btrfstune" --csum sha256 disk0.img >tune.log 2>&1; then
		ba_die "btrfstune changed the checksums of a filesystem with a device replace in progress"
	fi
	grep -q 'device replace is running or suspended' tune.log ||
		ba_die "btrfstune did not say why: $(tail -n 3 tune.log)"
	[ "$(sha256sum <disk0.img)" = "$before" ] ||
		ba_die "the refused change wrote to the image"
}
