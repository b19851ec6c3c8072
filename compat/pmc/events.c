/* Event specifications: FreeBSD's names where Linux has the event, then
 * whatever libhwc resolves (libpfm4 native names, Linux software events,
 * tracepoints, pmu/.../ terms).  Event codes and the name helpers. */
#include "pmc_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One named event: FreeBSD's aliases and software events, and the Linux
 * software events, in pmc_event_names_of_class() order. */
struct named {
	const char *name;
	const char *spec;    /* for libhwc */
	const char *filter;  /* for every event of SPEC, or NULL */
	uint64_t divisor;    /* libhwc counts per count */
	enum pmc_class cls;  /* PMC_CLASS_K7 stands for "the CPU's own class" */
};

#define CORE PMC_CLASS_K7
/* FreeBSD's clocks tick at hz 1000, stathz 127 and profhz 8128: counted as
 * cpu-clock time in units of their period. */
static const struct named named[] = {
	{"instructions", "instructions", NULL, 1, CORE},
	{"unhalted-cycles", "cycles", NULL, 1, CORE},
	{"branches", "branches", NULL, 1, CORE},
	{"branch-mispredicts", "branch-misses", NULL, 1, CORE},
	{"dc-misses", "L1-dcache-load-misses", NULL, 1, CORE},
	{"ic-misses", "L1-icache-load-misses", NULL, 1, CORE},
	{"cycles", "msr/tsc/", NULL, 1, PMC_CLASS_TSC},
	{"TSC", "msr/tsc/", NULL, 1, PMC_CLASS_TSC},
	{"CLOCK.HARD", "cpu-clock", NULL, 1000000, PMC_CLASS_SOFT},
	{"CLOCK.STAT", "cpu-clock", NULL, 7874016, PMC_CLASS_SOFT},
	{"CLOCK.PROF", "cpu-clock", NULL, 123031, PMC_CLASS_SOFT},
	{"PAGE_FAULT.ALL", "page-faults", NULL, 1, PMC_CLASS_SOFT},
	{"PAGE_FAULT.READ", "exceptions:page_fault_user,exceptions:page_fault_kernel",
	 "!(error_code & 2)", 1, PMC_CLASS_SOFT},
	{"PAGE_FAULT.WRITE", "exceptions:page_fault_user,exceptions:page_fault_kernel",
	 "error_code & 2", 1, PMC_CLASS_SOFT},
	{"task-clock", "task-clock", NULL, 1, PMC_CLASS_SOFT},
	{"cpu-clock", "cpu-clock", NULL, 1, PMC_CLASS_SOFT},
	{"page-faults", "page-faults", NULL, 1, PMC_CLASS_SOFT},
	{"minor-faults", "minor-faults", NULL, 1, PMC_CLASS_SOFT},
	{"major-faults", "major-faults", NULL, 1, PMC_CLASS_SOFT},
	{"context-switches", "context-switches", NULL, 1, PMC_CLASS_SOFT},
	{"cpu-migrations", "cpu-migrations", NULL, 1, PMC_CLASS_SOFT},
	{"alignment-faults", "alignment-faults", NULL, 1, PMC_CLASS_SOFT},
	{"emulation-faults", "emulation-faults", NULL, 1, PMC_CLASS_SOFT},
};

/* FreeBSD's ARMV8 class: the Arm architecture's common events by name, as
 * pmc.armv8(3) and sys/dev/hwpmc/pmc_events.h name them (their numbers are
 * the Arm ARM's), and any event number as EVENT_xxH: each is that raw
 * config of the core PMU. */
static const struct {
	const char *name;
	unsigned code;
} armv8_common[] = {
	{"SW_INCR", 0x00},	    {"L1I_CACHE_REFILL", 0x01}, {"L1I_TLB_REFILL", 0x02},
	{"L1D_CACHE_REFILL", 0x03}, {"L1D_CACHE", 0x04},	{"L1D_TLB_REFILL", 0x05},
	{"INST_RETIRED", 0x08},	    {"EXC_TAKEN", 0x09},	{"EXC_RETURN", 0x0a},
	{"CID_WRITE_RETIRED", 0x0b}, {"BR_MIS_PRED", 0x10},	{"CPU_CYCLES", 0x11},
	{"BR_PRED", 0x12},	    {"MEM_ACCESS", 0x13},	{"L1I_CACHE", 0x14},
	{"L1D_CACHE_WB", 0x15},	    {"L2D_CACHE", 0x16},	{"L2D_CACHE_REFILL", 0x17},
	{"L2D_CACHE_WB", 0x18},	    {"BUS_ACCESS", 0x19},	{"MEMORY_ERROR", 0x1a},
	{"BUS_CYCLES", 0x1d},	    {"CHAIN", 0x1e},		{"BUS_ACCESS_LD", 0x60},
	{"BUS_ACCESS_ST", 0x61},    {"BR_INDIRECT_SPEC", 0x7a}, {"EXC_IRQ", 0x86},
	{"EXC_FIQ", 0x87},
};

