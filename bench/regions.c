/* Cost of one region (a begin+end pair): hwc_region_begin/_end vs PAPI's
 * high-level PAPI_hl_region_begin/_end on the same events (PAPI_EVENTS,
 * its perf_event component) vs two raw read(2) calls of the same perf
 * group.  Each method runs in its own thread (each counts its own thread,
 * as regions do), the threads take turns round by round (interleaved), and
 * each figure is the median of rounds.  Also the pair's cost when regions
 * are off (no HWC_REGIONS_OUT), in a child run without it.
 *
 * The events, of user space (PAPI's default domain): instructions and
 * cycles where this machine has a PMU, else the software events
 * page-faults and context-switches.  Where kernel.perf_user_access exists
 * (arm64), hwc also runs a second time with its counters read by read(2):
 * that thread opens them while the sysctl is 0 (so they do not ask for
 * user-space reads), the other while it is 1, which it stays during the
 * rounds; it is set back at the end.  After the rounds, each method runs
 * PAIRS pairs more with a count of its thread's system calls
 * (raw_syscalls:sys_enter), to show what each pair costs the kernel. */
#include "bench.h"

#include <hwc/hwc.h>
#include <hwc/region.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAIRS 200
#define ROUNDS 301
#define SYSCTL "/proc/sys/kernel/perf_user_access"

enum { HWC, HWC_SYSCALL, PAPI, RAW, NMETHODS };
static const char *const label[NMETHODS] = {"hwc pair", "hwc pair, read(2)", "PAPI_hl pair",
					    "raw 2 read(2), group"};

static bool hardware; /* the events are instructions:u and cycles:u */
static int raw_fd;

static int perf_open(uint64_t config, int group)
{
	struct perf_event_attr a = {0};
	a.size = sizeof(a);
	a.type = hardware ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
	a.config = config;
	a.exclude_kernel = 1; /* user space, as PAPI's default domain */
	a.exclude_hv = 1;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
}

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

/* The first pairs: the libraries set up, and say when they cannot count. */
static void first_pair(void (*fn)(void))
{
	int err = 0;
	if (fn == pair_hwc && (err = hwc_region_begin("r")) == 0 && (err = hwc_region_end("r")) == 0)
		return;
	if (fn == pair_hwc) {
		fprintf(stderr, "regions: hwc counts no region: %s\n", strerror(-err));
		exit(1);
	}
	if (fn == pair_papi && ((err = PAPI_hl_region_begin("r")) != PAPI_OK ||
				(err = PAPI_hl_region_end("r")) != PAPI_OK)) {
		fprintf(stderr, "regions: PAPI_hl counts no region: %s\n", PAPI_strerror(err));
		exit(1);
	}
	if (fn == pair_raw)
		fn();
}

static double time_pairs(void (*fn)(void))
{
	double t0 = bench_now_ns();
	for (int i = 0; i < PAIRS; i++)
		fn();
	return (bench_now_ns() - t0) / PAIRS;
}

/* The calling thread's system calls in PAIRS pairs of FN, per pair; -1
 * when they cannot be counted. */
static double syscalls_per_pair(void (*fn)(void))
{
	hwc_evlist *l = NULL;
	hwc_counters *c = NULL;
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	struct hwc_value a, b;
	double v = -1;
	if (!hwc_evlist_new(&l) && !hwc_evlist_add(l, "raw_syscalls:sys_enter") &&
	    !hwc_counters_open(&c, l, &t) && !hwc_counters_start(c) &&
	    !hwc_counters_read_fast(c, 0, 0, &a)) {
		for (int i = 0; i < PAIRS; i++)
			fn();
		if (!hwc_counters_read_fast(c, 0, 0, &b))
			v = (double)(b.raw - a.raw - 1) / PAIRS; /* B's read(2) counts itself */
	}
	hwc_counters_close(c);
	hwc_evlist_free(l);
	return v;
}

static struct method {
	void (*fn)(void);
	bool on;
	pthread_t thread;
	sem_t go;
	double ns[ROUNDS], syscalls;
} m[NMETHODS] = {[HWC] = {.fn = pair_hwc}, [HWC_SYSCALL] = {.fn = pair_hwc},
		 [PAPI] = {.fn = pair_papi}, [RAW] = {.fn = pair_raw}};
static sem_t done;

/* A method's thread: its first pair (the library's set-up) outside the
 * timing, then one round per go, then the count of system calls. */
