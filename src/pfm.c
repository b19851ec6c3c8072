/* libpfm4: native event names for any CPU model it knows. */
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* libpfm4 is loaded on first use rather than linked: relocating its event
 * tables costs about 2 MB of memory and a millisecond at every start, and
 * most runs (software and generic events) never need them.  Every libpfm4
 * function this file calls is listed here; the macros below route the
 * calls through the loaded library. */
#define PFM_FUNCTIONS(X)                                                                 \
	X(pfm_initialize)                                                                \
	X(pfm_strerror)                                                                  \
	X(pfm_get_pmu_info)                                                              \
	X(pfm_get_event_info)                                                            \
	X(pfm_get_event_attr_info)                                                       \
	X(pfm_get_event_next)                                                            \
	X(pfm_find_event)                                                                \
	X(pfm_get_os_event_encoding)

#define PFM_POINTER(f) __typeof__(f) *f;
static struct {
	PFM_FUNCTIONS(PFM_POINTER)
} pfm_lib;
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status;
static char pfm_load_error[256];

static bool pfm_load(void)
{
#define PFM_SYM(f) {#f, offsetof(__typeof__(pfm_lib), f)},
	static const struct hwc__dl_sym syms[] = {PFM_FUNCTIONS(PFM_SYM)};
#undef PFM_SYM
	return hwc__dl_open("libpfm.so.4", syms, HWC_ARRAY_SIZE(syms), &pfm_lib, pfm_load_error,
			    sizeof(pfm_load_error)) == 0;
}

/* From here on, calls go through the loaded library. */
#define pfm_initialize (*pfm_lib.pfm_initialize)
#define pfm_strerror (*pfm_lib.pfm_strerror)
#define pfm_get_pmu_info (*pfm_lib.pfm_get_pmu_info)
#define pfm_get_event_info (*pfm_lib.pfm_get_event_info)
#define pfm_get_event_attr_info (*pfm_lib.pfm_get_event_attr_info)
#define pfm_get_event_next (*pfm_lib.pfm_get_event_next)
#define pfm_find_event (*pfm_lib.pfm_find_event)
#define pfm_get_os_event_encoding (*pfm_lib.pfm_get_os_event_encoding)

static void pfm_setup(void)
{
	/* Loaded before us: another part of this process (PAPI, say) uses
	 * libpfm4, whose tables are one per process: it keeps them all. */
	void *theirs = dlopen("libpfm.so.4", RTLD_LAZY | RTLD_NOLOAD);
	if (theirs)
		dlclose(theirs);
	if (!pfm_load()) {
		pfm_status = PFM_ERR_NOINIT;
		return;
	}
	/* model::EVENT must encode for models absent from this host; libpfm4
	 * only reads these switches at initialisation (documented in libhwc(3)).
	 * Restored after: the commands we count inherit the environment, and
	 * one more variable changes what their loader and libc execute. */
	bool set = !getenv("LIBPFM_ENCODE_INACTIVE");
	if (set)
		setenv("LIBPFM_ENCODE_INACTIVE", "1", 0);
	/* Without libpfm4's copy of perf's generic events (is_generic_table):
	 * setting it up reads the id file of every tracepoint, ~2300 files and
	 * ~20 ms here, at every start that needs a native name.  perf::NAME
	 * still encodes, as the events of inactive models do; the tracepoints
	 * are hwc's own (hwc-events(7)).  Not where libpfm4 was loaded before
	 * us: PAPI's perf_event component needs that table. */
	const char *env = getenv("LIBPFM_DISABLED_PMUS");
	char *user = env ? strdup(env) : NULL, *disabled = NULL;
	if (!theirs && (!env || user) &&
	    asprintf(&disabled, "%s%sperf,perf_raw", user ? user : "", user && *user ? "," : "") < 0)
		disabled = NULL;
	if (disabled)
		setenv("LIBPFM_DISABLED_PMUS", disabled, 1);
	pfm_status = pfm_initialize();
	if (set)
		unsetenv("LIBPFM_ENCODE_INACTIVE");
	if (disabled && user)
		setenv("LIBPFM_DISABLED_PMUS", user, 1);
	else if (disabled)
		unsetenv("LIBPFM_DISABLED_PMUS");
	free(disabled);
	free(user);
}

