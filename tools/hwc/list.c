/* hwc list: every event this machine (or any libpfm4 model) knows, with its
 * description, unit masks and modifiers, and whether it can be opened here. */
#include "hwc.h"
#include "json.h"

#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hwc list [-v] [--json] [--pmu NAME] [PATTERN]\n"
		"       hwc list --metrics [-v] [--json] [PATTERN]\n"
		"       hwc list -v SPEC\n"
		"       hwc list --pmu help\n"
		"\n"
		"List the events this machine knows, with their descriptions, unit masks and\n"
		"modifiers, and whether each can be opened here.\n"
		"\n"
		"  PATTERN        only events whose name or spec matches: a glob (*, ?, [...])\n"
		"                 or, without glob characters, a substring; case-insensitive\n"
		"  --pmu NAME     only the events of NAME: generic, cache, software, preset,\n"
		"                 tracepoint, a sysfs PMU (msr), any libpfm4 model (skl,\n"
		"                 amd64_fam19h_zen4) or JSON model (amdzen5, graniterapids),\n"
		"                 present on this machine or not; json: this CPU's JSON model\n"
		"  --pmu help     list the event sources, sysfs PMUs, libpfm4 and JSON models\n"
		"  -v, --verbose  also show each event's encoding (type, config, config1,\n"
		"                 config2, exclude bits), its origin and every modifier; with\n"
		"                 a SPEC that resolves (cycles:u, skl::INST_RETIRED:ANY_P),\n"
		"                 show what that spec would open\n"
		"  --metrics      the metrics of perf's JSON tables for this CPU (hwc stat -M),\n"
		"                 with their groups; -v adds each formula and threshold\n"
		"  --json         machine-readable output (schema hwc-list/1; see hwc-list(1))\n"
		"  -h, --help     this help\n");
}

struct opts {
	const char *pmu;
	const char *pattern;
	bool verbose, json, metrics;
};

/* ------------------------------------------------------------- helpers */

static const char *type_name(uint32_t type)
{
	switch (type) {
	case PERF_TYPE_HARDWARE: return "hardware";
	case PERF_TYPE_SOFTWARE: return "software";
	case PERF_TYPE_TRACEPOINT: return "tracepoint";
	case PERF_TYPE_HW_CACHE: return "hw_cache";
	case PERF_TYPE_RAW: return "raw";
	case PERF_TYPE_BREAKPOINT: return "breakpoint";
	default: return "dynamic PMU";
	}
}

static const char *open_word(int status, bool user_only)
{
	return status ? "no" : user_only ? "user" : "yes";
}

static void print_encoding_json(struct json *j, const struct hwc_event *e)
{
	const struct perf_event_attr *a = &e->attr;
	json_object(j, "encoding");
	json_string(j, "pmu", e->pmu);
	json_string(j, "source", hwc_source_name(e->source));
	json_uint(j, "type", a->type);
	json_hex(j, "config", a->config);
	json_hex(j, "config1", a->config1);
	json_hex(j, "config2", a->config2);
	json_bool(j, "exclude_user", a->exclude_user);
	json_bool(j, "exclude_kernel", a->exclude_kernel);
	json_bool(j, "exclude_hv", a->exclude_hv);
	json_bool(j, "exclude_idle", a->exclude_idle);
	json_bool(j, "exclude_host", a->exclude_host);
	json_bool(j, "exclude_guest", a->exclude_guest);
	json_uint(j, "precise_ip", a->precise_ip);
	json_string(j, "origin", e->origin);
	json_object_end(j);
}

static void print_encoding_text(const struct hwc_event *e, const char *indent)
{
	const struct perf_event_attr *a = &e->attr;
	printf("%stype %u (%s)  config %#" PRIx64 "  config1 %#" PRIx64 "  config2 %#" PRIx64 "\n",
	       indent, a->type, type_name(a->type), (uint64_t)a->config, (uint64_t)a->config1,
	       (uint64_t)a->config2);
	printf("%sexclude_user %u  exclude_kernel %u  exclude_hv %u  exclude_idle %u  "
	       "exclude_host %u  exclude_guest %u  precise_ip %u\n",
	       indent, a->exclude_user, a->exclude_kernel, a->exclude_hv, a->exclude_idle,
	       a->exclude_host, a->exclude_guest, a->precise_ip);
	printf("%sorigin: %s\n", indent, e->origin);
}

