/* libpmc counting, as pmc(3) and hwpmc(4) describe it, with software
 * events: the machine's classes and rows, a process-scope PMC on its owner
 * (attached by pmc_start()), initial values and pmc_rw(), a child with and
 * without PMC_F_DESCENDANTS (current and future descendants), counting only
 * while a target runs, system-scope PMCs per CPU, FreeBSD's software
 * events (CLOCK.*, PAGE_FAULT.*) and names. */
#include "pmc_test.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool has_name(const char **names, int n, const char *want)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], want) == 0)
			return true;
	return false;
}

static void test_machine(void)
{
	const struct pmc_cpuinfo *ci;
	CHECK_INT(pmc_cpuinfo(&ci), ==, 0);
	CHECK_INT(pmc_ncpu(), ==, sysconf(_SC_NPROCESSORS_CONF));
	CHECK_INT(pmc_npmc(0), ==, ci->pm_npmc);
	CHECK(pmc_name_of_cputype(ci->pm_cputype) != NULL);
	bool soft = false;
	uint32_t rows = 0;
	for (uint32_t i = 0; i < ci->pm_nclass; i++) {
		const struct pmc_classinfo *c = &ci->pm_classes[i];
		rows += c->pm_num;
		if (c->pm_class != PMC_CLASS_SOFT)
			continue;
		soft = true;
		CHECK_INT(c->pm_num, ==, 16);
		CHECK_INT(c->pm_width, ==, 64);
		CHECK_INT(c->pm_caps, ==, PMC_CAP_INTERRUPT | PMC_CAP_READ | PMC_CAP_WRITE |
						  PMC_CAP_USER | PMC_CAP_SYSTEM);
	}
	CHECK(soft);
	CHECK_INT(rows, ==, ci->pm_npmc);
	struct pmc_pmcinfo *pi;
	CHECK_INT(pmc_pmcinfo(0, &pi), ==, 0);
	int nsoft = 0;
	for (uint32_t r = 0; r < ci->pm_npmc; r++) {
		if (pi->pm_pmcs[r].pm_class != PMC_CLASS_SOFT)
			continue;
		char name[16];
		snprintf(name, sizeof(name), "SOFT-%d", nsoft++);
		CHECK_STR_EQ(pi->pm_pmcs[r].pm_name, name);
		CHECK_INT(pi->pm_pmcs[r].pm_ownerpid, ==, -1);
		CHECK_INT(pi->pm_pmcs[r].pm_rowdisp, ==, PMC_DISP_FREE);
	}
	CHECK_INT(nsoft, ==, 16);
	free(pi);
	CHECK_STR_EQ(pmc_name_of_class(PMC_CLASS_SOFT), "SOFT");
	CHECK_STR_EQ(pmc_name_of_mode(PMC_MODE_TC), "TC");
	CHECK_STR_EQ(pmc_name_of_state(PMC_STATE_RUNNING), "RUNNING");
	CHECK_STR_EQ(pmc_name_of_disposition(PMC_DISP_THREAD), "THREAD");
	CHECK_STR_EQ(pmc_name_of_capability(PMC_CAP_READ), "READ");
	CHECK_STR_EQ(pmc_name_of_cputype(PMC_CPU_INTEL_SKYLAKE), "INTEL_SKYLAKE");
	const char **names;
	int n;
	CHECK_INT(pmc_event_names_of_class(PMC_CLASS_SOFT, &names, &n), ==, 0);
	CHECK(has_name(names, n, "CLOCK.HARD"));
	CHECK(has_name(names, n, "PAGE_FAULT.ALL"));
	CHECK(has_name(names, n, "task-clock"));
	free(names);
}

/* The helpers' clock arithmetic: 299.5 ms across a second boundary is
 * not 300 ms, and spin_ms() spins at least what it was asked for. */
