/* Binding a set: its counting requests become one hwc group opened on the
 * calling LWP (cpc_bind_curlwp), an LWP of a process libpctx controls
 * (cpc_bind_pctx) or a CPU (cpc_bind_cpu), with the overflow signal armed
 * for CPC_OVF_NOTIFY_EMT requests; and cpc_unbind(). */
#include "cpc_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread cpc_set_t *cpc__curlwp_set __attribute__((tls_model("initial-exec")));

static pid_t self_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

uint64_t cpc__overflow_period(uint64_t preset)
{
	uint64_t period = 0 - preset;
	return preset == 0 || period >> 63 ? 0 : period;
}

static bool counts(const struct req *r)
{
	return r->flags & (CPC_COUNT_USER | CPC_COUNT_SYSTEM | CPC_COUNT_HV);
}

/* Map an -errno of hwc to errno, reporting the subcode through the handler. */
static int bind_error(cpc_t *cpc, const char *fn, int err, const char *detail)
{
	int e = -err, sub = 0;
	switch (e) {
	case EACCES:
	case EPERM:
		e = EACCES;
		sub = CPC_ATTR_REQUIRES_PRIVILEGE;
		break;
	case ENOENT:
	case ENODEV:
		e = EINVAL;
		sub = CPC_RESOURCE_UNAVAIL;
		break;
	case EOPNOTSUPP:
		e = ENOTSUP;
		sub = CPC_RESOURCE_UNAVAIL;
		break;
	case EBUSY:
		e = EAGAIN;
		sub = CPC_RESOURCE_UNAVAIL;
		break;
	case EINVAL:
		sub = CPC_RESOURCE_UNAVAIL;
		break;
	default:
		break;
	}
	if (sub)
		cpc__err(cpc, fn, sub, detail);
	return cpc__fail(e);
}

static void release_counters(cpc_set_t *set)
{
	hwc_counters_close(set->counters);
	set->counters = NULL;
	for (int i = 0; i < set->nreq; i++)
		set->req[i].ev = -1;
}

/* Reset every request of SET to its preset; ORDER gets the requests that
 * count, in group order: the first with CPC_OVF_NOTIFY_EMT leads, as its
 * overflow stops the whole group.  Returns how many count. */
static int group_order(cpc_set_t *set, int *order)
{
	int lead = -1, n = 0;
	for (int i = 0; i < set->nreq && lead < 0; i++)
		if (counts(&set->req[i]) && (set->req[i].flags & CPC_OVF_NOTIFY_EMT) &&
		    cpc__overflow_period(set->req[i].preset))
			lead = i;
	if (lead >= 0)
		order[n++] = lead;
	for (int i = 0; i < set->nreq; i++)
		if (i != lead && counts(&set->req[i]))
			order[n++] = i;
	for (int i = 0; i < set->nreq; i++) {
		struct req *r = &set->req[i];
		r->ev = -1;
		r->ovf = false;
		r->base = 0;
		r->start = r->origin = r->preset;
	}
	return n;
}

/* The hwc spec of the group: "{spec,spec,...}" in ORDER, or NULL. */
static char *group_spec(const cpc_set_t *set, const int *order, int n)
{
	size_t len = 3;
	for (int k = 0; k < n; k++)
		len += strlen(set->req[order[k]].spec) + 1;
	char *spec = malloc(len);
	if (!spec)
		return NULL;
	size_t off = 0;
	spec[off++] = '{';
	for (int k = 0; k < n; k++)
		off += (size_t)sprintf(spec + off, "%s%s", k ? "," : "", set->req[order[k]].spec);
	spec[off++] = '}';
	spec[off] = '\0';
	return spec;
}

/* Resolve the group into *OUT and give each event its request's privilege
 * levels and overflow period: 0, or an hwc -errno with its detail. */
