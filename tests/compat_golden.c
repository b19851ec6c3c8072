/* Golden encodings, on any host: pctr function words and perfmon struct pmc
 * values -> the perf_event_attr the shims would open.  Each goes through the
 * shims' own translation (compat/pctr/function.h, compat/perfmon/control.h)
 * and then hwc_evlist_add_evtsel(), which is all devshim_event() does.
 * Expected configs are the x86 PERFEVTSEL layout (event 0-7 and 32-35, unit
 * mask 8-15, edge 18, any 21, invert 23, counter mask 24-31; USR and OS
 * become exclude_user / exclude_kernel), and libpfm4's own encodings serve
 * as a second, independent oracle. */
#include "../compat/pctr/function.h"
#include "../compat/perfmon/control.h"
#include "check.h"

#include <hwc/hwc.h>
#include <sys/stat.h>

struct want {
	int line;
	int rc;           /* 0 or a positive errno from the translation, or -errno from libhwc */
	uint64_t config;
	int exclude_user, exclude_kernel;
	bool counts;
};

/* Resolve EVTSEL and compare with W. */
static void check_evtsel(uint64_t evtsel, bool counts, const struct want *w)
{
	hwc_evlist *l;
	hwc_evlist_new(&l);
	int rc = hwc_evlist_add_evtsel(l, evtsel);
	if (rc != w->rc || (rc == 0 && counts != w->counts)) {
		fprintf(stderr, "line %d: evtsel %#llx: rc %d (%s), counts %d\n", w->line,
			(unsigned long long)evtsel, rc, hwc_errdetail(), counts);
		check_failures++;
	} else if (rc == 0) {
		const struct hwc_event *ev = hwc_evlist_event(l, 0);
		const struct perf_event_attr *a = &ev->attr;
		if (a->type != PERF_TYPE_RAW || a->config != w->config ||
		    a->exclude_user != (unsigned)w->exclude_user ||
		    a->exclude_kernel != (unsigned)w->exclude_kernel || a->config1 || a->config2 ||
		    a->sample_period || a->precise_ip) {
			fprintf(stderr,
				"line %d: evtsel %#llx opens type %u config %#llx exclude_user %u "
				"exclude_kernel %u, want type %u config %#llx %d %d\n",
				w->line, (unsigned long long)evtsel, a->type,
				(unsigned long long)a->config, a->exclude_user, a->exclude_kernel,
				PERF_TYPE_RAW, (unsigned long long)w->config, w->exclude_user,
				w->exclude_kernel);
			check_failures++;
		}
		CHECK(ev->explicit_priv); /* the word chose the modes: no user-only fallback */
	}
	hwc_evlist_free(l);
}

static void pctr_function_words(void)
{
	static const struct {
		unsigned fn;
		struct want w;
	} table[] = {
		{0xc0 | PCTR_U | PCTR_K | PCTR_EN, {__LINE__, 0, 0xc0, 0, 0, true}},
		{0xc0 | PCTR_U | PCTR_EN, {__LINE__, 0, 0xc0, 0, 1, true}},
		{0xc0 | PCTR_K | PCTR_EN, {__LINE__, 0, 0xc0, 1, 0, true}},
		{0xc4 | 0x01 << PCTR_UM_SHIFT | PCTR_U | PCTR_E | PCTR_EN,
		 {__LINE__, 0, 0x401c4, 0, 1, true}},
		{0xa3 | PCTR_U | PCTR_K | PCTR_I | PCTR_EN | 2u << PCTR_CM_SHIFT,
		 {__LINE__, 0, 0x028000a3, 0, 0, true}},
		{0x2e | PCTR_UM_MESI | PCTR_UM_A | PCTR_U | PCTR_EN, {__LINE__, 0, 0x2f2e, 0, 1, true}},
		{0xffu | 0xffu << PCTR_UM_SHIFT | PCTR_U | PCTR_K | PCTR_E | PCTR_I | PCTR_EN |
			 0xffu << PCTR_CM_SHIFT,
		 {__LINE__, 0, 0xff84ffff, 0, 0, true}},
		/* Counting nothing: no PCTR_EN, or neither mode.  The event still
		 * opens (both modes, never enabled) to check hardware and encoding. */
		{0xc0 | PCTR_U, {__LINE__, 0, 0xc0, 0, 1, false}},
		{0xc0 | PCTR_EN, {__LINE__, 0, 0xc0, 0, 0, false}},
		{0, {__LINE__, 0, 0, 0, 0, false}},
		/* OpenBSD refuses pin control, APIC interrupt and any-thread. */
		{0xc0 | PCTR_U | PCTR_EN | 0x080000, {__LINE__, EINVAL, 0, 0, 0, false}},
		{0xc0 | PCTR_U | PCTR_EN | 0x100000, {__LINE__, EINVAL, 0, 0, 0, false}},
		{0xc0 | PCTR_U | PCTR_EN | 0x200000, {__LINE__, EINVAL, 0, 0, 0, false}},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		uint64_t evtsel = 0;
		bool counts = false;
		int rc = pctr_function_evtsel(table[i].fn, &evtsel, &counts);
		if (rc || table[i].w.rc) {
			if (rc != table[i].w.rc) {
				fprintf(stderr, "line %d: fn %#x: rc %d, want %d\n", table[i].w.line,
					table[i].fn, rc, table[i].w.rc);
				check_failures++;
			}
			continue;
		}
		check_evtsel(evtsel, counts, &table[i].w);
	}
}

