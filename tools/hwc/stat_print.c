/* hwc stat's output: the human table, CSV and JSON (schema hwc-stat/1,
 * documented in hwc-stat(1)), and the derived figures.  CSV and JSON never
 * depend on the locale: only the human table asks for digit grouping, and
 * stat.c sets LC_NUMERIC for that format alone. */
#include "stat.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SLOT(r, row, e) ((row) * (r)->nev + (e))

bool stat_aggr_topology(enum stat_aggr a)
{
	return a >= STAT_PER_CORE;
}

int stat_report_init(struct stat_report *r)
{
	r->cells = calloc(r->nrows * r->nev + 1, sizeof(*r->cells));
	if (!r->cells)
		return -ENOMEM;
	if (stat_aggr_topology(r->aggr))
		return 0;
	/* Every other aggregation prints each row on its own. */
	r->groups = calloc(r->nrows + 1, sizeof(*r->groups));
	if (!r->groups)
		return -ENOMEM;
	r->ngroups = r->nrows;
	for (size_t i = 0; i < r->nrows; i++) {
		r->groups[i].nrows = 1;
		if (!(r->groups[i].row = malloc(sizeof(size_t))))
			return -ENOMEM;
		r->groups[i].row[0] = i;
	}
	return 0;
}

void stat_report_free(struct stat_report *r)
{
	free(r->cells);
	free(r->per_run);
	for (size_t g = 0; r->groups && g < r->ngroups; g++)
		free(r->groups[g].row);
	free(r->groups);
	r->cells = NULL;
	r->per_run = NULL;
	r->groups = NULL;
	r->ngroups = 0;
}

/* perf's names and widths of the topology aggregations (stat-display.c;
 * the core column is 15 wide as in perf 6.1, 18 in 6.12). */
static const struct {
	const char *key;  /* JSON, and the interval header */
	int width;        /* of the id column in the table */
} topo_column[] = {
	[STAT_PER_CORE] = {"core", 15}, [STAT_PER_CACHE] = {"cache", 22}, [STAT_PER_DIE] = {"die", 12},
	[STAT_PER_SOCKET] = {"socket", 6}, [STAT_PER_NODE] = {"node", 6},
};

static double percent_running(const struct hwc_value *v)
{
	/* An event that was never enabled lost nothing to multiplexing. */
	return v->enabled ? 100.0 * (double)v->running / (double)v->enabled : 100.0;
}

/* COUNT in the event's unit.  A scale of 1e-6 divides by 1e6 rather than
 * multiplying by the inexact 1e-6, so 463073 ns is 0.463073 msec exactly as
 * far as a double can say, and JSON shows it so.  (round and sqrt here
 * compile to instructions, -fno-math-errno: hwc does not link libm.) */
static double in_unit(const struct stat_event *ev, double count)
{
	double inverse = round(1 / ev->scale);
	if (inverse >= 1 && fabs(inverse * ev->scale - 1) < 1e-12)
		return count / inverse;
	return count * ev->scale;
}

/* ------------------------------------------------------------ derived figures */

enum metric { M_NONE, M_CPUS, M_GHZ, M_IPC, M_BRANCH_MISS, M_CACHE_MISS };

static const struct {
	const char *id;    /* JSON key, CSV metric name */
	const char *human; /* after the value in the table */
	bool percent;
} metrics[] = {
	[M_NONE] = {"", "", false},
	[M_CPUS] = {"cpus_utilized", "CPUs utilized", false},
	[M_GHZ] = {"ghz", "GHz", false},
	[M_IPC] = {"ipc", "insn per cycle", false},
	[M_BRANCH_MISS] = {"branch_miss_pct", "of all branches", true},
	[M_CACHE_MISS] = {"cache_miss_pct", "of all cache refs", true},
};

/* The event of type TYPE / CONFIG to divide EV by: one counting the same
 * privilege levels when SAME_LEVELS, preferring EV's own group. */
static int find_input(const struct stat_report *r, size_t ev, uint32_t type, uint64_t config,
		      bool same_levels)
{
	const struct perf_event_attr *b = &r->ev[ev].attr;
	uint64_t want = config;
	/* On a hybrid, the input counted on the same core PMU (config[63:32]). */
	if (type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE)
		want |= b->config & ~0xffffffffull;
	int found = -1;
	for (size_t k = 0; k < r->nev; k++) {
		const struct perf_event_attr *a = &r->ev[k].attr;
		if (a->type != type || a->config != want)
			continue;
		if (same_levels && (a->exclude_user != b->exclude_user ||
				    a->exclude_kernel != b->exclude_kernel || a->exclude_hv != b->exclude_hv))
			continue;
		if (r->ev[k].group == r->ev[ev].group)
			return (int)k;
		if (found < 0)
			found = (int)k;
	}
	return found;
}

