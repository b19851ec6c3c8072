/* libhwc on a real PMU: exact instruction counts of a known loop on every
 * target, encodings, groups, multiplexing and overflow signals. */
#include "pmu.h"

#include <hwc/hwc.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>

#define N 1000000ull

static char work[PATH_MAX]; /* the workload, beside this program */

static hwc_evlist *list_of(const char *spec)
{
	hwc_evlist *l = NULL;
	if (hwc_evlist_new(&l) != 0 || hwc_evlist_add(l, spec) != 0) {
		fprintf(stderr, "cannot add %s: %s\n", spec, hwc_errdetail());
		exit(1);
	}
	return l;
}

/* SPEC's first event on TARGET around N loop iterations of this thread. */
static uint64_t count_loop(const char *spec, const struct hwc_target *t, uint64_t n)
{
	hwc_evlist *l = list_of(spec);
	hwc_counters *c = NULL;
	struct hwc_value v = {0};
	CHECK_OK(hwc_counters_open(&c, l, t));
	if (c) {
		CHECK_OK(hwc_counters_start(c));
		pmu_loop(n);
		CHECK_OK(hwc_counters_stop(c));
		CHECK_OK(hwc_counters_read(c));
		CHECK_OK(hwc_counters_value(c, HWC_ALL, 0, &v));
		CHECK_U64(v.running, ==, v.enabled);
		hwc_counters_close(c);
	}
	hwc_evlist_free(l);
	return v.raw;
}

static uint64_t count_self(const char *spec, uint64_t n)
{
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	return count_loop(spec, &t, n);
}

static uint64_t count_self_instructions(uint64_t n)
{
	return count_self("instructions:u", n);
}

static void test_self(void)
{
	check_doubling("libhwc self", count_self_instructions, N);
}

/* Raw and sysfs encodings of INST_RETIRED count what instructions does. */
static void test_encodings(void)
{
	uint64_t ref = MIN_OF_RUNS(count_self("instructions:u", N));
	const char *specs[] = {"r08:u", "armv8_pmuv3/event=0x8/u", "armv8_pmuv3/inst_retired/u"};
	for (size_t i = 0; i < sizeof(specs) / sizeof(*specs); i++) {
		uint64_t v = MIN_OF_RUNS(count_self(specs[i], N));
		fprintf(stderr, "measured: %s: %" PRIu64 " (instructions:u %" PRIu64 ")\n", specs[i], v, ref);
		CHECK_NEAR(v, ref, EXACT_PPM);
	}
}

static uint64_t count_command(uint64_t n)
{
	char arg[32];
	snprintf(arg, sizeof(arg), "%" PRIu64, n);
	char *argv[] = {work, "loop", arg, NULL};
	hwc_evlist *l = list_of("instructions:u");
	struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	hwc_counters *c = NULL;
	struct hwc_value v = {0};
	CHECK_OK(hwc_counters_open(&c, l, &t));
	if (c) {
		CHECK_OK(hwc_counters_start(c));
		int status = -1;
		waitpid(hwc_counters_pid(c), &status, 0);
		CHECK_INT(status, ==, 0);
		CHECK_OK(hwc_counters_read(c));
		CHECK_OK(hwc_counters_value(c, HWC_ALL, 0, &v));
		hwc_counters_close(c);
	}
	hwc_evlist_free(l);
	return v.raw;
}

static void test_command(void)
{
	check_doubling("libhwc command", count_command, N);
}

static void *thread_loop(void *arg)
{
	pmu_loop(*(uint64_t *)arg);
	return NULL;
}

/* An existing process that starts a thread running the loop once attached. */
static uint64_t count_attached(uint64_t n)
{
	int go[2];
	if (pipe(go))
		abort();
	pid_t pid = fork();
	if (pid == 0) {
		char ch;
		close(go[1]);
		if (read(go[0], &ch, 1) != 1)
			_exit(3);
		pthread_t th;
		if (pthread_create(&th, NULL, thread_loop, &n) || pthread_join(th, NULL))
			_exit(4);
		_exit(0);
	}
	close(go[0]);
	hwc_evlist *l = list_of("instructions:u");
	struct hwc_target t = {.kind = HWC_TARGET_PROCESS, .pid = pid};
	hwc_counters *c = NULL;
	struct hwc_value v = {0};
	CHECK_OK(hwc_counters_open(&c, l, &t));
	if (c)
		CHECK_OK(hwc_counters_start(c));
	if (write(go[1], "x", 1) != 1)
		abort();
	/* Read once the child has run but before it is reaped: a zombie's
	 * events still hold their counts. */
	siginfo_t si;
	CHECK_INT(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), ==, 0);
	CHECK_INT(si.si_status, ==, 0);
	if (c) {
		CHECK_OK(hwc_counters_read(c));
		CHECK_OK(hwc_counters_value(c, HWC_ALL, 0, &v));
		hwc_counters_close(c);
	}
	waitpid(pid, NULL, 0);
	close(go[1]);
	hwc_evlist_free(l);
	return v.raw;
}

