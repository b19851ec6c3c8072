/* Shared by the benchmark programs: a monotonic clock in ns, a median, and
 * the software events both libhwc and PAPI can name whose read is a plain
 * counter fetch in the kernel (no clock arithmetic to hide a library's own
 * cost); the last two repeat earlier events under other names, as PAPI
 * offers no more such events. */
#ifndef HWC_BENCH_H
#define HWC_BENCH_H

#include <stdlib.h>
#include <time.h>

static const char *const bench_sw_events[8] = {"page-faults",  "context-switches", "cpu-migrations",
					       "minor-faults", "major-faults",     "cgroup-switches",
					       "faults",       "cs"};
static const char *const bench_papi_events[8] = {
	"perf::PAGE-FAULTS",  "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS",
	"perf::MINOR-FAULTS", "perf::MAJOR-FAULTS",     "perf::CGROUP-SWITCHES",
	"perf::FAULTS",       "perf::CS"};

static inline double bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Sorts V in place. */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return v[n / 2];
}

#endif
