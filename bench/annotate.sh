#!/usr/bin/env bash
# hwc annotate --stdio vs perf annotate --stdio on the hottest function
# (f2) of a recording of at least 1M samples of the bundled workload (made
# by perf record, without call graphs): wall time and peak RSS over RUNS
# interleaved rounds (median, min-max, spread of the per-round ratios).
# Target: wall <= 0.2x perf's.  Usage: bench/annotate.sh [recording]
# (HWC_BUILD names the build tree; the recording is made when not given.)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.bash
rec=${1:-}
if [[ -z $rec ]]; then
	rec=$work/bench.data
	bench_recording "$rec"
fi
echo "== hwc annotate vs perf annotate --stdio f2 on $rec, $runs rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
bench_rounds hwc-annotate "$hwc annotate --stdio -i $rec f2" \
	perf-annotate "perf annotate --stdio -i $rec f2"
bench_row hwc-annotate perf-annotate "wall<=0.2"
