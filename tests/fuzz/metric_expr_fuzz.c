/* libFuzzer harness for the metric expression engine (src/metric_expr.c):
 * parse the input as a MetricExpr, then find the events it needs and
 * evaluate it under two sets of values (events that count, events that
 * are zero or unknown), as metric.c does.  A refused expression must say
 * why.  Built and run by tests/fuzz.sh, seeded with the MetricExpr and
 * MetricThreshold texts of a few models of perf's tree. */
#include "internal.h"
#include "metric_expr.h"

#include <hwc/hwc.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A value for every name, fixed by its text: counts, zeros, NaN, huge. */
static double hashed(const char *s, int pass)
{
	uint32_t h = 2166136261u + (uint32_t)pass;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	static const double v[] = {0, 1, 7, 1e9, -3, 0.5, NAN, 1e300, -1e300, INFINITY};
	return pass ? v[h % 10] : (double)(h % 1000 + 1);
}

static double id_value(void *arg, const char *id, bool source_count)
{
	return source_count ? 1 : hashed(id, *(int *)arg);
}

static double literal(void *arg, const char *name)
{
	return hashed(name, *(int *)arg);
}

static double yes_no(void *arg, const char *id)
{
	return (double)(hashed(id, *(int *)arg) > 500);
}

static int add(void *arg, const char *id)
{
	size_t *n = arg;
	*n += strlen(id) > 0;
	return 0;
}

static void detail_said(void)
{
	if (!strstr(hwc_errdetail(), "metric expression") && !strstr(hwc_errdetail(), "literal") &&
	    !strstr(hwc_errdetail(), "out of memory"))
		abort(); /* a refusal that does not say why */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct hwc__mexpr *e;
	hwc__clear_error();
	if (hwc__mexpr_parse(text, size % 3, &e)) {
		detail_said();
		free(text);
		return 0;
	}
	for (int pass = 0; pass < 2; pass++) {
		struct hwc__mexpr_env env = {id_value, literal, yes_no, yes_no, &pass};
		size_t n = 0;
		double v;
		hwc__clear_error();
		if (hwc__mexpr_ids(e, &env, add, &n))
			detail_said();
		hwc__clear_error();
		if (hwc__mexpr_eval(e, &env, &v))
			detail_said();
	}
	hwc__mexpr_free(e);
	free(text);
	return 0;
}
