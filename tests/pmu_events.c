/* The JSON event tables' reader (src/pmu_events.c) on perf's own tree, as
 * scripts/deps extracts it: where the tree is found, which model a CPU
 * identifier maps to (perf's mapfile.csv rules), and the records of a
 * model, arm64 ArchStdEvent references resolved. */
#include "check.h"

#include "internal.h"
#include "metric_expr.h"
#include "pmu_events.h"

#include <hwc/hwc.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>


static const char *field(const struct hwc__pe_table *t, const char *name, bool metric,
			 const char *key)
{
	const struct hwc__pe_record *r = hwc__pe_find(t, name, metric);
	if (!r) {
		fprintf(stderr, "no %s '%s' in %s\n", metric ? "metric" : "event", name, t->model);
		return NULL;
	}
	return hwc__pe_get(r, key);
}

static void root_order(void)
{
	char tmp[] = "/tmp/pe-XXXXXX", xdg[256];
	CHECK(mkdtemp(tmp) != NULL);
	snprintf(xdg, sizeof(xdg), "%s/hwc", tmp);
	mkdir(xdg, 0700);
	strcat(xdg, "/events");
	mkdir(xdg, 0700);
	setenv("XDG_DATA_HOME", tmp, 1);
	CHECK_STR_EQ(hwc__pe_root(), EVENTS_TREE); /* HWC_EVENTS_DIR first */
	unsetenv("HWC_EVENTS_DIR");
	CHECK_STR_EQ(hwc__pe_root(), xdg);
	CHECK_OK(hwc_set_events_dir(EVENTS_TREE)); /* --events-dir before everything */
	CHECK_STR_EQ(hwc__pe_root(), EVENTS_TREE);
	CHECK_INT(hwc_set_events_dir("/nonexistent/events"), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "/nonexistent/events");
	CHECK_OK(hwc_set_events_dir(NULL));
	rmdir(xdg);
	xdg[strlen(xdg) - 7] = '\0';
	rmdir(xdg);
	rmdir(tmp);
	setenv("HWC_EVENTS_DIR", EVENTS_TREE, 1);
	unsetenv("XDG_DATA_HOME");
}

static void cpuid_to_model(void)
{
	static const struct {
		const char *arch, *id, *model;
	} cases[] = {
		{"x86", "GenuineIntel-6-55-4", "skylakex"},  /* stepping in the map */
		{"x86", "GenuineIntel-6-55-7", "cascadelakex"},
		{"x86", "GenuineIntel-6-5E-3", "skylake"},   /* stepping ignored */
		{"x86", "GenuineIntel-6-8F-8", "sapphirerapids"},
		{"x86", "GenuineIntel-6-AD-1", "graniterapids"},
		{"x86", "AuthenticAMD-25-1-1", "amdzen3"},   /* [245]x or one digit */
		{"x86", "AuthenticAMD-25-11-1", "amdzen4"},
		{"x86", "AuthenticAMD-26-2-0", "amdzen5"},
		{"arm64", "0x00000000410fd0c1", "arm/neoverse-n1"}, /* revision ignored */
		{"arm64", "0x00000000413fd0b0", "arm/cortex-a76"},  /* variant ignored */
	};
	char model[256];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		model[0] = '\0';
		CHECK(hwc__pe_model_for(cases[i].arch, cases[i].id, model, sizeof(model)));
		CHECK_STR_EQ(model, cases[i].model);
	}
	/* The whole identifier must match: 6-5E is not 6-5 followed by more. */
	CHECK(!hwc__pe_model_for("x86", "GenuineIntel-6-5EE-3", model, sizeof(model)));
	CHECK(!hwc__pe_model_for("x86", "GenuineIntel-6-FFF-0", model, sizeof(model)));
}

