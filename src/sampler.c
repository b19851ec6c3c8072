/* The sampler: events opened for sampling on a target, one ring buffer per
 * CPU.  A process target is sampled per (thread, CPU) with inheritance,
 * because the kernel refuses to map the buffer of an inherited per-thread
 * event; every event of a CPU writes into that CPU's buffer
 * (PERF_EVENT_IOC_SET_OUTPUT).  Records are identified by their
 * PERF_SAMPLE_IDENTIFIER, which every event carries. */
#include "internal.h"
#include "perf_file.h"
#include "hwc/perfdata.h"
#include "hwc/sample.h"
#include "hwc/symbol.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_FREQ 4000
#define DEFAULT_PAGES 128
#define DEFAULT_DWARF_PAGES 512
#define DEFAULT_STACK 8192
#define MAX_STACK 65528 /* the kernel's limit: a u16, 8-byte aligned */

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* The user registers a DWARF unwinder needs: all the general ones. */
#if defined(__x86_64__)
#define USER_REGS_MASK 0xff0fffULL /* AX..SS and R8..R15; not DS, ES, FS, GS */
#elif defined(__aarch64__)
#define USER_REGS_MASK ((1ULL << 33) - 1) /* X0..X30, SP, PC */
#else
#define USER_REGS_MASK 0ULL
#endif

#define BASE_SAMPLE_TYPE                                                                    \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |     \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
/* PERF_FORMAT_LOST everywhere: what the kernel dropped and never got to
 * report in a PERF_RECORD_LOST (a buffer full to the end) is read at stop. */
#define SINGLE_READ_FORMAT                                                                  \
	(PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |  \
	 PERF_FORMAT_LOST)
#define GROUP_READ_FORMAT (PERF_FORMAT_GROUP | SINGLE_READ_FORMAT)

struct meta {
	int leader;         /* index of its group's leader, -1 when alone */
	size_t group_size;  /* leaders and lone events: events in the group; members 0 */
	bool log;           /* in the HWC_LOG_* group */
	uint64_t *ids;
	size_t nids, cap;
};

struct ring {
	int fd; /* our own reference to the event whose buffer this is */
	struct perf_event_mmap_page *page;
	const uint8_t *data;
	uint64_t size, tail, head;
	bool scanned; /* head read in this pass */
	bool hup;
};

struct hwc_sampler {
	enum hwc_target_kind kind;
	unsigned tflags;
	struct hwc_sampler_opts opts;
	size_t nev;
	struct hwc__ev *ev;   /* attrs as opened */
	bool *user_only;
	struct meta *meta;
	int *cpus;
	size_t ncpus;
	pid_t *tids;          /* task targets: the threads; CPUS: one entry, -1 */
	size_t ntids, cap_tids;
	pid_t tgid;           /* the process of the threads, for exit records */
	int *fd;              /* [(tid * ncpus + cpu) * nev + ev] */
	size_t cap_fd;
	int *own_fd;          /* LOG_PROCEXIT: [tid * nev + ev], the thread alone */
	struct ring *ring;    /* [ncpus] */
	struct pollfd *pfd;   /* [ncpus + 1] */
	size_t pages;
	long page_size;
	struct hwc__idmap *ids; /* sorted by id once all are open */
	size_t nids, cap_ids;
	int csw_leader;       /* index of context-switches for HWC_LOG_PROCCSW, or -1 */
	struct hwc__child child;
	pid_t pid;
	int pidfd;
	bool ended, stopped;
	bool lost_done;       /* the unreported losses were queued */
	uint64_t lost_total;  /* dropped records, read from the events at stop */
	int status;
	/* iterator */
	size_t cur;
	uint64_t pending; /* size of the record handed out last, still in its ring */
	uint8_t *copy;    /* a record that wraps around the end of its ring */
	struct hwc__bytes synth;
	size_t synth_pos;
	struct hwc_sampler_stats stats;
};

#define SLOT(s, t, c, e) (((t) * (s)->ncpus + (c)) * (s)->nev + (e))

static bool task_target(const hwc_sampler *s)
{
	return s->kind != HWC_TARGET_CPUS;
}

/* ----------------------------------------------------------------- events */

static int add_event(hwc_sampler *s, const struct hwc_event *pub, int leader, bool log)
{
	size_t n = s->nev + 1;
	struct hwc__ev *ev = realloc(s->ev, n * sizeof(*ev));
	if (ev)
		s->ev = ev;
	bool *uo = realloc(s->user_only, n * sizeof(*uo));
	if (uo)
		s->user_only = uo;
	struct meta *m = realloc(s->meta, n * sizeof(*m));
	if (m)
		s->meta = m;
	if (!ev || !uo || !m)
		return hwc__fail(-ENOMEM, "out of memory");
	hwc__ev_copy(&s->ev[s->nev], pub);
	s->user_only[s->nev] = false;
	s->meta[s->nev] = (struct meta){leader, 0, log, NULL, 0, 0};
	s->nev++;
	return 0;
}

