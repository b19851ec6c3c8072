/* What libcpc reports about this machine.  TEMPORARY: until the listinfo
 * API (hwc_cpu_info, hwc_events_walk, hwc_tsc_hz, hwc_event_probe) is on
 * main, this knows only what the counting API can tell. */
#include "cpc_impl.h"

#include <errno.h>
#include <hwc/hwc.h>
#include <stdio.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

int cpc__probe(const char *spec, char *detail, size_t size)
{
	hwc_evlist *l;
	int err = hwc_evlist_new(&l);
	if (!err)
		err = hwc_evlist_add(l, spec);
	for (size_t i = 0; !err && i < hwc_evlist_size(l); i++) {
		hwc_evlist_attr(l, i)->exclude_kernel = 1;
		hwc_evlist_attr(l, i)->exclude_hv = 1;
	}
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT | HWC_NO_FALLBACK};
	hwc_counters *c = NULL;
	if (!err)
		err = hwc_counters_open(&c, l, &t);
	if (err)
		snprintf(detail, size, "%s", hwc_errdetail());
	hwc_counters_close(c);
	hwc_evlist_free(l);
	return err;
}

int cpc__machine(struct cpc_machine *m)
{
	char detail[256];
	m->npic = cpc__probe("cycles", detail, sizeof(detail)) == 0 ? 4 : 0;
#if defined(__x86_64__) || defined(__i386__)
	m->x86 = true;
	unsigned a, b, c, d;
	if (__get_cpuid(0, &a, &b, &c, &d))
		m->intel = b == 0x756e6547; /* "Genu" */
#endif
	snprintf(m->cciname, sizeof(m->cciname), "%s",
		 m->npic ? "core PMU" : "no hardware PMU (Linux software events only)");
	snprintf(m->cpuref, sizeof(m->cpuref), "See perf_event_open(2) and `hwc list`.");
	m->tsc_hz = 0;
	return 0;
}

void cpc__walk_native(void (*fn)(void *arg, const char *name), void *arg)
{
	(void)fn, (void)arg;
}

void cpc__walk_software(void (*fn)(void *arg, const char *name), void *arg)
{
	static const char *const names[] = {"task-clock", "cpu-clock", "page-faults",
					    "context-switches", "cpu-migrations", "minor-faults",
					    "major-faults"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fn(arg, names[i]);
}
