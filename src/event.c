/* The event resolver: one spec syntax for every front end.  A spec is a
 * comma-separated list of events and {groups}; each event becomes one
 * struct hwc_event.  Nothing is opened here. */
#include "internal.h"
#include "pmu_events.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <strings.h>

struct hwc_evlist {
	struct hwc__ev **ev;
	size_t n, cap;
	int ngroups;
};

HWC_EXPORT int hwc_evlist_new(hwc_evlist **out)
{
	hwc__clear_error();
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : hwc__fail(-ENOMEM, "out of memory");
}

HWC_EXPORT void hwc_evlist_free(hwc_evlist *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->n; i++)
		hwc__ev_free(list->ev[i]);
	free(list->ev);
	free(list);
}

HWC_EXPORT size_t hwc_evlist_size(const hwc_evlist *list)
{
	return list->n;
}

HWC_EXPORT const struct hwc_event *hwc_evlist_event(const hwc_evlist *list, size_t idx)
{
	return idx < list->n ? &list->ev[idx]->pub : NULL;
}

HWC_EXPORT struct perf_event_attr *hwc_evlist_attr(hwc_evlist *list, size_t idx)
{
	return idx < list->n ? &list->ev[idx]->pub.attr : NULL;
}

HWC_EXPORT int hwc_evlist_set_filter(hwc_evlist *list, size_t idx, const char *filter)
{
	hwc__clear_error();
	if (idx >= list->n)
		return hwc__fail(-EINVAL, "no event %zu in a list of %zu", idx, list->n);
	struct hwc__ev *ev = list->ev[idx];
	if (ev->pub.attr.type != PERF_TYPE_TRACEPOINT)
		return hwc__fail(-EINVAL, "'%s' is not a tracepoint: only tracepoints take a "
					  "filter",
				 ev->name);
	if (filter && strlen(filter) >= sizeof(ev->filter))
		return hwc__fail(-ENAMETOOLONG, "the filter of '%s' is longer than %zu bytes",
				 ev->name, sizeof(ev->filter) - 1);
	snprintf(ev->filter, sizeof(ev->filter), "%s", filter ? filter : "");
	return 0;
}

HWC_EXPORT int hwc_evlist_set_cgroup(hwc_evlist *list, size_t idx, const char *cgroup)
{
	hwc__clear_error();
	if (idx >= list->n)
		return hwc__fail(-EINVAL, "no event %zu in a list of %zu", idx, list->n);
	struct hwc__ev *ev = list->ev[idx];
	if (cgroup && strlen(cgroup) >= PATH_MAX)
		return hwc__fail(-ENAMETOOLONG, "the cgroup of '%s' is longer than %d bytes",
				 ev->name, PATH_MAX - 1);
	char *copy = NULL;
	if (cgroup && *cgroup && !(copy = strdup(cgroup)))
		return hwc__fail(-ENOMEM, "out of memory");
	free(ev->cgroup);
	ev->cgroup = copy;
	ev->pub.cgroup = copy ? copy : "";
	return 0;
}

int hwc__apply_filter(int fd, const struct hwc__ev *ev)
{
	if (!ev->filter[0])
		return 0;
	if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, ev->filter) == 0)
		return 0;
	int err = -errno;
	return hwc__fail(err, "the kernel refused the filter '%s' of '%s': %s (see the "
			      "tracepoint's fields in tracefs events/.../format)",
			 ev->filter, ev->name, strerror(-err));
}

HWC_EXPORT const char *hwc_source_name(enum hwc_source src)
{
	static const char *const names[] = {"generic", "cache", "software", "preset",
					    "libpfm4", "raw",   "pmu",      "tracepoint", "json"};
	return (unsigned)src < HWC_ARRAY_SIZE(names) ? names[src] : "unknown";
}

/* Point pub's strings at EV's own arrays. */
static void ev_point(struct hwc__ev *ev)
{
	ev->pub.name = ev->name;
	ev->pub.pmu = ev->pmu;
	ev->pub.origin = ev->origin;
	ev->pub.unit = ev->unit;
	ev->pub.filter = ev->filter;
	ev->pub.cgroup = ev->cgroup ? ev->cgroup : "";
	ev->pub.copy_of = ev->copy_of;
}

void hwc__ev_init(struct hwc__ev *ev)
{
	ev_point(ev);
	ev->pub.scale = 1.0;
}

struct hwc__ev *hwc__ev_new(void)
{
	struct hwc__ev *ev = calloc(1, sizeof(*ev));
	if (ev)
		hwc__ev_init(ev);
	return ev;
}

/* Copy PUB's description into DST, whose strings stay its own arrays:
 * false without memory. */
