/* The metric expression engine (src/metric_expr.c) on perf's own metric
 * expressions: a table of them from tools/perf/pmu-events/arch with fixed
 * counter values and results worked out by hand, the events each needs,
 * the syntax errors, and every MetricExpr and MetricThreshold of the JSON
 * tree (HWC_EVENTS_DIR, else /usr/local/share/hwc-test/events): each
 * parses, and the events it needs are exactly the names a plain scan of
 * its text finds. */
#include "check.h"
#include "internal.h"
#include "metric_expr.h"

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ fixed values */

static const struct {
	const char *id;
	double v;
} values[] = {
	{ "IDQ_UOPS_NOT_DELIVERED.CORE", 300 },
	{ "tma_info_thread_slots", 1000 },
	{ "tma_frontend_bound", 0.3 },
	{ "UOPS_ISSUED.ANY", 500 },
	{ "INT_MISC.RECOVERY_CYCLES_ANY", 20 },
	{ "INT_MISC.RECOVERY_CYCLES", 7 },
	{ "CPU_CLK_UNHALTED.THREAD", 1000 },
	{ "CPU_CLK_UNHALTED.THREAD_ANY", 1800 },
	{ "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", 30 },
	{ "CPU_CLK_UNHALTED.REF_XCLK", 100 },
	{ "CPU_CLK_UNHALTED.REF_XCLK_ANY", 200 },
	{ "CPU_CLK_UNHALTED.THREAD_P:k", 250 },
	{ "tma_info_thread_clks", 800 },
	{ "cpu@OFFCORE_REQUESTS_OUTSTANDING.ALL_DATA_RD,cmask=4@", 400 },
	{ "tma_machine_clears", 0.2 },
	{ "MACHINE_CLEARS.MEMORY_ORDERING", 10 },
	{ "MACHINE_CLEARS.COUNT", 40 },
	{ "MACHINE_CLEARS.ZERO", 0 },
	{ "cycles-t", 500 },
	{ "cycles-ct", 200 },
	{ "cycles", 1000 },
	{ "L1D.REPLACEMENT", 1e9 },
	{ "duration_time", 2 },
	{ "de_no_dispatch_per_slot.backend_stalls", 600 },
	{ "total_dispatch_slots", 2000 },
	{ "zero_slots", 0 },
	{ "stall_slot_frontend", 1500 },
	{ "cpu_cycles", 1000 },
	{ "topdown-fe-bound", 200 },
	{ "topdown-bad-spec", 100 },
	{ "topdown-retiring", 400 },
	{ "topdown-be-bound", 300 },
	{ "INT_MISC.UOP_DROPPING", 50 },
	{ "cstate_core@c6-residency@", 300 },
	{ "TSC", 1000 },
	{ "tma_cisc", 0.2 },
	{ "tma_microcode_sequencer", 0.06 },
	{ "tma_heavy_operations", 0.05 },
	{ "cpu_atom@CPU_CLK_UNHALTED.CORE@", 3000 },
	{ "cpu_atom@CPU_CLK_UNHALTED.REF_TSC@", 2000 },
	{ "tma_info_system_cpus_utilized", 3 },
	{ "uncore_imc_0@cas_count_read@", 7 },
};

struct fixed {
	double smt_on, core_wide, slots, cpus_online;
	bool has_event;
};

static double fixed_id(void *arg, const char *id, bool source_count)
{
	(void)arg;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (!strcmp(values[i].id, id))
			return source_count ? 2 : values[i].v;
	return NAN;
}

static double fixed_literal(void *arg, const char *name)
{
	const struct fixed *f = arg;
	if (!strcasecmp(name, "#smt_on"))
		return f->smt_on;
	if (!strcmp(name, "#core_wide"))
		return f->core_wide;
	if (!strcmp(name, "#slots"))
		return f->slots;
	if (!strcmp(name, "#num_cpus_online"))
		return f->cpus_online;
	return NAN;
}

static double fixed_has_event(void *arg, const char *id)
{
	const struct fixed *f = arg;
	return f->has_event && !isnan(fixed_id(NULL, id, false));
}

