/* perf's metric expression language (the MetricExpr and MetricThreshold
 * of its JSON tables), parsed once into a tree and evaluated as perf's
 * tools/perf/util/expr.y does.  Internal to libhwc; never installed.
 *
 * The language: numbers, NaN, identifiers (an event, "cpu@EVENT\,cmask\=1@"
 * whose @s stand for /s, "EVENT:u", a tool event such as duration_time, or
 * the name of another metric), #literals (#smt_on, #num_cores, #slots...),
 * + - * / % with their usual precedence, < > (no <= or ==), & | ^ (logical:
 * non-zero is true), unary -, parentheses, "A if COND else B" (lowest
 * precedence, else-branch may chain), min(A, B), max(A, B), d_ratio(A, B)
 * (0 when B is 0), source_count(ID), has_event(ID), strcmp_cpuid_str(ID).
 * A backslash escapes the next character; every ? in an identifier becomes
 * the runtime parameter (perf's, 0 unless a metric asks for more).
 * Division by zero gives NaN, as an unknown identifier does; NaN
 * propagates, as in perf. */
#ifndef HWC_METRIC_EXPR_H
#define HWC_METRIC_EXPR_H

#include <stdbool.h>

struct hwc__mexpr;

/* What an expression's names mean: supplied by the caller. */
struct hwc__mexpr_env {
	/* The value of identifier ID (an event or metric): NaN when unknown.
	 * SOURCE_COUNT: the number of counters summed into it instead. */
	double (*id_value)(void *arg, const char *id, bool source_count);
	/* The value of the literal NAME ("#smt_on", as written): NaN when it
	 * has none here. */
	double (*literal)(void *arg, const char *name);
	/* has_event(ID) and strcmp_cpuid_str(ID): 1 or 0. */
	double (*has_event)(void *arg, const char *id);
	double (*cpuid_match)(void *arg, const char *id);
	void *arg;
};

/* Parse TEXT; each ? in an identifier becomes RUNTIME.  0 with *OUT, or
 * -EINVAL with detail (what and where), -ENOMEM. */
int hwc__mexpr_parse(const char *text, int runtime, struct hwc__mexpr **out);
void hwc__mexpr_free(struct hwc__mexpr *e);

/* Call ADD(ARG, ID) once for each identifier whose value E needs, as perf
 * computes them: the branches a constant condition (#smt_on, a literal
 * comparison) rules out and operands a constant zero divisor discards
 * need nothing.  Literals are read from ENV (its id_value is not called).
 * 0, ADD's non-zero result, or -EINVAL with detail (an unknown literal,
 * % by a constant zero). */
int hwc__mexpr_ids(const struct hwc__mexpr *e, const struct hwc__mexpr_env *env,
		   int (*add)(void *arg, const char *id), void *arg);

/* Evaluate E: 0 with *OUT (NaN when a value it needs is unknown, as perf
 * shows it), or -EINVAL with detail (a literal without a value here, % by
 * zero). */
int hwc__mexpr_eval(const struct hwc__mexpr *e, const struct hwc__mexpr_env *env, double *out);

/* Is NAME ("#smt_on") one of the literals perf knows? */
bool hwc__mexpr_literal_known(const char *name);

#endif
