/* libpmc's errors: -1 and errno, as pmc(3) says, plus a detail text per
 * thread (pmc_errdetail()) that carries libhwc's explanation. */
#include "pmc_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static __thread char detail[1024];

PMC_EXPORT const char *pmc_errdetail(void)
{
	return detail;
}

void pmc__call(void)
{
	detail[0] = '\0';
	__atomic_fetch_add(&pmc__stats.pm_syscalls, 1, __ATOMIC_RELAXED);
}

int pmc__fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	__atomic_fetch_add(&pmc__stats.pm_syscall_errors, 1, __ATOMIC_RELAXED);
	errno = err;
	return -1;
}

int pmc__fail_hwc(int err, const char *what)
{
	/* libhwc's detail says what to do; its errno becomes hwpmc's: an
	 * event this machine lacks is hwpmc(4)'s "a suitable PMC could not be
	 * allocated" (EINVAL); an absent device stays ENXIO. */
	int e = -err;
	if (e == ENOENT || e == EOPNOTSUPP)
		e = EINVAL;
	else if (e == ENODEV)
		e = ENXIO;
	else if (e == EACCES)
		e = EPERM;
	return pmc__fail(e, "%s: %s", what, hwc_errdetail()[0] ? hwc_errdetail() : strerror(-err));
}
