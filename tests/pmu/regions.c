/* Code regions on a real PMU: a region around N iterations of the known
 * loop (2N user instructions) reports 2N within 0.01%, with the counters
 * read from user space (kernel.perf_user_access = 1) and with read(2) (0).
 * The program runs itself ("child N") with HWC_REGIONS_OUT set, as a user's
 * program would run, and reads the count back from its JSON report.
 * It also counts the system calls of PAIRS begin+end pairs, on a hardware
 * group and on the default events: none when user space may read the
 * counters (the defaults are then the hardware group alone), one read(2)
 * per group and call when not. */
#include "pmu.h"

#include <hwc/hwc.h>
#include <hwc/region.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 5000000

static char report[64];

/* The region "loop"'s instructions:u in a child's report of N iterations. */
static uint64_t region_count(uint64_t n)
{
	char arg[32], text[4096];
	snprintf(arg, sizeof(arg), "%" PRIu64, n);
	unlink(report);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("HWC_REGIONS_OUT", report, 1);
		setenv("HWC_EVENTS", "instructions:u", 1);
		execl("/proc/self/exe", "regions", "child", arg, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK_INT(st, ==, 0);
	FILE *f = fopen(report, "r");
	size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	if (f)
		fclose(f);
	text[len] = 0;
	const char *key = "\"instructions:u\": ";
	const char *p = strstr(text, key);
	if (!p || !strstr(text, "\"name\": \"loop\", \"calls\": 1,")) {
		fprintf(stderr, "no count of region 'loop' in the report: %s\n", text);
		check_failures++;
		return 0;
	}
	return strtoull(p + strlen(key), NULL, 10);
}

#define PAIRS 1000

/* In a child with regions on: the system calls the calling thread makes in
 * PAIRS begin+end pairs (after a first pair that opens the counters), as
 * the raw_syscalls:sys_enter tracepoint counts them; its exit status is 0
 * or 3 when a call failed.  The count goes through a pipe. */
static int pairs_child(int out)
{
	hwc_evlist *l = NULL;
	hwc_counters *c = NULL;
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	struct hwc_value a, b;
	if (hwc_evlist_new(&l) || hwc_evlist_add(l, "raw_syscalls:sys_enter") ||
	    hwc_counters_open(&c, l, &t) || hwc_counters_start(c)) {
		fprintf(stderr, "cannot count system calls: %s\n", hwc_errdetail());
		return 77;
	}
	if (hwc_region_begin("pair") || hwc_region_end("pair") ||
	    hwc_counters_read_fast(c, 0, 0, &a))
		return 3;
	for (int i = 0; i < PAIRS; i++)
		if (hwc_region_begin("pair") || hwc_region_end("pair"))
			return 3;
	if (hwc_counters_read_fast(c, 0, 0, &b))
		return 3;
	uint64_t calls = b.raw - a.raw - 1; /* the read(2) of B counts itself */
	return write(out, &calls, sizeof(calls)) == sizeof(calls) ? 0 : 3;
}

/* The system calls of PAIRS pairs in a child (a fresh process: regions are
 * set up at a process's first call); UINT64_MAX when it could not tell. */
static uint64_t pair_syscalls(const char *events)
{
	int p[2];
	uint64_t calls = UINT64_MAX;
	if (pipe(p) != 0)
		return calls;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		setenv("HWC_REGIONS_OUT", report, 1);
		if (events)
			setenv("HWC_EVENTS", events, 1);
		else
			unsetenv("HWC_EVENTS");
		_exit(pairs_child(p[1]));
	}
	close(p[1]);
	if (read(p[0], &calls, sizeof(calls)) != sizeof(calls))
		calls = UINT64_MAX;
	close(p[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		return UINT64_MAX - 1;
	CHECK_INT(st, ==, 0);
	return calls;
}

static void check_pair_syscalls(const char *access, const char *events, uint64_t expected)
{
	uint64_t calls = pair_syscalls(events);
	if (calls == UINT64_MAX - 1) {
		SKIP_SUB("no raw_syscalls:sys_enter tracepoint to count the system calls");
		return;
	}
	fprintf(stderr, "measured: perf_user_access=%s: %d region pairs on %s made %" PRIu64
		" system calls\n", access, PAIRS, events ? events : "the defaults", calls);
	CHECK_U64(calls, ==, expected);
}

static void check_mode(const char *access)
{
	if (set_user_access(access) != 0) {
		SKIP_SUB("cannot write %s", SYSCTL);
		return;
	}
	uint64_t v = MIN_OF_RUNS(region_count(N));
	fprintf(stderr, "measured: perf_user_access=%s: region around %d iterations: %" PRIu64
		" instructions (exact loop: %d)\n", access, N, v, 2 * N);
	CHECK_U64(v, >=, 2 * N);
	CHECK_NEAR(v, 2 * N, EXACT_PPM);
	check_doubling("region", region_count, N);

	/* User space reads the group: no call; else one read(2) per group and
	 * call.  Unread from user space, the defaults are two groups. */
	bool user = strcmp(access, "1") == 0;
	check_pair_syscalls(access, "{instructions:u,cycles:u}", user ? 0 : 2 * PAIRS);
	check_pair_syscalls(access, NULL, user ? 0 : 4 * PAIRS);
}

static void test_user_read(void)
{
	check_mode("1");
}

static void test_syscall_read(void)
{
	check_mode("0");
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "child") == 0) {
		uint64_t n = strtoull(argv[2], NULL, 10);
		if (hwc_region_begin("loop"))
			return 3;
		pmu_loop(n);
		return hwc_region_end("loop") ? 3 : 0;
	}
	require_pmu();
	run_on_cpu0();
	if (access(SYSCTL, F_OK) != 0)
		SKIP("no %s (Linux before 5.17)", SYSCTL);
	snprintf(report, sizeof(report), "/tmp/hwc-pmu-regions-%d.json", (int)getpid());
	RUN(test_user_read);
	RUN(test_syscall_read);
	set_user_access("0");
	unlink(report);
	return check_failures ? 1 : 0;
}
