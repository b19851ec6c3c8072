/* PMUs the kernel exposes in sysfs: pmu/term=value,.../ through the PMU's
 * format/ files, its events/ aliases, and the x86 PERFEVTSEL layout for
 * cpu/ when the kernel has no core PMU at all (so encodings work on any
 * host); where the core PMU is another architecture's, cpu/ is an error. */
#include "internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <locale.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The x86 PERFEVTSEL layout, as Intel and AMD cpu PMUs describe it. */
static const struct {
	const char *term;
	const char *format;
} evtsel_layout[] = {
	{"event", "config:0-7,32-35"}, {"umask", "config:8-15"}, {"edge", "config:18"},
	{"pc", "config:19"},           {"any", "config:21"},     {"inv", "config:23"},
	{"cmask", "config:24-31"},
};

/* A decimal or 0x hex number, as perf reads terms: a leading 0 does not
 * make it octal (event=010 is ten). */
static int parse_u64(const char *s, uint64_t *out)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	if (!(hex ? isxdigit((unsigned char)*digits) : isdigit((unsigned char)*digits)))
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(digits, &end, hex ? 16 : 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int hwc__format_apply(const char *format, uint64_t value, struct perf_event_attr *attr,
		      const char *term)
{
	const char *colon = strchr(format, ':');
	if (!colon)
		return hwc__fail(-EINVAL, "cannot parse sysfs format '%s' of term '%s'", format, term);
	size_t flen = (size_t)(colon - format);
	uint64_t *word;
	if (flen == 6 && strncmp(format, "config", 6) == 0)
		word = (uint64_t *)&attr->config;
	else if (flen == 7 && strncmp(format, "config1", 7) == 0)
		word = (uint64_t *)&attr->config1;
	else if (flen == 7 && strncmp(format, "config2", 7) == 0)
		word = (uint64_t *)&attr->config2;
	else
		return hwc__fail(-EINVAL, "sysfs format '%s' of term '%s' uses an unknown field",
				 format, term);
	uint64_t rest = value;
	unsigned width = 0;
	for (const char *p = colon + 1; *p;) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (end == p)
			return hwc__fail(-EINVAL, "cannot parse sysfs format '%s'", format);
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			p = end;
		}
		if (hi > 63 || lo > hi)
			return hwc__fail(-EINVAL, "bad bit range in sysfs format '%s'", format);
		for (unsigned long bit = lo; bit <= hi; bit++, width++) {
			if (rest & 1)
				*word |= 1ULL << bit;
			else
				*word &= ~(1ULL << bit);
			rest >>= 1;
		}
		if (*p == ',')
			p++;
	}
	if (rest)
		return hwc__fail(-EINVAL, "value %#llx is too large for term '%s' (%u bits)",
				 (unsigned long long)value, term, width);
	return 0;
}

static void pmu_path(char *buf, size_t size, const char *pmu, const char *sub, const char *name)
{
	snprintf(buf, size, "%s/bus/event_source/devices/%s%s%s%s%s", hwc__sysfs_root(), pmu,
		 sub ? "/" : "", sub ? sub : "", name ? "/" : "", name ? name : "");
}

/* List the entries of DIR into the detail text, for "valid terms" hints. */
static void append_dir(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && !strchr(de->d_name, '.'))
			hwc__fail_append("%s%s", prefix, de->d_name), prefix = ", ";
	closedir(d);
}

struct term_ctx {
	const char *pmu;
	const char *spec;
	bool sysfs;   /* the PMU exists in sysfs */
	bool is_cpu;  /* cpu PMU: usr/os map to exclude bits */
	int usr, os;  /* -1 unset */
	struct hwc__ev *ev;
};

/* One term of a term list: KEY=VAL, or KEY alone (VAL NULL). */
struct term {
	char *key, *val;
};
#define MAX_TERMS 64

/* Split the comma-separated LIST (modified in place) into terms. */
static int split_terms(struct term_ctx *t, char *list, struct term *out, size_t *n)
{
	*n = 0;
	if (!*list)
		return 0;
	for (char *tok = list;;) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = '\0';
		if (*n == MAX_TERMS)
			return hwc__fail(-EINVAL, "too many terms in '%s' (at most %d)", t->spec, MAX_TERMS);
		char *eq = strchr(tok, '=');
		if (eq)
			*eq = '\0';
		if (!*tok)
			return hwc__fail(-EINVAL, "malformed event '%s': empty term", t->spec);
		out[(*n)++] = (struct term){tok, eq ? eq + 1 : NULL};
		if (!comma)
			return 0;
		tok = comma + 1;
	}
}

static bool is_config_word(const char *key)
{
	return strcmp(key, "config") == 0 || strcmp(key, "config1") == 0 ||
	       strcmp(key, "config2") == 0;
}

/* Is KEY an event alias of the PMU (events/KEY) rather than a format term? */
static bool is_alias(struct term_ctx *t, const struct term *term)
{
	char path[1024];
	struct stat st;
	if (!t->sysfs || term->val || is_config_word(term->key))
		return false;
	pmu_path(path, sizeof(path), t->pmu, "format", term->key);
	if (stat(path, &st) == 0)
		return false;
	pmu_path(path, sizeof(path), t->pmu, "events", term->key);
	return stat(path, &st) == 0 || hwc__json_alias(t->pmu, term->key, NULL, 0);
}