static void x86_records(void)
{
	const struct hwc__pe_table *t;
	CHECK_OK(hwc__pe_table("skylake", &t));
	if (!t)
		return;
	CHECK_STR_EQ(t->arch, "x86");
	CHECK_STR_EQ(field(t, "ARITH.DIVIDER_ACTIVE", false, "EventCode"), "0x14");
	CHECK_STR_EQ(field(t, "arith.divider_active", false, "CounterMask"), "1");
	CHECK_STR_EQ(field(t, "OFFCORE_RESPONSE.DEMAND_CODE_RD.ANY_RESPONSE", false, "MSRIndex"),
		     "0x1a6,0x1a7");
	CHECK_STR_EQ(field(t, "tma_info_thread_ipc", true, "MetricExpr"),
		     "INST_RETIRED.ANY / tma_info_thread_clks");
	CHECK(hwc__pe_find(t, "tma_info_thread_ipc", false) == NULL); /* a metric is no event */
	size_t events = 0, metrics = 0;
	for (size_t i = 0; i < t->n; i++)
		*(t->rec[i].metric ? &metrics : &events) += 1;
	CHECK_INT(events, >, 500);
	CHECK_INT(metrics, >, 100);
	/* The second call returns the same loaded table. */
	const struct hwc__pe_table *again;
	CHECK_OK(hwc__pe_table("skylake", &again));
	CHECK(again == t);
}

static void arm64_std_events(void)
{
	const struct hwc__pe_table *t;
	CHECK_OK(hwc__pe_table("arm/cortex-a76", &t));
	if (!t)
		return;
	CHECK_STR_EQ(t->arch, "arm64");
	/* {"ArchStdEvent": "L1D_CACHE_REFILL"} takes the standard event's fields. */
	CHECK_STR_EQ(field(t, "L1D_CACHE_REFILL", false, "EventCode"), "0x03");
	CHECK_STR_EQ(field(t, "L1D_CACHE_REFILL", false, "ArchStdEvent"), "L1D_CACHE_REFILL");
	/* A model's own field wins over the standard event's. */
	CHECK_STR_CONTAINS(field(t, "BR_MIS_PRED", false, "PublicDescription"),
			   "or because the MMU is off");
}

/* Fixed counts for sbsa.json's top-down: 8 slots a cycle, 1000 cycles,
 * half the slots stalled (frontend 2400, backend 1600), 90% of the
 * speculated operations retired. */
static double td_value(void *arg, const char *id, bool source_count)
{
	(void)arg;
	(void)source_count;
	static const struct {
		const char *id;
		double v;
	} v[] = {{"cpu_cycles", 1000}, {"stall_slot", 4000}, {"stall_slot_frontend", 2400},
		 {"stall_slot_backend", 1600}, {"op_retired", 900}, {"op_spec", 1000}};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcasecmp(id, v[i].id))
			return v[i].v;
	return NAN;
}

static double td_literal(void *arg, const char *name)
{
	(void)arg;
	return !strcmp(name, "#slots") ? 8 : NAN;
}

/* The arch directory's own records (sbsa.json's metrics: the top-down
 * level 1 hwc falls back to on an arm64 CPU whose table has none), what
 * they compute, and the encodings of their events. */
