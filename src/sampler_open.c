/* Opening a sampler's events: every event on every thread of a process
 * target (inherited, per CPU) or on every CPU, each CPU's events sending
 * their records to one ring buffer, mapped here; why an open failed. */
#include "sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int hwc__sampler_add_id(hwc_sampler *s, size_t e, int fd)
{
	uint64_t id;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return hwc__fail(-errno, "cannot get the id of '%s': %s", s->evs.e[e].ev->name,
				 strerror(errno));
	struct hwc__opened *m = &s->evs.e[e];
	int err = hwc__reserve(&m->ids, &m->cap_ids, m->nids + 1, sizeof(*m->ids));
	if (!err)
		err = hwc__reserve(&s->ids, &s->cap_ids, s->nids + 1, sizeof(*s->ids));
	if (err)
		return err;
	m->ids[m->nids++] = id;
	s->ids[s->nids++] = (struct hwc__idmap){id, e};
	return 0;
}

static int map_ring(hwc_sampler *s, size_t c, int fd)
{
	struct hwc__ring *r = &s->ring[c];
	size_t len = (s->pages + 1) * (size_t)s->page_size;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int err = -errno;
		long long kb = 0;
		hwc__read_int_file("/proc/sys/kernel/perf_event_mlock_kb", &kb);
		if (err == -EPERM)
			return hwc__fail(err, "cannot map a ring buffer of %zu pages (%zu KiB) on CPU %d: "
					      "this user may lock %lld KiB per CPU "
					      "(kernel.perf_event_mlock_kb) plus RLIMIT_MEMLOCK: use "
					      "fewer pages (-m) or run as root",
					 s->pages, s->pages * (size_t)s->page_size / 1024, s->cpus[c], kb);
		if (err == -ENOMEM)
			return hwc__fail(err, "cannot map a ring buffer of %zu pages (%zu KiB) on CPU %d: "
					      "out of memory; use fewer pages (-m)",
					 s->pages, s->pages * (size_t)s->page_size / 1024, s->cpus[c]);
		return hwc__fail(err, "cannot map a ring buffer on CPU %d: %s", s->cpus[c],
				 strerror(-err));
	}
	r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (r->fd < 0) {
		int err = -errno;
		munmap(p, len);
		return hwc__fail(err, "dup: %s", strerror(-err));
	}
	r->page = p;
	r->data = (const uint8_t *)p + (r->page->data_offset ? r->page->data_offset
							      : (uint64_t)s->page_size);
	r->size = r->page->data_size ? r->page->data_size : s->pages * (uint64_t)s->page_size;
	r->tail = r->head = 0;
	return 0;
}

int hwc__sampler_explain(hwc_sampler *s, int err, size_t e, const struct perf_event_attr *a,
			 pid_t pid, int cpu)
{
	if ((err == -EACCES || err == -EPERM) && (int)e == s->csw_leader)
		return hwc__fail(err, "cannot log context switches: counting them needs kernel "
				      "events, which this user may not open (perf_event_paranoid "
				      "is above 1 and no CAP_PERFMON); run as root or `sysctl "
				      "kernel.perf_event_paranoid=1`");
	if (err == -EINVAL && a->inherit && (a->sample_type & PERF_SAMPLE_READ))
		return hwc__fail(err, "cannot open '%s': this kernel cannot read a group's values "
				      "in samples of inherited events (Linux 6.12 can); use "
				      "--no-inherit (HWC_NO_INHERIT)",
				 s->evs.e[e].ev->name);
	bool member = !s->evs.e[e].group_size;
	if (err == -EINVAL && (a->freq || a->sample_period) && !(member && (a->pinned || a->exclusive))) {
		/* An event that counts but cannot sample: its PMU has no overflow
		 * interrupt (msr, most uncore PMUs).  (A pinned or exclusive
		 * member is refused for that: hwc__explain_open_error says so.) */
		struct perf_event_attr counting = *a;
		counting.sample_period = 0;
		counting.freq = 0;
		counting.sample_type = 0;
		counting.inherit = 0;
		int fd = hwc__perf_event_open(&counting, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return hwc__fail(err, "'%s' cannot be sampled: it counts, but its PMU (%s) "
					      "raises no interrupt to take samples; count it (hwc "
					      "stat), or sample another event and read it in a group "
					      "with --group-values",
					 s->evs.e[e].ev->name, s->evs.e[e].ev->pub.pmu);
		}
	}
	if (err == -EINVAL && a->freq) {
		long long max = 0;
		hwc__read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", &max);
		if (max > 0 && a->sample_freq > (uint64_t)max)
			return hwc__fail(err, "cannot sample '%s' at %llu Hz: the kernel allows at "
					      "most %lld (kernel.perf_event_max_sample_rate)",
					 s->evs.e[e].ev->name, (unsigned long long)a->sample_freq, max);
	}
	return hwc__explain_open_error(err, &s->evs.e[e].ev->pub, pid, cpu);
}

static void close_task(hwc_sampler *s, size_t t)
{
	for (size_t c = 0; c < s->ncpus; c++)
		for (size_t e = 0; e < s->evs.n; e++) {
			int *fd = &s->fd[HWC__SLOT(s, t, c, e)];
			if (*fd >= 0)
				close(*fd);
			*fd = -1;
		}
}

/* Open event E of thread T (or of the CPUs) on CPU C: 0, HWC__RETRY_USER_ONLY
 * or HWC__RETRY_UNGROUPED, or -errno (the caller closes T's events). */