static double fixed_cpuid(void *arg, const char *id)
{
	(void)arg;
	return !strcmp(id, "0x00000000410fd0c0");
}

static int add_id(void *arg, const char *id)
{
	char *list = arg;
	size_t len = strlen(list);
	snprintf(list + len, 1024 - len, "%s%s", len ? " " : "", id);
	return 0;
}

/* EXPR with the fixed values and literals gives WANT (NaN: NaN), and needs
 * exactly the events IDS (space-separated, in order of first use). */
static int check_expr(int line, const char *expr, struct fixed f, double want, const char *ids)
{
	struct hwc__mexpr_env env = { fixed_id, fixed_literal, fixed_has_event, fixed_cpuid, &f };
	struct hwc__mexpr *e;
	int failures = 0;
	if (hwc__mexpr_parse(expr, 0, &e)) {
		fprintf(stderr, "line %d: %s: %s\n", line, expr, hwc_errdetail());
		return 1;
	}
	double got;
	int rc = hwc__mexpr_eval(e, &env, &got);
	bool same = isnan(want) ? isnan(got) : fabs(got - want) <= 1e-9 * fmax(1, fabs(want));
	if (rc || !same) {
		fprintf(stderr, "line %d: %s = %.12g (rc %d), expected %.12g\n", line, expr, got, rc,
			want);
		failures++;
	}
	char list[1024] = "";
	if (hwc__mexpr_ids(e, &env, add_id, list) || strcmp(list, ids)) {
		fprintf(stderr, "line %d: %s needs \"%s\", expected \"%s\"\n", line, expr, list, ids);
		failures++;
	}
	hwc__mexpr_free(e);
	return failures;
}

#define SMT ((struct fixed){ .smt_on = 1, .core_wide = 1, .slots = 5, .cpus_online = 4, .has_event = true })
#define NOSMT ((struct fixed){ .smt_on = 0, .core_wide = 0, .slots = 5, .cpus_online = 4, .has_event = false })
#define EXPR(expr, f, want, ids) failures += check_expr(__LINE__, expr, f, want, ids)

