/* FreeBSD 12+'s pmc_pmu_* functions.  FreeBSD's table is the JSON event
 * list of this CPU (pmu-events); ours is the event list libhwc gives for
 * this machine (what `hwc list` shows: perf's generic and cache events,
 * software events, the CPU's libpfm4 model, sysfs PMU aliases,
 * tracepoints), read once, in its stable order: an event's index is its
 * place in that list. */
#include "pmc_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct pmu_entry {
	char *name, *desc, *spec, *pmu;
};

static struct {
	pthread_once_t once;
	struct pmu_entry *e;
	size_t n, cap;
} tab = {.once = PTHREAD_ONCE_INIT};

static int add_entry(const struct hwc_event_info *ev, void *arg)
{
	(void)arg;
	if (!pmc__room(&tab.e, tab.n, &tab.cap, sizeof(*tab.e), 256))
		return 1;
	struct pmu_entry *e = &tab.e[tab.n];
	e->name = strdup(ev->name);
	e->desc = strdup(ev->desc ? ev->desc : "");
	e->spec = strdup(ev->spec ? ev->spec : ev->name);
	e->pmu = strdup(ev->pmu ? ev->pmu : "");
	if (!e->name || !e->desc || !e->spec || !e->pmu) {
		free(e->name), free(e->desc), free(e->spec), free(e->pmu);
		return 1;
	}
	tab.n++;
	return 0;
}

static void load(void)
{
	hwc_events_walk(NULL, NULL, 0, add_entry, NULL);
}

/* This machine's list; NULL (and no events) when libhwc lists none. */
static const struct pmu_entry *table(size_t *n)
{
	pthread_once(&tab.once, load);
	*n = tab.n;
	return tab.n ? tab.e : NULL;
}

/* The cpuid string of this machine, as the logs' INITIALIZE records carry
 * it (perf's: "GenuineIntel,6,85,4", or an arm64 MIDR). */
static void machine_cpuid(char *buf, size_t size)
{
	/* The MIDR first: on arm64 hwc_cpu_info() has a vendor too ("Arm"). */
	buf[0] = '\0';
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "re");
	unsigned long long midr;
	bool arm = f && fscanf(f, "%llx", &midr) == 1;
	if (f)
		fclose(f);
	struct hwc_cpu_info ci;
	if (arm)
		snprintf(buf, size, "0x%016llx", midr);
	else if (hwc_cpu_info(&ci) == 0 && ci.vendor[0])
		snprintf(buf, size, "%s,%u,%u,%u", ci.vendor, ci.family, ci.model, ci.stepping);
}

/* The table of CPUID: this machine's when CPUID is NULL or this machine's
 * cpuid; no other machine's table is known. */
static const struct pmu_entry *table_of(const char *cpuid, size_t *n)
{
	if (cpuid && *cpuid) {
		char here[128];
		machine_cpuid(here, sizeof(here));
		if (strcasecmp(cpuid, here) != 0) {
			*n = 0;
			return NULL;
		}
	}
	return table(n);
}

static ssize_t index_of(const struct pmu_entry *e, size_t n, const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (strcasecmp(e[i].name, name) == 0)
			return (ssize_t)i;
	return -1;
}

/* FreeBSD matches a part of the name, ignoring case; NULL matches all. */
static bool matches(const struct pmu_entry *e, const char *part)
{
	return !part || strcasestr(e->name, part) != NULL;
}

PMC_EXPORT int pmc_pmu_enabled(void)
{
	size_t n;
	return table(&n) != NULL;
}

PMC_EXPORT void pmc_pmu_print_counters(const char *event_name)
{
	size_t n;
	const struct pmu_entry *e = table(&n);
	for (size_t i = 0; i < n; i++)
		if (matches(&e[i], event_name))
			printf("\t%s\n", e[i].name);
}

PMC_EXPORT void pmc_pmu_print_counter_desc(const char *ev)
{
	size_t n;
	const struct pmu_entry *e = table(&n);
	for (size_t i = 0; i < n; i++)
		if (matches(&e[i], ev) && e[i].desc[0])
			printf("%s:\t%s\n", e[i].name, e[i].desc);
}

/* libhwc's tables have one description per event: the long one is it. */
PMC_EXPORT void pmc_pmu_print_counter_desc_long(const char *ev)
{
	pmc_pmu_print_counter_desc(ev);
}

