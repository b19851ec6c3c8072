/* Event listing through the public API: every source walked, presets with
 * and without a mapping, libpfm4 models of other CPUs, probing answers that
 * match what opening says, sysfs PMUs against the directory itself, and a
 * fake sysfs tree (HWC_SYSFS_ROOT) for the core PMU this VM lacks. */
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <hwc/hwc.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------- the machine */

struct census {
	size_t by_source[8];
	size_t total, probed;
	int task_clock, cycles, tot_cyc, l1_tcm; /* status, or 1 when not seen */
	char cycles_why[1024], l1_tcm_why[1024];
	char tot_cyc_equiv[64];
	bool l1_tcm_unmapped;
	size_t unresolved;
	char first_unresolved[256];
};

static int count_event(const struct hwc_event_info *ev, void *arg)
{
	struct census *c = arg;
	c->total++;
	c->by_source[ev->source]++;
	c->probed += ev->probed;
	CHECK(ev->name && *ev->name && ev->spec && *ev->spec && ev->pmu && *ev->pmu && ev->desc);
	CHECK(ev->why_not != NULL);
	if (ev->status == 0)
		CHECK(*ev->why_not == '\0');
	else if (!*ev->why_not)
		fprintf(stderr, "%s: status %d without a reason\n", ev->spec, ev->status),
			check_failures++;
	if (strcmp(ev->spec, "task-clock") == 0)
		c->task_clock = ev->status;
	if (strcmp(ev->spec, "cycles") == 0) {
		c->cycles = ev->status;
		snprintf(c->cycles_why, sizeof(c->cycles_why), "%s", ev->why_not);
	}
	if (strcmp(ev->spec, "PAPI_TOT_CYC") == 0) {
		c->tot_cyc = ev->status;
		snprintf(c->tot_cyc_equiv, sizeof(c->tot_cyc_equiv), "%s", ev->equiv ? ev->equiv : "");
	}
	if (strcmp(ev->spec, "PAPI_L1_TCM") == 0) {
		c->l1_tcm = ev->status;
		c->l1_tcm_unmapped = ev->equiv == NULL;
		snprintf(c->l1_tcm_why, sizeof(c->l1_tcm_why), "%s", ev->why_not);
	}
	/* Every spec the listing gives must resolve (libpfm4 events that need
	 * a unit mask are checked per model below). */
	if (ev->source != HWC_SRC_PFM && !(ev->source == HWC_SRC_PRESET && !ev->equiv)) {
		hwc_evlist *l;
		CHECK_OK(hwc_evlist_new(&l));
		if (hwc_evlist_add(l, ev->spec) != 0 && c->unresolved++ == 0)
			snprintf(c->first_unresolved, sizeof(c->first_unresolved), "%s: %s", ev->spec,
				 hwc_errdetail());
		hwc_evlist_free(l);
	}
	return 0;
}

