# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# The same round trip as mount-crc32c, on a sha256 filesystem.
CSUM=sha256
# shellcheck source=include/mount-roundtrip.sh
source "$BA_VM_TOP/kernel/include/mount-roundtrip.sh"
