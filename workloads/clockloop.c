/* Call clock_gettime(CLOCK_MONOTONIC) N times (default 20000000): a loop
 * whose time is spent in the vDSO.  Used by tests to check that [vdso]
 * samples are named as perf names them. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	if (n <= 0) {
		fprintf(stderr, "usage: clockloop [calls]\n");
		return 2;
	}
	struct timespec ts;
	long long sum = 0;
	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sum += ts.tv_nsec & 1;
	}
	printf("%lld\n", sum);
	return 0;
}
