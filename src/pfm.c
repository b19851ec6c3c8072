/* libpfm4: native event names for any CPU model it knows. */
#include "internal.h"

#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status;

static void pfm_setup(void)
{
	/* model::EVENT must encode for models absent from this host; libpfm4
	 * only reads this switch at initialisation (documented in libhwc(3)). */
	if (!getenv("LIBPFM_ENCODE_INACTIVE"))
		setenv("LIBPFM_ENCODE_INACTIVE", "1", 0);
	pfm_status = pfm_initialize();
}

int hwc__pfm_init(void)
{
	pthread_once(&pfm_once, pfm_setup);
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
