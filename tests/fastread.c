/* hwc_counters_read_fast() live: the mapped, pre-faulted pages of
 * SELF + HWC_NO_INHERIT counters, and the read(2) fallback, which is what
 * every read takes on this host (software events have index 0; there is no
 * hardware PMU).  The user-space protocol itself is tested on synthetic
 * pages in userpage.c. */
#include "check.h"

#include <errno.h>
#include <hwc/hwc.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>

static hwc_counters *open_self(const char *spec, unsigned flags)
{
	hwc_evlist *list;
	CHECK_OK(hwc_evlist_new(&list));
	int err = hwc_evlist_add(list, spec);
	CHECK_INT(err, ==, 0);
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = flags};
	hwc_counters *c = NULL;
	if (!err)
		err = hwc_counters_open(&c, list, &t);
	if (err)
		fprintf(stderr, "open '%s': %s: %s\n", spec, hwc_strerror(err), hwc_errdetail());
	CHECK_INT(err, ==, 0);
	hwc_evlist_free(list);
	return c;
}

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

/* The page's first word, read without AddressSanitizer's shadow check (whose
 * first look at the shadow of a new mapping would itself fault). */
__attribute__((no_sanitize_address, noinline)) static uint32_t first_word(const void *page)
{
	return *(const volatile uint32_t *)page;
}

static void pages_mapped_prefaulted_and_index_zero(void)
{
	hwc_counters *c = open_self("page-faults,{task-clock,context-switches}", HWC_NO_INHERIT);
	if (!c)
		return;
	for (size_t e = 0; e < 3; e++) {
		const struct perf_event_mmap_page *pg = hwc_counters_userpage(c, e);
		CHECK(pg != NULL);
		if (!pg)
			continue;
		/* Pre-faulted: the first look at the page takes no page fault
		 * (kernels since 6.x map it at mmap(2) time anyway; MAP_POPULATE
		 * is what makes older ones do the same). */
		minor_faults();
		long before = minor_faults();
		uint32_t version = first_word(pg);
		long after = minor_faults();
		CHECK_INT(after - before, ==, 0);
		(void)version;
		/* Software events are never on a hardware counter: the page says
		 * so, and the protocol sends the reader to read(2). */
		CHECK_INT(pg->index, ==, 0);
		struct hwc_value v;
		CHECK_INT(hwc_userpage_read(pg, NULL, &v), ==, -ENODATA);
	}
	CHECK(hwc_counters_userpage(c, 3) == NULL);
	hwc_counters_close(c);
}

static void fallback_counts_and_agrees_with_snapshot(void)
{
	hwc_counters *c = open_self("page-faults,{task-clock,page-faults}", HWC_NO_INHERIT);
	if (!c)
		return;
	CHECK_OK(hwc_counters_start(c));
	struct hwc_value before, after;
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &before));
	touch_pages(64);
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &after));
	CHECK_U64(after.raw - before.raw, >=, 64);
	CHECK_U64(after.enabled, >, 0);
	CHECK_U64(after.running, ==, after.enabled);
	CHECK_U64(after.scaled, ==, after.raw);

	/* Stopped, the fast read, the group member's fast read and the snapshot
	 * all give the same numbers. */
	CHECK_OK(hwc_counters_stop(c));
	struct hwc_value fast, member, snap, clock;
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &fast));
	CHECK_OK(hwc_counters_read_fast(c, 0, 2, &member));
	CHECK_OK(hwc_counters_read_fast(c, 0, 1, &clock));
	CHECK_OK(hwc_counters_read(c));
	CHECK_OK(hwc_counters_value(c, 0, 0, &snap));
	CHECK_U64(fast.raw, ==, snap.raw);
	CHECK_U64(fast.enabled, ==, snap.enabled);
	CHECK_OK(hwc_counters_value(c, 0, 2, &snap));
	CHECK_U64(member.raw, ==, snap.raw);
	CHECK_U64(member.raw, >=, 64);
	CHECK_OK(hwc_counters_value(c, 0, 1, &snap));
	CHECK_U64(clock.raw, ==, snap.raw);
	CHECK_U64(clock.raw, >, 0);

	/* After a reset the fast read counts from zero, as the snapshot does. */
	CHECK_OK(hwc_counters_reset(c));
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &fast));
	CHECK_U64(fast.raw, ==, 0);
	CHECK_OK(hwc_counters_start(c));
	touch_pages(8);
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &fast));
	CHECK_U64(fast.raw, >=, 8);
	hwc_counters_close(c);
}

struct other_thread {
	hwc_counters *c;
	struct hwc_value v;
	int err;
};

static void *read_from_other_thread(void *arg)
{
	struct other_thread *o = arg;
	o->err = hwc_counters_read_fast(o->c, 0, 0, &o->v);
	return NULL;
}

