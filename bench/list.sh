#!/usr/bin/env bash
# hwc list and hwc info against their peers: perf list, PAPI's
# papi_native_avail and papi_avail.  Wall time and peak RSS, medians of
# rounds that alternate the tools (the machine's load varies).  Run by
# bench/run; HWC_BUILD is set there.
set -euo pipefail
: "${HWC_BUILD:=$PWD/build}"
B=$HWC_BUILD/bench
HWC=$HWC_BUILD/bin/hwc
ROUNDS=${ROUNDS:-5} PER=${PER:-5}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure NAME command...: one spawn_time round, appended to $tmp/NAME
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
measure() {
	local name=$1; shift
	"$B/spawn_time" "$PER" "$@" >>"$tmp/$name"
}
pairs=(
	"hwc_list|$HWC list"
	"perf_list|perf list"
	"papi_native|papi_native_avail"
	"hwc_one|$HWC list task-clock"
	"perf_sw|perf list sw"
	"hwc_info|$HWC info"
	"papi_avail|papi_avail"
)
for ((r = 0; r < ROUNDS; r++)); do
	for p in "${pairs[@]}"; do
		# shellcheck disable=SC2086
		measure "${p%%|*}" ${p#*|}
	done
done
ms() { cut -d' ' -f1 "$tmp/$1" | median; }
kb() { cut -d' ' -f2 "$tmp/$1" | median; }

echo "== hwc list / hwc info vs perf and PAPI: medians of $ROUNDS rounds of $PER runs"
printf '%-34s %10s %14s\n' "" "wall ms" "peak RSS KiB"
row() { printf '%-34s %10s %14s\n' "$1" "$(ms "$2")" "$(kb "$2")"; }
row "hwc list (every event, probed)" hwc_list
row "perf list" perf_list
row "papi_native_avail" papi_native
row "hwc list task-clock" hwc_one
row "perf list sw" perf_sw
row "hwc info" hwc_info
row "papi_avail" papi_avail
printf 'hwc list / perf list: wall %s, RSS %s\n' "$(ratio "$(ms hwc_list)" "$(ms perf_list)")" \
	"$(ratio "$(kb hwc_list)" "$(kb perf_list)")"
printf 'hwc list / papi_native_avail: wall %s, RSS %s\n' \
	"$(ratio "$(ms hwc_list)" "$(ms papi_native)")" "$(ratio "$(kb hwc_list)" "$(kb papi_native)")"
printf 'hwc list task-clock / perf list sw: wall %s\n' "$(ratio "$(ms hwc_one)" "$(ms perf_sw)")"
printf 'hwc info / papi_avail: wall %s, RSS %s\n' "$(ratio "$(ms hwc_info)" "$(ms papi_avail)")" \
	"$(ratio "$(kb hwc_info)" "$(kb papi_avail)")"
echo "(hwc list says for every event whether it opens here and why not, with one"
echo " perf_event_open per generic, cache, software and preset event, one per libpfm4 model"
echo " and one for all tracepoints, whose open and close alone costs the kernel tens of ms:"
echo " 83 calls for 2550 events on the 2-CPU VM this was written on.  perf list opens its"
echo " generic events to hide unsupported ones (108 calls for hw, sw and cache there);"
echo " papi_native_avail made 2.  hwc info calibrates the TSC for at least 25 ms when"
echo " neither the kernel nor CPUID gives its rate.)"
