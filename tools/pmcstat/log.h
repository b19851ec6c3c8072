/* pmcstat: what the views of the log (log.c, gprof.c, callgraph.c, top.c)
 * share; log.c has them but pmcstat_sorted_children (callgraph.c). */
#ifndef PMCSTAT_LOG_H
#define PMCSTAT_LOG_H

#include "pmcstat.h"
#include "profile.h"

#include <hwc/perfdata.h>
#include <hwc/sample.h>
#include <hwc/symbol.h>

/* Out of memory: say so and exit. */
_Noreturn void pmcstat_oom(void);
void *pmcstat_xrealloc(void *p, size_t size);
char *pmcstat_xstrdup(const char *s);
void pmcstat_push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x);

/* A PMC of the log and its samples. */
struct pmcrec {
	pmc_id_t id;
	char name[PMC_NAME_MAX];
	uint64_t rate;
	uint64_t *offs; /* file offsets of its samples, ascending */
	size_t n, cap;
};

/* The log's PMCs (pmcstat_scan_log()). */
struct scan {
	struct pmcrec *p;
	size_t n;
};

/* Find the log's PMCs and their samples (those of thread -i only) into S:
 * 0, or an exit status after saying why. */
int pmcstat_scan_log(const char *log, struct scan *s);
void pmcstat_scan_free(struct scan *s);
/* Is the sample at REC's offset one of PMC ARG's (a struct pmcrec)? */
bool pmcstat_of_pmc(void *arg, const struct hwc_perfdata_record *rec);

typedef void sample_fn(void *arg, hwc_symbols *syms, const struct hwc_sample *smp,
		       const struct pmcrec *pmc);
int pmcstat_each_sample(const char *log, const struct scan *sc, unsigned flags, sample_fn *fn,
			void *arg);
bool pmcstat_kernel_sample(const struct hwc_sample *smp);

/* The children of N, most samples first (malloc'ed). */
struct rp_node **pmcstat_sorted_children(const struct rp_node *n, size_t *count);

#endif
