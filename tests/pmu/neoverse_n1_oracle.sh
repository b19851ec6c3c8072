#!/bin/sh
# hwc stat -M against perf stat -M (busybox sh, in scripts/pmu-vm --cpu
# neoverse-n1).  The oracle is perf 6.12 built for arm64 from Debian's
# linux-source-6.12 (scripts/perf-arm64; make pmu-tests stages it in
# perf-6.12/): its N1 metrics are compiled in, where the guest's own perf
# (Debian 12's 6.1) has none.  For every metric perf 6.12 lists here:
#  - all its events in the PMU's events/ (the kernel's list, from PMCEID):
#    hwc computes it, and each event's count and the metric's value equal
#    perf's.  Exactly: both count user space only (:u) under -icount, where
#    the loop's instruction count depends only on the program, its
#    arguments and its environment (the test gives hwc's the variables perf
#    adds to its own), and QEMU counts one cycle per instruction;
#    the values are compared to the 6 decimals both print.
#  - some event missing there: perf counts it as 0 (QEMU counts nothing
#    for it); hwc must refuse the metric and name exactly those events.
# Then the metric groups (every metric of General and Cycle_Accounting,
# the same values) and a group whose events are all missing (Miss_Ratio).
. "$(dirname "$0")/lib"

P=$(cd "$(dirname "$0")" && pwd)/perf-6.12/perf
[ -x "$P" ] || {
	echo "skip: no perf 6.12 for arm64 in the suite (scripts/perf-arm64 builds it into /usr/local/share/hwc-test/perf-arm64, scripts/deps runs it; make pmu-tests stages it)" >&2
	exit 77
}
need_n1_json_tree
# Without address space randomization (busybox's setarch has no -R; the
# guest is the test's alone): the loop's start-up (glibc's string functions
# on its environment) takes a few instructions more or less with where the
# stack lands.
aslr=$(cat /proc/sys/kernel/randomize_va_space)
trap 'echo "$aslr" >/proc/sys/kernel/randomize_va_space; rm -rf "$tmp"' EXIT
echo 0 >/proc/sys/kernel/randomize_va_space || { echo "skip: cannot turn ASLR off" >&2; exit 77; }
oracle() { "$P" "$@"; }
pmu=$(ls -d /sys/bus/event_source/devices/armv8_* | head -1)
measured "$("$P" --version); $pmu/events: $(ls "$pmu/events" | tr '\n' ' ')"

# EVENT CODE of Arm's architectural and recommended events
awk -F'"' 'index($0, "{") { c = ""; n = "" } $2 == "EventCode" { c = $4 } $2 == "EventName" { n = $4 }
	c != "" && n != "" { print n, c; c = ""; n = "" }' \
	"$HWC_EVENTS_DIR/arm64/common-and-microarch.json" "$HWC_EVENTS_DIR/arm64/recommended.json" >"$tmp/codes"
oracle list --raw-dump metrics >"$tmp/metrics" 2>&1
grep -qw ipc "$tmp/metrics" || { fail "perf 6.12 lists no N1 metric ipc: $(cat "$tmp/metrics")"; finish; }

# The workload's environment as perf gives it (perf adds PERF_BUILDID_DIR
# and its directories to PATH): hwc runs with exactly that one, in that
# order, so that the workload's child gets the same and counts the same.
oracle stat -x, -- env >"$tmp/perf_env" 2>/dev/null
{
	printf 'exec env -i'
	while IFS= read -r v; do printf " '%s'" "$(printf %s "$v" | sed "s/'/'\\\\''/g")"; done <"$tmp/perf_env"
	printf ' %s "$@"\n' "$(command -v hwc)"
} >"$tmp/hwc_env.sh"
hwc() { sh "$tmp/hwc_env.sh" "$@"; }
hwc stat -x, -- env >"$tmp/hwc_env" 2>/dev/null
cmp -s "$tmp/perf_env" "$tmp/hwc_env" ||
	fail "the workload's environment differs: perf's $(cat "$tmp/perf_env"); hwc's $(cat "$tmp/hwc_env")"