static struct pmc pmc(int event, int unit, int flags, int mask)
{
	struct pmc p;
	memset(&p, 0, sizeof(p));
	p.pmc_event = (unsigned char)event;
	p.pmc_unit = (unsigned char)unit;
	p.pmc_flags = (unsigned char)flags;
	p.pmc_mask = (unsigned char)mask;
	return p;
}

static bool cpu_pmu_lacks_any(void)
{
	struct stat st;
	return stat("/sys/bus/event_source/devices/cpu", &st) == 0 &&
	       stat("/sys/bus/event_source/devices/cpu/format/any", &st) != 0;
}

static void perfmon_struct_pmc(void)
{
	struct {
		struct pmc p;
		struct want w;
	} table[] = {
		{pmc(PMC6_INST_RETIRED, 0, PMCF_USR | PMCF_OS, 0), {__LINE__, 0, 0xc0, 0, 0, true}},
		/* INT and EN are the driver's: PMIOSETUP drops them. */
		{pmc(0xc0, 0, PMCF_USR | PMCF_INT | PMCF_EN, 0), {__LINE__, 0, 0xc0, 0, 1, true}},
		{pmc(PMC6_L2_RQSTS, 0x0f, PMCF_OS | PMCF_E, 3), {__LINE__, 0, 0x03040f2e, 1, 0, true}},
		{pmc(PMC6_CPU_CLK_UNHALTED, 0, PMCF_USR | PMCF_INV, 1),
		 {__LINE__, 0, 0x01800079, 0, 1, true}},
		{pmc(0x43, 0, 0, 0), {__LINE__, 0, 0x43, 0, 0, false}},
		{pmc(0xc0, 0, PMCF_USR | PMCF_PC, 0), {__LINE__, EINVAL, 0, 0, 0, false}},
		/* Flag 0x20 is PERFEVTSEL's any-thread bit: an Intel cpu/ term. */
		{pmc(0x3c, 0, PMCF_USR | 0x20, 0),
		 {__LINE__, cpu_pmu_lacks_any() ? -EINVAL : 0, 0x20003c, 0, 1, true}},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		uint64_t evtsel = 0;
		bool counts = false;
		int rc = perfmon_control_evtsel(perfmon_control(&table[i].p), &evtsel, &counts);
		if (rc || table[i].w.rc > 0) {
			if (rc != table[i].w.rc) {
				fprintf(stderr, "line %d: pmc_val %#x: rc %d, want %d\n", table[i].w.line,
					table[i].p.pmc_val, rc, table[i].w.rc);
				check_failures++;
			}
			continue;
		}
		check_evtsel(evtsel, counts, &table[i].w);
	}
}

static void evtsel_words(void)
{
	static const struct {
		uint64_t evtsel;
		struct want w;
	} table[] = {
		/* AMD's extended event select, bits 32-35 */
		{1ULL << 32 | 0x76 | PCTR_U, {__LINE__, 0, 0x100000076, 0, 1, true}},
		{1ULL << 36 | 0xc0 | PCTR_U, {__LINE__, -EINVAL, 0, 0, 0, true}},
		{0xc0 | 0x080000 | PCTR_U, {__LINE__, -EINVAL, 0, 0, 0, true}},
		{0xc0 | 0x100000 | PCTR_U, {__LINE__, -EINVAL, 0, 0, 0, true}},
		{0xc0, {__LINE__, -EINVAL, 0, 0, 0, true}}, /* neither USR nor OS */
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		check_evtsel(table[i].evtsel, true, &table[i].w);
	hwc_evlist *l;
	hwc_evlist_new(&l);
	CHECK_INT(hwc_evlist_add_evtsel(l, 0xc0), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "usr=1");
	CHECK_INT(hwc_evlist_add_evtsel(l, 0xc0 | 0x100000 | PCTR_U), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "INT");
	hwc_evlist_free(l);
}

/* libpfm4 encodes model events from its own tables: a pctr function built
 * from its config must open exactly that config. */
static void agrees_with_libpfm4(void)
{
	static const char *const specs[] = {
		"skl::INST_RETIRED:ANY_P",     "skl::BR_INST_RETIRED:CONDITIONAL",
		"skl::UOPS_ISSUED:ANY:c=1:i=1", "skl::INST_RETIRED:ANY_P:e=1:c=2",
		"skl::L2_RQSTS:ALL_DEMAND_DATA_RD", "icl::BR_MISP_RETIRED:ALL_BRANCHES",
		"amd64_fam19h_zen3::RETIRED_INSTRUCTIONS", "amd64_fam19h_zen4::RETIRED_BRANCH_INSTRUCTIONS",
	};
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		hwc_evlist *l;
		hwc_evlist_new(&l);
		int rc = hwc_evlist_add(l, specs[i]);
		CHECK_INT(rc, ==, 0);
		if (rc) {
			fprintf(stderr, "%s: %s\n", specs[i], hwc_errdetail());
			hwc_evlist_free(l);
			continue;
		}
		uint64_t config = hwc_evlist_event(l, 0)->attr.config;
		hwc_evlist_free(l);
		CHECK_U64(config >> 32, ==, 0);
		uint64_t evtsel = 0;
		bool counts = false;
		CHECK_INT(pctr_function_evtsel((unsigned)config | PCTR_U | PCTR_K | PCTR_EN, &evtsel,
					       &counts),
			  ==, 0);
		struct want w = {__LINE__, 0, config, 0, 0, true};
		check_evtsel(evtsel, counts, &w);
	}
}

int main(void)
{
	RUN(pctr_function_words);
	RUN(perfmon_struct_pmc);
	RUN(evtsel_words);
	RUN(agrees_with_libpfm4);
	return check_exit();
}
