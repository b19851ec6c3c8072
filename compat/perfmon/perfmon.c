/* FreeBSD's perfmon(4) device on libhwc.  The counters are the process's
 * own (not the CPU's, as on FreeBSD): a counter counts the thread that set
 * it up and the threads and processes that thread creates afterwards, in
 * the modes its flags choose, while it is started.  Control words are the
 * x86 PERFEVTSEL layout and go through the same encoder as cpu/.../ events
 * (hwc_evlist_add_evtsel()). */
#include "../common/devshim.h"
#include "control.h"

#include <machine/perfmon.h>
#include <math.h>
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool writer; /* a descriptor open for writing exists */
static struct counter {
	bool setup;
	unsigned ctl;    /* as set up; PMCF_EN while started */
	hwc_counters *c;
} counters[NPMC];

static int perfmon_open(int flags)
{
	if (!devshim_writable(flags))
		return 0;
	pthread_mutex_lock(&lock);
	int err = writer ? EBUSY : 0; /* one writer at a time, as on FreeBSD */
	writer = true;
	pthread_mutex_unlock(&lock);
	return err; /* (on EBUSY the writer that was there stays) */
}

static void release(struct counter *k)
{
	hwc_counters_close(k->c);
	*k = (struct counter){0};
}

/* The writer set the counters up: closing it releases them. */
static void perfmon_close(int flags)
{
	if (!devshim_writable(flags))
		return;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < NPMC; i++)
		release(&counters[i]);
	writer = false;
	pthread_mutex_unlock(&lock);
}

static bool running(const struct counter *k)
{
	return k->ctl & (PMCF_EN << 16);
}

static bool counts(const struct counter *k)
{
	return k->ctl & ((PMCF_USR | PMCF_OS) << 16);
}

static int setup(struct pmc *pmc)
{
	unsigned ctl = perfmon_control(pmc);
	uint64_t evtsel;
	bool unused;
	int err = perfmon_control_evtsel(ctl, &evtsel, &unused);
	hwc_counters *c = NULL;
	if (!err)
		err = devshim_counter_open(evtsel, 1, &c);
	if (err)
		return err; /* the counter keeps its previous setup */
	struct counter *k = &counters[pmc->pmc_num];
	release(k);
	*k = (struct counter){true, ctl, c};
	return 0;
}

static int start(struct counter *k)
{
	if (counts(k) && hwc_counters_start(k->c) < 0)
		return EIO;
	k->ctl |= PMCF_EN << 16;
	return 0;
}

static int stop(struct counter *k)
{
	if (counts(k) && hwc_counters_stop(k->c) < 0)
		return EIO;
	k->ctl &= ~(PMCF_EN << 16);
	return 0;
}

static int reset(struct counter *k)
{
	if (running(k))
		return EBUSY; /* PMIOSTOP first, as perfmon(4) says */
	return hwc_counters_reset(k->c) < 0 ? EIO : 0;
}

static int read_value(const struct counter *k, long long *out)
{
	struct hwc_value v;
	if (hwc_counters_read_fast(k->c, 0, 0, &v) < 0)
		return EIO;
	*out = (long long)v.scaled;
	return 0;
}

/* Requests naming a counter: check the number and that it is set up. */
static int counter_of(int num, struct counter **k)
{
	if (num < 0 || num >= NPMC)
		return EINVAL;
	*k = &counters[num];
	return (*k)->setup ? 0 : EBUSY;
}

static int perfmon_ioctl_locked(int flags, unsigned long request, void *arg)
{
	struct counter *k;
	int err;
	if (!arg) /* every request takes an argument: the kernel's answer */
		return request == PMIOSETUP || request == PMIOGET || request == PMIOSTART ||
				       request == PMIOSTOP || request == PMIORESET ||
				       request == PMIOREAD || request == PMIOTSTAMP
			       ? EFAULT
			       : ENOTTY;
	switch (request) {
	case PMIOSETUP: {
		struct pmc *pmc = arg;
		if (!devshim_writable(flags))
			return EPERM;
		if (pmc->pmc_num < 0 || pmc->pmc_num >= NPMC)
			return EINVAL;
		return setup(pmc);
	}
	case PMIOGET: {
		struct pmc *pmc = arg;
		if ((err = counter_of(pmc->pmc_num, &k)))
			return err;
		pmc->pmc_val = k->ctl;
		return 0;
	}
	case PMIOSTART:
	case PMIOSTOP:
	case PMIORESET:
		if (!devshim_writable(flags))
			return EPERM;
		if ((err = counter_of(*(const int *)arg, &k)))
			return err;
		return request == PMIOSTART ? start(k) : request == PMIOSTOP ? stop(k) : reset(k);
	case PMIOREAD: {
		struct pmc_data *d = arg;
		if ((err = counter_of(d->pmcd_num, &k)))
			return err;
		return read_value(k, &d->pmcd_value);
	}
	case PMIOTSTAMP: {
		/* The exact rate (libhwc caches it), not FreeBSD's estimate. */
		struct pmc_tstamp *t = arg;
		double hz;
		if (hwc_tsc_hz(&hz, NULL) < 0)
			return ENOTTY; /* FreeBSD's answer when the rate is unknown */
		t->pmct_rate = (int)lround(hz / 1e6);
		t->pmct_value = (long long)hwc_rdtsc();
		return 0;
	}
	default:
		return ENOTTY;
	}
}

static int perfmon_ioctl(int flags, unsigned long request, void *arg)
{
	pthread_mutex_lock(&lock);
	int err = perfmon_ioctl_locked(flags, request, arg);
	pthread_mutex_unlock(&lock);
	return err;
}

const struct devshim_driver devshim_driver = {_PATH_PERFMON, perfmon_open, perfmon_ioctl,
					      perfmon_close};
