#!/usr/bin/env bash
# make install puts libcpc and libpctx where a client finds them: headers,
# libcpc.so.1 and libpctx.so.1, their pkg-config files, cputrack, cpustat
# and the manual pages.  Installs into a temporary DESTDIR.  (Clients built
# with the installed pkg-config files: tests/compat_clients.sh.)
set -euo pipefail
source "$(dirname "$0")/destdir.bash"
expect_installed include/libcpc.h include/libpctx.h lib/libcpc.so.1 lib/libcpc.so lib/libpctx.so.1 \
	lib/libpctx.so lib/pkgconfig/libcpc.pc lib/pkgconfig/libpctx.pc bin/cputrack bin/cpustat \
	share/man/man3/libcpc.3 share/man/man3/libpctx.3 share/man/man3/cpc_bind_curlwp.3 \
	share/man/man3/pctx_capture.3 share/man/man1/cputrack.1 share/man/man8/cpustat.8
grep -q "^prefix=$prefix\$" "$root/lib/pkgconfig/libcpc.pc" || { echo "libcpc.pc: wrong prefix"; fail=1; }

# The installed tools find their libraries next to them.
"$root/bin/cputrack" -c task-clock true >/dev/null || { echo "installed cputrack fails"; fail=1; }
man -l "$root/share/man/man3/libcpc.3" >/dev/null 2>&1 || { echo "libcpc.3 does not render"; fail=1; }

expect_uninstalled
exit $fail