static void test_attach_threads(void)
{
	/* a >= 2N in check_doubling(): the thread, created after the attach, counted */
	check_doubling("libhwc attached pid, thread created later", count_attached, N);
}

/* Our CPU, while this thread loops there (the guest is otherwise idle). */
static uint64_t count_cpus(uint64_t n)
{
	int cpu = 0; /* the one this test runs on (main) */
	struct hwc_target t = {.kind = HWC_TARGET_CPUS, .cpus = &cpu, .ncpus = 1};
	return count_loop("instructions:u", &t, n);
}

static void test_per_cpu(void)
{
	check_doubling("libhwc CPU 0", count_cpus, 10 * N);
}

/* read(2) calls the calling thread makes, from the syscalls tracepoint. */
static hwc_counters *read_syscalls(void)
{
	hwc_evlist *l = NULL;
	if (hwc_evlist_new(&l) || hwc_evlist_add(l, "syscalls:sys_enter_read")) {
		hwc_evlist_free(l);
		return NULL;
	}
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	hwc_counters *c = NULL;
	if (hwc_counters_open(&c, l, &t) || hwc_counters_start(c)) {
		hwc_counters_close(c);
		c = NULL;
	}
	hwc_evlist_free(l);
	return c;
}

static uint64_t value_of(hwc_counters *c)
{
	struct hwc_value v = {0};
	CHECK_OK(hwc_counters_read(c));
	CHECK_OK(hwc_counters_value(c, HWC_ALL, 0, &v));
	return v.raw;
}

static void test_group(void)
{
	hwc_evlist *l = list_of("{instructions:u,r08:u,armv8_pmuv3/inst_retired/u,cycles:u}");
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	hwc_counters *c = NULL;
	CHECK_OK(hwc_counters_open(&c, l, &t));
	if (!c)
		goto out;
	hwc_counters *reads = read_syscalls();
	CHECK_OK(hwc_counters_start(c));
	pmu_loop(N);
	CHECK_OK(hwc_counters_stop(c));
	uint64_t before = reads ? value_of(reads) : 0;
	CHECK_OK(hwc_counters_read(c));
	if (reads) {
		/* value_of() reads once itself: the group read is the other one. */
		uint64_t after = value_of(reads);
		fprintf(stderr, "measured: group read: %" PRIu64 " read(2) calls\n", after - before - 1);
		CHECK_U64(after - before, ==, 2);
		hwc_counters_close(reads);
	} else {
		SKIP_SUB("no syscalls:sys_enter_read tracepoint: cannot count the reads");
	}
	struct hwc_value v[4];
	CHECK_OK(hwc_counters_values(c, 0, v));
	fprintf(stderr, "measured: group: %" PRIu64 " %" PRIu64 " %" PRIu64 " cycles %" PRIu64 "\n", v[0].raw,
		v[1].raw, v[2].raw, v[3].raw);
	CHECK_U64(v[1].raw, ==, v[0].raw);
	CHECK_U64(v[2].raw, ==, v[0].raw);
	CHECK_U64(v[0].raw, >=, 2 * N);
	CHECK_U64(v[3].raw, ==, v[0].raw); /* -icount shift=0: one cycle each */
	for (int i = 0; i < 4; i++)
		CHECK_U64(v[i].running, ==, v[i].enabled);
	hwc_counters_close(c);
out:
	hwc_evlist_free(l);
}

/* A group of more events than the PMU has counters cannot be scheduled:
 * refused at open, with a detail that says so. */
