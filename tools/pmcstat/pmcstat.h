/* pmcstat: what its live side (pmcstat.c) and its log side (log.c) share. */
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

#endif