# perf -j: one JSON object a line; an event's line carries the metric
# computed from it ("metric-unit" : "UNIT  NAME", NAME:MOD for -M NAME:MOD,
# as hwc names it too).  Written as
#   e EVENT COUNT / m NAME VALUE
perf_parse() {
	sed -n 'h
		s/.*"counter-value" : "\([0-9]*\)\.0*".*"event" : "\([^"]*\)".*/e \2 \1/p
		g
		s/.*"metric-value" : "\([^"]*\)", "metric-unit" : "[^"]*  \([^"]*\)".*/m \2 \1/p' "$1"
}
# hwc -x,: value,unit,name,... for events, value,unit,name,metric, for metrics
hwc_parse() {
	awk -F, 'NF >= 4 && $4 == "metric" { print "m", $3, $1; next }
		NF >= 4 && $1 ~ /^[0-9]+$/ { print "e", $3, $1 }' "$1"
}
# compare the two parsed runs: every event and metric of perf's in hwc's,
# equal, and no more in hwc's
same() { # what perf.parsed hwc.parsed
	awk -v what="$1" 'NR == FNR { p[$1 " " $2] = $3; next }
		{ h[$1 " " $2] = $3 }
		END {
			for (k in p) {
				if (!(k in h)) { print what ": hwc lacks " k " (perf: " p[k] ")"; bad = 1; continue }
				d = p[k] - h[k]; if (d < 0) d = -d
				if (d > 5e-7 || (p[k] ~ /n/) != (h[k] ~ /n/)) {
					print what ": " k ": hwc " h[k] ", perf " p[k]; bad = 1 }
			}
			for (k in h) if (!(k in p)) { print what ": perf lacks " k " (hwc: " h[k] ")"; bad = 1 }
			exit bad }' "$2" "$3"
}

# SPEC with both tools again, up to twice, while their parsed runs differ:
# now and then QEMU lets a few of the other vCPU's instructions into a
# count (tests/pmu/pmu.h), while a real difference is in every run.  The
# last difference is left in $tmp/diff.
agree() { # what spec
	try=1
	while ! same "$1" "$tmp/perf.p" "$tmp/hwc.p" >"$tmp/diff"; do
		[ $try -lt 3 ] || return 1
		try=$((try + 1))
		measured "$1: run $try of both, as the last differed: $(cat "$tmp/diff")"
		oracle stat -j -M "$2" -- "$W" loop $N 2>"$tmp/perf" >/dev/null &&
			hwc stat -x, -M "$2" -- "$W" loop $N 2>"$tmp/hwc" >/dev/null ||
			{ echo "$1: run $try failed: $(cat "$tmp/perf" "$tmp/hwc")" >"$tmp/diff"; return 1; }
		perf_parse "$tmp/perf" >"$tmp/perf.p"
		hwc_parse "$tmp/hwc" >"$tmp/hwc.p"
	done
}