static void test_perf_expressions(void)
{
	int failures = 0;
	/* skylake tma_frontend_bound and its threshold */
	EXPR("IDQ_UOPS_NOT_DELIVERED.CORE / tma_info_thread_slots", SMT, 0.3,
	     "IDQ_UOPS_NOT_DELIVERED.CORE tma_info_thread_slots");
	EXPR("tma_frontend_bound > 0.15", SMT, 1, "tma_frontend_bound");
	/* skylake tma_backend_bound: #SMT_on picks the events */
	EXPR("1 - tma_frontend_bound - (UOPS_ISSUED.ANY + 4 * (INT_MISC.RECOVERY_CYCLES_ANY / 2 if "
	     "#SMT_on else INT_MISC.RECOVERY_CYCLES)) / tma_info_thread_slots",
	     SMT, 1 - 0.3 - (500 + 4 * 10) / 1000.0,
	     "tma_frontend_bound UOPS_ISSUED.ANY INT_MISC.RECOVERY_CYCLES_ANY tma_info_thread_slots");
	EXPR("1 - tma_frontend_bound - (UOPS_ISSUED.ANY + 4 * (INT_MISC.RECOVERY_CYCLES_ANY / 2 if "
	     "#SMT_on else INT_MISC.RECOVERY_CYCLES)) / tma_info_thread_slots",
	     NOSMT, 1 - 0.3 - (500 + 4 * 7) / 1000.0,
	     "tma_frontend_bound UOPS_ISSUED.ANY INT_MISC.RECOVERY_CYCLES tma_info_thread_slots");
	/* skylake tma_info_core_core_clks: #core_wide, then #SMT_on */
	const char *core_clks =
		"(CPU_CLK_UNHALTED.THREAD / 2 * (1 + CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE / "
		"CPU_CLK_UNHALTED.REF_XCLK) if #core_wide < 1 else (CPU_CLK_UNHALTED.THREAD_ANY / 2 "
		"if #SMT_on else tma_info_thread_clks))";
	EXPR(core_clks, NOSMT, 1000 / 2.0 * (1 + 30 / 100.0),
	     "CPU_CLK_UNHALTED.THREAD CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE CPU_CLK_UNHALTED.REF_XCLK");
	EXPR(core_clks, SMT, 900, "CPU_CLK_UNHALTED.THREAD_ANY");
	/* skylake tma_info_system_smt_2t_utilization: nothing needed without SMT */
	const char *smt2t = "(1 - CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE / (CPU_CLK_UNHALTED.REF_XCLK_ANY "
			    "/ 2) if #SMT_on else 0)";
	EXPR(smt2t, SMT, 1 - 30 / 100.0,
	     "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE CPU_CLK_UNHALTED.REF_XCLK_ANY");
	EXPR(smt2t, NOSMT, 0, "");
	/* skylake tma_mem_bandwidth: min() and an escaped cpu@...@ event */
	EXPR("min(CPU_CLK_UNHALTED.THREAD, cpu@OFFCORE_REQUESTS_OUTSTANDING.ALL_DATA_RD\\,cmask\\=4@) "
	     "/ tma_info_thread_clks",
	     SMT, 400 / 800.0,
	     "CPU_CLK_UNHALTED.THREAD cpu@OFFCORE_REQUESTS_OUTSTANDING.ALL_DATA_RD,cmask=4@ "
	     "tma_info_thread_clks");
	/* skylake tma_other_nukes: max(); a division by zero is NaN, and
	 * max(NaN, x) is x, as in perf */
	EXPR("max(tma_machine_clears * (1 - MACHINE_CLEARS.MEMORY_ORDERING / MACHINE_CLEARS.COUNT), "
	     "0.0001)",
	     SMT, 0.2 * 0.75, "tma_machine_clears MACHINE_CLEARS.MEMORY_ORDERING MACHINE_CLEARS.COUNT");
	EXPR("max(tma_machine_clears * (1 - MACHINE_CLEARS.MEMORY_ORDERING / MACHINE_CLEARS.ZERO), "
	     "0.0001)",
	     SMT, 0.0001, "tma_machine_clears MACHINE_CLEARS.MEMORY_ORDERING MACHINE_CLEARS.ZERO");
	/* skylake tsx_aborted_cycles: has_event() decides */
	const char *tsx = "(max(cycles\\-t - cycles\\-ct, 0) / cycles if has_event(cycles\\-t) else 0)";
	EXPR(tsx, SMT, 0.3, "cycles-t cycles-ct cycles");
	EXPR(tsx, NOSMT, 0, "");
	/* skylake tma_info_memory_l1d_cache_fill_bw: duration_time */
	EXPR("64 * L1D.REPLACEMENT / 1e9 / duration_time", SMT, 32, "L1D.REPLACEMENT duration_time");
	/* skylake tma_info_system_kernel_utilization: a modifier */
	EXPR("CPU_CLK_UNHALTED.THREAD_P:k / CPU_CLK_UNHALTED.THREAD", SMT, 0.25,
	     "CPU_CLK_UNHALTED.THREAD_P:k CPU_CLK_UNHALTED.THREAD");
	/* skylake C6_Core_Residency: an escaped - in a PMU event */
	EXPR("cstate_core@c6\\-residency@ / TSC", SMT, 0.3, "cstate_core@c6-residency@ TSC");
	/* skylake tma_cisc's threshold: & binds tighter than |, looser than > */
	EXPR("tma_cisc > 0.1 & (tma_microcode_sequencer > 0.05 & tma_heavy_operations > 0.1)", SMT, 0,
	     "tma_cisc tma_microcode_sequencer tma_heavy_operations");
	EXPR("tma_cisc > 0.1 & tma_microcode_sequencer > 0.05 | tma_heavy_operations > 0.1", SMT, 1,
	     "tma_cisc tma_microcode_sequencer tma_heavy_operations");
	/* amdzen4 backend_bound: d_ratio is 0 on a zero divisor */
	EXPR("d_ratio(de_no_dispatch_per_slot.backend_stalls, total_dispatch_slots)", SMT, 0.3,
	     "de_no_dispatch_per_slot.backend_stalls total_dispatch_slots");
	EXPR("d_ratio(de_no_dispatch_per_slot.backend_stalls, zero_slots)", SMT, 0,
	     "de_no_dispatch_per_slot.backend_stalls zero_slots");
	EXPR("d_ratio(de_no_dispatch_per_slot.backend_stalls, 0)", SMT, 0, "");
	/* arm64 sbsa frontend_bound: #slots */
	EXPR("100 * (stall_slot_frontend / (#slots * cpu_cycles))", SMT, 30,
	     "stall_slot_frontend cpu_cycles");
	/* sapphirerapids tma_frontend_bound: topdown-* with escaped dashes */
	EXPR("topdown\\-fe\\-bound / (topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring "
	     "+ topdown\\-be\\-bound) - INT_MISC.UOP_DROPPING / tma_info_thread_slots",
	     SMT, 0.2 - 0.05,
	     "topdown-fe-bound topdown-bad-spec topdown-retiring topdown-be-bound "
	     "INT_MISC.UOP_DROPPING tma_info_thread_slots");
	/* sapphirerapids tma_info_system_cpu_utilization: #num_cpus_online */
	EXPR("tma_info_system_cpus_utilized / #num_cpus_online", SMT, 0.75,
	     "tma_info_system_cpus_utilized");
	/* alderlake tma_info_system_turbo_utilization: a hybrid PMU prefix */
	EXPR("cpu_atom@CPU_CLK_UNHALTED.CORE@ / cpu_atom@CPU_CLK_UNHALTED.REF_TSC@", SMT, 1.5,
	     "cpu_atom@CPU_CLK_UNHALTED.CORE@ cpu_atom@CPU_CLK_UNHALTED.REF_TSC@");
	/* powerpc-style ? parameter (runtime 0), source_count, strcmp_cpuid_str */
	EXPR("uncore_imc_?@cas_count_read@ * source_count(cycles)", SMT, 14,
	     "uncore_imc_0@cas_count_read@ cycles");
	EXPR("1 if strcmp_cpuid_str(0x00000000410fd0c0) else cycles", SMT, 1, "");
	/* the grammar itself */
	EXPR("1 + 2 * 3", SMT, 7, "");
	EXPR("-2 * 3 + 10 - 4 - 3", SMT, -3, "");
	EXPR("8 / 4 / 2 + 7 % 4", SMT, 4, "");
	EXPR("1 < 2 & 3 > 4", SMT, 0, "");
	EXPR("1 | 0 ^ 1", SMT, 1, "");
	EXPR("2 if 0 else 3 if 1 else 4", SMT, 3, "");
	EXPR("3 if NaN else 4", SMT, 3, "");
	EXPR("1 / 0", SMT, NAN, "");
	EXPR("1e3 + 2.5e-1 + .5", SMT, 1000.75, "");
	EXPR("no_such_event + 1", SMT, NAN, "no_such_event");
	EXPR("0 | cycles", SMT, 1, "cycles"); /* logical: a count is true */
	EXPR("1 | cycles", SMT, 1, "");
	EXPR("cycles if 1 else cycles\\-t", SMT, 1000, "cycles");
	EXPR("min(2, 3) + max(2, 3)", SMT, 5, "");
	EXPR("ifx + maxed", SMT, NAN, "ifx maxed"); /* keywords only as whole words */
	/* % on the integer parts, as perf's (long)A % (long)B, less its
	 * undefined conversions (found by tests/fuzz.sh) */
	EXPR("7.9 % 4 + -7 % 4", SMT, 0, "");
	EXPR("no_such_event % 3", SMT, NAN, "no_such_event");
	EXPR("1 / 0 % 3 + 3 % (1 / 0)", SMT, NAN, "");
	EXPR("1e19 % 7 + 7 % -1e19", SMT, NAN, "");       /* past long's range: unknown */
	EXPR("-9223372036854775808 % -1", SMT, 0, "");     /* LONG_MIN % -1 */
	EXPR("cycles % 1e300", SMT, NAN, "cycles");
	CHECK_INT(failures, ==, 0);
}

