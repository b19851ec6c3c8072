/* The self-monitoring protocol of hwc_userpage_read(), on SYNTHETIC pages.
 *
 * This host cannot execute rdpmc on a perf event (no hardware PMU: every
 * page the kernel gives us has index 0), so the pages here are built by the
 * test and the counter and time stamp reads are test doubles passed through
 * struct hwc_userpage_readers.  The live fallback is tested in fastread.c. */
#include "check.h"

#include <errno.h>
#include <hwc/hwc.h>

static struct perf_event_mmap_page page;
static uint64_t pmc_value, tsc_value;
static int pmc_calls;
static unsigned pmc_asked;
/* When set, the first rdpmc plays a kernel update racing with the reader:
 * it bumps the sequence and moves the offset, so the loop must retry. */
static int64_t racing_offset;
static int racing;

static uint64_t fake_pmc(unsigned counter)
{
	pmc_calls++;
	pmc_asked = counter;
	if (racing) {
		racing = 0;
		page.lock += 2;
		page.offset = racing_offset;
	}
	return pmc_value;
}

static uint64_t fake_tsc(void)
{
	return tsc_value;
}

static const struct hwc_userpage_readers fakes = {fake_pmc, fake_tsc};

/* A page of an event on hardware counter 2 (index 3) that may be read from
 * user space, 48 bits wide, never multiplexed, without user-space time. */
static void fresh_page(void)
{
	memset(&page, 0, sizeof(page));
	page.lock = 6;
	page.index = 3;
	page.offset = 1000;
	page.time_enabled = page.time_running = 700;
	page.cap_bit0_is_deprecated = 1;
	page.cap_user_rdpmc = 1;
	page.pmc_width = 48;
	pmc_value = 5000;
	tsc_value = 0;
	pmc_calls = 0;
	pmc_asked = ~0u;
	racing = 0;
}

static void index_zero_means_read(void)
{
	fresh_page();
	page.index = 0;
	struct hwc_value v = {1, 1, 1, 1};
	CHECK_INT(hwc_userpage_read(&page, &fakes, &v), ==, -ENODATA);
	CHECK_INT(pmc_calls, ==, 0);
	CHECK_STR_CONTAINS(hwc_errdetail(), "not on a hardware counter");
	CHECK_U64(v.raw, ==, 0);
}

static void no_capability_means_read(void)
{
	fresh_page();
	page.cap_user_rdpmc = 0;
	struct hwc_value v;
	CHECK_INT(hwc_userpage_read(&page, &fakes, &v), ==, -ENODATA);
	CHECK_INT(pmc_calls, ==, 0);
	CHECK_STR_CONTAINS(hwc_errdetail(), "no user-space rdpmc");
}

static void counter_plus_offset(void)
{
	fresh_page();
	struct hwc_value v;
	CHECK_OK(hwc_userpage_read(&page, &fakes, &v));
	CHECK_INT(pmc_calls, ==, 1);
	CHECK_INT(pmc_asked, ==, 2); /* rdpmc takes index - 1 */
	CHECK_U64(v.raw, ==, 6000);
	CHECK_U64(v.enabled, ==, 700); /* no cap_user_time: the stored times */
	CHECK_U64(v.running, ==, 700);
	CHECK_U64(v.scaled, ==, 6000);
}

static void sign_extension(void)
{
	/* A 40-bit counter whose bit 39 is set is negative: the kernel starts
	 * counters at -period.  Bits above the width are not the counter's. */
	fresh_page();
	page.pmc_width = 40;
	page.offset = 1 << 20;
	pmc_value = 0xab0000ffffffff00ULL; /* low 40 bits: -256 */
	struct hwc_value v;
	CHECK_OK(hwc_userpage_read(&page, &fakes, &v));
	CHECK_U64(v.raw, ==, (1 << 20) - 256);

	/* Bit 39 clear: positive, garbage above the width still dropped. */
	fresh_page();
	page.pmc_width = 40;
	page.offset = 10;
	pmc_value = 0xff00000000000123ULL;
	CHECK_OK(hwc_userpage_read(&page, &fakes, &v));
	CHECK_U64(v.raw, ==, 10 + 0x123);

	/* A 64-bit wide counter is taken as is. */
	fresh_page();
	page.pmc_width = 64;
	page.offset = -5;
	pmc_value = 0x8000000000000005ULL;
	CHECK_OK(hwc_userpage_read(&page, &fakes, &v));
	CHECK_U64(v.raw, ==, 0x8000000000000000ULL);
}

