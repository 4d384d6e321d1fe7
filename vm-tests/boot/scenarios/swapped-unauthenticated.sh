# shellcheck shell=bash disable=SC2034 # read by run-boot.sh
# Fail closed: the root image is swapped for an unauthenticated (sha256)
# btrfs with the same UUID and contents.  The key still loads, but the
# kernel refuses auth_key= on a filesystem whose checksum takes no key, so
# root is not mounted and the initramfs halts.
ROOT_IMAGE=sha256-same-uuid
EXPECT=fail-closed
FAIL_CLOSED_PATTERNS=(
	'BTRFS error .*auth_key=btrfs:root given, but checksum algorithm sha256 takes no key'
	'FAILED.*Failed to mount .*sysroot.mount'
)
