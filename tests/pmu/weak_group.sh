#!/bin/sh
# Weak groups on a real PMU (busybox sh, in scripts/pmu-vm): a group of one
# hardware event more than the PMU's counters fails to open with a clear
# error; the same group as {...}:W counts every member apart, multiplexed:
# each value scaled from its own running time (raw * enabled / running,
# some below 100%), inst_retired's estimate within 2% of the loop's exact
# count (unscaled, a count at 60% would be 40% off), and the same events
# as perf 6.12 prints for it, with the same estimates within 2% (each run
# rotates the events anew; perf's weak group: tools/perf/util/evlist.c
# evlist__reset_weak_group).  hwc record
# falls back the same way: its file has no group (perf evlist -g).
. "$(dirname "$0")/lib"
L=$((50 * N)) # 100M instructions: the kernel rotates the multiplexed events many times
P=$(cd "$(dirname "$0")" && pwd)/perf-6.12/perf

# the group: the PMU's events, then inst_retired again, one event more than
# the kernel takes in one group (hwc info probes the counters the same way);
# their bare names, as perf users write them (each its core PMU's alias)
pmu=$(ls -d /sys/bus/event_source/devices/armv8_* | head -1)
inst=inst_retired
events=$(ls "$pmu/events" | grep -v '^inst_retired$' | tr '\n' ' ')
group=$inst n=1 fits=
for e in $events $(seq 1 32); do
	case $e in [0-9]*) e=$inst ;; esac
	if hwc stat -x, -e "{$group,$e}:u" -- true >/dev/null 2>"$tmp/err"; then
		group="$group,$e" n=$((n + 1)) fits=$n
		continue
	fi
	group="$group,$e" n=$((n + 1))
	break
done
[ -n "$fits" ] && [ "$n" -gt "$fits" ] || { fail "no group size the PMU refuses: {$group}: $(cat "$tmp/err")"; finish; }
measured "$pmu takes $fits events in a group; the group of $n: {$group}"

# without W: the error, naming the way out
if hwc stat -x, -e "{$group}:u" -- "$W" loop $L >/dev/null 2>"$tmp/err"; then
	fail "hwc stat -e {$group}:u counted a group the PMU refuses: $(cat "$tmp/err")"
else
	grep -q "must all fit the PMU's counters.*make it weak, {...}:W" "$tmp/err" ||
		fail "hwc stat -e {$group}:u: $(cat "$tmp/err")"
	measured "without W: $(cat "$tmp/err")"
fi

# the loop's exact count, counted alone
hwc stat -x, -o "$tmp/alone" -e "${inst}:u" -- "$W" loop $L || fail "hwc stat ${inst}:u"
exact=$(awk -F, -v e="${inst}:u" '$3 == e { print $1 }' "$tmp/alone")

# with W: every member, each multiplexed and scaled from its own times
hwc stat -x, -o "$tmp/hwc" -e "{$group}:uW" -- "$W" loop $L 2>"$tmp/err" ||
	{ fail "hwc stat -e {$group}:uW: $(cat "$tmp/err")"; finish; }
grep -q "refused the weak group led by '$inst' ($n events)" "$tmp/err" ||
	fail "no note of the weak group's fallback: $(cat "$tmp/err")"
# value,unit,event,raw,enabled,running,percent
awk -F, -v n="$n" -v exact="$exact" -v inst="$inst" -v want="$(echo "$group" | tr ',' ' ')" '
	NF >= 7 && $1 ~ /^[0-9]+$/ {
		rows++; names = names (names == "" ? "" : " ") $3
		if ($6 + 0 <= 0) { print "FAIL: " $3 " never ran: " $0; bad = 1 }
		else {
			s = int($4 * $5 / $6)
			if (s != $1 && s + 1 != $1) { print "FAIL: " $3 ": " $1 " is not " $4 " * " $5 " / " $6; bad = 1 }
		}
		if ($6 + 0 < $5 + 0) short++
		run += $6; en += $5
		if ($3 == inst) {
			d = $1 - exact; if (d < 0) d = -d
			if (d > 0.02 * exact) { print "FAIL: inst_retired estimated " $1 ", exactly " exact; bad = 1 }
		}
	}
	END {
		if (rows != n || names != want) { print "FAIL: rows " names ", not " want; bad = 1 }
		if (!short || run >= en) { print "FAIL: nothing was multiplexed"; bad = 1 }
		printf "measured: {...}:uW, %d events, %d of them multiplexed, exact inst_retired:u %d:", rows, short, exact
		exit bad }' "$tmp/hwc" >"$tmp/check" || fails=$((fails + 1))
cat "$tmp/check"
awk -F, 'NF >= 7 && $1 ~ /^[0-9]+$/ { printf " %s %s (%s%%)", $3, $1, $7 } END { print "" }' "$tmp/hwc"

# perf 6.12: the same events, in the same order, and the same estimates
# within the multiplexing's spread (each run rotates the events anew)
if [ -x "$P" ]; then
	"$P" stat -x, -o "$tmp/perf" -e "{$group}:uW" -- "$W" loop $L || fail "perf stat {$group}:uW"
	awk -F, 'NR == FNR && NF >= 5 && $1 ~ /^[0-9]+$/ { p[++np] = $3; pv[np] = $1; pp[np] = $5; next }
		NF >= 7 && $1 ~ /^[0-9]+$/ { h[++nh] = $3; hv[nh] = $1 }
		END {
			if (np != nh) { print "FAIL: perf printed " np " events, hwc " nh; exit 1 }
			for (i = 1; i <= np; i++) {
				if (p[i] != h[i]) { print "FAIL: event " i ": perf " p[i] ", hwc " h[i]; bad = 1 }
				d = pv[i] - hv[i]; if (d < 0) d = -d
				if (d > 0.02 * (pv[i] > hv[i] ? pv[i] : hv[i]) + 0) { print "FAIL: " p[i] ": perf " pv[i] ", hwc " hv[i]; bad = 1 }
				if (pp[i] + 0 < 100) short++
				line = line " " p[i] " " pv[i] " (" pp[i] "%)"
			}
			if (!short) { print "FAIL: perf multiplexed nothing"; bad = 1 }
			print "measured: perf 6.12 {...}:uW:" line
			exit bad }' "$tmp/perf" "$tmp/hwc" >"$tmp/check" || fails=$((fails + 1))
	cat "$tmp/check"
else
	echo "skip perf 6.12 comparison: no perf 6.12 for arm64 in the suite (scripts/perf-arm64)"
fi

# sampling: refused as a group, recorded apart as a weak group
hwc record -e "{$group}:u" -c 100000 -o "$tmp/g.data" -- "$W" loop $L >/dev/null 2>"$tmp/err" &&
	fail "hwc record -e {$group}:u recorded a group the PMU refuses"
hwc record -e "{$group}:uW" -c 100000 -o "$tmp/w.data" -- "$W" loop $L >/dev/null 2>"$tmp/err" ||
	fail "hwc record -e {$group}:uW: $(cat "$tmp/err")"
perf evlist -g -i "$tmp/w.data" >"$tmp/evlist" 2>&1 || fail "perf evlist -g: $(cat "$tmp/evlist")"
[ "$(grep -c . "$tmp/evlist")" = "$n" ] && ! grep -q '{' "$tmp/evlist" ||
	fail "hwc record {...}:uW: perf evlist -g reads $(cat "$tmp/evlist")"
measured "hwc record {...}:uW: perf evlist -g: $(tr '\n' ' ' <"$tmp/evlist")"
finish
