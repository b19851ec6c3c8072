#!/bin/sh
# The tools on a real PMU (busybox sh, in scripts/pmu-vm): hwc stat, perf
# stat as the oracle, encodings, cputrack, pmcstat, hwc record and perf
# report, the errors of real hardware.  Exact counts come from the loop of
# pmu/work (2 instructions per iteration); each is the least of RUNS runs,
# as tests/pmu/pmu.h explains (QEMU lets the other vCPU's instructions leak
# into ours now and then, never the other way).
. "$(dirname "$0")/lib"
RUNS=3

# within A B PPM: |A - B| <= B * PPM / 1e6
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 1e6) }'; }
# least of the numbers on stdin
least() { sort -n | head -1; }

# hwc_stat EVENT ITERATIONS: the count of EVENT over `work loop ITERATIONS`
hwc_stat() {
	i=0
	while [ $i -lt $RUNS ]; do
		hwc stat -x, -o "$tmp/stat" -e "$1" -- "$W" loop "$2" || { echo 0; return; }
		awk -F, -v e="$1" '$3 == e { print $1 }' "$tmp/stat"
		i=$((i + 1))
	done | least
}
perf_stat() {
	i=0
	while [ $i -lt $RUNS ]; do
		perf stat -x, -o "$tmp/perf" -e "$1" -- "$W" loop "$2" 2>"$tmp/perf.err" || { echo 0; return; }
		awk -F, -v e="$1" '$3 == e { print $1 }' "$tmp/perf"
		i=$((i + 1))
	done | least
}

# Counting: N and 2N iterations differ by exactly 2N instructions.
a=$(hwc_stat instructions:u $N)
b=$(hwc_stat instructions:u $((2 * N)))
measured "hwc stat instructions:u: N $a, 2N $b, difference $((b - a)) (exact: $((2 * N)))"
within $((b - a)) $((2 * N)) 100 || fail "hwc stat: 2N - N = $((b - a)), not $((2 * N))"

# perf agrees with hwc.  perf gives its command an environment of its own
# (PATH, PERF_BUILDID_DIR), which changes what the loader and libc do at
# start; hwc's command gets the same one.
p=$(perf_stat instructions:u $N)
grep -i warn "$tmp/perf.err" && fail "perf stat warned"
perf stat -o "$tmp/perf" -e instructions:u -- env >"$tmp/env" || fail "perf stat env"
h=$(i=0; while [ $i -lt $RUNS ]; do
	env -i $(cat "$tmp/env") hwc stat -x, -o "$tmp/stat" -e instructions:u -- "$W" loop $N &&
		awk -F, '$3 == "instructions:u" { print $1 }' "$tmp/stat"
	i=$((i + 1))
done | least)
measured "perf stat instructions:u: N $p (hwc stat in perf's environment $h)"
within "$p" "$h" 100 || fail "perf stat counts $p, hwc stat $h"

# Raw, sysfs and libpfm4 encodings of INST_RETIRED count what instructions
# does, side by side in one hwc stat, and alone: libpfm4's start must leave
# the command's environment as it was.  QEMU's max CPU (MIDR 0) is no model
# libpfm4 detects: arm_n1:: encodes for it all the same (libhwc(3)).  The
# bare alias inst_retired is the core PMU's, as perf opens it.
for e in r08:u armv8_pmuv3/event=0x8/u armv8_pmuv3/inst_retired/u inst_retired:u arm_n1::INST_RETIRED:u; do
	hwc stat -x, -o "$tmp/stat" -e "instructions:u,$e" -- "$W" loop $N 2>"$tmp/err" ||
		fail "hwc stat -e $e: $(cat "$tmp/err")"
	ref=$(awk -F, '$3 == "instructions:u" { print $1 }' "$tmp/stat")
	v=$(awk -F, -v e="$e" '$3 == e { print $1 }' "$tmp/stat")
	measured "hwc stat $e: $v (instructions:u $ref)"
	[ -n "$v" ] && [ "$v" = "$ref" ] || fail "$e counts $v, instructions:u $ref"
	alone=$(hwc_stat "$e" $N)
	within "$alone" "$a" 100 || fail "$e alone counts $alone, instructions:u alone $a"
done