/* Resolve SPEC for -v; returns the list (caller frees) or NULL with the error in *WHY. */
static hwc_evlist *resolve(const char *spec, char *why, size_t size)
{
	hwc_evlist *l;
	if (hwc_evlist_new(&l)) {
		snprintf(why, size, "%s", hwc_errdetail());
		return NULL;
	}
	if (hwc_evlist_add(l, spec)) {
		snprintf(why, size, "%s", hwc_errdetail());
		hwc_evlist_free(l);
		return NULL;
	}
	return l;
}

/* ------------------------------------------------------------- text */

/* Why events of one section cannot be opened: one line per distinct errno. */
struct reason {
	int status;
	size_t count;
	char first[128];
	char why[1400];
};

struct text {
	const struct opts *o;
	size_t shown;
	char section[128];
	struct reason reasons[8];
	size_t nreasons;
};

static void flush_reasons(struct text *t)
{
	if (!t->nreasons)
		return;
	printf("  cannot be opened here:\n");
	for (size_t i = 0; i < t->nreasons; i++) {
		struct reason *r = &t->reasons[i];
		if (r->count > 1)
			printf("    %s and %zu more: %s\n", r->first, r->count - 1, r->why);
		else
			printf("    %s: %s\n", r->first, r->why);
	}
	t->nreasons = 0;
}

static void note_reason(struct text *t, const struct hwc_event_info *ev)
{
	for (size_t i = 0; i < t->nreasons; i++)
		if (t->reasons[i].status == ev->status) {
			t->reasons[i].count++;
			return;
		}
	if (t->nreasons == sizeof(t->reasons) / sizeof(t->reasons[0]))
		return;
	struct reason *r = &t->reasons[t->nreasons++];
	r->status = ev->status;
	r->count = 1;
	snprintf(r->first, sizeof(r->first), "%s", ev->name);
	snprintf(r->why, sizeof(r->why), "%s", ev->why_not);
}

struct model_query {
	const char *name;
	char desc[128];
	bool present;
};

static int find_model(const struct hwc_model_info *m, void *arg)
{
	struct model_query *q = arg;
	if (strcmp(m->name, q->name) != 0)
		return 0;
	snprintf(q->desc, sizeof(q->desc), "%s", m->desc);
	q->present = m->present;
	return 1;
}

static void section_header(const struct hwc_event_info *ev)
{
	switch (ev->source) {
	case HWC_SRC_GENERIC:
		printf("generic hardware events (perf's names for the core PMU):\n");
		return;
	case HWC_SRC_CACHE:
		printf("generic cache events (perf's names for the core PMU):\n");
		return;
	case HWC_SRC_SOFTWARE:
		printf("software events (counted by the kernel):\n");
		return;
	case HWC_SRC_PRESET:
		printf("presets (PAPI and illumos generic names) and what they stand for here:\n");
		return;
	case HWC_SRC_TRACEPOINT:
		printf("tracepoints (tracefs):\n");
		return;
	case HWC_SRC_PMU:
		printf("%s (kernel PMU in sysfs; use EVENT or %s/EVENT/):\n", ev->pmu, ev->pmu);
		return;
	case HWC_SRC_JSON:
		printf("%s (perf's JSON event table; use %.*s::EVENT[:MOD]):\n", ev->pmu,
		       (int)strcspn(ev->spec, ":"), ev->spec);
		return;
	default:
		break;
	}
	struct model_query q = {.name = ev->pmu};
	hwc_models_walk(find_model, &q);
	printf("%s: %s (libpfm4 model, %s; use %s::EVENT[:UMASK][:MOD=VALUE]):\n", ev->pmu, q.desc,
	       q.present ? "this machine's CPU" : "not this machine's CPU", ev->pmu);
}

