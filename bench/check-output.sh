#!/bin/bash
# Check that a benchmark run produced every figure: each expected
# measurement is in results.tsv with positive numbers, the summary, the
# ratios, the Markdown table and the plot exist.  Never judges a timing.
#
# usage: bench/check-output.sh DIR [PARTS]   (PARTS: kernel,progs,tpm,boot)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../tools/lib.sh
source "$here/../tools/lib.sh"

out=${1:?usage: check-output.sh DIR [PARTS]}
parts=${2:-kernel,progs,tpm,boot}
want() { [[ ,$parts, == *,$1,* ]]; }
problems=()
problem() { problems+=("$*"); }

for f in results.tsv summary.tsv ratios.tsv bench.md machine.txt; do
	[ -s "$out/$f" ] || problem "$f is missing or empty"
done

expected=()
if want kernel; then
	for t in write read randread meta scrub hash; do
		for v in crc32c sha256 hmac; do expected+=("kernel/$t/$v"); done
	done
fi
if want progs; then
	for t in mkfs mkfs-cpu check check-cpu hash; do
		for v in crc32c sha256 hmac; do expected+=("progs/$t/$v"); done
	done
	expected+=(progs/rekey/wall progs/rekey/cpu progs/read/wall progs/cores/n progs/rekey-libgcrypt/wall progs/rekey-libgcrypt/cpu progs/openssl-hmac/cpu progs/openssl-hmac/wall
		progs/openssl-sha256/cpu)
fi
want tpm && expected+=(tpm/load/vm-rm tpm/load/vm-direct tpm/startup/vm-process tpm/load/host)
want boot && expected+=(boot/sysroot/plain boot/sysroot/authenticated boot/key-step/journal
	boot/key-step/process boot/key-share/journal)

# Every measurement line: numeric seconds and amount, the figure positive.
if [ -s "$out/results.tsv" ]; then
	bad=$(awk -F'\t' '!/^#/ && !($5 ~ /^[0-9]+(\.[0-9]+)?$/ && $6 ~ /^[0-9]+(\.[0-9]+)?$/ &&
		($7 == "%" ? $6 > 0 : $5 > 0 || $2 == "key-wait")) { print NR ": " $0 }' "$out/results.tsv" | head -n 3)
	[ -z "$bad" ] || problem "non-numeric or zero measurements in results.tsv: $bad"
fi
for k in "${expected[@]}"; do
	if ! awk -F'\t' -v k="$k" '$1 "/" $2 "/" $3 == k && $6 + 0 > 0 { found = 1 } END { exit !found }' \
		"$out/summary.tsv" 2>/dev/null; then
		problem "no figure for $k in summary.tsv"
	fi
done
# Ratios of the parts that ran, each from at least one round.
prefixes=()
want kernel && prefixes+=(kernel-)
want progs && prefixes+=(progs- rekey-)
want boot && prefixes+=(boot-)
for pre in "${prefixes[@]}"; do
	missing=$(awk -F'\t' -v p="$pre" 'index($1, p) == 1 && ($2 == 0 || $3 == "nan") { print $1 }' \
		"$out/ratios.tsv" 2>/dev/null | paste -sd ' ')
	[ -z "$missing" ] || problem "ratios without data: $missing"
done
if want kernel || want progs; then
	if [ "$(head -c 8 "$out/bench.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
		problem "bench.png is missing or not a PNG"
	fi
fi
if want tpm; then
	for f in vm host; do
		grep -qE '^commands=[1-9][0-9]* ' "$out/raw/tpm/$f-commands.txt" 2>/dev/null ||
			problem "no TPM command count from the $f capture"
	done
fi
if [ -s "$out/bench.md" ] && grep -q 'n/a' "$out/bench.md"; then
	problem "bench.md has figures missing (n/a): $(grep -m 3 'n/a' "$out/bench.md" | cut -c1-120 | paste -sd '|')"
fi

if [ "${#problems[@]}" -gt 0 ]; then
	printf 'bench: %s\n' "${problems[@]}" >&2
	exit 1
fi
echo "bench: every figure is there ($(grep -vc '^#' "$out/results.tsv") measurements) in $out"