static void other_thread_reads_through_the_kernel(void)
{
	hwc_counters *c = open_self("page-faults", HWC_NO_INHERIT);
	if (!c)
		return;
	CHECK_OK(hwc_counters_start(c));
	touch_pages(16);
	CHECK_OK(hwc_counters_stop(c));
	struct hwc_value mine;
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &mine));
	struct other_thread o = {.c = c, .err = 1};
	pthread_t t;
	CHECK_INT(pthread_create(&t, NULL, read_from_other_thread, &o), ==, 0);
	pthread_join(t, NULL);
	CHECK_INT(o.err, ==, 0);
	CHECK_U64(o.v.raw, ==, mine.raw);
	CHECK_U64(o.v.raw, >=, 16);
	hwc_counters_close(c);
}

static void inherited_counters_have_no_page(void)
{
	hwc_counters *c = open_self("page-faults", 0);
	if (!c)
		return;
	CHECK(hwc_counters_userpage(c, 0) == NULL);
	CHECK_OK(hwc_counters_start(c));
	touch_pages(8);
	struct hwc_value v;
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &v));
	CHECK_U64(v.raw, >=, 8);
	hwc_counters_close(c);
}

static void bad_arguments(void)
{
	hwc_counters *c = open_self("page-faults", HWC_NO_INHERIT);
	if (!c)
		return;
	struct hwc_value v;
	CHECK_INT(hwc_counters_read_fast(c, 0, 1, &v), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "no event 1");
	CHECK_INT(hwc_counters_read_fast(c, 1, 0, &v), ==, -EINVAL);
	hwc_counters_close(c);
}

static void skipped_event_reports_its_error(void)
{
	/* cycles needs a hardware PMU; where there is one it simply counts. */
	hwc_counters *c = open_self("cycles:u,page-faults", HWC_NO_INHERIT | HWC_SKIP_UNSUPPORTED);
	if (!c)
		return;
	struct hwc_value v;
	int status = hwc_counters_event_status(c, 0);
	CHECK_INT(hwc_counters_read_fast(c, 0, 0, &v), ==, status);
	if (status) {
		CHECK(hwc_counters_userpage(c, 0) == NULL);
		CHECK_STR_CONTAINS(hwc_errdetail(), "cycles");
	}
	CHECK_OK(hwc_counters_read_fast(c, 0, 1, &v));
	hwc_counters_close(c);
}

/* On a machine with a hardware PMU whose kernel lets user space read it
 * (x86 rdpmc; arm64 with kernel.perf_user_access = 1, where libhwc asks for
 * it with config1 bit 1): the page offers the counter, and the value read in
 * user space lies between two read(2) snapshots around it. */
static void hardware_counter_read_in_user_space(void)
{
	/* What the kernel grants, from its own files, not from libhwc. */
	long long arm = -1, x86 = -1;
	FILE *f = fopen("/proc/sys/kernel/perf_user_access", "r");
	if (f && fscanf(f, "%lld", &arm) != 1)
		arm = -1;
	if (f)
		fclose(f);
	f = fopen("/sys/bus/event_source/devices/cpu/rdpmc", "r");
	if (f && fscanf(f, "%lld", &x86) != 1)
		x86 = -1;
	if (f)
		fclose(f);
	if (arm != 1 && x86 <= 0) {
		SKIP_SUB("the kernel grants no user-space counter reads (kernel.perf_user_access "
			 "is not 1, no cpu/rdpmc)");
		return;
	}
	hwc_evlist *list;
	CHECK_OK(hwc_evlist_new(&list));
	CHECK_OK(hwc_evlist_add(list, "instructions:u"));
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	hwc_counters *c = NULL;
	int err = hwc_counters_open(&c, list, &t);
	hwc_evlist_free(list);
	if (err) {
		SKIP_SUB("no hardware PMU here: instructions:u does not open");
		return;
	}
	const struct perf_event_mmap_page *pg = hwc_counters_userpage(c, 0);
	CHECK(pg != NULL && pg->cap_user_rdpmc);
	CHECK_OK(hwc_counters_start(c));
	struct hwc_value before, fast, after, direct;
	CHECK_OK(hwc_counters_read(c));
	CHECK_OK(hwc_counters_value(c, 0, 0, &before));
	CHECK_OK(hwc_counters_read_fast(c, 0, 0, &fast));
	CHECK(pg && pg->index != 0); /* on a counter now: read in user space */
	CHECK_OK(hwc_userpage_read(pg, NULL, &direct));
	CHECK_OK(hwc_counters_read(c));
	CHECK_OK(hwc_counters_value(c, 0, 0, &after));
	CHECK_U64(before.raw, <, fast.raw);
	CHECK_U64(fast.raw, <, after.raw);
	CHECK_U64(direct.raw, >, 0);
	hwc_counters_close(c);
}

int main(void)
{
	RUN(pages_mapped_prefaulted_and_index_zero);
	RUN(fallback_counts_and_agrees_with_snapshot);
	RUN(other_thread_reads_through_the_kernel);
	RUN(inherited_counters_have_no_page);
	RUN(bad_arguments);
	RUN(skipped_event_reports_its_error);
	RUN(hardware_counter_read_in_user_space);
	return check_exit();
}