static void arm64_topdown(void)
{
	const struct hwc__pe_table *arch, *v1;
	CHECK_OK(hwc__pe_arch_table("arm64", &arch));
	CHECK_OK(hwc__pe_table("arm/neoverse-v1", &v1));
	if (!arch || !v1)
		return;
	CHECK_STR_EQ(arch->model, "");
	/* by hand: 100 * 2400 / 8000; 100 * 0.1 * 0.5; 100 * 0.9 * 0.5; 100 * 1600 / 8000 */
	static const struct {
		const char *name;
		double value;
	} l1[] = {{"frontend_bound", 30}, {"bad_speculation", 5}, {"retiring", 45}, {"backend_bound", 20}};
	struct hwc__mexpr_env env = {td_value, td_literal, NULL, NULL, NULL};
	for (size_t i = 0; i < 4; i++) {
		const char *expr = field(arch, l1[i].name, true, "MetricExpr");
		const char *groups = field(arch, l1[i].name, true, "MetricGroup");
		CHECK_STR_CONTAINS(groups ? groups : "", "TopdownL1");
		CHECK_STR_CONTAINS(expr ? expr : "", "#slots");
		struct hwc__mexpr *e = NULL;
		double got = NAN;
		CHECK_OK(hwc__mexpr_parse(expr ? expr : "", 0, &e));
		if (e)
			CHECK_OK(hwc__mexpr_eval(e, &env, &got));
		CHECK(got > l1[i].value - 1e-9 && got < l1[i].value + 1e-9);
		hwc__mexpr_free(e);
	}
	/* V1 names them with ArchStdEvent: retiring as sbsa.json has it,
	 * frontend_bound with its own expression */
	CHECK_STR_EQ(field(v1, "retiring", true, "MetricExpr"), field(arch, "retiring", true, "MetricExpr"));
	CHECK_STR_CONTAINS(field(v1, "frontend_bound", true, "MetricExpr"), "BR_MIS_PRED");
	CHECK_STR_EQ(field(arch, "STALL_SLOT", false, "EventCode"), "0x3F");

	/* On the Neoverse N1-like sysfs tree: its armv8_pmuv3/events lists
	 * cpu_cycles (0x11) but not stall_slot (0x3f), which it cannot count. */
	const char *src = getenv("HWC_SRC") ? getenv("HWC_SRC") : ".";
	char root[4096];
	snprintf(root, sizeof(root), "%s/tests/golden/sysfs-arm64", src);
	setenv("HWC_SYSFS_ROOT", root, 1);
	hwc_evlist *l;
	CHECK_OK(hwc_evlist_new(&l));
	CHECK_OK(hwc_evlist_add(l, "neoverse-v1::STALL_SLOT"));
	CHECK_OK(hwc_evlist_add(l, "neoverse-v1::CPU_CYCLES"));
	CHECK_OK(hwc_evlist_add(l, "armv8_pmuv3/event=0x4004/"));
	if (hwc_evlist_size(l) == 3) {
		const struct perf_event_attr *slot = &hwc_evlist_event(l, 0)->attr;
		CHECK_U64(slot->config, ==, 0x3f);
		CHECK_STR_EQ(hwc__pmu_lacks_arm_event(slot), "armv8_pmuv3");
		CHECK(hwc__pmu_lacks_arm_event(&hwc_evlist_event(l, 1)->attr) == NULL);
		/* past PMCEID0/1's common events: not known to be lacking */
		CHECK(hwc__pmu_lacks_arm_event(&hwc_evlist_event(l, 2)->attr) == NULL);
	}
	hwc_evlist_free(l);
	/* an x86 machine's cpu PMU: never */
	snprintf(root, sizeof(root), "%s/tests/golden/sysfs", src);
	setenv("HWC_SYSFS_ROOT", root, 1);
	struct perf_event_attr raw = {.type = PERF_TYPE_RAW, .config = 0x3f};
	CHECK(hwc__pmu_lacks_arm_event(&raw) == NULL);
	unsetenv("HWC_SYSFS_ROOT");
}

/* -M all asks for each event of every metric: the events/ directory is
 * read once per PMU, not per question.  Seen from outside: once asked,
 * the answer holds after the directory is gone (which sysfs never does). */
