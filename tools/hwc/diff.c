/* hwc diff: per-function change between two recordings (hwc's or perf's),
 * each aggregated as hwc report does (tools/profile), shown as perf diff
 * shows it; with --stat, the change of each event between two `hwc stat
 * -r N --json` results (diff_stat.c). */
#include "cli.h"
#include "diff.h"
#include "hwc.h"
#include "json.h"
#include "out.h"
#include "profile.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage_text[] =
	"usage: hwc diff [options] [BASELINE NEW]\n"
	"       hwc diff --stat [options] BASELINE.json NEW.json\n"
	"Compare two recordings made by `hwc record` or `perf record` (default\n"
	"hwc.data.old and hwc.data, else perf.data.old and perf.data): each function's\n"
	"share of the event's period in both, and the change, as perf diff shows it.\n"
	"With --stat, compare two `hwc stat -r N --json` results: each event's change\n"
	"with its confidence interval and whether it is significant (Welch's t-test).\n"
	"\n"
	"  --sort=ORDER       delta-abs (largest change either way first, the default),\n"
	"                     delta (largest increase first), baseline, new\n"
	"  --event=NAME       the event of multi-event recordings (default: the first\n"
	"                     sampled event of BASELINE)\n"
	"  --stat             compare `hwc stat -r N --json` results instead\n"
	"  --confidence=P     --stat: the confidence level in percent (50 to 99.99,\n"
	"                     default 95)\n"
	"  --json             one JSON document (schema hwc-diff/1, or hwc-diff-stat/1)\n"
	"  -h, --help         show this help\n"
	"See hwc-diff(1).\n";

enum order { ORDER_DELTA_ABS, ORDER_DELTA, ORDER_BASELINE, ORDER_NEW };

struct options {
	enum order order;
	const char *event;
	bool stat, json;
	double confidence; /* percent */
	const char *files[2];
};

static int parse_opts(int argc, char **argv, struct options *o)
{
	enum { O_SORT = 256, O_EVENT, O_STAT, O_CONF, O_JSON };
	static const struct option longopts[] = {
		{"sort", required_argument, NULL, O_SORT}, {"event", required_argument, NULL, O_EVENT},
		{"stat", no_argument, NULL, O_STAT},       {"confidence", required_argument, NULL, O_CONF},
		{"json", no_argument, NULL, O_JSON},       {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const char *const orders[] = {"delta-abs", "delta", "baseline", "new"};
	o->confidence = 95;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(usage_text, stdout); exit(0);
		case O_SORT: {
			size_t i = 0;
			while (i < 4 && strcmp(optarg, orders[i]) != 0)
				i++;
			if (i == 4)
				return cli_usage_error("diff", "--sort: unknown order '%s' (delta-abs, "
							       "delta, baseline, new)", optarg);
			o->order = (enum order)i;
			break;
		}
		case O_EVENT: o->event = optarg; break;
		case O_STAT: o->stat = true; break;
		case O_CONF:
			if (!cli_parse_double(optarg, 50, 99.99, &o->confidence))
				return cli_usage_error("diff", "--confidence: '%s' is not a percentage "
							       "from 50 to 99.99", optarg);
			break;
		case O_JSON: o->json = true; break;
		default:
			fprintf(stderr, "Try `hwc diff --help`.\n");
			return 2;
		}
	}
	int nfiles = argc - optind;
	if (nfiles != 2 && (nfiles != 0 || o->stat))
		return cli_usage_error("diff", "%s", o->stat ? "--stat compares two files: BASELINE.json NEW.json"
							  : "give two recordings, BASELINE and NEW, or none");
	if (o->stat && o->event)
		return cli_usage_error("diff", "%s", "--event chooses an event of recordings; --stat "
						     "compares every event");
	if (!o->stat && o->confidence != 95)
		return cli_usage_error("diff", "%s", "--confidence goes with --stat");
	if (nfiles == 2) {
		o->files[0] = argv[optind];
		o->files[1] = argv[optind + 1];
	} else {
		/* hwc record keeps the previous recording as FILE.old, as perf does. */
		struct stat st;
		bool hwc = lstat("hwc.data", &st) == 0;
		o->files[0] = hwc ? "hwc.data.old" : "perf.data.old";
		o->files[1] = hwc ? "hwc.data" : "perf.data";
	}
	return -1;
}