static int open_one(hwc_sampler *s, size_t t, size_t c, size_t e)
{
	pid_t pid = s->tids[t];
	const struct hwc__opened *m = &s->evs.e[e];
	bool leads = m->group_size > 0;
	struct perf_event_attr attr = m->ev->pub.attr;
	attr.disabled = leads;
	attr.enable_on_exec = leads && s->kind == HWC_TARGET_COMMAND;
	attr.inherit = hwc__sampler_task_target(s) && !(s->tflags & HWC_NO_INHERIT);
	attr.inherit_thread = attr.inherit && (s->tflags & HWC_THREADS_ONLY);
	if (!attr.inherit)
		attr.inherit_stat = 0;
	int group_fd = leads ? -1 : s->fd[HWC__SLOT(s, t, c, m->leader)];
	int fd;
	int err = hwc__open_event(&s->evs, e, &attr, pid, s->cpus[c], group_fd, s->tflags, &fd);
	if (err) {
		if (hwc__open_again(err) || (err == -ESRCH && t > 0))
			return err; /* start over, or a thread that exited meanwhile */
		return hwc__sampler_explain(s, err, e, &attr, pid, s->cpus[c]);
	}
	s->fd[HWC__SLOT(s, t, c, e)] = fd;
	err = hwc__apply_filter(fd, s->evs.e[e].ev);
	if (!err)
		err = hwc__sampler_add_id(s, e, fd);
	if (!err && s->ring[c].fd < 0)
		err = map_ring(s, c, fd);
	else if (!err && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->ring[c].fd) < 0)
		err = hwc__fail(-errno, "cannot send '%s' to the CPU %d buffer: %s",
				s->evs.e[e].ev->name, s->cpus[c], strerror(errno));
	return err;
}

/* Open every event of thread T (or of the CPUs) on every CPU, a group's
 * leader before its members.  Returns 0, HWC__RETRY_USER_ONLY or
 * HWC__RETRY_UNGROUPED (the caller starts over: see hwc__open_event), or
 * -errno. */
static int open_task(hwc_sampler *s, size_t t)
{
	for (size_t c = 0; c < s->ncpus; c++) {
		for (size_t g = 0; g < s->evs.n; g++) {
			if (!s->evs.e[g].group_size)
				continue;
			/* A hybrid's core PMU samples on its own CPUs only (its group's PMU). */
			if (s->cpus[c] >= 0 &&
			    !hwc__pmu_covers_cpu(s->evs.e[g].ev->pub.pmu, s->cpus[c], s->every_cpu))
				continue;
			for (size_t e = g; e != HWC__NO_EVENT; e = s->evs.e[e].next) {
				int err = open_one(s, t, c, e);
				if (err) {
					close_task(s, t);
					return err;
				}
			}
		}
	}
	return 0;
}

static int add_tid(hwc_sampler *s, pid_t tid)
{
	size_t per = s->ncpus * s->evs.n; /* descriptors per thread */
	int err = hwc__reserve(&s->tids, &s->cap_tids, s->ntids + 1, sizeof(*s->tids));
	if (!err)
		err = hwc__reserve(&s->fd, &s->cap_fd, (s->ntids + 1) * per, sizeof(*s->fd));
	if (err)
		return err;
	size_t t = s->ntids++;
	s->tids[t] = tid;
	for (size_t i = 0; i < per; i++)
		s->fd[t * per + i] = -1;
	return 0;
}

static int open_thread(void *arg, pid_t tid)
{
	hwc_sampler *s = arg;
	int err = add_tid(s, tid);
	if (!err)
		err = open_task(s, s->ntids - 1);
	if (err == -ESRCH)
		s->ntids--;
	return err;
}

static void close_rings(hwc_sampler *s)
{
	for (size_t c = 0; s->ring && c < s->ncpus; c++) {
		struct hwc__ring *r = &s->ring[c];
		if (r->page)
			munmap(r->page, (s->pages + 1) * (size_t)s->page_size);
		if (r->fd >= 0)
			close(r->fd);
		*r = (struct hwc__ring){.fd = -1};
	}
}

void hwc__sampler_close_all(hwc_sampler *s)
{
	for (size_t t = 0; t < s->ntids; t++)
		close_task(s, t);
	for (size_t i = 0; s->own_fd && i < s->ntids * s->evs.n; i++)
		if (s->own_fd[i] >= 0)
			close(s->own_fd[i]);
	free(s->own_fd);
	s->own_fd = NULL;
	close_rings(s);
	for (size_t e = 0; e < s->evs.n; e++)
		s->evs.e[e].nids = 0;
	s->nids = 0;
}

int hwc__sampler_open_tasks(hwc_sampler *s, const struct hwc_target *t)
{
	s->ntids = 0;
	switch (t->kind) {
	case HWC_TARGET_SELF:
		return open_thread(s, (pid_t)syscall(SYS_gettid));
	case HWC_TARGET_COMMAND:
	case HWC_TARGET_THREAD:
		return open_thread(s, s->pid);
	case HWC_TARGET_PROCESS:
		return hwc__each_thread(s->pid, open_thread, s);
	case HWC_TARGET_CPUS:
	case HWC_TARGET_CGROUP:
		return open_thread(s, -1);
	}
	return hwc__fail(-EINVAL, "unknown target kind %d", (int)t->kind);
}
