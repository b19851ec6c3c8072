/* Helpers of the libpmc tests, which use only <pmc.h> and <pmclog.h>
 * (compiled with pkg-config, like any client). */
#ifndef PMC_TEST_H
#define PMC_TEST_H

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <pmc.h>
#include <pmclog.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The most page faults touching N pages may take: sanitizer builds also
 * fault in their shadow memory. */
#define FAULTS_MAX(n) ((uint64_t)(n) + (uint64_t)(n) / 4 + 10)

/* A program of the build: $HWC_BUILD/workloads/NAME. */
static inline char *workload(const char *name)
{
	static char path[4][512];
	static int k;
	const char *build = getenv("HWC_BUILD");
	snprintf(path[k & 3], sizeof(path[0]), "%s/workloads/%s", build ? build : "build", name);
	return path[k++ & 3];
}

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

/* Everything written to stderr between the two calls. */
static int stderr_saved = -1;
static FILE *stderr_file;

static inline void stderr_capture(void)
{
	fflush(stderr);
	stderr_file = tmpfile();
	stderr_saved = dup(2);
	dup2(fileno(stderr_file), 2);
}

static inline const char *stderr_captured(void)
{
	static char buf[8192];
	fflush(stderr);
	dup2(stderr_saved, 2);
	close(stderr_saved);
	rewind(stderr_file);
	size_t n = fread(buf, 1, sizeof(buf) - 1, stderr_file);
	buf[n] = '\0';
	fclose(stderr_file);
	fputs(buf, stderr); /* still shown in the test's log */
	return buf;
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

/* A CPU-time spin of about MS milliseconds of this thread's time. */
static inline void spin_ms(long ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	volatile unsigned long x = 0;
	do {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

#endif
