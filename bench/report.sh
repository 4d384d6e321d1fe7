#!/bin/bash
# Turn a benchmark run's results.tsv into summary.tsv, ratios.tsv, the
# Markdown table bench.md and the plot bench.png (bench/run-bench.sh runs
# this; it can be run again on an output directory by hand).
#
# usage: bench/report.sh --out DIR [--parts LIST] [--reps N] [--boots N]
#                        [--command TEXT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../tools/lib.sh
source "$here/../tools/lib.sh"

out='' parts=kernel,progs,tpm,boot reps='?' boots='?' command='bench/run-bench.sh --out DIR'
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=${2:?}; shift 2 ;;
	--parts) parts=${2:?}; shift 2 ;;
	--reps) reps=${2:?}; shift 2 ;;
	--boots) boots=${2:?}; shift 2 ;;
	--command) command=${2:?}; shift 2 ;;
	*) ba_die "usage: report.sh --out DIR [--parts LIST] [--reps N] [--boots N] [--command TEXT]" ;;
	esac
done
[ -f "$out/results.tsv" ] || ba_die "no $out/results.tsv"
want() { [[ ,$parts, == *,$1,* ]]; }

kernel_tests=(write read randread meta scrub hash)
declare -A kernel_name=(
	[write]='sequential write + fsync'
	[read]='sequential read, caches dropped'
	[randread]='random 4 KiB reads, caches dropped'
	[meta]='create / stat / unlink (empty files)'
	[scrub]='scrub (data + both metadata copies)'
	[hash]='the checksum driver alone, 4 KiB blocks (AF_ALG)'
)

# --- statistics -------------------------------------------------------------

awk -f "$here/summarize.awk" "$out/results.tsv" >"$out/summary.tsv"
spec=$out/raw/ratio-pairs.txt
{
	for t in "${kernel_tests[@]}"; do
		echo "kernel-$t-sha256 kernel/$t/hmac kernel/$t/sha256"
		echo "kernel-$t-crc32c kernel/$t/hmac kernel/$t/crc32c"
	done
	for t in mkfs mkfs-cpu check check-cpu hash; do
		echo "progs-$t-sha256 progs/$t/hmac progs/$t/sha256"
		echo "progs-$t-crc32c progs/$t/hmac progs/$t/crc32c"
	done
	echo "rekey-cpu progs/rekey/cpu progs/openssl-hmac/cpu"
	echo "rekey-wall progs/rekey/wall progs/openssl-hmac/wall"
	echo "rekey-libgcrypt-cpu progs/rekey-libgcrypt/cpu progs/openssl-hmac/cpu"
	echo "rekey-libgcrypt-wall progs/rekey-libgcrypt/wall progs/openssl-hmac/wall"
	echo "boot-sysroot boot/sysroot/authenticated boot/sysroot/plain"
} >"$spec"
awk -v pairs="$spec" -f "$here/summarize.awk" "$spec" "$out/results.tsv" >"$out/ratios.tsv"

declare -A S_unit S_n S_med S_min S_max S_tmin S_tmed R_n R_pm R_lo R_hi R_mean R_ci
while IFS=$'\t' read -r p t v u n med _ lo hi tmin tmed; do
	k=$p/$t/$v
	S_unit[$k]=$u S_n[$k]=$n S_med[$k]=$med S_min[$k]=$lo S_max[$k]=$hi
	S_tmin[$k]=$tmin S_tmed[$k]=$tmed
done <"$out/summary.tsv"
while IFS=$'\t' read -r l n pm lo hi _ mean ci; do
	R_n[$l]=$n R_pm[$l]=$pm R_lo[$l]=$lo R_hi[$l]=$hi R_mean[$l]=$mean R_ci[$l]=$ci
done <"$out/ratios.tsv"