/* The derived figure shown next to event EV, from the row's scaled counts
 * COUNT[] over SECONDS of wall time; M_NONE when an input was not counted. */
static enum metric metric_of(const struct stat_report *r, size_t ev, const double *count,
			     double seconds, double *out)
{
	const struct perf_event_attr *a = &r->ev[ev].attr;
	if (a->type == PERF_TYPE_SOFTWARE &&
	    (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK)) {
		if (seconds <= 0)
			return M_NONE;
		*out = count[ev] / 1e9 / seconds;
		return M_CPUS;
	}
	if (a->type != PERF_TYPE_HARDWARE)
		return M_NONE;
	enum metric m;
	int k;
	double factor = 1;
	switch ((uint32_t)a->config) { /* the core PMU's type is above */
	case PERF_COUNT_HW_CPU_CYCLES: /* cycles per nanosecond on a CPU */
		k = find_input(r, ev, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false);
		m = M_GHZ;
		break;
	case PERF_COUNT_HW_INSTRUCTIONS:
		k = find_input(r, ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true);
		m = M_IPC;
		break;
	case PERF_COUNT_HW_BRANCH_MISSES:
		k = find_input(r, ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true);
		m = M_BRANCH_MISS;
		factor = 100;
		break;
	case PERF_COUNT_HW_CACHE_MISSES:
		k = find_input(r, ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, true);
		m = M_CACHE_MISS;
		factor = 100;
		break;
	default:
		return M_NONE;
	}
	if (k < 0 || count[k] <= 0)
		return M_NONE;
	*out = factor * count[ev] / count[k];
	return m;
}

/* ------------------------------------------------------------ one line */

/* Everything printed for one (row, event). */
struct line {
	size_t row, ev;              /* row: the group's first */
	size_t group;
	const struct hwc_value *members; /* topology: each CPU's value, in the group's order */
	const struct hwc_value *sum; /* summed over runs (or the interval) */
	double count;                /* mean scaled count per run */
	bool exact;                  /* one sample: print sum->scaled as an integer */
	double rel_stddev;           /* percent, -r only */
	double stddev;               /* in the event's unit, -r only */
	enum metric metric;
	double metric_value;
	const struct hwc_value *runs; /* -r: this cell's value in each run */
	size_t nruns, run_stride;
};

static void human_prefix(const struct stat_report *r, size_t row, char *buf, size_t size)
{
	buf[0] = '\0';
	if (stat_aggr_topology(r->aggr))
		snprintf(buf, size, "%-*s %4zu ", topo_column[r->aggr].width, r->groups[row].id,
			 r->groups[row].nrows);
	else if (r->aggr == STAT_PER_CPU)
		snprintf(buf, size, "CPU%-6d", r->rows[row].cpu);
	else if (r->aggr == STAT_PER_THREAD) {
		char id[64];
		snprintf(id, sizeof(id), "%s-%d", r->rows[row].comm, (int)r->rows[row].tid);
		snprintf(buf, size, "%24s ", id);
	}
}

static void human_line(const struct stat_report *r, const char *time, const struct line *l)
{
	const struct stat_event *ev = &r->ev[l->ev];
	char prefix[64], buf[1024];
	size_t len = 0;
#define ADD(...) (len += (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, __VA_ARGS__))
	human_prefix(r, stat_aggr_topology(r->aggr) ? l->group : l->row, prefix, sizeof(prefix));
	ADD("%s%s", time, prefix);
	if (ev->unit[0])
		ADD(r->no_big_num ? "%18.2f %-4s " : "%'18.2f %-4s ", in_unit(ev, l->count), ev->unit);
	else if (l->exact)
		ADD(r->no_big_num ? "%18" PRIu64 "      " : "%'18" PRIu64 "      ", l->sum->scaled);
	else
		ADD(r->no_big_num ? "%18.0f      " : "%'18.0f      ", l->count);
	ADD("%-26s", ev->name);
	if (r->cgroups)
		ADD(" %-20s", ev->cgroup ? ev->cgroup : "");
	/* The figure column is 30 wide, so what follows it lines up. */
	if (l->metric != M_NONE && metrics[l->metric].percent)
		ADD(" # %7.2f%% %-18s", l->metric_value, metrics[l->metric].human);
	else if (l->metric != M_NONE)
		ADD(" # %8.3f %-18s", l->metric_value, metrics[l->metric].human);
	else
		ADD("%30s", "");
	if (hwc_value_multiplexed(l->sum))
		ADD("  (%.2f%%)", percent_running(l->sum));
	if (r->repeat)
		ADD("  ( +- %5.2f%% )", l->rel_stddev);
#undef ADD
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	while (len && buf[len - 1] == ' ')
		len--;
	buf[len] = '\0';
	fprintf(r->out, "%s\n", buf);
}

