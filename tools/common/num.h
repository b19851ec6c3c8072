/* Strict parsing of the numbers the tools' options take, shared by every
 * tool: the whole string is the number (no blanks, no trailing text), and
 * it must lie in the range the option accepts.  NaN, infinities and values
 * that overflow are refused, never clamped. */
#ifndef TOOLS_NUM_H
#define TOOLS_NUM_H

enum num_result {
	NUM_OK,
	NUM_INVALID, /* not a number of this kind at all */
	NUM_SMALL,   /* below the range (or overflowing negative) */
	NUM_LARGE,   /* above the range (or overflowing) */
};

/* An integer in BASE (as strtoll: 0 takes 0x.. and 0.. prefixes) from MIN
 * to MAX.  *OUT is set only on NUM_OK. */
enum num_result num_llong(const char *s, int base, long long min, long long max, long long *out);
/* The same, unsigned: a minus sign is NUM_SMALL (strtoull would wrap it). */
enum num_result num_ullong(const char *s, int base, unsigned long long min, unsigned long long max,
			   unsigned long long *out);
/* A finite decimal number ("2", "0.25", "1e3") from MIN to MAX; "nan",
 * "inf" and hexadecimal floats are NUM_INVALID. */
enum num_result num_double(const char *s, double min, double max, double *out);

/* "invalid", "too small" or "too large", for messages. */
const char *num_problem(enum num_result r);

#endif
