/* The sampler: events opened for sampling on a target, one ring buffer per
 * CPU.  A process target is sampled per (thread, CPU) with inheritance,
 * because the kernel refuses to map the buffer of an inherited per-thread
 * event; every event of a CPU writes into that CPU's buffer
 * (PERF_EVENT_IOC_SET_OUTPUT).  Records are identified by their
 * PERF_SAMPLE_IDENTIFIER when there are several events (one event's are
 * all its own, and carry no id: perf's smaller records).
 *
 * This file holds the sampler's life: options, the events' attributes,
 * open and close, start and stop, and what it tells about itself.  Opening
 * on threads and CPUs is in sampler_open.c, the HWC_LOG_* options and the
 * records the sampler makes itself in sampler_log.c, draining the buffers
 * in sampler_ring.c, writing into a recording in sampler_record.c. */
#include "sampler.h"
#include "perf_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_FREQ 4000
#define DEFAULT_PAGES 128
#define DEFAULT_DWARF_PAGES 512
#define DEFAULT_STACK 8192
#define MAX_STACK PF_RECORD_MAX_ALIGNED /* the kernel's limit: a sample is one record */

/* ----------------------------------------------------------------- events */

static void sampling_attr(const hwc_sampler *s, struct perf_event_attr *a)
{
	const struct hwc_sampler_opts *o = &s->opts;
	a->size = sizeof(*a);
	a->sample_type = BASE_SAMPLE_TYPE;
	a->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = hwc__sampler_clock(s); /* so user records can be timestamped alike */
	if (o->period) {
		a->sample_period = o->period;
		a->freq = 0;
	} else {
		a->sample_freq = o->freq;
		a->freq = 1;
	}
	if (o->callgraph != HWC_CALLGRAPH_NONE)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (o->callgraph == HWC_CALLGRAPH_DWARF) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = hwc__unwind_regs_mask();
		a->sample_stack_user = o->stack_size;
		a->exclude_callchain_user = 1; /* the copied stack gives the user part */
	}
}

static int add_sampled(hwc_sampler *s, const hwc_evlist *list)
{
	if (!list)
		return 0;
	size_t first = s->evs.n;
	int err = hwc__events_add_list(&s->evs, list);
	if (err)
		return err;
	bool values = s->opts.flags & HWC_GROUP_VALUES;
	for (size_t e = first; e < s->evs.n; e++) {
		struct hwc__opened *m = &s->evs.e[e];
		struct perf_event_attr *a = &m->ev->pub.attr;
		sampling_attr(s, a);
		if (values && s->evs.e[m->leader].group_size > 1) {
			/* its members only count for the leader's samples: the group
			 * opens as one or not at all, weak or not */
			m->ev->pub.weak = false;
			a->read_format = GROUP_READ_FORMAT;
			if (m->group_size) {
				a->sample_type |= PERF_SAMPLE_READ;
			} else { /* a member: counted, read with its leader's samples */
				a->sample_period = 0;
				a->freq = 0;
			}
		}
	}
	return 0;
}

/* The first event carries the side-band records: maps, comms, tasks. */
static void tracking(hwc_sampler *s)
{
	struct perf_event_attr *a = &s->evs.e[0].ev->pub.attr;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->context_switch = !!(s->opts.flags & HWC_LOG_PROCCSW);
	/* A DWARF unwinder reads .eh_frame from read-only segments: map them too. */
	a->mmap_data = s->opts.callgraph == HWC_CALLGRAPH_DWARF;
}

/* ---------------------------------------------------------- open, close */