static int unknown_term(struct term_ctx *t, const char *key, const char *alias)
{
	char path[1024];
	if (alias)
		hwc__fail(-EINVAL, "event alias %s/%s/ uses term '%s', which PMU '%s' has no format "
				   "for, in '%s'",
			  t->pmu, alias, key, t->pmu, t->spec);
	else
		hwc__fail(-EINVAL, "unknown term '%s' for PMU '%s' in '%s'; valid terms: config, "
				   "config1, config2, name, period",
			  key, t->pmu, t->spec);
	bool x86_field = false;
	for (size_t i = 0; i < HWC_ARRAY_SIZE(evtsel_layout) && !alias; i++)
		x86_field |= strcmp(key, evtsel_layout[i].term) == 0;
	if (x86_field && t->sysfs && !t->is_cpu) {
		hwc__fail(-EINVAL, "'%s' in '%s' is a field of the x86 event select, which PMU '%s' "
				   "does not have; its terms: config, config1, config2, name, period",
			  key, t->spec, t->pmu);
		pmu_path(path, sizeof(path), t->pmu, "format", NULL);
		append_dir(path, ", ");
		return -EINVAL;
	}
	if (t->is_cpu)
		hwc__fail_append(", usr, os");
	if (t->sysfs) {
		pmu_path(path, sizeof(path), t->pmu, "format", NULL);
		append_dir(path, ", ");
		pmu_path(path, sizeof(path), t->pmu, "events", NULL);
		hwc__fail_append("; events: ");
		append_dir(path, "");
	} else {
		for (size_t i = 0; i < HWC_ARRAY_SIZE(evtsel_layout); i++)
			hwc__fail_append(", %s", evtsel_layout[i].term);
	}
	return -EINVAL;
}

/* Apply one term.  ALIAS names the event alias the term comes from, or NULL
 * for a term the user wrote. */
static int apply_term(struct term_ctx *t, const struct term *term, const char *alias)
{
	struct perf_event_attr *a = &t->ev->pub.attr;
	const char *key = term->key, *val = term->val;
	if (strcmp(key, "name") == 0) {
		if (!val || !*val)
			return hwc__fail(-EINVAL, "term 'name' needs a value in '%s'", t->spec);
		snprintf(t->ev->name, sizeof(t->ev->name), "%s", val);
		return 0;
	}
	uint64_t v = 1;
	if (val && parse_u64(val, &v))
		return hwc__fail(-EINVAL, "malformed value '%s' for term '%s' in '%s' (expected a "
					  "decimal or 0x hex number)",
				 val, key, t->spec);
	if (is_config_word(key)) {
		if (!val)
			return hwc__fail(-EINVAL, "term '%s' needs a value in '%s'", key, t->spec);
		*(key[6] == '1' ? &a->config1 : key[6] == '2' ? &a->config2 : &a->config) = v;
		return 0;
	}
	if (strcmp(key, "period") == 0) {
		a->sample_period = v;
		return 0;
	}
	if (t->is_cpu && (strcmp(key, "usr") == 0 || strcmp(key, "os") == 0)) {
		if (v > 1)
			return hwc__fail(-EINVAL, "term '%s' is 0 or 1 in '%s'", key, t->spec);
		*(key[0] == 'u' ? &t->usr : &t->os) = (int)v;
		return 0;
	}
	if (t->sysfs) {
		char path[1024], format[256];
		pmu_path(path, sizeof(path), t->pmu, "format", key);
		if (hwc__read_file(path, format, sizeof(format)) == 0)
			return hwc__format_apply(format, v, a, key);
	} else {
		for (size_t i = 0; i < HWC_ARRAY_SIZE(evtsel_layout); i++)
			if (strcmp(key, evtsel_layout[i].term) == 0)
				return hwc__format_apply(evtsel_layout[i].format, v, a, key);
	}
	return unknown_term(t, key, alias);
}

static const struct term *find_term(const struct term *terms, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(terms[i].key, key) == 0)
			return &terms[i];
	return NULL;
}

/* Read events/NAME.SUFFIX of the PMU into BUF; false when it is absent. */
static bool read_alias_file(struct term_ctx *t, const char *name, const char *suffix, char *buf,
			    size_t size)
{
	char path[1024];
	pmu_path(path, sizeof(path), t->pmu, "events", name);
	strncat(path, suffix, sizeof(path) - strlen(path) - 1);
	return hwc__read_file(path, buf, size) == 0;
}

/* The alias's terms are defaults: a term the user wrote wins over the
 * alias's term for the same field, wherever it stands in the list.  A
 * '?' value is a parameter the user must supply. */
static int apply_alias(struct term_ctx *t, const char *alias, const struct term *user, size_t nuser)
{
	char body[1024], scale[64];
	/* sysfs's aliases first, then this CPU's JSON table (perf's order). */
	bool json = false;
	if (!read_alias_file(t, alias, "", body, sizeof(body)) &&
	    !(json = hwc__json_alias(t->pmu, alias, body, sizeof(body))))
		return hwc__fail(-EINVAL, "cannot read event alias %s/%s/", t->pmu, alias);
	if (read_alias_file(t, alias, ".scale", scale, sizeof(scale))) {
		/* sysfs writes a C-locale number whatever the caller's locale is. */
		locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
		char *end = scale;
		if (c) {
			t->ev->pub.scale = strtod_l(scale, &end, c);
			freelocale(c);
		}
		if (end == scale || *end || !(t->ev->pub.scale > 0))
			return hwc__fail(-EINVAL, "cannot use scale '%s' of event alias %s/%s/", scale,
					 t->pmu, alias);
	}
	read_alias_file(t, alias, ".unit", t->ev->unit, sizeof(t->ev->unit));
	snprintf(t->ev->origin, sizeof(t->ev->origin), "%s alias %s/%s/ = %s",
		 json ? "JSON" : "sysfs", t->pmu, alias, body);
	struct term terms[MAX_TERMS];
	size_t n;
	int err = split_terms(t, body, terms, &n);
	for (size_t i = 0; i < n && !err; i++) {
		const struct term *mine = find_term(user, nuser, terms[i].key);
		if (terms[i].val && strcmp(terms[i].val, "?") == 0) {
			if (!mine)
				err = hwc__fail(-EINVAL, "event %s/%s/ needs the parameter '%s': write "
							 "%s/%s,%s=N/",
						t->pmu, alias, terms[i].key, t->pmu, alias, terms[i].key);
		} else if (!mine) {
			err = apply_term(t, &terms[i], alias);
		}
	}
	return err;
}