/* ------------------------------------------------------------ profiles */

/* A function of either recording, matched by DSO base name and name. */
struct dfunc {
	struct rp_link link; /* first */
	const char *dso;     /* base name */
	char *name;
	bool kernel;
	uint64_t period[2], samples[2];
	double share[2], delta; /* percent of each recording's period */
};

static uint64_t dfunc_hash(const void *entry)
{
	const struct dfunc *d = entry;
	return rp_str_hash(d->dso) * 31 ^ rp_str_hash(d->name);
}

static bool same_dfunc(const void *entry, const void *key)
{
	const struct dfunc *d = entry, *k = key;
	return strcmp(d->dso, k->dso) == 0 && strcmp(d->name, k->name) == 0;
}

/* Add recording SIDE's functions (their self period) to TABLE. */
static int add_functions(struct rp_table *table, const struct rp_report *r, int side)
{
	for (const struct rp_func *f = NULL; (f = rp_table_next(&r->funcs, f));) {
		if (!f->self_samples)
			continue;
		char name[1024];
		rp_func_name(f, name, sizeof(name));
		struct dfunc key = {.dso = rp_dso_base(f->sym->dso), .name = name};
		uint64_t h = dfunc_hash(&key);
		struct dfunc *d = rp_table_find(table, h, same_dfunc, &key);
		if (!d) {
			d = rp_table_new(table, sizeof(*d), h, dfunc_hash);
			d->dso = key.dso;
			d->name = strdup(name);
			d->kernel = f->sym->kernel;
			if (!d->name) {
				fprintf(stderr, "hwc diff: out of memory\n");
				return -1;
			}
		}
		d->period[side] += f->self;
		d->samples[side] += f->self_samples;
	}
	return 0;
}

static enum order g_order;

static int cmp_dfuncs(const void *a, const void *b)
{
	const struct dfunc *x = *(struct dfunc *const *)a, *y = *(struct dfunc *const *)b;
	double vx, vy;
	switch (g_order) {
	case ORDER_DELTA: vx = x->delta, vy = y->delta; break;
	case ORDER_BASELINE: vx = x->share[0], vy = y->share[0]; break;
	case ORDER_NEW: vx = x->share[1], vy = y->share[1]; break;
	default: vx = fabs(x->delta), vy = fabs(y->delta); break;
	}
	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->share[0] != y->share[0])
		return x->share[0] > y->share[0] ? -1 : 1;
	int c = strcmp(x->dso, y->dso);
	return c ? c : strcmp(x->name, y->name);
}

static void free_dfunc(void *entry)
{
	free(((struct dfunc *)entry)->name);
}

static void dots(int n)
{
	while (n-- > 0)
		putchar('.');
}

/* perf diff's default layout: its header, columns and widths. */
static void print_text(const struct options *o, const struct rp_report *base, struct dfunc **v,
		       size_t n)
{
	const char *delta_title = o->order == ORDER_DELTA ? "Delta" : "Delta Abs";
	int wdelta = o->order == ORDER_DELTA ? 7 : 9; /* perf's widths: "+12.34%" fits both */
	int wdso = (int)strlen("Shared Object"), wsym = (int)strlen("Symbol");
	for (size_t i = 0; i < n; i++) {
		int d = (int)strlen(v[i]->dso), s = 4 + (int)strlen(v[i]->name);
		wdso = d > wdso ? d : wdso;
		wsym = s > wsym ? s : wsym;
	}
	printf("# Data files:\n#  [0] %s (Baseline)\n#  [1] %s\n#\n", o->files[0], o->files[1]);
	printf("# Event '%s'\n#\n", base->attr ? base->attr->name : "?");
	printf("# Baseline  %*s  %-*s  %-*s\n# ........  ", wdelta, delta_title, wdso, "Shared Object",
	       wsym, "Symbol");
	dots(wdelta);
	fputs("  ", stdout);
	dots(wdso);
	fputs("  ", stdout);
	dots(wsym);
	fputs("\n#\n", stdout);
	for (size_t i = 0; i < n; i++) {
		const struct dfunc *d = v[i];
		char share[16] = "", delta[16];
		if (d->samples[0])
			snprintf(share, sizeof(share), "%7.2f%%", d->share[0]);
		snprintf(delta, sizeof(delta), "%+.2f%%", d->delta);
		printf("  %8s  %*s  %-*s  [%c] %s\n", share, wdelta, delta, wdso, d->dso,
		       d->kernel ? 'k' : '.', d->name);
	}
}

