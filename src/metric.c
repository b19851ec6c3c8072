/* Metrics of perf's JSON tables: choosing them by name or group as perf
 * stat -M does, the events they need (metrics they refer to resolved, the
 * #literals of this machine), their groups as MetricConstraint says, and
 * their values from counts (metric_expr.c evaluates).  perf's
 * tools/perf/util/metricgroup.c and stat-shadow.c are the reference. */
#include "arch.h"
#include "internal.h"
#include "metric_expr.h"
#include "pmu_events.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_DEPTH 32 /* metrics referring to metrics, a chain as long: deeper is a loop */
#define TOOL ((size_t)-1)

struct mevent {
	char *id;            /* as the expression names it */
	size_t first, n;     /* its events in the list; first TOOL: a tool event */
};

struct mref {
	const struct hwc__pe_record *rec;
	struct hwc__mexpr *expr;
	double value;
	int state; /* 0 not computed, 1 computing, 2 done */
	int height; /* the longest chain of references from it, itself included */
};

struct metric {
	struct hwc_metric_info info;
	const struct hwc__pe_record *rec;
	struct hwc__mexpr *expr, *threshold;
	struct mevent *ev;
	size_t nev, evcap;
	struct mref *ref;
	size_t nref, refcap;
	double value; /* unscaled */
	int over;
	bool lacks; /* needs what this machine lacks (noted in hwc_metrics) */
	const char *mod; /* -M NAME:MOD's modifiers for its events, or NULL */
	char *shown;     /* with MOD, info.name: NAME:MOD, as perf shows it */
};

struct hwc_metrics {
	const struct hwc__pe_table *t;
	struct metric *m;
	size_t n, cap;
	unsigned flags;
	/* what the metrics asked for need and this machine lacks, named all
	 * at once: the metrics, the events and literals, why */
	struct hwc__buf lacking_by, lacking, unknown_why;
	char uncounted_pmu[64];
	bool no_slots;
	/* while computing */
	const double *counts;
	size_t ncounts;
	double seconds, user_s, sys_s;
	struct metric *cur;
	bool in_threshold;
};

/* ------------------------------------------------------------ the table's fields */

static const char *field(const struct hwc__pe_record *r, const char *key)
{
	const char *v = hwc__pe_get(r, key);
	return v ? v : "";
}

static void info_of(const struct hwc__pe_record *r, struct hwc_metric_info *out)
{
	out->name = r->name;
	out->groups = field(r, "MetricGroup");
	out->desc = field(r, "BriefDescription");
	out->expr = field(r, "MetricExpr");
	out->threshold = field(r, "MetricThreshold");
	/* ScaleUnit "100%", "1percent of slots", "1MPKI": a factor, a unit */
	const char *su = field(r, "ScaleUnit");
	char *end;
	out->scale = strtod(su, &end);
	if (end == su)
		out->scale = 1;
	while (*end == ' ')
		end++;
	out->unit = end;
}

/* perf's match_metric: "all", or one of the ';'-separated LIST, any case. */
static bool matches(const char *list, const char *sought)
{
	if (!strcasecmp(sought, "all"))
		return true;
	size_t len = strlen(sought);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ";");
		if (n == len && !strncasecmp(p, sought, len))
			return true;
		p += n + (p[n] == ';');
	}
	return false;
}

/* ------------------------------------------------------------ this machine */

static double count_distinct(const char *file)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	char **seen = calloc(n > 0 ? (size_t)n : 1, sizeof(*seen));
	size_t nseen = 0;
	if (!seen)
		return NAN;
	for (long cpu = 0; cpu < n; cpu++) {
		char path[256], buf[256];
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%ld/topology/%s",
			 hwc__sysfs_root(), cpu, file);
		if (hwc__read_file(path, buf, sizeof(buf)))
			continue; /* offline */
		bool dup = false;
		for (size_t i = 0; i < nseen && !dup; i++)
			dup = !strcmp(seen[i], buf);
		if (!dup && (seen[nseen] = strdup(buf)))
			nseen++;
	}
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	return nseen ? (double)nseen : NAN;
}