static bool same_name(const char *a, const char *b);

/* NAME as the ARMV8 raw event it names, "r8" for INST_RETIRED, in SPEC;
 * false when it names none (or the CPU is not an ARMv8 one). */
static bool armv8_spec(const char *name, char *spec, size_t size)
{
	if (pmc__m.core != PMC_CLASS_ARMV8)
		return false;
	for (size_t i = 0; i < PMC_ARRAY_SIZE(armv8_common); i++)
		if (same_name(armv8_common[i].name, name)) {
			snprintf(spec, size, "r%x", armv8_common[i].code);
			return true;
		}
	unsigned code;
	char h[2];
	if (strncasecmp(name, "EVENT_", 6) == 0 && strlen(name) == 9 &&
	    isxdigit((unsigned char)name[6]) && isxdigit((unsigned char)name[7]) &&
	    sscanf(name + 6, "%2x%1[Hh]", &code, h) == 2) {
		snprintf(spec, size, "r%x", code);
		return true;
	}
	return false;
}

/* Names of other events, numbered as this process first uses them. */
static char *soft_names[PMC_EV_DYN_COUNT];
static size_t nsoft_names;
static char *linux_names[PMC_EV_DYN_COUNT];
static size_t nlinux_names;
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

/* FreeBSD's rule: case does not matter, and space, '.', '_' and '-' are
 * the same character. */
static bool same_name(const char *a, const char *b)
{
	for (;; a++, b++) {
		int x = strchr(" ._-", *a) && *a ? '-' : tolower((unsigned char)*a);
		int y = strchr(" ._-", *b) && *b ? '-' : tolower((unsigned char)*b);
		if (x != y)
			return false;
		if (!x)
			return true;
	}
}

static const struct named *find_named(const char *name)
{
	for (size_t i = 0; i < PMC_ARRAY_SIZE(named); i++)
		if (same_name(named[i].name, name))
			return &named[i];
	return NULL;
}

static bool is_soft_named(size_t i)
{
	return named[i].cls == PMC_CLASS_SOFT;
}

/* The code of the soft named event I: soft events only, in table order. */
static enum pmc_event soft_code(size_t i)
{
	int k = 0;
	for (size_t j = 0; j < i; j++)
		k += is_soft_named(j);
	return (enum pmc_event)(PMC_EV_SOFT_FIRST + k);
}

static size_t nsoft_named(void)
{
	size_t n = 0;
	for (size_t i = 0; i < PMC_ARRAY_SIZE(named); i++)
		n += is_soft_named(i);
	return n;
}

/* A code for NAME in the dynamic part of its block. */
static int intern(const char *name, bool soft, enum pmc_event *code)
{
	char **tab = soft ? soft_names : linux_names;
	size_t *n = soft ? &nsoft_names : &nlinux_names;
	size_t limit = PMC_EV_DYN_COUNT - (soft ? nsoft_named() : PMC_ARRAY_SIZE(named));
	size_t base = soft ? PMC_EV_SOFT_FIRST + nsoft_named() : PMC_EV_LINUX_FIRST;
	pthread_mutex_lock(&names_lock);
	size_t i;
	for (i = 0; i < *n; i++)
		if (strcmp(tab[i], name) == 0)
			break;
	if (i == *n) {
		char *copy = i < limit ? strdup(name) : NULL;
		if (!copy) {
			pthread_mutex_unlock(&names_lock);
			return pmc__fail(ENOMEM, "no room for the name of event '%s'", name);
		}
		tab[(*n)++] = copy;
	}
	pthread_mutex_unlock(&names_lock);
	*code = (enum pmc_event)(base + i);
	return 0;
}

/* The hardware aliases are numbered in the Linux block, in table order. */
static enum pmc_event alias_code(const struct named *n)
{
	return (enum pmc_event)(PMC_EV_LINUX_FIRST + PMC_EV_DYN_COUNT - PMC_ARRAY_SIZE(named) +
				(size_t)(n - named));
}