/* A CSV field, quoted when it holds the separator, a quote or a newline. */
static void csv_field(const struct stat_report *r, const char *s, bool last)
{
	if (strstr(s, r->sep) || strpbrk(s, "\"\n\r")) {
		fputc('"', r->out);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', r->out);
			fputc(*s, r->out);
		}
		fputc('"', r->out);
	} else {
		fputs(s, r->out);
	}
	fputs(last ? "\n" : r->sep, r->out);
}

static void format_value(const struct stat_report *r, const struct line *l, char *buf, size_t size)
{
	const struct stat_event *ev = &r->ev[l->ev];
	if (ev->unit[0])
		snprintf(buf, size, "%.6f", in_unit(ev, l->count));
	else if (l->exact)
		snprintf(buf, size, "%" PRIu64, l->sum->scaled);
	else
		snprintf(buf, size, "%.2f", l->count);
}

static void csv_line(const struct stat_report *r, const char *time, const struct line *l)
{
	char buf[64];
	if (time[0])
		csv_field(r, time, false);
	if (stat_aggr_topology(r->aggr)) {
		csv_field(r, r->groups[l->group].id, false);
		snprintf(buf, sizeof(buf), "%zu", r->groups[l->group].nrows);
		csv_field(r, buf, false);
	} else if (r->aggr == STAT_PER_CPU) {
		snprintf(buf, sizeof(buf), "%d", r->rows[l->row].cpu);
		csv_field(r, buf, false);
	} else if (r->aggr == STAT_PER_THREAD) {
		snprintf(buf, sizeof(buf), "%d", (int)r->rows[l->row].tid);
		csv_field(r, buf, false);
		csv_field(r, r->rows[l->row].comm, false);
	}
	format_value(r, l, buf, sizeof(buf));
	csv_field(r, buf, false);
	csv_field(r, r->ev[l->ev].unit, false);
	csv_field(r, r->ev[l->ev].name, false);
	if (r->cgroups)
		csv_field(r, r->ev[l->ev].cgroup ? r->ev[l->ev].cgroup : "", false);
	const uint64_t fields[] = {l->sum->raw, l->sum->enabled, l->sum->running};
	for (size_t i = 0; i < 3; i++) {
		snprintf(buf, sizeof(buf), "%" PRIu64, fields[i]);
		csv_field(r, buf, false);
	}
	snprintf(buf, sizeof(buf), "%.2f", percent_running(l->sum));
	csv_field(r, buf, false);
	if (r->repeat) {
		snprintf(buf, sizeof(buf), "%.2f", l->rel_stddev);
		csv_field(r, buf, false);
	}
	buf[0] = '\0';
	if (l->metric != M_NONE)
		snprintf(buf, sizeof(buf), "%.6f", l->metric_value);
	csv_field(r, buf, false);
	csv_field(r, metrics[l->metric].id, true);
}

/* ------------------------------------------------------------ JSON */

static void json_value_fields(struct json *j, const struct hwc_value *v)
{
	json_uint(j, "raw", v->raw);
	json_uint(j, "enabled_ns", v->enabled);
	json_uint(j, "running_ns", v->running);
	json_uint(j, "scaled", v->scaled);
	json_double(j, "percent_running", percent_running(v));
}