static void test_machine_listing(void)
{
	struct census c = {.task_clock = 1, .cycles = 1, .tot_cyc = 1, .l1_tcm = 1};
	CHECK_OK(hwc_events_walk(NULL, NULL, HWC_WALK_PROBE, count_event, &c));
	CHECK_INT(c.probed, ==, c.total);
	CHECK_INT(c.by_source[HWC_SRC_GENERIC], >=, 10);
	CHECK_INT(c.by_source[HWC_SRC_CACHE], >=, 30);
	CHECK_INT(c.by_source[HWC_SRC_SOFTWARE], >=, 10);
	CHECK_INT(c.by_source[HWC_SRC_PRESET], >=, 100);
	CHECK_INT(c.unresolved, ==, 0);
	if (c.unresolved)
		fprintf(stderr, "first unresolved: %s\n", c.first_unresolved);

	/* libpfm4 tables of this CPU, when libpfm4 knows it. */
	struct hwc_cpu_info cpu;
	CHECK_OK(hwc_cpu_info(&cpu));
	if (*cpu.pfm_model)
		CHECK_INT(c.by_source[HWC_SRC_PFM], >, 10);
	else
		fprintf(stderr, "note: libpfm4 knows no model for this CPU: no libpfm4 events to list\n");

	/* sysfs aliases: as many as the events/ directories hold. */
	size_t aliases = 0;
	DIR *d = opendir("/sys/bus/event_source/devices");
	CHECK(d != NULL);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char path[512];
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/events", de->d_name);
		DIR *e = de->d_name[0] == '.' ? NULL : opendir(path);
		struct dirent *ee;
		while (e && (ee = readdir(e)))
			aliases += ee->d_name[0] != '.' && !strchr(ee->d_name, '.');
		if (e)
			closedir(e);
	}
	if (d)
		closedir(d);
	CHECK_INT(c.by_source[HWC_SRC_PMU], ==, aliases);

	/* Tracepoints when tracefs is readable here. */
	DIR *tp = opendir("/sys/kernel/tracing/events");
	if (tp) {
		closedir(tp);
		CHECK_INT(c.by_source[HWC_SRC_TRACEPOINT], >, 100);
	} else {
		SKIP_SUB("tracefs not readable (%s): no tracepoints expected", strerror(errno));
		CHECK_INT(c.by_source[HWC_SRC_TRACEPOINT], ==, 0);
	}

	/* Probing says what opening says. */
	CHECK_INT(c.task_clock, ==, 0);
	CHECK_INT(c.tot_cyc, ==, c.cycles);
	CHECK_STR_EQ(c.tot_cyc_equiv, "cycles");
	CHECK(c.l1_tcm_unmapped);
	CHECK_INT(c.l1_tcm, ==, -ENOENT);
	CHECK_STR_CONTAINS(c.l1_tcm_why, "no mapping");
	if (!kernel_has_core_pmu()) {
		CHECK_INT(c.cycles, ==, -ENOENT);
		CHECK_STR_CONTAINS(c.cycles_why, "no hardware PMU");
	} else {
		SKIP_SUB("this machine has a core PMU: cycles is not checked to fail");
	}
}

/* ------------------------------------------------------------- probing */

static void test_probe(void)
{
	bool user_only = true;
	CHECK_OK(hwc_event_probe("task-clock", &user_only));
	CHECK(!user_only);
	CHECK_OK(hwc_event_probe("{task-clock,page-faults}", NULL));
	CHECK_INT(hwc_event_probe("no-such-event", NULL), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "unknown event 'no-such-event'");
	CHECK_INT(hwc_event_probe("task-clock:q", NULL), ==, -EINVAL);
	if (!kernel_has_core_pmu()) {
		CHECK_INT(hwc_event_probe("instructions:u", NULL), ==, -ENOENT);
		CHECK_STR_CONTAINS(hwc_errdetail(), "no hardware PMU");
	}
}

/* As nobody at paranoid 2, kernel counting is denied: events open user-only. */
static void test_probe_unprivileged(void)
{
	int paranoid;
	CHECK_OK(hwc_paranoid(&paranoid));
	if (geteuid() != 0 || paranoid != 2) {
		SKIP_SUB("probe as nobody needs root and paranoid 2 (uid %u, paranoid %d)",
			(unsigned)geteuid(), paranoid);
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(3);
		bool user_only = false;
		int err = hwc_event_probe("task-clock", &user_only);
		_exit(err ? 1 : user_only ? 0 : 2);
	}
	int status;
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), ==, 0);
}

/* ------------------------------------------------------------- models */

struct model_walk {
	const char *want_event, *want_umask;
	bool want_default;
	size_t n, resolvable, resolved, with_umask, with_value_mod;
	bool found_event, found_umask;
	int status;
	char why[1400];
	char host[64];
	char first_bad[512];
};

