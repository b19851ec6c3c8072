/* hwc stat: what the counting side (stat.c) hands to the output side
 * (stat_print.c).  The output side knows nothing of targets or signals: it
 * formats values, so it can be tested with values this machine cannot
 * produce (multiplexed counters). */
#ifndef HWC_STAT_H
#define HWC_STAT_H

#include "hwc.h"
#include "json.h"

#include <stdio.h>

/* What hwc stat counts when no event is named (hwc serve too); the events
 * this machine lacks are left out (HWC_SKIP_UNSUPPORTED). */
#define STAT_DEFAULT_EVENTS \
	"task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses"

enum stat_format { STAT_HUMAN, STAT_CSV, STAT_JSON };

/* What one report row stands for. */
enum stat_aggr {
	STAT_TOTAL,      /* the whole target */
	STAT_PER_CPU,    /* -A: one row per CPU */
	STAT_PER_THREAD, /* --per-thread: one row per thread */
	/* System-wide rows summed over the CPUs they share (perf's order). */
	STAT_PER_CORE,   /* --per-core: "S0-D0-C1" */
	STAT_PER_CACHE,  /* --per-cache: "S0-D0-L3-ID0" (ID: the cache's first CPU) */
	STAT_PER_DIE,    /* --per-die: "S0-D1" */
	STAT_PER_SOCKET, /* --per-socket: "S1" */
	STAT_PER_NODE,   /* --per-node: "N0" */
};

/* A topology aggregate: the CPU rows (indexes into rows) it sums. */
struct stat_group {
	char id[48];   /* "S0-D0-C1" */
	size_t nrows;
	size_t *row;
};

/* One counted event as the report shows it. */
struct stat_event {
	const char *name;
	const char *cgroup;           /* -G: counted only in this cgroup; NULL or "": none */
	const char *unit;             /* "" for plain counts */
	double scale;                 /* value in UNIT = scaled count * scale */
	int group;
	struct perf_event_attr attr;  /* to find the inputs of derived figures */
	bool user_only;               /* kernel counting was denied */
};

struct stat_row {
	int cpu;       /* STAT_PER_CPU */
	pid_t tid;     /* STAT_PER_THREAD */
	char comm[32]; /* STAT_PER_THREAD */
};

/* One (row, event) over the runs of -r: sums of the values, and the mean
 * and squared deviations of the per-run value (Welford). */
struct stat_cell {
	struct hwc_value sum;
	double mean, m2;
};

struct stat_report {
	/* Set by the caller before stat_report_begin(). */
	enum stat_format format;
	enum stat_aggr aggr;
	const char *sep;           /* STAT_CSV */
	FILE *out;
	const char *target_kind;   /* "command", "process", "thread", "system" */
	char *const *argv;         /* the command, or NULL */
	pid_t pid;                 /* process or thread id, or 0 */
	const int *cpus;           /* system-wide: the CPUs counted */
	size_t ncpus;
	bool all_cpus;             /* -a: every online CPU, not a -C list */
	bool interval;             /* -I: values come by interval */
	bool repeat;               /* -r was given */
	bool cgroups;              /* -G: a cgroup column (CSV) after the event */
	bool no_big_num;           /* --no-big-num: no digit grouping in the table */
	const bool *absent;        /* STAT_PER_CPU, or NULL: [row * nev + ev] true for a CPU
				    * an uncore PMU's event does not count on (outside its
				    * cpumask), whose row perf leaves out */
	size_t nev, nrows;
	struct stat_event *ev;
	struct stat_row *rows;
	struct stat_group *groups; /* what is printed: the aggregates, or one per row */
	size_t ngroups;
	const char **notes;        /* lines also printed to stderr */
	size_t nnotes;
	const char **skipped, **skip_reason; /* default events the machine lacks */
	hwc_metrics *metrics;      /* -M, --topdown: computed from the evlist's counts */
	const size_t *evlist_of;   /* evlist index -> report event (SIZE_MAX: skipped), for
				    * the metrics */
	size_t nlist;              /* events in the evlist */
	bool metric_only;          /* --metric-only: no event rows */
	size_t nskipped;

	/* Filled by stat_report_add_run(). */
	size_t runs;
	struct stat_cell *cells;   /* [row * nev + ev] */
	struct hwc_value *per_run; /* [run][row][ev], kept for -r */
	double elapsed_mean, elapsed_m2; /* seconds, over runs */
	double user_s, sys_s;      /* CPU time of the command, summed over runs */
	size_t rusage_runs;        /* runs that gave user_s and sys_s */

	/* Set by the caller before stat_report_end(). */
	int exit_status;           /* the command's, or -1 for none */
	bool interrupted;
	/* --regions: prints the command's region report (hwc-regions(3)) in
	 * R's format, at the end of the report (in the JSON document). */
	void (*regions_print)(struct stat_report *r);

	struct json json;          /* STAT_JSON: the document being written */
};

/* SUM[i] += V[i] for N values (raw, times and scaled). */
void stat_add_values(struct hwc_value *sum, const struct hwc_value *v, size_t n);

/* True for the topology aggregations (per core, cache, die, socket, node). */
bool stat_aggr_topology(enum stat_aggr a);

/* Allocate the cells once nev and nrows (and, for a topology aggregation,
 * the groups) are known; other aggregations get one group per row.
 * Returns 0 or -ENOMEM. */
int stat_report_init(struct stat_report *r);
void stat_report_free(struct stat_report *r);

/* Header: nothing for a table; JSON's opening; the interval column line. */
void stat_report_begin(struct stat_report *r);

/* One interval of -I: values V[row * nev + ev] over DURATION seconds,
 * ending TIME seconds after the start. */
void stat_report_interval(struct stat_report *r, double time, double duration,
			  const struct hwc_value *v);

/* Fold one run's values V[row * nev + ev] (ELAPSED seconds) into the totals. */
int stat_report_add_run(struct stat_report *r, const struct hwc_value *v, double elapsed);

/* The totals (a table unless -I printed intervals), times, JSON's end. */
void stat_report_end(struct stat_report *r);

#endif