static void test_group_too_big(void)
{
	char spec[512] = "{";
	for (int i = 0; i < 40; i++)
		strcat(spec, i ? ",r08:u" : "r08:u");
	strcat(spec, "}");
	hwc_evlist *l = list_of(spec);
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	hwc_counters *c = NULL;
	int err = hwc_counters_open(&c, l, &t);
	fprintf(stderr, "measured: 40-event group: %d: %s\n", err, hwc_errdetail());
	CHECK_INT(err, <, 0);
	CHECK(c == NULL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "group");
	CHECK_STR_CONTAINS(hwc_errdetail(), "counters");
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

/* More events than counters: each runs part of the time, and its scaled
 * value estimates the loop's count. */
static void test_multiplex(void)
{
	enum { NEV = 12 };
	const uint64_t n = 100 * N;
	char spec[256] = "";
	for (int i = 0; i < NEV; i++)
		strcat(spec, i ? ",instructions:u" : "instructions:u");
	hwc_evlist *l = list_of(spec);
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	hwc_counters *c = NULL;
	CHECK_OK(hwc_counters_open(&c, l, &t));
	if (c) {
		CHECK_OK(hwc_counters_start(c));
		pmu_loop(n);
		CHECK_OK(hwc_counters_stop(c));
		CHECK_OK(hwc_counters_read(c));
		struct hwc_value v[NEV];
		CHECK_OK(hwc_counters_values(c, 0, v));
		for (int i = 0; i < NEV; i++) {
			fprintf(stderr, "measured: multiplexed %2d: raw %" PRIu64 " running/enabled %.3f scaled %" PRIu64
				"\n", i, v[i].raw, (double)v[i].running / (double)v[i].enabled, v[i].scaled);
			CHECK(hwc_value_multiplexed(&v[i]));
			CHECK_NEAR(v[i].scaled, 2 * n, 20000);
		}
		hwc_counters_close(c);
	}
	hwc_evlist_free(l);
}

static volatile sig_atomic_t signals;
static volatile uint64_t at_signal;
static hwc_counters *ovf;

static void on_overflow(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if (si->si_code != POLL_HUP || si->si_fd != hwc_counters_fd(ovf, 0, 0))
		return;
	struct hwc_value v;
	if (signals == 0 && hwc_counters_read_fast(ovf, 0, 0, &v) == 0)
		at_signal = v.raw;
	signals++;
}

/* The signal comes once PERIOD instructions have been counted, not before:
 * after 1% less, none; 1% more, one, and the counter then holds PERIOD plus
 * the interrupt's skid. */
static void test_overflow_signal(void)
{
	const uint64_t period = 1000000, margin = period / 100;
	struct sigaction act = {.sa_sigaction = on_overflow, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&act.sa_mask);
	sigaction(SIGUSR1, &act, NULL);
	/* cycles: QEMU raises no overflow interrupt for its instruction
	 * counter; with -icount shift=0 a cycle is an instruction (test_group). */
	hwc_evlist *l = list_of("cycles:u");
	hwc_evlist_attr(l, 0)->sample_period = period;
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	CHECK_OK(hwc_counters_open(&ovf, l, &t));
	if (ovf) {
		CHECK_OK(hwc_counters_overflow_signal(ovf, 0, 0, SIGUSR1, (pid_t)syscall(SYS_gettid)));
		CHECK_OK(hwc_counters_start(ovf));
		pmu_loop((period - margin) / 2);
		int early = signals;
		pmu_loop(margin); /* 2 * margin instructions: past the period by 1% */
		int late = signals;
		hwc_counters_stop(ovf);
		fprintf(stderr, "measured: overflow period %" PRIu64 ": %d signals 1%% before, %d 1%% after; "
			"counter at the signal %" PRIu64 "\n", period, early, late, at_signal);
		CHECK_INT(early, ==, 0);
		CHECK_INT(late, ==, 1);
		CHECK_U64(at_signal, >=, period);
		CHECK_U64(at_signal, <, period + margin);
		hwc_counters_close(ovf);
	}
	signal(SIGUSR1, SIG_DFL);
	hwc_evlist_free(l);
}

int main(int argc, char **argv)
{
	(void)argc;
	require_pmu();
	snprintf(work, sizeof(work), "%s", argv[0]);
	char *slash = strrchr(work, '/');
	snprintf(slash ? slash + 1 : work, sizeof(work) - (size_t)(slash ? slash + 1 - work : 0),
		 "work");
	/* One CPU: the other vCPU then stays idle (see RUNS in pmu.h). */
	run_on_cpu0();
	RUN(test_self);
	RUN(test_encodings);
	RUN(test_command);
	RUN(test_attach_threads);
	RUN(test_per_cpu);
	RUN(test_group);
	RUN(test_group_too_big);
	RUN(test_multiplex);
	RUN(test_overflow_signal);
	return check_failures ? 1 : 0;
}