static int model_event(const struct hwc_event_info *ev, void *arg)
{
	struct model_walk *m = arg;
	m->n++;
	CHECK(ev->source == HWC_SRC_PFM);
	if (m->n == 1) {
		m->status = ev->status;
		snprintf(m->why, sizeof(m->why), "%s", ev->why_not);
	} else if (ev->status != m->status || strcmp(ev->why_not, m->why) != 0) {
		fprintf(stderr, "%s: its answer differs from the model's first event\n", ev->spec);
		check_failures++;
	}
	bool has_umask = false, has_default = false;
	for (size_t i = 0; i < ev->nattrs; i++) {
		const struct hwc_event_attr_info *a = &ev->attrs[i];
		CHECK(a->name && *a->name && a->desc);
		has_umask |= a->kind == HWC_ATTR_UMASK;
		has_default |= a->kind == HWC_ATTR_UMASK && a->is_default;
		m->with_value_mod += a->kind == HWC_ATTR_VALUE;
		if (m->want_event && strcmp(ev->name, m->want_event) == 0 && m->want_umask &&
		    strcmp(a->name, m->want_umask) == 0 && a->kind == HWC_ATTR_UMASK &&
		    a->is_default == m->want_default)
			m->found_umask = true;
	}
	m->with_umask += has_umask;
	if (m->want_event && strcmp(ev->name, m->want_event) == 0)
		m->found_event = true;
	/* An event with no unit mask, or a default one, resolves as listed. */
	if (!has_umask || has_default) {
		m->resolvable++;
		hwc_evlist *l;
		CHECK_OK(hwc_evlist_new(&l));
		if (hwc_evlist_add(l, ev->spec) == 0)
			m->resolved++;
		else if (!m->first_bad[0])
			snprintf(m->first_bad, sizeof(m->first_bad), "%s: %s", ev->spec, hwc_errdetail());
		hwc_evlist_free(l);
	}
	return 0;
}

/* MODEL has EVENT, and EVENT has unit mask UMASK (NULL: none checked), the
 * default one or not as IS_DEFAULT says. */
static void check_model(const char *model, const char *event, const char *umask, bool is_default)
{
	int failures_before = check_failures;
	struct model_walk m = {.want_event = event, .want_umask = umask, .want_default = is_default};
	struct hwc_cpu_info cpu;
	CHECK_OK(hwc_cpu_info(&cpu));
	int r = hwc_events_walk(model, NULL, HWC_WALK_PROBE, model_event, &m);
	CHECK_INT(r, ==, 0);
	if (r)
		fprintf(stderr, "%s: %s\n", model, hwc_errdetail());
	CHECK_INT(m.n, >, 50);
	CHECK(m.found_event);
	if (umask)
		CHECK(m.found_umask);
#if !defined(__aarch64__) /* the Arm models' events have no unit masks */
	CHECK_INT(m.with_umask, >, 10);
#endif
	CHECK_INT(m.with_value_mod, >, 0);
	CHECK_INT(m.resolvable, >, 10);
	CHECK_INT(m.resolved, ==, m.resolvable);
	if (m.first_bad[0])
		fprintf(stderr, "%s: first event that does not resolve: %s\n", model, m.first_bad);
	if (strcmp(model, cpu.pfm_model) != 0) {
		/* Another CPU's model: reported as such, no probe needed. */
		CHECK_INT(m.status, ==, -ENODEV);
		CHECK_STR_CONTAINS(m.why, "not this machine's CPU");
	} else if (!cpu.core_pmu) {
		CHECK_INT(m.status, ==, -ENOENT);
		CHECK_STR_CONTAINS(m.why, "no hardware PMU");
	}
	if (check_failures != failures_before)
		fprintf(stderr, "model %s: %zu events, status %d (%s)\n", model, m.n, m.status, m.why);
}

/* Debian's libpfm4 builds the tables of its own architecture only: the
 * models these tests name are x86 ones, or Arm ones on arm64. */