/* Is libpfm4 loaded and initialised?  Quietly: callers that only look
 * something up go on without it. */
static bool pfm_ready(void)
{
	pthread_once(&pfm_once, pfm_setup);
	return !pfm_load_error[0] && pfm_status == PFM_SUCCESS;
}

int hwc__pfm_init(void)
{
	if (pfm_ready())
		return 0;
	if (pfm_load_error[0])
		return hwc__fail(-ENOTSUP,
				 "libpfm4 is needed for native event names but cannot be loaded: %s "
				 "(install the libpfm4 package)",
				 pfm_load_error);
	if (pfm_status != PFM_SUCCESS)
		return hwc__fail(-ENOTSUP, "libpfm4 failed to initialise: %s", pfm_strerror(pfm_status));
	return 0;
}

static bool pmu_info(int pmu, pfm_pmu_info_t *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return pfm_get_pmu_info(pmu, info) == PFM_SUCCESS;
}

/* libpfm4's "perf" and "perf_raw" tables restate perf's generic events
 * under other spellings (CYCLES, PERF_COUNT_HW_CPU_CYCLES, r0x1c2); hwc has
 * one spelling for those, so a bare name never resolves through them.
 * perf::NAME still does, as in PAPI.  libpfm4 starts without them
 * (pfm_setup): they are neither listed nor walked. */
static bool is_generic_table(const char *pmu)
{
	return strcasecmp(pmu, "perf") == 0 || strcasecmp(pmu, "perf_raw") == 0;
}

const char *hwc__pfm_host_model(int *ncounters, int *nfixed)
{
	if (!pfm_ready())
		return NULL;
	pfm_pmu_info_t info;
	int pmu;
	pfm_for_all_pmus(pmu)
	{
		if (!pmu_info(pmu, &info) || !info.is_present || info.type != PFM_PMU_TYPE_CORE)
			continue;
		if (is_generic_table(info.name))
			continue;
		if (ncounters)
			*ncounters = info.num_cntrs;
		if (nfixed)
			*nfixed = info.num_fixed_cntrs;
		return info.name;
	}
	return NULL;
}

/* The ':'-separated parts of SPEC after the event name ("skl::EV:A:c=1"
 * gives "A" and "c=1"), for FN(part, length, arg); stops when FN returns
 * true and returns that part, else NULL. */
static const char *find_part(const char *spec, bool (*fn)(const char *, size_t, void *), void *arg)
{
	const char *p = strstr(spec, "::");
	p = strchr(p ? p + 2 : spec, ':');
	while (p) {
		const char *part = p + 1;
		size_t len = strcspn(part, ":");
		if (fn(part, len, arg))
			return part;
		p = part[len] ? part + len : NULL;
	}
	return NULL;
}

/* u, k or h, alone or with a value (u=1). */
static bool is_priv(const char *part, size_t len, void *letters)
{
	return (len == 1 || (len > 1 && part[1] == '=')) && strchr(letters, part[0]);
}

/* The libpfm4 event of SPEC (without its attributes), or -1. */
static int event_index(const char *spec)
{
	char base[256];
	const char *model_sep = strstr(spec, "::");
	size_t len = model_sep ? (size_t)(model_sep - spec) + 2 + strcspn(model_sep + 2, ":")
			       : strcspn(spec, ":");
	if (len >= sizeof(base))
		return -1;
	memcpy(base, spec, len);
	base[len] = '\0';
	return pfm_find_event(base);
}

struct attr_probe {
	int idx;
	bool want_value; /* looking for a modifier whose value is wrong */
};