static void json_counter(struct stat_report *r, const struct line *l)
{
	struct json *j = &r->json;
	const struct stat_event *ev = &r->ev[l->ev];
	json_object(j, NULL);
	json_string(j, "event", ev->name);
	if (ev->cgroup && ev->cgroup[0])
		json_string(j, "cgroup", ev->cgroup);
	json_int(j, "group", ev->group);
	if (r->aggr == STAT_PER_CPU)
		json_int(j, "cpu", r->rows[l->row].cpu);
	if (stat_aggr_topology(r->aggr)) {
		const struct stat_group *g = &r->groups[l->group];
		json_string(j, topo_column[r->aggr].key, g->id);
		json_uint(j, "aggregate_number", g->nrows);
		/* Each CPU's part, so that the sum can be checked. */
		json_array(j, "cpus");
		for (size_t i = 0; i < g->nrows; i++) {
			json_object(j, NULL);
			json_int(j, "cpu", r->rows[g->row[i]].cpu);
			json_value_fields(j, &l->members[i]);
			json_object_end(j);
		}
		json_array_end(j);
	}
	if (r->aggr == STAT_PER_THREAD) {
		json_int(j, "tid", r->rows[l->row].tid);
		json_string(j, "comm", r->rows[l->row].comm);
	}
	if (!ev->unit[0] && l->exact)
		json_uint(j, "value", l->sum->scaled);
	else
		json_double(j, "value", in_unit(ev, l->count));
	json_string(j, "unit", ev->unit);
	json_value_fields(j, l->sum);
	json_bool(j, "multiplexed", hwc_value_multiplexed(l->sum));
	json_bool(j, "user_only", ev->user_only);
	json_object(j, "metrics");
	if (l->metric != M_NONE)
		json_double(j, metrics[l->metric].id, l->metric_value);
	json_object_end(j);
	if (r->repeat) {
		json_double(j, "stddev", l->stddev);
		json_double(j, "rel_stddev_pct", l->rel_stddev);
		json_array(j, "runs");
		for (size_t i = 0; i < l->nruns; i++) {
			json_object(j, NULL);
			json_value_fields(j, &l->runs[i * l->run_stride]);
			json_object_end(j);
		}
		json_array_end(j);
	}
	json_object_end(j);
}

static void json_begin(struct stat_report *r)
{
	static const char *const aggr[] = {"total", "per-cpu", "per-thread", "per-core", "per-cache",
					   "per-die", "per-socket", "per-node"};
	struct json *j = &r->json;
	json_init(j, r->out);
	json_object(j, NULL);
	json_string(j, "schema", "hwc-stat/1");
	json_string(j, "hwc_version", HWC_VERSION_STRING);
	json_object(j, "target");
	json_string(j, "kind", r->target_kind);
	if (r->argv) {
		json_array(j, "argv");
		for (size_t i = 0; r->argv[i]; i++)
			json_string(j, NULL, r->argv[i]);
		json_array_end(j);
	}
	if (r->pid > 0)
		json_int(j, strcmp(r->target_kind, "thread") == 0 ? "tid" : "pid", r->pid);
	if (r->cpus) {
		json_array(j, "cpus");
		for (size_t i = 0; i < r->ncpus; i++)
			json_int(j, NULL, r->cpus[i]);
		json_array_end(j);
	}
	json_object_end(j);
	json_string(j, "aggregation", aggr[r->aggr]);
	json_array(j, "notes");
	for (size_t i = 0; i < r->nnotes; i++)
		json_string(j, NULL, r->notes[i]);
	json_array_end(j);
	json_array(j, "skipped");
	for (size_t i = 0; i < r->nskipped; i++) {
		json_object(j, NULL);
		json_string(j, "event", r->skipped[i]);
		json_string(j, "reason", r->skip_reason[i]);
		json_object_end(j);
	}
	json_array_end(j);
	if (r->interval)
		json_array(j, "intervals");
}

/* ------------------------------------------------------------ -M metrics */

/* Compute the metrics of ROW from the values V of one sample, or (V NULL)
 * from the totals: an event that never ran (or was skipped) is NaN, never
 * a 0. */
/* The counts of group G (its rows summed): from V, one sample, or from
 * the totals' cells (their mean over -r runs) when V is NULL. */
static void group_counts(const struct stat_report *r, size_t g, const struct hwc_value *v,
			 double *count, struct hwc_value *sum)
{
	const struct stat_group *grp = &r->groups[g];
	for (size_t e = 0; e < r->nev; e++) {
		memset(&sum[e], 0, sizeof(sum[e]));
		count[e] = 0;
		for (size_t i = 0; i < grp->nrows; i++) {
			const struct stat_cell *cell = &r->cells[SLOT(r, grp->row[i], e)];
			stat_add_values(&sum[e], v ? &v[SLOT(r, grp->row[i], e)] : &cell->sum, 1);
			count[e] += v ? (double)v[SLOT(r, grp->row[i], e)].scaled : cell->mean;
		}
	}
}

