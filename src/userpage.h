/* The kernel's self-monitoring protocol for the first page of a perf event's
 * mmap (struct perf_event_mmap_page, documented in
 * include/uapi/linux/perf_event.h and perf_event_open(2)).  Inline so that the
 * counting core's fast read compiles to straight loads plus the two
 * instructions, while hwc_userpage_read() can pass other readers (tests,
 * emulators).  Never installed. */
#ifndef HWC_USERPAGE_H
#define HWC_USERPAGE_H

#include "arch.h"

/* capabilities bits, named as in the uapi header's bit-field */
#define HWC__CAP_USER_RDPMC      (1ULL << 2)
#define HWC__CAP_USER_TIME       (1ULL << 3)
#define HWC__CAP_USER_TIME_SHORT (1ULL << 5)


/* Read PC with the documented lock/sequence loop.  Fills RAW, ENABLED and
 * RUNNING and returns true, or returns false when the value must come from
 * read(2): the event is not on a hardware counter now (index 0) or the
 * kernel does not let user space read it (cap_user_rdpmc clear).  With
 * READ_TSC NULL the times are the page's as the kernel last stored them
 * (no clock read: for callers that want the count alone). */
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
		if (read_tsc && (caps & HWC__CAP_USER_TIME)) {
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

	if (read_tsc && (caps & HWC__CAP_USER_TIME) && time_shift < 64) {
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