/* Apply the user's TERMS: first an event alias among them (at most one),
 * then config/config1/config2, then named fields, so that the order the
 * user wrote them in never matters.  A term given twice is an error. */
static int apply_terms(struct term_ctx *t, char *list)
{
	struct term terms[MAX_TERMS];
	size_t n;
	int err = split_terms(t, list, terms, &n);
	if (err)
		return err;
	const char *alias = NULL;
	for (size_t i = 0; i < n; i++) {
		if (find_term(terms, i, terms[i].key))
			return hwc__fail(-EINVAL, "term '%s' is given twice in '%s'", terms[i].key,
					 t->spec);
		if (!is_alias(t, &terms[i]))
			continue;
		if (alias)
			return hwc__fail(-EINVAL, "'%s' names two events, '%s' and '%s'; write one "
						  "event per %s/.../",
					 t->spec, alias, terms[i].key, t->pmu);
		alias = terms[i].key;
	}
	if (alias && (err = apply_alias(t, alias, terms, n)))
		return err;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			if (terms[i].key == alias || is_config_word(terms[i].key) != (pass == 0))
				continue;
			if ((err = apply_term(t, &terms[i], NULL)))
				return err;
		}
	return 0;
}

/* Known PMU names, for "unknown PMU" hints. */
static void append_pmus(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/bus/event_source/devices", hwc__sysfs_root());
	append_dir(path, "");
}

static bool is_core_pmu(const char *name);

/* PMU/EVENT/ for a generic hardware or cache EVENT (cycles, not an alias in
 * PMU's events/) and one core PMU of several: the generic event on that
 * PMU alone, with its type in config[63:32], as perf encodes cpu_core/cycles/.
 * HWC__NOT_MINE otherwise. */
static int resolve_hybrid_generic(const char *pmu, const char *terms, struct hwc__ev *ev)
{
	char path[1024];
	struct stat st;
	if (strpbrk(terms, "=,") || !*terms)
		return HWC__NOT_MINE;
	pmu_path(path, sizeof(path), pmu, "events", terms);
	if (stat(path, &st) == 0 || !is_core_pmu(pmu))
		return HWC__NOT_MINE; /* the PMU's own alias, or no core PMU (each
				       * of an uncore PMU's instances comes here) */
	struct hwc__core_pmu *pmus;
	int n = hwc__hybrid_pmus(&pmus);
	if (n <= 0)
		return n < 0 ? n : HWC__NOT_MINE;
	int found = -1;
	for (int i = 0; i < n; i++)
		if (strcmp(pmus[i].name, pmu) == 0)
			found = i;
	uint32_t type = found >= 0 ? pmus[found].type : 0;
	free(pmus);
	struct hwc__ev g;
	hwc__ev_init(&g);
	if (found < 0 || hwc__resolve_table(terms, &g) ||
	    (g.pub.attr.type != PERF_TYPE_HARDWARE && g.pub.attr.type != PERF_TYPE_HW_CACHE))
		return HWC__NOT_MINE;
	ev->pub.source = g.pub.source;
	ev->pub.attr.type = g.pub.attr.type;
	ev->pub.attr.config = g.pub.attr.config | (uint64_t)type << 32;
	snprintf(ev->pmu, sizeof(ev->pmu), "%s", pmu);
	snprintf(ev->origin, sizeof(ev->origin), "generic %s on core PMU %s (type %u in config[63:32])",
		 terms, pmu, type);
	return 0;
}

int hwc__resolve_pmu(const char *pmu, const char *terms, struct hwc__ev *ev)
{
	int hybrid = resolve_hybrid_generic(pmu, terms, ev);
	if (hybrid != HWC__NOT_MINE)
		return hybrid;
	char path[1024], spec[sizeof(ev->name)];
	long long type;
	/* A name= term renames the event: keep the spec for messages. */
	snprintf(spec, sizeof(spec), "%s", ev->name);
	/* uncore_imc/.../ without uncore_imc: on its instance ev->instance */
	char instance[64];
	int n = hwc__pmu_exists(pmu) ? 0
		: hwc__pmu_instance(pmu, false, NULL, ev->instance, instance, sizeof(instance));
	if (n > ev->instance) {
		ev->ninstances = n;
		pmu = instance;
	}
	struct term_ctx t = {.pmu = pmu, .spec = spec, .usr = -1, .os = -1, .ev = ev};
	t.is_cpu = strcmp(pmu, "cpu") == 0 || strncmp(pmu, "cpu_", 4) == 0;
	pmu_path(path, sizeof(path), pmu, "type", NULL);
	if (hwc__read_int_file(path, &type) == 0) {
		t.sysfs = true;
		ev->pub.attr.type = (uint32_t)type;
		ev->pub.source = HWC_SRC_PMU;
		snprintf(ev->origin, sizeof(ev->origin), "sysfs PMU %s (type %lld)", pmu, type);
	} else if (strcmp(pmu, "cpu") == 0 && hwc__core_pmu(NULL)) {
		/* Another architecture's core PMU: the x86 layout would be a wrong encoding. */
		return hwc__fail(-ENOENT, "'%s': cpu/ is the x86 core PMU and its PERFEVTSEL "
					  "layout; this machine's core PMU is %s (write %s/.../, or "
					  "rNNNN for its raw config)",
				 spec, hwc__core_pmu(NULL), hwc__core_pmu(NULL));
	} else if (strcmp(pmu, "cpu") == 0) {
		ev->pub.attr.type = PERF_TYPE_RAW;
		ev->pub.source = HWC_SRC_RAW;
		snprintf(ev->origin, sizeof(ev->origin),
			 "x86 PERFEVTSEL layout (the kernel exposes no cpu PMU)");
	} else {
		hwc__fail(-ENOENT, "unknown PMU '%s' in '%s'; PMUs on this machine: ", pmu, spec);
		append_pmus();
		return -ENOENT;
	}
	snprintf(ev->pmu, sizeof(ev->pmu), "%s", pmu);
	char *list = strdup(terms);
	if (!list)
		return hwc__fail(-ENOMEM, "out of memory");
	int err = apply_terms(&t, list);
	free(list);
	if (err)
		return err;
	if (t.usr >= 0 || t.os >= 0) {
		int usr = t.usr >= 0 ? t.usr : 0, os = t.os >= 0 ? t.os : 0;
		if (!usr && !os)
			return hwc__fail(-EINVAL, "'%s' counts nothing: set usr=1 and/or os=1", spec);
		/* Like :u and :k, choosing levels excludes the hypervisor. */
		ev->pub.attr.exclude_user = !usr;
		ev->pub.attr.exclude_kernel = !os;
		ev->pub.attr.exclude_hv = 1;
		ev->pub.explicit_priv = true;
	}
	return 0;
}