static void sampling_attr(const hwc_sampler *s, struct perf_event_attr *a)
{
	const struct hwc_sampler_opts *o = &s->opts;
	a->size = sizeof(*a);
	a->sample_type = BASE_SAMPLE_TYPE;
	a->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC; /* so user records can be timestamped alike */
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
		a->sample_regs_user = USER_REGS_MASK;
		a->sample_stack_user = o->stack_size;
		a->exclude_callchain_user = 1; /* the copied stack gives the user part */
	}
}

static void counting_attr(struct perf_event_attr *a, uint64_t read_format)
{
	a->size = sizeof(*a);
	a->sample_type = BASE_SAMPLE_TYPE;
	a->read_format = read_format;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->sample_period = 0;
	a->freq = 0;
}

static int add_sampled(hwc_sampler *s, const hwc_evlist *list)
{
	size_t n = list ? hwc_evlist_size(list) : 0;
	bool values = s->opts.flags & HWC_GROUP_VALUES;
	int leader = -1;
	for (size_t e = 0; e < n; e++) {
		size_t gs = hwc__group_size(list, e);
		if (gs)
			leader = gs > 1 ? (int)s->nev : -1;
		int err = add_event(s, hwc_evlist_event(list, e), leader, false);
		if (err)
			return err;
		struct meta *m = &s->meta[s->nev - 1];
		struct perf_event_attr *a = &s->ev[s->nev - 1].pub.attr;
		m->group_size = gs;
		sampling_attr(s, a);
		if (values && leader >= 0) {
			a->read_format = GROUP_READ_FORMAT;
			if (gs) {
				a->sample_type |= PERF_SAMPLE_READ;
			} else { /* a member: counted, read with its leader's samples */
				a->sample_period = 0;
				a->freq = 0;
			}
		}
	}
	return 0;
}

/* HWC_LOG_PROCCSW: a group led by context-switches, sampling every switch
 * with the group's values.  HWC_LOG_PROCEXIT: the counted events get
 * inherit_stat, so the kernel writes a PERF_RECORD_READ of each when an
 * inherited task exits (one per CPU buffer the task had it on).  Those read
 * a single value: a group's READ would miss the members the exit detached
 * first, and perf reads READ records as single values. */
static int add_log_events(hwc_sampler *s)
{
	unsigned f = s->opts.flags;
	if (!(f & (HWC_LOG_PROCEXIT | HWC_LOG_PROCCSW)))
		return 0;
	hwc_evlist *defaults = NULL, *csw = NULL;
	const hwc_evlist *counted = s->opts.counted;
	int err = 0;
	if (!counted || hwc_evlist_size(counted) == 0) {
		err = hwc_evlist_new(&defaults);
		if (!err)
			err = hwc_evlist_add(defaults, "task-clock");
		counted = defaults;
	}
	int leader = -1;
	if (!err && (f & HWC_LOG_PROCCSW)) {
		leader = s->csw_leader = (int)s->nev;
		err = hwc_evlist_new(&csw);
		if (!err)
			err = hwc_evlist_add(csw, "context-switches");
		if (!err)
			err = add_event(s, hwc_evlist_event(csw, 0), leader, true);
		if (!err) {
			/* Switches happen in the kernel: user-only would count none, so
			 * never fall back for this one. */
			struct perf_event_attr *a = &s->ev[leader].pub.attr;
			counting_attr(a, GROUP_READ_FORMAT);
			a->sample_period = 1;
			a->sample_type |= PERF_SAMPLE_READ;
			a->exclude_kernel = 0;
			s->ev[leader].pub.explicit_priv = true;
		}
	}
	for (size_t e = 0; !err && e < hwc_evlist_size(counted); e++) {
		err = add_event(s, hwc_evlist_event(counted, e), leader, true);
		if (err)
			break;
		struct perf_event_attr *a = &s->ev[s->nev - 1].pub.attr;
		counting_attr(a, SINGLE_READ_FORMAT);
		a->inherit_stat = !!(f & HWC_LOG_PROCEXIT);
		s->meta[s->nev - 1].group_size = leader < 0; /* alone, or a member */
	}
	if (!err && leader >= 0)
		s->meta[leader].group_size = s->nev - (size_t)leader;
	hwc_evlist_free(defaults);
	hwc_evlist_free(csw);
	return err;
}