enum pmc_class pmc__class_for(const struct hwc_event *ev)
{
	switch (ev->source) {
	case HWC_SRC_SOFTWARE:
	case HWC_SRC_TRACEPOINT:
		return PMC_CLASS_SOFT;
	case HWC_SRC_PMU:
		if (strcmp(ev->pmu, "msr") == 0)
			return PMC_CLASS_TSC;
		if (strncmp(ev->pmu, "uncore", 6) == 0)
			return PMC_CLASS_UCP;
		if (strcmp(ev->pmu, "cpu") == 0 || strncmp(ev->pmu, "cpu_", 4) == 0 ||
		    strcmp(ev->pmu, pmc__m.core_pmu_name) == 0)
			return pmc__m.core;
		return PMC_CLASS_SOFT;
	default:
		return pmc__m.core;
	}
}

/* ------------------------------------------------------------ qualifiers */

/* FreeBSD's qualifiers (the words after the event name), parsed.  Which
 * of them an event takes depends on where it resolves: see resolve_quals(). */
struct quals {
	bool usr, os, precise;
	/* Fields of the x86 event select (PERFEVTSEL): */
	bool edge, inv, any;
	int cmask, umask;       /* -1: not given */
	char field[64];         /* the first of them, as written, for errors */
	char units[256];        /* other words, for libpfm4: ":NAME:NAME" */
	char unit[64];          /* the first of them, as written */
};

static bool has_field(const struct quals *q)
{
	return q->field[0] != '\0';
}

static bool has_any(const struct quals *q)
{
	return q->usr || q->os || q->precise || has_field(q) || q->units[0];
}

/* The first qualifier an event of KIND refuses, for its error. */
static const char *first_extra(const struct quals *q)
{
	return has_field(q) ? q->field : q->unit[0] ? q->unit : "precise";
}

/* A qualifier's number: 0 to 255, decimal or 0x hex, as FreeBSD's strtol(,,0). */
static int byte_value(const char *word, const char *val, const char *spec)
{
	char *end;
	errno = 0;
	long v = strtol(val, &end, 0);
	if (!*val || *end || errno || v < 0 || v > 255)
		return pmc__fail(EINVAL, "'%s': %s takes a number from 0 to 255", spec, word);
	return (int)v;
}

static void note_field(struct quals *q, const char *word)
{
	if (!q->field[0])
		snprintf(q->field, sizeof(q->field), "%s", word);
}

/* Append ":WORD" to Q's libpfm4 words. */
static int add_unit(struct quals *q, const char *word, const char *spec)
{
	size_t len = strlen(q->units);
	int w = snprintf(q->units + len, sizeof(q->units) - len, ":%s", word);
	if (w < 0 || (size_t)w >= sizeof(q->units) - len)
		return pmc__fail(EINVAL, "'%s': too many qualifiers", spec);
	if (!q->unit[0])
		snprintf(q->unit, sizeof(q->unit), "%s", word);
	return 0;
}

/* Qualifiers of FreeBSD's Pentium 4 and Core 2 classes: their bits have
 * no place in the event selects of the CPUs Linux runs on today. */
static const char *const obsolete[] = {"active=", "busreqtype=", "cascade", "tag=", "agent=",
				       "cachestate=", "core=", "prefetch=", "snoopresponse=",
				       "snooptype=", "trans=", "rsp="};

static int parse_quals(const char *quals, struct quals *q, const char *spec)
{
	memset(q, 0, sizeof(*q));
	q->cmask = q->umask = -1;
	char buf[256];
	if (strlen(quals) >= sizeof(buf))
		return pmc__fail(EINVAL, "'%s': too many qualifiers", spec);
	snprintf(buf, sizeof(buf), "%s", quals);
	for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*w))
			w++;
		for (size_t n = strlen(w); n && isspace((unsigned char)w[n - 1]); n--)
			w[n - 1] = '\0';
		if (!*w)
			continue;
		char *eq = strchr(w, '=');
		size_t klen = eq ? (size_t)(eq - w) : strlen(w);
		const char *val = eq ? eq + 1 : NULL;
