#!/usr/bin/env bash
# make install puts libcpc and libpctx where a client finds them: headers,
# libcpc.so.1 and libpctx.so.1, their pkg-config files, cputrack, cpustat
# and the manual pages; a program built with the installed pkg-config
# files then counts.  Installs into a temporary DESTDIR.
set -euo pipefail
source "$(dirname "$0")/destdir.bash"
expect_installed include/libcpc.h include/libpctx.h lib/libcpc.so.1 lib/libcpc.so lib/libpctx.so.1 \
	lib/libpctx.so lib/pkgconfig/libcpc.pc lib/pkgconfig/libpctx.pc bin/cputrack bin/cpustat \
	share/man/man3/libcpc.3 share/man/man3/libpctx.3 share/man/man3/cpc_bind_curlwp.3 \
	share/man/man3/pctx_capture.3 share/man/man1/cputrack.1 share/man/man8/cpustat.8
grep -q "^prefix=$prefix\$" "$root/lib/pkgconfig/libcpc.pc" || { echo "libcpc.pc: wrong prefix"; fail=1; }

cat >"$dest/client.c" <<'C'
#include <libcpc.h>
#include <stdio.h>
int main(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_set_t *set = cpc ? cpc_set_create(cpc) : NULL;
	if (!set || cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER, 0, NULL) != 0)
		return 1;
	cpc_buf_t *buf = cpc_buf_create(cpc, set);
	uint64_t v = 0;
	if (cpc_bind_curlwp(cpc, set, 0) || cpc_set_sample(cpc, set, buf) ||
	    cpc_buf_get(cpc, buf, 0, &v))
		return 2;
	printf("ok %d\n", v > 0);
	return cpc_close(cpc);
}
C
flags=$(PKG_CONFIG_PATH=$root/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest \
	pkg-config --cflags --libs libcpc libpctx)
san=$(sanitize_like "$root/lib/libcpc.so.1")
cc $san -o "$dest/client" "$dest/client.c" $flags
out=$(LD_LIBRARY_PATH=$root/lib "$dest/client")
[[ $out == "ok 1" ]] || { echo "installed client says '$out'"; fail=1; }
# The installed tools find their libraries next to them.
"$root/bin/cputrack" -c task-clock true >/dev/null || { echo "installed cputrack fails"; fail=1; }
man -l "$root/share/man/man3/libcpc.3" >/dev/null 2>&1 || { echo "libcpc.3 does not render"; fail=1; }

expect_uninstalled
exit $fail