void hwc__pmu_alias_names(hwc__name_fn fn, void *arg)
{
	char path[1024], name[512];
	snprintf(path, sizeof(path), "%s/bus/event_source/devices", hwc__sysfs_root());
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		pmu_path(path, sizeof(path), de->d_name, "events", NULL);
		DIR *e = opendir(path);
		if (!e)
			continue;
		struct dirent *ee;
		while ((ee = readdir(e)))
			if (ee->d_name[0] != '.' && !strchr(ee->d_name, '.')) {
				snprintf(name, sizeof(name), "%s/%s/", de->d_name, ee->d_name);
				fn(name, arg);
			}
		closedir(e);
	}
	closedir(d);
}

static const char *const tracefs_roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

int hwc__resolve_tracepoint(const char *spec, struct hwc__ev *ev)
{
	const char *colon = strchr(spec, ':');
	if (!colon || strchr(colon + 1, ':') || colon == spec || !colon[1])
		return HWC__NOT_MINE;
	char path[1024];
	long long id;
	for (size_t i = 0; i < HWC_ARRAY_SIZE(tracefs_roots); i++) {
		snprintf(path, sizeof(path), "%s/events/%.*s", tracefs_roots[i], (int)(colon - spec), spec);
		struct stat st;
		if (stat(path, &st) != 0)
			continue;
		strncat(path, "/", sizeof(path) - strlen(path) - 1);
		strncat(path, colon + 1, sizeof(path) - strlen(path) - 1);
		strncat(path, "/id", sizeof(path) - strlen(path) - 1);
		if (hwc__read_int_file(path, &id) != 0)
			return hwc__fail(-ENOENT, "unknown tracepoint '%s': subsystem '%.*s' has no "
						  "event '%s' (see %s/events/%.*s/)",
					 spec, (int)(colon - spec), spec, colon + 1, tracefs_roots[i],
					 (int)(colon - spec), spec);
		ev->pub.attr.type = PERF_TYPE_TRACEPOINT;
		ev->pub.attr.config = (uint64_t)id;
		ev->pub.source = HWC_SRC_TRACEPOINT;
		snprintf(ev->pmu, sizeof(ev->pmu), "tracepoint");
		snprintf(ev->origin, sizeof(ev->origin), "tracefs %s", path);
		return 0;
	}
	return HWC__NOT_MINE;
}

/* The x86 PERFEVTSEL word as the resolver's cpu/ terms, so that the classic
 * interfaces (pctr function words, perfmon struct pmc) encode exactly as
 * cpu/.../ does: one encoder, through the sysfs format when the kernel has
 * a cpu PMU and through evtsel_layout when it has none. */
HWC_EXPORT int hwc_evlist_add_evtsel(hwc_evlist *list, uint64_t evtsel)
{
	hwc__clear_error();
	if (evtsel & (1ULL << 19))
		return hwc__fail(-EINVAL, "PERFEVTSEL %#llx sets PC (bit 19, pin control), which "
					  "perf_event cannot program",
				 (unsigned long long)evtsel);
	if (evtsel & (1ULL << 20))
		return hwc__fail(-EINVAL, "PERFEVTSEL %#llx sets INT (bit 20, interrupt on "
					  "overflow), which perf_event manages itself",
				 (unsigned long long)evtsel);
	if (evtsel >> 36)
		return hwc__fail(-EINVAL, "PERFEVTSEL %#llx sets bits above 35; only the event "
					  "select's high bits 32-35 are defined here",
				 (unsigned long long)evtsel);
	/* EN (bit 22) is ignored: enabling is hwc_counters_start()'s business. */
	unsigned event = (unsigned)((evtsel & 0xff) | ((evtsel >> 24) & 0xf00));
	unsigned umask = (unsigned)(evtsel >> 8) & 0xff, cmask = (unsigned)(evtsel >> 24) & 0xff;
	char spec[160];
	int n = snprintf(spec, sizeof(spec), "cpu/event=%#x,umask=%#x", event, umask);
	if (evtsel & (1ULL << 18))
		n += snprintf(spec + n, sizeof(spec) - (size_t)n, ",edge=1");
	if (evtsel & (1ULL << 21))
		n += snprintf(spec + n, sizeof(spec) - (size_t)n, ",any=1");
	if (evtsel & (1ULL << 23))
		n += snprintf(spec + n, sizeof(spec) - (size_t)n, ",inv=1");
	if (cmask)
		n += snprintf(spec + n, sizeof(spec) - (size_t)n, ",cmask=%#x", cmask);
	snprintf(spec + n, sizeof(spec) - (size_t)n, ",usr=%u,os=%u/",
		 (unsigned)(evtsel >> 16) & 1, (unsigned)(evtsel >> 17) & 1);
	return hwc_evlist_add(list, spec);
}

/* ------------------------------------------------------------- listing */

static int skip_dot(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/* Entries of DIR without a '.' in their name (sysfs aliases have .scale,
 * .unit, .snapshot companions), sorted; returns the count or -errno. */
static int list_dir(const char *dir, struct dirent ***out)
{
	int n = scandir(dir, out, skip_dot, alphasort);
	if (n < 0)
		return -errno;
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (strchr((*out)[i]->d_name, '.'))
			free((*out)[i]);
		else
			(*out)[k++] = (*out)[i];
	}
	return k;
}