static bool smt_on(void)
{
	char path[256];
	long long v = 0;
	snprintf(path, sizeof(path), "%s/devices/system/cpu/smt/active", hwc__sysfs_root());
	return !hwc__read_int_file(path, &v) && v;
}

/* The number of slots per cycle the core PMU gives in caps/slots; NaN
 * when it gives none or 0 (PMMIR_EL1.SLOTS unimplemented), as in perf. */
static double slots(void)
{
	const char *pmu = hwc__core_pmu(NULL);
	char path[512];
	long long v;
	if (!pmu)
		return NAN;
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/caps/slots", hwc__sysfs_root(),
		 pmu);
	return hwc__read_int_file(path, &v) || v <= 0 ? NAN : (double)v;
}

/* perf's arch_get_tsc_freq: on Intel CPUs, CPUID leaf 0x15's crystal
 * clock times its ratio, else the "@ 3.00GHz" of the brand string; NaN
 * elsewhere (perf's 0 would be a silently wrong number: the metrics that
 * use it are Intel's). */
static double system_tsc_freq(void)
{
	struct hwc_cpu_info ci = {0};
	hwc__arch_cpu_identity(&ci);
	if (strcmp(ci.vendor, "GenuineIntel"))
		return NAN;
	double hz, ghz;
	enum hwc_tsc_source src;
	bool first;
	if (hwc__arch_tsc_rate(&hz, &src, &first) && src == HWC_TSC_CPUID_15)
		return hz;
	const char *at = strstr(ci.brand, " @ ");
	return at && sscanf(at, " @ %lfGHz", &ghz) == 1 && ghz > 0 ? ghz * 1e9 : NAN;
}

static double host_literal(void *arg, const char *name)
{
	const struct hwc_metrics *ms = arg;
	if (!strcasecmp(name, "#smt_on"))
		return smt_on();
	if (!strcmp(name, "#num_cpus_online"))
		return (double)sysconf(_SC_NPROCESSORS_ONLN);
	if (!strcmp(name, "#num_cpus"))
		return (double)sysconf(_SC_NPROCESSORS_CONF);
	if (!strcmp(name, "#num_cores"))
		return count_distinct("core_cpus_list");
	if (!strcmp(name, "#num_packages"))
		return count_distinct("package_cpus_list");
	if (!strcmp(name, "#num_dies"))
		return count_distinct("die_cpus_list");
	if (!strcmp(name, "#slots"))
		return slots();
	if (!strcmp(name, "#core_wide")) /* perf's core_wide(): whole cores counted */
		return (ms->flags & HWC_METRICS_SYSTEM_WIDE) != 0;
	if (!strcmp(name, "#has_pmem")) {
		char path[256];
		snprintf(path, sizeof(path), "%s/firmware/acpi/tables/NFIT", hwc__sysfs_root());
		return access(path, F_OK) == 0;
	}
	if (!strcasecmp(name, "#system_tsc_freq"))
		return system_tsc_freq();
	return NAN;
}

static bool is_tool(const char *id)
{
	return !strcmp(id, "duration_time") || !strcmp(id, "user_time") || !strcmp(id, "system_time");
}

/* The event spec of an expression's ID: its @s stand for the /s of
 * PMU/TERMS/ ("cpu@EVENT,cmask=4@" is cpu/EVENT,cmask=4/); MOD, the
 * modifiers of -M NAME:MOD (or NULL), appended as perf's
 * decode_all_metric_ids does: after a ':' unless the spec has a / or one. */
