/* What the hardware tests share (arm64 only, run in the emulated machine of
 * scripts/pmu-vm, where -icount makes instruction counts exact). */
#ifndef HWC_PMU_TEST_H
#define HWC_PMU_TEST_H

#include "../check.h"

#include <sched.h>
#include <stdint.h>
#include <sys/stat.h>

/* Exactly 2*N user instructions for N >= 1: subs and b.ne per iteration. */
static inline __attribute__((always_inline)) void pmu_loop(uint64_t n)
{
	if (n)
		__asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
}

/* A check that A is within PPM parts per million of B (both printed). */
#define CHECK_NEAR(a, b, ppm)                                                            \
	do {                                                                             \
		double a__ = (double)(a), b__ = (double)(b);                             \
		double d__ = a__ > b__ ? a__ - b__ : b__ - a__;                          \
		if (!(d__ <= b__ * (ppm) / 1e6)) {                                       \
			fprintf(stderr, "%s:%d: %s = %.0f not within %g ppm of %s = %.0f\n", \
				__FILE__, __LINE__, #a, a__, (double)(ppm), #b, b__);    \
			check_failures++;                                                \
		}                                                                        \
	} while (0)

/* The tests need the PMU the kernel drives (armv8_pmuv3). */
static inline void require_pmu(void)
{
	struct stat st;
	if (stat("/sys/bus/event_source/devices/armv8_pmuv3", &st) != 0)
		SKIP("no armv8_pmuv3 PMU here (run in scripts/pmu-vm)");
}

/* 0.01%: the tolerance of exact counts, as the issue allows. */
#define EXACT_PPM 100

/* QEMU's instruction counter derives from the one instruction count of the
 * whole machine (its vCPUs run in turn on one thread): what the other vCPU
 * executes meanwhile can land in ours, a few thousand instructions now and
 * then.  It only ever adds, so the least of a few runs is the exact count. */
#define RUNS 5
#define MIN_OF_RUNS(expr)                                                                \
	({                                                                               \
		uint64_t min__ = UINT64_MAX;                                             \
		for (int run__ = 0; run__ < RUNS; run__++) {                             \
			uint64_t v__ = (expr);                                           \
			min__ = v__ < min__ ? v__ : min__;                               \
		}                                                                        \
		min__;                                                                   \
	})

/* COUNT(N) and COUNT(2N), each the least of RUNS runs, differ by exactly
 * the 2N instructions of N more loop iterations. */
static inline void check_doubling(const char *what, uint64_t (*count)(uint64_t), uint64_t n)
{
	uint64_t a = MIN_OF_RUNS(count(n)), b = MIN_OF_RUNS(count(2 * n));
	fprintf(stderr, "measured: %s, N = %" PRIu64 " and 2N: %" PRIu64 " %" PRIu64 " (difference %" PRIu64
		", exact %" PRIu64 ")\n", what, n, a, b, b - a, 2 * n);
	CHECK_NEAR(b - a, 2 * n, EXACT_PPM);
	CHECK_U64(a, >=, 2 * n);
}

/* kernel.perf_user_access: 1 lets user space read the counters of its own
 * events (the tests that read them set it, and set it back to 0). */
#define SYSCTL "/proc/sys/kernel/perf_user_access"
static inline int set_user_access(const char *v)
{
	FILE *f = fopen(SYSCTL, "w");
	if (!f)
		return -1;
	int ok = fputs(v, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Run on CPU 0 alone (children inherit it): the other vCPU stays idle. */
static inline void run_on_cpu0(void)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one) != 0)
		SKIP("cannot run on CPU 0 alone");
}

#endif
