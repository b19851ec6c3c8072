#!/usr/bin/env bash
# make install puts libpmc where a FreeBSD program finds it: <pmc.h> and
# <pmclog.h>, libpmc.so.1, libpmc.pc, pmcstat, pmccontrol and the manual
# pages (pmc_*(3) and pmclog_*(3) lead to pmc(3) and pmclog(3)).  Installs
# into a temporary DESTDIR, then uninstalls.  (A client built with the
# installed pkg-config file: tests/compat_clients.sh.)
set -euo pipefail
source "$(dirname "$0")/destdir.bash"
expect_installed include/pmc.h include/pmclog.h lib/libpmc.so.1 lib/libpmc.so lib/pkgconfig/libpmc.pc \
	bin/pmcstat bin/pmccontrol share/man/man3/pmc.3 share/man/man3/pmclog.3 \
	share/man/man3/pmc_allocate.3 share/man/man3/pmc_rw.3 share/man/man3/pmclog_read.3 \
	share/man/man8/pmcstat.8 share/man/man8/pmccontrol.8
grep -q "^prefix=$prefix\$" "$root/lib/pkgconfig/libpmc.pc" || { echo "libpmc.pc: wrong prefix"; fail=1; }

# The installed tools find their libraries next to them.
out=$("$root/bin/pmcstat" -p page-faults -- "$HWC_BUILD/workloads/pagetouch" 500 2>&1)
[[ $out == *p/page-faults* ]] || { echo "installed pmcstat printed: $out"; fail=1; }
"$root/bin/pmccontrol" -L | grep -qx 'SOFT' || { echo "installed pmccontrol -L lists no SOFT"; fail=1; }
# Every function's page leads to the library's page.
for f in pmc_allocate pmc_rw pmc_get_msr pmclog_read; do
	page=$(MANWIDTH=80 man -M "$root/share/man" "$f" 2>/dev/null || true)
	[[ $page == *"$f"* && $page == *SYNOPSIS* ]] || { echo "man $f does not show its page"; fail=1; }
done
for m in man3/pmc.3 man3/pmclog.3 man8/pmcstat.8 man8/pmccontrol.8; do
	man -l "$root/share/man/$m" >/dev/null 2>&1 || { echo "$m does not render"; fail=1; }
done

expect_uninstalled
exit $fail
