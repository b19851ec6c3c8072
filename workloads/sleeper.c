/* Sleep N times (default 100) for 1 ms each: N voluntary context switches.
 * Used by tests to cross-check context-switch counts against perf. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	if (n <= 0) {
		fprintf(stderr, "usage: sleeper [times]\n");
		return 2;
	}
	struct timespec ts = {0, 1000000};
	for (long i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	return 0;
}
