#!/usr/bin/env bash
# hwc annotate --stdio vs perf annotate --stdio on the hottest function
# (f2) of a recording of at least 1M samples of the bundled workload (made
# by perf record, without call graphs): wall time and peak RSS, each the
# median of RUNS runs (default 3) with the spread (min-max), the two tools
# interleaved.  Target: wall <= 0.2x perf's.  Usage: bench/annotate.sh
# [recording] (HWC_BUILD names the build tree; the recording is made when
# not given.)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${HWC_BUILD:=$PWD/build}"
hwc=$HWC_BUILD/bin/hwc
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rec=${1:-}
if [[ -z $rec ]]; then
	rec=$work/bench.data
	# 50 us of CPU per sample, two copies of the workload on the two CPUs:
	# about 1.1M samples.
	w=$HWC_BUILD/workloads/hotspots
	perf record -q -e cpu-clock -c 50000 -o "$rec" -- sh -c "$w 450 & $w 450; wait" >/dev/null
fi
echo "== hwc annotate vs perf annotate --stdio f2 on $rec, $runs runs each"

measure() { # command... -> "wall_s rss_kib"
	/usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
		echo "$* failed:" >&2
		cat "$work/err" >&2
		exit 1
	}
	cat "$work/time"
}

: >"$work/hwc"
: >"$work/perf"
for ((i = 0; i < runs; i++)); do
	measure "$hwc" annotate --stdio -i "$rec" f2 >>"$work/hwc"
	measure perf annotate --stdio -i "$rec" f2 >>"$work/perf"
done
# median and spread of a column of a file
stats() { sort -g -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
	printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
read -r hw hwmin hwmax < <(stats "$work/hwc" 1)
read -r hr _ _ < <(stats "$work/hwc" 2)
read -r pw pwmin pwmax < <(stats "$work/perf" 1)
read -r pr _ _ < <(stats "$work/perf" 2)
awk -v hw="$hw" -v hr="$hr" -v pw="$pw" -v pr="$pr" -v a="$hwmin" -v b="$hwmax" -v c="$pwmin" -v d="$pwmax" 'BEGIN {
	printf "hwc annotate  %6.2fs (%.2f-%.2f) %8d KiB\n", hw, a, b, hr
	printf "perf annotate %6.2fs (%.2f-%.2f) %8d KiB\n", pw, c, d, pr
	printf "ratio hwc/perf: wall %.3fx (target <= 0.2), rss %.3fx\n", hw / pw, hr / pr }'
