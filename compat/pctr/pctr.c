/* OpenBSD's pctr(4) device on libhwc, in one of two modes (pctr(4)):
 *
 * Whole CPUs, when the setter may count all tasks of a CPU (root,
 * CAP_PERFMON, or perf_event_paranoid <= 0): as on OpenBSD, a function is
 * set on every CPU and stays after the setter exits; the helper process of
 * cpus.c holds the counters, and any process reads those of its CPU.
 *
 * Per thread, otherwise: counter N counts the thread that set its
 * function, from that moment, in the modes the function chooses, and that
 * thread reads it with rdpmc() without a system call when the kernel allows
 * it.  A process that set counters this way reads its own, not the CPUs'.
 *
 * Functions are the x86 PERFEVTSEL layout and go through the same encoder
 * as cpu/.../ events (hwc_evlist_add_evtsel()). */
#include "../common/devshim.h"
#include "cpus.h"
#include "function.h"

#include <machine/pctr.h>
#include <pthread.h>
#include <sched.h>

#define SHIM_EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct counter {
	unsigned fn;
	hwc_counters *c; /* NULL: never set */
	bool counts;     /* the function counts something: read it */
	pctrval mask;    /* the hardware counter's width */
} counters[PCTR_NUM];

static int pctr_open(int flags)
{
	(void)flags;
	return 0;
}

static void pctr_close(int flags)
{
	(void)flags; /* the functions stay set, as OpenBSD's do */
}

/* Counter N's value; the caller holds the lock. */
static int value(const struct counter *k, pctrval *out)
{
	*out = 0;
	if (!k->counts)
		return 0;
	struct hwc_value v;
	int err = hwc_counters_read_fast(k->c, 0, 0, &v);
	if (err)
		return -err;
	*out = v.scaled & k->mask;
	return 0;
}

/* May this process count whole CPUs (what the kernel says, not a guess)? */
static bool cpu_wide(void)
{
	struct hwc_permissions p;
	return hwc_permissions(&p) == 0 && p.cpu_wide;
}

/* Has this process set counters of its own (per-thread mode)? */
static bool own_counters(void)
{
	for (unsigned i = 0; i < PCTR_NUM; i++)
		if (counters[i].c)
			return true;
	return false;
}

/* The counts of the CPU we run on, from the helper: 0, or ENOENT when
 * there are none to read (no helper; this process counts its own). */
static int cpus_read(struct pctrst *st)
{
	pthread_mutex_lock(&lock);
	int err = own_counters() ? ENOENT : pctr_cpus_read(sched_getcpu(), st);
	pthread_mutex_unlock(&lock);
	return err;
}

static int set_function(unsigned n, unsigned fn)
{
	uint64_t evtsel;
	bool counts;
	int err = pctr_function_evtsel(fn, &evtsel, &counts);
	if (err)
		return err;
	if (cpu_wide()) {
		/* The CPU and the kernel take the function: checked here, so
		 * that none starts the helper in vain (ENODEV without a PMU). */
		hwc_counters *c;
		err = devshim_counter_open(evtsel, 0, &c);
		hwc_counters_close(c);
		if (err)
			return err;
		pthread_mutex_lock(&lock);
		err = pctr_cpus_set(n, fn);
		pthread_mutex_unlock(&lock);
		return err;
	}
	hwc_counters *c;
	err = devshim_counter_open(evtsel, 0, &c);
	if (!err && counts && hwc_counters_start(c) < 0) {
		hwc_counters_close(c);
		err = EIO;
	}
	if (err)
		return err; /* the counter keeps its previous function */
	const struct perf_event_mmap_page *pg = hwc_counters_userpage(c, 0);
	unsigned width = pg && pg->pmc_width ? pg->pmc_width : 64;
	pthread_mutex_lock(&lock);
	hwc_counters_close(counters[n].c);
	counters[n] = (struct counter){fn, c, counts, width >= 64 ? ~0ULL : (1ULL << width) - 1};
	pthread_mutex_unlock(&lock);
	return 0;
}

static int pctr_ioctl(int flags, unsigned long request, void *arg)
{
	if (!arg && (request == PCIOCRD || (request >= PCIOCS0 && request <= PCIOCS3)))
		return EFAULT; /* what the kernel answers for a NULL argument */
	switch (request) {
	case PCIOCRD: {
		struct pctrst *st = arg;
		int err = cpus_read(st);
		if (err != ENOENT)
			return err;
		err = 0;
		pthread_mutex_lock(&lock);
		for (unsigned i = 0; i < PCTR_NUM; i++)
			st->pctr_fn[i] = counters[i].fn;
		st->pctr_tsc = hwc_rdtsc();
		for (unsigned i = 0; i < PCTR_NUM && !err; i++)
			err = value(&counters[i], &st->pctr_hwc[i]);
		pthread_mutex_unlock(&lock);
		return err;
	}
	case PCIOCS0:
	case PCIOCS1:
	case PCIOCS2:
	case PCIOCS3:
		if (!devshim_writable(flags))
			return EPERM;
		return set_function((unsigned)(request - PCIOCS0), *(const unsigned *)arg);
	default:
		return ENOTTY;
	}
}

const struct devshim_driver devshim_driver = {_PATH_PCTR, pctr_open, pctr_ioctl, pctr_close};

SHIM_EXPORT pctrval __pctr_rdpmc(unsigned ctr)
{
	pctrval v = 0;
	if (ctr >= PCTR_NUM)
		return 0;
	struct pctrst st;
	if (cpus_read(&st) == 0)
		return st.pctr_hwc[ctr];
	pthread_mutex_lock(&lock);
	value(&counters[ctr], &v);
	pthread_mutex_unlock(&lock);
	return v;
}
