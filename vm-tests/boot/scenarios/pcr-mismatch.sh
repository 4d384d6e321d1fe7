# shellcheck shell=bash disable=SC2034 # read by run-boot.sh
# Fail closed: the key was sealed to a PCR 4 value this boot does not
# produce (a boot manager other than the one measured).  The key does not
# unseal, the console names PCR 4, root is not mounted, the initramfs halts.
ENROLL_ARGS="--pcrs=0,2,4,7 --lock-pcr=15 --allow-unmeasured-initramfs --pcr-value=4=$(printf '%064d' 4)"
EXPECT=fail-closed
FAIL_CLOSED_PATTERNS=(
	'btrfs-auth\[[0-9]+\]: .*PCR 4 differs from the value sealed to'
	'FAILED.*Failed to start .*btrfs-auth'
)