#define KW(k) (klen == strlen(k) && strncasecmp(w, k, klen) == 0)
		if (KW("usr") && !val) {
			q->usr = true;
		} else if (KW("os") && !val) {
			q->os = true;
		} else if (KW("precise") && !val) {
			q->precise = true;
		} else if ((KW("edge")) && !val) {
			q->edge = true;
			note_field(q, w);
		} else if ((KW("inv") || KW("complement")) && !val) {
			q->inv = true;
			note_field(q, w);
		} else if ((KW("any") || KW("anythread")) && !val) {
			q->any = true;
			note_field(q, w);
		} else if ((KW("cmask") || KW("count") || KW("threshold")) && val) {
			/* Intel's counter mask is AMD's count and the P4's threshold. */
			if ((q->cmask = byte_value(w, val, spec)) < 0)
				return -1;
			note_field(q, w);
		} else if ((KW("umask") || KW("mask") || KW("unitmask")) && val) {
			if (isdigit((unsigned char)*val)) {
				if ((q->umask = byte_value(w, val, spec)) < 0)
					return -1;
				note_field(q, w);
			} else {
				/* Unit mask names, "a+b" as on FreeBSD: libpfm4's. */
				char names[128];
				snprintf(names, sizeof(names), "%s", val);
				for (char *s2, *n = strtok_r(names, "+", &s2); n;
				     n = strtok_r(NULL, "+", &s2))
					if (add_unit(q, n, spec))
						return -1;
				if (!names[0])
					return pmc__fail(EINVAL, "'%s': %s names no unit mask", spec, w);
			}
		} else {
			for (size_t i = 0; i < PMC_ARRAY_SIZE(obsolete); i++) {
				size_t n = strcspn(obsolete[i], "=");
				if (klen == n && strncasecmp(w, obsolete[i], n) == 0)
					return pmc__fail(EINVAL,
							 "'%s': '%s' is a qualifier of FreeBSD's Pentium 4 "
							 "and Core 2 PMCs, which Linux does not program that "
							 "way; choose the unit mask with umask= instead",
							 spec, w);
			}
			/* Anything else is for libpfm4 (a unit mask or modifier). */
			if (add_unit(q, w, spec))
				return -1;
		}
#undef KW
	}
	return 0;
}

/* SPEC with Q's modes in perf's modifier letters ("instructions:uk",
 * "cpu/config=0xc0/uk"). */
static int with_mods(char *out, size_t size, const char *spec, const struct quals *q,
		     const char *ctrspec)
{
	char mods[8] = "";
	size_t n = 0;
	if (q->usr)
		mods[n++] = 'u';
	if (q->os)
		mods[n++] = 'k';
	if (q->precise)
		mods[n++] = 'p';
	mods[n] = '\0';
	size_t len = strlen(spec);
	const char *sep = !n || (len && spec[len - 1] == '/') ? "" : ":";
	int w = snprintf(out, size, "%s%s%s", spec, sep, mods);
	if (w < 0 || (size_t)w >= size)
		return pmc__fail(EINVAL, "'%s': too long", ctrspec);
	return 0;
}

static const char qual_list[] = "usr, os, edge, inv, any, cmask=, umask=, threshold=, precise";

/* Software events and tracepoints: Q may choose modes and nothing else. */
static int soft_quals(char *out, size_t size, const char *base, bool tracepoint,
		      const struct quals *q, const char *ctrspec)
{
	if (has_field(q) || q->units[0] || q->precise)
		return pmc__fail(EINVAL, "'%s': %s is a software event, counted by the kernel: it "
					 "takes usr and os, not '%s'",
				 ctrspec, base, first_extra(q));
	if (tracepoint && (q->usr || q->os))
		return pmc__fail(EINVAL, "'%s': %s is a tracepoint, which fires in the kernel: usr "
					 "and os do not apply",
				 ctrspec, base);
	return with_mods(out, size, base, q, ctrspec);
}

#if defined(__x86_64__) || defined(__i386__)
/* The kernel's cpu PMU alias of perf's generic hardware event CONFIG. */
static const char *generic_alias(uint64_t config)
{
	static const char *const names[] = {
		"cpu-cycles",	   "instructions",	      "cache-references",
		"cache-misses",	   "branch-instructions",     "branch-misses",
		"bus-cycles",	   "stalled-cycles-frontend", "stalled-cycles-backend",
		"ref-cycles"};
	return config < PMC_ARRAY_SIZE(names) ? names[config] : NULL;
}
#endif

/* E resolved from BASE; Q sets fields of its x86 event select.  The
 * spec that opens E with them: cpu/config=.../ and Q's modes. */
