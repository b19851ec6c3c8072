/* hwc diff --stat: each event's change between two `hwc stat -r N --json`
 * results (schema hwc-stat/1), with the
 * confidence interval of the change of its mean and Welch's t-test on
 * the per-run values.  The JSON is read and written with Debian's json-c
 * (whose type json_object is a function of the tool's own writer, json.h,
 * which this file therefore does not use).
 *
 * The t distribution is computed here, not taken from GSL: two small
 * functions (its CDF through the regularized incomplete beta function's
 * continued fraction, DLMF 8.17.22, and the quantile by bisection on it)
 * against a GPL library of ~2 MB that both builds (x86 and arm64) would
 * have to link; tests/diff.py checks them against an independent
 * numerical integration of the t density. */
#include "diff.h"
#include "out.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/lib-names.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ t distribution */

/* libm's functions the t distribution needs, loaded when hwc diff --stat
 * runs: a libm linked into hwc would be loaded by every hwc command, which
 * costs hwc stat ~0.1 ms of its start (issue 13).  (sqrt, round and
 * llround compile to instructions: -fno-math-errno -fno-trapping-math.) */
static struct {
	double (*exp)(double), (*log)(double), (*log1p)(double), (*lgamma)(double);
} libm;

static int load_libm(void)
{
	void *h = dlopen(LIBM_SO, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "hwc diff: cannot load %s: %s\n", LIBM_SO, dlerror());
		return -1;
	}
	/* POSIX's way to store dlsym's answer in a function pointer. */
	static const char *const names[] = {"exp", "log", "log1p", "lgamma"};
	void **fn[] = {(void **)&libm.exp, (void **)&libm.log, (void **)&libm.log1p, (void **)&libm.lgamma};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!(*fn[i] = dlsym(h, names[i]))) {
			fprintf(stderr, "hwc diff: %s has no %s\n", LIBM_SO, names[i]);
			return -1;
		}
	return 0;
}

