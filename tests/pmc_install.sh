#!/usr/bin/env bash
# make install puts libpmc where a FreeBSD program finds it: <pmc.h> and
# <pmclog.h>, libpmc.so.1, libpmc.pc, pmcstat, pmccontrol and the manual
# pages (pmc_*(3) and pmclog_*(3) lead to pmc(3) and pmclog(3)); a program
# built with the installed pkg-config file counts and reads its log.
# Installs into a temporary DESTDIR, then uninstalls.
set -euo pipefail
source "$(dirname "$0")/destdir.bash"
expect_installed include/pmc.h include/pmclog.h lib/libpmc.so.1 lib/libpmc.so lib/pkgconfig/libpmc.pc \
	bin/pmcstat bin/pmccontrol share/man/man3/pmc.3 share/man/man3/pmclog.3 \
	share/man/man3/pmc_allocate.3 share/man/man3/pmc_rw.3 share/man/man3/pmclog_read.3 \
	share/man/man8/pmcstat.8 share/man/man8/pmccontrol.8
grep -q "^prefix=$prefix\$" "$root/lib/pkgconfig/libpmc.pc" || { echo "libpmc.pc: wrong prefix"; fail=1; }

cat >"$dest/client.c" <<'C'
#include <fcntl.h>
#include <pmc.h>
#include <pmclog.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void)
{
	pmc_id_t id;
	pmc_value_t v = 0;
	FILE *log = tmpfile();
	if (pmc_init() < 0 || pmc_configure_logfile(fileno(log)) < 0 ||
	    pmc_allocate("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) < 0 || pmc_start(id) < 0)
		return 1;
	volatile char *p = mmap(NULL, 300 * 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 300; i++)
		p[i * 4096] = 1;
	if (pmc_read(id, &v) < 0 || pmc_writelog(42) < 0 || pmc_close_logfile() < 0)
		return 2;
	lseek(fileno(log), 0, SEEK_SET);
	void *parser = pmclog_open(fileno(log));
	struct pmclog_ev ev;
	int user = 0;
	while (pmclog_read(parser, &ev) == 0)
		user += ev.pl_type == PMCLOG_TYPE_USERDATA && ev.pl_u.pl_u.pl_userdata == 42;
	printf("ok %d %d %d\n", v >= 300, user, ev.pl_state == PMCLOG_EOF);
	pmclog_close(parser);
	return pmc_release(id);
}
C
flags=$(PKG_CONFIG_PATH=$root/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags --libs libpmc)
san=$(sanitize_like "$root/lib/libpmc.so.1")
cc $san -o "$dest/client" "$dest/client.c" $flags
out=$(LD_LIBRARY_PATH=$root/lib "$dest/client")
[[ $out == "ok 1 1 1" ]] || { echo "installed client says '$out'"; fail=1; }
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