computed='' refused=''
for m in $(tr ' ' '\n' <"$tmp/metrics" | sort -u); do
	oracle stat -j -M "$m:u" -- "$W" loop $N 2>"$tmp/perf" >/dev/null ||
		{ fail "perf stat -M $m:u: $(cat "$tmp/perf")"; continue; }
	perf_parse "$tmp/perf" >"$tmp/perf.p"
	# the events perf opened that are Arm common events (PMCEID tells which
	# this CPU counts, and the kernel lists those in events/) missing from
	# events/; the others (0x40-0x3fff, which PMCEID does not cover) open
	# whatever the CPU does with them
	missing=
	for e in $(awk '$1 == "e" { sub(/:u$/, "", $2); print $2 }' "$tmp/perf.p"); do
		code=$(awk -v e="$e" '$1 == e { print $2; exit }' "$tmp/codes")
		[ -n "$code" ] || { fail "$e: not in arm64/common-and-microarch.json or recommended.json"; continue; }
		lower=$(echo "$e" | tr 'A-Z' 'a-z')
		if [ $((code)) -lt $((0x40)) ] || { [ $((code)) -ge $((0x4000)) ] && [ $((code)) -lt $((0x4040)) ]; }; then
			[ -e "$pmu/events/$lower" ] || missing="$missing $e"
		fi
	done
	if hwc stat -x, -M "$m:u" -- "$W" loop $N 2>"$tmp/hwc" >/dev/null; then
		[ -z "$missing" ] || fail "hwc stat -M $m:u computed it without$missing: $(cat "$tmp/hwc")"
		hwc_parse "$tmp/hwc" >"$tmp/hwc.p"
		if agree "$m:u" "$m:u"; then
			computed="$computed $m"
			measured "$m:u: $(grep '^m' "$tmp/hwc.p" | cut -d' ' -f3) from $(grep '^e' "$tmp/hwc.p" | cut -d' ' -f2,3 | tr '\n' ' ')(perf stat -M: the same)"
		else
			fail "$(cat "$tmp/diff")"
		fi
		continue
	fi
	[ -n "$missing" ] || { fail "hwc stat -M $m:u refused it, all its events are counted: $(cat "$tmp/hwc")"; continue; }
	grep -q 'which this machine lacks' "$tmp/hwc" || fail "hwc stat -M $m:u: $(cat "$tmp/hwc")"
	# the events named: "needs A, B, which this machine lacks"
	named=$(sed -n 's/.* needs* \(.*\), which this machine lacks.*/\1/p' "$tmp/hwc" | sed 's/:u//g; s/, */ /g')
	[ "$(echo $named | tr ' ' '\n' | sort -u)" = "$(echo $missing | tr ' ' '\n' | sort -u)" ] ||
		fail "hwc stat -M $m:u names '$named', perf's events outside events/ are '$missing': $(cat "$tmp/hwc")"
	for e in $missing; do
		awk -v e="$e:u" '$1 == "e" && $2 == e && $3 != 0 { exit 1 }' "$tmp/perf.p" ||
			fail "perf counts $e:u, which events/ lacks: $(cat "$tmp/perf.p")"
	done
	refused="$refused $m"
done
measured "computed, as perf:$computed"
measured "refused, naming the events perf counts as 0:$refused"
case " $computed " in *" ipc "*) ;; *) fail "ipc was not computed" ;; esac

# groups: the same metrics, the same values
for g in General Cycle_Accounting; do
	oracle stat -j -M "$g:u" -- "$W" loop $N 2>"$tmp/perf" >/dev/null
	hwc stat -x, -M "$g:u" -- "$W" loop $N 2>"$tmp/hwc" >/dev/null ||
		{ fail "hwc stat -M $g:u: $(cat "$tmp/hwc")"; continue; }
	perf_parse "$tmp/perf" >"$tmp/perf.p"
	hwc_parse "$tmp/hwc" >"$tmp/hwc.p"
	grep -q '^m ' "$tmp/perf.p" || fail "perf stat -M $g:u printed no metric: $(cat "$tmp/perf")"
	agree "$g:u" "$g:u" || fail "$(cat "$tmp/diff")"
	measured "-M $g:u: $(grep '^m' "$tmp/hwc.p" | cut -d' ' -f2,3 | tr '\n' ' ')(perf: $(grep '^m' "$tmp/perf.p" | cut -d' ' -f2,3 | tr '\n' ' '))"
done
# a group none of whose metrics this PMU can count: perf prints zeros,
# hwc refuses
if hwc stat -M Miss_Ratio -- "$W" loop $N >/dev/null 2>"$tmp/hwc"; then
	fail "hwc stat -M Miss_Ratio computed it: $(cat "$tmp/hwc")"
else
	grep -q 'which this machine lacks' "$tmp/hwc" || fail "hwc stat -M Miss_Ratio: $(cat "$tmp/hwc")"
	measured "-M Miss_Ratio: $(cat "$tmp/hwc")"
fi
finish