/* The first event carries the side-band records: maps, comms, tasks. */
static void tracking(hwc_sampler *s)
{
	struct perf_event_attr *a = &s->ev[0].pub.attr;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->context_switch = !!(s->opts.flags & HWC_LOG_PROCCSW);
	/* A DWARF unwinder reads .eh_frame from read-only segments: map them too. */
	a->mmap_data = s->opts.callgraph == HWC_CALLGRAPH_DWARF;
}

/* ---------------------------------------------------------------- opening */

static int add_id(hwc_sampler *s, size_t e, int fd)
{
	uint64_t id;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return hwc__fail(-errno, "cannot get the id of '%s': %s", s->ev[e].name,
				 strerror(errno));
	struct meta *m = &s->meta[e];
	int err = hwc__reserve(&m->ids, &m->cap, m->nids + 1, sizeof(*m->ids));
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
	struct ring *r = &s->ring[c];
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

static int explain(hwc_sampler *s, int err, size_t e, pid_t pid, int cpu)
{
	const struct perf_event_attr *a = &s->ev[e].pub.attr;
	if ((err == -EACCES || err == -EPERM) && (int)e == s->csw_leader)
		return hwc__fail(err, "cannot log context switches: counting them needs kernel "
				      "events, which this user may not open (perf_event_paranoid "
				      "is above 1 and no CAP_PERFMON); run as root or `sysctl "
				      "kernel.perf_event_paranoid=1`");
	if (err == -EINVAL && a->inherit && (a->sample_type & PERF_SAMPLE_READ))
		return hwc__fail(err, "cannot open '%s': this kernel cannot read a group's values "
				      "in samples of inherited events (Linux 6.12 can); use "
				      "--no-inherit (HWC_NO_INHERIT)",
				 s->ev[e].name);
	if (err == -EINVAL && (a->freq || a->sample_period)) {
		/* An event that counts but cannot sample: its PMU has no overflow
		 * interrupt (msr, most uncore PMUs). */
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
					 s->ev[e].name, s->ev[e].pub.pmu);
		}
	}
	if (err == -EINVAL && a->freq) {
		long long max = 0;
		hwc__read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", &max);
		if (max > 0 && a->sample_freq > (uint64_t)max)
			return hwc__fail(err, "cannot sample '%s' at %llu Hz: the kernel allows at "
					      "most %lld (kernel.perf_event_max_sample_rate)",
					 s->ev[e].name, (unsigned long long)a->sample_freq, max);
	}
	return hwc__explain_open_error(err, &s->ev[e].pub, pid, cpu);
}

static void close_task(hwc_sampler *s, size_t t)
{
	for (size_t c = 0; c < s->ncpus; c++)
		for (size_t e = 0; e < s->nev; e++) {
			int *fd = &s->fd[SLOT(s, t, c, e)];
			if (*fd >= 0)
				close(*fd);
			*fd = -1;
		}
}

/* Open every event of thread T (or of the CPUs) on every CPU.  Returns 0,
 * -EAGAIN after switching to user-only (the caller starts over), or -errno. */
static int open_task(hwc_sampler *s, size_t t)
{
	pid_t pid = s->tids[t];
	for (size_t c = 0; c < s->ncpus; c++) {
		for (size_t e = 0; e < s->nev; e++) {
			const struct meta *m = &s->meta[e];
			bool leads = m->group_size > 0;
			struct perf_event_attr attr = s->ev[e].pub.attr;
			attr.disabled = leads;
			attr.enable_on_exec = leads && s->kind == HWC_TARGET_COMMAND;
			attr.inherit = task_target(s) && !(s->tflags & HWC_NO_INHERIT);
			attr.inherit_thread = attr.inherit && (s->tflags & HWC_THREADS_ONLY);
			if (!attr.inherit)
				attr.inherit_stat = 0;
			int group_fd = leads ? -1 : s->fd[SLOT(s, t, c, (size_t)m->leader)];
			int fd = hwc__perf_event_open(&attr, pid, s->cpus[c], group_fd,
						      PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				close_task(s, t);
				if (hwc__fallback_allowed(&s->ev[e].pub, s->tflags, fd)) {
					/* Kernel sampling is denied to this user: sample user
					 * space only, for every event that did not choose. */
					hwc__make_user_only(s->ev, s->nev, s->user_only);
					return -EAGAIN;
				}
				if (fd == -ESRCH && t > 0)
					return fd; /* a thread that exited meanwhile */
				return explain(s, fd, e, pid, s->cpus[c]);
			}
			s->fd[SLOT(s, t, c, e)] = fd;
			int err = hwc__apply_filter(fd, &s->ev[e]);
			if (!err)
				err = add_id(s, e, fd);
			if (!err && s->ring[c].fd < 0)
				err = map_ring(s, c, fd);
			else if (!err && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->ring[c].fd) < 0)
				err = hwc__fail(-errno, "cannot send '%s' to the CPU %d buffer: %s",
						s->ev[e].name, s->cpus[c], strerror(errno));
			if (err) {
				close_task(s, t);
				return err;
			}
		}
	}
	return 0;
}