/* Evaluate the metrics on COUNT (per event; SUM says which ran); TIMES:
 * user and system time are known (the totals). */
static void compute_metrics(struct stat_report *r, const double *count,
			    const struct hwc_value *sum, bool times, double seconds)
{
	double *c = malloc((r->nlist + 1) * sizeof(*c));
	bool *seen = calloc(r->nev + 1, sizeof(*seen));
	if (!c || !seen) {
		free(c);
		free(seen);
		return;
	}
	/* Per evlist event: a merged row's count at its first copy, 0 at the
	 * others (a metric sums an event's copies), NAN where it did not run. */
	for (size_t k = 0; k < r->nlist; k++) {
		size_t e = r->evlist_of[k];
		c[k] = e == SIZE_MAX || !sum[e].running ? NAN : seen[e] ? 0 : count[e];
		if (e != SIZE_MAX)
			seen[e] = true;
	}
	times = times && r->rusage_runs;
	hwc_metrics_compute(r->metrics, c, r->nlist, seconds,
			    times ? r->user_s / (double)r->rusage_runs : NAN,
			    times ? r->sys_s / (double)r->rusage_runs : NAN);
	free(c);
	free(seen);
}

static void metric_line(struct stat_report *r, const char *time, size_t g, size_t i)
{
	size_t row = r->groups[g].row[0];
	const struct hwc_metric_info *m = hwc_metrics_info(r->metrics, i);
	int over;
	double v = hwc_metrics_value(r->metrics, i, &over);
	char buf[64];
	switch (r->format) {
	case STAT_HUMAN: {
		char prefix[64];
		human_prefix(r, stat_aggr_topology(r->aggr) ? g : row, prefix, sizeof(prefix));
		if (isnan(v))
			fprintf(r->out, "%s%s%18s      %s", time, prefix, "<no value>", m->name);
		else
			fprintf(r->out, "%s%s%'18.2f      %-26s", time, prefix, v, m->name);
		if (m->unit[0] && !isnan(v))
			fprintf(r->out, " # %s", m->unit);
		if (over == 1)
			fputs("  (over threshold)", r->out);
		fputc('\n', r->out);
		break;
	}
	case STAT_CSV:
		if (time[0])
			csv_field(r, time, false);
		if (stat_aggr_topology(r->aggr)) {
			csv_field(r, r->groups[g].id, false);
			snprintf(buf, sizeof(buf), "%zu", r->groups[g].nrows);
			csv_field(r, buf, false);
		} else if (r->aggr == STAT_PER_CPU) {
			snprintf(buf, sizeof(buf), "%d", r->rows[row].cpu);
			csv_field(r, buf, false);
		} else if (r->aggr == STAT_PER_THREAD) {
			snprintf(buf, sizeof(buf), "%d", (int)r->rows[row].tid);
			csv_field(r, buf, false);
			csv_field(r, r->rows[row].comm, false);
		}
		buf[0] = '\0';
		if (!isnan(v))
			snprintf(buf, sizeof(buf), "%.6f", v);
		csv_field(r, buf, false);
		csv_field(r, m->unit, false);
		csv_field(r, m->name, false);
		csv_field(r, "metric", false);
		csv_field(r, over < 0 ? "" : over ? "over" : "within", true);
		break;
	case STAT_JSON: {
		struct json *j = &r->json;
		json_object(j, NULL);
		json_string(j, "metric", m->name);
		if (r->aggr == STAT_PER_CPU)
			json_int(j, "cpu", r->rows[row].cpu);
		if (stat_aggr_topology(r->aggr)) {
			json_string(j, topo_column[r->aggr].key, r->groups[g].id);
			json_uint(j, "aggregate_number", r->groups[g].nrows);
		}
		if (r->aggr == STAT_PER_THREAD) {
			json_int(j, "tid", r->rows[row].tid);
			json_string(j, "comm", r->rows[row].comm);
		}
		if (isnan(v))
			json_null(j, "value");
		else
			json_double(j, "value", v);
		json_string(j, "unit", m->unit);
		if (over < 0)
			json_null(j, "over_threshold");
		else
			json_bool(j, "over_threshold", over);
		json_object_end(j);
		break;
	}
	}
}