static void free_dir(struct dirent **ents, int n)
{
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
}

/* "name=contents ..." for the files of DIR, into B (space-separated: format
 * contents have commas, "config:0-7,32-35"). */
static void join_files(const char *dir, struct hwc__buf *b)
{
	struct dirent **ents;
	int n = list_dir(dir, &ents);
	char path[1024], body[256];
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (hwc__read_file(path, body, sizeof(body)) == 0)
			hwc__buf_printf(b, "%s%s=%s", b->len ? " " : "", ents[i]->d_name, body);
	}
	if (n >= 0)
		free_dir(ents, n);
}

bool hwc__pmu_exists(const char *name)
{
	char path[1024];
	struct stat st;
	if (!*name || strchr(name, '/'))
		return false;
	pmu_path(path, sizeof(path), name, "type", NULL);
	return stat(path, &st) == 0;
}

/* perf's perf_pmu__match_ignoring_suffix: is NAME the PMU TOK itself or one
 * of its numbered instances, TOK then [_]digits or [_]hex digits (at least
 * 3 when one is a letter, so that s390's cpum_cf is not cpum_c's)?
 * uncore_imc_free_running_0 is not an instance of uncore_imc. */
static bool instance_of(const char *name, const char *tok)
{
	size_t len = strlen(tok);
	if (strncmp(name, tok, len) != 0)
		return false;
	if (!name[len])
		return true;
	const char *p = name + len + (name[len] == '_');
	size_t n = strspn(p, "0123456789abcdefABCDEF");
	return n && !p[n] && (strspn(p, "0123456789") == n || n > 2);
}

bool hwc__pmu_name_matches(const char *name, const char *pmu, bool json)
{
	if (!json) {
		if (strncmp(pmu, "uncore_", 7) == 0)
			pmu += 7;
		if (strncmp(name, "uncore_", 7) == 0)
			name += 7;
		return instance_of(name, pmu) ||
		       (strpbrk(pmu, "*?[") && fnmatch(pmu, name, 0) == 0);
	}
	char parts[256];
	snprintf(parts, sizeof(parts), "%s", pmu);
	char *save = NULL, *part = strtok_r(parts, ",", &save);
	while (part) {
		char *next = strtok_r(NULL, ",", &save);
		if (!(name = strstr(name, part)))
			return false;
		if (!next)
			return instance_of(name, part);
		name += strlen(part);
		part = next;
	}
	return false;
}

bool hwc__pmu_identifier_matches(const char *pmu, const char *compat)
{
	char path[1024], id[256];
	regex_t re;
	regmatch_t m;
	pmu_path(path, sizeof(path), pmu, "identifier", NULL);
	if (hwc__read_file(path, id, sizeof(id)) || regcomp(&re, compat, REG_EXTENDED))
		return false;
	/* perf's pmu_uncore_identifier_match: all of the identifier */
	bool ok = regexec(&re, id, 1, &m, 0) == 0 && m.rm_so == 0 && (size_t)m.rm_eo == strlen(id);
	regfree(&re);
	return ok;
}

/* perf's pmu_name_len_no_suffix: NAME's length without its _N suffix. */
static size_t base_len(const char *name)
{
	size_t len = strlen(name), n = len;
	bool hex = false;
	while (n && isxdigit((unsigned char)name[n - 1]))
		hex |= !isdigit((unsigned char)name[--n]);
	return n && n != len && name[n - 1] == '_' && (!hex || len - n > 2) ? n - 1 : len;
}

/* perf's pmu_name_cmp: uncore_imc_2 before uncore_imc_10. */
static int instance_cmp(const struct dirent **a, const struct dirent **b)
{
	const char *x = (*a)->d_name, *y = (*b)->d_name;
	size_t i = base_len(x), j = base_len(y);
	int c = strncmp(x, y, i < j ? i : j);
	if (i != j || c || !i)
		return c ? c : i < j ? -1 : i > j;
	unsigned long long u = x[i] ? strtoull(x + i + 1, NULL, 16) : 0;
	unsigned long long v = y[j] ? strtoull(y + j + 1, NULL, 16) : 0;
	return u < v ? -1 : u > v;
}

/* The PMUs one query names (a PMU's instances, the PMUs with an alias),
 * with each one's alias file ("" for instances), the last query's on this
 * thread: an event that opens on N PMUs resolves each copy with the same
 * query, which listed sysfs N times (N^2 stats on a server's 100+ uncore
 * boxes).  hwc_evlist_add() forgets it once the spec is resolved. */
static __thread struct pmu_memo {
	char *key;
	char *text; /* "pmu\0alias\0" per PMU */
	size_t len;
} memo;

void hwc__pmu_memo_forget(void)
{
	free(memo.key);
	free(memo.text);
	memo = (struct pmu_memo){0};
}

/* The answer to KEY when it is the last query's; else NULL, and F opened
 * for the caller to write "pmu\0alias\0" entries to, which memo_end()
 * then keeps under KEY. */
static const struct pmu_memo *memo_begin(const char *key, FILE **f)
{
	if (memo.key && strcmp(memo.key, key) == 0)
		return &memo;
	hwc__pmu_memo_forget();
	*f = open_memstream(&memo.text, &memo.len);
	return NULL;
}

static const struct pmu_memo *memo_end(const char *key, FILE *f)
{
	if (!f || fclose(f) || !(memo.key = strdup(key))) {
		hwc__pmu_memo_forget();
		return NULL;
	}
	return &memo;
}

static void memo_add(FILE *f, const char *pmu, const char *alias)
{
	fwrite(pmu, 1, strlen(pmu) + 1, f);
	fwrite(alias, 1, strlen(alias) + 1, f);
}

/* How many of M's PMUs fit PSIZE and their alias ASIZE; the Ith into PMU
 * and ALIAS (when given). */
