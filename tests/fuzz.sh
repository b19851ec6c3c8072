#!/usr/bin/env bash
# Fuzz libhwc's readers of untrusted input with libFuzzer (clang), each for
# a bounded time: the perf.data reader (seeds: the real recordings in
# tests/fuzz/corpus/perfdata), the metric expression engine and perf's JSON
# event tables (seeds: cut from perf's tree, $HWC_EVENTS_DIR or
# /usr/local/share/hwc-test/events, by tests/fuzz/seeds.py).
# HWC_FUZZ_SECONDS is the budget of the whole run (default 60), shared
# equally by the targets.  Skips, with the reason, where clang's libFuzzer
# runtime is missing (scripts/deps installs it); a target whose seeds are
# missing is skipped alone, saying so.
set -u
cd "$(dirname "$0")/.."
: "${HWC_BUILD:=$PWD/build}"
out=$HWC_BUILD/fuzz
tree=${HWC_EVENTS_DIR:-/usr/local/share/hwc-test/events}
targets=(perfdata metric_expr json_tables)
mkdir -p "$out/obj"
if ! command -v clang >/dev/null; then
	echo "SKIP: clang is not installed (scripts/deps installs clang and libclang-rt-14-dev)" >&2
	exit 77
fi
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
	>"$out/probe.c"
if ! clang -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" 2>"$out/probe.log"; then
	echo "SKIP: clang has no libFuzzer runtime here: $(head -1 "$out/probe.log")" >&2
	exit 77
fi
# The library's sources, instrumented, compiled once and linked into each harness.
cflags=(-std=gnu11 -g -O1 -Iinclude -Isrc -D_GNU_SOURCE -fno-sanitize-recover=all -Wall -Werror
	-Wno-unused-command-line-argument)
for src in src/*.c; do
	clang "${cflags[@]}" -fsanitize=fuzzer-no-link,address,undefined -c "$src" \
		-o "$out/obj/$(basename "$src" .c).o" ||
		{ echo "building the fuzzers failed ($src)" >&2; exit 1; }
done
seconds=$(( ${HWC_FUZZ_SECONDS:-60} / ${#targets[@]} ))
((seconds > 0)) || seconds=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ran=0
for t in "${targets[@]}"; do
	seeds=$work/$t
	mkdir -p "$seeds"
	case $t in
	perfdata) cp tests/fuzz/corpus/perfdata/* "$seeds/" ;;
	*) if [[ ! -d $tree/x86 ]]; then
		   echo "skip  $t"
		   echo "$t: skipped: no JSON event tree at $tree to seed it (scripts/deps extracts it)" >&2
		   continue
	   fi
	   python3 tests/fuzz/seeds.py "$t" "$tree" "$seeds" || { echo "$t: no seeds" >&2; exit 1; } ;;
	esac
	nseeds=$(ls "$seeds" | wc -l)
	if ((nseeds == 0)); then
		echo "the seed corpus of $t is empty" >&2
		exit 1
	fi
	dict=()
	[[ -f tests/fuzz/$t.dict ]] && dict=(-dict="$PWD/tests/fuzz/$t.dict")
	clang "${cflags[@]}" -fsanitize=fuzzer,address,undefined "$out"/obj/*.o \
		"tests/fuzz/${t}_fuzz.c" -o "$out/${t}_fuzz" \
		-lpfm -ldw -lelf -lz -lzstd -liberty -lpthread -lm ||
		{ echo "building the $t fuzzer failed" >&2; exit 1; }
	log=$out/$t.log
	(cd "$out" && "$out/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 "${dict[@]}" "$seeds" 2>"$log")
	rc=$?
	tail -n 12 "$log" >&2
	if ((rc != 0)); then
		echo "FAIL  $t: the fuzzer found a crash, leak or hang (exit $rc); the input is in $out (crash-*, leak-*, timeout-*)" >&2
		exit 1
	fi
	grep -q "stat::number_of_executed_units" "$log" || { echo "the $t fuzzer did not run" >&2; exit 1; }
	echo "ok    $t: $nseeds seeds, $(sed -n 's/^stat::number_of_executed_units: *//p' "$log") runs in ${seconds}s, no finding"
	ran=$((ran + 1))
done
((ran)) || { echo "SKIP: no target could run" >&2; exit 77; }
exit 0
