/* Two independent tables agreeing: for CPU models both libpfm4 4.13 and
 * perf's JSON tree know, every event both define must encode to the same
 * perf_event_attr config, config1 and config2 through hwc (JSON model::EVENT
 * against libpfm4 model::EVENT:UMASK).  Intel events pair by name (JSON
 * EVENT.UMASK is libpfm4 EVENT:UMASK, further dots as '_'); AMD's names
 * differ between the tables (the PPR's mnemonics against libpfm4's own), so
 * AMD events pair by event select, with the libpfm4 unit masks whose codes
 * make up the JSON unit mask.  Each known difference is a row of
 * tests/data/json_oracle_known.tsv with its reason; an unlisted difference
 * fails, and so does a listed one that no longer differs (a stale row).
 * Encoding needs no hardware: libpfm4 encodes absent models (hwc sets
 * LIBPFM_ENCODE_INACTIVE), JSON models have their PMU's format. */
#include "check.h"

#include <hwc/hwc.h>
#include <strings.h>


struct pfm_ev {
	char name[128];
	uint64_t code;
	size_t nmasks;
	char (*mask)[128];
	uint64_t *mask_code;
};

struct pfm_model {
	struct pfm_ev *ev;
	size_t n, cap;
};

static int take_pfm(const struct hwc_event_info *e, void *arg)
{
	struct pfm_model *m = arg;
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->ev = realloc(m->ev, m->cap * sizeof(*m->ev));
	}
	struct pfm_ev *p = &m->ev[m->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", e->name);
	p->code = e->code;
	p->mask = calloc(e->nattrs + 1, sizeof(*p->mask));
	p->mask_code = calloc(e->nattrs + 1, sizeof(*p->mask_code));
	for (size_t i = 0; i < e->nattrs; i++)
		if (e->attrs[i].kind == HWC_ATTR_UMASK) {
			snprintf(p->mask[p->nmasks], sizeof(p->mask[0]), "%s", e->attrs[i].name);
			p->mask_code[p->nmasks++] = e->attrs[i].code;
		}
	return 0;
}

struct names {
	char (*name)[128];
	size_t n, cap;
};

static int take_json(const struct hwc_event_info *e, void *arg)
{
	struct names *s = arg;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->name = realloc(s->name, s->cap * sizeof(*s->name));
	}
	snprintf(s->name[s->n++], sizeof(s->name[0]), "%s", e->name);
	return 0;
}

static bool encode(const char *spec, struct perf_event_attr *a)
{
	hwc_evlist *l;
	if (hwc_evlist_new(&l))
		return false;
	bool ok = hwc_evlist_add(l, spec) == 0;
	if (ok)
		*a = hwc_evlist_event(l, 0)->attr;
	hwc_evlist_free(l);
	return ok;
}

/* Known differences: "json-model<TAB>event<TAB>reason" lines. */
struct known {
	char model[64], event[128];
	bool seen;
};
static struct known known[4096];
static size_t nknown;

static void load_known(void)
{
	const char *src = getenv("HWC_SRC") ? getenv("HWC_SRC") : ".";
	char path[1024], line[2048];
	snprintf(path, sizeof(path), "%s/tests/data/json_oracle_known.tsv", src);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot read %s\n", path);
		check_failures++;
		return;
	}
	while (fgets(line, sizeof(line), f) && nknown < 4096) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (!t2 || t2[1] == '\n' || !t2[1]) {
			fprintf(stderr, "%s: row without a reason: %s", path, line);
			check_failures++;
			continue;
		}
		snprintf(known[nknown].model, sizeof(known[0].model), "%.*s", (int)(t1 - line), line);
		snprintf(known[nknown].event, sizeof(known[0].event), "%.*s", (int)(t2 - t1 - 1),
			 t1 + 1);
		nknown++;
	}
	fclose(f);
}

static struct known *find_known(const char *model, const char *event)
{
	for (size_t i = 0; i < nknown; i++)
		if (strcmp(known[i].model, model) == 0 && strcasecmp(known[i].event, event) == 0)
			return &known[i];
	return NULL;
}

static const struct pfm_ev *pfm_find(const struct pfm_model *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcasecmp(m->ev[i].name, name) == 0)
			return &m->ev[i];
	return NULL;
}

/* libpfm4 spec for Intel JSON name EV ("A.B.C" -> "pfm::A:B_C"), or false. */
static bool intel_pair(const struct pfm_model *m, const char *pfm, const char *ev, char *spec,
		       size_t size)
{
	char base[128];
	size_t len = strcspn(ev, ".");
	snprintf(base, sizeof(base), "%.*s", (int)len, ev);
	const struct pfm_ev *p = pfm_find(m, base);
	if (!p)
		return false;
	if (!ev[len])
		return p->nmasks == 0 && snprintf(spec, size, "%s::%s", pfm, base) > 0;
	char mask[128];
	snprintf(mask, sizeof(mask), "%s", ev + len + 1);
	for (char *c = mask; *c; c++)
		if (*c == '.')
			*c = '_';
	for (size_t i = 0; i < p->nmasks; i++)
		if (strcasecmp(p->mask[i], mask) == 0) {
			snprintf(spec, size, "%s::%s:%s", pfm, base, p->mask[i]);
			return true;
		}
	return false;
}

/* libpfm4 spec for AMD JSON event of encoding A: the event of the same
 * select whose unit masks make up A's exactly, or false. */