static void test_errors(void)
{
	static const char *const bad[] = {
		"", "1 +", "(1", "1)", "min(1)", "max(1, 2", "#bogus", "1 if 2", "1 else 2",
		"a $ b", "has_event(1)", "d_ratio(a b)", "# + 1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hwc__mexpr *e = NULL;
		int rc = hwc__mexpr_parse(bad[i], 0, &e);
		if (rc != -EINVAL || e)
			fprintf(stderr, "\"%s\": rc %d\n", bad[i], rc);
		CHECK_INT(rc, ==, -EINVAL);
		CHECK_STR_CONTAINS(hwc_errdetail(), "metric expression");
		hwc__mexpr_free(e);
	}
	/* What parses but cannot be evaluated: % by zero, a literal this
	 * machine has no value for. */
	struct fixed f = { .smt_on = 1, .slots = NAN };
	struct hwc__mexpr_env env = { fixed_id, fixed_literal, fixed_has_event, fixed_cpuid, &f };
	struct hwc__mexpr *e;
	double v;
	CHECK_OK(hwc__mexpr_parse("cycles % 0", 0, &e));
	CHECK_INT(hwc__mexpr_eval(e, &env, &v), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "% by zero");
	hwc__mexpr_free(e);
	/* A divisor whose integer part is 0: perf's conversion divides by 0. */
	CHECK_OK(hwc__mexpr_parse("cycles % 0.5", 0, &e));
	CHECK_INT(hwc__mexpr_eval(e, &env, &v), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "% by zero (0.5 as an integer)");
	CHECK_INT(hwc__mexpr_ids(e, &env, add_id, (char[1024]){""}), ==, -EINVAL);
	hwc__mexpr_free(e);
	CHECK_OK(hwc__mexpr_parse("cycles / #slots", 0, &e));
	CHECK_INT(hwc__mexpr_eval(e, &env, &v), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "#slots has no value");
	hwc__mexpr_free(e);
}