static int cmp_id(const void *a, const void *b)
{
	const struct hwc__idmap *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int check_opts(const struct hwc_sampler_opts *o, const struct hwc_target *t)
{
	if (o->period && o->freq)
		return hwc__fail(-EINVAL, "give a sample period or a frequency, not both");
	if (o->callgraph > HWC_CALLGRAPH_DWARF)
		return hwc__fail(-EINVAL, "unknown call graph mode %d", (int)o->callgraph);
	if (o->callgraph == HWC_CALLGRAPH_DWARF && hwc__unwind_regs_mask() == 0)
		return hwc__fail(-EOPNOTSUPP, "DWARF call graphs are not supported on this "
					      "architecture; use frame pointers");
	if (o->stack_size % 8 || o->stack_size > MAX_STACK)
		return hwc__fail(-EINVAL, "a user stack size of %u bytes is not a multiple of 8 "
					  "up to %d",
				 o->stack_size, MAX_STACK);
	if (o->mmap_pages & (o->mmap_pages - 1))
		return hwc__fail(-EINVAL, "%zu ring buffer pages: the count must be a power of 2",
				 o->mmap_pages);
	if (o->flags & ~(HWC_GROUP_VALUES | HWC_LOG_PROCEXIT | HWC_LOG_PROCCSW | HWC_SAMPLE_CPU |
			 HWC_SAMPLE_ID | HWC_CLOCKID))
		return hwc__fail(-EINVAL, "unknown sampler flags %#x", o->flags);
	/* The clocks perf_event_open(2) takes; it refuses others with EINVAL. */
	if ((o->flags & HWC_CLOCKID) && o->clockid != CLOCK_MONOTONIC &&
	    o->clockid != CLOCK_MONOTONIC_RAW && o->clockid != CLOCK_REALTIME &&
	    o->clockid != CLOCK_BOOTTIME && o->clockid != CLOCK_TAI)
		return hwc__fail(-EINVAL, "clock %d cannot time samples: the kernel takes "
					  "CLOCK_MONOTONIC (1), CLOCK_MONOTONIC_RAW (4), "
					  "CLOCK_REALTIME (0), CLOCK_BOOTTIME (7) or CLOCK_TAI (11)",
				 o->clockid);
	if ((o->flags & (HWC_LOG_PROCEXIT | HWC_LOG_PROCCSW)) && hwc__cpu_wide(t->kind))
		return hwc__fail(-EINVAL, "per-thread exit and context-switch counts need a process "
					  "target (a command, a pid or a thread), not CPUs");
	long long max;
	if (o->freq && hwc__read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", &max) == 0 &&
	    o->freq > (uint64_t)max)
		return hwc__fail(-EINVAL, "cannot sample at %llu Hz: the kernel allows at most %lld "
					  "(kernel.perf_event_max_sample_rate)",
				 (unsigned long long)o->freq, max);
	return 0;
}

/* Samples of cgroup events name their cgroup, and the first event reports
 * cgroups made while sampling, so that readers can name them (perf report
 * --sort cgroup). */
static void cgroup_samples(hwc_sampler *s)
{
	bool any = false;
	for (size_t e = 0; e < s->evs.n; e++)
		any |= s->evs.e[e].cgroup_fd >= 0;
	for (size_t e = 0; any && e < s->evs.n; e++)
		s->evs.e[e].ev->pub.attr.sample_type |= PERF_SAMPLE_CGROUP;
	s->evs.e[0].ev->pub.attr.cgroup = any;
}

/* As perf record: a sample's id only to tell several events apart, its
 * CPU only system-wide, unless asked.  The logs' own events keep theirs
 * (a context switch's values are per CPU). */
static void sample_fields(hwc_sampler *s, size_t nsampled, const struct hwc_target *t)
{
	bool id = s->evs.n > 1 || nsampled == 0 || (s->opts.flags & HWC_SAMPLE_ID);
	bool cpu = hwc__cpu_wide(t->kind) || (s->opts.flags & HWC_SAMPLE_CPU);
	for (size_t e = 0; e < nsampled; e++) {
		struct perf_event_attr *a = &s->evs.e[e].ev->pub.attr;
		if (!id)
			a->sample_type &= ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
		if (!cpu)
			a->sample_type &= ~(uint64_t)PERF_SAMPLE_CPU;
	}
}

static int setup(hwc_sampler *s, const hwc_evlist *list, const struct hwc_target *t)
{
	int err = add_sampled(s, list);
	size_t nsampled = s->evs.n;
	if (!err)
		err = hwc__sampler_add_log_events(s);
	if (err)
		return err;
	if (s->evs.n == 0)
		return hwc__fail(-EINVAL, "no events to sample");
	sample_fields(s, nsampled, t);
	tracking(s);
	if ((err = hwc__events_open_cgroups(&s->evs, t)))
		return err;
	cgroup_samples(s);
	if (hwc__cpu_wide(t->kind))
		err = hwc__target_cpus(t, &s->cpus, &s->ncpus);
	else {
		struct hwc_target all = {.kind = HWC_TARGET_CPUS};
		err = hwc__target_cpus(&all, &s->cpus, &s->ncpus);
	}
	if (err)
		return err;
	s->ring = calloc(s->ncpus, sizeof(*s->ring));
	s->pfd = calloc(s->ncpus + 1, sizeof(*s->pfd));
	s->copy = malloc(PF_RECORD_MAX + 1); /* a record that wraps its ring */
	if (!s->ring || !s->pfd || !s->copy)
		return hwc__fail(-ENOMEM, "out of memory");
	for (size_t c = 0; c < s->ncpus; c++)
		s->ring[c].fd = -1;
	return 0;
}

static int start_target(hwc_sampler *s, const struct hwc_target *t)
{
	switch (t->kind) {
	case HWC_TARGET_PROCESS:
	case HWC_TARGET_THREAD:
		if (t->pid <= 0)
			return hwc__fail(-EINVAL, "invalid pid %d", (int)t->pid);
		s->pid = t->pid;
		s->tgid = t->pid;
		if (t->kind == HWC_TARGET_THREAD && (s->tgid = hwc__tgid_of(t->pid)) < 0)
			return hwc__fail(-ESRCH, "no thread with id %d", (int)t->pid);
		s->pidfd = hwc__pidfd_open(t->pid, t->kind == HWC_TARGET_THREAD);
		if (s->pidfd == -ESRCH)
			return hwc__fail(-ESRCH, "no process with pid %d", (int)t->pid);
		return 0;
	case HWC_TARGET_SELF:
		s->tgid = getpid();
		return 0;
	case HWC_TARGET_COMMAND:
	case HWC_TARGET_CPUS:
	case HWC_TARGET_CGROUP:
		if (hwc__cpu_wide(t->kind) && !t->argv)
			return 0;
		{
			int err = hwc__child_spawn(&s->child, t->argv);
			if (err)
				return err;
		}
		s->pid = s->tgid = s->child.pid;
		if ((s->pidfd = hwc__child_take_pidfd(&s->child)) < 0)
			s->pidfd = hwc__pidfd_open(s->pid, false);
		return 0;
	}
	return hwc__fail(-EINVAL, "unknown target kind %d", (int)t->kind);
}

struct open_args {
	hwc_sampler *s;
	const struct hwc_target *t;
};

static int open_args_tasks(void *arg)
{
	struct open_args *a = arg;
	return hwc__sampler_open_tasks(a->s, a->t);
}

static void close_for_retry(void *arg)
{
	hwc__sampler_close_all(((struct open_args *)arg)->s);
}

static void close_sampler(void *s)
{
	hwc_sampler_close(s);
}

HWC_EXPORT int hwc_sampler_open(hwc_sampler **out, const hwc_evlist *list,
				const struct hwc_target *t, const struct hwc_sampler_opts *opts)
{
	hwc__clear_error();
	*out = NULL;
	struct hwc_sampler_opts o = opts ? *opts : (struct hwc_sampler_opts){0};
	int err = check_opts(&o, t);
	if (err)
		return err;
	hwc_sampler *s = calloc(1, sizeof(*s));
	if (!s)
		return hwc__fail(-ENOMEM, "out of memory");
	if (!o.period && !o.freq)
		o.freq = DEFAULT_FREQ;
	if (o.callgraph == HWC_CALLGRAPH_DWARF && !o.stack_size)
		o.stack_size = DEFAULT_STACK;
	if (!o.mmap_pages)
		o.mmap_pages = o.callgraph == HWC_CALLGRAPH_DWARF && hwc__privileged()
				       ? DEFAULT_DWARF_PAGES
				       : DEFAULT_PAGES;
	s->opts = o;
	s->kind = t->kind;
	s->tflags = t->flags;
	s->every_cpu = hwc__cpu_wide(t->kind) && !t->cpus;
	s->pages = o.mmap_pages;
	s->page_size = sysconf(_SC_PAGESIZE);
	s->pid = -1;
	s->csw_leader = -1;
	s->pidfd = -1;
	s->status = -1;
	hwc__child_init(&s->child);
	err = setup(s, list, t);
	if (!err)
		err = start_target(s, t);
	if (!err) {
		struct open_args a = {s, t};
		err = hwc__open_with_fallback(open_args_tasks, close_for_retry, &a, "sampling");
	}
	if (!err && (o.flags & HWC_LOG_PROCEXIT))
		err = hwc__sampler_open_own(s);
	if (err)
		return hwc__fail_cleanup(err, close_sampler, s);
	qsort(s->ids, s->nids, sizeof(*s->ids), cmp_id);
	*out = s;
	return 0;
}

HWC_EXPORT void hwc_sampler_close(hwc_sampler *s)
{
	if (!s)
		return;
	hwc__sampler_close_all(s);
	hwc__child_discard(&s->child);
	if (s->pidfd >= 0)
		close(s->pidfd);
	hwc__events_free(&s->evs);
	free(s->cpus);
	free(s->tids);
	free(s->fd);
	free(s->ring);
	free(s->pfd);
	free(s->ids);
	free(s->copy);
	free(s->synth.p);
	free(s);
}

/* --------------------------------------------------------------- control */

static int ioctl_leaders(hwc_sampler *s, unsigned long req)
{
	int err = hwc__ioctl_leaders(&s->evs, s->fd, s->ntids * s->ncpus, req);
	/* HWC_LOG_PROCEXIT's own descriptors: each event alone on a thread */
	for (size_t i = 0; !err && s->own_fd && i < s->ntids * s->evs.n; i++)
		if (s->own_fd[i] >= 0 && ioctl(s->own_fd[i], req, 0) < 0)
			err = hwc__fail(-errno, "ioctl on '%s': %s", s->evs.e[i % s->evs.n].ev->name,
					strerror(errno));
	return err;
}

HWC_EXPORT int hwc_sampler_start(hwc_sampler *s)
{
	hwc__clear_error();
	if (s->kind == HWC_TARGET_COMMAND) {
		if (s->child.started)
			return 0;
		int err = hwc__child_release(&s->child); /* enable_on_exec starts the events */
		if (err)
			s->ended = true;
		return err;
	}
	int err = ioctl_leaders(s, PERF_EVENT_IOC_ENABLE);
	if (!err && s->child.pid > 0 && !s->child.started) {
		err = hwc__child_release(&s->child);
		if (err)
			s->ended = true;
	}
	return err;
}

HWC_EXPORT int hwc_sampler_stop(hwc_sampler *s)
{
	hwc__clear_error();
	int err = ioctl_leaders(s, PERF_EVENT_IOC_DISABLE);
	if (s->stopped)
		return err;
	s->stopped = true;
	s->lost_total = hwc__sampler_lost(s);
	return err ? err : hwc__sampler_queue_exits(s);
}

HWC_EXPORT pid_t hwc_sampler_pid(const hwc_sampler *s)
{
	return s->pid;
}

HWC_EXPORT bool hwc_sampler_user_only(const hwc_sampler *s)
{
	for (size_t e = 0; e < s->evs.n; e++)
		if (s->evs.e[e].user_only)
			return true;
	return false;
}

HWC_EXPORT size_t hwc_sampler_nevents(const hwc_sampler *s)
{
	return s->evs.n;
}

HWC_EXPORT const struct perf_event_attr *hwc_sampler_event(const hwc_sampler *s, size_t idx,
							   const char **name)
{
	if (idx >= s->evs.n)
		return NULL;
	if (name)
		*name = s->evs.e[idx].ev->name;
	return &s->evs.e[idx].ev->pub.attr;
}
