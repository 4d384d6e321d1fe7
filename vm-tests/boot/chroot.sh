# shellcheck shell=bash
# ba_chroot DIR COMMAND...: run COMMAND in the Debian root DIR as an
# administrator's shell in it would, with /proc, /sys and /dev of this
# machine bound in a mount namespace of its own (gone when COMMAND ends,
# whatever happens), no daemon started by a package (policy-rc.d) and
# Debian's PATH.  Sourced by rootfs-admin.sh and debian-install.sh.
ba_chroot() {
	local dir=$1
	shift
	[ -e "$dir/usr/sbin/policy-rc.d" ] || {
		printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
		chmod 0755 "$dir/usr/sbin/policy-rc.d"
	}
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m -- /bin/bash -c '
		set -e
		d=$1; shift
		mount --make-rprivate /
		for m in proc sys dev; do mount --rbind "/$m" "$d/$m"; done
		exec chroot "$d" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"' ba_chroot "$dir" "$@"
}