# cputrack (libcpc + libpctx): counts user space by default.
cputrack_count() {
	i=0
	while [ $i -lt $RUNS ]; do
		cputrack -c instructions -o "$tmp/ct" -- "$W" loop "$1" >/dev/null || { echo 0; return; }
		awk '$3 == "exit" { print $4 }' "$tmp/ct"
		i=$((i + 1))
	done | least
}
a=$(cputrack_count $N)
b=$(cputrack_count $((2 * N)))
measured "cputrack instructions: N $a, 2N $b, difference $((b - a))"
within $((b - a)) $((2 * N)) 100 || fail "cputrack: 2N - N = $((b - a)), not $((2 * N))"

# cpustat (libcpc, every CPU): the loop runs inside its one interval, in
# an otherwise idle machine (10N: the shell and sleep around it add some
# hundred instructions).
cpustat_count() {
	i=0
	while [ $i -lt $RUNS ]; do
		cpustat -c instructions 2 1 >"$tmp/cs" &
		cs=$!
		sleep 1
		"$W" loop "$1"
		wait $cs || { echo 0; return; }
		awk '$3 == "total" { print $4 }' "$tmp/cs"
		i=$((i + 1))
	done | least
}
a=$(cpustat_count $((10 * N)))
b=$(cpustat_count $((20 * N)))
measured "cpustat instructions: 10N $a, 20N $b, difference $((b - a))"
# Every process of the machine counts here: 0.01% of the interval's whole
# count (about twice the difference), not of the difference alone.
within $((b - a)) $((20 * N)) 200 || fail "cpustat: 20N - 10N = $((b - a)), not $((20 * N)) (+-0.01% of $b)"

# pmcstat (libpmc): process (-p) and system (-s) counting PMCs, user space.
pmcstat_count() { # mode iterations
	i=0
	while [ $i -lt $RUNS ]; do
		pmcstat "$1" instructions,usr -o "$tmp/pc" "$W" loop "$2" || { echo 0; return; }
		awk '!/^#/ { s = 0; for (f = 1; f <= NF; f++) s += $f; print s }' "$tmp/pc" | tail -1
		i=$((i + 1))
	done | least
}
for m in -p -s; do
	a=$(pmcstat_count $m $N)
	b=$(pmcstat_count $m $((2 * N)))
	measured "pmcstat $m instructions,usr: N $a, 2N $b, difference $((b - a))"
	within $((b - a)) $((2 * N)) 100 || fail "pmcstat $m: 2N - N = $((b - a)), not $((2 * N))"
done

# Sampling: cycles/P samples, as perf report reads them from hwc's file.
P=100000
cyc=$(hwc_stat cycles:u $((10 * N)))
hwc record -e cycles:u -c $P -o "$tmp/c.data" -- "$W" loop $((10 * N)) 2>"$tmp/rec.err" || fail "hwc record"
perf report -i "$tmp/c.data" --stdio >"$tmp/rep" 2>"$tmp/rep.err" || fail "perf report of hwc's file"
s=$(awk '/^# Samples:/ { print $3 }' "$tmp/rep")
measured "hwc record -e cycles:u -c $P: $s samples; hwc stat cycles:u $cyc: $((cyc / P)) expected"
within "${s:-0}" $((cyc / P)) 20000 || fail "$s samples, not $((cyc / P)) (+-2%)"
grep -i warn "$tmp/rep.err" "$tmp/rep" && fail "perf report warned on hwc's file"

