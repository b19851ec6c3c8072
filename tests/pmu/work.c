/* The hardware tests' workload: a loop of exactly 2 user instructions per
 * iteration (pmu.h), in the shapes the tests count.
 *   work loop N      N iterations
 *   work f1f2 N      f1 runs N iterations, f2 3N (a 1:3 profile)
 *   work spin        loops until killed */
#include "pmu.h"

__attribute__((noinline)) static void f1(uint64_t n)
{
	pmu_loop(n);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void f2(uint64_t n)
{
	pmu_loop(n);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "spin") == 0) {
		for (;;)
			pmu_loop(1000000);
	}
	if (argc != 3) {
		fprintf(stderr, "usage: work loop|f1f2 N | work spin\n");
		return 2;
	}
	char *end;
	uint64_t n = strtoull(argv[2], &end, 10);
	if (*end || !n) {
		fprintf(stderr, "work: bad count %s\n", argv[2]);
		return 2;
	}
	if (strcmp(argv[1], "loop") == 0) {
		pmu_loop(n);
	} else if (strcmp(argv[1], "f1f2") == 0) {
		/* Interleaved in slices, so that a sampling period sees both. */
		for (int i = 0; i < 100; i++) {
			f1(n / 100);
			f2(3 * n / 100);
		}
	} else {
		fprintf(stderr, "work: unknown mode %s\n", argv[1]);
		return 2;
	}
	return 0;
}
