# Statistics of the benchmark's raw results (results.tsv, tab separated:
# part, test, variant, round, seconds, amount, unit), for bench/run-bench.sh.
#
#   awk -f summarize.awk results.tsv
#       prints one line per part/test/variant: part test variant unit n
#       median best min max t_min t_median, where the figure is the time
#       for unit "s", the amount for "%", and amount per second otherwise
#       (bytes as MB, 10^6); best is the lowest time or the highest rate
#   awk -v pairs=SPEC -f summarize.awk SPEC results.tsv
#       SPEC is a file of lines "LABEL KEY_A KEY_B" (KEY = part/test/variant):
#       prints "LABEL n paired_median paired_min paired_max ratio_of_medians
#       paired_mean ci95" where paired ratios divide A's figure by B's
#       within the same round, which were measured next to each other, and
#       ci95 is the half width of the paired mean's 95 % confidence interval
#       (normal approximation; nan with fewer than 2 rounds).
BEGIN { FS = OFS = "\t" }

function figure(seconds, amount, unit) {
	if (unit == "s") return seconds
	if (unit == "%") return amount
	if (seconds <= 0) return 0
	if (unit == "MB/s") return amount / 1e6 / seconds
	return amount / seconds
}

function sort_num(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
		a[j + 1] = t
	}
}

function median(a, n) {
	sort_num(a, n)
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# "MEAN<TAB>HALF_WIDTH" of a[1..n]: the mean and its 95 % interval's half width.
function mean_ci95(a, n,    i, sum, ss, mu) {
	for (i = 1; i <= n; i++) sum += a[i]
	mu = sum / n
	if (n < 2) return sprintf("%.4f\tnan", mu)
	for (i = 1; i <= n; i++) ss += (a[i] - mu) ^ 2
	return sprintf("%.4f\t%.4f", mu, 1.96 * sqrt(ss / (n - 1) / n))
}

FNR == NR && pairs != "" && FILENAME == pairs {
	npairs++
	split($0, p, " ")
	plabel[npairs] = p[1]; pa[npairs] = p[2]; pb[npairs] = p[3]
	next
}

NF >= 7 && $1 !~ /^#/ {
	key = $1 "/" $2 "/" $3
	if (!(key in count)) { order[++nkeys] = key; unitof[key] = $7 }
	count[key]++
	fig[key, count[key]] = figure($5, $6, $7)
	secs[key, count[key]] = $5
	byround[key, $4] = figure($5, $6, $7)
	rounds[key] = rounds[key] " " $4
}

END {
	if (pairs == "") {
		for (k = 1; k <= nkeys; k++) {
			key = order[k]; n = count[key]; u = unitof[key]
			for (i = 1; i <= n; i++) { f[i] = fig[key, i]; s[i] = secs[key, i] }
			med = median(f, n)                 # f is sorted now
			lo = f[1]; hi = f[n]
			best = (u == "s" || u == "%") ? lo : hi
			tmed = median(s, n)
			split(key, kp, "/")
			printf "%s\t%s\t%s\t%s\t%d\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\n",
				kp[1], kp[2], kp[3], u, n, med, best, lo, hi, s[1], tmed
		}
		exit
	}
	for (k = 1; k <= npairs; k++) {
		a = pa[k]; b = pb[k]; m = 0
		nr = split(rounds[a], rr, " ")
		for (i = 1; i <= nr; i++)
			if ((b SUBSEP rr[i]) in byround && byround[b, rr[i]] != 0)
				r[++m] = byround[a, rr[i]] / byround[b, rr[i]]
		if (m == 0 || !(a in count) || !(b in count)) {
			printf "%s\t0\tnan\tnan\tnan\tnan\tnan\tnan\n", plabel[k]
			continue
		}
		for (i = 1; i <= count[a]; i++) fa[i] = fig[a, i]
		for (i = 1; i <= count[b]; i++) fb[i] = fig[b, i]
		ma = median(fa, count[a]); mb = median(fb, count[b])
		pm = median(r, m)                  # r is sorted now
		printf "%s\t%d\t%.4f\t%.4f\t%.4f\t%.4f\t%s\n", plabel[k], m, pm, r[1], r[m],
			mb != 0 ? ma / mb : 0, mean_ci95(r, m)
		delete r
	}
}