/* TIMES copies of HEAD, then MIDDLE, then TIMES copies of TAIL. */
static char *repeated(const char *head, size_t times, const char *middle, const char *tail)
{
	size_t h = strlen(head), m = strlen(middle), t = strlen(tail);
	char *s = malloc(times * (h + t) + m + 1), *p = s;
	if (!s)
		abort();
	for (size_t i = 0; i < times; i++)
		p = mempcpy(p, head, h);
	p = mempcpy(p, middle, m);
	for (size_t i = 0; i < times; i++)
		p = mempcpy(p, tail, t);
	*p = 0;
	return s;
}

/* Nesting and chains past what the recursion may take are refused, with
 * detail, not a stack overflow (found by tests/fuzz.sh); what perf's
 * metrics use (8 levels of parentheses, some 60 operators) parses. */
static void test_depth(void)
{
	static const struct {
		const char *head, *middle, *tail;
		size_t ok, bad;
		const char *why;
	} cases[] = {
		{ "(", "x", ")", 60, 1000000, "nested more than 64 deep" },
		{ "-", "x", "", 60, 1000000, "nested more than 64 deep" },
		{ "min(1, ", "x", ")", 60, 1000000, "nested more than 64 deep" },
		{ "1 if x else ", "2", "", 60, 1000000, "nested more than 64 deep" },
		{ "x + ", "1", "", 250, 1000000, "more than 256 operators chained" },
		{ "x * (", "1", ")", 60, 1000000, "nested more than 64 deep" },
	};
	struct fixed f = SMT;
	struct hwc__mexpr_env env = { fixed_id, fixed_literal, fixed_has_event, fixed_cpuid, &f };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *ok = repeated(cases[i].head, cases[i].ok, cases[i].middle, cases[i].tail);
		char *bad = repeated(cases[i].head, cases[i].bad, cases[i].middle, cases[i].tail);
		struct hwc__mexpr *e = NULL;
		double v;
		CHECK_OK(hwc__mexpr_parse(ok, 0, &e));
		if (e) {
			CHECK_OK(hwc__mexpr_eval(e, &env, &v));
			CHECK_OK(hwc__mexpr_ids(e, &env, add_id, (char[1024]){""}));
		}
		hwc__mexpr_free(e);
		e = NULL;
		CHECK_INT(hwc__mexpr_parse(bad, 0, &e), ==, -EINVAL);
		CHECK(e == NULL);
		CHECK_STR_CONTAINS(hwc_errdetail(), cases[i].why);
		hwc__mexpr_free(e);
		free(ok);
		free(bad);
	}
}

