#!/bin/bash
# Runs a fuzzer (key file, PCR signature file) for a bounded time from the committed seeds.
#   fuzz.sh FUZZER SEED_DIR SECONDS ARTIFACT_DIR
# Fails on a crash, a sanitizer report, or a fuzzer that did not run.
set -euo pipefail
fuzzer=$1 seeds=$2 secs=$3 artifacts=$4

work=$(mktemp -d "${TMPDIR:-/tmp}/ba-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$artifacts"
[ -n "$(ls -A "$seeds")" ] || { echo "no seeds in $seeds" >&2; exit 1; }

rc=0
"$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$work/corpus" "$seeds" >"$work/log" 2>&1 || rc=$?
tail -n 25 "$work/log"
if [ "$rc" != 0 ] || grep -q "ERROR: \(AddressSanitizer\|LeakSanitizer\|libFuzzer\)\|runtime error:" "$work/log"; then
	echo "fuzzer failed (exit $rc); crashing inputs are in $artifacts" >&2
	exit 1
fi
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$work/log")
if [ -z "$runs" ] || [ "$runs" -eq 0 ]; then
	echo "the fuzzer did not run" >&2
	exit 1
fi
echo "fuzz: $runs runs in $secs s, corpus grew to $(find "$work/corpus" -type f | wc -l) inputs, no crash"
