/* libpfm4: native event names for any CPU model it knows. */
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
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
	void *h = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(pfm_load_error, sizeof(pfm_load_error), "%s", dlerror());
		return false;
	}
#define PFM_LOAD(f)                                                                      \
	if (!(*(void **)&pfm_lib.f = dlsym(h, #f))) {                                    \
		snprintf(pfm_load_error, sizeof(pfm_load_error), "libpfm.so.4 has no %s", #f); \
		return false;                                                            \
	}
	PFM_FUNCTIONS(PFM_LOAD)
#undef PFM_LOAD
	return true;
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
	if (!pfm_load()) {
		pfm_status = PFM_ERR_NOINIT;
		return;
	}
	/* model::EVENT must encode for models absent from this host; libpfm4
	 * only reads this switch at initialisation (documented in libhwc(3)). */
	if (!getenv("LIBPFM_ENCODE_INACTIVE"))
		setenv("LIBPFM_ENCODE_INACTIVE", "1", 0);
	pfm_status = pfm_initialize();
}

int hwc__pfm_init(void)
{
	pthread_once(&pfm_once, pfm_setup);
	if (pfm_load_error[0])
		return hwc__fail(-ENOTSUP, "libpfm4 cannot be loaded: %s (install the libpfm4 package)",
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

const char *hwc__pfm_host_model(int *ncounters, int *nfixed)
{
	if (hwc__pfm_init())
		return NULL;
	pfm_pmu_info_t info;
	int pmu;
	pfm_for_all_pmus(pmu)
	{
		if (!pmu_info(pmu, &info) || !info.is_present || info.type != PFM_PMU_TYPE_CORE)
			continue;
		if (strcmp(info.name, "perf") == 0 || strcmp(info.name, "perf_raw") == 0)
			continue;
		if (ncounters)
			*ncounters = info.num_cntrs;
		if (nfixed)
			*nfixed = info.num_fixed_cntrs;
		return info.name;
	}
	return NULL;
}

/* Does the event string choose privilege levels itself (u, k, h)? */
static bool chooses_priv(const char *spec)
{
	const char *p = strstr(spec, "::");
	p = strchr(p ? p + 2 : spec, ':');
	while (p) {
		const char *t = p + 1;
		size_t len = strcspn(t, ":");
		if ((len == 1 || (len > 1 && t[1] == '=')) && strchr("ukh", t[0]))
			return true;
		p = strchr(t, ':');
	}
	return false;
}

/* List the unit masks and modifiers of the event SPEC names, for errors. */
static void append_attrs(const char *spec)
{
	char base[256];
	size_t len = strcspn(spec, ":");
	const char *model_sep = strstr(spec, "::");
	if (model_sep)
		len = (size_t)(model_sep - spec) + 2 + strcspn(model_sep + 2, ":");
	if (len >= sizeof(base))
		return;
	memcpy(base, spec, len);
	base[len] = '\0';
	int idx = pfm_find_event(base);
	if (idx < 0)
		return;
	pfm_event_info_t info = {.size = sizeof(info)};
	if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS)
		return;
	hwc__fail_append(" (valid for %s:", base);
	for (int a = 0; a < info.nattrs; a++) {
		pfm_event_attr_info_t ai = {.size = sizeof(ai)};
		if (pfm_get_event_attr_info(idx, a, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS)
			continue;
		hwc__fail_append(" %s%s", ai.name, ai.type == PFM_ATTR_UMASK ? "" : "=");
	}
	hwc__fail_append(")");
}

int hwc__resolve_pfm(const char *spec, struct hwc__ev *ev)
{
	int err = hwc__pfm_init();
	if (err)
		return -ENOENT;
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	char *fstr = NULL;
	pfm_perf_encode_arg_t arg;
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.fstr = &fstr;
	arg.size = sizeof(arg);
	int ret = pfm_get_os_event_encoding(spec, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret == PFM_ERR_NOTFOUND)
		return -ENOENT;
	if (ret != PFM_SUCCESS) {
		hwc__fail(-EINVAL, "malformed event '%s': %s", spec, pfm_strerror(ret));
		append_attrs(spec);
		return -EINVAL;
	}
	pfm_event_info_t info = {.size = sizeof(info)};
	pfm_pmu_info_t pinfo;
	if (pfm_get_event_info(arg.idx, PFM_OS_PERF_EVENT_EXT, &info) == PFM_SUCCESS &&
	    pmu_info(info.pmu, &pinfo))
		snprintf(ev->pmu, sizeof(ev->pmu), "%s", pinfo.name);
	snprintf(ev->origin, sizeof(ev->origin), "libpfm4 %s", fstr ? fstr : spec);
	free(fstr);

	struct perf_event_attr *a = &ev->pub.attr;
	a->type = attr.type;
	a->config = attr.config;
	a->config1 = attr.config1;
	a->config2 = attr.config2;
	a->exclude_user = attr.exclude_user;
	a->exclude_kernel = attr.exclude_kernel;
	a->exclude_hv = attr.exclude_hv;
	a->precise_ip = attr.precise_ip;
	ev->pub.source = HWC_SRC_PFM;
	ev->pub.explicit_priv = chooses_priv(spec);
	return 0;
}

void hwc__pfm_names(hwc__name_fn fn, void *arg)
{
	if (hwc__pfm_init())
		return;
	pfm_pmu_info_t pinfo;
	int pmu;
	pfm_for_all_pmus(pmu)
	{
		if (!pmu_info(pmu, &pinfo) || !pinfo.is_present)
			continue;
		for (int idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
			pfm_event_info_t info = {.size = sizeof(info)};
			if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) == PFM_SUCCESS)
				fn(info.name, arg);
		}
	}
}

bool hwc__pfm_model_known(const char *model)
{
	if (hwc__pfm_init())
		return false;
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
	if (hwc__pfm_init() || strstr(spec, "::"))
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
