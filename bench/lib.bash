# Shared by the bench/*.sh sections that compare hwc with perf on a
# recording (sourced, not run: bench/run runs *.sh).  Sets hwc, runs (RUNS,
# default 5) and work (a scratch directory removed at exit); defines
# bench_recording, bench_rounds and bench_row.

: "${HWC_BUILD:=$PWD/build}"
hwc=$HWC_BUILD/bin/hwc
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# bench_recording FILE [perf record option...]: the bundled workload, two
# copies on the two CPUs, 50 us of CPU per sample: about 1.1M samples.
bench_recording() {
	local out=$1 w=$HWC_BUILD/workloads/hotspots
	shift
	perf record -q -e cpu-clock -c 50000 "$@" -o "$out" -- sh -c "$w 450 & $w 450; wait" >/dev/null
}

# bench_rounds NAME 'COMMAND' [NAME 'COMMAND']...: RUNS rounds, each running
# every command once in turn (peers interleaved, so that the load of a
# shared machine falls on all of them); round i's "wall_s rss_kib" is line
# i of $work/NAME.
bench_rounds() {
	local i k
	for ((k = 1; k <= $#; k += 2)); do
		: >"$work/${!k}"
	done
	for ((i = 0; i < runs; i++)); do
		for ((k = 1; k <= $#; k += 2)); do
			local name=${!k} j=$((k + 1))
			# shellcheck disable=SC2086 # the command's words
			/usr/bin/time -f "%e %M" -o "$work/time" ${!j} >/dev/null 2>"$work/err" || {
				echo "${!j} failed:" >&2
				cat "$work/err" >&2
				exit 1
			}
			cat "$work/time" >>"$work/$name"
		done
	done
}

# bench_row NAME PEER TARGET: NAME's and PEER's median wall (min-max) and
# RSS, and their ratios: of the medians, and the spread of the rounds'
# own ratios.  TARGET: "wall<=X rss<=Y" or "-".
bench_row() {
	paste "$work/$1" "$work/$2" | awk -v n="$1" -v p="$2" -v t="$3" '
		function med(a, k,   i, j, x) { # sorts a[1..k]
			for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				x = a[j]; a[j] = a[j - 1]; a[j - 1] = x }
			return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
		{ hw[NR] = $1; hr[NR] = $2; pw[NR] = $3; pr[NR] = $4; rw[NR] = $1 / $3; rr[NR] = $2 / $4 }
		END {
			k = NR; mhw = med(hw, k); mhr = med(hr, k); mpw = med(pw, k); mpr = med(pr, k)
			mrw = med(rw, k); mrr = med(rr, k)
			printf "  %-34s %6.2fs (%.2f-%.2f) %7d KiB\n", n, mhw, hw[1], hw[k], mhr
			printf "  %-34s %6.2fs (%.2f-%.2f) %7d KiB\n", p, mpw, pw[1], pw[k], mpr
			printf "  ratio: wall %.3fx (rounds %.3f-%.3f), rss %.3fx (rounds %.3f-%.3f)%s\n",
				mhw / mpw, rw[1], rw[k], mhr / mpr, rr[1], rr[k], t == "-" ? "" : "  target " t }'
}