static void print_attrs(const struct hwc_event_info *ev, bool verbose)
{
	bool any_mod = false;
	for (size_t i = 0; i < ev->nattrs; i++) {
		const struct hwc_event_attr_info *a = &ev->attrs[i];
		if (a->kind != HWC_ATTR_UMASK) {
			any_mod = true;
			continue;
		}
		printf("      :%-32s %s%s\n", a->name, a->is_default ? "[default] " : "", a->desc);
	}
	if (!any_mod)
		return;
	if (verbose) {
		for (size_t i = 0; i < ev->nattrs; i++) {
			const struct hwc_event_attr_info *a = &ev->attrs[i];
			if (a->kind == HWC_ATTR_UMASK)
				continue;
			char name[64];
			snprintf(name, sizeof(name), "%s%s", a->name, a->kind == HWC_ATTR_VALUE ? "=N" : "");
			printf("      :%-32s modifier: %s\n", name, a->desc);
		}
		return;
	}
	printf("      modifiers:");
	for (size_t i = 0; i < ev->nattrs; i++) {
		const struct hwc_event_attr_info *a = &ev->attrs[i];
		if (a->kind != HWC_ATTR_UMASK)
			printf(" %s%s", a->name, a->kind == HWC_ATTR_VALUE ? "=N" : "");
	}
	printf("\n");
}

static int text_event(const struct hwc_event_info *ev, void *arg)
{
	struct text *t = arg;
	char section[128];
	snprintf(section, sizeof(section), "%d/%s", (int)ev->source, ev->pmu);
	if (strcmp(section, t->section) != 0) {
		flush_reasons(t);
		if (t->shown)
			printf("\n");
		section_header(ev);
		snprintf(t->section, sizeof(t->section), "%s", section);
	}
	t->shown++;
	char desc[1024];
	if (ev->source == HWC_SRC_PRESET)
		snprintf(desc, sizeof(desc), "%s%s%s%s", ev->desc, *ev->desc ? " " : "",
			 ev->equiv ? "= " : "[no mapping here]", ev->equiv ? ev->equiv : "");
	else
		snprintf(desc, sizeof(desc), "%s", ev->desc);
	if (*desc)
		printf("  %-40s %-4s  %s\n", ev->name, open_word(ev->status, ev->user_only), desc);
	else
		printf("  %-40s %s\n", ev->name, open_word(ev->status, ev->user_only));
	print_attrs(ev, t->o->verbose);
	if (ev->status && !t->o->verbose)
		note_reason(t, ev);
	if (t->o->verbose) {
		char why[1024];
		hwc_evlist *l = resolve(ev->spec, why, sizeof(why));
		printf("      spec: %s\n", ev->spec);
		if (l) {
			for (size_t i = 0; i < hwc_evlist_size(l); i++)
				print_encoding_text(hwc_evlist_event(l, i), "      ");
			hwc_evlist_free(l);
		} else {
			printf("      encoding: %s\n", why);
		}
		if (ev->status)
			printf("      cannot be opened here: %s\n", ev->why_not);
		else if (ev->user_only)
			printf("      opens counting user space only (perf_event_paranoid)\n");
	}
	return 0;
}

/* ------------------------------------------------------------- JSON */

struct jctx {
	const struct opts *o;
	struct json *j;
	size_t shown;
};

static int json_event(const struct hwc_event_info *ev, void *arg)
{
	struct jctx *c = arg;
	struct json *j = c->j;
	c->shown++;
	json_object(j, NULL);
	json_string(j, "name", ev->name);
	json_string(j, "spec", ev->spec);
	json_string(j, "pmu", ev->pmu);
	json_string(j, "source", hwc_source_name(ev->source));
	json_string(j, "desc", ev->desc);
	if (ev->source == HWC_SRC_PRESET)
		json_string(j, "equiv", ev->equiv);
	json_hex(j, "code", ev->code);
	json_array(j, "attrs");
	for (size_t i = 0; i < ev->nattrs; i++) {
		const struct hwc_event_attr_info *a = &ev->attrs[i];
		static const char *const kinds[] = {"umask", "flag", "value"};
		json_object(j, NULL);
		json_string(j, "name", a->name);
		json_string(j, "desc", a->desc);
		json_string(j, "kind", kinds[a->kind]);
		json_bool(j, "default", a->is_default);
		json_hex(j, "code", a->code);
		json_object_end(j);
	}
	json_array_end(j);
	json_bool(j, "open", ev->status == 0);
	json_bool(j, "user_only", ev->user_only);
	json_string(j, "reason", ev->status ? ev->why_not : NULL);
	if (c->o->verbose) {
		char why[1024];
		hwc_evlist *l = resolve(ev->spec, why, sizeof(why));
		if (l && hwc_evlist_size(l) == 1) {
			print_encoding_json(j, hwc_evlist_event(l, 0));
		} else {
			json_object(j, "encoding");
			json_string(j, "error", l ? "more than one event" : why);
			json_object_end(j);
		}
		hwc_evlist_free(l);
	}
	json_object_end(j);
	return 0;
}

