/* A workload for symbol aliases: each loop below has several names at one
 * address, as glibc's functions do (memrchr, __memrchr, __memrchr_ifunc).
 * perf names an address by one rule (a symbol that is not weak, then a
 * global, then the fewest leading underscores, then the longest name);
 * libdw by another (the first that binds most strongly).  The loops are
 * hot, so samples land in each.  Usage: aliases [seconds] (default 1). */
#include <stdlib.h>
#include <time.h>

/* A local and a weak name: perf names it spin_local, libdw spin_weak. */
__attribute__((noinline)) static unsigned long spin_local(unsigned long n)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++)
		x += i;
	return x;
}
unsigned long spin_weak(unsigned long n) __attribute__((weak, alias("spin_local")));

/* Two globals: perf names it churn, the one without leading underscores. */
unsigned long __churn(unsigned long n);
unsigned long churn(unsigned long n);
unsigned long spin_weak(unsigned long n);
__attribute__((noinline)) unsigned long __churn(unsigned long n)
{
	volatile unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x ^= x << 1 | i;
	return x;
}
unsigned long churn(unsigned long n) __attribute__((alias("__churn")));

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1);
	unsigned long sum = 0;
	while (now() < end)
		sum += spin_weak(100000) + churn(100000);
	return sum == 42;
}