static void metric_lines(struct stat_report *r, const char *time, size_t g)
{
	for (size_t i = 0; r->metrics && i < hwc_metrics_count(r->metrics); i++)
		metric_line(r, time, g, i);
}

/* JSON: every row's (or aggregate's) metrics as the array "metrics" (V as
 * in group_counts). */
static void json_metrics(struct stat_report *r, const struct hwc_value *v, double seconds)
{
	double *count = calloc(r->nev ? r->nev : 1, sizeof(*count));
	struct hwc_value *sum = calloc(r->nev ? r->nev : 1, sizeof(*sum));
	if (r->metrics && count && sum) {
		json_array(&r->json, "metrics");
		for (size_t g = 0; g < r->ngroups; g++) {
			group_counts(r, g, v, count, sum);
			compute_metrics(r, count, sum, !v, seconds);
			metric_lines(r, "", g);
		}
		json_array_end(&r->json);
	}
	free(sum);
	free(count);
}

/* ------------------------------------------------------------ rows */

static void print_line(struct stat_report *r, const char *time, const struct line *l)
{
	if (r->aggr == STAT_PER_CPU && r->absent && r->absent[SLOT(r, l->row, l->ev)])
		return;
	switch (r->format) {
	case STAT_HUMAN:
		human_line(r, time, l);
		break;
	case STAT_CSV:
		csv_line(r, time, l);
		break;
	case STAT_JSON:
		json_counter(r, l);
		break;
	}
}

void stat_add_values(struct hwc_value *sum, const struct hwc_value *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sum[i].raw += v[i].raw;
		sum[i].enabled += v[i].enabled;
		sum[i].running += v[i].running;
		sum[i].scaled += v[i].scaled;
	}
}

/* Print every (group, event) of values V (one sample, SECONDS long). */
static void print_sample(struct stat_report *r, const char *time, const struct hwc_value *v,
			 double seconds)
{
	double *count = calloc(r->nev ? r->nev : 1, sizeof(*count));
	struct hwc_value *sum = calloc(r->nev ? r->nev : 1, sizeof(*sum));
	struct hwc_value *members = calloc(r->nrows ? r->nrows : 1, sizeof(*members));
	for (size_t g = 0; count && sum && members && g < r->ngroups; g++) {
		const struct stat_group *grp = &r->groups[g];
		memset(sum, 0, r->nev * sizeof(*sum));
		for (size_t i = 0; i < grp->nrows; i++)
			stat_add_values(sum, v + SLOT(r, grp->row[i], 0), r->nev);
		for (size_t e = 0; e < r->nev; e++)
			count[e] = (double)sum[e].scaled;
		for (size_t e = 0; e < r->nev; e++) {
			for (size_t i = 0; i < grp->nrows; i++)
				members[i] = v[SLOT(r, grp->row[i], e)];
			struct line l = {.row = grp->row[0], .group = g, .ev = e, .sum = &sum[e],
					 .members = members, .count = count[e], .exact = true};
			l.metric = metric_of(r, e, count, seconds, &l.metric_value);
			if (!r->metric_only || !r->metrics)
				print_line(r, time, &l);
		}
		if (r->metrics && r->format != STAT_JSON) {
			compute_metrics(r, count, sum, false, seconds);
			metric_lines(r, time, g);
		}
	}
	free(members);
	free(sum);
	free(count);
}

void stat_report_begin(struct stat_report *r)
{
	if (r->format == STAT_JSON)
		json_begin(r);
	else if (r->format == STAT_HUMAN && r->interval && stat_aggr_topology(r->aggr))
		fprintf(r->out, "#%14s %-*s cpus%18s %-4s %s\n", "time", topo_column[r->aggr].width,
			topo_column[r->aggr].key, "counts", "unit", "events");
	else if (r->format == STAT_HUMAN && r->interval)
		fprintf(r->out, "#%14s %s%18s %-4s %s\n", "time",
			r->aggr == STAT_PER_CPU ? "CPU      " : r->aggr == STAT_PER_THREAD ? "              comm-tid " : "",
			"counts", "unit", "events");
	fflush(r->out);
}