/* ------------------------------------------------------------- -v SPEC */

static int show_spec(const struct opts *o, hwc_evlist *l)
{
	bool user_only = false;
	int status = hwc_event_probe(o->pattern, &user_only);
	char why[1024];
	snprintf(why, sizeof(why), "%s", status ? hwc_errdetail() : "");
	if (o->json) {
		struct json j;
		json_init(&j, stdout);
		json_object(&j, NULL);
		json_string(&j, "schema", "hwc-list/1");
		json_string(&j, "spec", o->pattern);
		json_bool(&j, "open", status == 0);
		json_bool(&j, "user_only", user_only);
		json_string(&j, "reason", status ? why : NULL);
		json_array(&j, "events");
		for (size_t i = 0; i < hwc_evlist_size(l); i++) {
			const struct hwc_event *e = hwc_evlist_event(l, i);
			json_object(&j, NULL);
			json_string(&j, "name", e->name);
			json_int(&j, "group", e->group);
			json_bool(&j, "leader", e->leader);
			json_string(&j, "unit", e->unit);
			json_double(&j, "scale", e->scale);
			print_encoding_json(&j, e);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
		json_end(&j);
		return 0;
	}
	for (size_t i = 0; i < hwc_evlist_size(l); i++) {
		const struct hwc_event *e = hwc_evlist_event(l, i);
		printf("%s\n", e->name);
		printf("  pmu %s  source %s  group %d%s", e->pmu, hwc_source_name(e->source), e->group,
		       e->leader ? " (leader)" : "");
		if (*e->unit)
			printf("  unit %s  scale %g", e->unit, e->scale);
		printf("\n");
		print_encoding_text(e, "  ");
	}
	if (status)
		printf("cannot be opened here: %s\n", why);
	else
		printf("can be opened here%s\n",
		       user_only ? ", counting user space only (perf_event_paranoid)" : "");
	return 0;
}

/* ------------------------------------------------------------- --pmu help */

struct help_ctx {
	struct json *j;
};

static int help_model(const struct hwc_model_info *m, void *arg)
{
	struct help_ctx *h = arg;
	const char *kind = m->core ? "core" : m->os_tables ? "perf" : "uncore/other";
	if (h->j) {
		json_object(h->j, NULL);
		json_string(h->j, "name", m->name);
		json_string(h->j, "desc", m->desc);
		json_bool(h->j, "present", m->present);
		json_bool(h->j, "core", m->core);
		json_int(h->j, "events", m->nevents);
		json_int(h->j, "counters", m->ncounters);
		json_int(h->j, "fixed", m->nfixed);
		json_object_end(h->j);
	} else {
		char mark = m->present && !m->os_tables ? '*' : ' ';
		printf("  %c %-24s %-13s %5d event%s  %s\n", mark, m->name, kind, m->nevents,
		       m->nevents == 1 ? " " : "s", m->desc);
	}
	return 0;
}

static int help_json_model(const struct hwc_model_info *m, void *arg)
{
	struct help_ctx *h = arg;
	if (h->j) {
		json_object(h->j, NULL);
		json_string(h->j, "name", m->name);
		json_string(h->j, "desc", m->desc);
		json_bool(h->j, "present", m->present);
		json_object_end(h->j);
	} else {
		printf("  %c %-24s %-13s %s\n", m->present ? '*' : ' ', m->name, "json", m->desc);
	}
	return 0;
}

static int help_pmu(const struct hwc_pmu_info *p, void *arg)
{
	struct help_ctx *h = arg;
	if (h->j) {
		json_object(h->j, NULL);
		json_string(h->j, "name", p->name);
		json_uint(h->j, "type", p->type);
		json_bool(h->j, "core", p->core);
		json_uint(h->j, "events", p->nevents);
		json_object_end(h->j);
	} else {
		printf("    %-24s type %-4u %4zu event%s\n", p->name, p->type, p->nevents,
		       p->nevents == 1 ? "" : "s");
	}
	return 0;
}

static const struct {
	const char *name, *desc;
} categories[] = {
	{"generic", "perf's generic hardware events (cycles, instructions, ...)"},
	{"cache", "perf's generic cache events (L1-dcache-load-misses, ...)"},
	{"software", "Linux software events (task-clock, page-faults, ...)"},
	{"preset", "PAPI presets and illumos generic events, mapped onto this CPU"},
	{"tracepoint", "tracefs tracepoints (subsystem:event)"},
};

static int pmu_help(const struct opts *o)
{
	struct json j;
	struct help_ctx h = {o->json ? &j : NULL};
	int err;
	if (o->json) {
		json_init(&j, stdout);
		json_object(&j, NULL);
		json_string(&j, "schema", "hwc-list-pmus/1");
		json_array(&j, "categories");
		for (size_t i = 0; i < sizeof(categories) / sizeof(categories[0]); i++) {
			json_object(&j, NULL);
			json_string(&j, "name", categories[i].name);
			json_string(&j, "desc", categories[i].desc);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_array(&j, "pmus");
		err = hwc_pmus_walk(help_pmu, &h);
		json_array_end(&j);
		json_array(&j, "models");
		if (!err)
			err = hwc_models_walk(help_model, &h);
		json_array_end(&j);
		json_array(&j, "json_models");
		if (!err)
			err = hwc_json_models_walk(help_json_model, &h);
		json_array_end(&j);
		json_object_end(&j);
		json_end(&j);
	} else {
		printf("Event sources for `hwc list --pmu NAME`:\n\n  categories:\n");
		for (size_t i = 0; i < sizeof(categories) / sizeof(categories[0]); i++)
			printf("    %-24s %s\n", categories[i].name, categories[i].desc);
		printf("\n  PMUs the kernel exposes (sysfs):\n");
		err = hwc_pmus_walk(help_pmu, &h);
		printf("\n  libpfm4 models (* = this machine's CPU; model::EVENT encodes for any):\n");
		if (!err)
			err = hwc_models_walk(help_model, &h);
		printf("\n  JSON models (perf's event tables; * = this machine's CPU; "
		       "model::EVENT encodes for any):\n");
		if (!err)
			err = hwc_json_models_walk(help_json_model, &h);
	}
	if (err) {
		fprintf(stderr, "hwc list: %s\n", hwc_errdetail());
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------- --metrics */

struct mctx {
	const struct opts *o;
	struct json *j;
	size_t shown;
};

/* PATTERN (a glob, or a substring without glob characters, any case)
 * against the metric's name or one of its groups. */
static bool metric_matches(const char *pattern, const struct hwc_metric_info *m)
{
	if (!pattern)
		return true;
	if (!strpbrk(pattern, "*?["))
		return strcasestr(m->name, pattern) || strcasestr(m->groups, pattern);
	if (!fnmatch(pattern, m->name, FNM_CASEFOLD))
		return true;
	char *groups = strdup(m->groups), *save = NULL;
	bool yes = false;
	for (char *g = groups ? strtok_r(groups, ";", &save) : NULL; g && !yes;
	     g = strtok_r(NULL, ";", &save))
		yes = !fnmatch(pattern, g, FNM_CASEFOLD);
	free(groups);
	return yes;
}

static int one_metric(const struct hwc_metric_info *m, void *arg)
{
	struct mctx *mc = arg;
	if (!metric_matches(mc->o->pattern, m))
		return 0;
	mc->shown++;
	if (mc->j) {
		json_object(mc->j, NULL);
		json_string(mc->j, "name", m->name);
		json_string(mc->j, "groups", m->groups);
		json_string(mc->j, "desc", m->desc);
		json_string(mc->j, "expr", m->expr);
		json_string(mc->j, "threshold", m->threshold);
		json_string(mc->j, "unit", m->unit);
		json_double(mc->j, "scale", m->scale);
		json_object_end(mc->j);
		return 0;
	}
	printf("%-40s [%s]\n", m->name, m->groups[0] ? m->groups : "no group");
	for (const char *p = m->desc; *p;) { /* each line indented (sbsa.json's have two) */
		size_t n = strcspn(p, "\n");
		printf("    %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	if (mc->o->verbose) {
		printf("    expr: %s\n", m->expr);
		if (m->threshold[0])
			printf("    threshold: %s\n", m->threshold);
		if (m->unit[0])
			printf("    unit: %g %s\n", m->scale, m->unit);
	}
	return 0;
}

static int list_metrics(const struct opts *o)
{
	struct json j;
	struct mctx mc = {o, o->json ? &j : NULL, 0};
	if (o->json) {
		json_init(&j, stdout);
		json_object(&j, NULL);
		json_string(&j, "schema", "hwc-list/1");
		json_string(&j, "pattern", o->pattern);
		json_array(&j, "metrics");
	}
	int err = hwc_metrics_walk(NULL, one_metric, &mc);
	if (o->json) {
		json_array_end(&j);
		json_object_end(&j);
		json_end(&j);
	}
	if (err) {
		fprintf(stderr, "hwc list: %s\n", hwc_errdetail());
		return 1;
	}
	if (!mc.shown && o->pattern) {
		fprintf(stderr, "hwc list: no metric matches '%s'\n", o->pattern);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------- main */

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"pmu", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},
		{"verbose", no_argument, NULL, 'v'},
		{"metrics", no_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct opts o = {0};
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': o.pmu = optarg; break;
		case 'j': o.json = true; break;
		case 'v': o.verbose = true; break;
		case 'M': o.metrics = true; break;
		case 'h': usage(stdout); return 0;
		default:
			if (optopt == 'p')
				fprintf(stderr, "hwc list: --pmu needs a name (`hwc list --pmu help` lists them)\n");
			else
				fprintf(stderr, "hwc list: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "hwc list: one pattern at most, got '%s' and '%s'\n", argv[optind],
			argv[optind + 1]);
		return 2;
	}
	o.pattern = optind < argc ? argv[optind] : NULL;
	if (o.pattern && !*o.pattern) {
		fprintf(stderr, "hwc list: empty pattern\n");
		return 2;
	}
	if (o.pmu && !*o.pmu) {
		fprintf(stderr, "hwc list: --pmu needs a name (`hwc list --pmu help` lists them)\n");
		return 2;
	}
	if (o.metrics && o.pmu) {
		fprintf(stderr, "hwc list: --metrics lists this CPU's metrics: no --pmu\n");
		return 2;
	}
	if (o.metrics)
		return list_metrics(&o);
	if (o.pmu && strcmp(o.pmu, "help") == 0)
		return pmu_help(&o);

	/* -v SPEC: what a spec that resolves would open. */
	char spec_error[1024] = "";
	if (o.verbose && o.pattern && !o.pmu && !strpbrk(o.pattern, "*?[")) {
		hwc_evlist *l = resolve(o.pattern, spec_error, sizeof(spec_error));
		if (l) {
			int r = show_spec(&o, l);
			hwc_evlist_free(l);
			return r;
		}
	}

	int err;
	size_t shown;
	if (o.json) {
		/* Built in memory: on an error nothing half-written reaches stdout. */
		char *doc = NULL;
		size_t doc_len = 0;
		FILE *mem = open_memstream(&doc, &doc_len);
		if (!mem) {
			perror("hwc list");
			return 1;
		}
		struct json j;
		struct jctx jc = {&o, &j, 0};
		json_init(&j, mem);
		json_object(&j, NULL);
		json_string(&j, "schema", "hwc-list/1");
		json_string(&j, "pmu", o.pmu);
		json_string(&j, "pattern", o.pattern);
		json_array(&j, "events");
		err = hwc_events_walk(o.pmu, o.pattern, HWC_WALK_PROBE, json_event, &jc);
		json_array_end(&j);
		json_object_end(&j);
		json_end(&j);
		fclose(mem);
		if (!err && (jc.shown || !o.pattern))
			fwrite(doc, 1, doc_len, stdout);
		free(doc);
		shown = jc.shown;
	} else {
		struct text t = {.o = &o};
		err = hwc_events_walk(o.pmu, o.pattern, HWC_WALK_PROBE, text_event, &t);
		flush_reasons(&t);
		shown = t.shown;
	}
	if (err) {
		fprintf(stderr, "hwc list: %s\n", hwc_errdetail());
		return 1;
	}
	if (!shown && o.pattern) {
		if (spec_error[0])
			fprintf(stderr, "hwc list: no event matches '%s', and as a spec: %s\n", o.pattern,
				spec_error);
		else
			fprintf(stderr, "hwc list: no event matches '%s'%s%s\n", o.pattern,
				o.pmu ? " in " : "", o.pmu ? o.pmu : "");
		return 1;
	}
	return 0;
}