# Number formatting: 3 significant digits, no exponent for usual values.
num() { awk -v x="$1" 'BEGIN { if (x == "" || x == "nan") print "n/a"; else if (x >= 100) printf "%.0f", x; else if (x >= 10) printf "%.1f", x; else if (x >= 1) printf "%.2f", x; else printf "%.3f", x }'; }
have() { [ -n "${S_n[$1]:-}" ]; }
has_ratio() { [ "${R_n[$1]:-0}" != 0 ]; }
cell_rate() { # throughput: median (min / median seconds)
	have "$1" || { echo 'n/a'; return; }
	echo "$(num "${S_med[$1]}") ($(num "${S_tmin[$1]}") / $(num "${S_tmed[$1]}") s)"
}
cell_time() { # time: min / median seconds
	have "$1" || { echo 'n/a'; return; }
	echo "$(num "${S_min[$1]}") / $(num "${S_med[$1]}")"
}
cell_ratio() { # paired median (range over rounds)
	has_ratio "$1" || { echo 'n/a'; return; }
	if [ "${R_n[$1]}" = 1 ]; then
		printf '%s\n' "$(awk -v x="${R_pm[$1]}" 'BEGIN { printf "%.3f", x }')"
	else
		awk -v m="${R_pm[$1]}" -v a="${R_lo[$1]}" -v b="${R_hi[$1]}" 'BEGIN { printf "%.3f (%.2f–%.2f)\n", m, a, b }'
	fi
}
# goal_mean LABEL LIMIT: the verdict on a paired mean at most LIMIT, with
# the mean and its 95 % interval (the figures whose goal is within a run's noise)
goal_mean() {
	has_ratio "$1" || { echo 'n/a'; return; }
	local v
	v=$(verdict "${R_mean[$1]}" '<=' "$2")
	awk -v v="$v" -v l="$2" -v m="${R_mean[$1]}" -v c="${R_ci[$1]}" -v n="${R_n[$1]}" 'BEGIN {
		if (c == "nan") printf "≤ %s: %s (mean %.3f, 1 round)\n", l, v, m
		else printf "≤ %s: %s (mean of %d rounds %.3f ± %.3f, 95 %%)\n", l, v, n, m, c }'
}
# verdict VALUE OP LIMIT: "met" or "**missed**"
verdict() {
	case $1 in '' | nan | n/a) echo 'n/a'; return ;; esac
	if awk -v x="$1" -v l="$3" -v op="$2" 'BEGIN { exit !(op == ">=" ? x >= l : x <= l) }'; then
		echo met
	else
		echo '**missed**'
	fi
}
spread() { # max/min of a figure over the rounds, as "±N %" of the median
	have "$1" || { echo 'n/a'; return; }
	awk -v lo="${S_min[$1]}" -v hi="${S_max[$1]}" -v m="${S_med[$1]}" 'BEGIN { if (m > 0) printf "%.0f %%", (hi - lo) * 100 / m; else print "n/a" }'
}

# The rekey goal: as fast as the slower of reading the device and hashing
# twice per block on every core, at one core the speed of openssl's HMAC.
# cores × one core's openssl HMAC ÷ 2: hashing twice per block on every core.
rekey_hash_bound() {
	awk -v c="${S_med[progs/cores/n]:-nan}" -v o="${S_med[progs/openssl-hmac/wall]:-nan}" \
		'BEGIN { if (c == "nan" || o == "nan") print "nan"; else printf "%.0f", c * o / 2 }'
}
rekey_bound() {
	awk -v r="${S_med[progs/read/wall]:-nan}" -v h="$(rekey_hash_bound)" \
		'BEGIN { if (r == "nan" || h == "nan") print "nan"; else print (r < h ? r : h) }'
}
rekey_bound_text() {
	echo "min(read $(num "${S_med[progs/read/wall]:-}"), $(awk -v c="${S_med[progs/cores/n]:-0}" 'BEGIN { printf "%d", c }') cores × openssl ÷ 2 = $(rekey_hash_bound))"
}
rekey_goal_ratio() {
	awk -v k="${S_med[progs/rekey/wall]:-nan}" -v b="$(rekey_bound)" \
		'BEGIN { if (k == "nan" || b == "nan" || b <= 0) print "nan"; else printf "%.3f", k / b }'
}

# --- Markdown -------------------------------------------------------------------