static bool ev_assign(struct hwc__ev *dst, const struct hwc_event *pub)
{
	snprintf(dst->name, sizeof(dst->name), "%s", pub->name);
	snprintf(dst->pmu, sizeof(dst->pmu), "%s", pub->pmu);
	snprintf(dst->origin, sizeof(dst->origin), "%s", pub->origin);
	snprintf(dst->unit, sizeof(dst->unit), "%s", pub->unit);
	snprintf(dst->filter, sizeof(dst->filter), "%s", pub->filter ? pub->filter : "");
	snprintf(dst->copy_of, sizeof(dst->copy_of), "%s", pub->copy_of ? pub->copy_of : "");
	free(dst->cgroup);
	dst->cgroup = pub->cgroup && *pub->cgroup ? strdup(pub->cgroup) : NULL;
	if (pub->cgroup && *pub->cgroup && !dst->cgroup)
		return false;
	struct hwc_event own = *pub;
	own.name = dst->name;
	own.pmu = dst->pmu;
	own.origin = dst->origin;
	own.unit = dst->unit;
	own.filter = dst->filter;
	own.cgroup = dst->cgroup ? dst->cgroup : "";
	own.copy_of = dst->copy_of;
	dst->pub = own;
	return true;
}

struct hwc__ev *hwc__ev_dup(const struct hwc_event *pub)
{
	struct hwc__ev *ev = hwc__ev_new();
	if (ev && !ev_assign(ev, pub)) {
		hwc__ev_free(ev);
		return NULL;
	}
	return ev;
}

void hwc__ev_free(struct hwc__ev *ev)
{
	if (ev)
		free(ev->cgroup);
	free(ev);
}

size_t hwc__group_size(const hwc_evlist *list, size_t e)
{
	const struct hwc_event *pub = hwc_evlist_event(list, e);
	if (!pub->leader && e != 0)
		return 0;
	size_t n = 1;
	while (e + n < list->n && !list->ev[e + n]->pub.leader &&
	       list->ev[e + n]->pub.group == pub->group)
		n++;
	return n;
}

/* ------------------------------------------------------------- modifiers */

int hwc__parse_mods(const char *mods, const char *whole, struct hwc__mods *m)
{
	if (!*mods)
		return hwc__fail(-EINVAL, "empty modifier after ':' in '%s'", whole);
	for (const char *p = mods; *p; p++) {
		if (*p != 'p' && strchr(p + 1, *p))
			return hwc__fail(-EINVAL, "malformed event '%s': modifier '%c' is repeated",
					 whole, *p);
		switch (*p) {
		case 'u': m->u = true; break;
		case 'k': m->k = true; break;
		case 'h': m->h = true; break;
		case 'p':
			if (++m->precise > 3)
				return hwc__fail(-EINVAL, "too many 'p' modifiers in '%s' (at most 3)", whole);
			break;
		case 'G': m->guest = true; break;
		case 'H': m->host = true; break;
		case 'D': m->pinned = true; break;
		case 'I': m->exclude_idle = true; break;
		case 'e': m->exclusive = true; break;
		case 'W': m->weak = true; break;
		default:
			return hwc__fail(-EINVAL,
					 "malformed event '%s': unknown modifier '%c' (modifiers: u user, "
					 "k kernel, h hypervisor, p precise, G guest, H host, D pinned, "
					 "I exclude idle, e exclusive, W weak group)",
					 whole, *p);
		}
	}
	m->explicit_priv = m->u || m->k || m->h;
	return 0;
}

/* Whose modifiers: an event's own, or its group's on the group's leader or
 * on another member. */
enum mods_of { MODS_EVENT, MODS_LEADER, MODS_MEMBER };

/* perf's rules, so that group modifiers combine with the members' own:
 * the first of u/k/h given excludes all levels, then each letter given
 * includes its level again; G and H work the same way on guest and host;
 * p letters add up; a group's D and e pin and reserve its leader only (the
 * kernel refuses them on a member), and its W makes every member weak. */
static int apply_mods(struct hwc__ev *ev, const struct hwc__mods *m, const char *whole,
		      enum mods_of of)
{
	struct perf_event_attr *a = &ev->pub.attr;
	if (m->explicit_priv) {
		if (!ev->pub.explicit_priv)
			a->exclude_user = a->exclude_kernel = a->exclude_hv = 1;
		if (m->u)
			a->exclude_user = 0;
		if (m->k)
			a->exclude_kernel = 0;
		if (m->h)
			a->exclude_hv = 0;
		ev->pub.explicit_priv = true;
	}
	if (m->guest || m->host) {
		if (!ev->explicit_gh)
			a->exclude_guest = a->exclude_host = 1;
		if (m->guest)
			a->exclude_guest = 0;
		if (m->host)
			a->exclude_host = 0;
		ev->explicit_gh = true;
	}
	if (m->precise) {
		if (a->precise_ip + (unsigned)m->precise > 3)
			return hwc__fail(-EINVAL, "too many 'p' modifiers for '%s' in '%s' (at most 3 "
						  "in all)",
					 ev->name, whole);
		a->precise_ip += (unsigned)m->precise;
	}
	if (m->pinned && of != MODS_MEMBER)
		a->pinned = 1;
	if (m->exclude_idle)
		a->exclude_idle = 1;
	if (m->exclusive && of != MODS_MEMBER)
		a->exclusive = 1;
	if (m->weak && of == MODS_EVENT)
		return hwc__fail(-EINVAL, "malformed event '%s': the weak modifier 'W' is for "
					  "groups, as in '{cycles,instructions}:W'",
				 whole);
	ev->pub.weak |= m->weak;
	return 0;
}