static int evtsel_quals(char *out, size_t size, const char *base, const struct hwc_event *e,
			const struct quals *q, const char *ctrspec)
{
#if defined(__x86_64__) || defined(__i386__)
	struct perf_event_attr a = e->attr;
	hwc_evlist *alias = NULL;
	const char *kind = hwc_source_name(e->source);
	if (a.type == PERF_TYPE_HARDWARE) {
		/* The kernel encodes perf's generic events; its cpu PMU says how. */
		char spec[64];
		const char *name = generic_alias(a.config);
		snprintf(spec, sizeof(spec), "cpu/%s/", name ? name : "?");
		int err = name ? hwc_evlist_new(&alias) : -ENOENT;
		if (!err)
			err = hwc_evlist_add(alias, spec);
		if (err) {
			hwc_evlist_free(alias);
			return pmc__fail(ENXIO, "'%s': %s sets a field of the CPU's event select, and "
						"%s is perf's generic event, which the kernel encodes: "
						"this kernel exposes no %s to take its encoding from "
						"(no hardware PMU?); name the CPU's own event (pmccontrol "
						"-L)",
					 ctrspec, q->field, base, spec);
		}
		a = hwc_evlist_event(alias, 0)->attr;
		kind = "cpu PMU alias";
	}
	bool x86 = a.type == PERF_TYPE_RAW || (e->source == HWC_SRC_PMU && strcmp(e->pmu, "cpu") == 0);
	hwc_evlist_free(alias);
	if (!x86)
		return pmc__fail(EINVAL, "'%s': %s sets a field of the CPU's event select, and %s "
					 "(%s event on PMU %s) has none: %s",
				 ctrspec, q->field, base, kind, e->pmu,
				 a.type == PERF_TYPE_HW_CACHE
					 ? "perf's cache events are encoded by the kernel; name "
					   "the CPU's own event (pmccontrol -L)"
					 : "write that PMU's own terms (pmu/term=value/)");
	/* The fields as terms: libhwc checks them against the cpu PMU's
	 * format (AMD's has no any). */
	char spec[200];
	size_t w = (size_t)snprintf(spec, sizeof(spec), "cpu/config=%#llx",
				    (unsigned long long)a.config);
	if (a.config1)
		w += (size_t)snprintf(spec + w, sizeof(spec) - w, ",config1=%#llx",
				      (unsigned long long)a.config1);
	if (a.config2)
		w += (size_t)snprintf(spec + w, sizeof(spec) - w, ",config2=%#llx",
				      (unsigned long long)a.config2);
	if (q->umask >= 0)
		w += (size_t)snprintf(spec + w, sizeof(spec) - w, ",umask=%#x", q->umask);
	if (q->cmask >= 0)
		w += (size_t)snprintf(spec + w, sizeof(spec) - w, ",cmask=%d", q->cmask);
	snprintf(spec + w, sizeof(spec) - w, "%s%s%s/", q->edge ? ",edge" : "", q->inv ? ",inv" : "",
		 q->any ? ",any" : "");
	return with_mods(out, size, spec, q, ctrspec);
#else
	(void)out, (void)size;
	return pmc__fail(EINVAL, "'%s': %s sets %s, a field of the x86 event select, which this "
				 "CPU's PMU (%s) does not have; write its own terms "
				 "(pmu/term=value/)",
			 ctrspec, base, q->field, *pmc__m.core_pmu_name ? pmc__m.core_pmu_name : e->pmu);
#endif
}

/* Add SPEC (with FILTER on each of its events) to a new list in OUT. */
static int resolve_spec(struct pmc__event *out, const char *spec, const char *filter)
{
	hwc_evlist *l;
	int err = hwc_evlist_new(&l);
	if (!err)
		err = hwc_evlist_add(l, spec);
	for (size_t i = 0; !err && filter && i < hwc_evlist_size(l); i++)
		err = hwc_evlist_set_filter(l, i, filter);
	if (err) {
		hwc_evlist_free(l);
		return err;
	}
	snprintf(out->spec, sizeof(out->spec), "%s", spec);
	out->list = l;
	return 0;
}

/* Resolve BASE with the qualifiers Q, as its event source takes them:
 * software events only the modes, libpfm4 events also unit mask names,
 * CPU events also the fields of the x86 event select (the CPU's own
 * encoding for perf's generic events).  -1 with the detail set, or
 * UNKNOWN when BASE itself does not resolve (hwc_errdetail() says why). */