static char *spec_of(const char *id, const char *mod)
{
	size_t len = strlen(id);
	char *s = malloc(len + (mod ? strlen(mod) + 2 : 1));
	if (!s)
		return NULL;
	memcpy(s, id, len + 1);
	char *first = strchr(s, '@');
	if (first) {
		*first = '/';
		char *last = strrchr(s, '@');
		if (last)
			*last = '/';
	}
	char *colon = first ? NULL : strrchr(s, ':');
	if (mod && !first && !colon)
		sprintf(s + len, ":%s", mod);
	else if (mod && first)
		strcpy(s + len, mod);
	for (const char *c = colon && mod ? mod : ""; *c; c++) /* "EV:k" and k: once */
		if (!strchr(colon, *c))
			s[len++] = *c, s[len] = '\0';
	return s;
}

static double host_has_event(void *arg, const char *id)
{
	(void)arg;
	hwc_evlist *scratch;
	char *spec = spec_of(id, NULL);
	double yes = 0;
	if (spec && !hwc_evlist_new(&scratch)) {
		yes = hwc_evlist_add(scratch, spec) == 0;
		hwc_evlist_free(scratch);
	}
	free(spec);
	hwc__clear_error();
	return yes;
}

/* perf's strcmp_cpuid_str: ID, a regular expression, matches all of this
 * CPU's identifier. */
static double host_cpuid(void *arg, const char *id)
{
	(void)arg;
	char cpuid[128], pattern[512];
	regex_t re;
	if (!hwc__pe_host_cpuid(cpuid, sizeof(cpuid)))
		return 0;
	snprintf(pattern, sizeof(pattern), "^(%s)$", id);
	if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB | REG_ICASE))
		return !strcasecmp(id, cpuid);
	double yes = regexec(&re, cpuid, 0, NULL, 0) == 0;
	regfree(&re);
	return yes;
}

static double value_of(void *arg, const char *id, bool source_count);

static struct hwc__mexpr_env env_of(struct hwc_metrics *ms)
{
	return (struct hwc__mexpr_env){ value_of, host_literal, host_has_event, host_cpuid, ms };
}

/* ------------------------------------------------------------ resolving */

struct resolve {
	struct hwc_metrics *ms;
	struct metric *m;
	bool threshold;                        /* resolving the root's threshold */
	int depth;
	const char *chain[MAX_DEPTH];          /* the metrics being resolved */
	int below;                             /* the highest ref met at this depth */
	int err;                               /* resolve_literal()'s, which returns a value */
};

static int resolve_expr(struct resolve *rs, const struct hwc__mexpr *e);

static int add_id(void *arg, const char *id)
{
	struct resolve *rs = arg;
	struct metric *m = rs->m;
	if (rs->threshold && !rs->depth && !strcasecmp(id, m->rec->name))
		return 0; /* a threshold names its own metric */
	const struct hwc__pe_record *ref = hwc__pe_find(rs->ms->t, id, true);
	if (ref) {
		bool loop = rs->depth >= MAX_DEPTH - 1 || !strcasecmp(ref->name, m->rec->name);
		for (int i = 0; i < rs->depth && !loop; i++)
			loop = !strcasecmp(rs->chain[i], ref->name);
		if (loop)
			return hwc__fail(-EINVAL, "metric %s: the metrics it refers to refer back to "
					 "themselves (through %s)", m->rec->name, ref->name);
		for (size_t i = 0; i < m->nref; i++) {
			if (m->ref[i].rec != ref)
				continue;
			/* Resolved already, from elsewhere: evaluating it from here
			 * recurses as deep as its chain goes on from here. */
			if (rs->depth + m->ref[i].height >= MAX_DEPTH)
				return hwc__fail(-EINVAL, "metric %s: the metrics it refers to refer to "
						 "others more than %d deep (through %s)",
						 m->rec->name, MAX_DEPTH, ref->name);
			if (m->ref[i].height > rs->below)
				rs->below = m->ref[i].height;
			return 0;
		}
		if (hwc__reserve(&m->ref, &m->refcap, m->nref + 1, sizeof(*m->ref)))
			return -ENOMEM;
		struct mref *r = &m->ref[m->nref];
		*r = (struct mref){ .rec = ref };
		int err = hwc__mexpr_parse(field(ref, "MetricExpr"), 0, &r->expr);
		if (err) {
			hwc__fail_append(" (in metric %s, which %s refers to)", ref->name, m->rec->name);
			return err;
		}
		size_t at = m->nref++; /* m->ref may move while resolving */
		int below = rs->below;
		rs->below = 0;
		rs->chain[rs->depth++] = ref->name;
		err = resolve_expr(rs, m->ref[at].expr);
		rs->depth--;
		m->ref[at].height = rs->below + 1;
		rs->below = below > m->ref[at].height ? below : m->ref[at].height;
		return err;
	}
	for (size_t i = 0; i < m->nev; i++)
		if (!strcmp(m->ev[i].id, id))
			return 0;
	if (hwc__reserve(&m->ev, &m->evcap, m->nev + 1, sizeof(*m->ev)))
		return -ENOMEM;
	if (!(m->ev[m->nev].id = strdup(id)))
		return hwc__fail(-ENOMEM, "out of memory");
	m->ev[m->nev++].first = TOOL;
	return 0;
}

