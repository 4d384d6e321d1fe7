# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Harness self-test: a guest kernel panic ends the VM at once (panic=-1 and
# -no-reboot) and is reported as a failure, not a pass and not a timeout.
BA_BTRFS_MODULE=stock
BA_TIMEOUT=120

guest() {
	check about-to-panic true
	echo c >/proc/sysrq-trigger
	check still-alive-after-panic false
}
