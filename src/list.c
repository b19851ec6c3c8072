/* Event listing: every event a source knows, and whether it can be opened
 * here.  The tables stay where they live (event_table.c, pfm.c, pmu.c);
 * this file strings their iterators together and adds probing. */
#include "internal.h"
#include "pmu_events.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Resolve SPEC and open it on the calling thread.  *RESOLVED says whether
 * resolution succeeded (a failure after it is the kernel's answer). */
static int probe(const char *spec, bool *user_only, bool *resolved)
{
	hwc_evlist *list;
	hwc_counters *c = NULL;
	*user_only = *resolved = false;
	int err = hwc_evlist_new(&list);
	if (err)
		return err;
	err = hwc_evlist_add(list, spec);
	if (!err) {
		*resolved = true;
		struct hwc_target self = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
		err = hwc_counters_open(&c, list, &self);
	}
	if (!err)
		for (size_t i = 0; i < hwc_evlist_size(list); i++)
			*user_only |= hwc_counters_user_only(c, i);
	hwc_counters_close(c);
	hwc_evlist_free(list);
	return err;
}

HWC_EXPORT int hwc_event_probe(const char *spec, bool *user_only)
{
	hwc__clear_error();
	bool uo, resolved;
	int err = probe(spec, &uo, &resolved);
	if (user_only)
		*user_only = uo;
	return err;
}

/* ------------------------------------------------------------- probing */

struct walk {
	const char *pattern;
	unsigned flags;
	hwc_event_walk_fn fn;
	void *arg;
	/* The answer shared by every event of one libpfm4 model or of tracefs. */
	char shared_for[64];
	int shared_status;
	bool shared_user_only;
	char shared_why[1400];
	char why[1024];
};

static void set_shared(struct walk *w, const char *key, int status, bool user_only, const char *why)
{
	snprintf(w->shared_for, sizeof(w->shared_for), "%s", key);
	w->shared_status = status;
	w->shared_user_only = user_only;
	snprintf(w->shared_why, sizeof(w->shared_why), "%s", status ? why : "");
}

/* The representative of a libpfm4 model: its first event that resolves
 * without the user choosing a unit mask. */
static int first_resolving(const struct hwc_event_info *ev, void *arg)
{
	char *spec = arg;
	hwc_evlist *list;
	if (hwc_evlist_new(&list))
		return 0;
	int err = hwc_evlist_add(list, ev->spec);
	hwc_evlist_free(list);
	if (err)
		return 0;
	snprintf(spec, 512, "%s", ev->spec);
	return 1;
}

/* One probe answers for every event of a libpfm4 model: they all use the
 * same PMU, so if one cannot be opened none can, and if one can, the
 * others differ only in the bits the PMU counts. */
static void probe_model(struct walk *w, const char *model)
{
	struct hwc_model_info m;
	const char *host = hwc__pfm_host_model(NULL, NULL);
	char spec[512] = "";
	bool uo = false, resolved;
	if (hwc__pfm_model(model, &m) == 0 && !m.present) {
		hwc__fail(-ENODEV,
			  "%s is not this machine's CPU (%s): its events encode, but would count "
			  "something else here",
			  model, host ? host : "libpfm4 detects no model here");
		set_shared(w, model, -ENODEV, false, hwc_errdetail());
		return;
	}
	hwc__pfm_events_walk(model, first_resolving, spec);
	int err = spec[0] ? probe(spec, &uo, &resolved)
			  : hwc__fail(-ENOENT, "no event of %s resolves without a unit mask", model);
	set_shared(w, model, err, uo, "");
	if (err)
		snprintf(w->shared_why, sizeof(w->shared_why),
			 "no %s event can be opened here (probed with %s): %s", model, spec,
			 hwc_errdetail());
}

/* A JSON model's events, like a libpfm4 model's, share one answer: probed
 * with EV, its first listed event, when the model is this CPU's. */
static void probe_json_model(struct walk *w, const struct hwc_event_info *ev)
{
	const struct hwc__pe_table *host = NULL;
	bool is_host = hwc__pe_table(NULL, &host) == 0 && strcmp(host->model, ev->pmu) == 0;
	bool uo = false, resolved;
	if (!is_host) {
		hwc__fail(-ENODEV, "%s is not this machine's CPU (%s): its events encode, but "
				   "would count something else here",
			  ev->pmu, host ? host->model : "no JSON model for this CPU");
		set_shared(w, ev->pmu, -ENODEV, false, hwc_errdetail());
		return;
	}
	int err = probe(ev->spec, &uo, &resolved);
	set_shared(w, ev->pmu, err, uo, "");
	if (err)
		snprintf(w->shared_why, sizeof(w->shared_why),
			 "no %s event can be opened here (probed with %s): %s", ev->pmu, ev->spec,
			 hwc_errdetail());
}

/* Tracepoints differ only in their id: permission and tracefs are common. */
static void probe_tracepoints(struct walk *w, const char *spec)
{
	bool uo, resolved;
	int err = probe(spec, &uo, &resolved);
	set_shared(w, "tracepoint", err, uo, "");
	if (err)
		snprintf(w->shared_why, sizeof(w->shared_why),
			 "no tracepoint can be opened here (probed with %s): %s", spec, hwc_errdetail());
}

bool hwc__event_matches(const char *pattern, const char *name, const char *spec)
{
	if (!pattern)
		return true;
	if (strpbrk(pattern, "*?["))
		return fnmatch(pattern, name, FNM_CASEFOLD) == 0 ||
		       fnmatch(pattern, spec, FNM_CASEFOLD) == 0;
	return strcasestr(name, pattern) || strcasestr(spec, pattern);
}

/* Filter, then probe: only events that are shown cost a probe. */
static int with_probe(const struct hwc_event_info *ev, void *arg)
{
	struct walk *w = arg;
	if (!hwc__event_matches(w->pattern, ev->name, ev->spec))
		return 0;
	if (!(w->flags & HWC_WALK_PROBE))
		return w->fn(ev, w->arg);
	struct hwc_event_info copy = *ev;
	copy.probed = true;
	if (ev->source == HWC_SRC_PFM || ev->source == HWC_SRC_JSON ||
	    ev->source == HWC_SRC_TRACEPOINT) {
		if (strcmp(w->shared_for, ev->pmu) != 0) {
			if (ev->source == HWC_SRC_PFM)
				probe_model(w, ev->pmu);
			else if (ev->source == HWC_SRC_JSON)
				probe_json_model(w, ev);
			else
				probe_tracepoints(w, ev->spec);
		}
		copy.status = w->shared_status;
		copy.user_only = w->shared_user_only;
		copy.why_not = w->shared_why;
	} else {
		bool resolved;
		copy.status = probe(ev->spec, &copy.user_only, &resolved);
		snprintf(w->why, sizeof(w->why), "%s", copy.status ? hwc_errdetail() : "");
		copy.why_not = w->why;
	}
	hwc__clear_error();
	return w->fn(&copy, w->arg);
}

/* ------------------------------------------------------------- sources */

struct preset_ctx {
	struct walk *w;
	char equiv[256];
};

/* The event spec SPEC resolves to, or false. */
static bool encode(const char *spec, struct perf_event_attr *attr)
{
	hwc_evlist *l;
	if (hwc_evlist_new(&l))
		return false;
	bool ok = hwc_evlist_add(l, spec) == 0 && hwc_evlist_size(l) == 1;
	if (ok)
		*attr = hwc_evlist_event(l, 0)->attr;
	hwc_evlist_free(l);
	return ok;
}

/* Which of its candidates preset NAME stands for here: the first whose
 * encoding is the preset's own.  The resolver decides; this only names it. */
static bool preset_equiv(const char *name, char *equiv, size_t size)
{
	struct perf_event_attr preset, cand;
	const char *label;
	size_t n;
	const char *const *cands = hwc__preset_candidates(name, &label, &n);
	if (!cands || !encode(name, &preset))
		return false;
	for (size_t i = 0; i < n; i++)
		if (encode(cands[i], &cand) && cand.type == preset.type &&
		    cand.config == preset.config && cand.config1 == preset.config1 &&
		    cand.config2 == preset.config2) {
			snprintf(equiv, size, "%s", cands[i]);
			return true;
		}
	return false;
}

static int one_preset(const char *name, const char *desc, void *arg)
{
	struct preset_ctx *p = arg;
	if (!hwc__event_matches(p->w->pattern, name, name))
		return 0; /* before the resolver's work */
	bool mapped = preset_equiv(name, p->equiv, sizeof(p->equiv));
	hwc__clear_error();
	struct hwc_event_info ev = {.name = name, .spec = name, .pmu = "preset",
				    .source = HWC_SRC_PRESET, .desc = desc ? desc : "",
				    .equiv = mapped ? p->equiv : NULL};
	return with_probe(&ev, p->w);
}

static int walk_models_present(const struct hwc_model_info *m, void *arg)
{
	if (!m->present || m->os_tables)
		return 0;
	return hwc__pfm_events_walk(m->name, with_probe, arg);
}

static int walk_pmu_aliases(const struct hwc_pmu_info *p, void *arg)
{
	if (!p->nevents)
		return 0;
	return hwc__pmu_events_walk(p->name, with_probe, arg);
}

static const char *const categories[] = {"generic", "cache", "software", "preset", "tracepoint"};

static int walk_category(const char *cat, struct walk *w)
{
	if (strcmp(cat, "generic") == 0)
		return hwc__table_walk(HWC_SRC_GENERIC, with_probe, w);
	if (strcmp(cat, "cache") == 0)
		return hwc__table_walk(HWC_SRC_CACHE, with_probe, w);
	if (strcmp(cat, "software") == 0)
		return hwc__table_walk(HWC_SRC_SOFTWARE, with_probe, w);
	if (strcmp(cat, "preset") == 0) {
		struct preset_ctx p = {.w = w};
		return hwc__preset_walk(one_preset, &p);
	}
	return hwc__tracepoints_walk(w->pattern, with_probe, w);
}

/* "Did you mean" for an unknown PMU name. */
struct closest {
	const char *word;
	char best[64];
	size_t dist;
	char containing[3][64]; /* names containing the word: "zen4" */
	size_t ncontaining;
};

static void consider(struct closest *c, const char *name)
{
	if (strcasestr(name, c->word) && c->ncontaining < HWC_ARRAY_SIZE(c->containing))
		snprintf(c->containing[c->ncontaining++], sizeof(c->containing[0]), "%s", name);
	size_t len = strlen(c->word), limit = len <= 3 ? 1 : len < 6 ? 2 : 3;
	size_t d = hwc__edit_distance(c->word, name, limit);
	if (d <= limit && d < c->dist) {
		c->dist = d;
		snprintf(c->best, sizeof(c->best), "%s", name);
	}
}

static int consider_model(const struct hwc_model_info *m, void *arg)
{
	consider(arg, m->name);
	return 0;
}

static int consider_pmu(const struct hwc_pmu_info *p, void *arg)
{
	consider(arg, p->name);
	return 0;
}

static int unknown_pmu(const char *pmu)
{
	if (!*pmu)
		return hwc__fail(-EINVAL, "empty PMU name; `hwc list --pmu help` lists them");
	struct closest c = {.word = pmu, .dist = (size_t)-1};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(categories); i++)
		consider(&c, categories[i]);
	hwc__pfm_models_walk(consider_model, &c);
	hwc__pmus_walk(consider_pmu, &c);
	if (hwc__pfm_model_known(pmu))
		return hwc__fail(-ENOENT, "libpfm4's '%s' table is not listed: hwc starts libpfm4 "
					  "without it, as its setup reads every tracepoint; its names "
					  "still encode as %s::NAME (hwc-events(7)), and hwc's own are "
					  "`hwc list generic`, `cache`, `software` and `tracepoint`",
				 pmu, pmu);
	hwc__fail(-ENOENT, "unknown PMU or libpfm4 model '%s'", pmu);
	if (c.best[0]) {
		hwc__fail_append("; did you mean '%s'?", c.best);
	} else if (c.ncontaining) {
		hwc__fail_append("; did you mean");
		for (size_t i = 0; i < c.ncontaining; i++)
			hwc__fail_append("%s '%s'", i ? "," : "", c.containing[i]);
		hwc__fail_append("?");
	}
	hwc__fail_append("; `hwc list --pmu help` lists the event sources, the sysfs PMUs and "
			 "the libpfm4 models");
	return -ENOENT;
}

