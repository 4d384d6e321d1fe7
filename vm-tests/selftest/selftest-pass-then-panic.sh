# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Harness self-test: a PASS line alone does not pass.  A guest that prints
# the verdict and then panics (as it could while syncing or unmounting) is
# reported as a panic.
BA_BTRFS_MODULE=stock
BA_TIMEOUT=120

guest() {
	check about-to-lie true
	ba_emit "BA-VERDICT: PASS"
	echo c >/proc/sysrq-trigger
}
