/* The kernel's self-monitoring protocol for the first page of a perf event's
 * mmap (struct perf_event_mmap_page, documented in
 * include/uapi/linux/perf_event.h and perf_event_open(2)).  Inline so that the
 * counting core's fast read compiles to straight loads plus the two
 * instructions, while hwc_userpage_read() can pass other readers (tests,
 * emulators).  Never installed. */
#ifndef HWC_USERPAGE_H
#define HWC_USERPAGE_H

#include "internal.h"

/* capabilities bits, named as in the uapi header's bit-field */
#define HWC__CAP_USER_RDPMC      (1ULL << 2)
#define HWC__CAP_USER_TIME       (1ULL << 3)
#define HWC__CAP_USER_TIME_SHORT (1ULL << 5)

/* The read instructions exist on x86 only; elsewhere the page never offers
 * a user-space read and every value comes from read(2). */
#if defined(__x86_64__) || defined(__i386__)
#define HWC__HAVE_RDPMC 1
static inline uint64_t hwc__rdpmc(unsigned counter)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return lo | (uint64_t)hi << 32;
}
static inline uint64_t hwc__rdtsc_insn(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return lo | (uint64_t)hi << 32;
}
#else
#define HWC__HAVE_RDPMC 0
static inline uint64_t hwc__rdpmc(unsigned counter)
{
	(void)counter;
	return 0;
}
static inline uint64_t hwc__rdtsc_insn(void)
{
	return 0;
}
#endif

/* Read PC with the documented lock/sequence loop.  Fills RAW, ENABLED and
 * RUNNING and returns true, or returns false when the value must come from
 * read(2): the event is not on a hardware counter now (index 0) or the
 * kernel does not let user space read it (cap_user_rdpmc clear). */
static inline bool hwc__userpage_read(const volatile struct perf_event_mmap_page *pc,
				      uint64_t (*read_pmc)(unsigned),
				      uint64_t (*read_tsc)(void), uint64_t *raw,
				      uint64_t *enabled, uint64_t *running)
{
	uint32_t seq, index, time_mult = 0;
	uint16_t width = 64, time_shift = 0;
	uint64_t caps, count, ena, run, pmc = 0, cyc = 0, time_offset = 0;
	uint64_t time_cycles = 0, time_mask = 0;
	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		caps = pc->capabilities;
		if (!(caps & HWC__CAP_USER_RDPMC) || !HWC__HAVE_RDPMC)
			return false;
		ena = pc->time_enabled;
		run = pc->time_running;
		if (caps & HWC__CAP_USER_TIME) {
			cyc = read_tsc();
			time_offset = pc->time_offset;
			time_mult = pc->time_mult;
			time_shift = pc->time_shift;
			if (caps & HWC__CAP_USER_TIME_SHORT) {
				time_cycles = pc->time_cycles;
				time_mask = pc->time_mask;
			}
		}
		index = pc->index;
		count = (uint64_t)pc->offset;
		if (index) {
			width = pc->pmc_width;
			pmc = read_pmc(index - 1);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq);

	if (!index)
		return false; /* not on a counter now: only read(2) knows the count */
	if (width > 0 && width < 64) /* sign-extend the counter's WIDTH bits */
		pmc = (uint64_t)((int64_t)(pmc << (64 - width)) >> (64 - width));
	count += pmc;

	if ((caps & HWC__CAP_USER_TIME) && time_shift < 64) {
		if (caps & HWC__CAP_USER_TIME_SHORT)
			cyc = time_cycles + ((cyc - time_cycles) & time_mask);
		/* Time since time_enabled was stored; the arithmetic wraps on
		 * purpose (time_offset is chosen modulo 2^64). */
		uint64_t quot = cyc >> time_shift;
		uint64_t rem = cyc & ((1ULL << time_shift) - 1);
		uint64_t delta = time_offset + quot * time_mult + ((rem * time_mult) >> time_shift);
		ena += delta;
		run += delta; /* index != 0: the event is running now */
	}
	*raw = count;
	*enabled = ena;
	*running = run;
	return true;
}

#endif