#define UNKNOWN (-2)
static int resolve_quals(struct pmc__event *out, const char *base, const struct quals *q,
			 const char *ctrspec)
{
	char spec[512];
	int w = snprintf(spec, sizeof(spec), "%s%s", base, q->units);
	if (w < 0 || (size_t)w >= sizeof(spec))
		return pmc__fail(EINVAL, "'%s': too long", ctrspec);
	struct pmc__event probe = {.divisor = 1};
	if (resolve_spec(&probe, spec, NULL)) {
		if (!q->units[0])
			return UNKNOWN;
		char why[1024];
		snprintf(why, sizeof(why), "%s", hwc_errdetail());
		/* Without the words, is BASE an event that takes none? */
		struct pmc__event bare = {.divisor = 1};
		if (resolve_spec(&bare, base, NULL))
			return UNKNOWN;
		enum hwc_source src = hwc_evlist_event(bare.list, 0)->source;
		pmc__event_free(&bare);
		if (src != HWC_SRC_PFM)
			return pmc__fail(EINVAL, "'%s': unknown qualifier '%s' for %s (a %s event); "
						 "FreeBSD's qualifiers are %s, and libpfm4 events "
						 "also take their unit masks",
					 ctrspec, q->unit, base, hwc_source_name(src), qual_list);
		return pmc__fail(EINVAL, "'%s': %s", ctrspec, why);
	}
	const struct hwc_event *e = hwc_evlist_event(probe.list, 0);
	char final[512];
	int err;
	if (e->source == HWC_SRC_SOFTWARE || e->source == HWC_SRC_TRACEPOINT)
		err = soft_quals(final, sizeof(final), base, e->source == HWC_SRC_TRACEPOINT, q,
				 ctrspec);
	else if (e->source == HWC_SRC_PMU && strcmp(e->pmu, "msr") == 0 && has_any(q))
		err = pmc__fail(EINVAL, "'%s': %s is a free-running counter: it takes no "
					"qualifiers",
				ctrspec, base);
	else if (has_field(q))
		err = evtsel_quals(final, sizeof(final), base, e, q, ctrspec);
	else if (e->source == HWC_SRC_PFM)
		/* libpfm4's own modifiers (perf's letters are not libpfm4's). */
		err = snprintf(final, sizeof(final), "%s%s%s%s", spec, q->usr ? ":u" : "",
			       q->os ? ":k" : "", q->precise ? ":precise=1" : "") >=
				      (int)sizeof(final)
			      ? pmc__fail(EINVAL, "'%s': too long", ctrspec)
			      : 0;
	else
		err = with_mods(final, sizeof(final), spec, q, ctrspec);
	pmc__event_free(&probe);
	if (err)
		return -1;
	if (resolve_spec(out, final, NULL))
		return pmc__fail(EINVAL, "'%s' is %s here: %s", ctrspec, final, hwc_errdetail());
	return 0;
}

/* A named sum of tracepoints (PAGE_FAULT.READ: user faults, then kernel
 * faults): usr keeps the first, os the second. */
static int resolve_sum(struct pmc__event *out, const struct named *n, const struct quals *q,
		       const char *ctrspec)
{
	if (has_field(q) || q->units[0] || q->precise)
		return pmc__fail(EINVAL, "'%s': %s is a software event, counted by the kernel: it "
					 "takes usr and os, not '%s'",
				 ctrspec, n->name, first_extra(q));
	char spec[512];
	size_t first = strcspn(n->spec, ",");
	if (q->usr && !q->os)
		snprintf(spec, sizeof(spec), "%.*s", (int)first, n->spec);
	else if (q->os && !q->usr)
		snprintf(spec, sizeof(spec), "%s", n->spec + first + 1);
	else
		snprintf(spec, sizeof(spec), "%s", n->spec);
	return resolve_spec(out, spec, n->filter) ? UNKNOWN : 0;
}

