#!/usr/bin/env bash
# OpenBSD pctr(4) and FreeBSD perfmon(4) clients built the way the manual
# pages say, against a real `make install`: nothing but
#     cc prog.c $(pkg-config --cflags --libs pctr)      (or perfmon)
# plain, with -O2 -D_FORTIFY_SOURCE=2 (glibc's __open_2 entry points), and
# with -D_FILE_OFFSET_BITS=64 too (open64, __open64_2); then run.
set -u
cd "$HWC_SRC"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

prefix=$tmp/prefix
if ! make -s --no-print-directory BUILD="$HWC_BUILD" PREFIX="$prefix" install >"$tmp/log" 2>&1; then
	cat "$tmp/log"
	echo "FAIL: make install PREFIX=$prefix"
	exit 1
fi
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
for f in include/hwc-compat/machine/pctr.h include/hwc-compat/machine/perfmon.h \
	include/hwc-compat/machine/cpu.h lib/libpctr.so lib/libperfmon.so \
	lib/pkgconfig/pctr.pc lib/pkgconfig/perfmon.pc bin/pctr \
	share/man/man4/pctr.4 share/man/man4/perfmon.4 share/man/man1/pctr.1; do
	[[ -e $prefix/$f ]] || bad "make install did not install $f"
done
grep -qx "prefix=$prefix" "$prefix/lib/pkgconfig/pctr.pc" || bad "pctr.pc does not name the install prefix"

# A sanitized build's libraries need the sanitizer runtime in the client too.
san=
if readelf -d "$prefix/lib/libpctr.so" | grep -q 'libasan'; then
	san=-fsanitize=address,undefined
fi

variants=("" "-O2 -D_FORTIFY_SOURCE=2" "-O2 -D_FORTIFY_SOURCE=2 -D_FILE_OFFSET_BITS=64")
entry=(open __open_2 __open64_2) # the entry point each variant's variable-flags open() calls
for i in "${!variants[@]}"; do
	flags=${variants[$i]}
	for lib in pctr perfmon; do
		exe=$tmp/${lib}_$i
		# shellcheck disable=SC2046,SC2086
		if ! cc $san $flags -o "$exe" "tests/clients/${lib}_example.c" \
			$(pkg-config --cflags --libs "$lib") 2>"$tmp/cc.log"; then
			bad "cc ${lib}_example.c $flags \$(pkg-config --cflags --libs $lib):"
			cat "$tmp/cc.log"
		fi
	done
	nm -u "$tmp/pctr_$i" | grep -qw "${entry[$i]}" ||
		bad "variant '$flags' does not call ${entry[$i]}, so it does not test it"
done

pmu=0
[[ -e /sys/bus/event_source/devices/cpu || -e /sys/bus/event_source/devices/cpu_core ]] && pmu=1

for i in "${!variants[@]}"; do
	out=$("$tmp/pctr_$i" 100000 2>&1)
	rc=$?
	[[ $rc -eq 0 ]] || bad "pctr_example (${variants[$i]}) exited $rc: $out"
	grep -Eq '^Functionx took [1-9][0-9]* cycles\.$' <<<"$out" || bad "no rdtsc() timing: $out"
	grep -qx 'tsc advances' <<<"$out" || bad "PCIOCRD's TSC does not advance: $out"
	grep -qx 'read-only PCIOCS0: Operation not permitted' <<<"$out" || bad "no EPERM: $out"
	if ((pmu)); then
		grep -Eq '^PCIOCS0: counted [1-9][0-9]* instructions' <<<"$out" || bad "no count: $out"
	else
		grep -qx 'PCIOCS0: No such device' <<<"$out" || bad "no ENODEV without a PMU: $out"
	fi

	out=$("$tmp/perfmon_$i" -u -l 3 0xc0 2>&1)
	rc=$?
	grep -Eq '^TSC rate: [1-9][0-9]* MHz$' <<<"$out" || bad "no PMIOTSTAMP rate: $out"
	if ((pmu)); then
		[[ $rc -eq 0 ]] || bad "perfmon_example exited $rc: $out"
		grep -Eq '^total: [1-9]' <<<"$out" || bad "nothing counted: $out"
		grep -Eq '^clocks \(at [1-9][0-9]*-MHz\): [1-9]' <<<"$out" || bad "no clocks: $out"
	else
		[[ $rc -eq 1 ]] || bad "perfmon_example exited $rc without a PMU: $out"
		grep -q 'ioctl(PMIOSETUP): No such device' <<<"$out" || bad "no ENODEV: $out"
	fi
	out=$("$tmp/perfmon_$i" -u 2>&1)
	[[ $? -eq 1 ]] && grep -q '^usage:' <<<"$out" || bad "perfmon_example without an event: $out"
done
((fail)) && exit 1
echo "pctr and perfmon clients built with pkg-config (${#variants[@]} ways) and ran"
exit 0
