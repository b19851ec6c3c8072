/* User-space counter reads on arm64: with kernel.perf_user_access = 1,
 * hwc_counters_read_fast() reads the PMU counter in user space (no read(2)
 * in the loop, counted by the syscalls:sys_enter_read tracepoint) and agrees
 * with read(2); with 0 it falls back to read(2), with the same values. */
#include "pmu.h"

#include <hwc/hwc.h>
#include <linux/perf_event.h>

#define READS 1000

static hwc_counters *open_self(const char *spec)
{
	hwc_evlist *l = NULL;
	hwc_counters *c = NULL;
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	if (hwc_evlist_new(&l) || hwc_evlist_add(l, spec) || hwc_counters_open(&c, l, &t) ||
	    hwc_counters_start(c)) {
		fprintf(stderr, "cannot count %s: %s\n", spec, hwc_errdetail());
		hwc_counters_close(c);
		c = NULL;
	}
	hwc_evlist_free(l);
	return c;
}

static uint64_t read_value(hwc_counters *c)
{
	struct hwc_value v = {0};
	CHECK_OK(hwc_counters_read(c));
	CHECK_OK(hwc_counters_value(c, 0, 0, &v));
	return v.raw;
}

/* READS fast reads with a loop between: returns the read(2) calls made. */
static uint64_t fast_reads(hwc_counters *c, hwc_counters *reads, uint64_t *delta)
{
	struct hwc_value a, b;
	uint64_t before = read_value(reads);
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &a));
	for (int i = 0; i < READS; i++)
		CHECK_OK(hwc_counters_read_fast(c, 0, 0, &b));
	uint64_t r0 = b.raw;
	pmu_loop(100000);
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &b));
	*delta = b.raw - r0;
	/* read_value() reads once itself */
	return read_value(reads) - before - 1;
}

static void check_mode(const char *access, bool user)
{
	if (set_user_access(access) != 0) {
		SKIP_SUB("cannot write %s", SYSCTL);
		return;
	}
	hwc_counters *c = open_self("instructions:u");
	hwc_counters *reads = open_self("syscalls:sys_enter_read");
	if (!c || !reads) {
		check_failures += !c;
		if (!reads)
			SKIP_SUB("no syscalls:sys_enter_read tracepoint to count the reads");
		hwc_counters_close(c);
		hwc_counters_close(reads);
		return;
	}
	const struct perf_event_mmap_page *page = hwc_counters_userpage(c, 0);
	CHECK(page != NULL);
	if (page)
		fprintf(stderr, "measured: perf_user_access=%s: cap_user_rdpmc %d index %u pmc_width %u\n",
			access, (int)page->cap_user_rdpmc, page->index, (unsigned)page->pmc_width);
	uint64_t delta = MIN_OF_RUNS(({
		uint64_t d, calls = fast_reads(c, reads, &d);
		fprintf(stderr, "measured: perf_user_access=%s: %d fast reads made %" PRIu64
			" read(2) calls\n", access, READS + 2, calls);
		CHECK_U64(calls, ==, user ? 0 : READS + 2);
		d;
	}));
	/* Only the loop (and the read's own instructions) between two reads. */
	fprintf(stderr, "measured: perf_user_access=%s: a 100000-iteration loop read as %" PRIu64 "\n",
		access, delta);
	CHECK_U64(delta, >=, 200000);
	CHECK_U64(delta, <, 200000 + 2000);
	/* Stopped, both reads give the same value. */
	struct hwc_value fast;
	CHECK_OK(hwc_counters_stop(c));
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &fast));
	CHECK_U64(fast.raw, ==, read_value(c));
	hwc_counters_close(c);
	hwc_counters_close(reads);
}

static void test_user_access(void)
{
	check_mode("1", true);
}

static void test_no_user_access(void)
{
	check_mode("0", false);
}

int main(void)
{
	require_pmu();
	if (access(SYSCTL, F_OK) != 0)
		SKIP("no %s (Linux before 5.17)", SYSCTL);
	RUN(test_user_access);
	RUN(test_no_user_access);
	set_user_access("0");
	return check_failures ? 1 : 0;
}