static void json_side(struct json *j, const char *key, const char *file, const struct rp_report *r)
{
	json_object(j, key);
	json_string(j, "file", file);
	json_string(j, "event", r->attr ? r->attr->name : NULL);
	json_uint(j, "samples", r->samples);
	json_uint(j, "period", r->period);
	json_uint(j, "lost", r->lost);
	json_object_end(j);
}

static void print_json(const struct options *o, const struct rp_report *r, struct dfunc **v, size_t n)
{
	static const char *const orders[] = {"delta-abs", "delta", "baseline", "new"};
	struct json j;
	json_init(&j, stdout);
	json_object(&j, NULL);
	json_string(&j, "schema", "hwc-diff/1");
	json_side(&j, "baseline", o->files[0], &r[0]);
	json_side(&j, "new", o->files[1], &r[1]);
	json_string(&j, "sort", orders[o->order]);
	json_array(&j, "functions");
	for (size_t i = 0; i < n; i++) {
		const struct dfunc *d = v[i];
		json_object(&j, NULL);
		json_string(&j, "dso", d->dso);
		json_string(&j, "symbol", d->name);
		json_bool(&j, "kernel", d->kernel);
		json_double(&j, "baseline", d->share[0]);
		json_double(&j, "new", d->share[1]);
		json_double(&j, "delta", d->delta);
		json_uint(&j, "baseline_period", d->period[0]);
		json_uint(&j, "new_period", d->period[1]);
		json_uint(&j, "baseline_samples", d->samples[0]);
		json_uint(&j, "new_samples", d->samples[1]);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_end(&j);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int diff_profiles(const struct options *o)
{
	struct rp_report r[2] = {{.o = {.prog = "hwc diff", .keys = K_DSO | K_SYM, .no_children = true}},
				 {.o = {.prog = "hwc diff", .keys = K_DSO | K_SYM, .no_children = true}}};
	struct rp_table table = {0};
	struct dfunc **v = NULL;
	int rc = 1;
	cli_raise_fd_limit(); /* libdw keeps each DSO's file open */
	r[0].o.input = o->files[0];
	r[0].o.event = o->event;
	if (rp_load(&r[0]))
		goto out;
	/* The new recording's event is the baseline's, by name. */
	r[1].o.input = o->files[1];
	r[1].o.event = r[0].attr ? r[0].attr->name : NULL;
	if (rp_load(&r[1]))
		goto out;
	if (add_functions(&table, &r[0], 0) || add_functions(&table, &r[1], 1))
		goto out;
	for (struct dfunc *d = NULL; (d = rp_table_next(&table, d));) {
		d->share[0] = share(d->period[0], r[0].period);
		d->share[1] = share(d->period[1], r[1].period);
		d->delta = d->share[1] - d->share[0];
	}
	size_t n;
	g_order = o->order;
	v = rp_table_sorted(&table, NULL, NULL, cmp_dfuncs, &n);
	if (!v) {
		fprintf(stderr, "hwc diff: out of memory\n");
		goto out;
	}
	if (o->json)
		print_json(o, r, v, n);
	else
		print_text(o, &r[0], v, n);
	if (out_close(stdout, NULL))
		goto out;
	rc = 0;
out:
	free(v);
	rp_table_free(&table, free_dfunc);
	rp_free(&r[1]);
	rp_free(&r[0]);
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	struct options o = {0};
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.stat)
		return diff_stat(o.files[0], o.files[1], o.confidence / 100, o.json);
	return diff_profiles(&o);
}
