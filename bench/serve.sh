#!/usr/bin/env bash
# hwc serve vs Debian's prometheus-node-exporter (1.5) with only its perf
# collector: 10 scrapers (bench/scrape: kept-alive connections, back to
# back) on loopback for SECS seconds each, per round; the agents take turns
# within a round.  Per agent: scrapes, latency median and p99, CPU
# (utime+stime of /proc/PID/stat) per scrape, RSS (VmHWM, VmRSS).
# The events are the software ones node_exporter's perf collector counts
# without a PMU (its hardware and cache profilers count nothing here):
# page-faults, context-switches, cpu-migrations, minor-faults, major-faults,
# per CPU; node_exporter has no cpu-clock/task-clock and no per-cgroup mode,
# so hwc at 1, 100 and 500 --cgroups (empty test cgroups: a cgroup's read
# costs the same whether its tasks ran) is compared with its per-CPU page.
# hwc takes the events as one group ({...}): one read(2) per cgroup and CPU
# instead of one per event.
# Targets: latency and CPU <= 0.5x node_exporter's, RSS <= 0.5x, p99 at
# 500 cgroups < 50 ms.  Needs root and a writable cgroup2 hierarchy.
# Usage: bench/serve.sh [secs [rounds]]   (default 15 s, 2 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${HWC_BUILD:=$PWD/build}"
secs=${1:-15}
rounds=${2:-2}
clients=10
events=page-faults,context-switches,cpu-migrations,minor-faults,major-faults
ne=prometheus-node-exporter
if ! command -v $ne >/dev/null; then
	echo "== hwc serve vs node_exporter: skipped, $ne is not installed (scripts/deps installs it)"
	exit 0
fi
if [[ ! -x $HWC_BUILD/bench/scrape ]]; then
	echo "bench/serve.sh: $HWC_BUILD/bench/scrape is missing: run it through 'make bench', or 'make $HWC_BUILD/bench/scrape' first" >&2
	exit 1
fi
v2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
rel=${own#/}${own:+/}hwc-bench-$$
rel=${rel#/}
if [[ $(id -u) -ne 0 || -z $v2 ]] || ! mkdir "$v2/$rel" 2>/dev/null; then
	echo "== hwc serve vs node_exporter: skipped, needs root and a writable cgroup2 hierarchy"
	exit 0
fi
work=$(mktemp -d)
agent=
cleanup() {
	[[ -n $agent ]] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	for d in "$v2/$rel"/c*; do [[ -d $d ]] && rmdir "$d"; done
	rmdir "$v2/$rel"
	rm -rf "$work"
}
trap cleanup EXIT
for i in $(seq -w 0 499); do mkdir "$v2/$rel/c$i"; done

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# measure NAME COMMAND...: start the agent on $port, wait for its first
# page, scrape; prints "scrapes median p99 cpu_ms_per_scrape hwm rss bytes".
measure() {
	local name=$1
	shift
	"$@" >"$work/log" 2>&1 &
	agent=$!
	local i
	for ((i = 0; i < 100; i++)); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && break
		sleep 0.1
	done
	local t0 out
	t0=$(ticks $agent)
	out=$("$HWC_BUILD/bench/scrape" "$port" "$secs" "$clients") || {
		echo "$name: scraping failed" >&2
		cat "$work/log" >&2
		exit 1
	}
	local t1 hwm rss
	t1=$(ticks $agent)
	hwm=$(status_kib $agent VmHWM)
	rss=$(status_kib $agent VmRSS)
	kill $agent
	wait $agent || true
	agent=
	read -r n med p99 bytes errors <<<"$out"
	[[ $errors -eq 0 ]] || echo "$name: $errors failed scrapes" >&2
	awk -v n="$n" -v med="$med" -v p99="$p99" -v dt=$((t1 - t0)) \
		-v hz="$(getconf CLK_TCK)" -v hwm="$hwm" -v rss="$rss" -v bytes="$bytes" \
		'BEGIN { printf "%d %.3f %.3f %.4f %d %d %d\n", n, med, p99, dt / hz * 1000 / n, hwm, rss, bytes }'
}

echo "== hwc serve vs node_exporter --collector.perf: $clients scrapers, $secs s each, $rounds rounds"
echo "   events: $events, per CPU ($(nproc) CPUs); the machine is shared (loaded)"
printf '%-5s %-18s %8s %9s %9s %11s %9s %9s %9s   %s\n' round agent scrapes "med ms" "p99 ms" \
	"CPU ms/scr" "HWM KiB" "RSS KiB" "page B" "ratios to node_exporter: med p99 CPU HWM"
for ((r = 1; r <= rounds; r++)); do
	port=$(free_port)
	measure node_exporter $ne --collector.disable-defaults --collector.perf --web.disable-exporter-metrics \
		--web.listen-address=127.0.0.1:$port >"$work/ne"
	read -r ne_n ne_med ne_p99 ne_cpu ne_hwm ne_rss ne_bytes <"$work/ne"
	printf '%-5s %-18s %8d %9.3f %9.3f %11.4f %9d %9d %9d\n' "$r" node_exporter "$ne_n" "$ne_med" "$ne_p99" \
		"$ne_cpu" "$ne_hwm" "$ne_rss" "$ne_bytes"
	for spec in "1 cgroup:c000" "100 cgroups:c0[0-9][0-9]" "500 cgroups:c*"; do
		port=$(free_port)
		measure "hwc, ${spec%%:*}" "$HWC_BUILD/bin/hwc" serve --listen "127.0.0.1:$port" -e "{$events}" \
			--cgroups "$rel/${spec#*:}" --max-cgroups 1000 >"$work/hwc"
		read -r n med p99 cpu hwm rss bytes <"$work/hwc"
		awk -v r="$r" -v name="hwc, ${spec%%:*}" -v n="$n" -v med="$med" -v p99="$p99" -v cpu="$cpu" \
			-v hwm="$hwm" -v rss="$rss" -v bytes="$bytes" -v nmed="$ne_med" -v np99="$ne_p99" \
			-v ncpu="$ne_cpu" -v nhwm="$ne_hwm" 'BEGIN {
			printf "%-5s %-18s %8d %9.3f %9.3f %11.4f %9d %9d %9d   %.2f %.2f %.2f %.2f\n",
				r, name, n, med, p99, cpu, hwm, rss, bytes, med / nmed, p99 / np99, cpu / ncpu, hwm / nhwm }'
	done
done
echo "targets: med, p99, CPU <= 0.5 and HWM <= 0.5 of node_exporter's; p99 at 500 cgroups < 50 ms"
