/* The time-stamp counter and its rate, and what the perf mmap page lets
 * user space read without a system call (time, rdpmc). */
#include "arch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

HWC_EXPORT uint64_t hwc_rdtsc(void)
{
	if (HWC__HAVE_RDPMC)
		return hwc__rdtsc_insn();
	return raw_ns(); /* no counter of its own: the raw monotonic clock, 1 GHz */
}

/* ------------------------------------------------------------- mmap page */

/* Open EV on the calling thread and copy its mmap page (consistently,
 * under the page's sequence lock).  Returns 0 or -errno with detail. */
static int read_user_page(struct perf_event_attr *ev, const char *what,
			  struct perf_event_mmap_page *copy)
{
	ev->size = sizeof(*ev);
	ev->exclude_kernel = ev->exclude_hv = 1; /* allowed at every paranoid level but 3 */
	int fd = hwc__perf_event_open(ev, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		struct hwc_event e = {.name = what, .attr = *ev, .leader = true};
		return hwc__explain_open_error(fd, &e, 0, -1);
	}
	long page = sysconf(_SC_PAGESIZE);
	volatile struct perf_event_mmap_page *pc =
		mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	int err = pc == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err)
		return hwc__fail(err, "cannot map the perf page of %s: %s", what, strerror(-err));
	uint32_t seq;
	do {
		seq = pc->lock;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(copy, (const void *)pc, sizeof(*copy));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (pc->lock != seq || (seq & 1));
	munmap((void *)pc, (size_t)page);
	return 0;
}

/* Capability bits are meaningful only when the kernel says cap_bit0 is retired. */
static bool caps_valid(const struct perf_event_mmap_page *p)
{
	return p->cap_bit0_is_deprecated;
}

HWC_EXPORT int hwc_user_reads(struct hwc_user_reads *out)
{
	hwc__clear_error();
	memset(out, 0, sizeof(*out));
	struct perf_event_mmap_page page;

	struct perf_event_attr sw = {.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY};
	if (read_user_page(&sw, "dummy", &page) != 0) {
		snprintf(out->time_why, sizeof(out->time_why), "%s", hwc_errdetail());
	} else if (!caps_valid(&page) || !page.cap_user_time) {
		snprintf(out->time_why, sizeof(out->time_why),
			 "the kernel does not offer it (cap_user_time is 0): its sched_clock is "
			 "not a stable TSC, as under a hypervisor's clock");
	} else {
		out->time = true;
		out->time_zero = page.cap_user_time_zero;
		out->time_mult = page.time_mult;
		out->time_shift = page.time_shift;
	}

	char path[512];
	long long v;
	out->rdpmc_sysfs = -1;
	const char *core = hwc__core_pmu(NULL);
	if (core) {
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/rdpmc", hwc__sysfs_root(),
			 core);
		if (hwc__read_int_file(path, &v) == 0)
			out->rdpmc_sysfs = (int)v;
	}
	struct perf_event_attr hw = {.type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES};
	hwc__arch_request_user_read(&hw);
	if (read_user_page(&hw, "cycles", &page) != 0) {
		snprintf(out->rdpmc_why, sizeof(out->rdpmc_why), "%s", hwc_errdetail());
	} else {
		out->pmc_width = page.pmc_width;
		out->rdpmc = caps_valid(&page) && page.cap_user_rdpmc;
		if (!out->rdpmc)
			snprintf(out->rdpmc_why, sizeof(out->rdpmc_why),
				 "the kernel does not offer it (cap_user_rdpmc is 0%s%s)",
				 out->rdpmc_sysfs == 0 ? "; the PMU's rdpmc file is 0" : "",
				 hwc__arch_user_read_hint());
	}
	hwc__clear_error();
	return 0;
}

/* ------------------------------------------------------------- TSC rate */

static struct {
	double hz;
	enum hwc_tsc_source src;
} tsc;
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;

static bool from_mmap_page(double *hz)
{
	struct perf_event_attr sw = {.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY};
	struct perf_event_mmap_page page;
	if (read_user_page(&sw, "dummy", &page) != 0 || !caps_valid(&page) ||
	    !page.cap_user_time || !page.time_mult)
		return false;
	/* ns = cycles * time_mult >> time_shift */
	*hz = 1e9 * (double)(1ull << page.time_shift) / (double)page.time_mult;
	return true;
}


/* A TSC reading and the CLOCK_MONOTONIC_RAW time at that instant: the
 * tightest of several brackets, so an interrupt in one does not count. */
static uint64_t bracket(uint64_t *tsc_at, uint64_t *ns_at)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 16; i++) {
		uint64_t t0 = raw_ns(), c = hwc_rdtsc(), t1 = raw_ns();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc_at = c;
			*ns_at = t0 + (t1 - t0) / 2;
		}
	}
	return best;
}

/* The rate from two bracketed readings.  Each end is known to within half
 * its bracket, so the error is at most (w0 + w1) / 2 over the interval:
 * keep extending the interval until that bound is under 2 ppm (typically
 * the first 25 ms; half a second at most on a machine too busy for it). */
static double calibrate(void)
{
	uint64_t c0, n0, c1, n1, w0, w1;
	w0 = bracket(&c0, &n0);
	for (int i = 0; i < 4 && w0 > 1000; i++)
		w0 = bracket(&c0, &n0);
	double hz = 0;
	for (int step = 0; step < 20; step++) {
		struct timespec nap = {0, 25 * 1000 * 1000};
		while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
			;
		w1 = bracket(&c1, &n1);
		hz = (double)(c1 - c0) * 1e9 / (double)(n1 - n0);
		if ((double)(w0 + w1) / 2 < 2e-6 * (double)(n1 - n0))
			break;
	}
	return hz;
}

static void tsc_setup(void)
{
	double hz;
	enum hwc_tsc_source src;
	bool first, arch = hwc__arch_tsc_rate(&hz, &src, &first);
	if (arch && first) {
		tsc.hz = hz;
		tsc.src = src;
	} else if (from_mmap_page(&tsc.hz)) {
		tsc.src = HWC_TSC_PERF_MMAP;
	} else if (arch) {
		tsc.hz = hz;
		tsc.src = src;
	} else {
		tsc.hz = calibrate();
		tsc.src = HWC_TSC_CALIBRATED;
	}
}

HWC_EXPORT int hwc_tsc_hz(double *hz, enum hwc_tsc_source *src)
{
	int saved = errno;
	pthread_once(&tsc_once, tsc_setup);
	hwc__clear_error();
	errno = saved;
	*hz = tsc.hz;
	if (src)
		*src = tsc.src;
	return 0;
}

HWC_EXPORT const char *hwc_tsc_source_name(enum hwc_tsc_source src)
{
	switch (src) {
	case HWC_TSC_PERF_MMAP:
		return "the kernel's conversion (perf mmap page, cap_user_time)";
	case HWC_TSC_CPUID_15:
		return "CPUID leaf 0x15 (crystal clock x ratio)";
	case HWC_TSC_CPUID_16:
		return "CPUID leaf 0x15 ratio with the leaf 0x16 base frequency";
	case HWC_TSC_HYPERVISOR:
		return "the hypervisor's CPUID leaf 0x40000010";
	case HWC_TSC_CALIBRATED:
		return "calibrated against CLOCK_MONOTONIC_RAW";
	case HWC_TSC_CNTFRQ:
		return "CNTFRQ_EL0 (the Arm generic timer's frequency register)";
	}
	return "unknown";
}