#if defined(__aarch64__)
#define MODEL_A "arm_n1"
#define MODEL_B "arm_ac57"
#else
#define MODEL_A "skl"
#define MODEL_B "amd64_fam19h_zen4"
#endif

static void test_models_any_host(void)
{
#if defined(__aarch64__)
	check_model("arm_n1", "INST_RETIRED", NULL, false);
	check_model("arm_ac57", "CPU_CYCLES", NULL, false);
	check_model("arm_a64fx", "INST_RETIRED", NULL, false);
	check_model("ARM_N1", "INST_RETIRED", NULL, false); /* model names are case-insensitive */
	return;
#endif
	check_model("skl", "INST_RETIRED", "ANY_P", true);
	check_model("icl", "INST_RETIRED", "ANY_P", false);
	check_model("icl", "MEM_INST_RETIRED", "ANY", true);
	check_model("spr", "INST_RETIRED", "ANY", true);
	check_model("spr", "INST_RETIRED", "ANY_P", false);
	check_model("amd64_fam19h_zen3", "RETIRED_INSTRUCTIONS", NULL, false);
	check_model("amd64_fam19h_zen4", "RETIRED_INSTRUCTIONS", NULL, false);
	check_model("amd64_fam19h_zen4", "LS_DISPATCH", "LD_DISPATCH", false);
	check_model("SKL", "INST_RETIRED", "ANY_P", true); /* model names are case-insensitive */
}

struct models {
	size_t n, present_core;
	bool a, b;
};

static int one_model(const struct hwc_model_info *m, void *arg)
{
	struct models *s = arg;
	s->n++;
	CHECK(m->name && *m->name && m->desc);
	s->present_core += m->present && m->core;
	if (strcmp(m->name, MODEL_A) == 0) {
		s->a = true;
		CHECK(m->core);
		CHECK_INT(m->nevents, >, 50);
		CHECK_INT(m->ncounters, >=, 4);
#if !defined(__aarch64__) /* Arm's cycle counter is not in libpfm4's tables */
		CHECK_INT(m->nfixed, >=, 3);
#endif
	}
	if (strcmp(m->name, MODEL_B) == 0) {
		s->b = true;
		CHECK_INT(m->ncounters, ==, 6);
	}
	return 0;
}

static void test_models_walk(void)
{
	struct models s = {0};
	CHECK_OK(hwc_models_walk(one_model, &s));
#if defined(__aarch64__)
	CHECK_INT(s.n, >, 5);
#else
	CHECK_INT(s.n, >, 50);
#endif
	CHECK(s.a && s.b);
	CHECK_INT(s.present_core, <=, 1);
	struct hwc_cpu_info cpu;
	CHECK_OK(hwc_cpu_info(&cpu));
	CHECK_INT(s.present_core, ==, *cpu.pfm_model ? 1 : 0);
}

/* ------------------------------------------------------------- walking */

static int stop_after_three(const struct hwc_event_info *ev, void *arg)
{
	(void)ev;
	return ++*(int *)arg == 3 ? 42 : 0;
}

static int count_only(const struct hwc_event_info *ev, void *arg)
{
	CHECK(!ev->probed);
	CHECK_INT(ev->status, ==, 0);
	(*(int *)arg)++;
	return 0;
}

struct names {
	char list[1024];
	size_t n;
};

static int collect(const struct hwc_event_info *ev, void *arg)
{
	struct names *c = arg;
	size_t len = strlen(c->list);
	snprintf(c->list + len, sizeof(c->list) - len, "%s%s", len ? " " : "", ev->name);
	c->n++;
	return 0;
}