/* ------------------------------------------------------------ the whole tree */

/* Every name in TEXT as a plain scan sees it: runs between operators,
 * spaces, parentheses and commas (a backslash escapes), less numbers,
 * literals and keywords; ? made 0. */
static void scan_names(const char *text, char *out, size_t size)
{
	static const char *const keywords[] = {
		"if", "else", "min", "max", "d_ratio", "source_count", "has_event",
		"strcmp_cpuid_str", "NaN",
	};
	char tok[512];
	size_t n = 0, len = 0;
	out[0] = 0;
	for (const char *p = text;; p++) {
		bool number = n && strspn(tok, "0123456789.e") == n && tok[0] != 'e';
		if (*p == '\\' && p[1]) {
			if (n < sizeof(tok) - 1)
				tok[n++] = *++p;
			continue;
		}
		if (*p == '-' && number && tok[n - 1] == 'e') { /* 1e-9 */
			tok[n++] = '-';
			continue;
		}
		if (*p && !strchr(" \t\n()+*/%|^&<>,-", *p)) {
			if (*p == '?') {
				tok[n++] = '0';
			} else if (n < sizeof(tok) - 1) {
				tok[n++] = *p;
			}
			continue;
		}
		tok[n] = 0;
		bool skip = !n || tok[0] == '#' || number || (tok[0] >= '0' && tok[0] <= '9' &&
							       strspn(tok, "0123456789.e-") == n);
		for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]) && !skip; k++)
			skip = !strcmp(tok, keywords[k]);
		/* the argument of has_event() and strcmp_cpuid_str() is no value */
		const char *before = p - n - 1;
		while (before > text && *before == ' ')
			before--;
		if (!skip && before >= text && *before == '(') {
			const char *w = before;
			while (w > text && (w[-1] == '_' || (w[-1] >= 'a' && w[-1] <= 'z')))
				w--;
			skip = (before - w == 9 && !strncmp(w, "has_event", 9)) ||
			       (before - w == 16 && !strncmp(w, "strcmp_cpuid_str", 16));
		}
		char key[600];
		snprintf(key, sizeof(key), "|%s|", tok);
		if (!skip && !strstr(out, key))
			len += (size_t)snprintf(out + len, size - len, "%s%s|", len ? "" : "|", tok);
		n = 0;
		if (!*p)
			break;
	}
}

struct walk {
	size_t files, exprs, ids, mismatches, failures;
};

struct idset {
	char text[8192];
};

static int add_unique(void *arg, const char *id)
{
	struct idset *s = arg;
	char key[600];
	snprintf(key, sizeof(key), "|%s|", id);
	if (!strstr(s->text, key)) {
		size_t len = strlen(s->text);
		snprintf(s->text + len, sizeof(s->text) - len, "%s%s|", len ? "" : "|", id);
	}
	return 0;
}

/* Pass *ARG of 16 gives each literal 0 or 1, so that every pair of the
 * literals that share a condition (#SMT_on and #core_wide) sees all four. */
static double pass_literal(void *arg, const char *name)
{
	static const char *const order[] = { "#smt_on", "#core_wide", "#num_packages", "#slots" };
	int bit = 0;
	for (int i = 0; i < 4; i++)
		if (!strcasecmp(name, order[i]))
			bit = i;
	return (*(int *)arg >> bit) & 1;
}

