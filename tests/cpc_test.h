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

/* Check that FN returns 0 run as nobody; when not root (who alone can
 * become nobody), or nobody may not count, the calling test says that it
 * skips. */
#define CHECK_AS_NOBODY(fn)                                                              \
	do {                                                                             \
		if (geteuid() != 0)                                                      \
			fprintf(stderr, "%s: skipped, needs root to become nobody\n", __func__); \
		else if (nobody_cannot_count())                                          \
			fprintf(stderr, "%s: skipped: %s\n", __func__, nobody_cannot_count()); \
		else                                                                     \
			CHECK_INT(as_nobody(fn), ==, 0);                                 \
	} while (0)

/* What libcpc last reported through record_error(), the handler of the
 * handles open_cpc() opens. */
static int last_subcode;
static char last_fn[64], last_msg[1024];

static inline void record_error(const char *fn, int subcode, const char *fmt, va_list ap)
{
	last_subcode = subcode;
	snprintf(last_fn, sizeof(last_fn), "%s", fn);
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
}

static inline cpc_t *open_cpc(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	if (!cpc) {
		perror("cpc_open");
		exit(1);
	}
	cpc_seterrhndlr(cpc, record_error);
	return cpc;
}

static inline int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* The state letter of PID in /proc, or 0 when it is gone. */
static inline char proc_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[1] ? p[2] : 0;
}

#endif