static int modify(struct hwc__ev *ev, const char *mods, const char *whole, enum mods_of of)
{
	struct hwc__mods m = {0};
	int err = hwc__parse_mods(mods, whole, &m);
	return err ? err : apply_mods(ev, &m, whole, of);
}

int hwc__modify(struct hwc__ev *ev, const char *mods, const char *whole)
{
	return modify(ev, mods, whole, MODS_EVENT);
}

/* ------------------------------------------------------------- did you mean */

struct suggest {
	const char *word;
	size_t limit;
	struct {
		char name[96];
		size_t dist;
	} best[3];
};

/* Rank NAME at distance D among the best three. */
static void suggest_at(struct suggest *s, const char *name, size_t d)
{
	if (d > s->limit)
		return;
	for (size_t i = 0; i < 3; i++) {
		if (s->best[i].name[0] && strcasecmp(s->best[i].name, name) == 0)
			return;
	}
	for (size_t i = 0; i < 3; i++) {
		if (!s->best[i].name[0] || d < s->best[i].dist) {
			memmove(&s->best[i + 1], &s->best[i], sizeof(s->best[0]) * (2 - i));
			snprintf(s->best[i].name, sizeof(s->best[i].name), "%s", name);
			s->best[i].dist = d;
			return;
		}
	}
}

static void suggest_one(const char *name, void *arg)
{
	struct suggest *s = arg;
	suggest_at(s, name, hwc__edit_distance(s->word, name, s->limit));
}

/* NAME is "model::EVENT": compare the EVENT part. */
static void suggest_native(const char *name, void *arg)
{
	struct suggest *s = arg;
	const char *ev = strstr(name, "::");
	suggest_at(s, name, hwc__edit_distance(s->word, ev ? ev + 2 : name, s->limit));
}

/* NAME is "pmu/alias/": "tsx" is close to "tsc", which a bare name reaches
 * (resolve_sysfs_alias), "msr/tsd/" to "msr/tsc/". */
static void suggest_alias(const char *name, void *arg)
{
	struct suggest *s = arg;
	const char *alias = strchr(name, '/') + 1;
	char word[96];
	snprintf(word, sizeof(word), "%.*s", (int)strcspn(alias, "/"), alias);
	size_t whole = hwc__edit_distance(s->word, name, s->limit);
	size_t part = hwc__edit_distance(s->word, word, s->limit);
	if (part < whole)
		suggest_at(s, word, part);
	else
		suggest_at(s, name, whole);
}

/* TOKEN resolved nowhere: say so, with the closest known names.  The names
 * are compared without unit masks or modifiers, and a model:: prefix
 * limits them to that model's events. */
static int unknown_event(const char *token, const char *spec)
{
	char word[96], model[64] = "";
	const char *dcolon = strstr(token, "::");
	const char *name = dcolon ? dcolon + 2 : token;
	if (dcolon)
		snprintf(model, sizeof(model), "%.*s", (int)(dcolon - token), token);
	snprintf(word, sizeof(word), "%.*s", (int)strcspn(name, ":"), name);
	struct suggest s = {.word = word};
	size_t len = strlen(word);
	s.limit = len < 6 ? 2 : len / 3;
	if (model[0]) {
		hwc__pfm_model_names(model, suggest_native, &s);
		hwc__json_names(model, suggest_native, &s);
	} else {
		hwc__table_names(suggest_one, &s);
		hwc__pfm_names(suggest_one, &s);
		hwc__json_names(NULL, suggest_one, &s);
		hwc__pmu_alias_names(suggest_alias, &s);
	}
	const char *host = hwc__pfm_host_model(NULL, NULL);
	if (model[0])
		hwc__fail(-ENOENT, "unknown event '%s' in %s model %s", word,
			  hwc__pfm_model_known(model) ? "libpfm4" : "JSON", model);
	else
		hwc__fail(-ENOENT, "unknown event '%s'", token);
	if (strcmp(token, spec) != 0)
		hwc__fail_append(" in '%s'", spec);
	if (!model[0] && host)
		hwc__fail_append(" on this CPU (%s)", host);
	hwc__pfm_models_with_event(token);
	if (s.best[0].name[0]) {
		hwc__fail_append("; did you mean");
		for (size_t i = 0; i < 3 && s.best[i].name[0]; i++)
			hwc__fail_append("%s '%s'", i ? "," : "", s.best[i].name);
		hwc__fail_append("?");
	} else if (strcasecmp(model, "perf") == 0 || strcasecmp(model, "perf_raw") == 0) {
		/* not listed (pfm.c): perf's names for the same events are */
		hwc__fail_append("; `hwc list generic`, `cache`, `software` and `tracepoint` "
				 "show the events it names");
	} else if (model[0]) {
		hwc__fail_append("; `hwc list --pmu %s` shows its events", model);
	} else {
		hwc__fail_append("; `hwc list` shows the events of this machine");
	}
	return -ENOENT;
}

