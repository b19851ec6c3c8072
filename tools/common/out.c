/* Write errors of the tools' output (out.h). */
#include "out.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *program;
static int failure_status = 1;

/* The first write error of a few streams: the reason ferror() lacks. */
static struct {
	FILE *f;
	int err;
} errors[4];

static void remember(FILE *f, int err)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		if (errors[i].f == f)
			return;
		if (!errors[i].f) {
			errors[i].f = f;
			errors[i].err = err;
			return;
		}
	}
}

static void forget(FILE *f)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].f == f)
			errors[i].f = NULL;
}

/* The errno of F's first error, if it is known. */
static int remembered(FILE *f)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].f == f)
			return errors[i].err;
	return 0;
}

int out_flush(FILE *f)
{
	/* A line-buffered stream fails inside fprintf: errno is still its. */
	if (ferror(f))
		remember(f, errno ? errno : -1);
	errno = 0;
	if (fflush(f) == 0 && !ferror(f))
		return 0;
	remember(f, errno ? errno : -1);
	return EOF;
}

void out_failed(FILE *f, int err)
{
	remember(f, err);
}

/* Flush and close (or only flush) F: 0, the errno of its first error, or
 * -1 when it failed for a reason no longer known. */
static int finish(FILE *f, int close_it)
{
	int err = remembered(f);
	forget(f);
	/* Failed since the last out_flush().  errno may be a later call's by
	 * now (hwc list reads sysfs between its writes), so where output is
	 * still buffered the file is asked again: that meets the same failure.
	 * Otherwise the failing write was the last thing written, and errno is
	 * still its own unless a call since then failed too. */
	if (!err && ferror(f)) {
		int stale = errno;
		if (__fpending(f) > 0) {
			clearerr(f);
			errno = 0;
			if (fflush(f) != 0 && errno)
				stale = errno;
		}
		err = stale ? stale : -1;
	}
	errno = 0;
	if (fflush(f) != 0 && !err)
		err = errno ? errno : -1;
	errno = 0;
	if (close_it && fclose(f) != 0 && !err)
		/* EBADF: stdout was closed before we started; nothing written. */
		err = errno == EBADF ? 0 : errno ? errno : -1;
	return err;
}

static void report(const char *name, int err)
{
	const char *p = program ? program : program_invocation_short_name;
	fprintf(stderr, "%s: %s%swrite error%s%s\n", p, name ? name : "", name ? ": " : "",
		err > 0 ? ": " : "", err > 0 ? strerror(err) : "");
}

int out_close(FILE *f, const char *name)
{
	bool std = f == stdout || f == stderr;
	int err = finish(f, !std);
	if (!err)
		return 0;
	report(name, err);
	/* Said once: the check at exit finds nothing more to report. */
	if (std)
		clearerr(f);
	return -1;
}

static void close_stdout(void)
{
	int err = finish(stdout, 1);
	if (err) {
		report(NULL, err);
		fflush(stderr);
		_exit(failure_status);
	}
}

void out_init(const char *prog, int status)
{
	static int registered;
	program = prog;
	failure_status = status;
	if (!registered)
		atexit(close_stdout);
	registered = 1;
}