static void test_patterns(void)
{
	struct names c = {.n = 0};
	CHECK_OK(hwc_events_walk(NULL, "L1-dcache-*", 0, collect, &c));
	CHECK_STR_EQ(c.list, "L1-dcache-loads L1-dcache-load-misses L1-dcache-stores "
			     "L1-dcache-store-misses L1-dcache-prefetches "
			     "L1-dcache-prefetch-misses");
	fprintf(stderr, "L1-dcache-*: %s\n", c.list);
	c = (struct names){.n = 0};
	CHECK_OK(hwc_events_walk("software", "FAULT", HWC_WALK_PROBE, collect, &c));
	CHECK_STR_EQ(c.list, "page-faults faults minor-faults major-faults alignment-faults "
			     "emulation-faults");
	c = (struct names){.n = 0};
	CHECK_OK(hwc_events_walk(MODEL_A, MODEL_A "::inst_retired", 0, collect, &c));
	CHECK_STR_EQ(c.list, "INST_RETIRED");
	c = (struct names){.n = 0};
	CHECK_OK(hwc_events_walk(NULL, "no-such-event-*", HWC_WALK_PROBE, collect, &c));
	CHECK_INT(c.n, ==, 0);
}

static void test_walk_control(void)
{
	int n = 0;
	CHECK_INT(hwc_events_walk("software", NULL, 0, stop_after_three, &n), ==, 42);
	CHECK_INT(n, ==, 3);
	n = 0;
	CHECK_OK(hwc_events_walk("cache", NULL, 0, count_only, &n));
	CHECK_INT(n, >=, 30);
	n = 0;
	CHECK_INT(hwc_events_walk(MODEL_B "x", NULL, 0, count_only, &n), ==, -ENOENT);
	CHECK_INT(n, ==, 0);
	CHECK_STR_CONTAINS(hwc_errdetail(), "unknown PMU or libpfm4 model '" MODEL_B "x'");
	CHECK_STR_CONTAINS(hwc_errdetail(), "did you mean '" MODEL_B "'");
	CHECK_STR_CONTAINS(hwc_errdetail(), "hwc list --pmu help");
}

/* ------------------------------------------------------------- sysfs PMUs */

struct pmus {
	size_t n;
	bool software, msr;
	char root[256];
};

static int one_pmu(const struct hwc_pmu_info *p, void *arg)
{
	struct pmus *s = arg;
	char path[512];
	long long type = -1;
	s->n++;
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/type", s->root, p->name);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK_INT(fscanf(f, "%lld", &type), ==, 1);
		fclose(f);
	}
	CHECK_INT(p->type, ==, type);
	if (strcmp(p->name, "software") == 0) {
		s->software = true;
		CHECK_INT(p->type, ==, PERF_TYPE_SOFTWARE);
		CHECK(!p->core);
	}
	if (strcmp(p->name, "msr") == 0) {
		s->msr = true;
		CHECK_INT(p->nevents, >=, 1);
		CHECK_STR_CONTAINS(p->formats, "event=config:");
	}
	return 0;
}

static void test_pmus_walk(void)
{
	struct pmus s = {.root = "/sys"};
	CHECK_OK(hwc_pmus_walk(one_pmu, &s));
	size_t dirs = 0;
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *de;
	while (d && (de = readdir(d)))
		dirs += de->d_name[0] != '.';
	if (d)
		closedir(d);
	CHECK_INT(s.n, ==, dirs);
	CHECK(s.software);
	if (!s.msr)
		SKIP_SUB("no msr PMU here; its checks were not made");
}

/* A core PMU this VM does not have, as a fake sysfs tree: a test double for
 * what this kernel cannot show.  Runs in a child so the environment change
 * and libhwc's caches stay there. */
static int fake_cpu_event(const struct hwc_event_info *ev, void *arg)
{
	int *seen = arg;
	if (strcmp(ev->name, "cycles-t") == 0 && strcmp(ev->spec, "cpu/cycles-t/") == 0 &&
	    strcmp(ev->desc, "event=0x3c,in_tx=1") == 0 && ev->source == HWC_SRC_PMU)
		(*seen)++;
	return 0;
}