HWC_EXPORT int hwc_events_walk(const char *pmu, const char *pattern, unsigned flags,
			       hwc_event_walk_fn fn, void *arg)
{
	hwc__clear_error();
	struct walk *w = calloc(1, sizeof(*w));
	if (!w)
		return hwc__fail(-ENOMEM, "out of memory");
	*w = (struct walk){.pattern = pattern, .flags = flags, .fn = fn, .arg = arg};
	int r = 0;
	if (!pmu) {
		for (size_t i = 0; i < HWC_ARRAY_SIZE(categories) - 1 && !r; i++)
			r = walk_category(categories[i], w);
		if (!r)
			r = hwc__pfm_models_walk(walk_models_present, w);
		if (!r && hwc__pe_root()) {
			/* This CPU's JSON table, when the tree has one. */
			const struct hwc__pe_table *t;
			if (hwc__pe_table(NULL, &t) == 0)
				r = hwc__json_events_walk(NULL, with_probe, w);
			hwc__clear_error();
		}
		if (!r)
			r = hwc__pmus_walk(walk_pmu_aliases, w);
		if (!r) {
			r = hwc__tracepoints_walk(w->pattern, with_probe, w);
			if (r == -ENOENT || r == -EACCES) {
				r = 0; /* no tracefs for this user: no tracepoints to list */
				hwc__clear_error();
			}
		}
		goto out;
	}
	for (size_t i = 0; i < HWC_ARRAY_SIZE(categories); i++)
		if (strcasecmp(pmu, categories[i]) == 0) {
			r = walk_category(categories[i], w);
			goto out;
		}
	struct hwc_model_info m;
	if (hwc__pfm_model(pmu, &m) == 0)
		r = hwc__pfm_events_walk(m.name, with_probe, w);
	else if (strcasecmp(pmu, "json") == 0 || hwc__pe_model_known(pmu))
		r = hwc__json_events_walk(strcasecmp(pmu, "json") == 0 ? NULL : pmu, with_probe, w);
	else if (hwc__pmu_exists(pmu))
		r = hwc__pmu_events_walk(pmu, with_probe, w);
	else
		r = unknown_pmu(pmu);
out:
	free(w);
	return r;
}

