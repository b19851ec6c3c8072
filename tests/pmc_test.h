/* Helpers of the libpmc tests, which use only <pmc.h> and <pmclog.h>
 * (compiled with pkg-config, like any client). */
#ifndef PMC_TEST_H
#define PMC_TEST_H

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <pmc.h>
#include <pmclog.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A child that waits for release() and then runs FN (exit status its
 * return value), as pmcstat starts a command: attach first, then go. */
struct waiting {
	pid_t pid;
	int go;
};

static inline struct waiting spawn(int (*fn)(void *), void *arg)
{
	int p[2];
	if (pipe(p))
		abort();
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(98);
		_exit(fn(arg));
	}
	close(p[0]);
	return (struct waiting){pid, p[1]};
}

static inline void release(struct waiting w)
{
	if (write(w.go, "x", 1) != 1)
		abort();
	close(w.go);
}

static inline int reap(pid_t pid)
{
	int status = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

static inline int exec_argv(void *arg)
{
	char **argv = arg;
	execv(argv[0], argv);
	return 127;
}

/* Run CMD in a child that PMC ID (allocated, not running) follows from the
 * exec on, as pmcstat runs a command, to its end; the child's pid. */
static inline pid_t run_attached(pmc_id_t id, char **cmd)
{
	struct waiting w = spawn(exec_argv, cmd);
	if (pmc_attach(id, w.pid) || pmc_start(id)) {
		fprintf(stderr, "cannot attach or start: %s\n", pmc_errdetail());
		check_failures++;
	}
	release(w);
	reap(w.pid);
	return w.pid;
}

/* pmc_init() or exit with why. */
static inline void init_or_die(void)
{
	if (pmc_init() < 0) {
		fprintf(stderr, "pmc_init: %s: %s\n", strerror(errno), pmc_errdetail());
		exit(1);
	}
}

/* Run the calling thread on CPU alone: false when it may not. */
static inline bool pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

/* The rows of CPU that this process's PMCs hold, into OUT (up to MAX);
 * how many. */
static inline int own_rows(int cpu, struct pmc_info *out, int max)
{
	struct pmc_pmcinfo *pi;
	int n = 0;
	if (pmc_pmcinfo(cpu, &pi) < 0)
		return -1;
	for (int r = 0; r < pmc_npmc(cpu); r++)
		if (pi->pm_pmcs[r].pm_ownerpid == getpid() && n < max)
			out[n++] = pi->pm_pmcs[r];
	free(pi);
	return n;
}

/* pmc_allocate() or exit with why. */
static inline pmc_id_t alloc_or_die(const char *spec, enum pmc_mode mode, uint32_t flags, int cpu,
				    uint64_t count)
{
	pmc_id_t id;
	if (pmc_allocate(spec, mode, flags, cpu, &id, count) < 0) {
		fprintf(stderr, "pmc_allocate(%s, %s): %s: %s\n", spec, pmc_name_of_mode(mode),
			strerror(errno), pmc_errdetail());
		exit(1);
	}
	return id;
}

static inline pmc_value_t read_pmc(pmc_id_t id)
{
	pmc_value_t v = 0;
	CHECK_INT(pmc_read(id, &v), ==, 0);
	return v;
}

/* B - A in nanoseconds.  Whole nanoseconds: dividing the tv_nsec
 * difference alone truncates towards zero, which rounds up by up to 1 ms
 * whenever B is in a later second with a smaller tv_nsec. */
static inline int64_t ts_diff_ns(struct timespec a, struct timespec b)
{
	return (int64_t)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec);
}

/* A CPU-time spin of at least MS milliseconds of this thread's time; how
 * many nanoseconds of it CLOCK_THREAD_CPUTIME_ID measured. */
static inline int64_t spin_ms(long ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	volatile unsigned long x = 0;
	do {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while (ts_diff_ns(a, b) < ms * 1000000L);
	return ts_diff_ns(a, b);
}

/* How many times this thread has been switched out so far. */
static inline int64_t thread_switches(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru))
		abort();
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

#endif