/* ------------------------------------------------------------- one event */

static bool is_raw(const char *s)
{
	if (s[0] != 'r' || !s[1])
		return false;
	for (s++; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

/* rNNNN: the hex digits are the config, which has 64 bits. */
static int resolve_raw(const char *base, const char *token, struct hwc__ev *ev)
{
	if (strlen(base + 1) > 16)
		return hwc__fail(-EINVAL, "raw event '%s' has more than 16 hex digits; the config "
					  "is 64 bits",
				 token);
	ev->pub.attr.type = PERF_TYPE_RAW;
	ev->pub.attr.config = strtoull(base + 1, NULL, 16);
	ev->pub.source = HWC_SRC_RAW;
	snprintf(ev->pmu, sizeof(ev->pmu), "%s", hwc__core_pmu_label());
	snprintf(ev->origin, sizeof(ev->origin), "raw config %#llx",
		 (unsigned long long)ev->pub.attr.config);
	return 0;
}

static int resolve_one(const char *token, const char *spec, struct hwc__ev *ev, int depth);

static bool is_table_name(const char *name)
{
	struct hwc__ev probe = {0};
	hwc__ev_init(&probe);
	return hwc__resolve_table(name, &probe) == 0;
}

/* A PAPI / illumos preset: the first candidate that resolves here wins. */
static int resolve_preset(const char *base, const char *model, const char *spec,
			  struct hwc__ev *ev, int depth)
{
	const char *label;
	size_t n;
	const char *const *cand = hwc__preset_candidates(base, &label, &n);
	if (!cand)
		return HWC__NOT_MINE;
	if (n == 0)
		return hwc__fail(-ENOENT, "'%s' is a known preset but has no mapping on this CPU; use "
					  "a native event (see `hwc list`)",
				 base);
	for (size_t i = 0; i < n; i++) {
		bool native = !is_table_name(cand[i]);
		if (native && !model && !hwc__pfm_host_model(NULL, NULL))
			continue;
		struct hwc__ev tmp = {0};
		hwc__ev_init(&tmp);
		if (native && model)
			snprintf(tmp.name, sizeof(tmp.name), "%s::%s", model, cand[i]);
		else
			snprintf(tmp.name, sizeof(tmp.name), "%s", cand[i]);
		char cspec[sizeof(tmp.name)];
		memcpy(cspec, tmp.name, sizeof(cspec));
		if (resolve_one(cspec, spec, &tmp, depth + 1) == 0) {
			snprintf(tmp.name, sizeof(tmp.name), "%s", ev->name);
			snprintf(ev->origin, sizeof(ev->origin), "%s = %s (%s)", label, cspec, tmp.origin);
			memcpy(tmp.origin, ev->origin, sizeof(tmp.origin));
			ev_assign(ev, &tmp.pub);
			ev->explicit_gh = tmp.explicit_gh;
			ev->pub.source = HWC_SRC_PRESET;
			hwc__clear_error();
			return 0;
		}
	}
	const char *host = model ? model : hwc__pfm_host_model(NULL, NULL);
	hwc__fail(-ENOENT, "'%s' has no mapping on this CPU (%s); tried:", base,
		  host ? host : "no libpfm4 model detected");
	for (size_t i = 0; i < n; i++)
		hwc__fail_append(" %s", cand[i]);
	return -ENOENT;
}

/* NAME[:MODS] where NAME is an alias in some PMUs' events/ directories
 * (tsc, inst_retired, cas_count_read): PMU/NAME/ on each of them, as
 * perf's parse_events_multi_pmu_add opens it; resolved here on the
 * ev->instance'th, with ev->ninstances set when there are several, so
 * that add_per_instance opens the others. */
static int resolve_sysfs_alias(const char *token, struct hwc__ev *ev)
{
	char base[256], pmu[64], alias[256];
	size_t len = strcspn(token, ":");
	if (len >= sizeof(base))
		return HWC__NOT_MINE;
	memcpy(base, token, len);
	base[len] = '\0';
	int n = hwc__pmus_with_alias(base, ev->instance, pmu, sizeof(pmu), alias, sizeof(alias));
	if (!n)
		return HWC__NOT_MINE;
	if (n <= ev->instance)
		return hwc__fail(-EAGAIN, "the PMUs with event '%s' changed while '%s' was resolved",
				 base, token);
	int err = hwc__resolve_pmu(pmu, alias, ev);
	if (!err && token[len])
		err = hwc__modify(ev, token + len + 1, token);
	if (!err && n > 1)
		ev->ninstances = n;
	return err;
}

static int resolve_one(const char *token, const char *spec, struct hwc__ev *ev, int depth)
{
	char buf[512];
	int err;
	if (depth > 2)
		return hwc__fail(-ELOOP, "preset recursion in '%s'", spec);
	if (strlen(token) >= sizeof(buf))
		return hwc__fail(-ENAMETOOLONG, "event name too long in '%s'", spec);
	snprintf(buf, sizeof(buf), "%s", token);

	/* pmu/terms/[modifiers] */
	char *slash = strchr(buf, '/');
	if (slash) {
		char *end = strchr(slash + 1, '/');
		if (!end)
			return hwc__fail(-EINVAL, "malformed event '%s': missing closing '/'", token);
		if (slash == buf)
			return hwc__fail(-EINVAL, "malformed event '%s': no PMU name before '/'", token);
		*slash = *end = '\0';
		err = hwc__resolve_pmu(buf, slash + 1, ev);
		if (err)
			return err;
		const char *mods = end + 1;
		if (*mods == ':')
			mods++;
		return *mods ? hwc__modify(ev, mods, token) : 0;
	}

	/* model::EVENT (libpfm4) or model::PRESET */
	char *dcolon = strstr(buf, "::");
	if (dcolon) {
		*dcolon = '\0';
		if (!buf[0] || !dcolon[2] || dcolon[2] == ':')
			return hwc__fail(-EINVAL, "malformed event '%s': write model::EVENT, e.g. "
						  "skl::INST_RETIRED:ANY_P",
					 token);
		/* A libpfm4 model's name first, then a JSON model directory. */
		bool pfm = hwc__pfm_model_known(buf);
		if (!pfm && hwc__pe_model_known(buf)) {
			err = hwc__resolve_json(buf, token, ev);
			return err == HWC__NOT_MINE ? unknown_event(token, spec) : err;
		}
		if (!pfm && (err = hwc__pfm_init()))
			return err; /* the detail says libpfm4 cannot be loaded */
		if (!pfm) {
			hwc__fail(-ENOENT, "unknown model '%s' in '%s' (neither a libpfm4 model nor "
					   "a JSON model); `hwc list --pmu help` lists the models",
				  buf, token);
			if (!hwc__pe_root())
				hwc__fail_append("; no JSON event tables were found (set "
						 "HWC_EVENTS_DIR or hwc --events-dir)");
			return -ENOENT;
		}
		char *rest = dcolon + 2, *colon = strchr(rest, ':');
		if (colon)
			*colon = '\0';
		err = resolve_preset(rest, buf, spec, ev, depth);
		if (colon)
			*colon = ':';
		if (err != HWC__NOT_MINE)
			return err == 0 && colon ? hwc__modify(ev, colon + 1, token) : err;
		err = hwc__resolve_pfm(token, ev);
		/* libpfm4's perf table also named the tracepoints; hwc starts
		 * libpfm4 without it (pfm.c) and has its own. */
		if (err == HWC__NOT_MINE && strcasecmp(buf, "perf") == 0)
			err = hwc__resolve_tracepoint(rest, ev);
		return err == HWC__NOT_MINE ? unknown_event(token, spec) : err;
	}

	char *colon = strchr(buf, ':');
	const char *mods = NULL;
	if (colon) {
		*colon = '\0';
		mods = colon + 1;
	}
	err = hwc__resolve_table(buf, ev);
	if (err == HWC__NOT_MINE && is_raw(buf))
		err = resolve_raw(buf, token, ev);
	if (err == HWC__NOT_MINE)
		err = resolve_preset(buf, NULL, spec, ev, depth);
	if (err == 0) {
		if (!ev->origin[0])
			snprintf(ev->origin, sizeof(ev->origin), "%s event %s",
				 hwc_source_name(ev->pub.source), buf);
		return mods ? hwc__modify(ev, mods, token) : 0;
	}
	if (err != HWC__NOT_MINE)
		return err;
	if (colon)
		*colon = ':';

	err = hwc__resolve_tracepoint(buf, ev);
	if (err != HWC__NOT_MINE)
		return err;
	/* A PMU's sysfs alias before libpfm4's names, as perf takes it (hwc-events(7)). */
	err = resolve_sysfs_alias(buf, ev);
	if (err != HWC__NOT_MINE)
		return err;
	err = hwc__resolve_pfm(buf, ev);
	if (err != HWC__NOT_MINE)
		return err;
	/* libpfm4 wins over the JSON table of this CPU: the JSON files are read
	 * only for a name nothing else knows (libhwc(3), EVENT NAMES). */
	err = hwc__resolve_json(NULL, buf, ev);
	if (err != HWC__NOT_MINE)
		return err;
	if (colon) {
		/* A generic-looking base with bad modifiers reads better than "unknown". */
		*colon = '\0';
		struct hwc__ev probe = {0};
		hwc__ev_init(&probe);
		if (hwc__resolve_table(buf, &probe) == 0) {
			struct hwc__mods m = {0};
			return hwc__parse_mods(colon + 1, token, &m);
		}
		*colon = ':';
	}
	return unknown_event(token, spec);
}

/* ------------------------------------------------------------- lists */

static int reserve(hwc_evlist *l, size_t more);

static int push(hwc_evlist *l, struct hwc__ev *ev)
{
	int err = reserve(l, 1);
	if (!err)
		l->ev[l->n++] = ev;
	return err;
}

/* Split S at top-level commas: outside {} and outside pmu/.../ terms.
 * Calls FN for each piece; stops at the first error. */
static int split(const char *s, const char *spec, int (*fn)(const char *, size_t, void *), void *arg)
{
	int depth = 0;
	bool in_terms = false;
	size_t start = 0, i;
	for (i = 0;; i++) {
		char c = s[i];
		if (c == '/')
			in_terms = !in_terms;
		else if (c == '{' && !in_terms) {
			if (depth++)
				return hwc__fail(-EINVAL, "malformed '%s': groups cannot be nested", spec);
		} else if (c == '}' && !in_terms) {
			if (!depth--)
				return hwc__fail(-EINVAL, "malformed '%s': '}' without '{'", spec);
		}
		if ((c == ',' && depth == 0 && !in_terms) || c == '\0') {
			if (c == '\0' && depth)
				return hwc__fail(-EINVAL, "malformed '%s': group not closed, missing '}'", spec);
			if (c == '\0' && in_terms)
				return hwc__fail(-EINVAL, "malformed '%s': missing closing '/'", spec);
			/* Blanks around an event are not part of it, as in perf. */
			size_t end = i;
			while (start < end && isspace((unsigned char)s[start]))
				start++;
			while (end > start && isspace((unsigned char)s[end - 1]))
				end--;
			if (end == start)
				return hwc__fail(-EINVAL, "malformed '%s': empty event in the list", spec);
			int err = fn(s + start, end - start, arg);
			if (err)
				return err;
			start = i + 1;
		}
		if (c == '\0')
			return 0;
	}
}

struct add_ctx {
	hwc_evlist *tmp;
	const char *spec;
	int group;
	const char *group_mods;
	size_t group_first;
	bool in_group; /* inside {...} */
};

/* On a machine with several core PMUs (hybrid), a generic hardware or cache
 * event that names none opens once on each, as perf does: the copies are
 * named PMU/EVENT/ and carry the PMU's type in config[63:32] (the kernel's
 * extended type).  Returns 1 when EV was replaced by its copies (EV is then
 * the caller's to free), 0 when it stays as it is, or -errno. */
static int add_per_core_pmu(struct add_ctx *ctx, struct hwc__ev *ev)
{
	const struct perf_event_attr *a = &ev->pub.attr;
	if ((a->type != PERF_TYPE_HARDWARE && a->type != PERF_TYPE_HW_CACHE) || a->config >> 32)
		return 0;
	struct hwc__core_pmu *pmus;
	int n = hwc__hybrid_pmus(&pmus);
	if (n <= 0)
		return n;
	int err = 0;
	if (ctx->in_group)
		err = hwc__fail(-EINVAL, "'%s': this machine has %d core PMUs (%s, %s%s) and '%s' in a "
					 "group would count on each: name the PMU of each event of the group, "
					 "as %s/%s/",
				ctx->spec, n, pmus[0].name, pmus[1].name, n > 2 ? ", ..." : "", ev->name,
				pmus[n - 1].name, ev->name);
	for (int i = 0; i < n && !err; i++) {
		struct hwc__ev *c = hwc__ev_dup(&ev->pub);
		if (!c) {
			err = hwc__fail(-ENOMEM, "out of memory");
			break;
		}
		c->explicit_gh = ev->explicit_gh;
		snprintf(c->copy_of, sizeof(c->copy_of), "%s", ev->name);
		c->pub.attr.config |= (uint64_t)pmus[i].type << 32;
		snprintf(c->pmu, sizeof(c->pmu), "%s", pmus[i].name);
		if ((size_t)snprintf(c->name, sizeof(c->name), "%s/%s/", pmus[i].name, ev->name) >=
		    sizeof(c->name))
			err = hwc__fail(-ENAMETOOLONG, "event name too long in '%s'", ctx->spec);
		c->pub.group = ctx->group + i;
		c->pub.leader = true;
		if (!err)
			err = push(ctx->tmp, c);
		if (err)
			hwc__ev_free(c);
	}
	free(pmus);
	if (err)
		return err;
	ctx->group += n - 1; /* add_item counts the last one */
	return 1;
}

/* An event of a PMU named without its instance number (uncore_imc/.../, or
 * a JSON event of Unit iMC) opens once on each instance (uncore_imc_0,
 * uncore_imc_1, ...), as perf does: each copy resolved on its instance and
 * named as perf stat --no-merge names it, INSTANCE/TERMS/ (or "NAME
 * [INSTANCE]" for an event written without its PMU); counting sums them by
 * default.  Returns 1 when EV was replaced by its copies (EV is then the
 * caller's to free), 0 when it stays as it is, or -errno. */
static int add_per_instance(struct add_ctx *ctx, struct hwc__ev *ev, const char *written)
{
	int n = ev->ninstances;
	if (!n)
		return 0;
	char token[sizeof(ev->name)], first[64];
	snprintf(first, sizeof(first), "%s", ev->pmu);
	if (ctx->in_group && n > 1)
		return hwc__fail(-EINVAL, "'%s': '%s' opens on each of the %d instances of its PMU "
					  "(%s, ...), which cannot share a group: name one instance "
					  "in the group, as %s/.../",
				 ctx->spec, written, n, first, first);
	/* A hybrid's core PMUs (an alias on cpu_core and cpu_atom) are named
	 * and summed as add_per_core_pmu's copies. */
	struct hwc__core_pmu *cores;
	int ncores = hwc__hybrid_pmus(&cores), err = ncores < 0 ? ncores : 0;
	for (int i = 0; i < n && !err; i++) {
		struct hwc__ev *c = hwc__ev_new();
		if (!c) {
			err = hwc__fail(-ENOMEM, "out of memory");
			break;
		}
		snprintf(c->name, sizeof(c->name), "%s", written);
		snprintf(token, sizeof(token), "%s", written);
		c->instance = i;
		err = resolve_one(token, ctx->spec, c, 0);
		if (!err && ctx->group_mods)
			err = modify(c, ctx->group_mods, ctx->spec,
				     ctx->tmp->n == ctx->group_first ? MODS_LEADER : MODS_MEMBER);
		/* perf keeps a name= term's name for every instance */
		const char *slash = strchr(written, '/');
		snprintf(c->copy_of, sizeof(c->copy_of), "%s", c->name);
		bool core = false;
		for (int k = 0; k < ncores; k++)
			core |= strcmp(cores[k].name, c->pmu) == 0;
		c->pub.merge = !core;
		if (!err && strcmp(c->name, written) == 0 &&
		    (size_t)(slash  ? snprintf(c->name, sizeof(c->name), "%s%s", c->pmu, slash)
			     : core ? snprintf(c->name, sizeof(c->name), "%s/%s/", c->pmu, written)
				    : snprintf(c->name, sizeof(c->name), "%s [%s]", written, c->pmu)) >=
			    sizeof(c->name))
			err = hwc__fail(-ENAMETOOLONG, "event name too long in '%s'", ctx->spec);
		c->pub.group = ctx->group + (ctx->in_group ? 0 : i);
		c->pub.leader = !ctx->in_group || ctx->tmp->n == ctx->group_first;
		if (!err && c->ninstances != n)
			err = hwc__fail(-EAGAIN, "the instances of PMU %s changed while '%s' was "
						 "resolved", first, written);
		if (!err)
			err = push(ctx->tmp, c);
		if (err)
			hwc__ev_free(c);
	}
	free(cores);
	if (err)
		return err;
	if (!ctx->in_group)
		ctx->group += n - 1; /* add_item counts the last one */
	return 1;
}

static int add_event(const char *s, size_t len, void *arg)
{
	struct add_ctx *ctx = arg;
	struct hwc__ev *ev = hwc__ev_new();
	if (!ev)
		return hwc__fail(-ENOMEM, "out of memory");
	if (len >= sizeof(ev->name)) {
		hwc__ev_free(ev);
		return hwc__fail(-ENAMETOOLONG, "event name too long in '%s'", ctx->spec);
	}
	memcpy(ev->name, s, len);
	ev->name[len] = '\0';
	char token[sizeof(ev->name)];
	memcpy(token, ev->name, len + 1);
	hwc__clear_error();
	int err = resolve_one(token, ctx->spec, ev, 0);
	if (!err && ctx->group_mods)
		err = modify(ev, ctx->group_mods, ctx->spec,
			     ctx->tmp->n == ctx->group_first ? MODS_LEADER : MODS_MEMBER);
	int copies = err ? 0 : add_per_instance(ctx, ev, token);
	if (!copies)
		copies = err ? 0 : add_per_core_pmu(ctx, ev);
	if (copies < 0)
		err = copies;
	if (!err && !copies)
		err = push(ctx->tmp, ev);
	if (err || copies) {
		hwc__ev_free(ev);
		return err;
	}
	ev->pub.group = ctx->group;
	ev->pub.leader = ctx->tmp->n - 1 == ctx->group_first;
	return 0;
}

static int add_item(const char *s, size_t len, void *arg)
{
	struct add_ctx *ctx = arg;
	ctx->group_first = ctx->tmp->n;
	if (s[0] != '{') {
		int err = add_event(s, len, ctx);
		ctx->group++;
		return err;
	}
	const char *close = memchr(s, '}', len);
	if (!close)
		return hwc__fail(-EINVAL, "malformed '%s': group not closed, missing '}'", ctx->spec);
	char *inner = strndup(s + 1, (size_t)(close - s - 1));
	char *mods = NULL;
	size_t after = len - (size_t)(close - s) - 1;
	if (after) {
		if (close[1] != ':') {
			free(inner);
			return hwc__fail(-EINVAL, "malformed '%s': unexpected '%.*s' after '}'", ctx->spec,
					 (int)after, close + 1);
		}
		mods = strndup(close + 2, after - 1);
	}
	int err = !inner || (after && !mods) ? hwc__fail(-ENOMEM, "out of memory") : 0;
	if (!err && !*inner)
		err = hwc__fail(-EINVAL, "malformed '%s': empty group", ctx->spec);
	if (!err) {
		ctx->group_mods = mods;
		ctx->in_group = true;
		err = split(inner, ctx->spec, add_event, ctx);
		ctx->in_group = false;
		ctx->group_mods = NULL;
	}
	free(inner);
	free(mods);
	ctx->group++;
	return err;
}

/* A group of core hardware events must fit the PMU's counters: at most one
 * event per fixed counter goes there, the rest need general-purpose ones.
 * The counts come from libpfm4, so they are only looked up when a group
 * holds two or more hardware events (software-only lists never load it).
 * A weak group may not fit: it is opened apart then. */
static int check_group_sizes(const hwc_evlist *l)
{
	const char *model = NULL;
	int general = -1, nfixed = 0;
	bool watchdog = false;
	for (size_t i = 0; i < l->n;) {
		size_t j = i, hw = 0;
		unsigned fixed_used = 0;
		bool weak = l->ev[i]->pub.weak;
		for (; j < l->n && l->ev[j]->pub.group == l->ev[i]->pub.group; j++) {
			const struct perf_event_attr *a = &l->ev[j]->pub.attr;
			if (!hwc__is_core_hw(a))
				continue;
			hw++;
			int f = hwc__fixed_counter_of(a);
			if (f >= 0 && f < nfixed && !(fixed_used & 1u << f))
				fixed_used |= 1u << f;
		}
		if (j - i > 1 && hw > 1 && general < 0 && !weak) {
			general = hwc__core_counters(&model, &nfixed, &watchdog);
			continue; /* count this group again, knowing the fixed counters */
		}
		size_t need = hw - (size_t)__builtin_popcount(fixed_used);
		if (j - i > 1 && general > 0 && need > (size_t)general && !weak)
			return hwc__fail(-EINVAL,
					 "group starting at '%s' has %zu hardware events that need a "
					 "general-purpose counter but %s has only %d%s; split the group, "
					 "or make it weak ({...}:W) to count its events apart, "
					 "multiplexed",
					 l->ev[i]->name, need, model, general,
					 watchdog ? " (the NMI watchdog holds another one)" : "");
		i = j;
	}
	return 0;
}

static int syntax_only(const char *s, size_t len, void *arg)
{
	const char *spec = arg;
	if (s[0] != '{')
		return 0;
	const char *close = memchr(s, '}', len);
	if (!close || close == s + 1)
		return 0; /* add_item reports these with context */
	char *inner = strndup(s + 1, (size_t)(close - s - 1));
	if (!inner)
		return hwc__fail(-ENOMEM, "out of memory");
	int err = split(inner, spec, syntax_only, arg);
	free(inner);
	return err;
}

static int reserve(hwc_evlist *l, size_t more)
{
	return hwc__reserve(&l->ev, &l->cap, l->n + more, sizeof(*l->ev));
}

HWC_EXPORT int hwc_evlist_add(hwc_evlist *list, const char *spec)
{
	hwc__clear_error();
	if (!spec || !*spec)
		return hwc__fail(-EINVAL, "empty event specification");
	hwc_evlist tmp = {0};
	struct add_ctx ctx = {.tmp = &tmp, .spec = spec, .group = list->ngroups};
	/* Syntax first, so "a,,b" is reported as malformed rather than "a" unknown. */
	int err = split(spec, spec, syntax_only, (void *)spec);
	if (!err)
		err = split(spec, spec, add_item, &ctx);
	if (!err)
		err = check_group_sizes(&tmp);
	if (!err)
		err = reserve(list, tmp.n);
	if (!err) {
		memcpy(list->ev + list->n, tmp.ev, tmp.n * sizeof(*tmp.ev));
		list->n += tmp.n;
		list->ngroups = ctx.group;
	} else {
		for (size_t i = 0; i < tmp.n; i++)
			hwc__ev_free(tmp.ev[i]);
	}
	free(tmp.ev);
	hwc__pmu_memo_forget();
	return err;
}