static int group_list(cpc_set_t *set, const int *order, int n, hwc_evlist **out)
{
	char *spec = group_spec(set, order, n);
	if (!spec)
		return -ENOMEM;
	int err = hwc_evlist_new(out);
	if (!err)
		err = hwc_evlist_add(*out, spec);
	free(spec);
	for (int k = 0; !err && k < n; k++) {
		struct req *r = &set->req[order[k]];
		struct perf_event_attr *a = hwc_evlist_attr(*out, (size_t)k);
		a->exclude_user = !(r->flags & CPC_COUNT_USER);
		a->exclude_kernel = !(r->flags & CPC_COUNT_SYSTEM);
		a->exclude_hv = !(r->flags & CPC_COUNT_HV);
		if (r->flags & CPC_OVF_NOTIFY_EMT)
			a->sample_period = cpc__overflow_period(r->preset);
		r->ev = k;
	}
	return err;
}

/* Route the overflow of every CPC_OVF_NOTIFY_EMT request to thread SIG_TID. */
static int arm_overflow(cpc_set_t *set, const int *order, int n, pid_t sig_tid)
{
	int err = 0;
	for (int k = 0; !err && k < n; k++) {
		struct req *r = &set->req[order[k]];
		r->ovf = (r->flags & CPC_OVF_NOTIFY_EMT) && cpc__overflow_period(r->preset);
		if (r->ovf)
			err = hwc_counters_overflow_signal(set->counters, 0, (size_t)k, cpc_sigemt(),
							   sig_tid);
	}
	return err;
}

/* Open SET's requests as one group on TARGET and start them; overflow
 * signals go to thread SIG_TID.  With no counting request, every request
 * stays at its preset. */
static int bind_set(cpc_t *cpc, cpc_set_t *set, const char *fn, const struct hwc_target *target,
		    pid_t sig_tid)
{
	int *order = malloc((size_t)set->nreq * sizeof(*order));
	if (!order)
		return cpc__fail(ENOMEM);
	int n = group_order(set, order), err = 0;
	hwc_evlist *l = NULL;
	if (n > 0)
		err = group_list(set, order, n, &l);
	if (n > 0 && !err)
		err = hwc_counters_open(&set->counters, l, target);
	if (n > 0 && !err)
		err = arm_overflow(set, order, n, sig_tid);
	if (n > 0 && !err)
		err = hwc_counters_start(set->counters);
	hwc_evlist_free(l);
	free(order);
	if (err) {
		char detail[1024];
		snprintf(detail, sizeof(detail), "%s", hwc_errdetail());
		release_counters(set);
		return bind_error(cpc, fn, err, detail);
	}
	return 0;
}

static int check_bindable(cpc_t *cpc, cpc_set_t *set)
{
	if (!cpc__set_valid(cpc, set) || set->nreq <= 0)
		return cpc__fail(EINVAL);
	if (set->state != UNBOUND)
		cpc_unbind(cpc, set);
	return 0;
}

CPC_EXPORT int cpc_bind_curlwp(cpc_t *cpc, cpc_set_t *set, uint_t flags)
{
	static const char fn[] = "cpc_bind_curlwp";
	if (flags & ~(uint_t)CPC_BIND_LWP_INHERIT)
		return cpc__fail(EINVAL);
	if (check_bindable(cpc, set))
		return -1;
	if (flags & CPC_BIND_LWP_INHERIT)
		for (int i = 0; i < set->nreq; i++)
			if (set->req[i].flags & CPC_OVF_NOTIFY_EMT) {
				cpc__err(cpc, fn, CPC_REQ_INVALID_FLAGS,
					"CPC_OVF_NOTIFY_EMT cannot be combined with "
					"CPC_BIND_LWP_INHERIT on Linux: the kernel cannot stop "
					"inherited counters at an overflow");
				return cpc__fail(ENOTSUP);
			}
	/* One set per LWP: binding replaces the calling LWP's previous set. */
	cpc_set_t *old = cpc__curlwp_set;
	if (old && old != set && cpc__set_valid(cpc, old) && old->state == BOUND_CURLWP)
		cpc_unbind(cpc, old);
	struct hwc_target t = {.kind = HWC_TARGET_SELF,
			       .flags = HWC_NO_FALLBACK | ((flags & CPC_BIND_LWP_INHERIT)
								  ? HWC_THREADS_ONLY
								  : HWC_NO_INHERIT)};
	pid_t tid = self_tid();
	if (bind_set(cpc, set, fn, &t, tid))
		return -1;
	set->state = BOUND_CURLWP;
	set->tid = tid;
	set->thread = pthread_self();
	cpc__curlwp_set = set;
	return 0;
}

