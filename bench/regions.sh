# Code regions: a begin+end pair of hwc_region_* vs PAPI_hl_region_* vs two
# raw read(2) calls, same events (bench/regions.c); the emulated arm64
# machine's run, with user-space reads, is bench/regions-vm.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "== code regions: ns per begin+end pair (median of rounds, methods interleaved)"
"$HWC_BUILD/bench/regions" "$dir" | tee "$dir/out"
get() { awk -v k="$1" -F'  +' '$1 == k { print $2 + 0 }' "$dir/out"; }
awk -v a="$(get 'hwc pair')" -v b="$(get 'PAPI_hl pair')" \
	-v c="$(get 'raw 2 read(2), group')" 'BEGIN {
	printf "hwc / PAPI_hl: %.2f (target: <= 0.50); hwc / raw read(2): %.2f\n", a / b, a / c }'
# What each counted, so that the timing is of real work: hwc's calls of
# region "r", PAPI's records of it (PAPI_hl keeps one per call here).
printf 'counted: hwc %s calls, PAPI %s records\n' \
	"$(grep -o '"calls": [0-9]*' "$dir/regions.json" | head -1 | grep -o '[0-9]*$')" \
	"$(cat "$dir"/papi_hl_output/*.json | grep -c '"name":"r"' || true)"
echo "(without a PMU the events are software ones: each edge is one read(2) for all" \
	"three, so two raw read(2) calls are the floor; PAPI_hl also calls gettid(2) and" \
	"clock_gettime(2) at each edge, as its system calls per pair show)"