# f1 runs 1/4 of the loop, f2 3/4: f2's share of the samples.  On cycles:
# QEMU raises no overflow interrupt for its instruction counter (the
# overflow shows at the next kernel entry), and with -icount shift=0 a
# cycle is an instruction (tests/pmu/libhwc.c, test_group).
hwc record -g -e cycles:u -c $P -o "$tmp/f.data" -- "$W" f1f2 $((10 * N)) 2>"$tmp/rec.err" || fail "hwc record -g"
perf report -i "$tmp/f.data" --stdio --no-children --sort sym >"$tmp/rep" 2>"$tmp/rep.err" || fail "perf report -g"
share=$(awk '$NF == "f1" { f1 = $1 } $NF == "f2" { f2 = $1 }
	END { sub("%", "", f1); sub("%", "", f2); if (f1 + f2 > 0) printf "%.3f", f2 / (f1 + f2) }' "$tmp/rep")
measured "hwc record -g -e cycles:u: f2 share ${share:-none} (expected 0.75 +- 0.02)"
awk -v s="${share:-0}" 'BEGIN { exit !(s >= 0.73 && s <= 0.77) }' || fail "f2 share $share"
grep -i warn "$tmp/rep.err" "$tmp/rep" && fail "perf report warned on hwc's -g file"

# hwc annotate on arm64 code (capstone's AArch64 disassembler, in the
# guest): samples of cycles:u every 100003 (odd: no aliasing with the loop)
# fall evenly on f2's loop of pmu.h, subs and b.ne.
hwc record -e cycles:u -c 100003 -o "$tmp/a.data" -- "$W" f1f2 $((10 * N)) 2>"$tmp/rec.err" || fail "hwc record for annotate"
if hwc annotate --stdio --no-source -i "$tmp/a.data" f2 >"$tmp/ann" 2>"$tmp/ann.err"; then
	hot=$(awk '$1 + 0 > 5 { printf "%s %s ", $4, $1 }' "$tmp/ann")
	measured "hwc annotate f2: ${hot:-nothing above 5%}"
	set -- $hot
	[ "$1" = subs ] && [ "$3" = b.ne ] && [ $# -eq 4 ] || fail "annotate f2: hot instructions '$hot', not subs and b.ne"
	awk -v a="${2:-0}" -v b="${4:-0}" 'BEGIN { exit !(a > 47 && a < 53 && b > 47 && b < 53) }' ||
		fail "annotate f2: subs $2%, b.ne $4%, not 50% each (+-3)"
else
	fail "hwc annotate: $(cat "$tmp/ann.err")"
fi

# pmcstat sampling: -P (process) and -S (system) into a log (-O), read back (-R).
for m in -P -S; do
	rm -f "$tmp/p.log"
	: >"$tmp/p.graph"
	pmcstat $m cpu-cycles,usr -n $P -O "$tmp/p.log" "$W" f1f2 $((10 * N)) || fail "pmcstat $m -O"
	pmcstat -R "$tmp/p.log" -G "$tmp/p.graph" || fail "pmcstat -R of the $m log"
	# "75.25%  [608]      f2 @ /work/pmu-suite/pmu/work"
	share=$(awk '$3 == "f2" && $4 == "@" { sub("%", "", $1); print $1 / 100 }' "$tmp/p.graph" | head -1)
	measured "pmcstat $m cpu-cycles,usr -O/-R: f2 share ${share:-none} (expected 0.75 +- 0.02)"
	awk -v s="${share:-0}" 'BEGIN { exit !(s >= 0.73 && s <= 0.77) }' || fail "pmcstat $m: f2 share $share"
done

# Errors of real hardware, each a clear message and a non-zero exit.
expect_error() { # message-part spec...
	msg=$1; shift
	if hwc stat "$@" -- "$W" loop 10 >"$tmp/err" 2>&1; then
		fail "hwc stat $* succeeded"
	elif ! grep -q -- "$msg" "$tmp/err"; then
		fail "hwc stat $*: no '$msg' in: $(cat "$tmp/err")"
	fi
	measured "hwc stat $*: $(head -1 "$tmp/err")"
}
# An event this PMU lacks.
expect_error "'cache-references:u' is not supported on this machine: its PMU (armv8_pmuv3) has no event" -e cache-references:u
# A counter mask on a PMU without one.
expect_error "cmask" -e armv8_pmuv3/event=0x8,cmask=1/u
# More pinned events than counters: those left off cannot count, and their
# 0 must not pass for a count.
pinned=r08:uD
i=1; while [ $i -lt 12 ]; do pinned="$pinned,r08:uD"; i=$((i + 1)); done
hwc stat -e "$pinned" -- "$W" loop 10 >"$tmp/err" 2>&1 || fail "hwc stat -e $pinned"
grep -q "'r08:uD' was not counted: pinned" "$tmp/err" || fail "no 'not counted' note for pinned events: $(cat "$tmp/err")"
measured "hwc stat 12 pinned r08:uD: $(grep -c 'was not counted' "$tmp/err") notes: $(grep -m1 'was not counted' "$tmp/err")"
# A group too big for the PMU.
group=r08:u
i=1; while [ $i -lt 40 ]; do group="$group,r08:u"; i=$((i + 1)); done
expect_error "a group's hardware events must all fit the PMU's counters at once" -e "{$group}"

finish