/* Note NAME in LIST ("a, b") unless it is there; 0 or -ENOMEM. */
static int note(struct hwc__buf *list, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = list->s; p && *p;) {
		size_t n = strcspn(p, ",");
		if (n == len && !strncmp(p, name, len))
			return 0;
		p += n + (p[n] == ',') + (p[n] == ',' && p[n + 1] == ' ');
	}
	return hwc__buf_printf(list, "%s%s", list->len ? ", " : "", name);
}

/* While resolving, a literal this machine gives no value is noted as
 * lacking (1 stands in, so that the events are still all found). */
static double resolve_literal(void *arg, const char *name)
{
	struct resolve *rs = arg;
	double v = host_literal(rs->ms, name);
	if (!isnan(v))
		return v;
	if (!strcmp(name, "#slots"))
		rs->ms->no_slots = true;
	rs->m->lacks = true;
	int err = note(&rs->ms->lacking, name);
	if (err && !rs->err)
		rs->err = hwc__fail(err, "out of memory");
	return 1;
}

static int resolve_expr(struct resolve *rs, const struct hwc__mexpr *e)
{
	struct hwc__mexpr_env env = env_of(rs->ms);
	env.literal = resolve_literal;
	env.arg = rs;
	int err = hwc__mexpr_ids(e, &env, add_id, rs);
	return err ? err : rs->err;
}

/* Does the metric's MetricConstraint (or the group it was asked by) let its
 * events share a group? */
static bool may_group(const struct hwc_metrics *ms, const struct metric *m, const char *asked)
{
	if (ms->flags & HWC_METRICS_NO_GROUP)
		return false;
	if (matches(field(m->rec, "MetricgroupNoGroup"), asked) && strcasecmp(asked, "all"))
		return false;
	const char *c = field(m->rec, "MetricConstraint");
	if (!strcmp(c, "NO_GROUP_EVENTS"))
		return false;
	if (!strcmp(c, "NO_GROUP_EVENTS_NMI")) {
		long long wd = 0;
		return hwc__read_int_file("/proc/sys/kernel/nmi_watchdog", &wd) || !wd;
	}
	if (!strcmp(c, "NO_GROUP_EVENTS_SMT"))
		return !smt_on();
	return true;
}

/* Append M's events to LIST: each checked alone first, so that an event
 * this machine lacks is named; then the core and software ones as one weak
 * group, as perf's metricgroup__build_event_string writes it ({...}:W: its
 * events count apart when the kernel refuses the group) and parse_events
 * keeps it (other PMUs' events, in groups of their own there, stay alone). */
