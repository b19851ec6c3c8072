/* A libhwc client, built by tests/compat_clients.sh with nothing but
 *     cc hwc_example.c $(pkg-config --cflags --libs libhwc)
 * (and statically by tests/install.sh).  Counts its own page faults over
 * 4 MB it touches; prints "ok 1" when it saw at least 1000. */
#include <hwc/hwc.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	hwc_evlist *l;
	hwc_counters *c;
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	if (hwc_evlist_new(&l) || hwc_evlist_add(l, "page-faults") || hwc_counters_open(&c, l, &t) ||
	    hwc_counters_start(c)) {
		fprintf(stderr, "%s\n", hwc_errdetail());
		return 1;
	}
	volatile char *p = malloc(1 << 22);
	for (int i = 0; i < (1 << 22); i += 4096)
		p[i] = 1;
	struct hwc_value v;
	if (hwc_counters_read(c) || hwc_counters_value(c, HWC_ALL, 0, &v))
		return 2;
	printf("ok %d\n", v.raw >= 1000);
	free((void *)p);
	hwc_counters_close(c);
	hwc_evlist_free(l);
	return 0;
}
