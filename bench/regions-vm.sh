# Code regions on a real PMU: bench/regions in the emulated arm64 machine
# of scripts/pmu-vm, where hwc reads the counters in user space (mrs, with
# kernel.perf_user_access = 1) or with read(2), PAPI_hl (Debian's arm64
# libpapi, which reads with read(2) on arm64) and two raw read(2) calls,
# on instructions:u and cycles:u.  The guest's time is QEMU's: with -icount
# (the default) a guest nanosecond is one emulated instruction, so the
# ratios are of instructions executed, exceptions and system calls
# included, not of a real CPU's time.
# Run from the source tree: bash bench/regions-vm.sh [pmu-vm options]
# (needs `scripts/deps arm64`, which installs libpapi-dev:arm64; the guest
# gets libpapi.so.7.0 beside the program, not in its base).  PAPI turns its
# perf_event component off when kernel.perf_event_paranoid is 3 (Debian's
# default), even for root: the guest sets it to 2; and libpfm4 knows no
# PMU of QEMU's default CPU (max), so the machine is a Neoverse N1.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s ARCH=arm64 all build-arm64/bench/regions
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The program's RUNPATH is $ORIGIN/../lib: libpapi is found there, libhwc
# where pmu-vm installs it.
mkdir -p "$dir/regions-bench/bin" "$dir/regions-bench/lib"
cp build-arm64/bench/regions "$dir/regions-bench/bin/"
cp -P /usr/lib/aarch64-linux-gnu/libpapi.so.7.0* "$dir/regions-bench/lib/"
echo "== code regions in the emulated arm64 machine: ns per begin+end pair (guest time;" \
	"median of rounds, methods interleaved)"
scripts/pmu-vm --cpu neoverse-n1 "$@" --copy "$dir/regions-bench" -- sh -c \
	'taskset -p 1 $$ >/dev/null; mkdir -p out &&
	 echo 2 >/proc/sys/kernel/perf_event_paranoid && regions-bench/bin/regions out &&
	 echo "counted: hwc $(grep -o "\"calls\": [0-9]*" out/regions.json | tr "\n" " ")," \
		"PAPI $(cat out/papi_hl_output/*.json | grep -o "\"name\":\"r\"" | wc -l) records"' |
	tee "$dir/out"
get() { awk -v k="$1" -F'  +' '$1 == k { print $2 + 0 }' "$dir/out"; }
awk -v a="$(get 'hwc pair')" -v s="$(get 'hwc pair, read(2)')" -v b="$(get 'PAPI_hl pair')" \
	-v c="$(get 'raw 2 read(2), group')" 'BEGIN {
	printf "hwc / PAPI_hl: %.2f (target: <= 0.50); hwc with read(2) / PAPI_hl: %.2f;", a / b, s / b
	printf " hwc / raw read(2): %.2f\n", a / c }'