static int add_tid(hwc_sampler *s, pid_t tid)
{
	size_t per = s->ncpus * s->nev; /* descriptors per thread */
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
		struct ring *r = &s->ring[c];
		if (r->page)
			munmap(r->page, (s->pages + 1) * (size_t)s->page_size);
		if (r->fd >= 0)
			close(r->fd);
		*r = (struct ring){.fd = -1};
	}
}

static void close_all(hwc_sampler *s)
{
	for (size_t t = 0; t < s->ntids; t++)
		close_task(s, t);
	for (size_t i = 0; s->own_fd && i < s->ntids * s->nev; i++)
		if (s->own_fd[i] >= 0)
			close(s->own_fd[i]);
	free(s->own_fd);
	s->own_fd = NULL;
	close_rings(s);
	for (size_t e = 0; e < s->nev; e++)
		s->meta[e].nids = 0;
	s->nids = 0;
}

static int open_tasks(hwc_sampler *s, const struct hwc_target *t)
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
		return open_thread(s, -1);
	}
	return hwc__fail(-EINVAL, "unknown target kind %d", (int)t->kind);
}

/* HWC_LOG_PROCEXIT: the counted events once more on each initial thread
 * alone, not inherited, so their own counts are known when they end: the
 * kernel reports the exit of inherited tasks only. */
static int open_own(hwc_sampler *s)
{
	s->own_fd = malloc(s->ntids * s->nev * sizeof(int));
	if (!s->own_fd)
		return hwc__fail(-ENOMEM, "out of memory");
	for (size_t i = 0; i < s->ntids * s->nev; i++)
		s->own_fd[i] = -1;
	for (size_t t = 0; t < s->ntids; t++) {
		for (size_t e = 0; e < s->nev; e++) {
			if (!s->ev[e].pub.attr.inherit_stat)
				continue;
			struct perf_event_attr attr = s->ev[e].pub.attr;
			attr.disabled = 1;
			attr.enable_on_exec = s->kind == HWC_TARGET_COMMAND;
			attr.inherit = attr.inherit_stat = 0;
			int fd = hwc__perf_event_open(&attr, s->tids[t], -1, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd == -ESRCH)
				break; /* exited already: nothing of it to report */
			if (fd < 0)
				return explain(s, fd, e, s->tids[t], -1);
			s->own_fd[t * s->nev + e] = fd;
			int err = hwc__apply_filter(fd, &s->ev[e]);
			if (!err)
				err = add_id(s, e, fd);
			if (err)
				return err;
		}
	}
	return 0;
}

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
	if (o->callgraph == HWC_CALLGRAPH_DWARF && USER_REGS_MASK == 0)
		return hwc__fail(-EOPNOTSUPP, "DWARF call graphs are not supported on this "
					      "architecture; use frame pointers");
	if (o->stack_size % 8 || o->stack_size > MAX_STACK)
		return hwc__fail(-EINVAL, "a user stack size of %u bytes is not a multiple of 8 "
					  "up to %d",
				 o->stack_size, MAX_STACK);
	if (o->mmap_pages & (o->mmap_pages - 1))
		return hwc__fail(-EINVAL, "%zu ring buffer pages: the count must be a power of 2",
				 o->mmap_pages);
	if (o->flags & ~(HWC_GROUP_VALUES | HWC_LOG_PROCEXIT | HWC_LOG_PROCCSW))
		return hwc__fail(-EINVAL, "unknown sampler flags %#x", o->flags);
	if ((o->flags & (HWC_LOG_PROCEXIT | HWC_LOG_PROCCSW)) && t->kind == HWC_TARGET_CPUS)
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

