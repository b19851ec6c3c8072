/* Cost of one region (a begin+end pair): hwc_region_begin/_end vs PAPI's
 * high-level PAPI_hl_region_begin/_end on the same events (PAPI_EVENTS,
 * its perf_event component) vs two raw read(2) calls of the same perf
 * group, methods interleaved, median of rounds.  Also the pair's cost when
 * regions are off (no HWC_REGIONS_OUT), in a child run without it.
 * This machine has no hardware PMU: the events are software ones
 * (page-faults, context-switches), read with read(2) by all three. */
#include "bench.h"

#include <hwc/region.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAIRS 2000
#define ROUNDS 31

static int perf_open(uint64_t config, int group)
{
	struct perf_event_attr a = {0};
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
}

static int raw_fd;

static void pair_hwc(void)
{
	hwc_region_begin("r");
	hwc_region_end("r");
}

static void pair_papi(void)
{
	PAPI_hl_region_begin("r");
	PAPI_hl_region_end("r");
}

static void pair_raw(void)
{
	uint64_t buf[8];
	if (read(raw_fd, buf, sizeof(buf)) <= 0 || read(raw_fd, buf, sizeof(buf)) <= 0)
		exit(1);
}

static double time_pairs(void (*fn)(void))
{
	double t0 = bench_now_ns();
	for (int i = 0; i < PAIRS; i++)
		fn();
	return (bench_now_ns() - t0) / PAIRS;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "off") == 0) {
		double v[ROUNDS];
		for (int r = 0; r < ROUNDS; r++)
			v[r] = time_pairs(pair_hwc);
		printf("%-24s  %.1f\n", "hwc pair, regions off", bench_median(v, ROUNDS));
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: regions DIR (where both libraries write their reports)\n");
		return 2;
	}
	const char *dir = argv[1];
	char out[4096];
	snprintf(out, sizeof(out), "%s/regions.json", dir);

	/* Off: a child without HWC_REGIONS_OUT. */
	unsetenv("HWC_REGIONS_OUT");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "off", (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);

	setenv("HWC_REGIONS_OUT", out, 1);
	setenv("HWC_EVENTS", "{page-faults,context-switches}", 1);
	setenv("PAPI_EVENTS", "perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES", 1);
	setenv("PAPI_OUTPUT_DIRECTORY", dir, 1);
	raw_fd = perf_open(PERF_COUNT_SW_PAGE_FAULTS, -1);
	if (raw_fd < 0 || perf_open(PERF_COUNT_SW_CONTEXT_SWITCHES, raw_fd) < 0) {
		perror("perf_event_open");
		return 1;
	}
	/* First calls set up each library outside the timing. */
	pair_hwc();
	pair_papi();
	double hwc[ROUNDS], papi[ROUNDS], raw[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		hwc[r] = time_pairs(pair_hwc);
		papi[r] = time_pairs(pair_papi);
		raw[r] = time_pairs(pair_raw);
	}
	printf("%-24s  %.1f\n", "hwc pair, 2 events", bench_median(hwc, ROUNDS));
	printf("%-24s  %.1f\n", "PAPI_hl pair, 2 events", bench_median(papi, ROUNDS));
	printf("%-24s  %.1f\n", "raw 2 read(2), group", bench_median(raw, ROUNDS));
	/* Spread: the ratio hwc/PAPI of each round, its quartiles. */
	double ratio[ROUNDS];
	for (int r = 0; r < ROUNDS; r++)
		ratio[r] = hwc[r] / papi[r];
	bench_median(ratio, ROUNDS);
	printf("%-24s  %.2f %.2f %.2f\n", "hwc/PAPI per round", ratio[ROUNDS / 4], ratio[ROUNDS / 2],
	       ratio[3 * ROUNDS / 4]);
	fflush(stdout);
	/* Both libraries write their reports at exit into DIR (bench/regions.sh
	 * shows that they counted what was timed). */
	PAPI_hl_stop();
	return 0;
}
