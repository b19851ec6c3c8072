#!/usr/bin/env bash
# hwc top vs perf top --stdio watching the bundled workload for the same
# number of seconds, one after the other in one run: the CPU time each
# spends per second of wall time (its overhead on the machine it watches)
# and its peak RSS, for one process, every CPU, and every CPU with call
# chains.  Both sample cpu-clock at 4000 Hz and refresh every second.
# Targets: CPU <= 1.0x perf top's (no more overhead), RSS <= 0.6x.
# Usage: bench/top.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
: "${HWC_BUILD:=$PWD/build}"
hwc=$HWC_BUILD/bin/hwc
secs=${1:-5}
work=$(mktemp -d)
w=$HWC_BUILD/workloads/hotspots
"$w" 1000000 >/dev/null &
wpid=$!
trap 'kill $wpid 2>/dev/null; rm -rf "$work"' EXIT

measure() { # command... -> "cpu_per_wall_second rss_kib"
	/usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
		# perf top ends on the SIGINT of timeout: 124 is its normal end here.
		[[ $? -eq 124 ]] || { echo "$* failed:" >&2; cat "$work/err" >&2; exit 1; }
	}
	awk 'END { printf "%.4f %d\n", ($2 + $3) / $1, $4 }' "$work/time"
}

row() { # name hwc-cpu hwc-rss perf-cpu perf-rss
	awk -v n="$1" -v hc="$2" -v hr="$3" -v pc="$4" -v pr="$5" 'BEGIN {
		printf "%-16s hwc %6.3f CPU %7d KiB | perf %6.3f CPU %7d KiB | cpu %.2fx (target <= 1.0) rss %.2fx (target <= 0.6)\n",
			n, hc, hr, pc, pr, hc / pc, hr / pr }'
}

# perf top reads keys from stdin even with --stdio: give it a pipe that
# stays open and says nothing (a process substitution, which the measured
# shell does not wait for).
perf_top() { timeout -s INT "$secs" perf top --stdio -e cpu-clock -F 4000 -d 1 "$@" < <(sleep $((secs + 30))); }

echo "== hwc top vs perf top: $secs s each, CPU seconds per wall second and peak RSS"
for mode in "process:-p $wpid" "every CPU:-a" "every CPU, -g:-a -g"; do
	name=${mode%%:*}
	read -r -a args <<<"${mode#*:}"
	read -r hc hr < <(measure "$hwc" top --batch -n "$secs" -d 1 -e cpu-clock -F 4000 "${args[@]}")
	read -r pc pr < <(measure bash -c "$(declare -f perf_top); secs=$secs; perf_top ${args[*]}")
	row "$name" "$hc" "$hr" "$pc" "$pr"
done