static void arm64_events_read_once(void)
{
	const char *src = getenv("HWC_SRC") ? getenv("HWC_SRC") : ".";
	char tmp[] = "/tmp/pe-arm-XXXXXX", cmd[8192], events[4096];
	CHECK(mkdtemp(tmp) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/tests/golden/sysfs-arm64/.' '%s'", src, tmp);
	CHECK_INT(system(cmd), ==, 0);
	setenv("HWC_SYSFS_ROOT", tmp, 1);
	struct perf_event_attr stall = {.type = PERF_TYPE_RAW, .config = 0x3f};
	struct perf_event_attr cycles = {.type = PERF_TYPE_RAW, .config = 0x11};
	CHECK_STR_EQ(hwc__pmu_lacks_arm_event(&stall), "armv8_pmuv3");
	CHECK(hwc__pmu_lacks_arm_event(&cycles) == NULL);
	snprintf(events, sizeof(events), "%s/bus/event_source/devices/armv8_pmuv3/events", tmp);
	snprintf(cmd, sizeof(cmd), "rm -r '%s'", events);
	CHECK_INT(system(cmd), ==, 0);
	struct stat st;
	CHECK(stat(events, &st) != 0);
	CHECK_STR_EQ(hwc__pmu_lacks_arm_event(&stall), "armv8_pmuv3");
	CHECK(hwc__pmu_lacks_arm_event(&cycles) == NULL);
	unsetenv("HWC_SYSFS_ROOT");
	snprintf(cmd, sizeof(cmd), "rm -r '%s'", tmp);
	CHECK_INT(system(cmd), ==, 0);
}

static void errors(void)
{
	const struct hwc__pe_table *t = NULL;
	CHECK_INT(hwc__pe_table("nosuchmodel", &t), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "no JSON model 'nosuchmodel'");
	CHECK_INT(hwc__pe_table("../x86", &t), ==, -ENOENT);
	CHECK(!hwc__pe_model_known("skylake/../skylake"));
	setenv("HWC_EVENTS_DIR", "/nonexistent", 1);
	CHECK_INT(hwc__pe_table("skylake", &t), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "the events directory /nonexistent does not exist");
	setenv("HWC_EVENTS_DIR", EVENTS_TREE, 1);
}

/* A table is read once, until hwc__pe_forget() (the JSON fuzzer rewrites
 * its tree between loads). */
static void forget(void)
{
	char tmp[] = "/tmp/pe-XXXXXX", dir[256], file[300], cmd[300];
	const struct hwc__pe_table *t;
	CHECK(mkdtemp(tmp) != NULL);
	snprintf(dir, sizeof(dir), "%s/x86", tmp);
	mkdir(dir, 0700);
	strcat(dir, "/fz");
	mkdir(dir, 0700);
	snprintf(file, sizeof(file), "%s/events.json", dir);
	CHECK_OK(hwc_set_events_dir(tmp));
	CHECK_OK(check_write_file(file, "[{\"EventName\": \"ONE\", \"EventCode\": \"0x1\"}]", 0600));
	CHECK_OK(hwc__pe_table("fz", &t));
	CHECK(t->n == 1 && hwc__pe_find(t, "ONE", false));
	CHECK_OK(check_write_file(file, "[{\"EventName\": \"TWO\", \"EventCode\": \"0x2\"}]", 0600));
	CHECK_OK(hwc__pe_table("fz", &t));
	CHECK(hwc__pe_find(t, "ONE", false) != NULL); /* loaded once */
	hwc__pe_forget();
	CHECK_OK(hwc__pe_table("fz", &t));
	CHECK(t->n == 1 && hwc__pe_find(t, "TWO", false) && !hwc__pe_find(t, "ONE", false));
	hwc__pe_forget();
	CHECK_OK(hwc_set_events_dir(NULL));
	snprintf(cmd, sizeof(cmd), "rm -r '%s'", tmp);
	CHECK_INT(system(cmd), ==, 0);
}

int main(void)
{
	USE_EVENTS_TREE();
	RUN(root_order);
	RUN(cpuid_to_model);
	RUN(x86_records);
	RUN(arm64_std_events);
	RUN(arm64_topdown);
	RUN(arm64_events_read_once);
	RUN(errors);
	RUN(forget);
	return check_failures ? 1 : 0;
}