static double always(void *arg, const char *id)
{
	(void)id;
	(void)arg;
	return 1;
}

static void check_text(struct walk *w, const char *path, const char *text)
{
	struct hwc__mexpr *e;
	w->exprs++;
	if (hwc__mexpr_parse(text, 0, &e)) {
		if (w->failures++ < 10)
			fprintf(stderr, "%s: %s\n", path, hwc_errdetail());
		return;
	}
	/* The union over the literals' values: a constant condition leaves
	 * out the events of the branch it rules out. */
	struct idset got = { "" };
	for (int pass = 0; pass < 16; pass++) {
		struct hwc__mexpr_env env = { NULL, pass_literal, always, always, &pass };
		if (hwc__mexpr_ids(e, &env, add_unique, &got) && w->failures++ < 10)
			fprintf(stderr, "%s: %s: %s\n", path, text, hwc_errdetail());
	}
	hwc__mexpr_free(e);
	char want[8192];
	scan_names(text, want, sizeof(want));
	/* Every name extracted is one the scan saw, and the other way round
	 * unless constant folding dropped it: the scan's names must all
	 * appear when nothing is constant. */
	for (char *p = got.text; *p && p[1];) {
		char *end = strchr(p + 1, '|');
		w->ids++;
		*end = 0;
		char key[600];
		snprintf(key, sizeof(key), "|%s|", p + 1);
		*end = '|';
		if (!strstr(want, key) && w->mismatches++ < 10)
			fprintf(stderr, "%s: %s: extracted %s, not a name of the text (%s)\n", path, text,
				key, want);
		p = end;
	}
	for (char *p = want; *p && p[1];) {
		char *end = strchr(p + 1, '|');
		*end = 0;
		char key[600];
		snprintf(key, sizeof(key), "|%s|", p + 1);
		*end = '|';
		if (!strstr(got.text, key) && w->mismatches++ < 10)
			fprintf(stderr, "%s: %s: %s not extracted (%s)\n", path, text, key, got.text);
		p = end;
	}
}

static void walk_file(struct walk *w, const char *path)
{
	json_object *root = json_object_from_file(path);
	if (!root) {
		w->failures++;
		fprintf(stderr, "%s: not JSON\n", path);
		return;
	}
	w->files++;
	if (json_object_is_type(root, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(root); i++) {
			json_object *rec = json_object_array_get_idx(root, i), *v;
			if (json_object_object_get_ex(rec, "MetricExpr", &v))
				check_text(w, path, json_object_get_string(v));
			if (json_object_object_get_ex(rec, "MetricThreshold", &v))
				check_text(w, path, json_object_get_string(v));
		}
	}
	json_object_put(root);
}

static void walk_dir(struct walk *w, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			walk_dir(w, path);
		else if (strlen(de->d_name) > 5 && !strcmp(de->d_name + strlen(de->d_name) - 5, ".json"))
			walk_file(w, path);
	}
	closedir(d);
}

static void test_whole_tree(void)
{
	const char *dir = getenv("HWC_EVENTS_DIR");
	if (!dir)
		dir = EVENTS_TREE;
	struct stat st;
	if (stat(dir, &st)) {
		SKIP_SUB("no JSON event tree (scripts/deps extracts it to " EVENTS_TREE ")");
		return;
	}
	struct walk w = { 0 };
	walk_dir(&w, dir);
	printf("  %zu files, %zu expressions, %zu event names\n", w.files, w.exprs, w.ids);
	CHECK_INT(w.failures, ==, 0);
	CHECK_INT(w.mismatches, ==, 0);
	CHECK(w.exprs > 8000); /* 6093 MetricExpr and 2291 MetricThreshold in 6.12 */
}

int main(void)
{
	RUN(test_perf_expressions);
	RUN(test_errors);
	RUN(test_depth);
	RUN(test_whole_tree);
	return check_exit();
}
