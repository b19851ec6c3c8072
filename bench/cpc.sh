#!/usr/bin/env bash
# libcpc and cputrack against their Linux peers: cpc_set_sample() against
# PAPI_read(), and cputrack against perf stat on the same commands (wall
# time and peak RSS of the tool's own process, medians).  Run by bench/run.
set -euo pipefail
: "${HWC_BUILD:=$PWD/build}"
B=$HWC_BUILD/bench
W=$HWC_BUILD/workloads
RUNS=${RUNS:-50}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "== libcpc: sampling a set, ns per call (median of rounds, methods interleaved)"
"$B/cpc_sample" | tee "$B/cpc_sample.out"
get() { awk -v k="$1" -F'  +' '$1 == k { print $2 + 0 }' "$B/cpc_sample.out"; }
printf 'cpc_set_sample / PAPI_read:  1 event %s, 4 events %s, 8 events %s\n' \
	"$(ratio "$(get 'cpc_set_sample, 1 event')" "$(get 'PAPI_read, 1 event')")" \
	"$(ratio "$(get 'cpc_set_sample, 4 events')" "$(get 'PAPI_read, 4 events')")" \
	"$(ratio "$(get 'cpc_set_sample, 8 events')" "$(get 'PAPI_read, 8 events')")"
echo

echo "== cputrack vs perf stat: $RUNS rounds, each running every command once in a new order, medians"
# family exits 7 on purpose; the shell makes the status 0 for spawn_time.
fam="$W/family 300; true"
labels=(
	"cputrack -c task-clock,page-faults true"
	"perf stat -e task-clock,page-faults true"
	"cputrack -fe -c task-clock,page-faults family 300"
	"perf stat -e task-clock,page-faults family 300"
	"family 300 alone"
)
# One spawn_time run interleaves them, so that the load of a shared
# machine falls on all alike; its lines are in the order given.
mapfile -t out < <("$B/spawn_time" "$RUNS" \
	"$HWC_BUILD/bin/cputrack" -c task-clock,page-faults true -- \
	perf stat -e task-clock,page-faults true -- \
	"$HWC_BUILD/bin/cputrack" -fe -c task-clock,page-faults /bin/sh -c "$fam" -- \
	perf stat -e task-clock,page-faults /bin/sh -c "$fam" -- \
	/bin/sh -c "$fam")
printf '%-52s %10s %14s\n' "" "wall ms" "peak RSS KiB"
for i in "${!labels[@]}"; do
	read -r ms kb _ <<<"${out[i]}"
	printf '%-52s %10s %14s\n' "${labels[i]}" "$ms" "$kb"
done
f() { cut -d' ' -f"$2" <<<"${out[$1]}"; } # line (0-based), field
printf 'cputrack / perf stat, true: wall %s, RSS %s\n' \
	"$(ratio "$(f 0 1)" "$(f 1 1)")" "$(ratio "$(f 0 2)" "$(f 1 2)")"
printf 'cputrack -fe / perf stat, family (fork, exec, thread): wall %s\n' \
	"$(ratio "$(f 2 1)" "$(f 3 1)")"
echo "(cputrack counts each LWP and process separately and follows them with ptrace,"
echo " with one controlling process per followed process, as on illumos; perf stat"
echo " counts the whole family as one, with inherited counters.)"
