/* A bound set at work: cpc_set_sample() reads its virtual counters; the
 * calling LWP's set is restarted from its presets after an overflow
 * (cpc_request_preset(), cpc_set_restart(), both safe in the overflow
 * signal's handler) and switched off and on (cpc_disable(), cpc_enable()). */
#include "cpc_impl.h"

#include <errno.h>
#include <time.h>

static hrtime_t hrtime_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrtime_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Still bound to its CPU only?  illumos says EAGAIN otherwise. */
static bool on_own_cpu(const cpc_set_t *set)
{
	cpu_set_t now;
	if (!pthread_equal(pthread_self(), set->thread) ||
	    sched_getaffinity(0, sizeof(now), &now) < 0)
		return false;
	return CPU_COUNT(&now) == 1 && CPU_ISSET(set->cpu, &now);
}

/* Safe in a signal handler: reads and arithmetic only. */
CPC_EXPORT int cpc_set_sample(cpc_t *cpc, cpc_set_t *set, cpc_buf_t *buf)
{
	if (set->cpc != cpc || set->state == UNBOUND || buf->n != set->nreq)
		return cpc__fail(EINVAL);
	if (set->state == BOUND_CURLWP && !pthread_equal(pthread_self(), set->thread))
		return cpc__fail(EINVAL); /* only the LWP that bound it samples it */
	if (set->state == BOUND_CPU && !on_own_cpu(set))
		return cpc__fail(EAGAIN);
	uint64_t running = 0;
	if (set->counters) {
		int err = hwc_counters_read(set->counters);
		if (err)
			return cpc__fail(-err);
	}
	for (int i = 0; i < set->nreq; i++) {
		const struct req *r = &set->req[i];
		uint64_t v = r->origin;
		struct hwc_value val;
		if (r->ev >= 0 && hwc_counters_value(set->counters, 0, (size_t)r->ev, &val) == 0) {
			v += val.raw - r->base; /* wraps at 2^64 like the illumos counter */
			running = val.running;
		}
		buf->data[i] = v;
	}
	buf->hrtime = hrtime_now();
	buf->tick = running;
	return 0;
}

/* The calling LWP's bound set, if it is CPC's and still exists. */
static cpc_set_t *own_set(cpc_t *cpc)
{
	cpc_set_t *s = cpc__curlwp_set;
	return s && cpc__set_valid(cpc, s) && s->state == BOUND_CURLWP ? s : NULL;
}

CPC_EXPORT int cpc_request_preset(cpc_t *cpc, int index, uint64_t preset)
{
	cpc_set_t *set = own_set(cpc);
	if (!set || index < 0 || index >= set->nreq)
		return cpc__fail(EINVAL);
	set->req[index].start = preset; /* from the next cpc_set_restart() */
	return 0;
}

/* Restart the calling LWP's set from its presets: stop it, take the
 * current counts as the new zero, re-arm the overflows, start again.
 * ioctl(2) and read(2) only: the overflow signal handler calls this. */
CPC_EXPORT int cpc_set_restart(cpc_t *cpc, cpc_set_t *set)
{
	(void)set; /* as on illumos, the calling LWP's bound set */
	cpc_set_t *s = own_set(cpc);
	if (!s)
		return cpc__fail(EINVAL);
	hwc_counters *c = s->counters;
	int err = c ? hwc_counters_stop(c) : 0;
	if (!err && c)
		err = hwc_counters_read(c);
	for (int i = 0; !err && i < s->nreq; i++) {
		struct req *r = &s->req[i];
		r->origin = r->start;
		struct hwc_value v;
		if (r->ev < 0 || hwc_counters_value(c, 0, (size_t)r->ev, &v))
			continue;
		r->base = v.raw;
		/* A start too far from 2^64 to overflow: no overflow, ever. */
		uint64_t period = cpc__overflow_period(r->start);
		if (r->ovf)
			err = hwc_counters_overflow_rearm(c, 0, (size_t)r->ev,
							  period ? period : (1ULL << 63) - 1);
	}
	if (!err && c)
		err = hwc_counters_start(c);
	return err ? cpc__fail(-err) : 0;
}

/* Start or stop (OP) the calling LWP's bound set. */
static int switch_own(cpc_t *cpc, int (*op)(hwc_counters *))
{
	cpc_set_t *s = own_set(cpc);
	if (!s)
		return cpc__fail(EINVAL);
	int err = s->counters ? op(s->counters) : 0;
	return err ? cpc__fail(-err) : 0;
}

CPC_EXPORT int cpc_enable(cpc_t *cpc)
{
	return switch_own(cpc, hwc_counters_start);
}

CPC_EXPORT int cpc_disable(cpc_t *cpc)
{
	return switch_own(cpc, hwc_counters_stop);
}