static bool amd_pair(const struct pfm_model *m, const char *pfm, const struct perf_event_attr *a,
		     char *spec, size_t size)
{
	uint64_t code = (a->config & 0xff) | ((a->config >> 32) & 0xf) << 8;
	uint64_t umask = (a->config >> 8) & 0xff;
	for (size_t i = 0; i < m->n; i++) {
		const struct pfm_ev *p = &m->ev[i];
		if (p->code != code)
			continue;
		int n = snprintf(spec, size, "%s::%s", pfm, p->name);
		/* One unit mask of exactly that code first: many AMD unit masks
		 * are enumerations, not bit sets. */
		for (size_t k = 0; k < p->nmasks && umask; k++)
			if (p->mask_code[k] == umask) {
				snprintf(spec + n, size - (size_t)n, ":%s", p->mask[k]);
				return true;
			}
		uint64_t got = 0;
		for (size_t k = 0; k < p->nmasks; k++)
			if (p->mask_code[k] && !(p->mask_code[k] & ~umask) && (got | p->mask_code[k]) != got) {
				got |= p->mask_code[k];
				n += snprintf(spec + n, size - (size_t)n, ":%s", p->mask[k]);
			}
		if (got == umask && (umask || p->nmasks == 0))
			return true;
	}
	return false;
}

static void compare(const char *json, const char *pfm, bool amd)
{
	struct pfm_model m = {0};
	struct names j = {0};
	CHECK_OK(hwc_events_walk(pfm, NULL, 0, take_pfm, &m));
	CHECK_OK(hwc_events_walk(json, NULL, 0, take_json, &j));
	size_t pairs = 0, agree = 0, listed = 0;
	char jspec[256], pspec[512];
	for (size_t i = 0; i < j.n; i++) {
		struct perf_event_attr ja, pa;
		snprintf(jspec, sizeof(jspec), "%s::%s", json, j.name[i]);
		if (!encode(jspec, &ja)) {
			/* An uncore event whose PMU this machine lacks is not compared
			 * (libpfm4 4.13 has these models' core tables); anything else
			 * that fails to encode is a failure. */
			if (!strstr(hwc_errdetail(), "which this machine does not have")) {
				fprintf(stderr, "%s does not encode: %s\n", jspec, hwc_errdetail());
				check_failures++;
			}
			continue;
		}
		if (ja.type != PERF_TYPE_RAW)
			continue; /* an uncore event: libpfm4 4.13 has these models' core tables */
		bool paired = amd ? amd_pair(&m, pfm, &ja, pspec, sizeof(pspec))
				  : intel_pair(&m, pfm, j.name[i], pspec, sizeof(pspec));
		if (!paired)
			continue;
		if (!encode(pspec, &pa))
			continue; /* libpfm4 does not take that combination: not its event */
		pairs++;
		bool same = ja.config == pa.config && ja.config1 == pa.config1 &&
			    ja.config2 == pa.config2;
		struct known *k = find_known(json, j.name[i]);
		if (k)
			k->seen = true;
		if (same && !k) {
			agree++;
		} else if (!same && k) {
			listed++;
		} else if (same) {
			fprintf(stderr, "%s: listed as a difference but both encode config %#llx "
					"config1 %#llx (remove the row)\n",
				jspec, (unsigned long long)ja.config, (unsigned long long)ja.config1);
			check_failures++;
		} else {
			fprintf(stderr, "%s: config %#llx config1 %#llx config2 %#llx, but %s: "
					"config %#llx config1 %#llx config2 %#llx\n",
				jspec, (unsigned long long)ja.config, (unsigned long long)ja.config1,
				(unsigned long long)ja.config2, pspec, (unsigned long long)pa.config,
				(unsigned long long)pa.config1, (unsigned long long)pa.config2);
			check_failures++;
		}
	}
	fprintf(stderr, "%s vs %s: %zu JSON events, %zu in both tables: %zu agree, %zu known "
			"differences\n",
		json, pfm, j.n, pairs, agree, listed);
	CHECK_INT(pairs, >, 50); /* the pairing found the tables' common events */
	for (size_t i = 0; i < m.n; i++) {
		free(m.ev[i].mask);
		free(m.ev[i].mask_code);
	}
	free(m.ev);
	free(j.name);
}

static bool have_pfm_model(const char *name)
{
	return hwc_events_walk(name, "no-such-event-name", 0, take_json, &(struct names){0}) == 0;
}

#define MODEL_TEST(fn, json, pfm, amd)                                                   \
	static void fn(void)                                                             \
	{                                                                                \
		if (!have_pfm_model(pfm)) {                                              \
			SKIP_SUB("this libpfm4 has no model %s", pfm);                   \
			return;                                                          \
		}                                                                        \
		compare(json, pfm, amd);                                                 \
	}
MODEL_TEST(skylake, "skylake", "skl", false)
MODEL_TEST(icelake, "icelake", "icl", false)
MODEL_TEST(sapphirerapids, "sapphirerapids", "spr", false)
MODEL_TEST(zen3, "amdzen3", "amd64_fam19h_zen3", true)
MODEL_TEST(zen4, "amdzen4", "amd64_fam19h_zen4", true)

static void no_stale_rows(void)
{
	for (size_t i = 0; i < nknown; i++)
		if (!known[i].seen) {
			fprintf(stderr, "tests/data/json_oracle_known.tsv: %s %s is no event both "
					"tables define (remove the row)\n",
				known[i].model, known[i].event);
			check_failures++;
		}
}

int main(void)
{
	USE_EVENTS_TREE();
	if (!have_pfm_model("skl") && !have_pfm_model("amd64_fam19h_zen3"))
		SKIP("this libpfm4 has no x86 tables (Debian's has only its architecture's)");
	load_known();
	RUN(skylake);
	RUN(icelake);
	RUN(sapphirerapids);
	RUN(zen3);
	RUN(zen4);
	if (!check_skips)
		RUN(no_stale_rows);
	return check_failures ? 1 : 0;
}
