/* pmcstat: what its live side (pmcstat.c, options.c, list.c) and its log
 * side (log.c, gprof.c, callgraph.c, top.c) share. */
#ifndef PMCSTAT_H
#define PMCSTAT_H

#include <pmc.h>
#include <pmclog.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define DEFAULT_CALLGRAPH_DEPTH 16
#define DEFAULT_TOP_THRESHOLD 0.5 /* percent: entries under it are not shown (-f threshold=) */

/* How the log is analyzed (-A, -I, -e, -f, -i, -r); pmcstat.c sets it. */
struct pmcstat_opts {
	bool leaf_addr;   /* -A: sampled addresses apart (-T, -G); -T shows addresses */
	bool leaf_offset; /* -I: the same; -T shows function+offset */
	bool wide;        /* -e: gprof buckets count past 65535 samples */
	bool has_tid;     /* -i: only the samples of thread TID */
	int tid;
	const char *fsroot; /* -r: the recorded files under this directory, or NULL */
	double threshold;   /* -f threshold=: top mode's cut, in percent */
};
extern struct pmcstat_opts pmcstat_opts;

/* The log LOG in FreeBSD's text form ("callchain", "exitval", ...) on OUT.
 * 0, or an exit status after saying why. */
int pmcstat_print_log(const char *log, FILE *out);

/* -g: one gprof(1) profile per event and executable object, written to
 * DIR/<event>/<object>.gmon; MAP (may be NULL) gets "<gmon> <object>"
 * lines (-M). */
int pmcstat_gprof(const char *log, const char *dir, int verbosity, FILE *out, FILE *map);

/* -G: the call graph of each PMC, callees first, DEPTH frames deep. */
int pmcstat_callgraph(const char *log, FILE *out, int depth);

/* -F: the call tree of every PMC in the calltree format KCachegrind reads. */
int pmcstat_calltree(const char *log, FILE *out);

/* -m: each sample's address with its function and the function's range;
 * -a (CALLCHAINS): each frame of each sample with function, file and line. */
int pmcstat_annotate(const char *log, FILE *out, bool callchains);

/* -T: one frame of the top display: the samples of LOG after byte offset
 * *SINCE (then moved past them), hot functions first with their callers. */
int pmcstat_top(const char *log, FILE *out, uint64_t *since, bool clear, int width);

/* FreeBSD's pmcstat says ERROR: before what it could not do (pmc_err.h). */
#define die_pmc(code, fmt, ...) pmc_err(code, "ERROR: " fmt, ##__VA_ARGS__)

/* The most CPUs -c takes. */
#define MAX_CPUS 1024

/* options.c: the usage on stderr, then exit. */
void pmcstat_usage(void);
/* -c: "*" or a comma-separated list of CPU numbers into MASK (MAX_CPUS). */
void pmcstat_parse_cpus(const char *spec, bool *mask, int ncpu);
/* -l, -w: seconds, above 0 and up to a year. */
double pmcstat_parse_secs(const char *s, const char *what, char opt);
/* -f: a plugin option (CALLTREE: after -F). */
void pmcstat_plugin_option(const char *opt, bool calltree);

/* list.c: -L (DESCRIBE false) and -u MATCH; the exit status. */
int pmcstat_list_events(const char *match, bool describe);

#endif
