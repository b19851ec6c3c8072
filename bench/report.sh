#!/usr/bin/env bash
# hwc report vs perf report --stdio on the same recording of at least 1M
# samples made by `perf record -g` of the bundled workload: wall time and
# peak RSS over RUNS interleaved rounds (median, min-max, and the spread of
# the per-round ratios), function level without and with the children
# column (against perf's --no-children and its default), then with source
# lines, then on a system-wide recording of many programs.
# Targets: functions <= 0.1x perf --no-children's wall and <= 0.25x its RSS;
# source lines <= 0.1x perf's wall; system-wide <= 0.2x wall and RSS.
# Usage: bench/report.sh [recording] (HWC_BUILD names the build tree; the
# recording is made when not given.)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.bash
rec=${1:-}
if [[ -z $rec ]]; then
	rec=$work/bench.data
	bench_recording "$rec" -g
fi
samples=$("$hwc" report --json --sort symbol "$rec" 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
echo "recording: $rec, $samples samples; $runs rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)"
((samples >= 1000000)) || echo "warning: fewer than 1M samples; the targets are for >= 1M" >&2

keys="--sort comm,dso,symbol"
bench_rounds hwc-no-children "$hwc report --no-children $keys $rec" \
	perf-no-children "perf report -i $rec --stdio --no-children $keys" \
	hwc-children "$hwc report --children $keys $rec" \
	perf-children "perf report -i $rec --stdio --children $keys"
echo "functions, without the children column:"
bench_row hwc-no-children perf-no-children "wall<=0.1 rss<=0.25"
echo "functions, with the children column (both tools' default on call chains):"
bench_row hwc-children perf-children -
echo "hwc report (children) against perf report --no-children:"
bench_row hwc-children perf-no-children -

runs=1 bench_rounds srcline "$hwc report --srcline $keys $rec"
read -r hw _ <"$work/srcline"
# perf resolves source lines through addr2line and can take many minutes:
# past PERF_SRCLINE_LIMIT seconds it is stopped and the ratio is an upper bound.
limit=${PERF_SRCLINE_LIMIT:-300}
start=$(date +%s.%N)
if timeout "$limit" perf report -i "$rec" --stdio --sort comm,dso,symbol,srcline >/dev/null 2>&1; then
	pw=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
	awk -v hw="$hw" -v pw="$pw" 'BEGIN {
		printf "source lines: hwc %.2fs | perf %.2fs | wall %.3fx (target <= 0.1)\n", hw, pw, hw / pw }'
else
	awk -v hw="$hw" -v pw="$limit" 'BEGIN {
		printf "source lines: hwc %.2fs | perf > %.0fs (stopped) | wall < %.4fx (target <= 0.1)\n", hw, pw, hw / pw }'
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
bench_rounds hwc-sys "$hwc report --no-children $keys $sys" \
	perf-sys "perf report -i $sys --stdio --no-children $keys" \
	hwc-sys-children "$hwc report $keys $sys" \
	perf-sys-children "perf report -i $sys --stdio $keys"
echo "system-wide, without the children column:"
bench_row hwc-sys perf-sys "wall<=0.2 rss<=0.2"
echo "system-wide, with it (both tools' default):"
bench_row hwc-sys-children perf-sys-children -