static int add_events(struct hwc_metrics *ms, struct metric *m, const char *asked, hwc_evlist *list)
{
	hwc_evlist *scratch;
	int err = hwc_evlist_new(&scratch);
	if (err)
		return err;
	bool *member = calloc(m->nev + 1, sizeof(*member));
	char *group = NULL;
	size_t nmembers = 0, glen = 0;
	if (!member) {
		err = hwc__fail(-ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < m->nev && !err; i++) {
		if (is_tool(m->ev[i].id))
			continue;
		char *spec = spec_of(m->ev[i].id, m->mod);
		size_t before = hwc_evlist_size(scratch);
		if (!spec) {
			err = hwc__fail(-ENOMEM, "out of memory");
			break;
		}
		err = hwc_evlist_add(scratch, spec);
		free(spec);
		if (err == -ENOMEM)
			break;
		if (err && m->mod) { /* the event, or the modifiers? */
			char detail[512], *bare = spec_of(m->ev[i].id, NULL);
			snprintf(detail, sizeof(detail), "%s", hwc_errdetail());
			int bare_err = bare ? hwc_evlist_add(scratch, bare) : -ENOMEM;
			free(bare);
			if (!bare_err) {
				err = hwc__fail(-EINVAL, "metric %s: its events do not take the "
						"modifiers '%s': %s", m->rec->name, m->mod, detail);
				break;
			}
			hwc__fail(err, "%s", detail);
		}
		if (err) { /* unknown here: noted, and the others still looked at */
			const char *why = hwc_errdetail();
			err = ms->unknown_why.len ? 0 : hwc__buf_printf(&ms->unknown_why, "%.*s",
									(int)strcspn(why, ";"), why);
			m->lacks = true;
			err = err ? err : note(&ms->lacking, m->ev[i].id);
			continue;
		}
		size_t n = hwc_evlist_size(scratch) - before;
		const char *pmu = NULL;
		for (size_t k = before; k < before + n && !pmu; k++)
			pmu = hwc__pmu_lacks_arm_event(&hwc_evlist_event(scratch, k)->attr);
		if (pmu) { /* it would count a silent 0 */
			snprintf(ms->uncounted_pmu, sizeof(ms->uncounted_pmu), "%s", pmu);
			m->lacks = true;
			err = note(&ms->lacking, m->ev[i].id);
			continue;
		}
		const struct perf_event_attr *a = &hwc_evlist_event(scratch, before)->attr;
		uint32_t core_type; /* a core PMU's sysfs alias (arm64's inst_retired) too */
		member[i] = n == 1 && (hwc__is_core_hw(a) || a->type == PERF_TYPE_SOFTWARE ||
				       (hwc__core_pmu(&core_type) && a->type == core_type));
		nmembers += member[i];
		m->ev[i].n = n;
	}
	if (!err && m->lacks)
		err = -ENOENT; /* hwc_metrics_new names what it lacks */
	bool grouped = !err && nmembers > 1 && may_group(ms, m, asked);
	if (grouped) { /* the group, then the others alone */
		for (size_t i = 0; i < m->nev && !err; i++) {
			if (!member[i])
				continue;
			char *spec = spec_of(m->ev[i].id, m->mod);
			size_t len = spec ? strlen(spec) : 0;
			char *g = spec ? realloc(group, glen + len + 5) : NULL;
			if (!g) {
				free(spec);
				err = hwc__fail(-ENOMEM, "out of memory");
				break;
			}
			group = g;
			group[glen] = glen ? ',' : '{';
			memcpy(group + glen + 1, spec, len + 1);
			glen += len + 1;
			free(spec);
		}
		size_t base = hwc_evlist_size(list), k = 0;
		if (!err) {
			strcpy(group + glen, "}:W"); /* as perf: apart when it does not fit */
			err = hwc_evlist_add(list, group);
		}
		for (size_t i = 0; i < m->nev && !err; i++)
			if (member[i])
				m->ev[i].first = base + k++;
	}
	for (size_t i = 0; i < m->nev && !err; i++) {
		if (is_tool(m->ev[i].id) || (grouped && member[i]))
			continue;
		char *spec = spec_of(m->ev[i].id, m->mod);
		m->ev[i].first = hwc_evlist_size(list);
		err = spec ? hwc_evlist_add(list, spec) : hwc__fail(-ENOMEM, "out of memory");
		free(spec);
	}
out:
	free(group);
	free(member);
	hwc_evlist_free(scratch);
	return err;
}

static void metric_fini(struct metric *m)
{
	hwc__mexpr_free(m->expr);
	hwc__mexpr_free(m->threshold);
	for (size_t i = 0; i < m->nev; i++)
		free(m->ev[i].id);
	free(m->ev);
	for (size_t i = 0; i < m->nref; i++)
		hwc__mexpr_free(m->ref[i].expr);
	free(m->ref);
	free((char *)m->mod);
	free(m->shown);
}

static int add_metric(struct hwc_metrics *ms, const struct hwc__pe_record *rec, const char *asked,
		      const char *mod, hwc_evlist *list)
{
	for (size_t i = 0; i < ms->n; i++)
		if (ms->m[i].rec == rec && !strcmp(ms->m[i].mod ? ms->m[i].mod : "", mod ? mod : ""))
			return 0;
	if (hwc__reserve(&ms->m, &ms->cap, ms->n + 1, sizeof(*ms->m)))
		return -ENOMEM;
	struct metric *m = &ms->m[ms->n];
	*m = (struct metric){ .rec = rec, .over = -1, .value = NAN };
	info_of(rec, &m->info);
	if (mod && (!(m->mod = strdup(mod)) || asprintf(&m->shown, "%s:%s", rec->name, mod) < 0)) {
		m->shown = NULL;
		metric_fini(m);
		return hwc__fail(-ENOMEM, "out of memory");
	}
	if (m->shown)
		m->info.name = m->shown;
	struct resolve rs = { .ms = ms, .m = m };
	int err = hwc__mexpr_parse(m->info.expr, 0, &m->expr);
	if (!err && m->info.threshold[0])
		err = hwc__mexpr_parse(m->info.threshold, 0, &m->threshold);
	if (err)
		hwc__fail_append(" (metric %s)", m->rec->name);
	if (!err)
		err = resolve_expr(&rs, m->expr);
	rs.threshold = true;
	if (!err && m->threshold)
		err = resolve_expr(&rs, m->threshold);
	if (!err)
		err = add_events(ms, m, asked, list);
	if (err == -ENOENT && m->lacks) /* named with the others by hwc_metrics_new */
		err = note(&ms->lacking_by, m->rec->name);
	if (err || m->lacks) {
		metric_fini(m);
		return err;
	}
	ms->n++;
	return 0;
}

/* All that the metrics asked for need and this machine lacks, and why. */
static int lacking(const struct hwc_metrics *ms)
{
	bool several = strchr(ms->lacking_by.s, ',') != NULL;
	hwc__fail(-ENOENT, "metric%s %s need%s %s, which this machine lacks", several ? "s" : "",
		  ms->lacking_by.s, several ? "" : "s", ms->lacking.s);
	if (ms->unknown_why.len)
		hwc__fail_append(" (%s)", ms->unknown_why.s);
	if (ms->uncounted_pmu[0])
		hwc__fail_append(" (%s does not count the Arm common events its events/ directory "
				 "leaves out: this CPU's PMCEID lacks them)",
				 ms->uncounted_pmu);
	if (ms->no_slots)
		hwc__fail_append(" (#slots is %s's caps/slots, which this CPU leaves 0 or absent)",
				 hwc__core_pmu_label());
	return -ENOENT;
}

struct add_matching {
	struct hwc_metrics *ms;
	const char *name, *mod;
	hwc_evlist *list;
	bool sys;   /* only the system metrics of PMUs this machine has */
	bool found;
};

/* Add the metrics of T that NAME names (a metric or group) to the list. */
static int add_matching(const struct hwc__pe_table *t, void *arg)
{
	struct add_matching *a = arg;
	int err = 0;
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct hwc__pe_record *r = &t->rec[i];
		if (!r->metric || !hwc__pe_get(r, "MetricExpr") ||
		    (a->sys && !hwc__json_sys_present(r)))
			continue;
		if (matches(r->name, a->name) || matches(field(r, "MetricGroup"), a->name)) {
			a->found = true;
			err = add_metric(a->ms, r, a->name, a->mod, a->list);
		}
	}
	return err;
}