static void test_spin(void)
{
	struct timespec a = {1, 900000000}, b = {2, 199500000};
	CHECK_U64(ts_diff_ns(a, b), ==, 299500000);
	CHECK_U64(ts_diff_ns(b, b), ==, 0);
	a = (struct timespec){1, 100000000};
	CHECK_U64(ts_diff_ns(a, b), ==, 1099500000);
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	int64_t spun = spin_ms(20);
	uint64_t t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	CHECK_U64(spun, >=, 20000000);
	CHECK_U64(t1 - t0, >=, (uint64_t)spun);
}

/* pmc_start() attaches an unattached PMC to its owner. */
static void test_self(void)
{
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	CHECK_INT(PMC_ID_TO_MODE(id), ==, PMC_MODE_TC);
	CHECK_INT(PMC_ID_TO_CLASS(id), ==, PMC_CLASS_SOFT);
	CHECK_U64(read_pmc(id), ==, 0);
	CHECK_INT(pmc_start(id), ==, 0);
	touch_pages(2000);
	pmc_value_t v = read_pmc(id);
	CHECK_U64(v, >=, 2000);
	CHECK_U64(v, <=, FAULTS_MAX(2000));
	/* The row it takes shows its owner, mode and event. */
	struct pmc_info row = {0};
	CHECK_INT(own_rows(0, &row, 1), ==, 1);
	CHECK_INT(row.pm_rowdisp, ==, PMC_DISP_THREAD);
	CHECK_INT(row.pm_mode, ==, PMC_MODE_TC);
	CHECK_STR_EQ(pmc_name_of_event(row.pm_event), "page-faults");
	CHECK(row.pm_flags & PMC_F_ATTACHED_TO_OWNER);
	/* Stopped, it keeps its value; started again, it goes on from there. */
	CHECK_INT(pmc_stop(id), ==, 0);
	v = read_pmc(id);
	touch_pages(500);
	CHECK_U64(read_pmc(id), ==, v);
	CHECK_INT(pmc_start(id), ==, 0);
	touch_pages(500);
	CHECK_U64(read_pmc(id), >=, v + 500);
	CHECK_INT(pmc_release(id), ==, 0);
	CHECK_INT(pmc_read(id, &v), ==, -1);
}

/* The initial count, pmc_write(), pmc_rw() and pmc_set() on a counting PMC. */
static void test_values(void)
{
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 1000);
	CHECK_U64(read_pmc(id), ==, 1000);
	CHECK_INT(pmc_start(id), ==, 0);
	touch_pages(100);
	pmc_value_t old = 0, v = read_pmc(id);
	CHECK_U64(v, >=, 1100);
	/* Writing a running PMC is EBUSY and changes nothing. */
	CHECK_INT(pmc_rw(id, 5, &old), ==, -1);
	CHECK_INT(errno, ==, EBUSY);
	CHECK_INT(pmc_write(id, 5), ==, -1);
	CHECK_INT(errno, ==, EBUSY);
	CHECK_INT(pmc_set(id, 5), ==, -1);
	CHECK_INT(errno, ==, EBUSY);
	CHECK_U64(read_pmc(id), >=, v);
	CHECK_INT(pmc_stop(id), ==, 0);
	v = read_pmc(id);
	CHECK_INT(pmc_rw(id, 5, &old), ==, 0);
	CHECK_U64(old, ==, v);
	CHECK_U64(read_pmc(id), ==, 5);
	CHECK_INT(pmc_write(id, 42), ==, 0);
	CHECK_U64(read_pmc(id), ==, 42);
	CHECK_INT(pmc_set(id, 7), ==, 0);
	CHECK_U64(read_pmc(id), ==, 7);
	CHECK_INT(pmc_start(id), ==, 0);
	touch_pages(300);
	CHECK_U64(read_pmc(id), >=, 307);
	CHECK_U64(read_pmc(id), <=, 7 + FAULTS_MAX(300));
	CHECK_INT(pmc_release(id), ==, 0);
}

/* workloads/family N touches N pages in its main thread, N in a second
 * thread, and N in a child process (pagetouch). */