static void time_extrapolation(void)
{
	/* cap_user_time: enabled and running grow by the time since the kernel
	 * stored them, from the TSC: delta = time_offset + quot * mult +
	 * (rem * mult >> shift), quot = cyc >> shift, rem = the low bits. */
	fresh_page();
	page.cap_user_time = 1;
	page.time_shift = 10;
	page.time_mult = 1000;
	page.time_offset = (uint64_t)-1000000; /* wraps on purpose */
	tsc_value = (1 << 20) + 5;
	struct hwc_value v;
	CHECK_OK(hwc_userpage_read(&page, &fakes, &v));
	uint64_t delta = 1024 * 1000 + (5 * 1000 >> 10) - 1000000;
	CHECK_U64(delta, ==, 24004);
	CHECK_U64(v.enabled, ==, 700 + delta);
	CHECK_U64(v.running, ==, 700 + delta);
	CHECK_U64(v.scaled, ==, 6000);

	/* cap_user_time_short: a 16-bit clock, cyc = time_cycles +
	 * ((cyc - time_cycles) & time_mask). */
	fresh_page();
	page.cap_user_time = 1;
	page.cap_user_time_short = 1;
	page.time_shift = 0;
	page.time_mult = 1;
	page.time_cycles = 0x1000;
	page.time_mask = 0xffff;
	tsc_value = 0x12345;
	CHECK_OK(hwc_userpage_read(&page, &fakes, &v));
	CHECK_U64(v.enabled, ==, 700 + 0x1000 + ((0x12345 - 0x1000) & 0xffff));

	/* A nonsensical shift is not extrapolated (and is no undefined shift). */
	fresh_page();
	page.cap_user_time = 1;
	page.time_shift = 64;
	page.time_mult = 3;
	tsc_value = 12345;
	CHECK_OK(hwc_userpage_read(&page, &fakes, &v));
	CHECK_U64(v.enabled, ==, 700);
}

static void multiplexed_scaling(void)
{
	fresh_page();
	page.time_enabled = 1000;
	page.time_running = 250;
	struct hwc_value v;
	CHECK_OK(hwc_userpage_read(&page, &fakes, &v));
	CHECK_U64(v.raw, ==, 6000);
	CHECK_U64(v.scaled, ==, 24000);
}

static void sequence_retry(void)
{
	/* The kernel updated the page while we read it: the values of the first
	 * pass mix old and new, so the reader must go round again. */
	fresh_page();
	racing = 1;
	racing_offset = 400000;
	struct hwc_value v;
	CHECK_OK(hwc_userpage_read(&page, &fakes, &v));
	CHECK_INT(pmc_calls, ==, 2);
	CHECK_U64(v.raw, ==, 400000 + 5000);
	CHECK_INT(page.lock, ==, 8);
}

static void own_instructions_not_run_without_index(void)
{
	/* With the CPU's own readers, a page that offers nothing must not get
	 * as far as rdpmc (which would fault on this host). */
	fresh_page();
	page.index = 0;
	struct hwc_value v;
	CHECK_INT(hwc_userpage_read(&page, NULL, &v), ==, -ENODATA);
	fresh_page();
	page.cap_user_rdpmc = 0;
	struct hwc_userpage_readers tsc_only = {NULL, fake_tsc};
	CHECK_INT(hwc_userpage_read(&page, &tsc_only, &v), ==, -ENODATA);
}

int main(void)
{
	RUN(index_zero_means_read);
	RUN(no_capability_means_read);
	RUN(counter_plus_offset);
	RUN(sign_extension);
	RUN(time_extrapolation);
	RUN(multiplexed_scaling);
	RUN(sequence_retry);
	RUN(own_instructions_not_run_without_index);
	return check_exit();
}
