/* libcpc's sets and their requests: an event name (or a raw code) and
 * attributes become the hwc event spec the set is bound with, after
 * checking that this machine can count it. */
#include "cpc_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- sets */

bool cpc__set_valid(cpc_t *cpc, const cpc_set_t *set)
{
	sigset_t saved;
	cpc__lock(cpc, &saved);
	const cpc_set_t *s = cpc->sets;
	while (s && s != set)
		s = s->next;
	cpc__unlock(cpc, &saved);
	return s != NULL;
}

CPC_EXPORT cpc_set_t *cpc_set_create(cpc_t *cpc)
{
	cpc_set_t *set = calloc(1, sizeof(*set));
	if (!set) {
		errno = ENOMEM;
		return NULL;
	}
	set->cpc = cpc;
	set->cpu = -1;
	sigset_t saved;
	cpc__lock(cpc, &saved);
	set->next = cpc->sets;
	cpc->sets = set;
	cpc__unlock(cpc, &saved);
	return set;
}

static void free_req(struct req *r)
{
	free(r->event);
	free(r->spec);
	for (uint_t i = 0; i < r->nattrs; i++)
		free(r->attrs[i].ca_name);
	free(r->attrs);
}

void cpc__free_set(cpc_set_t *set)
{
	for (int i = 0; i < set->nreq; i++)
		free_req(&set->req[i]);
	free(set->req);
	free(set);
}

CPC_EXPORT int cpc_set_destroy(cpc_t *cpc, cpc_set_t *set)
{
	if (!cpc__set_valid(cpc, set))
		return cpc__fail(EINVAL);
	if (set->state != UNBOUND)
		cpc_unbind(cpc, set);
	sigset_t saved;
	cpc__lock(cpc, &saved);
	cpc_set_t **pp = &cpc->sets;
	while (*pp && *pp != set)
		pp = &(*pp)->next;
	if (*pp)
		*pp = set->next;
	cpc__unlock(cpc, &saved);
	cpc__free_set(set);
	return 0;
}

/* ---------------------------------------------------------------- requests */

static bool is_hw_type(uint32_t type)
{
	return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW;
}

static const struct cpc_attr_def *find_attr(const cpc_t *cpc, const char *name)
{
	size_t n;
	const struct cpc_attr_def *defs = cpc__attrs(&cpc->m, &n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(defs[i].name, name) == 0)
			return &defs[i];
	return NULL;
}

/* Resolve EVENT alone: 0 and what it is, or -errno with DETAIL. */
static int resolve(const char *spec, struct hwc_event *out, char *detail, size_t size)
{
	hwc_evlist *l;
	int err = hwc_evlist_new(&l);
	if (!err)
		err = hwc_evlist_add(l, spec);
	if (err) {
		snprintf(detail, size, "%s", hwc_errdetail());
	} else if (hwc_evlist_size(l) != 1) {
		snprintf(detail, size, "'%s' names %zu events; a request counts one", spec,
			 hwc_evlist_size(l));
		err = -EINVAL;
	} else {
		*out = *hwc_evlist_event(l, 0);
		out->name = out->pmu = out->origin = out->unit = NULL; /* freed below */
	}
	hwc_evlist_free(l);
	return err;
}

/* Build R->spec from the event name and the attributes.  0, or -1 with
 * errno EINVAL after reporting the subcode through the handler. */