/* The continued fraction of I_x(a, b) (DLMF 8.17.22), by the modified
 * Lentz method; it converges fast for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	d = 1 / (fabs(d) < tiny ? tiny : d);
	double h = d;
	for (int m = 1; m <= 10000; m++) {
		for (int odd = 0; odd < 2; odd++) {
			double aa = odd ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
					: m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
			d = 1 + aa * d;
			d = 1 / (fabs(d) < tiny ? tiny : d);
			c = 1 + aa / c;
			c = fabs(c) < tiny ? tiny : c;
			h *= d * c;
			if (odd && fabs(d * c - 1) < 1e-15)
				return h;
		}
	}
	return h;
}

/* The regularized incomplete beta function I_x(a, b). */
static double incomplete_beta(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double front = libm.exp(libm.lgamma(a + b) - libm.lgamma(a) - libm.lgamma(b) + a * libm.log(x) +
			      b * libm.log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(a, b, x) / a;
	return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

/* P(|T| >= |t|): the two-sided p-value. */
static double t_two_sided(double t, double df)
{
	return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double diff_t_cdf(double t, double df)
{
	double tail = t_two_sided(t, df) / 2;
	return t > 0 ? 1 - tail : tail;
}

double diff_t_quantile(double p, double df)
{
	if (p < 0.5)
		return -diff_t_quantile(1 - p, df);
	double lo = 0, hi = 1;
	while (diff_t_cdf(hi, df) < p && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;
		if (diff_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* ------------------------------------------------------------ the files */

/* One counter of a result: its per-run values. */
struct counter {
	const char *event, *unit;
	long long cpu;     /* per-cpu results; -1 otherwise */
	double unit_scale; /* value in its unit per count */
	double *x;         /* per-run scaled counts */
	size_t n;
	double mean, sd;   /* in its unit */
};

struct result {
	const char *path;
	json_object *doc;
	const char *aggregation;
	char command[256];
	struct counter *c;
	size_t n;
};

static void free_result(struct result *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->c[i].x);
	free(r->c);
	json_object_put(r->doc);
}

static int bad(const struct result *r, const char *why)
{
	fprintf(stderr, "hwc diff: %s: %s\n", r->path, why);
	return -1;
}

/* The line and column of byte OFFSET of TEXT, for messages. */
static void position(const char *text, size_t offset, int *line, int *column)
{
	*line = 1;
	*column = 1;
	for (size_t i = 0; i < offset && text[i]; i++) {
		if (text[i] == '\n') {
			++*line;
			*column = 1;
		} else {
			++*column;
		}
	}
}

/* Read a regular file only: a FIFO would hang, a directory is no result. */
static json_object *load_json(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		fprintf(stderr, "hwc diff: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	char *text = NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "hwc diff: %s: not a regular file\n", path);
		goto fail;
	}
	if (st.st_size > (1 << 30)) {
		fprintf(stderr, "hwc diff: %s: over 1 GiB: not a `hwc stat --json` result\n", path);
		goto fail;
	}
	size_t size = (size_t)st.st_size, len = 0;
	if (!(text = malloc(size + 1))) {
		fprintf(stderr, "hwc diff: out of memory\n");
		goto fail;
	}
	for (ssize_t n; len < size && (n = read(fd, text + len, size - len)) != 0; len += n > 0 ? (size_t)n : 0)
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "hwc diff: %s: %s\n", path, strerror(errno));
			goto fail;
		}
	text[len] = '\0';
	close(fd);
	fd = -1;
	json_tokener *tok = json_tokener_new();
	if (!tok) {
		fprintf(stderr, "hwc diff: out of memory\n");
		goto fail;
	}
	json_object *doc = json_tokener_parse_ex(tok, text, (int)len + 1);
	enum json_tokener_error err = json_tokener_get_error(tok);
	if (!doc || err != json_tokener_success) {
		int line, column;
		position(text, json_tokener_get_parse_end(tok), &line, &column);
		fprintf(stderr, "hwc diff: %s: not JSON (line %d, column %d: %s); give the output of "
				"`hwc stat -r N --json -o FILE`\n",
			path, line, column, len ? json_tokener_error_desc(err) : "empty file");
		json_object_put(doc);
		doc = NULL;
	}
	json_tokener_free(tok);
	free(text);
	return doc;
fail:
	free(text);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* OBJ's member KEY, or NULL. */
static json_object *member(json_object *obj, const char *key)
{
	json_object *v;
	return json_object_is_type(obj, json_type_object) && json_object_object_get_ex(obj, key, &v) ? v : NULL;
}

static bool is_string(json_object *v)
{
	return json_object_is_type(v, json_type_string);
}

static bool is_number(json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* The summary of the counted command, for the header. */
static void describe(struct result *r)
{
	json_object *argv = member(member(r->doc, "target"), "argv");
	size_t len = 0, n = json_object_is_type(argv, json_type_array) ? json_object_array_length(argv) : 0;
	r->command[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		json_object *a = json_object_array_get_idx(argv, i);
		if (is_string(a) && len < sizeof(r->command))
			len += (size_t)snprintf(r->command + len, sizeof(r->command) - len, "%s%s",
						i ? " " : "", json_object_get_string(a));
	}
}

static double mean_of(const double *x, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

static double sd_of(const double *x, size_t n, double mean)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += (x[i] - mean) * (x[i] - mean);
	return sqrt(s / (double)(n - 1));
}

static int read_counter(struct result *r, json_object *o, struct counter *c)
{
	json_object *event = member(o, "event"), *runs = member(o, "runs");
	json_object *unit = member(o, "unit"), *value = member(o, "value"), *cpu = member(o, "cpu");
	bool have_runs = json_object_is_type(runs, json_type_array);
	if (!is_string(event) || !is_number(value))
		return bad(r, "a counter without its event name or value: not a `hwc stat --json` result");
	c->event = json_object_get_string(event);
	c->unit = is_string(unit) ? json_object_get_string(unit) : "";
	c->cpu = json_object_is_type(cpu, json_type_int) ? (long long)json_object_get_int64(cpu) : -1;
	if (!have_runs || json_object_array_length(runs) < 2) {
		fprintf(stderr, "hwc diff: %s: %s has %s per-run values: Welch's t-test needs at least "
				"2 runs (`hwc stat -r N --json` with N >= 2)\n",
			r->path, c->event, have_runs ? "too few" : "no");
		return -1;
	}
	c->n = json_object_array_length(runs);
	c->x = calloc(c->n, sizeof(*c->x));
	if (!c->x)
		return bad(r, "out of memory");
	for (size_t i = 0; i < c->n; i++) {
		json_object *scaled = member(json_object_array_get_idx(runs, i), "scaled");
		if (!is_number(scaled))
			return bad(r, "a run without its scaled count: not a `hwc stat --json` result");
		c->x[i] = json_object_get_double(scaled);
	}
	/* "value" is the mean in the event's unit (msec for task-clock). */
	double mean = mean_of(c->x, c->n);
	c->unit_scale = c->unit[0] && mean > 0 ? json_object_get_double(value) / mean : 1;
	c->mean = mean * c->unit_scale;
	c->sd = sd_of(c->x, c->n, mean) * c->unit_scale;
	return 0;
}

static int load_result(struct result *r, const char *path)
{
	r->path = path;
	if (!(r->doc = load_json(path)))
		return -1;
	json_object *schema = member(r->doc, "schema");
	if (!is_string(schema) || strcmp(json_object_get_string(schema), "hwc-stat/1") != 0)
		return bad(r, "not a `hwc stat --json` result (no schema hwc-stat/1)");
	json_object *aggr = member(r->doc, "aggregation"), *counters = member(r->doc, "counters");
	r->aggregation = is_string(aggr) ? json_object_get_string(aggr) : "total";
	if (strcmp(r->aggregation, "per-thread") == 0)
		return bad(r, "per-thread results cannot be compared: threads differ from run to run");
	if (!json_object_is_type(counters, json_type_array))
		return bad(r, "no counters: not a `hwc stat --json` result");
	if (member(r->doc, "intervals"))
		return bad(r, "interval results (-I) have no per-run values: use `hwc stat -r N --json`");
	describe(r);
	size_t n = json_object_array_length(counters);
	r->c = calloc(n + 1, sizeof(*r->c));
	if (!r->c)
		return bad(r, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (read_counter(r, json_object_array_get_idx(counters, i), &r->c[r->n++]))
			return -1;
	if (!r->n)
		return bad(r, "no counters to compare");
	return 0;
}

static const struct counter *find(const struct result *r, const struct counter *c)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->c[i].event, c->event) == 0 && r->c[i].cpu == c->cpu)
			return &r->c[i];
	return NULL;
}

/* Both results must count the same events (the same CPUs with -A). */
static int same_events(const struct result *a, const struct result *b)
{
	int rc = 0;
	if (strcmp(a->aggregation, b->aggregation) != 0) {
		fprintf(stderr, "hwc diff: %s is %s and %s is %s: compare results of the same kind\n",
			a->path, a->aggregation, b->path, b->aggregation);
		return -1;
	}
	for (int side = 0; side < 2; side++) {
		const struct result *x = side ? b : a, *y = side ? a : b;
		for (size_t i = 0; i < x->n; i++)
			if (!find(y, &x->c[i])) {
				fprintf(stderr, "hwc diff: different events: %s", x->c[i].event);
				if (x->c[i].cpu >= 0)
					fprintf(stderr, " on CPU %lld", x->c[i].cpu);
				fprintf(stderr, " is in %s, not in %s\n", x->path, y->path);
				rc = -1;
			}
	}
	return rc;
}

/* ------------------------------------------------------------ the test */

struct change {
	const struct counter *a, *b;
	double delta, lo, hi; /* in the unit */
	double t, df, p;      /* t and df are NAN when both runs are constant */
	bool significant;
};

static void welch(const struct counter *a, const struct counter *b, double confidence,
		  struct change *ch)
{
	double va = a->sd * a->sd / (double)a->n, vb = b->sd * b->sd / (double)b->n;
	double se = sqrt(va + vb);
	ch->a = a;
	ch->b = b;
	ch->delta = b->mean - a->mean;
	if (se == 0) {
		/* Every run gave the same count on both sides. */
		ch->t = ch->df = NAN;
		ch->p = ch->delta == 0 ? 1 : 0;
		ch->lo = ch->hi = ch->delta;
	} else {
		ch->t = ch->delta / se;
		ch->df = (va + vb) * (va + vb) /
			 (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
		ch->p = t_two_sided(ch->t, ch->df);
		double q = diff_t_quantile(1 - (1 - confidence) / 2, ch->df);
		ch->lo = ch->delta - q * se;
		ch->hi = ch->delta + q * se;
	}
	ch->significant = ch->p < 1 - confidence;
}

static double pct_of(double v, double base)
{
	return base != 0 ? 100 * v / base : NAN;
}

static void format_pct(char *buf, size_t size, double v)
{
	if (isfinite(v))
		snprintf(buf, size, "%+.2f%%", v);
	else
		snprintf(buf, size, "-");
}

static void print_text(const struct result *r, const struct change *ch, size_t n, double confidence)
{
	printf("# Data files:\n");
	for (int i = 0; i < 2; i++)
		printf("#  [%d] %s%s: %zu runs of '%s'\n", i, r[i].path, i ? "" : " (Baseline)", r[i].c[0].n,
		       r[i].command);
	printf("#\n# Each event's mean over the runs (+- its relative standard deviation), its change,\n"
	       "# the %g%% confidence interval of the change and the p-value of Welch's t-test\n#\n",
	       100 * confidence);
	printf("# %23s  %23s  %9s  %22s  %8s  %-11s  %s\n", "Baseline", "New", "Change", "Interval", "p",
	       "Significant", "Event");
	for (size_t i = 0; i < n; i++) {
		const struct change *c = &ch[i];
		char side[2][64], change[32], lo[32], hi[32], p[16], interval[80];
		for (int s = 0; s < 2; s++) {
			const struct counter *k = s ? c->b : c->a;
			snprintf(side[s], sizeof(side[s]), "%.2f%s%s (+- %.2f%%)", k->mean, k->unit[0] ? " " : "",
				 k->unit, k->mean != 0 ? 100 * k->sd / fabs(k->mean) : 0.0);
		}
		format_pct(change, sizeof(change), pct_of(c->delta, c->a->mean));
		format_pct(lo, sizeof(lo), pct_of(c->lo, c->a->mean));
		format_pct(hi, sizeof(hi), pct_of(c->hi, c->a->mean));
		snprintf(interval, sizeof(interval), "[%s, %s]", lo, hi);
		if (c->p < 1e-4)
			snprintf(p, sizeof(p), "<0.0001");
		else
			snprintf(p, sizeof(p), "%.4f", c->p);
		char event[128];
		snprintf(event, sizeof(event), "%s", c->a->event);
		if (c->a->cpu >= 0)
			snprintf(event, sizeof(event), "%s (CPU %lld)", c->a->event, c->a->cpu);
		printf("  %23s  %23s  %9s  %22s  %8s  %-11s  %s\n", side[0], side[1], change, interval, p,
		       c->significant ? "yes" : "no", event);
	}
}

/* A number in its shortest exact form (0.1, not 0.10000000000000001), or
 * null for NaN (JSON has none). */
static json_object *number(double v)
{
	if (!isfinite(v))
		return NULL;
	char buf[32];
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof(buf), "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return json_object_new_double_s(v, buf);
}

static json_object *pair(double a, double b)
{
	json_object *v = json_object_new_array();
	json_object_array_add(v, number(a));
	json_object_array_add(v, number(b));
	return v;
}

static json_object *json_counter(const struct counter *c)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "mean", number(c->mean));
	json_object_object_add(o, "stddev", number(c->sd));
	json_object_object_add(o, "runs", json_object_new_int64((int64_t)c->n));
	return o;
}

static json_object *json_side(const struct result *r)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "file", json_object_new_string(r->path));
	json_object_object_add(o, "command", json_object_new_string(r->command));
	return o;
}

