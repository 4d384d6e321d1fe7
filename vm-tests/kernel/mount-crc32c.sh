# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# A crc32c filesystem made by mkfs.btrfs mounts, reads back, takes a write
# and checks clean with the module under test.
CSUM=crc32c
# shellcheck source=include/mount-roundtrip.sh
source "$BA_VM_TOP/kernel/include/mount-roundtrip.sh"
