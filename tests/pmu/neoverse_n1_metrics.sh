#!/bin/sh
# hwc stat -M on a real PMU (busybox sh, in scripts/pmu-vm --cpu
# neoverse-n1): the metrics of perf's JSON tables for the Neoverse N1 whose
# events QEMU's PMU counts, each checked twice: against the formula applied
# to the counts hwc printed in the same run, and against the same formula
# applied to the guest's perf stat's counts of those events (Debian 12's
# perf 6.1 has no N1 metrics; neoverse_n1_oracle.sh compares with perf
# 6.12's perf stat -M).
# A metric whose events this PMU does not count (the kernel's
# armv8_pmuv3/events, from PMCEID, leaves them out) is refused with their
# names, and perf must count them as 0.
# Needs the arm64 JSON tree in $HWC_EVENTS_DIR (make pmu-tests stages it);
# libhwc reads it with json-c (libjson-c5, among pmu-vm's BASE_PACKAGES).
. "$(dirname "$0")/lib"

need_n1_json_tree
hwc list --metrics >"$tmp/list" 2>"$tmp/err" || {
	fail "hwc list --metrics: $(cat "$tmp/err")"; finish; }
grep -q '^ipc  ' "$tmp/list" || fail "hwc list --metrics lacks ipc: $(head -5 "$tmp/list")"

# metric, its two events, the factor: metric = factor * A / B
for m in "ipc INST_RETIRED CPU_CYCLES 1" \
	 "branch_mpki BR_MIS_PRED_RETIRED INST_RETIRED 1000" \
	 "frontend_stalled_cycles STALL_FRONTEND CPU_CYCLES 100" \
	 "backend_stalled_cycles STALL_BACKEND CPU_CYCLES 100" \
	 "l1d_cache_miss_ratio L1D_CACHE_REFILL L1D_CACHE 1" \
	 "branch_misprediction_ratio BR_MIS_PRED_RETIRED BR_RETIRED 1"; do
	set -- $m
	perf stat -x, -e "$2,$3" -- "$W" loop $N 2>"$tmp/perf" >/dev/null
	if ! hwc stat -x, -M "$1" -- "$W" loop $N 2>"$tmp/hwc" >/dev/null; then
		# refused: only for events this PMU does not count (perf counts 0),
		# each named
		zero=$(awk -F, -v a="$2" -v b="$3" '($3 == a || $3 == b) && $1 + 0 == 0 { z = z " " $3 }
			END { print z }' "$tmp/perf")
		if [ -z "$zero" ] || ! grep -q 'which this machine lacks' "$tmp/hwc"; then
			fail "hwc stat -M $1: $(cat "$tmp/hwc"); perf: $(cat "$tmp/perf")"
			continue
		fi
		for e in $zero; do
			grep -q "$e" "$tmp/hwc" || fail "hwc stat -M $1 does not name $e: $(cat "$tmp/hwc")"
		done
		measured "$1: refused, perf counts$zero as 0: $(cat "$tmp/hwc")"
		continue
	fi
	# hwc: the metric line (value,unit,name,metric,threshold) and its events
	set -- "$@" $(awk -F, -v m="$1" -v a="$2" -v b="$3" '
		$3 == m && $4 == "metric" { v = $1 }
		$3 == a { x = $1 } $3 == b { y = $1 }
		END { printf "%s %s %s", (v == "" ? "none" : v), x + 0, y + 0 }' "$tmp/hwc")
	set -- "$@" $(awk -F, -v a="$2" -v b="$3" '$3 == a { x = $1 } $3 == b { y = $1 }
		END { printf "%s %s", x + 0, y + 0 }' "$tmp/perf")
	# $5 hwc's metric, $6 $7 hwc's counts, $8 $9 perf's counts
	if [ "$5" = none ] || [ "$7" = 0 ] || [ "$9" = 0 ]; then
		measured "$1: not counted by this PMU (hwc: $5 from $2 $6, $3 $7; perf: $8, $9)"
		continue
	fi
	measured "$1: hwc stat -M $5 ($2 $6, $3 $7); perf stat -e: $2 $8, $3 $9"
	awk -v v="$5" -v a="$6" -v b="$7" -v f="$4" 'BEGIN {
		w = f * a / b; exit !(v - w <= 1e-6 * (w < 0 ? -w : w) + 1e-6 && w - v <= 1e-6 * (w < 0 ? -w : w) + 1e-6) }' ||
		fail "$1 = $5, but $4 * $6 / $7 from its own counts"
	# the other run, perf's (the kernel's share varies a little): within 1%
	awk -v v="$5" -v a="$8" -v b="$9" -v f="$4" 'BEGIN {
		w = f * a / b; d = v - w; if (d < 0) d = -d; exit !(d <= 0.01 * (w < 0 ? -w : w) + 1e-9) }' ||
		fail "$1 = $5, but perf's counts give $4 * $8 / $9"
done

# -M NAME:MOD: the metric's events with the modifier (user space only here):
# hwc stat -e INST_RETIRED:u's count of this static loop within 0.01% (runs
# differ by a few instructions: 2079269, 2079273), and within 0.1% of
# perf's (whose count starts some hundred instructions apart)
hwc stat -x, -M ipc:u -- "$W" loop $N 2>"$tmp/hwc" >/dev/null || fail "hwc stat -M ipc:u: $(cat "$tmp/hwc")"
hwc stat -x, -e INST_RETIRED:u -- "$W" loop $N 2>"$tmp/hwc_e" >/dev/null
perf stat -x, -e inst_retired:u -- "$W" loop $N 2>"$tmp/perf" >/dev/null
h=$(awk -F, '$3 == "INST_RETIRED:u" { print $1 }' "$tmp/hwc")
e=$(awk -F, '$3 == "INST_RETIRED:u" { print $1 }' "$tmp/hwc_e")
p=$(awk -F, '$3 == "inst_retired:u" { print $1 }' "$tmp/perf")
measured "ipc:u: -M INST_RETIRED:u $h; hwc stat -e INST_RETIRED:u $e; perf inst_retired:u $p"
within() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= f * b) }'; }
within "$h" "$e" 0.0001 || fail "hwc stat -M ipc:u counted INST_RETIRED:u '$h', -e '$e': $(cat "$tmp/hwc")"
within "$h" "$p" 0.001 || fail "hwc stat -M ipc:u counted INST_RETIRED:u '$h', perf '$p'"
finish