md=$out/bench.md
{
	echo "# btrfs-auth benchmark results"
	echo
	echo "Command: \`$command\` ($reps round(s) of the kernel and userspace measurements, $boots boot(s) of each root)."
	echo
	echo '```'
	cat "$out/machine.txt" 2>/dev/null || true
	echo '```'
	echo
	echo "Ratios are taken within one run, per round (the measurements of one round"
	echo "ran next to each other), then the median over the rounds; the range over"
	echo "the rounds follows in parentheses."

	if want kernel; then
		echo
		echo "## Kernel I/O (one VM, TCG, 1 vCPU, three identical virtio disks)"
		echo
		echo "${S_n[kernel/write/sha256]:-?} rounds, in $(find "$out/raw/kernel" -maxdepth 1 -name "order-*" 2>/dev/null | wc -l) VM(s) with the disks in rotated order (each file system on vda, vdb and vdc in turn).  Each round measures the three file systems interleaved in small steps (scrub: one after the other), the order rotating from round to round."
		echo "Each cell: median throughput, then (minimum / median time, s).  Ratios: hmac-sha256 throughput over the other's; 1.0 = as fast."
		echo
		echo "| measurement | unit | crc32c | sha256 | hmac-sha256 | hmac/sha256 | hmac/crc32c | spread of sha256 over rounds | goal hmac/sha256 ≥ 0.95 |"
		echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
		for t in "${kernel_tests[@]}"; do
			echo "| ${kernel_name[$t]} | ${S_unit[kernel/$t/sha256]:-?} | $(cell_rate "kernel/$t/crc32c") | $(cell_rate "kernel/$t/sha256") | $(cell_rate "kernel/$t/hmac") | $(cell_ratio "kernel-$t-sha256") | $(cell_ratio "kernel-$t-crc32c") | $(spread "kernel/$t/sha256") | $(verdict "${R_pm[kernel-$t-sha256]:-}" '>=' 0.95) |"
		done
	fi

	if want progs; then
		echo
		echo "## Userspace (patched btrfs-progs on the host, images on $(cut -d' ' -f2- "$out/raw/progs-workdir.txt" 2>/dev/null || echo '?'))"
		echo
		echo "Data: $(awk '{ printf "%.0f MB", $1 / 1e6 }' "$out/raw/progs-data-bytes.txt" 2>/dev/null || echo '?') in 8 large and many small files.  Cells: minimum / median seconds.  Ratios: hmac-sha256's time over the other's (lower is better)."
		echo
		echo "| measurement | crc32c | sha256 | hmac-sha256 | hmac/sha256 | hmac/crc32c | goal |"
		echo "| --- | --- | --- | --- | --- | --- | --- |"
		echo "| \`btrfs check --check-data-csum\`, wall s | $(cell_time progs/check/crc32c) | $(cell_time progs/check/sha256) | $(cell_time progs/check/hmac) | $(cell_ratio progs-check-sha256) | $(cell_ratio progs-check-crc32c) | $(goal_mean progs-check-sha256 1.02) |"
		echo "| \`btrfs check --check-data-csum\`, CPU s | $(cell_time progs/check-cpu/crc32c) | $(cell_time progs/check-cpu/sha256) | $(cell_time progs/check-cpu/hmac) | $(cell_ratio progs-check-cpu-sha256) | $(cell_ratio progs-check-cpu-crc32c) | $(goal_mean progs-check-cpu-sha256 1.02) |"
		echo "| the checksum alone (\`hash-speedtest --time\`, $(awk '{ print $1 }' "$out/raw/hash-blocks.txt" 2>/dev/null || echo '?') blocks of 4 KiB), s | $(cell_time progs/hash/crc32c) | $(cell_time progs/hash/sha256) | $(cell_time progs/hash/hmac) | $(cell_ratio progs-hash-sha256) | $(cell_ratio progs-hash-crc32c) | |"
		echo "| \`mkfs.btrfs --rootdir\`, wall s | $(cell_time progs/mkfs/crc32c) | $(cell_time progs/mkfs/sha256) | $(cell_time progs/mkfs/hmac) | $(cell_ratio progs-mkfs-sha256) | $(cell_ratio progs-mkfs-crc32c) | |"
		echo "| \`mkfs.btrfs --rootdir\`, CPU s | $(cell_time progs/mkfs-cpu/crc32c) | $(cell_time progs/mkfs-cpu/sha256) | $(cell_time progs/mkfs-cpu/hmac) | $(cell_ratio progs-mkfs-cpu-sha256) | $(cell_ratio progs-mkfs-cpu-crc32c) | |"
		echo
		echo "Rekey (\`btrfstune --auth-key-file OLD --new-auth-key-file NEW\`) against \`openssl speed -hmac sha256 -bytes 4096\` (HMAC-SHA256 of 4 KiB messages, what rekey computes per data block), alternating:"
		echo
		echo "| figure (MB/s, median) | CPU time basis | wall-clock basis |"
		echo "| --- | --- | --- |"
		echo "| rekey (default build: btrfs-progs' own SHA-256), data bytes per second | $(num "${S_med[progs/rekey/cpu]:-}") | $(num "${S_med[progs/rekey/wall]:-}") |"
		echo "| openssl speed -hmac sha256, 4 KiB, 1 process | $(num "${S_med[progs/openssl-hmac/cpu]:-}") | $(num "${S_med[progs/openssl-hmac/wall]:-}") |"
		echo "| rekey / openssl, one core | $(cell_ratio rekey-cpu) | $(cell_ratio rekey-wall) |"
		echo "| rekey / $(rekey_bound_text) (goal ≥ 0.8) | | $(num "$(rekey_goal_ratio)"): $(verdict "$(rekey_goal_ratio)" '>=' 0.8) |"
		echo "| rekey's HMAC work (2 per data block) / openssl | $(awk -v x="${R_pm[rekey-cpu]:-nan}" 'BEGIN { if (x == "nan") print "n/a"; else printf "%.3f", 2 * x }') | $(awk -v x="${R_pm[rekey-wall]:-nan}" 'BEGIN { if (x == "nan") print "n/a"; else printf "%.3f", 2 * x }') |"
		echo "| rekey with btrfs-progs built \`--crypto libgcrypt\`, data bytes per second | $(num "${S_med[progs/rekey-libgcrypt/cpu]:-}") | $(num "${S_med[progs/rekey-libgcrypt/wall]:-}") |"
		echo "| rekey (libgcrypt) / openssl, one core | $(cell_ratio rekey-libgcrypt-cpu) | $(cell_ratio rekey-libgcrypt-wall) |"
		k=progs/openssl-sha256/cpu
		! have "$k" || echo "| openssl speed -evp sha256, 4 KiB, 1 process (for comparison) | $(num "${S_med[$k]}") | |"
		for k in "${!S_n[@]}"; do
			[[ $k == progs/openssl-hmac/wall-* ]] || continue
			echo "| openssl speed -hmac sha256 -multi ${k##*wall-} (all cores) | | $(num "${S_med[$k]}") |"
		done
	fi

	if want tpm || want boot; then
		echo
		echo "## Boot: the key step and the TPM"
		echo
		echo "| figure | min | median | n | goal |"
		echo "| --- | --- | --- | --- | --- |"
		row() { # LABEL KEY [GOAL]
			have "$2" || return 0
			echo "| $1 | $(num "${S_min[$2]}") | $(num "${S_med[$2]}") | ${S_n[$2]} | ${3:-} |"
		}
		row 'plain sha256 root, no TPM: kernel start → sysroot.mount, s' boot/sysroot/plain
		row 'authenticated root: kernel start → sysroot.mount, s' boot/sysroot/authenticated
		if has_ratio boot-sysroot; then
			echo "| authenticated / plain, sysroot.mount time | | $(cell_ratio boot-sysroot) | ${R_n[boot-sysroot]} | |"
		fi
		row 'plain: root device found, s' boot/root-device/plain
		row 'authenticated: root device found, s' boot/root-device/authenticated
		row 'key step, journal: btrfs-auth-load@root.service start → finished, s' boot/key-step/journal
		row 'key step, its process (systemd ExecMainStart → ExecMainExit), s' boot/key-step/process
		row 'sysroot.mount waited for the key after the root device appeared, s' boot/key-wait/journal
		row 'key step / sysroot.mount time of the same boot, %' boot/key-share/journal \
			"≤ 2 %: $(verdict "${S_med[boot/key-share/journal]:-}" '<=' 2)"
		row 'btrfs-auth load in an idle VM via /dev/tpmrm0, s' tpm/load/vm-rm
		row 'btrfs-auth load in an idle VM via /dev/tpm0 (no resource manager), s' tpm/load/vm-direct
		row 'btrfs-auth --version in the VM (process start alone), s' tpm/startup/vm-process
		row 'btrfs-auth load on the host, swtpm over TCP (no TCG), s' tpm/load/host
		if [ -s "$out/raw/boot-root-checksum.txt" ]; then
			echo "| the root's checksum driver in the booted system | | $(awk '{ print $1 ": " $3 }' "$out/raw/boot-root-checksum.txt" | sort -u | tr '_' ' ' | paste -sd ';' | sed 's/;/; /g') | | |"
		fi
		for f in vm host; do
			c=$out/raw/tpm/$f-commands.txt
			[ -f "$c" ] || continue
			total=$(sed -n 's/^commands=\([0-9]*\).*/\1/p' "$c")
			rsa=$(sed -n 's/.*rsa_primary=\([01]\).*/\1/p' "$c")
			echo "| TPM commands of one load ($f capture) | | $total | 1 | ≤ 6: $(verdict "$total" '<=' 6); RSA key generation: $([ "$rsa" = 0 ] && echo none || echo '**yes**') |"
		done
		c=$out/raw/tpm/vm-commands.txt
		if [ -f "$c" ]; then
			echo
			echo "The commands of one load, captured in the VM with \`--tcti=pcap:device:/dev/tpmrm0\`"
			echo "(TPM ms: command to response through the kernel's resource manager and TPM"
			echo "driver to swtpm; client ms: the tool's own work before the command, under TCG):"
			echo
			echo "| # | command code | command | response | TPM ms | client ms |"
			echo "| --- | --- | --- | --- | --- | --- |"
			awk '$1 ~ /^[0-9]+$/ { printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$c"
			sed -n 's/^commands=\([0-9]*\) span_ms=\([0-9.]*\) tpm_ms=\([0-9.]*\) client_ms=\([0-9.]*\).*/\nFirst command to last response: \2 ms, of which TPM \3 ms and client \4 ms./p' "$c"
			c=$out/raw/tpm/host-commands.txt
			[ ! -f "$c" ] || sed -n 's/^commands=\([0-9]*\) span_ms=\([0-9.]*\) tpm_ms=\([0-9.]*\) client_ms=\([0-9.]*\).*/On the host (swtpm over TCP, no TCG): \1 commands, \2 ms, of which TPM \3 ms and client \4 ms./p' "$c"
		fi
	fi
	echo
	echo "Raw data: \`results.tsv\` (every measurement), \`summary.tsv\`, \`ratios.tsv\`, \`raw/\`, \`logs/\`."
} >"$md"

