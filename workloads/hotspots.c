/* The bundled workload with known hot functions: g() calls f1() and f2(),
 * and f2 does three times f1's work, so a profile should give f1 ~25% and
 * f2 ~75% of the samples, both under g (and g under main).  It also forks
 * one child per round and sleeps briefly, so recordings carry fork, exit and
 * context-switch records.  Usage: hotspots [rounds [f2-units]] (default 20
 * rounds, ~1 s; f2 does f2-units times f1's work, default 3: hwc diff's
 * tests change it to change the shares). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void f1(void);
void f2(void);
static unsigned long f2_units = 3;
void g(void);

static volatile unsigned long sink;

/* The same loop inlined into both, so the samples land in f1 and f2 and
 * their cost per unit of work is equal.  noipa below: no inlining or
 * cloning of f1, f2, g, so the profile shows exactly these names. */
__attribute__((always_inline)) static inline void work(unsigned long units)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < units * 1000000UL; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

/* f1 and f2 call mark() so they are not leaf functions: GCC gives leaf
 * functions no frame even with -fno-omit-frame-pointer, and a frame-pointer
 * unwinder would then skip their caller g. */
__attribute__((noipa)) static void mark(void)
{
	sink++;
}

__attribute__((noipa)) void f1(void)
{
	mark();
	work(1);
}

__attribute__((noipa)) void f2(void)
{
	mark();
	work(f2_units);
}

__attribute__((noipa)) void g(void)
{
	for (int i = 0; i < 10; i++) {
		f1();
		f2();
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20;
	long units = argc > 2 ? atol(argv[2]) : 3;
	if (rounds <= 0 || units <= 0) {
		fprintf(stderr, "usage: hotspots [rounds [f2-units]]\n");
		return 2;
	}
	f2_units = (unsigned long)units;
	struct timespec nap = {0, 1000000};
	for (long r = 0; r < rounds; r++) {
		g();
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		nanosleep(&nap, NULL);
	}
	printf("hotspots: %ld rounds done (%lu)\n", rounds, sink & 1);
	return 0;
}
