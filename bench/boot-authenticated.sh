# shellcheck shell=bash disable=SC2034 # read by vm-tests/boot/run-boot.sh
# Boot benchmark, authenticated side: the boot test's authenticated root
# (key sealed to PCRs 0, 2, 4, 7 and lock PCR 15, loaded by the initramfs),
# booted BA_BENCH_BOOTS times; bench/boot-report reports the timings.
BOOT_PLAN=$(printf 'bench%.0s,' $(seq "${BA_BENCH_BOOTS:-3}"))
BOOT_PLAN=${BOOT_PLAN%,}
REPORT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/boot-report