PMC_EXPORT void pmc_pmu_print_counter_full(const char *ev)
{
	size_t n;
	const struct pmu_entry *e = table(&n);
	for (size_t i = 0; i < n; i++) {
		if (!matches(&e[i], ev))
			continue;
		printf("name: %s\n", e[i].name);
		if (e[i].desc[0])
			printf("desc: %s\n", e[i].desc);
		printf("event: %s\n", e[i].spec);
		if (e[i].pmu[0])
			printf("pmu: %s\n", e[i].pmu);
	}
}

/* The tables carry no sampling period: FreeBSD's default for such events
 * (libpmcstat's DEFAULT_SAMPLE_COUNT). */
#define DEFAULT_RATE 65536

PMC_EXPORT uint64_t pmc_pmu_sample_rate_get(const char *event_name)
{
	(void)event_name;
	return DEFAULT_RATE;
}

PMC_EXPORT int pmc_pmu_idx_get_by_event(const char *cpuid, const char *event)
{
	size_t n;
	const struct pmu_entry *e = table_of(cpuid, &n);
	return (int)index_of(e, n, event);
}

PMC_EXPORT const char *pmc_pmu_event_get_by_idx(const char *cpuid, int idx)
{
	size_t n;
	const struct pmu_entry *e = table_of(cpuid, &n);
	return idx >= 0 && (size_t)idx < n ? e[idx].name : NULL;
}

PMC_EXPORT int pmc_pmu_pmcallocate(const char *event_name, struct pmc_op_pmcallocate *pm)
{
	size_t n;
	const struct pmu_entry *e = table(&n);
	ssize_t idx = index_of(e, n, event_name);
	if (!pm || idx < 0)
		return ENOENT;
	hwc_evlist *list;
	int err = hwc_evlist_new(&list);
	if (!err)
		err = hwc_evlist_add(list, e[idx].spec);
	if (err) {
		hwc_evlist_free(list);
		return -err;
	}
	const struct hwc_event *ev = hwc_evlist_event(list, 0);
	memset(&pm->pm_md, 0, sizeof(pm->pm_md));
	pm->pm_caps |= PMC_CAP_READ | PMC_CAP_WRITE;
	pm->pm_ev = (enum pmc_event)idx;
	pm->pm_class = pmc__class_for(ev);
	pm->pm_md.pm_linux.pm_type = ev->attr.type;
	pm->pm_md.pm_linux.pm_config = ev->attr.config;
	pm->pm_md.pm_linux.pm_config1 = ev->attr.config1;
	pm->pm_md.pm_linux.pm_config2 = ev->attr.config2;
	hwc_evlist_free(list);
	return 0;
}

/* FreeBSD's six: cycles, instructions, branches, branch misses, last-level
 * cache references and misses, by names pmc_allocate() takes. */
static const char *stat_mode_cntrs[] = {
	"unhalted-cycles", "instructions",     "branches",
	"branch-mispredicts", "cache-references", "cache-misses",
};

PMC_EXPORT int pmc_pmu_stat_mode(const char ***cntrs)
{
	struct hwc_cpu_info ci;
	if (!cntrs || hwc_cpu_info(&ci) != 0 || !ci.core_pmu)
		return EOPNOTSUPP; /* hardware counters: there are none here */
	/* pmcstat counts all six: a PMU that lacks one (QEMU's ARMv8 PMU has
	 * no branch or cache events) has no stat mode, as FreeBSD's answer
	 * where its PMU tables do not map. */
	for (size_t i = 0; i < sizeof(stat_mode_cntrs) / sizeof(stat_mode_cntrs[0]); i++) {
		struct pmc__event ev;
		if (pmc__resolve(stat_mode_cntrs[i], &ev))
			return EOPNOTSUPP;
		int err = hwc_event_probe(ev.spec, NULL);
		pmc__event_free(&ev);
		if (err && err != -EACCES && err != -EPERM && err != -EMFILE && err != -ENFILE) {
			pmc__fail(EOPNOTSUPP, "stat mode counts %s, which this PMU cannot: %s",
				  stat_mode_cntrs[i], hwc_errdetail());
			return EOPNOTSUPP;
		}
	}
	*cntrs = stat_mode_cntrs;
	return 0;
}