static pmc_value_t count_family(uint32_t flags)
{
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, flags, PMC_CPU_ANY, 0);
	char *argv[] = {workload("family"), "3000", NULL};
	struct waiting w = spawn(exec_argv, argv);
	CHECK_INT(pmc_attach(id, w.pid), ==, 0);
	CHECK_INT(pmc_attach(id, w.pid), ==, -1);
	CHECK_INT(errno, ==, EEXIST);
	CHECK_INT(pmc_start(id), ==, 0);
	release(w);
	int status = reap(w.pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	pmc_value_t v = read_pmc(id);
	CHECK_INT(pmc_release(id), ==, 0);
	return v;
}

static void test_descendants(void)
{
	/* Threads are the process's own; children only with descendants. */
	pmc_value_t alone = count_family(0), all = count_family(PMC_F_DESCENDANTS);
	CHECK_U64(alone, >=, 6000);
	CHECK_U64(alone, <, 9000);
	CHECK_U64(all, >=, 9000);
	CHECK_U64(all, <=, FAULTS_MAX(9000) + 400); /* three execs of small programs */
}

/* A grandchild that exists when the PMC attaches is a current descendant. */
static int parent_of_toucher(void *arg)
{
	int *fds = arg; /* [0]: go, read by the grandchild; [1]: tell its pid */
	pid_t g = fork();
	if (g == 0) {
		char c;
		if (read(fds[0], &c, 1) != 1)
			_exit(98);
		touch_pages(3000);
		_exit(0);
	}
	if (write(fds[1], &g, sizeof(g)) != sizeof(g))
		return 97;
	int status = reap(g);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 96;
}

static void test_current_descendants(void)
{
	int go[2], tell[2];
	CHECK_INT(pipe(go), ==, 0);
	CHECK_INT(pipe(tell), ==, 0);
	int fds[2] = {go[0], tell[1]};
	struct waiting w = spawn(parent_of_toucher, fds);
	release(w);
	pid_t g = -1;
	CHECK_INT(read(tell[0], &g, sizeof(g)), ==, sizeof(g));
	pmc_id_t with = alloc_or_die("page-faults", PMC_MODE_TC, PMC_F_DESCENDANTS, PMC_CPU_ANY, 0);
	pmc_id_t without = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	CHECK_INT(pmc_attach(with, w.pid), ==, 0);
	CHECK_INT(pmc_attach(without, w.pid), ==, 0);
	/* The grandchild came with its parent, and goes with it. */
	CHECK_INT(pmc_attach(with, g), ==, -1);
	CHECK_INT(errno, ==, EEXIST);
	CHECK_INT(pmc_detach(with, w.pid), ==, 0);
	CHECK_INT(pmc_detach(with, g), ==, -1);
	CHECK_INT(errno, ==, ESRCH); /* nothing monitors it now */
	CHECK_INT(pmc_attach(with, w.pid), ==, 0);
	CHECK_INT(pmc_start(with), ==, 0);
	CHECK_INT(pmc_start(without), ==, 0);
	CHECK_INT(write(go[1], "x", 1), ==, 1);
	int status = reap(w.pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_U64(read_pmc(with), >=, 3000);
	CHECK_U64(read_pmc(without), <, 3000);
	/* Exited processes are detached: their counts stay in the value. */
	CHECK_INT(pmc_stop(with), ==, 0);
	pmc_value_t v = read_pmc(with);
	CHECK_INT(pmc_detach(with, w.pid), ==, -1);
	CHECK_INT(errno, ==, ESRCH);
	CHECK_INT(pmc_detach(with, g), ==, -1);
	CHECK_INT(errno, ==, ESRCH);
	CHECK_U64(read_pmc(with), ==, v);
	CHECK_INT(pmc_release(with), ==, 0);
	CHECK_INT(pmc_release(without), ==, 0);
	close(go[0]);
	close(go[1]);
	close(tell[0]);
	close(tell[1]);
}

/* A process-scope PMC counts only while its target runs: a sleeping
 * process uses next to no CPU time. */
static int sleeper(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 300 * 1000000};
	nanosleep(&ts, NULL);
	return 0;
}

