# shellcheck shell=bash disable=SC2034 # read by vm-tests/boot/run-boot.sh
# Boot benchmark, baseline: the same Debian root and initramfs on a plain
# sha256 btrfs, no auth_key=, no TPM; booted BA_BENCH_BOOTS times.
ROOT_IMAGE=sha256-plain
BOOT_PLAN=$(printf 'bench%.0s,' $(seq "${BA_BENCH_BOOTS:-3}"))
BOOT_PLAN=${BOOT_PLAN%,}
REPORT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/boot-report
