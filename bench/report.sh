#!/usr/bin/env bash
# hwc report vs perf report --stdio on the same recording of at least 1M
# samples made by `perf record -g` of the bundled workload: wall time and
# peak RSS, function level and with source lines, side by side in one run.
# Targets: function level <= 0.33x perf's wall and <= 0.5x its RSS; with
# source lines <= 0.1x perf's wall.  Then the same on a system-wide
# recording of many programs.  Usage: bench/report.sh [recording]
# (HWC_BUILD names the build tree; the recording is made when not given.)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${HWC_BUILD:=$PWD/build}"
hwc=$HWC_BUILD/bin/hwc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rec=${1:-}
if [[ -z $rec ]]; then
	rec=$work/bench.data
	# 50 us of CPU per sample, two copies of the workload on the two CPUs:
	# about 1.1M samples in 90 MB.
	w=$HWC_BUILD/workloads/hotspots
	perf record -q -e cpu-clock -c 50000 -g -o "$rec" -- sh -c "$w 450 & $w 450; wait" >/dev/null
fi
samples=$("$hwc" report --json --sort symbol "$rec" 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
echo "recording: $rec, $samples samples"
((samples >= 1000000)) || echo "warning: fewer than 1M samples; the targets are for >= 1M" >&2

measure() { # label command... -> prints "wall_s rss_kib"
	local t=$work/time
	/usr/bin/time -f "%e %M" -o "$t" "$@" >/dev/null 2>"$work/err" || {
		echo "$1 failed:" >&2
		cat "$work/err" >&2
		exit 1
	}
	cat "$t"
}

row() { # name hwc-wall hwc-rss perf-wall perf-rss wall-target rss-target
	awk -v n="$1" -v hw="$2" -v hr="$3" -v pw="$4" -v pr="$5" -v wt="$6" -v rt="$7" 'BEGIN {
		wr = hw / pw; rr = hr / pr;
		printf "%-14s hwc %7.2fs %8d KiB | perf %8.2fs %8d KiB | wall %.3fx (target <= %s) rss %.3fx%s\n",
			n, hw, hr, pw, pr, wr, wt, rr, rt == "-" ? "" : " (target <= " rt ")" }'
}

read -r hw hr < <(measure "$hwc" report --sort comm,dso,symbol "$rec")
read -r pw pr < <(measure perf report -i "$rec" --stdio --sort comm,dso,symbol)
row function "$hw" "$hr" "$pw" "$pr" 0.33 0.5
read -r hw hr < <(measure "$hwc" report --srcline --sort comm,dso,symbol "$rec")
# perf resolves source lines through addr2line and can take many minutes:
# past PERF_SRCLINE_LIMIT seconds it is stopped and the ratio is an upper bound.
limit=${PERF_SRCLINE_LIMIT:-300}
start=$(date +%s.%N)
if timeout "$limit" perf report -i "$rec" --stdio --sort comm,dso,symbol,srcline >/dev/null 2>&1; then
	pw=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
	awk -v n="source lines" -v hw="$hw" -v pw="$pw" 'BEGIN {
		printf "%-14s hwc %7.2fs | perf %8.2fs | wall %.3fx (target <= 0.1)\n", n, hw, pw, hw / pw }'
else
	awk -v n="source lines" -v hw="$hw" -v pw="$limit" 'BEGIN {
		printf "%-14s hwc %7.2fs | perf > %6.0fs (stopped) | wall < %.4fx (target <= 0.1)\n", n, hw, pw, hw / pw }'
fi

# A system-wide recording: many programs and libraries, tens of thousands
# of symbols (python3, the shell tools, libc), the case that a per-address
# scan of the symbol table made slow.
sys=$work/system.data
perf record -q -a -g -F 4000 -o "$sys" -- sh -c 'for i in 1 2 3 4 5 6; do
	ls -lR /usr/lib >/dev/null 2>&1; python3 -c "import json, email, http.client; sum(range(4000000))"
done' >/dev/null 2>&1
echo "system-wide recording: $("$hwc" report --json "$sys" 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])') samples"
read -r hw hr < <(measure "$hwc" report --sort comm,dso,symbol "$sys")
read -r pw pr < <(measure perf report -i "$sys" --stdio --sort comm,dso,symbol)
row system-wide "$hw" "$hr" "$pw" "$pr" 0.33 0.5