static void test_only_while_running(void)
{
	pmc_id_t id = alloc_or_die("task-clock", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	struct waiting w = spawn(sleeper, NULL);
	CHECK_INT(pmc_attach(id, w.pid), ==, 0);
	CHECK_INT(pmc_start(id), ==, 0);
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	release(w);
	reap(w.pid);
	uint64_t wall = now_ns(CLOCK_MONOTONIC) - t0;
	pmc_value_t v = read_pmc(id);
	CHECK_U64(wall, >=, 300000000);
	CHECK_U64(v, >, 0);
	CHECK_U64(v, <, 100000000); /* of 300 ms asleep */
	CHECK_INT(pmc_release(id), ==, 0);
}

/* A system-scope PMC counts everything on its CPU. */
static void test_system(void)
{
	int n = pmc_ncpu();
	pmc_id_t ids[64];
	cpu_set_t saved;
	sched_getaffinity(0, sizeof(saved), &saved);
	for (int c = 0; c < n && c < 64; c++) {
		if (pmc_allocate("page-faults", PMC_MODE_SC, 0, c, &ids[c], 0) < 0) {
			CHECK_INT(errno, ==, EPERM);
			SKIP_SUB("%s", pmc_errdetail());
			return;
		}
		CHECK_INT(PMC_ID_TO_CPU(ids[c]), ==, c);
		CHECK_INT(PMC_ID_TO_MODE(ids[c]), ==, PMC_MODE_SC);
	}
	/* Its row is a standalone one, on its CPU only. */
	struct pmc_info row = {0};
	CHECK_INT(own_rows(0, &row, 1), ==, 1);
	CHECK_INT(row.pm_rowdisp, ==, PMC_DISP_STANDALONE);
	CHECK_INT(row.pm_mode, ==, PMC_MODE_SC);
	for (int c = 0; c < n && c < 64; c++) {
		CHECK_INT(pmc_start(ids[c]), ==, 0);
		if (!pin(c))
			continue;
		pmc_value_t before = read_pmc(ids[c]);
		touch_pages(2000);
		CHECK_U64(read_pmc(ids[c]) - before, >=, 2000);
	}
	sched_setaffinity(0, sizeof(saved), &saved);
	for (int c = 0; c < n && c < 64; c++)
		CHECK_INT(pmc_release(ids[c]), ==, 0);
	/* cpu-clock on a CPU counts its time, busy or idle. */
	pmc_id_t clk = alloc_or_die("cpu-clock", PMC_MODE_SC, 0, 0, 0);
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	CHECK_INT(pmc_start(clk), ==, 0);
	uint64_t t1 = now_ns(CLOCK_MONOTONIC);
	struct timespec ts = {0, 50 * 1000000};
	nanosleep(&ts, NULL);
	uint64_t t2 = now_ns(CLOCK_MONOTONIC);
	pmc_value_t v = read_pmc(clk);
	uint64_t t3 = now_ns(CLOCK_MONOTONIC);
	CHECK_U64(v, >=, (t2 - t1) * 9 / 10);
	CHECK_U64(v, <=, t3 - t0 + 1000000);
	CHECK_INT(pmc_release(clk), ==, 0);
}

/* FreeBSD's clocks: cpu-clock time in ticks of 1000, 127 and 8128 Hz. */
static void test_clocks(void)
{
	pmc_id_t hard = alloc_or_die("CLOCK.HARD", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	pmc_id_t stat = alloc_or_die("clock-stat", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	pmc_id_t ns = alloc_or_die("cpu-clock", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	CHECK_INT(pmc_start(hard), ==, 0);
	CHECK_INT(pmc_start(stat), ==, 0);
	CHECK_INT(pmc_start(ns), ==, 0);
	int64_t switches = thread_switches();
	int64_t spun = spin_ms(300);
	CHECK_INT(pmc_stop(ns), ==, 0);
	CHECK_INT(pmc_stop(stat), ==, 0);
	CHECK_INT(pmc_stop(hard), ==, 0);
	switches = thread_switches() - switches;
	pmc_value_t t = read_pmc(ns), h = read_pmc(hard), s = read_pmc(stat);
	/* cpu-clock ran all through the spin, so it counted the CPU time the
	 * spin measured, give or take how the two kernel clocks split a
	 * context switch: the thread's clock runs from when the scheduler
	 * picks it, cpu-clock from when perf switches it in, a few us later
	 * (2.5 us seen here, and a loaded machine switches 300 times in
	 * 300 ms).  Allow 20 us a switch. */
	CHECK_U64(spun, >=, 300000000);
	CHECK_U64(t + (uint64_t)switches * 20000, >=, (uint64_t)spun);
	/* Stopped after cpu-clock, each has at least its ticks. */
	CHECK_U64(h, >=, t / 1000000);
	CHECK_U64(h, <=, t / 1000000 + 50);
	CHECK_U64(s, >=, t / 7874016);
	CHECK_U64(s, <=, t / 7874016 + 7);
	CHECK_STR_EQ(pmc_name_of_event((enum pmc_event)0x20000), "CLOCK.HARD");
	CHECK_INT(pmc_release(hard), ==, 0);
	CHECK_INT(pmc_release(stat), ==, 0);
	CHECK_INT(pmc_release(ns), ==, 0);
}

/* PAGE_FAULT.READ and .WRITE: the page-fault tracepoints by access. */
static void test_page_faults(void)
{
	pmc_id_t r, w, all;
	if (pmc_allocate("PAGE_FAULT.READ", PMC_MODE_TC, 0, PMC_CPU_ANY, &r, 0) < 0) {
		CHECK_INT(errno, ==, EINVAL);
		SKIP_SUB("%s", pmc_errdetail());
		return;
	}
	w = alloc_or_die("page_fault.write", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	all = alloc_or_die("PAGE_FAULT.ALL", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	long page = sysconf(_SC_PAGESIZE);
	volatile char *reads = mmap(NULL, 1000 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(reads != MAP_FAILED);
	/* Once round, so that the starts and stops below, which "all" sees
	 * and the other two do not, fault nothing in for the first time (a
	 * sanitized build faults in shadow pages there). */
	pmc_id_t ids[] = {all, r, w};
	for (size_t i = 0; i < 3; i++)
		CHECK_INT(pmc_start(ids[i]), ==, 0);
	for (size_t i = 3; i-- > 0;) {
		CHECK_INT(pmc_stop(ids[i]), ==, 0);
		CHECK_INT(pmc_write(ids[i], 0), ==, 0);
	}
	CHECK_INT(pmc_start(all), ==, 0);
	CHECK_INT(pmc_start(r), ==, 0);
	CHECK_INT(pmc_start(w), ==, 0);
	touch_pages(2000);
	unsigned long sum = 0;
	for (long i = 0; i < 1000; i++)
		sum += (unsigned char)reads[i * page];
	CHECK_INT(pmc_stop(w), ==, 0);
	CHECK_INT(pmc_stop(r), ==, 0);
	CHECK_INT(pmc_stop(all), ==, 0);
	CHECK_U64(sum, ==, 0);
	pmc_value_t vr = read_pmc(r), vw = read_pmc(w), va = read_pmc(all);
	CHECK_U64(vw, >=, 2000);
	CHECK_U64(vw, <=, FAULTS_MAX(2000));
	CHECK_U64(vr, >=, 1000);
	CHECK_U64(vr, <=, FAULTS_MAX(1000));
	/* The tracepoints see every fault exception, page-faults those the
	 * kernel handled: next to the same. */
	CHECK_U64(va + 50, >=, vr + vw);
	CHECK_U64(va, <=, vr + vw + 50);
	munmap((void *)reads, 1000 * page);
	CHECK_INT(pmc_release(r), ==, 0);
	CHECK_INT(pmc_release(w), ==, 0);
	CHECK_INT(pmc_release(all), ==, 0);
}

/* Events the machine lacks, and the TSC, which counts but cannot sample. */
static void test_hardware(void)
{
	pmc_id_t id;
	const struct pmc_cpuinfo *ci;
	pmc_cpuinfo(&ci);
	bool pmu = false;
	for (uint32_t i = 0; i < ci->pm_nclass; i++)
		pmu |= ci->pm_classes[i].pm_class != PMC_CLASS_SOFT &&
		       ci->pm_classes[i].pm_class != PMC_CLASS_TSC;
	if (pmc_allocate("instructions", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) == 0) {
		CHECK(pmu);
		CHECK_INT(pmc_start(id), ==, 0);
		spin_ms(10);
		CHECK_U64(read_pmc(id), >, 1000000);
		pmc_release(id);
	} else {
		CHECK(!pmu);
		CHECK_INT(errno, ==, EINVAL); /* hwpmc(4): no suitable PMC */
		CHECK_STR_CONTAINS(pmc_errdetail(), "instructions");
		fprintf(stderr, "test_hardware: no hardware PMU here: %s\n", pmc_errdetail());
	}
	if (pmc_allocate("cycles", PMC_MODE_SC, 0, 0, &id, 0) < 0) {
		CHECK(errno == EINVAL || errno == EPERM);
		SKIP_SUB("TSC not run: %s", pmc_errdetail());
		return;
	}
	CHECK_INT(PMC_ID_TO_CLASS(id), ==, PMC_CLASS_TSC);
	uint32_t caps = 0, width = 0;
	CHECK_INT(pmc_capabilities(id, &caps), ==, 0);
	CHECK_INT(caps, ==, PMC_CAP_READ);
	CHECK_INT(pmc_width(id, &width), ==, 0);
	CHECK_INT(width, ==, 64);
	CHECK_INT(pmc_start(id), ==, 0);
	spin_ms(5);
	CHECK_U64(read_pmc(id), >, 1000000);
	CHECK_INT(pmc_release(id), ==, 0);
	CHECK_INT(pmc_allocate("tsc", PMC_MODE_SS, 0, 0, &id, 0), ==, -1);
	CHECK_INT(errno, ==, EOPNOTSUPP);
}

/* Software events have the software class's capabilities; names come back. */
static void test_names(void)
{
	pmc_id_t a = alloc_or_die("Page Fault.All", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	pmc_id_t b = alloc_or_die("context-switches", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	pmc_id_t c = alloc_or_die("cs", PMC_MODE_TC, 0, PMC_CPU_ANY, 0); /* a Linux alias */
	uint32_t caps = 0, width = 0;
	CHECK_INT(pmc_capabilities(a, &caps), ==, 0);
	CHECK_INT(caps, ==, PMC_CAP_INTERRUPT | PMC_CAP_READ | PMC_CAP_WRITE | PMC_CAP_USER |
				    PMC_CAP_SYSTEM);
	CHECK_INT(pmc_width(b, &width), ==, 0);
	CHECK_INT(width, ==, 64);
	struct pmc_info rows[3] = {0};
	CHECK_INT(own_rows(0, rows, 3), ==, 3);
	CHECK_STR_EQ(pmc_name_of_event(rows[0].pm_event), "PAGE_FAULT.ALL");
	CHECK_STR_EQ(pmc_name_of_event(rows[1].pm_event), "context-switches");
	CHECK_STR_EQ(pmc_name_of_event(rows[2].pm_event), "cs");
	pmc_release(a);
	pmc_release(b);
	pmc_release(c);
}

int main(void)
{
	init_or_die();
	RUN(test_spin);
	RUN(test_machine);
	RUN(test_self);
	RUN(test_values);
	RUN(test_descendants);
	RUN(test_current_descendants);
	RUN(test_only_while_running);
	RUN(test_system);
	RUN(test_clocks);
	RUN(test_page_faults);
	RUN(test_hardware);
	RUN(test_names);
	return check_exit();
}