static int make_spec(cpc_t *cpc, struct req *r)
{
	static const char fn[] = "cpc_set_add_request";
	char detail[1024];
	const char *name = r->event;
	if (!*name || strlen(name) >= CPC_MAX_EVENT_LEN || strpbrk(name, ",{}/ \t\n")) {
		snprintf(detail, sizeof(detail), "'%s' is not an event name", name);
		cpc__err(cpc, fn, CPC_INVALID_EVENT, detail);
		return cpc__fail(EINVAL);
	}
	/* A raw event code (strtol(3) syntax, not 0), as illumos allows. */
	char *end;
	unsigned long long raw = strtoull(name, &end, 0);
	bool is_raw = !*end && raw != 0 && name[0] != '-';
	struct hwc_event ev;
	char base[96];
	if (is_raw) {
		snprintf(base, sizeof(base), "event=%#llx", raw);
		r->hw = true;
	} else {
		if (resolve(name, &ev, detail, sizeof(detail))) {
			cpc__err(cpc, fn, CPC_INVALID_EVENT, detail);
			return cpc__fail(EINVAL);
		}
		if (ev.explicit_priv) {
			snprintf(detail, sizeof(detail),
				 "'%s' chooses its privilege levels; use CPC_COUNT_USER and "
				 "CPC_COUNT_SYSTEM instead",
				 name);
			cpc__err(cpc, fn, CPC_INVALID_EVENT, detail);
			return cpc__fail(EINVAL);
		}
		r->hw = is_hw_type(ev.attr.type);
		int n = snprintf(base, sizeof(base), "config=%#llx", (unsigned long long)ev.attr.config);
		if (ev.attr.config1)
			n += snprintf(base + n, sizeof(base) - (size_t)n, ",config1=%#llx",
				      (unsigned long long)ev.attr.config1);
		if (ev.attr.config2)
			snprintf(base + n, sizeof(base) - (size_t)n, ",config2=%#llx",
				 (unsigned long long)ev.attr.config2);
	}
	char terms[512] = "";
	size_t tlen = 0;
	for (uint_t i = 0; i < r->nattrs; i++) {
		const cpc_attr_t *a = &r->attrs[i];
		const struct cpc_attr_def *def = find_attr(cpc, a->ca_name);
		if (!def) {
			int n = snprintf(detail, sizeof(detail), "'%s'; this platform's are:", a->ca_name);
			size_t ndefs;
			const struct cpc_attr_def *defs = cpc__attrs(&cpc->m, &ndefs);
			for (size_t k = 0; k < ndefs; k++)
				n += snprintf(detail + n, sizeof(detail) - (size_t)n, " %s",
					      defs[k].name);
			cpc__err(cpc, fn, CPC_INVALID_ATTRIBUTE, detail);
			return cpc__fail(EINVAL);
		}
		if (!def->term) { /* picnum: the kernel picks the counter on Linux */
			if (a->ca_val >= cpc->m.npic) {
				snprintf(detail, sizeof(detail), "picnum %llu, but this machine has %u "
								 "counters",
					 (unsigned long long)a->ca_val, cpc->m.npic);
				cpc__err(cpc, fn, CPC_INVALID_PICNUM, detail);
				return cpc__fail(EINVAL);
			}
			if (r->hw && a->ca_val >= cpc->m.hwpic) {
				snprintf(detail, sizeof(detail),
					 "picnum %llu counts only software events; '%s' needs one "
					 "of the %u hardware counters",
					 (unsigned long long)a->ca_val, name, cpc->m.hwpic);
				cpc__err(cpc, fn, CPC_PIC_NOT_CAPABLE, detail);
				return cpc__fail(EINVAL);
			}
			continue;
		}
		if (!is_raw && (!r->hw || ev.attr.type != PERF_TYPE_RAW)) {
			snprintf(detail, sizeof(detail),
				 "'%s' applies only to processor events; '%s' is a %s event", a->ca_name,
				 name, r->hw ? "Linux generic" : hwc_source_name(ev.source));
			cpc__err(cpc, fn, CPC_INVALID_ATTRIBUTE, detail);
			return cpc__fail(EINVAL);
		}
		if (a->ca_val > def->max) {
			snprintf(detail, sizeof(detail), "%s=%#llx (at most %#llx)", a->ca_name,
				 (unsigned long long)a->ca_val, (unsigned long long)def->max);
			cpc__err(cpc, fn, CPC_ATTRIBUTE_OUT_OF_RANGE, detail);
			return cpc__fail(EINVAL);
		}
		tlen += (size_t)snprintf(terms + tlen, sizeof(terms) - tlen, ",%s=%#llx", def->term,
					 (unsigned long long)a->ca_val);
	}
	char spec[1024];
	if (is_raw || tlen)
		snprintf(spec, sizeof(spec), "cpu/%s%s/", base, terms);
	else
		snprintf(spec, sizeof(spec), "%s", name);
	if (is_raw || tlen) {
		struct hwc_event check;
		if (resolve(spec, &check, detail, sizeof(detail))) {
			cpc__err(cpc, fn, is_raw && !tlen ? CPC_INVALID_EVENT : CPC_ATTRIBUTE_OUT_OF_RANGE,
				detail);
			return cpc__fail(EINVAL);
		}
	}
	/* Known here, but can this machine count it? */
	int err = cpc__probe(spec, detail, sizeof(detail));
	if (!cpc__probe_accepts(err)) {
		cpc__err(cpc, fn, CPC_INVALID_EVENT, detail);
		return cpc__fail(EINVAL);
	}
	r->spec = strdup(spec);
	return r->spec ? 0 : cpc__fail(ENOMEM);
}

