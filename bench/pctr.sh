#!/usr/bin/env bash
# bench/run section: the classic interfaces' reads next to a raw read(2), and
# libhwc's fast read, from one run.  Needs $HWC_BUILD (bench/run sets it).
set -euo pipefail
B=$HWC_BUILD/bench
echo "== pctr(4) / perfmon(4) reads and libhwc's fast read: ns per call (median of"
echo "   101 interleaved rounds) and the median per-round ratio to a raw read(2)"
echo "   (a software event stands in for the counters these machines lack)"
"$B/pctr_read" | tee "$B/pctr_read.out"
"$B/perfmon_read" | grep -v -e 'rdtsc' -e '^raw read' -e '^libhwc' | tee "$B/perfmon_read.out"
ratio() { awk -v k="$1" -F'  +' '$1 == k { sub(/ x.*/, "", $3); print $3 + 0 }' "$B/pctr_read.out"; }
fast=$(ratio 'libhwc fast read, 1 event')
echo
if grep -q '^libhwc fast read, instructions:u.*n/a' "$B/pctr_read.out"; then
	echo "No hardware PMU here: the fast read falls back to read(2)."
fi
awk -v r="$fast" 'BEGIN { printf "libhwc fast read / raw read(2): %.3f   (target: <= 1.05) %s\n", r,
	r <= 1.05 ? "ok" : "OVER TARGET" }'