static int memo_answer(const struct pmu_memo *m, int i, char *pmu, size_t psize, char *alias,
		       size_t asize)
{
	int k = 0;
	for (const char *p = m ? m->text : NULL; p && p < m->text + m->len;) {
		const char *a = p + strlen(p) + 1;
		if (strlen(p) < psize && strlen(a) < asize && k++ == i) {
			snprintf(pmu, psize, "%s", p);
			if (alias)
				snprintf(alias, asize, "%s", a);
		}
		p = a + strlen(a) + 1;
	}
	return k;
}

/* Does sysfs PMU NAME belong to a query's answer, and with which alias
 * file (into ALIAS, "" for none)? */
typedef bool pmu_filter(const char *name, const void *arg, char *alias, size_t asize);

/* The sysfs PMUs FILTER keeps, in instance order (CORE_FIRST: in
 * perf_pmus__scan's, the core PMUs first), the memo's when QUERY was the
 * last one asked; how many, and the Ith into PMU and its alias into ALIAS
 * (when given). */
static int pmu_query(const char *query, bool core_first, pmu_filter *filter, const void *arg,
		     int i, char *pmu, size_t psize, char *alias, size_t asize)
{
	char path[1024], key[2048];
	snprintf(path, sizeof(path), "%s/bus/event_source/devices", hwc__sysfs_root());
	snprintf(key, sizeof(key), "%s\n%s", path, query);
	FILE *f = NULL;
	const struct pmu_memo *m = memo_begin(key, &f);
	if (!m) {
		struct dirent **ents;
		int n = f ? scandir(path, &ents, skip_dot, instance_cmp) : -1;
		char file[256];
		for (int core = core_first; core >= 0; core--)
			for (int e = 0; e < n; e++) {
				const char *p = ents[e]->d_name;
				if ((!core_first || is_core_pmu(p) == core) &&
				    filter(p, arg, file, sizeof(file)))
					memo_add(f, p, file);
			}
		if (n >= 0)
			free_dir(ents, n); /* no sysfs PMUs: none */
		m = memo_end(key, f);
	}
	return memo_answer(m, i, pmu, psize, alias, asize);
}

struct instance_query {
	const char *pmu, *compat;
	bool json;
};

static bool is_instance(const char *name, const void *arg, char *alias, size_t asize)
{
	const struct instance_query *q = arg;
	(void)asize;
	alias[0] = '\0';
	return hwc__pmu_name_matches(name, q->pmu, q->json) && hwc__pmu_exists(name) &&
	       (!q->compat || hwc__pmu_identifier_matches(name, q->compat));
}

int hwc__pmu_instance(const char *pmu, bool json, const char *compat, int i, char *out,
		      size_t size)
{
	char query[1024];
	snprintf(query, sizeof(query), "instances %d %s\n%s", json, compat ? compat : "-", pmu);
	struct instance_query q = {pmu, compat, json};
	return pmu_query(query, false, is_instance, &q, i, out, size, NULL, 1);
}

/* perf's perf_pmu__find_alias: PMU's events/ file for NAME, all in lower
 * case or all in upper case (sysfs names are one or the other), into OUT. */
static bool alias_file(const char *pmu, const char *name, char *out, size_t size)
{
	char path[1024];
	struct stat st;
	for (int upper = 0; upper < 2; upper++) {
		size_t i = 0;
		for (; name[i] && i + 1 < size; i++)
			out[i] = (char)(upper ? toupper((unsigned char)name[i])
					      : tolower((unsigned char)name[i]));
		out[i] = '\0';
		pmu_path(path, sizeof(path), pmu, "events", out);
		if (!name[i] && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return true;
	}
	return false;
}

static bool has_alias(const char *name, const void *arg, char *alias, size_t asize)
{
	return hwc__pmu_exists(name) && alias_file(name, arg, alias, asize);
}

int hwc__pmus_with_alias(const char *name, int i, char *pmu, size_t psize, char *alias,
			 size_t asize)
{
	/* companions (.scale, .unit) and paths are no aliases */
	if (!*name || strpbrk(name, "./"))
		return 0;
	char query[1024];
	snprintf(query, sizeof(query), "alias\n%s", name);
	return pmu_query(query, true, has_alias, name, i, pmu, psize, alias, asize);
}

/* Is NAME a CPU's own PMU?  x86 calls it cpu (hybrids cpu_core, cpu_atom);
 * elsewhere it is named after the core (armv8_pmuv3, armv8_cortex_a57, ...)
 * and is the one that lists the CPUs it covers in a cpus file (uncore PMUs
 * have a cpumask, the CPU that reads them). */
static bool is_core_pmu(const char *name)
{
	char path[1024];
	struct stat st;
	if (strcmp(name, "cpu") == 0 || strncmp(name, "cpu_", 4) == 0)
		return true;
	pmu_path(path, sizeof(path), name, "cpus", NULL);
	return stat(path, &st) == 0;
}

const char *hwc__core_pmu(uint32_t *type)
{
	static __thread char name[64];
	char path[1024];
	long long t;
	name[0] = '\0';
	static const char *const x86[] = {"cpu", "cpu_core"};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(x86) && !name[0]; i++)
		if (hwc__pmu_exists(x86[i]))
			snprintf(name, sizeof(name), "%s", x86[i]);
	if (!name[0]) {
		snprintf(path, sizeof(path), "%s/bus/event_source/devices", hwc__sysfs_root());
		struct dirent **ents;
		int n = list_dir(path, &ents);
		for (int i = 0; i < n && !name[0]; i++)
			if (strlen(ents[i]->d_name) < sizeof(name) && is_core_pmu(ents[i]->d_name) &&
			    hwc__pmu_exists(ents[i]->d_name))
				snprintf(name, sizeof(name), "%s", ents[i]->d_name);
		if (n >= 0)
			free_dir(ents, n);
	}
	if (!name[0])
		return NULL;
	pmu_path(path, sizeof(path), name, "type", NULL);
	if (type)
		*type = hwc__read_int_file(path, &t) == 0 ? (uint32_t)t : PERF_TYPE_RAW;
	return name;
}

