/* Code regions on a real PMU: a region around N iterations of the known
 * loop (2N user instructions) reports 2N within 0.01%, with the counters
 * read from user space (kernel.perf_user_access = 1) and with read(2) (0).
 * The program runs itself ("child N") with HWC_REGIONS_OUT set, as a user's
 * program would run, and reads the count back from its JSON report. */
#include "pmu.h"

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