CPC_EXPORT int cpc_bind_pctx(cpc_t *cpc, pctx_t *pctx, id_t id, cpc_set_t *set, uint_t flags)
{
	static const char fn[] = "cpc_bind_pctx";
	if (flags != 0 || !pctx)
		return cpc__fail(EINVAL);
	if (check_bindable(cpc, set))
		return -1;
	pid_t tid = pctx_lwp_tid(pctx, id);
	if (tid < 0)
		return cpc__fail(ESRCH);
	/* One set per LWP: replace the one bound to this LWP before. */
	for (;;) {
		sigset_t saved;
		cpc__lock(cpc, &saved);
		cpc_set_t *s = cpc->sets;
		while (s && !(s != set && s->state == BOUND_PCTX && s->pctx == pctx && s->lwpid == id))
			s = s->next;
		cpc__unlock(cpc, &saved);
		if (!s)
			break;
		cpc_unbind(cpc, s);
	}
	struct hwc_target t = {.kind = HWC_TARGET_THREAD,
			       .pid = tid,
			       .flags = HWC_NO_INHERIT | HWC_NO_FALLBACK};
	if (bind_set(cpc, set, fn, &t, tid))
		return -1;
	set->state = BOUND_PCTX;
	set->pctx = pctx;
	set->lwpid = id;
	set->tid = tid;
	return 0;
}

/* 1 if CPU is online, 0 if it exists but is offline, -1 if it does not exist. */
static int cpu_online(int cpu)
{
	char path[64];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	if (cpu < 0 || access(path, F_OK) != 0)
		return -1;
	int cpus[CPU_SETSIZE];
	int n = hwc_online_cpus(cpus, CPU_SETSIZE);
	for (int i = 0; i < n && i < CPU_SETSIZE; i++)
		if (cpus[i] == cpu)
			return 1;
	return 0;
}

CPC_EXPORT int cpc_bind_cpu(cpc_t *cpc, processorid_t id, cpc_set_t *set, uint_t flags)
{
	static const char fn[] = "cpc_bind_cpu";
	if (flags != 0)
		return cpc__fail(EINVAL);
	if (check_bindable(cpc, set))
		return -1;
	int state = id >= CPU_SETSIZE ? -1 : cpu_online(id);
	if (state < 0)
		return cpc__fail(EINVAL);
	if (state == 0)
		return cpc__fail(ENOSYS);
	/* As on illumos, the calling LWP moves to the CPU it measures. */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(id, &one);
	if (sched_getaffinity(0, sizeof(set->saved_affinity), &set->saved_affinity) < 0 ||
	    sched_setaffinity(0, sizeof(one), &one) < 0) {
		int e = errno;
		char detail[128];
		snprintf(detail, sizeof(detail), "CPU %d: %s", (int)id, strerror(e));
		cpc__err(cpc, fn, CPC_PBIND_FAILED, detail);
		return cpc__fail(e);
	}
	int cpu = id;
	struct hwc_target t = {.kind = HWC_TARGET_CPUS, .cpus = &cpu, .ncpus = 1,
			       .flags = HWC_NO_FALLBACK};
	pid_t tid = self_tid();
	if (bind_set(cpc, set, fn, &t, tid)) {
		int e = errno;
		sched_setaffinity(0, sizeof(set->saved_affinity), &set->saved_affinity);
		return cpc__fail(e);
	}
	set->state = BOUND_CPU;
	set->cpu = id;
	set->tid = tid;
	set->thread = pthread_self();
	return 0;
}

CPC_EXPORT int cpc_unbind(cpc_t *cpc, cpc_set_t *set)
{
	if (!cpc__set_valid(cpc, set) || set->state == UNBOUND)
		return cpc__fail(EINVAL);
	release_counters(set);
	int ret = 0;
	if (set->state == BOUND_CPU &&
	    sched_setaffinity(0, sizeof(set->saved_affinity), &set->saved_affinity) < 0)
		ret = -1;
	if (set->state == BOUND_CURLWP && cpc__curlwp_set == set)
		cpc__curlwp_set = NULL;
	set->state = UNBOUND;
	set->pctx = NULL;
	set->tid = 0;
	set->cpu = -1;
	return ret;
}
