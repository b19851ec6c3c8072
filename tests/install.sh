#!/usr/bin/env bash
# `make install PREFIX=...` as the README shows it: afterwards PREFIX/bin/hwc
# runs, the man pages render, and a client linked with the static libhwc.a
# and pkg-config's --static libraries counts.  Installs into a fresh
# temporary prefix, then uninstalls.  (Clients of the shared libraries:
# tests/compat_clients.sh.)
set -euo pipefail
: "${HWC_BUILD:?}" "${HWC_SRC:?}"
prefix=$(mktemp -d)/hwc
trap 'rm -rf "$(dirname "$prefix")"' EXIT
# Not part of the make that runs the suite: its own, without the jobserver.
run_make() { env -u MAKEFLAGS -u MFLAGS make -s -C "$HWC_SRC" BUILD="$HWC_BUILD" PREFIX="$prefix" "$@" >/dev/null; }
tree=/usr/local/share/hwc-test/events
events=
[[ -f $tree/x86/mapfile.csv ]] && events=EVENTS_DIR=$tree
run_make install $events
fail=0
for f in bin/hwc bin/hwc-serve include/hwc/hwc.h include/hwc/sample.h lib/libhwc.so lib/libhwc.so.0 lib/libhwc.a \
	lib/pkgconfig/libhwc.pc share/man/man1/hwc.1 share/man/man1/hwc-stat.1 share/man/man1/hwc-list.1 \
	share/man/man1/hwc-info.1 share/man/man1/hwc-script.1 share/man/man1/hwc-serve.1 share/man/man3/libhwc.3 share/man/man7/hwc-events.7; do
	[[ -e $prefix/$f ]] || { echo "missing after install: $f"; fail=1; }
done

# The installed tool runs from the prefix (it carries libhwc.a: nothing
# of the build tree), and the installed tools linked with libhwc.so find
# the installed library.
out=$("$prefix/bin/hwc" stat -x, -e page-faults -- "$HWC_BUILD/workloads/pagetouch" 300 2>&1)
faults=$(echo "$out" | awk -F, '$3 == "page-faults" { print $1 }')
[[ -n $faults && $faults -ge 300 ]] || { echo "installed hwc stat printed: $out"; fail=1; }
for tool in hwc hwc-serve; do
	libs=$(ldd "$prefix/bin/$tool") # not piped into grep -q: pipefail would see ldd's SIGPIPE
	[[ $libs != *"$HWC_BUILD"* && $libs != *"not found"* ]] ||
		{ echo "installed $tool loads libraries from elsewhere:"; echo "$libs"; fail=1; }
done
[[ $libs == *"libhwc.so.0 => $prefix/"* ]] ||
	{ echo "installed hwc-serve does not use the installed libhwc:"; echo "$libs"; fail=1; }
for m in hwc.1 hwc-stat.1 hwc-list.1 hwc-info.1 hwc-script.1; do
	man -l "$prefix/share/man/man1/$m" >/dev/null 2>&1 || { echo "$m does not render"; fail=1; }
done

# The installed tables are found next to the installed library, whatever
# PREFIX the build had (JSON model events encode without the hardware).
if [[ -n $events ]]; then
	[[ -f $prefix/share/hwc/events/x86/mapfile.csv ]] || { echo "EVENTS_DIR not installed"; fail=1; }
	out=$(env -u HWC_EVENTS_DIR XDG_DATA_HOME=/nonexistent "$prefix/bin/hwc" list -v amdzen5::ex_ret_brn 2>&1) ||
		{ echo "installed hwc does not find the installed JSON tables: $out"; fail=1; }
else
	echo "perf's JSON tables are not at $tree: make install EVENTS_DIR= not checked"
fi

san=
[[ $(readelf -d "$prefix/lib/libhwc.so.0") == *libasan* ]] && san="-fsanitize=address,undefined"
# A static client: libhwc.a plus its private dependencies.
cc $san -o "$prefix/client-static" "$HWC_SRC/tests/clients/hwc_example.c" -I"$prefix/include" "$prefix/lib/libhwc.a" \
	$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --static --libs-only-l libhwc | sed 's/-lhwc//')
[[ $("$prefix/client-static") == "ok 1" ]] || { echo "static client fails"; fail=1; }
# Only the documented API is exported.
bad=$(nm -D --defined-only "$prefix/lib/libhwc.so.0" | awk '$2 ~ /[TDBR]/ && $3 !~ /^hwc_/ { print $3 }' | grep -v '^HWC_0$' || true)
[[ -z $bad ]] || { echo "libhwc exports non-API symbols: $bad"; fail=1; }

run_make uninstall
left=$(find "$prefix" -path "$prefix/client*" -prune -o \( -type f -o -type l \) -print)
[[ -z $left ]] || { echo "left after uninstall:"; echo "$left"; fail=1; }
exit $fail