HWC_EXPORT int hwc_metrics_new(hwc_metrics **out, const char *names, unsigned flags,
			       hwc_evlist *list)
{
	hwc__clear_error();
	*out = NULL;
	struct hwc_metrics *ms = calloc(1, sizeof(*ms));
	char *copy = strdup(names);
	int err = ms && copy ? 0 : hwc__fail(-ENOMEM, "out of memory");
	if (!err)
		ms->flags = flags;
	if (!err && (err = hwc__pe_table(NULL, &ms->t)))
		hwc__fail_append(" (metrics come from perf's JSON tables)");
	char *save = NULL;
	for (char *name = err ? NULL : strtok_r(copy, ",", &save); name && !err;
	     name = strtok_r(NULL, ",", &save)) {
		bool found = false;
		char *mod = strchr(name, ':'); /* NAME:MOD, as perf stat -M takes it */
		if (mod)
			*mod++ = '\0';
		/* The CPU's table, else the architecture's own (arm64's sbsa.json:
		 * the top-down level 1 a model's table takes with ArchStdEvent),
		 * else the system metrics of the PMUs this machine has (perf's
		 * sys/ tables: arm_cmn's). */
		struct add_matching am = {ms, name, mod, list, false, false};
		const struct hwc__pe_table *t = ms->t;
		for (int pass = 0; pass < 2 && !am.found && !err; pass++) {
			if (pass && hwc__pe_arch_table(ms->t->arch, &t)) {
				hwc__clear_error(); /* none: not found */
				break;
			}
			err = add_matching(t, &am);
		}
		am.sys = true;
		if (!err && !am.found)
			err = hwc__pe_sys_walk(add_matching, &am);
		found = am.found;
		if (!err && !found)
			err = hwc__fail(-EINVAL, "no metric or metric group '%s' for this CPU (model %s): "
					"`hwc list --metrics` lists them", name, ms->t->model);
	}
	if (!err && ms->lacking_by.len)
		err = lacking(ms);
	if (!err && !ms->n)
		err = hwc__fail(-EINVAL, "no metric named");
	free(copy);
	if (err) {
		hwc_metrics_free(ms);
		return err;
	}
	*out = ms;
	return 0;
}

