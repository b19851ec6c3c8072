#!/usr/bin/env bash
# Fuzz the perf.data reader with libFuzzer (clang) for a bounded time,
# starting from the seed corpus of real recordings in tests/fuzz/corpus.
# HWC_FUZZ_SECONDS sets the budget (default 60).  Skips, with the reason,
# where clang's libFuzzer runtime is missing (scripts/deps installs it).
set -u
cd "$(dirname "$0")/.."
: "${HWC_BUILD:=$PWD/build}"
out=$HWC_BUILD/fuzz
mkdir -p "$out"
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
# The library's sources go straight into the harness, instrumented.
clang -std=gnu11 -g -O1 -Iinclude -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Wall -Werror -Wno-unused-command-line-argument \
	src/*.c tests/fuzz/perfdata_fuzz.c -o "$out/perfdata_fuzz" -lpfm -ldw -lelf -lz -lzstd -liberty -lpthread ||
	{ echo "building the fuzzer failed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp tests/fuzz/corpus/* "$work/"
seeds=$(ls tests/fuzz/corpus | wc -l)
if ((seeds == 0)); then
	echo "the seed corpus tests/fuzz/corpus is empty" >&2
	exit 1
fi
cd "$out" || exit 1
"$out/perfdata_fuzz" -max_total_time="${HWC_FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=2048 \
	-max_len=65536 -print_final_stats=1 "$work" 2>"$out/fuzz.log"
rc=$?
tail -n 25 "$out/fuzz.log" >&2
if ((rc != 0)); then
	echo "the fuzzer found a crash, leak or hang (exit $rc); the input is in $out (crash-*, leak-*, timeout-*)" >&2
	exit 1
fi
grep -q "stat::number_of_executed_units" "$out/fuzz.log" || { echo "the fuzzer did not run" >&2; exit 1; }
echo "fuzzed $seeds seeds for ${HWC_FUZZ_SECONDS:-60}s without a finding" >&2
exit 0
