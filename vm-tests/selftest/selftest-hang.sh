# shellcheck shell=bash disable=SC2034 # BA_* settings are read by run-scenario.sh
# Harness self-test: a guest that never gives a verdict is killed when the
# timeout runs out and reported as hung.
BA_BTRFS_MODULE=stock
BA_TIMEOUT=30

guest() {
	check about-to-hang true
	while :; do sleep 1; done
}