int pmc__resolve(const char *ctrspec, struct pmc__event *out)
{
	memset(out, 0, sizeof(*out));
	out->divisor = 1;
	if (!ctrspec || !*ctrspec)
		return pmc__fail(EINVAL, "an empty event specification");
	size_t nlen = strcspn(ctrspec, ",");
	if (nlen >= sizeof(out->name))
		return pmc__fail(EINVAL, "event name too long in '%s'", ctrspec);
	memcpy(out->name, ctrspec, nlen);
	out->name[nlen] = '\0';
	struct quals q;
	if (parse_quals(ctrspec[nlen] ? ctrspec + nlen + 1 : "", &q, ctrspec))
		return -1;
	const struct named *n = find_named(out->name);
	if (n) {
		int err;
		if (n->cls == PMC_CLASS_TSC && has_any(&q))
			return pmc__fail(EINVAL, "'%s': the TSC takes no qualifiers", ctrspec);
		if (strchr(n->spec, ','))
			err = resolve_sum(out, n, &q, ctrspec);
		else
			err = resolve_quals(out, n->spec, &q, ctrspec);
		if (err == UNKNOWN)
			return pmc__fail(ENXIO, "'%s' is %s here, which is not available: %s",
					 out->name, n->spec, hwc_errdetail());
		if (err)
			return -1;
		out->divisor = n->divisor;
		out->cls = n->cls == CORE ? pmc__m.core : n->cls;
		out->code = n->cls == PMC_CLASS_TSC	 ? PMC_EV_TSC_TSC
			    : n->cls == PMC_CLASS_SOFT ? soft_code((size_t)(n - named))
						       : alias_code(n);
		snprintf(out->name, sizeof(out->name), "%s", n->name);
	} else {
		char raw[16];
		bool armv8 = armv8_spec(out->name, raw, sizeof(raw));
		int err = resolve_quals(out, armv8 ? raw : out->name, &q, ctrspec);
		char *dot = strchr(out->name, '.');
		if (err == UNKNOWN && dot && !strchr(out->name, ':')) {
			/* FreeBSD's and perf's "INST_RETIRED.ANY" is libpfm4's
			 * "INST_RETIRED:ANY". */
			char keep[1024], pfm[PMC_NAME_MAX + 1];
			snprintf(keep, sizeof(keep), "%s", hwc_errdetail());
			snprintf(pfm, sizeof(pfm), "%.*s:%s", (int)(dot - out->name), out->name,
				 dot + 1);
			err = resolve_quals(out, pfm, &q, ctrspec);
			if (err == UNKNOWN)
				return pmc__fail(EINVAL, "%s", keep);
		}
		if (err == UNKNOWN)
			return pmc__fail(EINVAL, "%s", hwc_errdetail());
		if (err)
			return -1;
		const struct hwc_event *e = hwc_evlist_event(out->list, 0);
		out->cls = pmc__class_for(e);
		if (out->cls == PMC_CLASS_TSC && strcmp(e->name, "msr/tsc/") == 0)
			out->code = PMC_EV_TSC_TSC;
		else if (intern(out->name, out->cls == PMC_CLASS_SOFT, &out->code)) {
			pmc__event_free(out);
			return -1;
		}
	}
	/* Free-running counters (msr) raise no interrupt to sample with. */
	out->can_sample = out->cls != PMC_CLASS_TSC;
	return 0;
}

void pmc__event_free(struct pmc__event *ev)
{
	hwc_evlist_free(ev->list);
	ev->list = NULL;
}

/* ------------------------------------------------------------ names */

PMC_EXPORT const char *pmc_name_of_event(enum pmc_event pe)
{
	unsigned code = (unsigned)pe;
	const char *name = NULL;
	if (pe == PMC_EV_TSC_TSC)
		return "TSC";
	pthread_mutex_lock(&names_lock);
	if (code >= PMC_EV_SOFT_FIRST && code <= PMC_EV_SOFT_LAST) {
		size_t k = code - PMC_EV_SOFT_FIRST, nn = nsoft_named();
		if (k < nn) {
			for (size_t i = 0; i < PMC_ARRAY_SIZE(named); i++)
				if (is_soft_named(i) && k-- == 0) {
					name = named[i].name;
					break;
				}
		} else if (k - nn < nsoft_names) {
			name = soft_names[k - nn];
		}
	} else if (code >= PMC_EV_LINUX_FIRST && code <= PMC_EV_LINUX_LAST) {
		size_t k = code - PMC_EV_LINUX_FIRST;
		size_t first_alias = PMC_EV_DYN_COUNT - PMC_ARRAY_SIZE(named);
		if (k < nlinux_names)
			name = linux_names[k];
		else if (k >= first_alias)
			name = named[k - first_alias].name;
	}
	pthread_mutex_unlock(&names_lock);
	if (!name)
		errno = EINVAL;
	return name;
}

/* Name of V in a table indexed by value; NULL and EINVAL when it has none. */
static const char *name_in(const char *const *names, size_t n, unsigned v)
{
	if (v < n && names[v])
		return names[v];
	errno = EINVAL;
	return NULL;
}

#define NAME_TABLE(fn, type, list)                                                        \
	const char *fn(type v)                                                            \
	{                                                                                 \
		static const char *const names[] = {list};                                \
		return name_in(names, PMC_ARRAY_SIZE(names), (unsigned)v);                \
	}