void stat_report_interval(struct stat_report *r, double time, double duration,
			  const struct hwc_value *v)
{
	char t[32] = "";
	if (r->format == STAT_HUMAN)
		snprintf(t, sizeof(t), "%15.9f ", time);
	else if (r->format == STAT_CSV)
		snprintf(t, sizeof(t), "%.9f", time);
	if (r->format == STAT_JSON) {
		json_object(&r->json, NULL);
		json_double(&r->json, "time_s", time);
		json_double(&r->json, "duration_s", duration);
		json_array(&r->json, "counters");
	}
	print_sample(r, t, v, duration);
	if (r->format == STAT_JSON) {
		json_array_end(&r->json);
		json_metrics(r, v, duration);
		json_object_end(&r->json);
	}
	fflush(r->out);
}

int stat_report_add_run(struct stat_report *r, const struct hwc_value *v, double elapsed)
{
	size_t n = r->nrows * r->nev;
	if (r->repeat) {
		struct hwc_value *p = realloc(r->per_run, (r->runs + 1) * n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		r->per_run = p;
		memcpy(p + r->runs * n, v, n * sizeof(*p));
	}
	r->runs++;
	double k = (double)r->runs;
	for (size_t i = 0; i < n; i++) {
		struct stat_cell *c = &r->cells[i];
		c->sum.raw += v[i].raw;
		c->sum.enabled += v[i].enabled;
		c->sum.running += v[i].running;
		c->sum.scaled += v[i].scaled;
		double x = (double)v[i].scaled, d = x - c->mean;
		c->mean += d / k;
		c->m2 += d * (x - c->mean);
	}
	double d = elapsed - r->elapsed_mean;
	r->elapsed_mean += d / k;
	r->elapsed_m2 += d * (elapsed - r->elapsed_mean);
	return 0;
}

static double stddev(double m2, size_t n)
{
	return n > 1 ? sqrt(m2 / (double)(n - 1)) : 0;
}

/* Group G's event E over the runs: its summed cell, and in RUNS (when -r
 * kept them) its value in each run.  Returns the stride of *RUNS_OUT. */
static size_t group_cell(const struct stat_report *r, size_t g, size_t e, struct stat_cell *out,
			 struct hwc_value *runs, const struct hwc_value **runs_out)
{
	const struct stat_group *grp = &r->groups[g];
	size_t stride = r->nrows * r->nev;
	*runs_out = r->per_run ? r->per_run + SLOT(r, grp->row[0], e) : NULL;
	if (grp->nrows == 1) {
		*out = r->cells[SLOT(r, grp->row[0], e)];
		return stride;
	}
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < grp->nrows; i++) {
		const struct stat_cell *c = &r->cells[SLOT(r, grp->row[i], e)];
		stat_add_values(&out->sum, &c->sum, 1);
		out->mean += c->mean;
	}
	if (!r->per_run)
		return stride; /* one run: no deviation */
	/* The deviation of the sums, from each run's sum (Welford). */
	double mean = 0;
	for (size_t k = 0; k < r->runs; k++) {
		memset(&runs[k], 0, sizeof(runs[k]));
		for (size_t i = 0; i < grp->nrows; i++)
			stat_add_values(&runs[k], &r->per_run[k * stride + SLOT(r, grp->row[i], e)], 1);
		double x = (double)runs[k].scaled, d = x - mean;
		mean += d / (double)(k + 1);
		out->m2 += d * (x - mean);
	}
	*runs_out = runs;
	return 1;
}

static void print_totals(struct stat_report *r)
{
	double *count = calloc(r->nev ? r->nev : 1, sizeof(*count));
	struct stat_cell *cell = calloc(r->nev ? r->nev : 1, sizeof(*cell));
	struct hwc_value *runs = calloc((r->runs ? r->runs : 1) * (r->nev ? r->nev : 1), sizeof(*runs));
	struct hwc_value *members = calloc(r->nrows ? r->nrows : 1, sizeof(*members));
	const struct hwc_value **run_of = calloc(r->nev ? r->nev : 1, sizeof(*run_of));
	size_t *stride = calloc(r->nev ? r->nev : 1, sizeof(*stride));
	struct hwc_value *sum = calloc(r->nev ? r->nev : 1, sizeof(*sum));
	for (size_t g = 0; count && cell && runs && members && run_of && stride && sum && g < r->ngroups;
	     g++) {
		const struct stat_group *grp = &r->groups[g];
		for (size_t e = 0; e < r->nev; e++) {
			stride[e] = group_cell(r, g, e, &cell[e], runs + e * r->runs, &run_of[e]);
			count[e] = cell[e].mean;
		}
		for (size_t e = 0; e < r->nev; e++) {
			const struct stat_cell *c = &cell[e];
			for (size_t i = 0; i < grp->nrows; i++)
				members[i] = r->cells[SLOT(r, grp->row[i], e)].sum;
			struct line l = {.row = grp->row[0], .group = g, .ev = e, .sum = &c->sum,
					 .members = members, .count = c->mean, .exact = r->runs == 1};
			double sd = stddev(c->m2, r->runs);
			l.stddev = in_unit(&r->ev[e], sd);
			l.rel_stddev = c->mean > 0 ? 100 * sd / c->mean : 0;
			if (run_of[e]) {
				l.runs = run_of[e];
				l.nruns = r->runs;
				l.run_stride = stride[e];
			}
			l.metric = metric_of(r, e, count, r->elapsed_mean, &l.metric_value);
			if (!r->metric_only || !r->metrics)
				print_line(r, "", &l);
		}
		if (r->metrics && r->format != STAT_JSON) {
			for (size_t e = 0; e < r->nev; e++)
				sum[e] = cell[e].sum;
			compute_metrics(r, count, sum, true, r->elapsed_mean);
			metric_lines(r, "", g);
		}
	}
	free(sum);
	free(stride);
	free(run_of);
	free(members);
	free(runs);
	free(cell);
	free(count);
}