int hwc__hybrid_pmus(struct hwc__core_pmu **out)
{
	*out = NULL;
	char path[1024];
	snprintf(path, sizeof(path), "%s/bus/event_source/devices", hwc__sysfs_root());
	struct dirent **ents;
	int n = list_dir(path, &ents);
	if (n < 0)
		return 0; /* no sysfs PMUs: nothing hybrid */
	struct hwc__core_pmu *pmus = calloc((size_t)n + 1, sizeof(*pmus));
	int k = 0;
	for (int i = 0; pmus && i < n; i++) { /* alphasort: perf's order */
		const char *name = ents[i]->d_name;
		long long type;
		struct hwc__core_pmu *p = &pmus[k];
		pmu_path(path, sizeof(path), name, "type", NULL);
		if (strlen(name) >= sizeof(p->name) || !is_core_pmu(name) || hwc__read_int_file(path, &type))
			continue;
		snprintf(p->name, sizeof(p->name), "%s", name);
		p->type = (uint32_t)type;
		pmu_path(path, sizeof(path), name, "cpus", NULL);
		hwc__read_file(path, p->cpus, sizeof(p->cpus));
		k++;
	}
	free_dir(ents, n);
	if (!pmus)
		return hwc__fail(-ENOMEM, "out of memory");
	if (k < 2) {
		free(pmus);
		return 0;
	}
	*out = pmus;
	return k;
}

bool hwc__pmu_covers_cpu(const char *pmu, int cpu, bool every_cpu)
{
	char path[1024], list[1024];
	if (!*pmu || strchr(pmu, '/'))
		return true;
	pmu_path(path, sizeof(path), pmu, "cpus", NULL);
	if (!hwc__read_file(path, list, sizeof(list)))
		return hwc__cpu_in_list(list, cpu);
	pmu_path(path, sizeof(path), pmu, "cpumask", NULL);
	return !every_cpu || hwc__read_file(path, list, sizeof(list)) || hwc__cpu_in_list(list, cpu);
}

/* The Arm common events (0x00-0x3f) a PMU's events/ directory names, read
 * once per directory: a metric asks for each of its events, and -M all
 * would otherwise open the directory and its files thousands of times.
 * Entries are never changed once in the list, nor freed: sysfs does not
 * change its PMUs' events while we run. */
struct arm_common {
	struct arm_common *next;
	uint64_t listed; /* bit N: events/ has a file saying event=N */
	bool unknown;    /* no events/ to go by */
	char dir[];      /* the events/ directory */
};
static struct arm_common *arm_common_list;
static pthread_mutex_t arm_common_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct arm_common *arm_common_events(const char *pmu)
{
	char dir[1024], path[1024], buf[128];
	pmu_path(dir, sizeof(dir), pmu, "events", NULL);
	pthread_mutex_lock(&arm_common_lock);
	struct arm_common *a = arm_common_list;
	while (a && strcmp(a->dir, dir))
		a = a->next;
	if (!a && (a = calloc(1, sizeof(*a) + strlen(dir) + 1))) {
		strcpy(a->dir, dir);
		struct dirent **ents;
		int n = list_dir(dir, &ents);
		a->unknown = n <= 0;
		for (int i = 0; i < n; i++) {
			uint64_t code;
			pmu_path(path, sizeof(path), pmu, "events", ents[i]->d_name);
			if (!hwc__read_file(path, buf, sizeof(buf)) && !strncmp(buf, "event=", 6) &&
			    !parse_u64(buf + 6, &code) && code <= 0x3f)
				a->listed |= 1ULL << code;
		}
		if (n >= 0)
			free_dir(ents, n);
		a->next = arm_common_list;
		arm_common_list = a;
	}
	pthread_mutex_unlock(&arm_common_lock);
	return a;
}

const char *hwc__pmu_lacks_arm_event(const struct perf_event_attr *attr)
{
	static __thread char name[64];
	uint32_t core_type;
	/* PMCEID0/1 cover the common events 0x00-0x3f, each of which the
	 * kernel's arm_pmuv3 names in events/ exactly when PMCEID has it. */
	if (attr->config > 0x3f || attr->config1 || attr->config2)
		return NULL;
	const char *core = hwc__core_pmu(&core_type);
	if (!core || (attr->type != core_type && attr->type != PERF_TYPE_RAW) ||
	    (strncmp(core, "armv8_", 6) && strncmp(core, "armv9_", 6)))
		return NULL;
	snprintf(name, sizeof(name), "%s", core);
	const struct arm_common *a = arm_common_events(name);
	/* Out of memory, or no events/: not known to lack it. */
	return !a || a->unknown || (a->listed >> attr->config & 1) ? NULL : name;
}

bool hwc__perf_metrics(void)
{
	/* Not remembered: asked only when a weak group was refused (and tests
	 * change HWC_SYSFS_ROOT between calls). */
	const char *core = hwc__core_pmu(NULL);
	char alias[16];
	return core && (!strcmp(core, "cpu") || !strcmp(core, "cpu_core")) &&
	       alias_file(core, "slots", alias, sizeof(alias));
}

const char *hwc__core_pmu_label(void)
{
	const char *core = hwc__core_pmu(NULL);
	return core ? core : "cpu";
}

