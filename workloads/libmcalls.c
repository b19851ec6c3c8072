/* A hot loop that calls libm through the PLT (built without -fno-plt, as
 * the workloads are), so a profile has samples in the PLT stubs, which
 * perf names "fabs@plt" and "sin@plt".  fabs is declared under another
 * name so that GCC calls libm's instead of inlining its own: its body is
 * two instructions, which gives the stub a large share.
 * Usage: libmcalls [millions of calls] (default 100). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

extern double libm_fabs(double) __asm__("fabs");

static volatile double in = -0.5;

int main(int argc, char **argv)
{
	long n = (argc > 1 ? atol(argv[1]) : 100) * 1000000L;
	double x = in, sum = 0;
	for (long i = 0; i < n; i++) {
		sum += libm_fabs(x);
		if ((i & 255) == 0)
			sum += sin(sum);
	}
	printf("%g\n", sum);
	return 0;
}