static void *method_thread(void *arg)
{
	struct method *me = arg;
	if (me->fn == pair_raw) {
		raw_fd = perf_open(hardware ? PERF_COUNT_HW_INSTRUCTIONS : PERF_COUNT_SW_PAGE_FAULTS, -1);
		if (raw_fd < 0 || perf_open(hardware ? PERF_COUNT_HW_CPU_CYCLES
						     : PERF_COUNT_SW_CONTEXT_SWITCHES, raw_fd) < 0) {
			perror("perf_event_open");
			exit(1);
		}
	}
	first_pair(me->fn);
	sem_post(&done);
	for (int r = 0; r < ROUNDS; r++) {
		sem_wait(&me->go);
		me->ns[r] = time_pairs(me->fn);
		sem_post(&done);
	}
	sem_wait(&me->go);
	me->syscalls = syscalls_per_pair(me->fn);
	sem_post(&done);
	return NULL;
}

static void start(int k)
{
	m[k].on = true;
	sem_init(&m[k].go, 0, 0);
	if (pthread_create(&m[k].thread, NULL, method_thread, &m[k])) {
		fprintf(stderr, "cannot create a thread\n");
		exit(1);
	}
	sem_wait(&done);
}

static int write_sysctl(const char *v)
{
	FILE *f = fopen(SYSCTL, "w");
	if (!f)
		return -1;
	int ok = fputs(v, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "off") == 0) {
		double v[ROUNDS];
		for (int r = 0; r < ROUNDS; r++)
			v[r] = time_pairs(pair_hwc);
		printf("%-26s  %.1f\n", "hwc pair, regions off", bench_median(v, ROUNDS));
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

	int probe = (int)syscall(SYS_perf_event_open,
				 &(struct perf_event_attr){.size = sizeof(struct perf_event_attr),
							   .type = PERF_TYPE_HARDWARE,
							   .config = PERF_COUNT_HW_INSTRUCTIONS,
							   .exclude_kernel = 1},
				 0, -1, -1, 0);
	hardware = probe >= 0;
	if (probe >= 0)
		close(probe);
	setenv("HWC_REGIONS_OUT", out, 1);
	setenv("HWC_EVENTS", hardware ? "{instructions:u,cycles:u}" : "{page-faults:u,context-switches:u}", 1);
	setenv("PAPI_EVENTS", hardware ? "perf::INSTRUCTIONS,perf::CYCLES"
				       : "perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES", 1);
	setenv("PAPI_OUTPUT_DIRECTORY", dir, 1);
	printf("%-26s  %s\n", "events", hardware ? "instructions:u, cycles:u (a PMU)"
						  : "page-faults, context-switches (no PMU)");

	char old[16] = "";
	FILE *f = fopen(SYSCTL, "r");
	if (f && fgets(old, sizeof(old), f))
		old[strcspn(old, "\n")] = 0;
	if (f)
		fclose(f);
	sem_init(&done, 0, 0);
	if (hardware && *old && write_sysctl("0") == 0) {
		start(HWC_SYSCALL);
		write_sysctl("1");
	}
	start(HWC);
	start(PAPI);
	start(RAW);
	for (int r = 0; r <= ROUNDS; r++) /* the last turn: the system calls */
		for (int k = 0; k < NMETHODS; k++)
			if (m[k].on) {
				sem_post(&m[k].go);
				sem_wait(&done);
			}
	if (*old)
		write_sysctl(old);
	double med[NMETHODS];
	printf("%-26s  %s\n", "", "ns/pair  system calls/pair");
	for (int k = 0; k < NMETHODS; k++) {
		if (!m[k].on)
			continue;
		pthread_join(m[k].thread, NULL);
		double ns[ROUNDS];
		memcpy(ns, m[k].ns, sizeof(ns));
		med[k] = bench_median(ns, ROUNDS);
		if (m[k].syscalls < 0) /* no tracepoint to count them (not root) */
			printf("%-26s  %.1f  n/a\n", label[k], med[k]);
		else
			printf("%-26s  %.1f  %.2f\n", label[k], med[k], m[k].syscalls);
	}
	/* Spread: the ratio hwc/PAPI of each round, its quartiles. */
	double ratio[ROUNDS];
	for (int r = 0; r < ROUNDS; r++)
		ratio[r] = m[HWC].ns[r] / m[PAPI].ns[r];
	bench_median(ratio, ROUNDS);
	printf("%-26s  %.2f %.2f %.2f\n", "hwc/PAPI per round", ratio[ROUNDS / 4], ratio[ROUNDS / 2],
	       ratio[3 * ROUNDS / 4]);
	fflush(stdout);
	/* Both libraries write their reports at exit into DIR (bench/regions.sh
	 * shows that they counted what was timed). */
	PAPI_hl_stop();
	return 0;
}
