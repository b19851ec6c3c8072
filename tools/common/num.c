/* Strict number parsing for the tools' options (num.h). */
#include "num.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* strtol and friends skip blanks and take a plus sign: a number here
 * starts with a digit of its base, or a minus sign and one. */
static int starts_number(const char *s, int base)
{
	if (*s == '-')
		s++;
	if (base == 16)
		return isxdigit((unsigned char)*s);
	return *s >= '0' && *s <= '9';
}

enum num_result num_llong(const char *s, int base, long long min, long long max, long long *out)
{
	if (!starts_number(s, base))
		return NUM_INVALID;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, base);
	if (end == s || *end)
		return NUM_INVALID;
	if ((errno == ERANGE && v < 0) || v < min)
		return NUM_SMALL;
	if (errno == ERANGE || v > max)
		return NUM_LARGE;
	*out = v;
	return NUM_OK;
}

enum num_result num_ullong(const char *s, int base, unsigned long long min, unsigned long long max,
			   unsigned long long *out)
{
	if (!starts_number(s, base))
		return NUM_INVALID;
	char *end;
	if (*s == '-') {
		errno = 0;
		(void)strtoll(s, &end, base);
		return end == s || *end ? NUM_INVALID : NUM_SMALL;
	}
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (end == s || *end)
		return NUM_INVALID;
	if (v < min)
		return NUM_SMALL;
	if (errno == ERANGE || v > max)
		return NUM_LARGE;
	*out = v;
	return NUM_OK;
}

enum num_result num_double(const char *s, double min, double max, double *out)
{
	/* Only decimal notation: strtod would also take "nan", "inf", "0x1p3". */
	if (!starts_number(s, 10) && !(s[0] == '.' && s[1] >= '0' && s[1] <= '9'))
		return NUM_INVALID;
	if (s[strspn(s, "0123456789.eE+-")])
		return NUM_INVALID;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end)
		return NUM_INVALID;
	/* ERANGE with a small result is an underflow: the value is near 0. */
	if (errno == ERANGE && (v >= 1 || v <= -1))
		return v < 0 ? NUM_SMALL : NUM_LARGE;
	if (!isfinite(v))
		return NUM_INVALID;
	if (v < min)
		return NUM_SMALL;
	if (v > max)
		return NUM_LARGE;
	*out = v;
	return NUM_OK;
}

const char *num_problem(enum num_result r)
{
	switch (r) {
	case NUM_SMALL: return "too small";
	case NUM_LARGE: return "too large";
	default: return "invalid";
	}
}