# --- the plot ------------------------------------------------------------------

dat=$out/raw/plot.dat
{
	echo "# label  hmac/sha256 low high  hmac/crc32c low high  (relative speed: >1 hmac faster)"
	for t in "${kernel_tests[@]}"; do
		has_ratio "kernel-$t-sha256" || continue
		printf '"%s" %s %s %s %s %s %s\n' "kernel $t" \
			"${R_pm[kernel-$t-sha256]}" "${R_lo[kernel-$t-sha256]}" "${R_hi[kernel-$t-sha256]}" \
			"${R_pm[kernel-$t-crc32c]}" "${R_lo[kernel-$t-crc32c]}" "${R_hi[kernel-$t-crc32c]}"
	done
	# Userspace times as speeds: the inverse ratio, its range swapped.
	for t in check-cpu mkfs-cpu; do
		has_ratio "progs-$t-sha256" || continue
		awk -v l="progs ${t%-cpu} (CPU)" -v a="${R_pm[progs-$t-sha256]}" -v al="${R_lo[progs-$t-sha256]}" \
			-v ah="${R_hi[progs-$t-sha256]}" -v b="${R_pm[progs-$t-crc32c]}" -v bl="${R_lo[progs-$t-crc32c]}" \
			-v bh="${R_hi[progs-$t-crc32c]}" \
			'BEGIN { printf "\"%s\" %.4f %.4f %.4f %.4f %.4f %.4f\n", l, 1/a, 1/ah, 1/al, 1/b, 1/bh, 1/bl }'
	done
} >"$dat"
if [ "$(grep -vc '^#' "$dat")" -gt 0 ]; then
	term='pngcairo size 1100,600 noenhanced font ",10"'
	gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 || term='png size 1100,600 noenhanced'
	gnuplot >"$out/logs/gnuplot.log" 2>&1 <<EOF || ba_die "gnuplot failed: $(tail -n 3 "$out/logs/gnuplot.log")"
set terminal $term
set output '$out/bench.png'
set title "btrfs-auth: hmac-sha256 speed relative to unkeyed checksums (median over rounds, bars: range)"
set ylabel "relative speed (1.0 = as fast)"
set yrange [0:*]
set grid ytics
set key outside bottom center horizontal
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.7 border -1
set xtics rotate by -20
set arrow 1 from graph 0, first 0.95 to graph 1, first 0.95 nohead dashtype 2 linecolor rgb "red" linewidth 2
set label 1 "goal vs sha256: 0.95" at graph 0.99, first 0.985 right textcolor rgb "red"
plot '$dat' using 2:3:4:xtic(1) title "hmac-sha256 / sha256" linecolor rgb "#4477aa", \
     '' using 5:6:7 title "hmac-sha256 / crc32c" linecolor rgb "#cc6677"
EOF
else
	ba_log "no ratio to plot"
fi
