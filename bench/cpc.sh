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

echo "== cputrack vs perf stat: $RUNS runs each, medians"
printf '%-52s %10s %14s\n' "" "wall ms" "peak RSS KiB"
row() { # label command...
	local label=$1; shift
	read -r ms kb < <("$B/spawn_time" "$RUNS" "$@")
	printf '%-52s %10s %14s\n' "$label" "$ms" "$kb"
	echo "$ms $kb" >"$tmp/$(echo "$label" | tr -c 'a-z0-9' _)"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
row "cputrack -c task-clock,page-faults true" "$HWC_BUILD/bin/cputrack" -c task-clock,page-faults true
row "perf stat -e task-clock,page-faults true" perf stat -e task-clock,page-faults true
# family exits 7 on purpose; the shell makes the status 0 for spawn_time.
fam="$W/family 300; true"
row "cputrack -fe -c task-clock,page-faults family 300" \
	"$HWC_BUILD/bin/cputrack" -fe -c task-clock,page-faults /bin/sh -c "$fam"
row "perf stat -e task-clock,page-faults family 300" perf stat -e task-clock,page-faults /bin/sh -c "$fam"
row "family 300 alone" /bin/sh -c "$fam"
f() { cut -d' ' -f"$2" "$tmp/$(echo "$1" | tr -c 'a-z0-9' _)"; }
printf 'cputrack / perf stat, true: wall %s, RSS %s\n' \
	"$(ratio "$(f "cputrack -c task-clock,page-faults true" 1)" "$(f "perf stat -e task-clock,page-faults true" 1)")" \
	"$(ratio "$(f "cputrack -c task-clock,page-faults true" 2)" "$(f "perf stat -e task-clock,page-faults true" 2)")"
printf 'cputrack -fe / perf stat, family (fork, exec, thread): wall %s\n' \
	"$(ratio "$(f "cputrack -fe -c task-clock,page-faults family 300" 1)" \
		"$(f "perf stat -e task-clock,page-faults family 300" 1)")"
echo "(cputrack counts each LWP and process separately and follows them with ptrace,"
echo " with one controlling process per followed process, as on illumos; perf stat"
echo " counts the whole family as one, with inherited counters.)"
