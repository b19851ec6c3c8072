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
		if (strcmp(ev->pmu, "cpu") == 0 || strncmp(ev->pmu, "cpu_", 4) == 0)
			return pmc__m.core;
		return PMC_CLASS_SOFT;
	default:
		return pmc__m.core;
	}
}

/* FreeBSD's qualifiers of hardware events, as libhwc/libpfm4 modifiers. */
static int qualifiers(char *out, size_t size, const char *quals, bool soft, const char *spec)
{
	size_t len = strlen(out);
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", quals);
	for (char *save, *q = strtok_r(buf, ",", &save); q; q = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*q))
			q++;
		if (!*q)
			continue;
		static const struct {
			const char *bsd, *hwc;
		} map[] = {{"usr", "u"}, {"os", "k"}, {"edge", "e"}, {"inv", "i"},
			   {"any", "t"}, {"anythread", "t"}, {"cmask=", "c="}};
		const char *m = NULL;
		const char *val = "";
		for (size_t i = 0; i < PMC_ARRAY_SIZE(map); i++) {
			size_t n = strlen(map[i].bsd);
			if (map[i].bsd[n - 1] == '=' ? strncasecmp(q, map[i].bsd, n) == 0
						      : strcasecmp(q, map[i].bsd) == 0) {
				m = map[i].hwc;
				val = map[i].bsd[n - 1] == '=' ? q + n : "";
				break;
			}
		}
		if (soft && (!m || (strcmp(m, "u") && strcmp(m, "k"))))
			return pmc__fail(EINVAL, "'%s': software events take no qualifier but usr "
						 "and os (got '%s')",
					 spec, q);
		int w = snprintf(out + len, size - len, ":%s%s", m ? m : q, val);
		if (w < 0 || (size_t)w >= size - len)
			return pmc__fail(EINVAL, "'%s': too long", spec);
		len += (size_t)w;
	}
	return 0;
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
	const char *quals = ctrspec[nlen] ? ctrspec + nlen + 1 : "";
	const struct named *n = find_named(out->name);
	char spec[512];
	int err;
	if (n) {
		snprintf(spec, sizeof(spec), "%s", n->spec);
		/* Qualifiers go on each event of a sum: "a:u,b:u". */
		if (*quals && strchr(n->spec, ',')) {
			char first[256], second[256];
			snprintf(first, sizeof(first), "%.*s", (int)strcspn(n->spec, ","), n->spec);
			snprintf(second, sizeof(second), "%s", strchr(n->spec, ',') + 1);
			if (qualifiers(first, sizeof(first), quals, true, ctrspec) ||
			    qualifiers(second, sizeof(second), quals, true, ctrspec))
				return -1;
			snprintf(spec, sizeof(spec), "%s,%s", first, second);
		} else if (qualifiers(spec, sizeof(spec), quals, n->cls == PMC_CLASS_SOFT, ctrspec)) {
			return -1;
		}
		err = resolve_spec(out, spec, n->filter);
		if (err)
			return pmc__fail(ENXIO, "'%s' is %s here, which is not available: %s", out->name,
					 n->spec, hwc_errdetail());
		out->divisor = n->divisor;
		out->cls = n->cls == CORE ? pmc__m.core : n->cls;
		out->code = n->cls == PMC_CLASS_TSC	 ? PMC_EV_TSC_TSC
			    : n->cls == PMC_CLASS_SOFT ? soft_code((size_t)(n - named))
						       : alias_code(n);
		snprintf(out->name, sizeof(out->name), "%s", n->name);
	} else {
		snprintf(spec, sizeof(spec), "%s", out->name);
		if (qualifiers(spec, sizeof(spec), quals, false, ctrspec))
			return -1;
		err = resolve_spec(out, spec, NULL);
		char *dot = strchr(out->name, '.');
		if (err && dot && !strchr(out->name, ':')) {
			/* FreeBSD's and perf's "INST_RETIRED.ANY" is libpfm4's
			 * "INST_RETIRED:ANY". */
			char keep[1024];
			snprintf(keep, sizeof(keep), "%s", hwc_errdetail());
			snprintf(spec, sizeof(spec), "%.*s:%s", (int)(dot - out->name), out->name,
				 dot + 1);
			if (qualifiers(spec, sizeof(spec), quals, false, ctrspec))
				return -1;
			err = resolve_spec(out, spec, NULL);
			if (err)
				return pmc__fail(EINVAL, "%s", keep);
		}
		if (err)
			return pmc__fail(EINVAL, "%s", hwc_errdetail());
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