HWC_EXPORT int hwc_models_walk(int (*fn)(const struct hwc_model_info *m, void *arg), void *arg)
{
	hwc__clear_error();
	return hwc__pfm_models_walk(fn, arg);
}

struct json_models {
	int (*fn)(const struct hwc_model_info *m, void *arg);
	void *arg;
	const char *host;
};

static int one_json_model(const char *model, const char *arch, const char *cpuid, void *arg)
{
	struct json_models *jm = arg;
	char desc[512];
	snprintf(desc, sizeof(desc), "%s %s", arch, cpuid);
	struct hwc_model_info m = {.name = model, .desc = desc, .core = true,
				   .present = jm->host && strcmp(jm->host, model) == 0};
	return jm->fn(&m, jm->arg);
}

HWC_EXPORT int hwc_json_models_walk(int (*fn)(const struct hwc_model_info *m, void *arg),
				    void *arg)
{
	hwc__clear_error();
	const struct hwc__pe_table *host = NULL;
	if (hwc__pe_root() && hwc__pe_table(NULL, &host))
		hwc__clear_error();
	struct json_models jm = {fn, arg, host ? host->model : NULL};
	return hwc__pe_models_walk(one_json_model, &jm);
}

HWC_EXPORT int hwc_pmus_walk(int (*fn)(const struct hwc_pmu_info *p, void *arg), void *arg)
{
	hwc__clear_error();
	return hwc__pmus_walk(fn, arg);
}