HWC_EXPORT void hwc_metrics_free(hwc_metrics *ms)
{
	if (!ms)
		return;
	for (size_t i = 0; i < ms->n; i++)
		metric_fini(&ms->m[i]);
	free(ms->m);
	free(ms->lacking_by.s);
	free(ms->lacking.s);
	free(ms->unknown_why.s);
	free(ms);
}

HWC_EXPORT size_t hwc_metrics_count(const hwc_metrics *ms)
{
	return ms->n;
}

HWC_EXPORT const struct hwc_metric_info *hwc_metrics_info(const hwc_metrics *ms, size_t i)
{
	return i < ms->n ? &ms->m[i].info : NULL;
}

/* ------------------------------------------------------------ values */

static double value_of(void *arg, const char *id, bool source_count)
{
	struct hwc_metrics *ms = arg;
	struct metric *m = ms->cur;
	if (!strcasecmp(id, m->rec->name) && ms->in_threshold)
		return m->value;
	for (size_t i = 0; i < m->nev; i++) {
		struct mevent *e = &m->ev[i];
		if (strcmp(e->id, id))
			continue;
		if (e->first == TOOL) {
			if (source_count)
				return 1;
			/* perf's tool events: seconds of wall, user and system time */
			return !strcmp(id, "duration_time") ? ms->seconds
			       : !strcmp(id, "user_time")   ? ms->user_s
							    : ms->sys_s;
		}
		if (source_count)
			return (double)e->n;
		double sum = 0;
		for (size_t k = e->first; k < e->first + e->n; k++)
			sum += k < ms->ncounts ? ms->counts[k] : NAN;
		return sum;
	}
	for (size_t i = 0; i < m->nref; i++) {
		struct mref *r = &m->ref[i];
		if (strcasecmp(r->rec->name, id))
			continue;
		if (r->state == 0) {
			struct hwc__mexpr_env env = env_of(ms);
			r->state = 1;
			if (hwc__mexpr_eval(r->expr, &env, &r->value))
				r->value = NAN;
			r->state = 2;
		}
		return r->state == 2 ? r->value : NAN;
	}
	return NAN;
}

