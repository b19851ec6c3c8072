#!/bin/sh
# hwc stat --topdown / -M TopdownL1 on a real PMU (busybox sh, in
# scripts/pmu-vm --cpu neoverse-n1).  The N1's table has no TopdownL1, so
# hwc takes Arm's sbsa.json (the arch directory's top-down level 1, which
# the Neoverse V1/N2 tables take with ArchStdEvent).  Its events
# (STALL_SLOT*, OP_RETIRED, OP_SPEC: Armv8.4's) and #slots (caps/slots,
# PMMIR_EL1) are what this CPU lacks: hwc must refuse and name every one of
# them, never print a number (neoverse_n1_metrics.sh checks the same
# refusal for the N1's own metrics against perf's counts).
. "$(dirname "$0")/lib"

need_n1_json_tree
pmu=$(ls -d /sys/bus/event_source/devices/armv8_* | head -1)
measured "$pmu/events: $(ls "$pmu/events" | tr '\n' ' ')caps/slots $(cat "$pmu/caps/slots")"
lacking="stall_slot_frontend stall_slot_backend stall_slot op_retired op_spec"
for e in $lacking; do
	[ ! -e "$pmu/events/$e" ] || { echo "skip: this PMU counts $e: the test expects QEMU's N1 without it" >&2; exit 77; }
done

for args in "--topdown" "-M TopdownL1" "-M frontend_bound,retiring"; do
	if hwc stat $args -- "$W" loop $N >"$tmp/out" 2>"$tmp/err"; then
		fail "hwc stat $args succeeded without the events: $(cat "$tmp/err")"
		continue
	fi
	grep -q 'which this machine lacks' "$tmp/err" || fail "hwc stat $args: $(cat "$tmp/err")"
	grep -q '[0-9] *%' "$tmp/err" && fail "hwc stat $args printed a value: $(cat "$tmp/err")"
	measured "hwc stat $args: $(cat "$tmp/err")"
done
# every event of the four metrics, and #slots, named at once
hwc stat --topdown -- "$W" loop $N 2>"$tmp/err" >/dev/null
for e in $lacking '#slots' frontend_bound bad_speculation retiring backend_bound; do
	grep -q "[ ,]$e[,) ]" "$tmp/err" || fail "hwc stat --topdown does not name $e: $(cat "$tmp/err")"
done
# cpu_cycles is counted: not named
grep -q 'cpu_cycles' "$tmp/err" && fail "hwc stat --topdown names cpu_cycles: $(cat "$tmp/err")"
# frontend_bound alone needs stall_slot_frontend and #slots, not op_spec
hwc stat -M frontend_bound -- "$W" loop $N 2>"$tmp/err" >/dev/null
grep -q 'op_spec' "$tmp/err" && fail "-M frontend_bound names op_spec: $(cat "$tmp/err")"
for e in stall_slot_frontend '#slots'; do
	grep -q "[ ,]$e[,) ]" "$tmp/err" || fail "-M frontend_bound does not name $e: $(cat "$tmp/err")"
done

finish