static int setup(hwc_sampler *s, const hwc_evlist *list, const struct hwc_target *t)
{
	int err = add_sampled(s, list);
	if (!err)
		err = add_log_events(s);
	if (err)
		return err;
	if (s->nev == 0)
		return hwc__fail(-EINVAL, "no events to sample");
	/* add_event() moved the copies: point their strings at their own arrays. */
	for (size_t e = 0; e < s->nev; e++)
		hwc__ev_fix_strings(&s->ev[e]);
	tracking(s);
	if (t->kind == HWC_TARGET_CPUS)
		err = hwc__target_cpus(t, &s->cpus, &s->ncpus);
	else {
		struct hwc_target all = {.kind = HWC_TARGET_CPUS};
		err = hwc__target_cpus(&all, &s->cpus, &s->ncpus);
	}
	if (err)
		return err;
	s->ring = calloc(s->ncpus, sizeof(*s->ring));
	s->pfd = calloc(s->ncpus + 1, sizeof(*s->pfd));
	s->copy = malloc(1 << 16);
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
		s->pidfd = (int)syscall(SYS_pidfd_open, t->pid,
					t->kind == HWC_TARGET_THREAD ? PIDFD_THREAD : 0);
		if (s->pidfd < 0 && errno == ESRCH)
			return hwc__fail(-ESRCH, "no process with pid %d", (int)t->pid);
		return 0;
	case HWC_TARGET_SELF:
		s->tgid = getpid();
		return 0;
	case HWC_TARGET_COMMAND:
	case HWC_TARGET_CPUS:
		if (t->kind == HWC_TARGET_CPUS && !t->argv)
			return 0;
		{
			int err = hwc__child_spawn(&s->child, t->argv);
			if (err)
				return err;
		}
		s->pid = s->tgid = s->child.pid;
		s->pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
		return 0;
	}
	return hwc__fail(-EINVAL, "unknown target kind %d", (int)t->kind);
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
		err = open_tasks(s, t);
		if (err == -EAGAIN) { /* switched to user-only: open again */
			close_all(s);
			err = open_tasks(s, t);
			if (err == -EAGAIN)
				err = hwc__fail(-EACCES, "permission denied even for user-space sampling");
		}
	}
	if (!err && (o.flags & HWC_LOG_PROCEXIT))
		err = open_own(s);
	if (err) {
		char keep[1024];
		snprintf(keep, sizeof(keep), "%s", hwc_errdetail());
		hwc_sampler_close(s);
		return hwc__fail(err, "%s", keep);
	}
	qsort(s->ids, s->nids, sizeof(*s->ids), cmp_id);
	*out = s;
	return 0;
}

