/* What libcpc says about this machine, from libhwc's machine and listing
 * API: counters only when the kernel exposes a core PMU, native events of
 * the libpfm4 model detected here, Linux software events, the TSC rate,
 * the attributes a request may set. */
#include "cpc_impl.h"

#include <errno.h>
#include <hwc/hwc.h>
#include <stdio.h>
#include <string.h>

int cpc__probe(const char *spec, char *detail, size_t size)
{
	int err = hwc_event_probe(spec, NULL);
	if (err)
		snprintf(detail, size, "%s", hwc_errdetail());
	return err;
}

static void count_one(void *arg, const char *name)
{
	(void)name;
	++*(unsigned *)arg;
}

int cpc__machine(struct cpc_machine *m)
{
	struct hwc_cpu_info ci;
	int err = hwc_cpu_info(&ci);
	if (err)
		return err;
	/* illumos counts fixed-function counters as pics too; the NMI
	 * watchdog's counter is not accessible. */
	if (ci.core_pmu)
		m->hwpic = (unsigned)(ci.counters - (ci.watchdog_counter ? 1 : 0) + ci.fixed);
	/* Programs such as cputrack place each event of a set on its own pic,
	 * found with cpc_walk_events_pic(): software events need pics too, as
	 * many as there are, so that one set can hold all of them. */
	unsigned nsoft = 0;
	cpc__walk_software(count_one, &nsoft);
	m->npic = m->hwpic > nsoft ? m->hwpic : nsoft;
#if defined(__x86_64__) || defined(__i386__)
	m->x86 = true;
#endif
	m->intel = ci.vendor_id == HWC_VENDOR_INTEL;
	const char *cpu = ci.brand[0] ? ci.brand : ci.vendor;
	if (!ci.core_pmu)
		snprintf(m->cciname, sizeof(m->cciname),
			 "no hardware PMU (Linux software events only) on %s", cpu);
	else if (ci.pfm_desc[0])
		snprintf(m->cciname, sizeof(m->cciname), "%s (%s)", ci.pfm_desc, cpu);
	else
		snprintf(m->cciname, sizeof(m->cciname), "%s PMU (%s)", ci.core_pmu_name, cpu);
	if (m->intel)
		snprintf(m->cpuref, sizeof(m->cpuref),
			 "See the \"Performance Monitoring\" chapters of the Intel 64 and IA-32 "
			 "Architectures Software Developer's Manual, Volume 3, and the event list of "
			 "`hwc list%s%s`.",
			 ci.pfm_model[0] ? " --pmu " : "", ci.pfm_model);
	else if (ci.vendor_id == HWC_VENDOR_AMD)
		snprintf(m->cpuref, sizeof(m->cpuref),
			 "See the \"Performance Monitor Counters\" section of the AMD64 Architecture "
			 "Programmer's Manual, Volume 2, the Processor Programming Reference for "
			 "family %xh, and the event list of `hwc list%s%s`.",
			 ci.family, ci.pfm_model[0] ? " --pmu " : "", ci.pfm_model);
	else if (ci.vendor_id == HWC_VENDOR_ARM)
		snprintf(m->cpuref, sizeof(m->cpuref),
			 "See the \"Performance Monitors Extension\" chapter of the Arm Architecture "
			 "Reference Manual for A-profile, the PMU events of the core's Technical "
			 "Reference Manual, and the event list of `hwc list --pmu %s`.",
			 ci.core_pmu ? (ci.pfm_model[0] ? ci.pfm_model : ci.core_pmu_name) : "armv8_pmuv3");
	else
		snprintf(m->cpuref, sizeof(m->cpuref),
			 "See the processor's reference manual, perf_event_open(2), and the event "
			 "list of `hwc list`.");
	return 0;
}

double cpc__tsc_hz(void)
{
	double hz;
	return hwc_tsc_hz(&hz, NULL) == 0 ? hz : 0; /* libhwc caches it */
}

/* x86's PERFEVTSEL fields; AnyThread (anythr) is Intel's only. */
static const struct cpc_attr_def x86_attrs[] = {
	{"picnum", NULL, 0}, {"edge", "edge", 1},   {"inv", "inv", 1},
	{"umask", "umask", 0xff}, {"cmask", "cmask", 0xff}, {"anythr", "any", 1},
};

const struct cpc_attr_def *cpc__attrs(const struct cpc_machine *m, size_t *n)
{
	if (!m->x86)
		*n = 1; /* picnum only */
	else
		*n = m->intel ? 6 : 5;
	return x86_attrs;
}

struct walk {
	void (*fn)(void *arg, const char *name);
	void *arg;
};

static int each_name(const struct hwc_event_info *ev, void *arg)
{
	struct walk *w = arg;
	w->fn(w->arg, ev->name);
	return 0;
}

static int each_counting(const struct hwc_event_info *ev, void *arg);

void cpc__walk_native(void (*fn)(void *arg, const char *name), void *arg)
{
	struct hwc_cpu_info ci;
	if (hwc_cpu_info(&ci) || !ci.core_pmu)
		return;
	struct walk w = {fn, arg};
	if (ci.pfm_model[0])
		hwc_events_walk(ci.pfm_model, NULL, 0, each_name, &w);
	else /* perf's generic names, those this PMU has (armv8_pmuv3 may lack
	      * cache-references and branches, as QEMU's does) */
		hwc_events_walk("generic", NULL, HWC_WALK_PROBE, each_counting, &w);
}

bool cpc__probe_accepts(int err)
{
	/* Limits of the moment (permissions, descriptors) are told at bind. */
	return err == 0 || err == -EACCES || err == -EPERM || err == -EMFILE || err == -ENFILE;
}

static int each_counting(const struct hwc_event_info *ev, void *arg)
{
	/* "dummy" and "bpf-output" open but never count. */
	if (cpc__probe_accepts(ev->status) && strcmp(ev->name, "dummy") != 0 &&
	    strcmp(ev->name, "bpf-output") != 0)
		each_name(ev, arg);
	return 0;
}

void cpc__walk_software(void (*fn)(void *arg, const char *name), void *arg)
{
	struct walk w = {fn, arg};
	hwc_events_walk("software", NULL, HWC_WALK_PROBE, each_counting, &w);
}
