/* Helpers of the libcpc and libpctx tests, which use only <libcpc.h> and
 * <libpctx.h> (compiled with pkg-config, like any client). */
#ifndef CPC_TEST_H
#define CPC_TEST_H

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <libcpc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* The most page faults touching N pages may take: sanitizer builds also
 * fault in their shadow memory. */
#define FAULTS_MAX(n) ((uint64_t)(n) + (uint64_t)(n) / 4 + 10)

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

/* A program of the build: $HWC_BUILD/workloads/NAME. */
static inline char *workload(const char *name)
{
	static char path[4][512];
	static int k;
	const char *build = getenv("HWC_BUILD");
	snprintf(path[k & 3], sizeof(path[0]), "%s/workloads/%s", build ? build : "build", name);
	return path[k++ & 3];
}

/* Run FN in a child as nobody; its exit status (0 = all its checks passed). */
static inline int as_nobody(int (*fn)(void))
{
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(99);
		_exit(fn());
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static inline int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

#endif