static int fake_cpu_pmu(const struct hwc_pmu_info *p, void *arg)
{
	int *ok = arg;
	if (strcmp(p->name, "cpu") != 0)
		return 0;
	CHECK(p->core);
	CHECK_INT(p->type, ==, 4);
	CHECK_INT(p->nevents, ==, 1);
	CHECK_INT(p->rdpmc, ==, 1);
	CHECK_STR_EQ(p->formats, "event=config:0-7,32-35 umask=config:8-15");
	CHECK_STR_EQ(p->caps, "pmu_name=skylake");
	CHECK_STR_EQ(p->cpumask, "");
	(*ok)++;
	return 0;
}

static void test_fake_core_pmu(void)
{
	char root[] = "/tmp/hwc-sysfs-XXXXXX";
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		check_failures++;
		return;
	}
	char path[512];
	const char *dirs[] = {"bus", "bus/event_source", "bus/event_source/devices",
			      "bus/event_source/devices/cpu", "bus/event_source/devices/cpu/format",
			      "bus/event_source/devices/cpu/events", "bus/event_source/devices/cpu/caps"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		CHECK_INT(mkdir(path, 0755), ==, 0);
	}
	const char *files[][2] = {
		{"type", "4\n"},
		{"rdpmc", "1\n"},
		{"format/event", "config:0-7,32-35\n"},
		{"format/umask", "config:8-15\n"},
		{"events/cycles-t", "event=0x3c,in_tx=1\n"},
		{"caps/pmu_name", "skylake\n"},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/cpu/%s", root, files[i][0]);
		if (check_write_file(path, files[i][1], 0644))
			exit(1);
	}
	pid_t pid = fork();
	if (pid == 0) {
		check_failures = 0;
		setenv("HWC_SYSFS_ROOT", root, 1);
		int ok = 0, seen = 0;
		CHECK_OK(hwc_pmus_walk(fake_cpu_pmu, &ok));
		CHECK_INT(ok, ==, 1);
		CHECK_OK(hwc_events_walk("cpu", NULL, 0, fake_cpu_event, &seen));
		CHECK_INT(seen, ==, 1);
		struct hwc_cpu_info cpu;
		CHECK_OK(hwc_cpu_info(&cpu));
		CHECK(cpu.core_pmu);
		CHECK_STR_EQ(cpu.core_pmu_name, "cpu");
		/* Counted from CPUID (or libpfm4's table) once a core PMU exists. */
		CHECK_INT(cpu.counters, >, 0);
		CHECK(cpu.counters_source[0] != '\0');
		fprintf(stderr, "fake core PMU: %d counters of %d bits, %d fixed (%s)\n", cpu.counters,
			cpu.counter_width, cpu.fixed, cpu.counters_source);
		struct hwc_user_reads r;
		CHECK_OK(hwc_user_reads(&r));
		CHECK_INT(r.rdpmc_sysfs, ==, 1);
		_exit(check_failures ? 1 : 0);
	}
	int status;
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_INT(system(cmd), ==, 0);
}

/* libpfm4's start leaves the environment as it was: a command counted
 * later inherits it, and one more variable changes what it executes. */
static void test_environment_untouched(void)
{
	hwc_evlist *l = NULL;
	CHECK_OK(hwc_evlist_new(&l));
	CHECK_OK(hwc_evlist_add(l, MODEL_A "::INST_RETIRED"));
	CHECK(getenv("LIBPFM_ENCODE_INACTIVE") == NULL);
	hwc_evlist_free(l);
}

int main(void)
{
	RUN(test_environment_untouched);
	RUN(test_machine_listing);
	RUN(test_probe);
	RUN(test_probe_unprivileged);
	RUN(test_models_any_host);
	RUN(test_models_walk);
	RUN(test_patterns);
	RUN(test_walk_control);
	RUN(test_pmus_walk);
	RUN(test_fake_core_pmu);
	return check_exit();
}
