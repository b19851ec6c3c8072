#!/usr/bin/env bash
# Workload slowdown while recording: `hwc record -F 4000 -g` against
# `perf record -F 4000 -g`, on the same workload (workloads/hotspots), on
# this machine, runs interleaved so machine load hits all three alike.
# The workload's own wall time is taken inside the recording (bash's `time`
# around the workload, in milliseconds), so the tools' start-up and
# finishing are left out.
# Run by bench/run (`make bench`); alone: HWC_BUILD=build bench/record.sh.
# RECORD_RUNS (default 7) and RECORD_ROUNDS (hotspots rounds, default 40).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${HWC_BUILD:=$PWD/build}"
RUNS=${RECORD_RUNS:-7}
ROUNDS=${RECORD_ROUNDS:-40}
W=$HWC_BUILD/workloads/hotspots
HWC=$HWC_BUILD/bin/hwc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v perf >/dev/null; then
	echo "== recording slowdown: skipped (needs perf; see scripts/deps)"
	exit 0
fi

# Wall seconds of the workload, run by "$@" (a recorder, or nothing).
run() {
	"$@" bash -c 'TIMEFORMAT=%3R; { time "$0" "$1" >/dev/null; } 2>"$2"' "$W" "$ROUNDS" "$tmp/t" \
		>/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
	cat "$tmp/t"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

alone=() hwc=() perf=()
for ((i = 0; i < RUNS; i++)); do
	alone+=("$(run)")
	hwc+=("$(run "$HWC" record -F 4000 -g -o "$tmp/hwc.data" --)")
	perf+=("$(run perf record -q -F 4000 -g -o "$tmp/perf.data" --)")
done
a=$(printf '%s\n' "${alone[@]}" | median)
h=$(printf '%s\n' "${hwc[@]}" | median)
p=$(printf '%s\n' "${perf[@]}" | median)
hs=$(awk -v x="$h" -v a="$a" 'BEGIN { printf "%.3f", x / a }')
ps=$(awk -v x="$p" -v a="$a" 'BEGIN { printf "%.3f", x / a }')

echo "== recording slowdown: hotspots $ROUNDS rounds, $RUNS runs interleaved, median wall seconds"
printf '%-30s %10s %10s\n' "" "wall s" "slowdown"
printf '%-30s %10s %10s\n' "workload alone" "$a" "1.000"
printf '%-30s %10s %10s\n' "under hwc record -F 4000 -g" "$h" "$hs"
printf '%-30s %10s %10s\n' "under perf record -F 4000 -g" "$p" "$ps"
printf 'slowdown ratio hwc/perf: %s   (target: <= 1.00)\n' \
	"$(awk -v x="$hs" -v y="$ps" 'BEGIN { printf "%.3f", x / y }')"
printf 'samples: hwc %s, perf %s (last run)\n' \
	"$(perf report -i "$tmp/hwc.data" --stdio 2>/dev/null | awk '/^# Samples:/ { print $3; exit }')" \
	"$(perf report -i "$tmp/perf.data" --stdio 2>/dev/null | awk '/^# Samples:/ { print $3; exit }')"