static void human_header(const struct stat_report *r)
{
	FILE *f = r->out;
	fputs("\n Performance counter stats for ", f);
	if (strcmp(r->target_kind, "process") == 0)
		fprintf(f, "process id '%d'", (int)r->pid);
	else if (strcmp(r->target_kind, "thread") == 0)
		fprintf(f, "thread id '%d'", (int)r->pid);
	else if (strcmp(r->target_kind, "system") == 0 && !r->all_cpus) {
		fputs("CPU(s) ", f);
		for (size_t i = 0; i < r->ncpus; i++)
			fprintf(f, "%s%d", i ? "," : "", r->cpus[i]);
	} else if (strcmp(r->target_kind, "system") == 0)
		fputs("'system wide'", f);
	if (r->argv) {
		fputs(strcmp(r->target_kind, "command") == 0 ? "'" : " while running '", f);
		for (size_t i = 0; r->argv[i]; i++)
			fprintf(f, "%s%s", i ? " " : "", r->argv[i]);
		fputc('\'', f);
	}
	if (r->repeat)
		fprintf(f, " (%zu run%s)", r->runs, r->runs == 1 ? "" : "s");
	fputs(":\n\n", f);
}

void stat_report_end(struct stat_report *r)
{
	FILE *f = r->out;
	switch (r->format) {
	case STAT_HUMAN:
		if (!r->interval) {
			human_header(r);
			print_totals(r);
			fprintf(f, "\n%18.9f seconds time elapsed", r->elapsed_mean);
			if (r->repeat)
				fprintf(f, "  ( +- %5.2f%% )",
					r->elapsed_mean > 0
						? 100 * stddev(r->elapsed_m2, r->runs) / r->elapsed_mean
						: 0);
			fputc('\n', f);
			if (r->rusage_runs)
				fprintf(f, "\n%18.9f seconds user\n%18.9f seconds sys\n",
					r->user_s / (double)r->rusage_runs, r->sys_s / (double)r->rusage_runs);
			fputc('\n', f);
		}
		break;
	case STAT_CSV:
		if (!r->interval)
			print_totals(r);
		break;
	case STAT_JSON: {
		struct json *j = &r->json;
		if (r->interval)
			json_array_end(j);
		json_uint(j, "runs", r->runs);
		json_array(j, "counters");
		print_totals(r);
		json_array_end(j);
		json_metrics(r, NULL, r->elapsed_mean);
		json_double(j, "elapsed_s", r->elapsed_mean);
		if (r->repeat)
			json_double(j, "elapsed_stddev_s", stddev(r->elapsed_m2, r->runs));
		if (r->rusage_runs) {
			json_double(j, "user_s", r->user_s / (double)r->rusage_runs);
			json_double(j, "system_s", r->sys_s / (double)r->rusage_runs);
		}
		if (r->exit_status >= 0)
			json_int(j, "exit_status", r->exit_status);
		else
			json_null(j, "exit_status");
		json_bool(j, "interrupted", r->interrupted);
		if (r->regions_print)
			r->regions_print(r);
		json_object_end(j);
		json_end(j);
		break;
	}
	}
	if (r->format != STAT_JSON && r->regions_print)
		r->regions_print(r);
	fflush(f);
}