HWC_EXPORT void hwc_sampler_close(hwc_sampler *s)
{
	if (!s)
		return;
	close_all(s);
	hwc__child_discard(&s->child);
	if (s->pidfd >= 0)
		close(s->pidfd);
	for (size_t e = 0; e < s->nev; e++)
		free(s->meta[e].ids);
	free(s->ev);
	free(s->user_only);
	free(s->meta);
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
	for (size_t t = 0; t < s->ntids; t++)
		for (size_t c = 0; c < s->ncpus; c++)
			for (size_t e = 0; e < s->nev; e++) {
				int fd = s->fd[SLOT(s, t, c, e)];
				if (s->meta[e].group_size && fd >= 0 && ioctl(fd, req, 0) < 0)
					return hwc__fail(-errno, "ioctl on '%s': %s", s->ev[e].name,
							 strerror(errno));
			}
	for (size_t i = 0; s->own_fd && i < s->ntids * s->nev; i++)
		if (s->own_fd[i] >= 0 && ioctl(s->own_fd[i], req, 0) < 0)
			return hwc__fail(-errno, "ioctl on '%s': %s", s->ev[i % s->nev].name,
					 strerror(errno));
	return 0;
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

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The sample_id trailer of a record of event A, in the kernel's order:
 * tid, time, id, stream id, cpu, identifier. */
static int put_sample_id(struct hwc__bytes *b, const struct perf_event_attr *a,
			 const uint32_t pidtid[2], uint64_t id, int cpu)
{
	uint64_t type = a->sample_type;
	uint32_t cpures[2] = {(uint32_t)(cpu < 0 ? 0 : cpu), 0};
	int err = 0;
	if (!err && (type & PERF_SAMPLE_TID))
		err = hwc__bytes_put(b, pidtid, 8);
	if (!err && (type & PERF_SAMPLE_TIME))
		err = hwc__bytes_u64(b, now_ns());
	if (!err && (type & PERF_SAMPLE_ID))
		err = hwc__bytes_u64(b, id);
	if (!err && (type & PERF_SAMPLE_STREAM_ID))
		err = hwc__bytes_u64(b, id);
	if (!err && (type & PERF_SAMPLE_CPU))
		err = hwc__bytes_put(b, cpures, 8);
	if (!err && (type & PERF_SAMPLE_IDENTIFIER))
		err = hwc__bytes_u64(b, id);
	return err;
}

/* A PERF_RECORD_READ of thread T's own count of event E, as the kernel
 * writes for inherited tasks: pid, tid, value, times, id, lost, sample_id. */
static int queue_exit(hwc_sampler *s, size_t t, size_t e)
{
	int fd = s->own_fd[t * s->nev + e];
	uint64_t vals[5]; /* value, enabled, running, id, lost */
	if (fd < 0 || read(fd, vals, sizeof(vals)) != (ssize_t)sizeof(vals))
		return 0; /* never opened, or failed: nothing counted to report */
	const struct perf_event_attr *a = &s->ev[e].pub.attr;
	uint32_t pidtid[2] = {(uint32_t)s->tgid, (uint32_t)s->tids[t]};
	size_t size = sizeof(struct perf_event_header) + 8 + sizeof(vals) + hwc_sample_id_size(a);
	struct perf_event_header h = {PERF_RECORD_READ, 0, (uint16_t)size};
	struct hwc__bytes *b = &s->synth;
	return hwc__bytes_put(b, &h, sizeof(h)) ?: hwc__bytes_put(b, pidtid, 8) ?:
	       hwc__bytes_put(b, vals, sizeof(vals)) ?: put_sample_id(b, a, pidtid, vals[3],
								       sched_getcpu());
}

/* A PERF_RECORD_LOST_SAMPLES for drops the kernel never reported: the
 * buffer was still full when the events stopped. */
static int queue_lost(hwc_sampler *s, uint64_t lost)
{
	const struct perf_event_attr *a = &s->ev[0].pub.attr;
	uint64_t id = s->meta[0].nids ? s->meta[0].ids[0] : 0;
	size_t size = sizeof(struct perf_event_header) + 8 + hwc_sample_id_size(a);
	struct perf_event_header h = {PERF_RECORD_LOST_SAMPLES, 0, (uint16_t)size};
	uint32_t none[2] = {0, 0};
	struct hwc__bytes *b = &s->synth;
	return hwc__bytes_put(b, &h, sizeof(h)) ?: hwc__bytes_u64(b, lost) ?:
	       put_sample_id(b, a, none, id, 0);
}

/* Records event E dropped on full buffers (PERF_FORMAT_LOST), over every
 * thread and CPU.  A member whose leader reads the group is counted there. */
static uint64_t lost_of(hwc_sampler *s, size_t e)
{
	const struct meta *m = &s->meta[e];
	const struct perf_event_attr *a = &s->ev[e].pub.attr;
	if (!m->group_size && s->ev[m->leader].pub.attr.read_format & PERF_FORMAT_GROUP)
		return 0;
	uint64_t total = 0, buf[3 + 3 * 64];
	for (size_t t = 0; t < s->ntids; t++)
		for (size_t c = 0; c < s->ncpus; c++) {
			int fd = s->fd[SLOT(s, t, c, e)];
			ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
			if (n <= 0)
				continue;
			size_t words = (size_t)n / 8;
			if (!(a->read_format & PERF_FORMAT_GROUP)) {
				total += buf[words - 1]; /* lost comes last */
				continue;
			}
			/* nr, enabled, running, then {value, id, lost} per member */
			size_t first = 1 + !!(a->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
				       !!(a->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
			for (size_t k = first + 2; k < words; k += 3)
				total += buf[k];
		}
	return total;
}

HWC_EXPORT int hwc_sampler_stop(hwc_sampler *s)
{
	hwc__clear_error();
	int err = ioctl_leaders(s, PERF_EVENT_IOC_DISABLE);
	if (s->stopped)
		return err;
	s->stopped = true;
	s->lost_total = 0;
	for (size_t e = 0; e < s->nev; e++)
		s->lost_total += lost_of(s, e);
	if (!s->own_fd)
		return err;
	for (size_t t = 0; t < s->ntids && !err; t++)
		for (size_t e = 0; e < s->nev && !err; e++)
			err = queue_exit(s, t, e);
	return err;
}

HWC_EXPORT pid_t hwc_sampler_pid(const hwc_sampler *s)
{
	return s->pid;
}

HWC_EXPORT bool hwc_sampler_user_only(const hwc_sampler *s)
{
	for (size_t e = 0; e < s->nev; e++)
		if (s->user_only[e])
			return true;
	return false;
}

HWC_EXPORT int hwc_sampler_poll(hwc_sampler *s, int timeout_ms)
{
	struct pollfd *pfd = s->pfd;
	nfds_t n = 0;
	for (size_t c = 0; c < s->ncpus; c++)
		if (s->ring[c].fd >= 0 && !s->ring[c].hup)
			pfd[n++] = (struct pollfd){s->ring[c].fd, POLLIN, 0};
	nfds_t nrings = n;
	if (s->pidfd >= 0 && !s->ended)
		pfd[n++] = (struct pollfd){s->pidfd, POLLIN, 0};
	if (n == 0)
		return 1;
	int r = poll(pfd, n, timeout_ms);
	if (r < 0)
		return errno == EINTR ? -EINTR : hwc__fail(-errno, "poll: %s", strerror(errno));
	/* A buffer whose events all ended hangs up for good: stop polling it. */
	for (nfds_t i = 0; i < nrings; i++)
		if (pfd[i].revents & POLLHUP)
			for (size_t c = 0; c < s->ncpus; c++)
				if (s->ring[c].fd == pfd[i].fd)
					s->ring[c].hup = true;
	return r > 0;
}

HWC_EXPORT bool hwc_sampler_ended(hwc_sampler *s, int *status)
{
	if (!s->ended && s->child.pid > 0 && s->child.started) {
		int st;
		pid_t r = waitpid(s->child.pid, &st, WNOHANG);
		if (r == s->child.pid) {
			s->ended = true;
			s->status = st;
			s->child.pid = -1;
		}
	} else if (!s->ended && s->pidfd >= 0 && s->child.pid <= 0 && s->kind != HWC_TARGET_COMMAND) {
		struct pollfd p = {s->pidfd, POLLIN, 0};
		if (poll(&p, 1, 0) > 0)
			s->ended = true;
	}
	if (!s->ended && task_target(s) && s->kind != HWC_TARGET_SELF && s->pidfd < 0) {
		bool all = s->ncpus > 0;
		for (size_t c = 0; c < s->ncpus; c++)
			all &= s->ring[c].fd < 0 || s->ring[c].hup;
		s->ended = all;
	}
	if (status)
		*status = s->status;
	return s->ended;
}

/* -------------------------------------------------------------- iterating */

/* The event of record H; unknown ids are the first event's. */
static size_t event_of(const hwc_sampler *s, const struct perf_event_header *h)
{
	size_t e;
	return hwc__idmap_find(s->ids, s->nids, hwc__record_id(h), &e) ? e : 0;
}

static void count(hwc_sampler *s, const struct perf_event_header *h)
{
	const uint64_t *body = (const uint64_t *)(const void *)(h + 1);
	s->stats.records++;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		s->stats.samples++;
		break;
	case PERF_RECORD_LOST: /* id, lost */
		if (h->size >= 24)
			s->stats.lost += body[1];
		break;
	case PERF_RECORD_LOST_SAMPLES: /* lost */
		if (h->size >= 16)
			s->stats.lost += body[0];
		break;
	case PERF_RECORD_THROTTLE:
		s->stats.throttled++;
		break;
	case PERF_RECORD_UNTHROTTLE:
		s->stats.unthrottled++;
		break;
	}
}

static void release(hwc_sampler *s)
{
	if (!s->pending)
		return;
	struct ring *r = &s->ring[s->cur];
	r->tail += s->pending;
	s->pending = 0;
	__atomic_store_n(&r->page->data_tail, r->tail, __ATOMIC_RELEASE);
}

/* The record at the tail of ring R, copied when it wraps around the end. */
static const struct perf_event_header *peek(hwc_sampler *s, struct ring *r)
{
	uint64_t off = r->tail & (r->size - 1);
	struct perf_event_header h;
	for (size_t i = 0; i < sizeof(h); i++)
		((uint8_t *)&h)[i] = r->data[(off + i) & (r->size - 1)];
	if (h.size < sizeof(h) || r->tail + h.size > r->head)
		return NULL; /* cannot happen with a sane kernel: give up on this pass */
	if (off + h.size <= r->size)
		return (const void *)(r->data + off);
	size_t first = (size_t)(r->size - off);
	memcpy(s->copy, r->data + off, first);
	memcpy(s->copy + first, r->data, h.size - first);
	return (const void *)s->copy;
}

HWC_EXPORT int hwc_sampler_next(hwc_sampler *s, struct hwc_record *rec)
{
	release(s);
	for (; s->cur < s->ncpus; s->cur++) {
		struct ring *r = &s->ring[s->cur];
		if (!r->page)
			continue;
		if (!r->scanned) {
			r->head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
			r->scanned = true;
		}
		if (r->tail >= r->head)
			continue;
		const struct perf_event_header *h = peek(s, r);
		if (!h) {
			r->tail = r->head;
			__atomic_store_n(&r->page->data_tail, r->tail, __ATOMIC_RELEASE);
			continue;
		}
		s->pending = h->size;
		count(s, h);
		size_t e = event_of(s, h);
		*rec = (struct hwc_record){h, &s->ev[e].pub.attr, s->ev[e].name, s->cpus[s->cur]};
		return 1;
	}
	/* Every buffer is empty: the records made here at the end, then a new pass. */
	if (s->stopped && !s->lost_done) {
		s->lost_done = true;
		if (s->lost_total > s->stats.lost && queue_lost(s, s->lost_total - s->stats.lost))
			return hwc__fail(-ENOMEM, "out of memory");
	}
	if (s->synth_pos < s->synth.len) {
		const struct perf_event_header *h = (const void *)(s->synth.p + s->synth_pos);
		s->synth_pos += h->size;
		count(s, h);
		size_t e = event_of(s, h);
		*rec = (struct hwc_record){h, &s->ev[e].pub.attr, s->ev[e].name, -1};
		return 1;
	}
	s->cur = 0;
	for (size_t c = 0; c < s->ncpus; c++)
		s->ring[c].scanned = false;
	return 0;
}

HWC_EXPORT long hwc_sampler_write(hwc_sampler *s, hwc_recording *rec)
{
	long n = 0;
	struct hwc_record r;
	while (hwc_sampler_next(s, &r) > 0) {
		int err = hwc_recording_write(rec, r.hdr);
		if (err)
			return err;
		n++;
	}
	if (n) {
		/* perf sorts records by time up to here before reading on. */
		struct perf_event_header round = {HWC_RECORD_FINISHED_ROUND, 0, 8};
		int err = hwc_recording_write(rec, &round);
		if (err)
			return err;
	}
	return n;
}

HWC_EXPORT void hwc_sampler_stats(const hwc_sampler *s, struct hwc_sampler_stats *out)
{
	*out = s->stats;
}

HWC_EXPORT size_t hwc_sampler_nevents(const hwc_sampler *s)
{
	return s->nev;
}

HWC_EXPORT const struct perf_event_attr *hwc_sampler_event(const hwc_sampler *s, size_t idx,
							   const char **name)
{
	if (idx >= s->nev)
		return NULL;
	if (name)
		*name = s->ev[idx].name;
	return &s->ev[idx].pub.attr;
}

/* ------------------------------------------------------------- recording */

/* What existed before sampling started on S's target, from /proc: the
 * kernel's map (only into a recording REC: a symbolizer takes kernel
 * addresses from kallsyms itself), then every process (CPUS), the target
 * process, or nothing for a command, whose exec is in the data.  A
 * recording gets the kernel's map and every process once, however many
 * samplers are added to it. */
static int synth_target(const hwc_sampler *s, const struct hwc__sink *k, hwc_recording *rec)
{
	bool kernel = false;
	for (size_t e = 0; rec && e < s->nev; e++)
		kernel |= !s->ev[e].pub.attr.exclude_kernel;
	int err = kernel && hwc__recording_once(rec, HWC__SYNTH_KERNEL) ? hwc__synth_kernel_map(k)
									 : 0;
	if (err)
		return err;
	switch (s->kind) {
	case HWC_TARGET_CPUS:
		return !rec || hwc__recording_once(rec, HWC__SYNTH_ALL) ? hwc__synth_all(k) : 0;
	case HWC_TARGET_PROCESS:
	case HWC_TARGET_THREAD:
	case HWC_TARGET_SELF:
		return hwc__synth_process(k, s->tgid);
	case HWC_TARGET_COMMAND:
		return 0;
	}
	return 0;
}

static int to_recording(void *arg, const struct perf_event_header *h)
{
	return hwc_recording_write(arg, h);
}

HWC_EXPORT int hwc_recording_add_sampler(hwc_recording *rec, const hwc_sampler *s)
{
	hwc__clear_error();
	int base = (int)hwc_recording_nevents(rec);
	for (size_t e = 0; e < s->nev; e++) {
		const struct meta *m = &s->meta[e];
		int leader = m->leader < 0 ? -1 : base + m->leader;
		int idx = hwc__recording_add_event(rec, &s->ev[e].pub.attr, s->ev[e].name, leader);
		if (idx < 0)
			return idx;
		int err = hwc__recording_add_ids(rec, idx, m->ids, m->nids);
		if (err)
			return err;
	}
	struct hwc__sink k = {to_recording, rec, hwc__recording_first_attr(rec)};
	return synth_target(s, &k, rec);
}

static int to_symbols(void *arg, const struct perf_event_header *h)
{
	return hwc_symbols_record(arg, h, NULL);
}

HWC_EXPORT int hwc_symbols_add_sampler(hwc_symbols *syms, const hwc_sampler *s)
{
	hwc__clear_error();
	struct hwc__sink k = {to_symbols, syms, NULL};
	return synth_target(s, &k, NULL);
}