#undef __PMC_MODE
#define __PMC_MODE(M, N) [N] = #M,
PMC_EXPORT NAME_TABLE(pmc_name_of_mode, enum pmc_mode, __PMC_MODES())
#undef __PMC_STATE
#define __PMC_STATE(S) #S,
PMC_EXPORT NAME_TABLE(pmc_name_of_state, enum pmc_state, __PMC_STATES())
#undef __PMC_DISP
#define __PMC_DISP(D) #D,
PMC_EXPORT NAME_TABLE(pmc_name_of_disposition, enum pmc_disp, __PMC_DISPOSITIONS())
#undef __PMC_CLASS
#define __PMC_CLASS(S, V, D) [V] = #S,
PMC_EXPORT NAME_TABLE(pmc_name_of_class, enum pmc_class, __PMC_CLASSES())

PMC_EXPORT const char *pmc_name_of_cputype(enum pmc_cputype cp)
{
#undef __PMC_CPU
#define __PMC_CPU(S, V, D) {V, #S},
	static const struct {
		int v;
		const char *name;
	} cpus[] = {__PMC_CPUS()};
	for (size_t i = 0; i < PMC_ARRAY_SIZE(cpus); i++)
		if (cpus[i].v == (int)cp)
			return cpus[i].name;
	errno = EINVAL;
	return NULL;
}

PMC_EXPORT const char *pmc_name_of_capability(enum pmc_caps c)
{
#undef __PMC_CAP
#define __PMC_CAP(NAME, VALUE, DESCR) [VALUE] = #NAME,
	static const char *const names[] = {__PMC_CAPS()};
	unsigned v = (unsigned)c;
	if (v == 0 || (v & (v - 1)) || (unsigned)__builtin_ctz(v) >= PMC_ARRAY_SIZE(names)) {
		errno = EINVAL;
		return NULL;
	}
	return names[__builtin_ctz(v)];
}

/* ------------------------------------------------------------ event lists */

struct name_list {
	const char **v;
	size_t n, cap;
	int err;
};

static void push_name(struct name_list *l, const char *name)
{
	if (l->err)
		return;
	if (!pmc__room(&l->v, l->n, &l->cap, sizeof(*l->v), 64)) {
		l->err = ENOMEM;
		return;
	}
	l->v[l->n++] = name;
}

static int push_native(const struct hwc_event_info *ev, void *arg)
{
	struct name_list *l = arg;
	enum pmc_event code;
	/* The name outlives the walk as an interned event name. */
	if (intern(ev->name, false, &code)) {
		l->err = errno;
		return 1;
	}
	push_name(l, pmc_name_of_event(code));
	return 0;
}

PMC_EXPORT int pmc_event_names_of_class(enum pmc_class cl, const char ***eventnames,
					int *nevents)
{
	pmc__call();
	if (!pmc__initialized)
		return pmc__fail(ENXIO, "pmc_init() has not succeeded");
	if (!eventnames || !nevents)
		return pmc__fail(EFAULT, "eventnames or nevents is NULL");
	if (!pmc__class_of(cl))
		return pmc__fail(EINVAL, "this machine has no PMC class %d (%s)", (int)cl,
				 pmc_name_of_class(cl) ? pmc_name_of_class(cl) : "unknown");
	struct name_list l = {0};
	if (cl == PMC_CLASS_TSC) {
		push_name(&l, "TSC");
	} else if (cl == PMC_CLASS_SOFT) {
		for (size_t i = 0; i < PMC_ARRAY_SIZE(named); i++)
			if (is_soft_named(i))
				push_name(&l, named[i].name);
	} else {
		for (size_t i = 0; i < PMC_ARRAY_SIZE(named); i++)
			if (named[i].cls == CORE)
				push_name(&l, named[i].name);
		if (cl == PMC_CLASS_ARMV8)
			for (size_t i = 0; i < PMC_ARRAY_SIZE(armv8_common); i++)
				push_name(&l, armv8_common[i].name);
		if (cl == pmc__m.core && pmc__m.model[0])
			hwc_events_walk(pmc__m.model, NULL, 0, push_native, &l);
	}
	if (l.err) {
		free(l.v);
		return pmc__fail(l.err, "cannot list the events of class %s",
				 pmc_name_of_class(cl));
	}
	*eventnames = l.v;
	*nevents = (int)l.n;
	return 0;
}
