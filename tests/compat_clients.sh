#!/usr/bin/env bash
# Clients of every package `make install` ships, built the way the manual
# pages say against a real install in a fresh prefix, and built and run in a
# clean environment (env -i: no LD_LIBRARY_PATH; PKG_CONFIG_PATH only to
# find the prefix), so a package whose .pc file leaves out the run path
# fails here as it would for a user:
#     cc prog.c $(pkg-config --cflags --libs PKG)
# for libhwc, libcpc, libpctx, libpmc, pctr and perfmon, whose versions are
# all hwc --version's.  pctr and perfmon clients are built three ways: plain,
# with -O2 -D_FORTIFY_SOURCE=2 (glibc's __open_2 entry points), and with
# -D_FILE_OFFSET_BITS=64 too (open64, __open64_2).
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
clean() { env -i PATH=/usr/bin:/bin "$@"; }
pkgconf() { clean PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config "$@"; }
for f in include/hwc-compat/machine/pctr.h include/hwc-compat/machine/perfmon.h \
	include/hwc-compat/machine/cpu.h lib/libpctr.so lib/libperfmon.so \
	lib/pkgconfig/pctr.pc lib/pkgconfig/perfmon.pc bin/pctr \
	share/man/man4/pctr.4 share/man/man4/perfmon.4 share/man/man1/pctr.1; do
	[[ -e $prefix/$f ]] || bad "make install did not install $f"
done
grep -qx "prefix=$prefix" "$prefix/lib/pkgconfig/pctr.pc" || bad "pctr.pc does not name the install prefix"

# One version: each package's is hwc --version's.
version=$("$prefix/bin/hwc" --version)
version=${version#hwc }
[[ $version =~ ^[0-9]+(\.[0-9]+)+$ ]] || bad "hwc --version says '$version'"
for pkg in libhwc libcpc libpctx libpmc pctr perfmon; do
	v=$(pkgconf --modversion "$pkg" 2>&1)
	[[ $v == "$version" ]] || bad "pkg-config --modversion $pkg: '$v', hwc --version: '$version'"
done

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
		if ! clean cc $san $flags -o "$exe" "tests/clients/${lib}_example.c" \
			$(pkgconf --cflags --libs "$lib") 2>"$tmp/cc.log"; then
			bad "cc ${lib}_example.c $flags \$(pkg-config --cflags --libs $lib):"
			cat "$tmp/cc.log"
		fi
	done
	nm -u "$tmp/pctr_$i" | grep -qw "${entry[$i]}" ||
		bad "variant '$flags' does not call ${entry[$i]}, so it does not test it"
done

# The libraries' own clients: one way each, with what each prints.
declare -A expect=([hwc]="ok 1" [cpc]="ok 1" [pctx]="ok 1 1" [pmc]="ok 1 1 1")
for lib in hwc cpc pctx pmc; do
	# shellcheck disable=SC2046,SC2086
	if ! clean cc $san -o "$tmp/$lib" "tests/clients/${lib}_example.c" \
		$(pkgconf --cflags --libs "lib$lib") 2>"$tmp/cc.log"; then
		bad "cc ${lib}_example.c \$(pkg-config --cflags --libs lib$lib):"
		cat "$tmp/cc.log"
		continue
	fi
	out=$(clean "$tmp/$lib" 2>&1)
	[[ $out == "${expect[$lib]}" ]] || bad "${lib}_example (built with lib$lib.pc) printed: $out"
done

pmu=0
[[ -e /sys/bus/event_source/devices/cpu || -e /sys/bus/event_source/devices/cpu_core ]] && pmu=1

for i in "${!variants[@]}"; do
	# Its own helper name: a whole-CPU pctr(4) helper is machine-wide.
	out=$(clean HWC_PCTR_SOCKET="hwc-pctr-test-$$" "$tmp/pctr_$i" 100000 2>&1)
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

	out=$(clean "$tmp/perfmon_$i" -u -l 3 0xc0 2>&1)
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
	out=$(clean "$tmp/perfmon_$i" -u 2>&1)
	[[ $? -eq 1 ]] && grep -q '^usage:' <<<"$out" || bad "perfmon_example without an event: $out"
done
((fail)) && exit 1
echo "libhwc, libcpc, libpctx and libpmc clients, pctr and perfmon clients (${#variants[@]} ways)"
echo "built with pkg-config and run with env -i"
exit 0