HWC_EXPORT void hwc_metrics_compute(hwc_metrics *ms, const double *counts, size_t n,
				    double seconds, double user_s, double sys_s)
{
	ms->counts = counts;
	ms->ncounts = n;
	ms->seconds = seconds;
	ms->user_s = user_s;
	ms->sys_s = sys_s;
	struct hwc__mexpr_env env = env_of(ms);
	for (size_t i = 0; i < ms->n; i++) {
		struct metric *m = &ms->m[i];
		ms->cur = m;
		for (size_t k = 0; k < m->nref; k++)
			m->ref[k].state = 0;
		ms->in_threshold = false;
		if (hwc__mexpr_eval(m->expr, &env, &m->value))
			m->value = NAN;
		double th = NAN;
		ms->in_threshold = true;
		if (m->threshold && !isnan(m->value) && hwc__mexpr_eval(m->threshold, &env, &th))
			th = NAN;
		m->over = isnan(th) ? -1 : fpclassify(th) != FP_ZERO;
	}
	hwc__clear_error();
	ms->cur = NULL;
	ms->counts = NULL;
}

HWC_EXPORT double hwc_metrics_value(const hwc_metrics *ms, size_t i, int *over)
{
	if (over)
		*over = i < ms->n ? ms->m[i].over : -1;
	return i < ms->n ? ms->m[i].value * ms->m[i].info.scale : NAN;
}

struct sys_metrics {
	int (*fn)(const struct hwc_metric_info *m, void *arg);
	void *arg;
};

/* This machine's system metrics (perf's sys/ tables), as hwc_metrics_new
 * takes them. */
static int walk_sys_metrics(const struct hwc__pe_table *t, void *arg)
{
	struct sys_metrics *sm = arg;
	int err = 0;
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct hwc__pe_record *r = &t->rec[i];
		struct hwc_metric_info info;
		if (!r->metric || !hwc__pe_get(r, "MetricExpr") || !hwc__json_sys_present(r))
			continue;
		info_of(r, &info);
		err = sm->fn(&info, sm->arg);
	}
	return err;
}

HWC_EXPORT int hwc_metrics_walk(const char *model,
				int (*fn)(const struct hwc_metric_info *m, void *arg), void *arg)
{
	hwc__clear_error();
	const struct hwc__pe_table *t;
	int err = hwc__pe_table(model, &t);
	if (err)
		return err;
	/* then the architecture's own the table lacks, as hwc_metrics_new takes them */
	const struct hwc__pe_table *arch = NULL;
	if (hwc__pe_arch_table(t->arch, &arch))
		hwc__clear_error();
	for (const struct hwc__pe_table *w = t; w; w = w == t ? arch : NULL) {
		for (size_t i = 0; i < w->n; i++) {
			const struct hwc__pe_record *r = &w->rec[i];
			if (!r->metric || !hwc__pe_get(r, "MetricExpr") ||
			    (w != t && hwc__pe_find(t, r->name, true)))
				continue;
			struct hwc_metric_info info;
			info_of(r, &info);
			if ((err = fn(&info, arg)))
				return err;
		}
	}
	struct sys_metrics sm = {fn, arg};
	return model ? 0 : hwc__pe_sys_walk(walk_sys_metrics, &sm);
}