CPC_EXPORT int cpc_set_add_request(cpc_t *cpc, cpc_set_t *set, const char *event,
				   uint64_t preset, uint_t flags, uint_t nattrs,
				   const cpc_attr_t *attrs)
{
	static const char fn[] = "cpc_set_add_request";
	if (!cpc__set_valid(cpc, set) || set->state != UNBOUND || !event || (nattrs && !attrs))
		return cpc__fail(EINVAL);
	/* CPC_COUNT_SAMPLE_MODE selects the SPARC T3 counters' sample mode on
	 * illumos (other platforms ignore it); no Linux PMU has one. */
	const uint_t all = CPC_OVF_NOTIFY_EMT | CPC_COUNT_USER | CPC_COUNT_SYSTEM | CPC_COUNT_HV |
			   CPC_COUNT_SAMPLE_MODE;
	if (flags & ~all) {
		char detail[160];
		snprintf(detail, sizeof(detail), "%#x (valid: CPC_COUNT_USER, CPC_COUNT_SYSTEM, "
						 "CPC_COUNT_HV, CPC_OVF_NOTIFY_EMT, "
						 "CPC_COUNT_SAMPLE_MODE)",
			 flags);
		cpc__err(cpc, fn, CPC_REQ_INVALID_FLAGS, detail);
		return cpc__fail(EINVAL);
	}
	for (uint_t i = 0; i < nattrs; i++)
		if (!attrs[i].ca_name || !attrs[i].ca_name[0]) {
			cpc__err(cpc, fn, CPC_INVALID_ATTRIBUTE, "an attribute has no name");
			return cpc__fail(EINVAL);
		}
	struct req r = {.preset = preset, .flags = flags, .nattrs = nattrs, .ev = -1};
	r.event = strdup(event);
	r.attrs = nattrs ? calloc(nattrs, sizeof(*r.attrs)) : NULL;
	bool nomem = !r.event || (nattrs && !r.attrs);
	for (uint_t i = 0; !nomem && i < nattrs; i++) {
		r.attrs[i].ca_val = attrs[i].ca_val;
		nomem = !(r.attrs[i].ca_name = strdup(attrs[i].ca_name));
	}
	if (nomem) {
		free_req(&r);
		return cpc__fail(ENOMEM);
	}
	if (make_spec(cpc, &r) < 0) {
		int e = errno;
		free_req(&r);
		return cpc__fail(e);
	}
	if (set->nreq == set->cap) {
		int cap = set->cap ? set->cap * 2 : 4;
		struct req *p = realloc(set->req, (size_t)cap * sizeof(*p));
		if (!p) {
			free_req(&r);
			return cpc__fail(ENOMEM);
		}
		set->req = p;
		set->cap = cap;
	}
	set->req[set->nreq] = r;
	return set->nreq++;
}

CPC_EXPORT void cpc_walk_requests(cpc_t *cpc, cpc_set_t *set, void *arg,
				  void (*action)(void *arg, int index, const char *event,
						 uint64_t preset, uint_t flags, int nattrs,
						 const cpc_attr_t *attrs))
{
	if (!cpc__set_valid(cpc, set))
		return;
	for (int i = 0; i < set->nreq; i++) {
		const struct req *r = &set->req[i];
		action(arg, i, r->event, r->preset, r->flags, (int)r->nattrs, r->attrs);
	}
}