static void print_json(const struct result *r, const struct change *ch, size_t n, double confidence)
{
	json_object *doc = json_object_new_object(), *events = json_object_new_array();
	json_object_object_add(doc, "schema", json_object_new_string("hwc-diff-stat/1"));
	json_object_object_add(doc, "test", json_object_new_string("welch"));
	json_object_object_add(doc, "confidence_pct", number(100 * confidence));
	json_object_object_add(doc, "baseline", json_side(&r[0]));
	json_object_object_add(doc, "new", json_side(&r[1]));
	for (size_t i = 0; i < n; i++) {
		const struct change *c = &ch[i];
		double base = c->a->mean;
		json_object *e = json_object_new_object();
		json_object_object_add(e, "event", json_object_new_string(c->a->event));
		if (c->a->cpu >= 0)
			json_object_object_add(e, "cpu", json_object_new_int64(c->a->cpu));
		json_object_object_add(e, "unit", json_object_new_string(c->a->unit));
		json_object_object_add(e, "baseline", json_counter(c->a));
		json_object_object_add(e, "new", json_counter(c->b));
		json_object_object_add(e, "delta", number(c->delta));
		json_object_object_add(e, "delta_pct", number(pct_of(c->delta, base)));
		json_object_object_add(e, "interval", pair(c->lo, c->hi));
		json_object_object_add(e, "interval_pct", pair(pct_of(c->lo, base), pct_of(c->hi, base)));
		json_object_object_add(e, "t", number(c->t)); /* null when both sides are constant */
		json_object_object_add(e, "df", number(c->df));
		json_object_object_add(e, "p", number(c->p));
		json_object_object_add(e, "significant", json_object_new_boolean(c->significant));
		json_object_array_add(events, e);
	}
	json_object_object_add(doc, "events", events);
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
}

int diff_stat(const char *base, const char *new_file, double confidence, bool json)
{
	struct result r[2] = {{0}};
	struct change *ch = NULL;
	int rc = 1;
	if (load_result(&r[0], base) || load_result(&r[1], new_file) || same_events(&r[0], &r[1]) ||
	    load_libm())
		goto out;
	ch = calloc(r[0].n, sizeof(*ch));
	if (!ch) {
		fprintf(stderr, "hwc diff: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < r[0].n; i++)
		welch(&r[0].c[i], find(&r[1], &r[0].c[i]), confidence, &ch[i]);
	if (json)
		print_json(r, ch, r[0].n, confidence);
	else
		print_text(r, ch, r[0].n, confidence);
	if (out_close(stdout, NULL))
		goto out;
	rc = 0;
out:
	free(ch);
	free_result(&r[1]);
	free_result(&r[0]);
	return rc;
}