/* Is PART no attribute of the event (or, with want_value, a modifier)? */
static bool bad_part(const char *part, size_t len, void *arg)
{
	struct attr_probe *ap = arg;
	size_t key = strcspn(part, "=");
	if (key > len)
		key = len;
	pfm_event_info_t info = {.size = sizeof(info)};
	if (pfm_get_event_info(ap->idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS)
		return false;
	for (int a = 0; a < info.nattrs; a++) {
		pfm_event_attr_info_t ai = {.size = sizeof(ai)};
		if (pfm_get_event_attr_info(ap->idx, a, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS ||
		    strlen(ai.name) != key || strncasecmp(ai.name, part, key) != 0)
			continue;
		return ap->want_value && ai.type != PFM_ATTR_UMASK;
	}
	return !ap->want_value;
}

/* Explain a libpfm4 encoding error RET for SPEC, naming the offending part
 * and listing the unit masks and modifiers of the event. */
static int encoding_error(const char *spec, int ret)
{
	int idx = event_index(spec);
	struct attr_probe ap = {.idx = idx, .want_value = ret == PFM_ERR_ATTR_VAL};
	const char *part = idx >= 0 && (ret == PFM_ERR_ATTR || ret == PFM_ERR_ATTR_VAL)
				   ? find_part(spec, bad_part, &ap)
				   : NULL;
	int len = part ? (int)strcspn(part, ":") : 0;
	if (part && !len)
		hwc__fail(-EINVAL, "malformed event '%s': empty unit mask or modifier after ':'", spec);
	else if (part && ret == PFM_ERR_ATTR)
		hwc__fail(-EINVAL, "malformed event '%s': unknown unit mask or modifier '%.*s'", spec,
			  len, part);
	else if (part)
		hwc__fail(-EINVAL, "malformed event '%s': bad value in '%.*s' (%s)", spec, len, part,
			  memchr(part, '=', (size_t)len) ? "out of range" : "it needs one: name=value");
	else
		hwc__fail(-EINVAL, "malformed event '%s': %s", spec, pfm_strerror(ret));
	pfm_event_info_t info = {.size = sizeof(info)};
	if (idx < 0 || pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS)
		return -EINVAL;
	pfm_pmu_info_t pinfo;
	hwc__fail_append("; %s::%s takes", pmu_info(info.pmu, &pinfo) ? pinfo.name : "?", info.name);
	for (int a = 0; a < info.nattrs; a++) {
		pfm_event_attr_info_t ai = {.size = sizeof(ai)};
		if (pfm_get_event_attr_info(idx, a, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS)
			continue;
		hwc__fail_append(" %s%s", ai.name, ai.type == PFM_ATTR_UMASK ? "" : "=");
	}
	return -EINVAL;
}

int hwc__resolve_pfm(const char *spec, struct hwc__ev *ev)
{
	if (!pfm_ready())
		return HWC__NOT_MINE;
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	char *fstr = NULL;
	pfm_perf_encode_arg_t arg;
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.fstr = &fstr;
	arg.size = sizeof(arg);
	int ret = pfm_get_os_event_encoding(spec, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	/* PFM_ERR_INVAL: not even a libpfm4 name (blanks, odd characters). */
	if (ret == PFM_ERR_NOTFOUND || ret == PFM_ERR_INVAL)
		return HWC__NOT_MINE;
	if (ret != PFM_SUCCESS)
		return encoding_error(spec, ret);
	if (arg.cpu >= 0) {
		free(fstr);
		return hwc__fail(-EINVAL, "malformed event '%s': the cpu= modifier is not supported "
					  "in an event; choose the CPUs to count on with the target",
				 spec);
	}
	pfm_event_info_t info = {.size = sizeof(info)};
	pfm_pmu_info_t pinfo;
	if (pfm_get_event_info(arg.idx, PFM_OS_PERF_EVENT_EXT, &info) == PFM_SUCCESS &&
	    pmu_info(info.pmu, &pinfo)) {
		if (is_generic_table(pinfo.name) && !strstr(spec, "::")) {
			free(fstr);
			return HWC__NOT_MINE;
		}
		snprintf(ev->pmu, sizeof(ev->pmu), "%s", pinfo.name);
	} else if (fstr && strstr(fstr, "::")) {
		/* a table libpfm4 encodes but did not start (perf, perf_raw) */
		snprintf(ev->pmu, sizeof(ev->pmu), "%.*s", (int)(strstr(fstr, "::") - fstr), fstr);
	}
	snprintf(ev->origin, sizeof(ev->origin), "libpfm4 %s", fstr ? fstr : spec);
	free(fstr);

	struct perf_event_attr *a = &ev->pub.attr;
	a->type = attr.type;
	a->config = attr.config;
	a->config1 = attr.config1;
	a->config2 = attr.config2;
	a->exclude_user = attr.exclude_user;
	a->exclude_kernel = attr.exclude_kernel;
	/* libpfm4 excludes the hypervisor by default where the PMU has that
	 * level (AMD) and never elsewhere (Intel).  Follow perf's modifiers
	 * instead: all levels unless the spec chose some, and then the
	 * hypervisor only as its h said (h exists only where libpfm4 honours
	 * it). */
	ev->pub.explicit_priv = find_part(spec, is_priv, "ukh") != NULL;
	if (!ev->pub.explicit_priv)
		a->exclude_hv = 0;
	else if (find_part(spec, is_priv, "h"))
		a->exclude_hv = attr.exclude_hv;
	else
		a->exclude_hv = 1;
	if (a->exclude_user && a->exclude_kernel && a->exclude_hv)
		return hwc__fail(-EINVAL, "'%s' counts nothing: it excludes user, kernel and "
					  "hypervisor",
				 spec);
	/* period=, freq=, precise=, pinned=, excl= */
	a->sample_period = attr.sample_period;
	a->freq = attr.freq;
	a->precise_ip = attr.precise_ip;
	a->pinned = attr.pinned;
	a->exclusive = attr.exclusive;
	ev->pub.source = HWC_SRC_PFM;
	return 0;
}

void hwc__pfm_names(hwc__name_fn fn, void *arg)
{
	if (!pfm_ready())
		return;
	pfm_pmu_info_t pinfo;
	int pmu;
	pfm_for_all_pmus(pmu)
	{
		if (!pmu_info(pmu, &pinfo) || !pinfo.is_present || is_generic_table(pinfo.name))
			continue;
		for (int idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
			pfm_event_info_t info = {.size = sizeof(info)};
			if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) == PFM_SUCCESS)
				fn(info.name, arg);
		}
	}
}

void hwc__pfm_model_names(const char *model, hwc__name_fn fn, void *arg)
{
	if (!pfm_ready())
		return;
	pfm_pmu_info_t pinfo;
	int pmu;
	char name[256];
	pfm_for_all_pmus(pmu)
	{
		if (!pmu_info(pmu, &pinfo) || strcasecmp(pinfo.name, model) != 0)
			continue;
		for (int idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
			pfm_event_info_t info = {.size = sizeof(info)};
			if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS)
				continue;
			snprintf(name, sizeof(name), "%s::%s", pinfo.name, info.name);
			fn(name, arg);
		}
	}
}

bool hwc__pfm_model_known(const char *model)
{
	if (!pfm_ready())
		return false;
	if (is_generic_table(model))
		return true; /* not started, but encoded (pfm_setup) */
	pfm_pmu_info_t pinfo;
	int pmu;
	pfm_for_all_pmus(pmu)
	{
		if (pmu_info(pmu, &pinfo) && pinfo.name && strcasecmp(pinfo.name, model) == 0)
			return true;
	}
	return false;
}

/* Append "it is an event of: skl, icl" to the detail when SPEC's event name
 * exists in other models' tables (the user may need model::EVENT). */
void hwc__pfm_models_with_event(const char *spec)
{
	if (!pfm_ready()) {
		if (pfm_load_error[0])
			hwc__fail_append("; native event names are unavailable: libpfm4 cannot be loaded "
					 "(%s; install the libpfm4 package)",
					 pfm_load_error);
		return;
	}
	if (strstr(spec, "::"))
		return;
	char name[256];
	size_t len = strcspn(spec, ":");
	if (len == 0 || len >= 200)
		return;
	int found = 0;
	pfm_pmu_info_t pinfo;
	int pmu;
	pfm_for_all_pmus(pmu)
	{
		if (!pmu_info(pmu, &pinfo) || pinfo.is_present || pinfo.type != PFM_PMU_TYPE_CORE)
			continue;
		snprintf(name, sizeof(name), "%s::%.*s", pinfo.name, (int)len, spec);
		if (pfm_find_event(name) < 0)
			continue;
		if (found++ == 0)
			hwc__fail_append("; '%.*s' is an event of other CPU models:", (int)len, spec);
		if (found <= 8)
			hwc__fail_append(" %s", pinfo.name);
	}
	if (found > 8)
		hwc__fail_append(" and %d more", found - 8);
	if (found)
		hwc__fail_append(" (write model::EVENT to encode for one of them)");
}

/* ------------------------------------------------------------- listing */

static void model_info(const pfm_pmu_info_t *p, struct hwc_model_info *m)
{
	*m = (struct hwc_model_info){
		.name = p->name,
		.desc = p->desc ? p->desc : "",
		.present = p->is_present,
		.core = p->type == PFM_PMU_TYPE_CORE,
		.os_tables = p->type == PFM_PMU_TYPE_OS_GENERIC,
		.nevents = p->nevents,
		.ncounters = p->num_cntrs,
		.nfixed = p->num_fixed_cntrs,
	};
}

int hwc__pfm_models_walk(int (*fn)(const struct hwc_model_info *m, void *arg), void *arg)
{
	int err = hwc__pfm_init();
	if (err)
		return err;
	pfm_pmu_info_t pinfo;
	int pmu;
	pfm_for_all_pmus(pmu)
	{
		if (!pmu_info(pmu, &pinfo) || !pinfo.name)
			continue;
		struct hwc_model_info m;
		model_info(&pinfo, &m);
		int r = fn(&m, arg);
		if (r)
			return r;
	}
	return 0;
}

/* The libpfm4 PMU called MODEL (case-insensitive), or -1. */
static int find_model(const char *model, pfm_pmu_info_t *pinfo)
{
	if (hwc__pfm_init())
		return -1;
	int pmu;
	pfm_for_all_pmus(pmu)
	{
		if (pmu_info(pmu, pinfo) && pinfo->name && strcasecmp(pinfo->name, model) == 0)
			return pmu;
	}
	return -1;
}

int hwc__pfm_model(const char *model, struct hwc_model_info *out)
{
	pfm_pmu_info_t pinfo;
	int pmu = find_model(model, &pinfo);
	if (pmu < 0)
		return -ENOENT;
	model_info(&pinfo, out);
	return 0;
}

static enum hwc_attr_kind attr_kind(pfm_attr_t type)
{
	switch (type) {
	case PFM_ATTR_MOD_BOOL:
		return HWC_ATTR_FLAG;
	case PFM_ATTR_MOD_INTEGER:
		return HWC_ATTR_VALUE;
	default:
		return HWC_ATTR_UMASK;
	}
}

int hwc__pfm_events_walk(const char *model, hwc_event_walk_fn fn, void *arg)
{
	pfm_pmu_info_t pinfo;
	if (find_model(model, &pinfo) < 0)
		return -ENOENT;
	struct hwc_event_attr_info *attrs = NULL;
	size_t cap = 0;
	char spec[512];
	int r = 0;
	for (int idx = pinfo.first_event; idx != -1 && !r; idx = pfm_get_event_next(idx)) {
		pfm_event_info_t info = {.size = sizeof(info)};
		if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS)
			continue;
		if ((size_t)info.nattrs > cap) {
			struct hwc_event_attr_info *a = realloc(attrs, (size_t)info.nattrs * sizeof(*a));
			if (!a) {
				r = hwc__fail(-ENOMEM, "out of memory");
				break;
			}
			attrs = a;
			cap = (size_t)info.nattrs;
		}
		size_t n = 0;
		for (int i = 0; i < info.nattrs; i++) {
			pfm_event_attr_info_t ai = {.size = sizeof(ai)};
			if (pfm_get_event_attr_info(idx, i, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS)
				continue;
			attrs[n++] = (struct hwc_event_attr_info){
				.name = ai.name,
				.desc = ai.desc ? ai.desc : "",
				.kind = attr_kind(ai.type),
				.is_default = ai.is_dfl,
				.code = ai.type == PFM_ATTR_UMASK || ai.type == PFM_ATTR_RAW_UMASK
						? ai.code
						: 0,
			};
		}
		snprintf(spec, sizeof(spec), "%s::%s", pinfo.name, info.name);
		struct hwc_event_info ev = {.name = info.name, .spec = spec, .pmu = pinfo.name,
					    .source = HWC_SRC_PFM, .desc = info.desc ? info.desc : "",
					    .code = info.code, .nattrs = n, .attrs = attrs};
		r = fn(&ev, arg);
	}
	free(attrs);
	return r;
}
