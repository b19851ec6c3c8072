/* err(3) for pmcstat and pmccontrol: the message, errno's text and, when
 * libpmc has one, its explanation of what it could not do
 * (pmc_errdetail(3)), then exit with code. */
#ifndef PMC_ERR_H
#define PMC_ERR_H

#include <errno.h>
#include <pmc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pmc_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void pmc_err(int code, const char *fmt, ...)
{
	int e = errno;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	const char *d = pmc_errdetail();
	fprintf(stderr, "%s: %s: %s%s%s\n", program_invocation_short_name, msg, strerror(e),
		*d ? ": " : "", d);
	exit(code);
}

#endif
