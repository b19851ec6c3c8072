/* PMUs the kernel exposes in sysfs: pmu/term=value,.../ through the PMU's
 * format/ files, its events/ aliases, and the x86 PERFEVTSEL layout for
 * cpu/ when the kernel has no cpu PMU (so encodings work on any host). */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The x86 PERFEVTSEL layout, as Intel and AMD cpu PMUs describe it. */
static const struct {
	const char *term;
	const char *format;
} evtsel_layout[] = {
	{"event", "config:0-7,32-35"}, {"umask", "config:8-15"}, {"edge", "config:18"},
	{"pc", "config:19"},           {"any", "config:21"},     {"inv", "config:23"},
	{"cmask", "config:24-31"},
};

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
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

static int apply_terms(struct term_ctx *t, const char *terms, bool from_alias);

static int apply_alias(struct term_ctx *t, const char *alias)
{
	char path[1024], body[1024];
	pmu_path(path, sizeof(path), t->pmu, "events", alias);
	int err = hwc__read_file(path, body, sizeof(body));
	if (err)
		return err;
	char scale[64], unit[32];
	pmu_path(path, sizeof(path), t->pmu, "events", alias);
	strncat(path, ".scale", sizeof(path) - strlen(path) - 1);
	if (hwc__read_file(path, scale, sizeof(scale)) == 0)
		t->ev->pub.scale = strtod(scale, NULL);
	pmu_path(path, sizeof(path), t->pmu, "events", alias);
	strncat(path, ".unit", sizeof(path) - strlen(path) - 1);
	if (hwc__read_file(path, unit, sizeof(unit)) == 0)
		snprintf(t->ev->unit, sizeof(t->ev->unit), "%s", unit);
	snprintf(t->ev->origin, sizeof(t->ev->origin), "sysfs alias %s/%s/ = %s", t->pmu, alias, body);
	return apply_terms(t, body, true);
}

static int apply_term(struct term_ctx *t, const char *key, const char *val, bool from_alias)
{
	struct perf_event_attr *a = &t->ev->pub.attr;
	uint64_t v = 1;
	if (val && parse_u64(val, &v))
		return hwc__fail(-EINVAL, "malformed value '%s' for term '%s' in '%s' (expected a "
					  "decimal or 0x hex number)",
				 val, key, t->spec);
	if (strcmp(key, "config") == 0 || strcmp(key, "config1") == 0 ||
	    strcmp(key, "config2") == 0) {
		if (!val)
			return hwc__fail(-EINVAL, "term '%s' needs a value in '%s'", key, t->spec);
		*(key[6] == '1' ? &a->config1 : key[6] == '2' ? &a->config2 : &a->config) = v;
		return 0;
	}
	if (strcmp(key, "period") == 0) {
		a->sample_period = v;
		return 0;
	}
	if (strcmp(key, "name") == 0) {
		if (!val)
			return hwc__fail(-EINVAL, "term 'name' needs a value in '%s'", t->spec);
		snprintf(t->ev->name, sizeof(t->ev->name), "%s", val);
		return 0;
	}
	if (t->is_cpu && (strcmp(key, "usr") == 0 || strcmp(key, "os") == 0)) {
		if (v > 1)
			return hwc__fail(-EINVAL, "term '%s' is 0 or 1 in '%s'", key, t->spec);
		*(key[0] == 'u' ? &t->usr : &t->os) = (int)v;
		return 0;
	}
	char path[1024], format[256];
	if (t->sysfs) {
		pmu_path(path, sizeof(path), t->pmu, "format", key);
		if (hwc__read_file(path, format, sizeof(format)) == 0)
			return hwc__format_apply(format, v, a, key);
		pmu_path(path, sizeof(path), t->pmu, "events", key);
		struct stat st;
		if (!from_alias && !val && stat(path, &st) == 0)
			return apply_alias(t, key);
	} else {
		for (size_t i = 0; i < HWC_ARRAY_SIZE(evtsel_layout); i++)
			if (strcmp(key, evtsel_layout[i].term) == 0)
				return hwc__format_apply(evtsel_layout[i].format, v, a, key);
	}
	hwc__fail(-EINVAL, "unknown term '%s' for PMU '%s' in '%s'; valid terms: config, config1, "
			   "config2, name, period",
		  key, t->pmu, t->spec);
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

static int apply_terms(struct term_ctx *t, const char *terms, bool from_alias)
{
	char *copy = strdup(terms), *save = NULL;
	if (!copy)
		return -ENOMEM;
	int err = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (eq)
			*eq = '\0';
		if (!*tok)
			err = hwc__fail(-EINVAL, "empty term in '%s'", t->spec);
		else if (eq && strchr(eq + 1, '?'))
			continue; /* alias parameter the user has to supply; unused here */
		else
			err = apply_term(t, tok, eq ? eq + 1 : NULL, from_alias);
	}
	free(copy);
	return err;
}

/* Known PMU names, for "unknown PMU" hints. */
static void append_pmus(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/bus/event_source/devices", hwc__sysfs_root());
	append_dir(path, "");
}

int hwc__resolve_pmu(const char *pmu, const char *terms, struct hwc__ev *ev)
{
	char path[1024];
	long long type;
	struct term_ctx t = {.pmu = pmu, .spec = ev->name, .usr = -1, .os = -1, .ev = ev};
	t.is_cpu = strcmp(pmu, "cpu") == 0 || strncmp(pmu, "cpu_", 4) == 0;
	pmu_path(path, sizeof(path), pmu, "type", NULL);
	if (hwc__read_int_file(path, &type) == 0) {
		t.sysfs = true;
		ev->pub.attr.type = (uint32_t)type;
		ev->pub.source = HWC_SRC_PMU;
		snprintf(ev->origin, sizeof(ev->origin), "sysfs PMU %s (type %lld)", pmu, type);
	} else if (strcmp(pmu, "cpu") == 0) {
		ev->pub.attr.type = PERF_TYPE_RAW;
		ev->pub.source = HWC_SRC_RAW;
		snprintf(ev->origin, sizeof(ev->origin),
			 "x86 PERFEVTSEL layout (the kernel exposes no cpu PMU)");
	} else {
		hwc__fail(-ENOENT, "unknown PMU '%s' in '%s'; PMUs on this machine: ", pmu, ev->name);
		append_pmus();
		return -ENOENT;
	}
	snprintf(ev->pmu, sizeof(ev->pmu), "%s", pmu);
	int err = apply_terms(&t, terms, false);
	if (err)
		return err;
	if (t.usr >= 0 || t.os >= 0) {
		int usr = t.usr >= 0 ? t.usr : 0, os = t.os >= 0 ? t.os : 0;
		if (!usr && !os)
			return hwc__fail(-EINVAL, "'%s' counts nothing: set usr=1 and/or os=1", ev->name);
		ev->pub.attr.exclude_user = !usr;
		ev->pub.attr.exclude_kernel = !os;
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
		return -ENOENT;
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
	return -ENOENT;
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