int hwc__pmus_walk(int (*fn)(const struct hwc_pmu_info *p, void *arg), void *arg)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/bus/event_source/devices", hwc__sysfs_root());
	struct dirent **ents;
	int n = list_dir(path, &ents);
	if (n < 0)
		return hwc__fail(n, "cannot read %s: %s", path, strerror(-n));
	int r = 0;
	for (int i = 0; i < n && !r; i++) {
		const char *name = ents[i]->d_name;
		long long type, rdpmc = -1;
		pmu_path(path, sizeof(path), name, "type", NULL);
		if (hwc__read_int_file(path, &type))
			continue;
		struct hwc__buf formats = {0}, caps = {0};
		char cpumask[1024] = "", cpus[1024] = "";
		pmu_path(path, sizeof(path), name, "cpumask", NULL);
		hwc__read_file(path, cpumask, sizeof(cpumask));
		pmu_path(path, sizeof(path), name, "cpus", NULL);
		hwc__read_file(path, cpus, sizeof(cpus));
		pmu_path(path, sizeof(path), name, "rdpmc", NULL);
		hwc__read_int_file(path, &rdpmc);
		pmu_path(path, sizeof(path), name, "format", NULL);
		join_files(path, &formats);
		pmu_path(path, sizeof(path), name, "caps", NULL);
		join_files(path, &caps);
		struct dirent **evs;
		pmu_path(path, sizeof(path), name, "events", NULL);
		int nev = list_dir(path, &evs);
		if (nev > 0)
			free_dir(evs, nev);
		struct hwc_pmu_info p = {
			.name = name,
			.type = (uint32_t)type,
			.core = is_core_pmu(name),
			.cpumask = cpumask,
			.nevents = nev > 0 ? (size_t)nev : 0,
			.formats = formats.s ? formats.s : "",
			.caps = caps.s ? caps.s : "",
			.rdpmc = (int)rdpmc,
			.cpus = cpus,
		};
		r = fn(&p, arg);
		free(formats.s);
		free(caps.s);
	}
	free_dir(ents, n);
	return r;
}

int hwc__pmu_events_walk(const char *pmu, hwc_event_walk_fn fn, void *arg)
{
	if (!hwc__pmu_exists(pmu))
		return -ENOENT;
	char path[1024], body[1024], extra[128], name[512];
	pmu_path(path, sizeof(path), pmu, "events", NULL);
	struct dirent **ents;
	int n = list_dir(path, &ents);
	if (n < 0)
		return 0; /* a PMU without aliases */
	int r = 0;
	for (int i = 0; i < n && !r; i++) {
		const char *alias = ents[i]->d_name;
		struct hwc__buf desc = {0};
		pmu_path(path, sizeof(path), pmu, "events", alias);
		if (hwc__read_file(path, body, sizeof(body)) == 0)
			hwc__buf_printf(&desc, "%s", body);
		strncat(path, ".unit", sizeof(path) - strlen(path) - 1);
		if (hwc__read_file(path, extra, sizeof(extra)) == 0)
			hwc__buf_printf(&desc, " (unit %s)", extra);
		snprintf(name, sizeof(name), "%s/%s/", pmu, alias);
		struct hwc_event_info ev = {.name = alias, .spec = name, .pmu = pmu,
					    .source = HWC_SRC_PMU, .desc = desc.s ? desc.s : ""};
		r = fn(&ev, arg);
		free(desc.s);
	}
	free_dir(ents, n);
	return r;
}

/* The tracefs root with an events/ directory, or -ENOENT (not mounted) or
 * -EACCES (not readable by this user), with detail. */
static int tracefs_root(const char **root)
{
	char path[512];
	struct stat st;
	int err = -ENOENT;
	for (size_t i = 0; i < HWC_ARRAY_SIZE(tracefs_roots); i++) {
		snprintf(path, sizeof(path), "%s/events", tracefs_roots[i]);
		if (stat(path, &st) == 0) {
			*root = tracefs_roots[i];
			return 0;
		}
		if (errno == EACCES)
			err = hwc__fail(-EACCES, "tracepoints: %s is not readable by this user "
						 "(tracefs is usually root-only)",
					tracefs_roots[i]);
	}
	if (err == -ENOENT)
		hwc__fail(err, "tracepoints: tracefs is not mounted; `mount -t tracefs nodev "
			       "/sys/kernel/tracing`");
	return err;
}

/* A tracepoint's id, read relative to its subsystem's directory: tracefs
 * path lookups are most of a listing's cost. */
static int read_tracepoint_id(int subsystem_fd, const char *event, long long *id)
{
	char rel[512], buf[32], *end;
	snprintf(rel, sizeof(rel), "%s/id", event);
	int fd = openat(subsystem_fd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	buf[n] = '\0';
	*id = strtoll(buf, &end, 10);
	return end == buf ? -EINVAL : 0;
}

int hwc__tracepoints_walk(const char *pattern, hwc_event_walk_fn fn, void *arg)
{
	const char *root = NULL;
	int err = tracefs_root(&root);
	if (err)
		return err;
	char path[1024], name[512];
	snprintf(path, sizeof(path), "%s/events", root);
	struct dirent **subs;
	int nsub = list_dir(path, &subs);
	if (nsub < 0)
		return hwc__fail(nsub, "cannot read %s: %s", path, strerror(-nsub));
	int events_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = events_fd < 0 ? hwc__fail(-errno, "cannot open %s: %s", path, strerror(errno)) : 0;
	for (int s = 0; s < nsub && !r; s++) {
		int sub_fd = openat(events_fd, subs[s]->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub_fd < 0)
			continue; /* a file such as events/enable */
		struct dirent **evs;
		snprintf(path, sizeof(path), "%s/events/%s", root, subs[s]->d_name);
		int nev = list_dir(path, &evs);
		for (int e = 0; e < nev && !r; e++) {
			long long id = 0;
			snprintf(name, sizeof(name), "%s:%s", subs[s]->d_name, evs[e]->d_name);
			if (!hwc__event_matches(pattern, name, name) ||
			    read_tracepoint_id(sub_fd, evs[e]->d_name, &id))
				continue;
			struct hwc_event_info ev = {.name = name, .spec = name, .pmu = "tracepoint",
						    .source = HWC_SRC_TRACEPOINT, .desc = "",
						    .code = (uint64_t)id};
			r = fn(&ev, arg);
		}
		if (nev >= 0)
			free_dir(evs, nev);
		close(sub_fd);
	}
	if (events_fd >= 0)
		close(events_fd);
	free_dir(subs, nsub);
	return r;
}
