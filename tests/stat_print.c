/* hwc stat's formatter (tools/hwc/stat_print.c) fed with values this machine
 * cannot produce.  TEST DOUBLE: the values are made up, because the VMs here
 * have no hardware PMU, so no event is ever multiplexed and cycles,
 * instructions, branches and cache events never count.  The figures that
 * depend on them (percent running, IPC, GHz, branch-miss and cache-miss
 * percentages) are checked here; tests/stat.py checks everything live. */
#include "check.h"
#include "stat.h"

#include <math.h>
#include <unistd.h>

enum { CYCLES, INSTRUCTIONS, BRANCHES, BRANCH_MISSES, CACHE_REFS, CACHE_MISSES, TASK_CLOCK, NEV };

static struct stat_event events[NEV];

static void setup_events(void)
{
	static const struct {
		const char *name;
		uint32_t type;
		uint64_t config;
	} defs[NEV] = {
		[CYCLES] = {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
		[INSTRUCTIONS] = {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
		[BRANCHES] = {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
		[BRANCH_MISSES] = {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
		[CACHE_REFS] = {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
		[CACHE_MISSES] = {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
		[TASK_CLOCK] = {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
	};
	for (int i = 0; i < NEV; i++) {
		events[i] = (struct stat_event){.name = defs[i].name, .unit = "", .scale = 1, .group = i};
		events[i].attr.type = defs[i].type;
		events[i].attr.config = defs[i].config;
	}
	events[TASK_CLOCK].unit = "msec";
	events[TASK_CLOCK].scale = 1e-6;
}

/* Cycles ran half the time (multiplexed); everything else ran throughout. */
static void values(struct hwc_value *v, uint64_t k)
{
	const uint64_t raw[NEV] = {
		[CYCLES] = 1000000 * k, [INSTRUCTIONS] = 3000000 * k, [BRANCHES] = 400000 * k,
		[BRANCH_MISSES] = 10000 * k, [CACHE_REFS] = 50000 * k, [CACHE_MISSES] = 5000 * k,
		[TASK_CLOCK] = 1000000 * k,
	};
	for (int i = 0; i < NEV; i++) {
		v[i].raw = raw[i];
		v[i].enabled = 1000000 * k;
		v[i].running = i == CYCLES ? 500000 * k : v[i].enabled;
		v[i].scaled = hwc_scale(v[i].raw, v[i].enabled, v[i].running);
	}
}

static char *render(enum stat_format format, bool repeat, size_t nev, char *const *argv)
{
	char *text = NULL;
	size_t len = 0;
	struct stat_report r = {.format = format, .sep = ",", .target_kind = "command",
				.argv = argv, .repeat = repeat, .nev = nev, .nrows = 1,
				.ev = events, .exit_status = 0};
	r.out = open_memstream(&text, &len);
	CHECK(r.out != NULL);
	CHECK_INT(stat_report_init(&r), ==, 0);
	stat_report_begin(&r);
	struct hwc_value v[NEV];
	for (uint64_t run = 1; run <= (repeat ? 2u : 1u); run++) {
		values(v, run);
		CHECK_INT(stat_report_add_run(&r, v, 0.002), ==, 0);
	}
	stat_report_end(&r);
	fclose(r.out);
	stat_report_free(&r);
	return text;
}

/* The line of TEXT that holds WORD (as a separate word), copied. */
static char *line_with(const char *text, const char *word)
{
	static char line[1024];
	size_t wl = strlen(word);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		for (const char *q = p; q + wl <= p + n; q++)
			if (memcmp(q, word, wl) == 0 && (q == p || q[-1] == ' ' || q[-1] == ',') &&
			    (q + wl == p + n || q[wl] == ' ' || q[wl] == ',')) {
				snprintf(line, sizeof(line), "%.*s", (int)n, p);
				return line;
			}
		p += n + (p[n] == '\n');
	}
	return "";
}

static void test_human(void)
{
	char *argv[] = {"prog", NULL};
	char *t = render(STAT_HUMAN, false, NEV, argv);
	/* Cycles: 1e6 raw over half the time -> estimate 2e6; 2e6 cycles in 1 ms. */
	CHECK_STR_CONTAINS(line_with(t, "cycles"), "2000000");
	CHECK_STR_CONTAINS(line_with(t, "cycles"), "(50.00%)");
	CHECK_STR_CONTAINS(line_with(t, "cycles"), "2.000 GHz");
	/* IPC uses the estimate: 3e6 / 2e6. */
	CHECK_STR_CONTAINS(line_with(t, "instructions"), "1.500 insn per cycle");
	CHECK(!strstr(line_with(t, "instructions"), "%)"));
	CHECK_STR_CONTAINS(line_with(t, "branch-misses"), "2.50% of all branches");
	CHECK_STR_CONTAINS(line_with(t, "cache-misses"), "10.00% of all cache refs");
	CHECK_STR_CONTAINS(line_with(t, "task-clock"), "1.00 msec");
	CHECK_STR_CONTAINS(line_with(t, "task-clock"), "0.500 CPUs utilized");
	CHECK_STR_CONTAINS(t, "Performance counter stats for 'prog'");
	free(t);
}

static void test_missing_inputs(void)
{
	/* Only cycles and instructions counted, in that order: IPC, but no GHz
	 * (no task-clock) and nothing for events whose input is absent. */
	char *t = render(STAT_HUMAN, false, 2, NULL);
	CHECK_STR_CONTAINS(line_with(t, "instructions"), "insn per cycle");
	CHECK(!strstr(t, "GHz"));
	free(t);
}

static void test_csv(void)
{
	char *t = render(STAT_CSV, false, NEV, NULL);
	/* value,unit,event,raw,enabled_ns,running_ns,percent_running,metric,metric_name */
	CHECK_STR_CONTAINS(t, "2000000,,cycles,1000000,1000000,500000,50.00,2.000000,ghz\n");
	CHECK_STR_CONTAINS(t, "3000000,,instructions,3000000,1000000,1000000,100.00,1.500000,ipc\n");
	CHECK_STR_CONTAINS(t, "10000,,branch-misses,10000,1000000,1000000,100.00,2.500000,branch_miss_pct\n");
	CHECK_STR_CONTAINS(t, "1.000000,msec,task-clock,1000000,1000000,1000000,100.00,0.500000,cpus_utilized\n");
	CHECK_STR_CONTAINS(t, "400000,,branches,400000,1000000,1000000,100.00,,\n");
	free(t);
}

/* Parse TEXT with python3's json module and evaluate the Python CHECK on
 * the document d; 0 when it parses and CHECK holds. */
static int json_check(const char *text, const char *check)
{
	char path[] = "/tmp/hwc-stat-print-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		check_failures++;
	close(fd);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c={x[\"event\"]: x for x in "
		 "d[\"counters\"]}; assert %s, (%s)' %s",
		 check, check, path);
	int rc = system(cmd);
	if (rc)
		fprintf(stderr, "JSON check failed: %s\n%s\n", check, text);
	unlink(path);
	return rc;
}

static void test_json(void)
{
	/* argv is arbitrary bytes: quotes, backslashes, control and non-UTF-8. */
	char *argv[] = {"a\"b\\c", "tab\there", "\xff\xfe", "caf\xc3\xa9", "\xed\xa0\x80", NULL};
	char *t = render(STAT_JSON, false, NEV, argv);
	CHECK_INT(json_check(t, "d[\"schema\"] == \"hwc-stat/1\""), ==, 0);
	CHECK_INT(json_check(t, "d[\"target\"][\"argv\"] == [\"a\\\"b\\\\c\", \"tab\\there\", "
				"\"\\ufffd\\ufffd\", \"caf\\u00e9\", \"\\ufffd\\ufffd\\ufffd\"]"),
		  ==, 0);
	CHECK_INT(json_check(t, "c[\"cycles\"] == {\"event\": \"cycles\", \"group\": 0, \"value\": 2000000, "
				"\"unit\": \"\", \"raw\": 1000000, \"enabled_ns\": 1000000, "
				"\"running_ns\": 500000, \"scaled\": 2000000, \"percent_running\": 50, "
				"\"multiplexed\": True, \"user_only\": False, \"metrics\": {\"ghz\": 2}}"),
		  ==, 0);
	CHECK_INT(json_check(t, "c[\"instructions\"][\"metrics\"] == {\"ipc\": 1.5}"), ==, 0);
	CHECK_INT(json_check(t, "c[\"instructions\"][\"multiplexed\"] is False"), ==, 0);
	CHECK_INT(json_check(t, "c[\"branch-misses\"][\"metrics\"] == {\"branch_miss_pct\": 2.5}"), ==, 0);
	CHECK_INT(json_check(t, "c[\"cache-misses\"][\"metrics\"] == {\"cache_miss_pct\": 10}"), ==, 0);
	CHECK_INT(json_check(t, "c[\"task-clock\"][\"value\"] == 1.0 and c[\"task-clock\"][\"unit\"] == \"msec\""),
		  ==, 0);
	CHECK_INT(json_check(t, "d[\"exit_status\"] == 0 and d[\"runs\"] == 1 and \"intervals\" not in d"), ==, 0);
	/* Shortest round-trip numbers: 0.002 s, not 0.0020000000000000000416. */
	CHECK_STR_CONTAINS(t, "\"elapsed_s\": 0.002,");
	free(t);
}

static void test_repeat(void)
{
	/* Two runs, the second doubling every count: mean 1.5x, sample stddev
	 * 0.7071x, relative stddev 47.14%. */
	char *t = render(STAT_HUMAN, true, NEV, NULL);
	CHECK_STR_CONTAINS(line_with(t, "instructions"), "4500000");
	CHECK_STR_CONTAINS(line_with(t, "instructions"), "( +- 47.14% )");
	CHECK_STR_CONTAINS(t, "(2 runs)");
	free(t);
	t = render(STAT_JSON, true, NEV, NULL);
	CHECK_INT(json_check(t, "abs(c[\"instructions\"][\"rel_stddev_pct\"] - 47.14045207910317) < 1e-9"), ==, 0);
	CHECK_INT(json_check(t, "[r[\"raw\"] for r in c[\"instructions\"][\"runs\"]] == [3000000, 6000000]"),
		  ==, 0);
	CHECK_INT(json_check(t, "c[\"instructions\"][\"raw\"] == 9000000 and c[\"instructions\"][\"value\"] == 4500000"),
		  ==, 0);
	free(t);
}

int main(void)
{
	setup_events();
	RUN(test_human);
	RUN(test_missing_inputs);
	RUN(test_csv);
	RUN(test_json);
	RUN(test_repeat);
	return check_exit();
}
