/* Error reporting: -errno return values plus a per-thread detail text. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char detail[1024];

int hwc__fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return err;
}

int hwc__fail_text(int err, const char *text)
{
	size_t i = 0;
	for (; text[i] && i < sizeof(detail) - 1; i++)
		detail[i] = text[i];
	detail[i] = '\0';
	return err;
}

void hwc__fail_append(const char *fmt, ...)
{
	size_t len = strlen(detail);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail + len, sizeof(detail) - len, fmt, ap);
	va_end(ap);
}

void hwc__clear_error(void)
{
	detail[0] = '\0';
}

int hwc__fail_cleanup(int err, void (*cleanup)(void *arg), void *arg)
{
	char keep[sizeof(detail)];
	memcpy(keep, detail, sizeof(keep));
	cleanup(arg);
	memcpy(detail, keep, sizeof(detail));
	return err;
}

HWC_EXPORT const char *hwc_errdetail(void)
{
	return detail;
}

HWC_EXPORT const char *hwc_strerror(int err)
{
	if (err == 0)
		return "success";
	if (err > 0)
		err = -err;
	switch (-err) {
	case ENOENT:
		return "event not supported on this machine or not found";
	case EOPNOTSUPP:
		return "operation not supported by this PMU";
	case EACCES:
	case EPERM:
		return "permission denied";
	case ESRCH:
		return "no such process";
	case EINVAL:
		return "invalid argument";
	default:
		return strerror(-err);
	}
}

int hwc__reserve(void *pp, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 8;
	while (c < n)
		c *= 2;
	void **p = pp;
	void *q = realloc(*p, c * size);
	if (!q)
		return hwc__fail(-ENOMEM, "out of memory");
	*p = q;
	*cap = c;
	return 0;
}

int hwc__buf_printf(struct hwc__buf *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		size_t room = b->cap - b->len;
		int n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return 0;
		}
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *s = realloc(b->s, cap);
		if (!s)
			return hwc__fail(-ENOMEM, "out of memory");
		b->s = s;
		b->cap = cap;
	}
}

size_t hwc__edit_distance(const char *a, const char *b, size_t limit)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return limit + 1;
	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	size_t prev[65], cur[65];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		size_t best = cur[0];
		for (size_t j = 1; j <= lb; j++) {
			int ca = a[i - 1], cb = b[j - 1];
			if (ca >= 'A' && ca <= 'Z')
				ca += 32;
			if (cb >= 'A' && cb <= 'Z')
				cb += 32;
			size_t sub = prev[j - 1] + (ca != cb);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			if (cur[j] < best)
				best = cur[j];
		}
		if (best > limit)
			return limit + 1;
		memcpy(prev, cur, sizeof(size_t) * (lb + 1));
	}
	return prev[lb];
}
