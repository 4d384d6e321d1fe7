# shellcheck shell=bash disable=SC2034 # read by run-boot.sh
# Fail closed: the disk is moved to another machine (a TPM that never saw
# the key).  The key does not unseal, root is not mounted, the console says
# which step failed and why, and the initramfs halts.
BOOT_TPM=fresh
EXPECT=fail-closed
FAIL_CLOSED_PATTERNS=(
	'btrfs-auth\[[0-9]+\]: .*This TPM has no storage root key named [0-9a-f]+, the one the key was sealed under'
	'FAILED.*Failed to start .*btrfs-auth'
)
