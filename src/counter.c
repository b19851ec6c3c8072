/* The counting core: open an event list on a target (thread, new command,
 * process, CPUs), start/stop, and read scaled values.  Every value keeps its
 * raw count and times so multiplexing is never hidden. */
#include "internal.h"
#include "userpage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct snap {
	uint64_t raw, enabled, running;
};

struct instance {
	int cpu;   /* -1: follows the task */
	pid_t tid; /* -1: every task on the CPU */
};

/* Overflow notification state of one event on one instance. */
struct ovf {
	bool on;           /* hwc_counters_overflow_signal() was called */
	bool armed;        /* the kernel's event_limit is 1: the next overflow stops EV */
	uint64_t period;   /* events between arming and the overflow */
	uint64_t armed_at; /* raw count when armed */
};

struct hwc_counters {
	enum hwc_target_kind kind;
	unsigned flags;
	bool every_cpu;           /* counting on every online CPU (-a, not -C) */
	size_t nev, ninst, cap_inst; /* nev: evs.n */
	size_t cap_fd, cap_cur, cap_base;
	struct hwc__events evs;   /* attrs as opened */
	struct instance *inst;
	int *fd;                  /* [inst * nev + ev] */
	struct snap *cur, *base;  /* [inst * nev + ev] */
	uint64_t *buf;            /* read buffer for the largest group */
	size_t buf_words;
	/* SELF + NO_INHERIT: each event's first mmap page ([ev], NULL when not
	 * mapped), whether it offers rdpmc ([ev]: fixed when the kernel creates
	 * the event, so the fast path need not touch the page when it does
	 * not), and the thread whose counters they are. */
	const struct perf_event_mmap_page **page;
	bool *user_read;
	size_t page_size;
	pthread_t owner;
	pid_t pid;                /* target or child pid, -1 for none */
	struct hwc__child child;  /* COMMAND, or CPUS with argv */
	int pidfd;                /* hwc_counters_wait_fd(), -1 until asked for */
	bool running;             /* between start and stop */
	struct ovf *ovf;          /* [inst * nev + ev]; NULL until overflow is used */
};

#define SLOT(c, i, e) ((i) * (c)->nev + (e))

/* The multiplexed case, out of line: reads of unshared counters never pay
 * for a 128-bit division. */
__attribute__((noinline)) static uint64_t scale_multiplexed(uint64_t raw, uint64_t enabled,
							     uint64_t running)
{
	unsigned __int128 v = (unsigned __int128)raw * enabled / running;
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

HWC_EXPORT uint64_t hwc_scale(uint64_t raw, uint64_t enabled, uint64_t running)
{
	if (__builtin_expect(running >= enabled && running != 0, 1))
		return raw;
	return running ? scale_multiplexed(raw, enabled, running) : 0;
}

static int grow_instances(hwc_counters *c, size_t want)
{
	size_t slots = want * c->nev;
	int err = hwc__reserve(&c->inst, &c->cap_inst, want, sizeof(*c->inst));
	if (!err)
		err = hwc__reserve(&c->fd, &c->cap_fd, slots, sizeof(*c->fd));
	if (!err)
		err = hwc__reserve(&c->cur, &c->cap_cur, slots, sizeof(*c->cur));
	if (!err)
		err = hwc__reserve(&c->base, &c->cap_base, slots, sizeof(*c->base));
	return err;
}

static int add_instance(hwc_counters *c, int cpu, pid_t tid)
{
	int err = grow_instances(c, c->ninst + 1);
	if (err)
		return err;
	size_t i = c->ninst++;
	c->inst[i] = (struct instance){cpu, tid};
	for (size_t e = 0; e < c->nev; e++) {
		c->fd[SLOT(c, i, e)] = -1;
		c->cur[SLOT(c, i, e)] = (struct snap){0};
		c->base[SLOT(c, i, e)] = (struct snap){0};
	}
	return 0;
}

static void close_instance(hwc_counters *c, size_t i)
{
	for (size_t e = 0; e < c->nev; e++) {
		int *fd = &c->fd[SLOT(c, i, e)];
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

static bool skippable(const hwc_counters *c, int err)
{
	return (c->flags & HWC_SKIP_UNSUPPORTED) &&
	       (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV);
}

/* Open the group starting at LEADER on instance I.  Returns 0,
 * HWC__RETRY_USER_ONLY or HWC__RETRY_UNGROUPED when the caller must start
 * over (see hwc__open_event), or -errno. */
static int open_group(hwc_counters *c, size_t i, size_t leader)
{
	const struct instance *in = &c->inst[i];
	size_t n = c->evs.e[leader].group_size;
	pid_t pid = hwc__cpu_wide(c->kind) ? -1 : in->tid;
	for (size_t e = leader; e != HWC__NO_EVENT; e = c->evs.e[e].next) {
		struct perf_event_attr attr = c->evs.e[e].ev->pub.attr;
		attr.size = sizeof(attr);
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		if (n > 1)
			attr.read_format |= PERF_FORMAT_GROUP;
		attr.disabled = e == leader;
		attr.inherit = !hwc__cpu_wide(c->kind) && !(c->flags & HWC_NO_INHERIT);
		attr.inherit_thread = attr.inherit && (c->flags & HWC_THREADS_ONLY);
		attr.enable_on_exec = c->kind == HWC_TARGET_COMMAND && e == leader;
		if (c->kind == HWC_TARGET_SELF && (c->flags & HWC_NO_INHERIT))
			hwc__arch_request_user_read(&attr); /* map_pages() maps these for the fast read */
		int group_fd = e == leader ? -1 : c->fd[SLOT(c, i, leader)];
		int fd;
		int err = hwc__open_event(&c->evs, e, &attr, pid, in->cpu, group_fd, c->flags, &fd);
		if (hwc__open_again(err))
			return err;
		if (err)
			hwc__explain_open_error(err, &c->evs.e[e].ev->pub, pid, in->cpu);
		else if ((err = hwc__apply_filter(fd, c->evs.e[e].ev)))
			close(fd);
		if (err) {
			for (size_t k = leader; k != e; k = c->evs.e[k].next) {
				close(c->fd[SLOT(c, i, k)]);
				c->fd[SLOT(c, i, k)] = -1;
			}
			return err;
		}
		c->fd[SLOT(c, i, e)] = fd;
	}
	return 0;
}

/* Open every group on instance I.  -ESRCH means the task is gone. */
static int open_instance(hwc_counters *c, size_t i)
{
	for (size_t g = 0; g < c->nev; g++) {
		if (!c->evs.e[g].group_size || c->evs.e[g].status)
			continue;
		/* A hybrid's core PMU counts on its own CPUs only, an uncore PMU
		 * on its cpumask's: elsewhere the group stays unopened and counts 0. */
		if (c->inst[i].cpu >= 0 &&
		    !hwc__pmu_covers_cpu(c->evs.e[g].ev->pub.pmu, c->inst[i].cpu, c->every_cpu))
			continue;
		int err = open_group(c, i, g);
		if (!err)
			continue;
		if (skippable(c, err) && i == 0) {
			for (size_t k = g; k != HWC__NO_EVENT; k = c->evs.e[k].next) {
				c->evs.e[k].status = err;
				snprintf(c->evs.e[k].error, sizeof(c->evs.e[k].error), "%s", hwc_errdetail());
			}
			continue;
		}
		close_instance(c, i);
		return err;
	}
	return 0;
}

static int open_thread(void *arg, pid_t tid)
{
	hwc_counters *c = arg;
	int err = add_instance(c, -1, tid);
	if (!err)
		err = open_instance(c, c->ninst - 1);
	if (err == -ESRCH) /* the thread exited meanwhile */
		c->ninst--;
	return err;
}

static int setup(hwc_counters *c, const hwc_evlist *list)
{
	if (hwc_evlist_size(list) == 0)
		return hwc__fail(-EINVAL, "no events to count");
	int err = hwc__events_add_list(&c->evs, list);
	if (err)
		return err;
	c->nev = c->evs.n;
	size_t largest = 1;
	for (size_t e = 0; e < c->nev; e++)
		if (c->evs.e[e].group_size > largest)
			largest = c->evs.e[e].group_size;
	c->buf_words = 3 + largest;
	c->buf = calloc(c->buf_words, sizeof(uint64_t));
	return c->buf ? 0 : hwc__fail(-ENOMEM, "out of memory");
}

static int open_all(hwc_counters *c, const struct hwc_target *t)
{
	switch (t->kind) {
	case HWC_TARGET_SELF: {
		int err = add_instance(c, -1, (pid_t)syscall(SYS_gettid));
		return err ? err : open_instance(c, 0);
	}
	case HWC_TARGET_COMMAND:
	case HWC_TARGET_THREAD: {
		int err = add_instance(c, -1, c->pid);
		return err ? err : open_instance(c, 0);
	}
	case HWC_TARGET_PROCESS:
		return hwc__each_thread(c->pid, open_thread, c);
	case HWC_TARGET_CPUS:
	case HWC_TARGET_CGROUP: {
		int *cpus;
		size_t n;
		int err = hwc__target_cpus(t, &cpus, &n);
		for (size_t i = 0; i < n && !err; i++) {
			err = add_instance(c, cpus[i], -1);
			if (!err)
				err = open_instance(c, c->ninst - 1);
		}
		free(cpus);
		return err;
	}
	}
	return hwc__fail(-EINVAL, "unknown target kind %d", (int)t->kind);
}

static void close_all(hwc_counters *c)
{
	for (size_t i = 0; i < c->ninst; i++)
		close_instance(c, i);
	c->ninst = 0;
}

struct open_args {
	hwc_counters *c;
	const struct hwc_target *t;
};

static int open_args_all(void *arg)
{
	struct open_args *a = arg;
	return open_all(a->c, a->t);
}

/* Before opening again: every event closed, none skipped. */
static void close_for_retry(void *arg)
{
	struct open_args *a = arg;
	close_all(a->c);
	for (size_t e = 0; e < a->c->nev; e++)
		a->c->evs.e[e].status = 0;
}

static void close_counters(void *c)
{
	hwc_counters_close(c);
}

/* Map the first page of each event, pre-faulted, for hwc_counters_read_fast().
 * The kernel refuses the mapping for inherited events; a refusal here (say,
 * perf_event_mlock_kb exhausted) only means those events are read with read(2). */
static int map_pages(hwc_counters *c)
{
	c->page = calloc(c->nev, sizeof(*c->page));
	c->user_read = calloc(c->nev, sizeof(*c->user_read));
	if (!c->page || !c->user_read)
		return hwc__fail(-ENOMEM, "out of memory");
	c->page_size = (size_t)sysconf(_SC_PAGESIZE);
	c->owner = pthread_self();
	for (size_t e = 0; e < c->nev; e++) {
		int fd = c->fd[SLOT(c, 0, e)];
		if (fd < 0)
			continue;
		void *p = mmap(NULL, c->page_size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
		if (p == MAP_FAILED)
			continue;
		c->page[e] = p;
		c->user_read[e] = c->page[e]->capabilities & HWC__CAP_USER_RDPMC;
	}
	return 0;
}

static void unmap_pages(hwc_counters *c)
{
	if (!c->page)
		return;
	for (size_t e = 0; e < c->nev; e++)
		if (c->page[e])
			munmap((void *)c->page[e], c->page_size);
	free(c->page);
	free(c->user_read);
	c->page = NULL;
	c->user_read = NULL;
}

HWC_EXPORT int hwc_counters_open(hwc_counters **out, const hwc_evlist *list,
				 const struct hwc_target *t)
{
	hwc__clear_error();
	*out = NULL;
	hwc_counters *c = calloc(1, sizeof(*c));
	if (!c)
		return hwc__fail(-ENOMEM, "out of memory");
	c->kind = t->kind;
	c->flags = t->flags;
	c->every_cpu = hwc__cpu_wide(t->kind) && !t->cpus;
	c->pid = -1;
	c->pidfd = -1;
	hwc__child_init(&c->child);
	int err = setup(c, list);
	if (!err)
		err = hwc__events_open_cgroups(&c->evs, t);
	if (!err && (t->kind == HWC_TARGET_PROCESS || t->kind == HWC_TARGET_THREAD)) {
		if (t->pid <= 0)
			err = hwc__fail(-EINVAL, "invalid pid %d", (int)t->pid);
		c->pid = t->pid;
	}
	/* A CPUS target with argv runs the command while it counts every CPU
	 * (perf stat -a -- CMD): the child waits until the counters run. */
	if (!err && (t->kind == HWC_TARGET_COMMAND || (hwc__cpu_wide(t->kind) && t->argv))) {
		err = hwc__child_spawn(&c->child, t->argv);
		c->pid = c->child.pid;
	}
	if (!err) {
		struct open_args a = {c, t};
		err = hwc__open_with_fallback(open_args_all, close_for_retry, &a, "counting");
	}
	if (!err) {
		size_t ok = 0;
		for (size_t e = 0; e < c->nev; e++)
			ok += c->evs.e[e].status == 0;
		if (ok == 0)
			err = hwc__fail(c->evs.e[0].status, "%s", c->evs.e[0].error);
	}
	if (!err && t->kind == HWC_TARGET_SELF && (t->flags & HWC_NO_INHERIT))
		err = map_pages(c);
	if (err)
		return hwc__fail_cleanup(err, close_counters, c);
	*out = c;
	return 0;
}

HWC_EXPORT void hwc_counters_close(hwc_counters *c)
{
	if (!c)
		return;
	unmap_pages(c);
	close_all(c);
	hwc__child_discard(&c->child);
	if (c->pidfd >= 0)
		close(c->pidfd);
	hwc__events_free(&c->evs);
	free(c->inst);
	free(c->fd);
	free(c->cur);
	free(c->base);
	free(c->buf);
	free(c->ovf);
	free(c);
}

static int ioctl_leaders(hwc_counters *c, unsigned long req)
{
	return hwc__ioctl_leaders(&c->evs, c->fd, c->ninst, req);
}

static int arm_pending(hwc_counters *c);

HWC_EXPORT int hwc_counters_start(hwc_counters *c)
{
	hwc__clear_error();
	if (c->kind == HWC_TARGET_COMMAND && !c->child.started) {
		int err = hwc__child_release(&c->child); /* enable_on_exec starts the counters */
		if (err)
			c->pid = -1;
		c->running = err == 0;
		return err;
	}
	int err = arm_pending(c);
	if (!err)
		err = ioctl_leaders(c, PERF_EVENT_IOC_ENABLE);
	c->running = err == 0;
	if (!err && c->child.pid > 0 && !c->child.started) {
		/* CPUS with argv: the CPUs count; now the command may exec. */
		if ((err = hwc__child_release(&c->child)))
			c->pid = -1; /* reaped; the CPUs count on until stopped */
	}
	return err;
}

HWC_EXPORT int hwc_counters_stop(hwc_counters *c)
{
	hwc__clear_error();
	c->running = false;
	return ioctl_leaders(c, PERF_EVENT_IOC_DISABLE);
}

/* One read(2) of the group led by G on instance I into c->buf (a member's fd
 * reads its whole group too: PERF_FORMAT_GROUP). */
static int read_group(hwc_counters *c, size_t i, size_t g, size_t fd_ev)
{
	size_t n = c->evs.e[g].group_size, words = n > 1 ? 3 + n : 3;
	ssize_t r = read(c->fd[SLOT(c, i, fd_ev)], c->buf, words * sizeof(uint64_t));
	if (r != (ssize_t)(words * sizeof(uint64_t)))
		return hwc__fail(r < 0 ? -errno : -EIO, "reading '%s' failed: %s", c->evs.e[g].ev->name,
				 r < 0 ? strerror(errno) : "short read");
	return 0;
}

HWC_EXPORT int hwc_counters_read(hwc_counters *c)
{
	hwc__clear_error();
	for (size_t i = 0; i < c->ninst; i++) {
		for (size_t g = 0; g < c->nev; g++) {
			if (!c->evs.e[g].group_size || c->fd[SLOT(c, i, g)] < 0)
				continue;
			int err = read_group(c, i, g, g);
			if (err)
				return err;
			bool one = c->evs.e[g].group_size == 1;
			for (size_t k = g; k != HWC__NO_EVENT; k = c->evs.e[k].next) {
				struct snap *s = &c->cur[SLOT(c, i, k)];
				s->raw = c->buf[one ? 0 : 3 + c->evs.e[k].pos];
				s->enabled = c->buf[1];
				s->running = c->buf[2];
			}
		}
	}
	return 0;
}

static inline void diff(const struct snap *now, const struct snap *was, struct hwc_value *v)
{
	/* Counters only grow; a smaller value means the task's counters were
	 * reset under us, so report from zero rather than wrap. */
	v->raw = now->raw >= was->raw ? now->raw - was->raw : now->raw;
	v->enabled = now->enabled >= was->enabled ? now->enabled - was->enabled : now->enabled;
	v->running = now->running >= was->running ? now->running - was->running : now->running;
	v->scaled = hwc_scale(v->raw, v->enabled, v->running);
}

static void delta(const hwc_counters *c, size_t i, size_t e, struct hwc_value *v)
{
	diff(&c->cur[SLOT(c, i, e)], &c->base[SLOT(c, i, e)], v);
}

HWC_EXPORT int hwc_counters_read_fast(hwc_counters *c, size_t inst, size_t ev,
				      struct hwc_value *out)
{
	if (inst >= c->ninst || ev >= c->nev)
		return hwc__fail(-EINVAL, "no event %zu / instance %zu", ev, inst);
	if (c->evs.e[ev].status)
		return hwc__fail(c->evs.e[ev].status, "%s", c->evs.e[ev].error);
	struct snap now;
	/* Without rdpmc, nothing but read(2): not even a look at the page,
	 * whose TLB miss after the system call costs more than the rest. */
	if (!HWC__HAVE_RDPMC || !c->user_read || inst != 0 || !c->user_read[ev] ||
	    !pthread_equal(c->owner, pthread_self()) ||
	    !hwc__userpage_read(c->page[ev], hwc__rdpmc, hwc__rdtsc_insn, &now.raw,
				&now.enabled, &now.running)) {
		size_t g = c->evs.e[ev].leader;
		int err = read_group(c, inst, g, ev);
		if (err)
			return err;
		now.raw = c->buf[c->evs.e[g].group_size > 1 ? 3 + c->evs.e[ev].pos : 0];
		now.enabled = c->buf[1];
		now.running = c->buf[2];
	}
	diff(&now, &c->base[SLOT(c, inst, ev)], out);
	return 0;
}

/* Every event's raw count since it was opened, of instance 0, into RAW[ev]
 * (0 for a skipped event): for hwc_region_begin/_end, one
 * call per region edge (the counts alone: no clock read for the times).
 * A group whose every member the calling thread may
 * read from user space is read that way; otherwise (or when one of them is
 * not on a counter now) with one read(2) of the group. */
int hwc__counters_read_raw(hwc_counters *c, uint64_t *raw)
{
	bool mine = c->user_read && pthread_equal(c->owner, pthread_self());
	for (size_t g = 0; g < c->nev; g++) {
		size_t n = c->evs.e[g].group_size, k = g;
		if (!n)
			continue;
		if (c->evs.e[g].status) {
			for (; k != HWC__NO_EVENT; k = c->evs.e[k].next)
				raw[k] = 0;
			continue;
		}
		uint64_t ena, run;
		if (HWC__HAVE_RDPMC && mine)
			for (; k != HWC__NO_EVENT && c->user_read[k]; k = c->evs.e[k].next)
				if (!hwc__userpage_read(c->page[k], hwc__rdpmc, NULL, &raw[k], &ena, &run))
					break;
		if (k == HWC__NO_EVENT)
			continue;
		int err = read_group(c, 0, g, g);
		if (err)
			return err;
		for (k = g; k != HWC__NO_EVENT; k = c->evs.e[k].next)
			raw[k] = c->buf[n > 1 ? 3 + c->evs.e[k].pos : 0];
	}
	return 0;
}

HWC_EXPORT const struct perf_event_mmap_page *hwc_counters_userpage(const hwc_counters *c,
								      size_t ev)
{
	return c->page && ev < c->nev ? c->page[ev] : NULL;
}

HWC_EXPORT int hwc_userpage_read(const struct perf_event_mmap_page *page,
				 const struct hwc_userpage_readers *readers, struct hwc_value *out)
{
	bool insns = !readers || !readers->read_pmc; /* the CPU's own rdpmc */
	uint64_t (*read_pmc)(unsigned) = insns ? hwc__rdpmc : readers->read_pmc;
	uint64_t (*read_tsc)(void) =
		readers && readers->read_tsc ? readers->read_tsc : hwc__rdtsc_insn;
	memset(out, 0, sizeof(*out));
	bool cap = page->capabilities & HWC__CAP_USER_RDPMC;
	if ((insns && !HWC__HAVE_RDPMC) ||
	    !hwc__userpage_read(page, read_pmc, read_tsc, &out->raw, &out->enabled, &out->running))
		return hwc__fail(-ENODATA,
				 "the event cannot be read from user space now (%s); read(2) its "
				 "file descriptor instead",
				 !cap || (insns && !HWC__HAVE_RDPMC) ? "no user-space rdpmc for it"
								     : "it is not on a hardware counter");
	out->scaled = hwc_scale(out->raw, out->enabled, out->running);
	return 0;
}

HWC_EXPORT int hwc_counters_value(const hwc_counters *c, size_t inst, size_t ev,
				  struct hwc_value *out)
{
	if (ev >= c->nev || (inst != HWC_ALL && inst >= c->ninst))
		return hwc__fail(-EINVAL, "no event %zu / instance %zu", ev, inst);
	if (c->evs.e[ev].status) {
		*out = (struct hwc_value){0};
		return hwc__fail(c->evs.e[ev].status, "%s", c->evs.e[ev].error);
	}
	if (inst != HWC_ALL || c->ninst == 1) {
		delta(c, inst == HWC_ALL ? 0 : inst, ev, out);
		return 0;
	}
	*out = (struct hwc_value){0};
	for (size_t i = 0; i < c->ninst; i++) {
		struct hwc_value v;
		delta(c, i, ev, &v);
		out->raw += v.raw;
		out->enabled += v.enabled;
		out->running += v.running;
		out->scaled = out->scaled + v.scaled < out->scaled ? UINT64_MAX : out->scaled + v.scaled;
	}
	return 0;
}

HWC_EXPORT int hwc_counters_values(const hwc_counters *c, size_t inst, struct hwc_value *out)
{
	if (inst != HWC_ALL && inst >= c->ninst)
		return hwc__fail(-EINVAL, "no instance %zu", inst);
	if (inst == HWC_ALL && c->ninst != 1) {
		for (size_t e = 0; e < c->nev; e++)
			hwc_counters_value(c, HWC_ALL, e, &out[e]);
		return 0;
	}
	size_t i = inst == HWC_ALL ? 0 : inst;
	const struct snap *now = &c->cur[SLOT(c, i, 0)], *was = &c->base[SLOT(c, i, 0)];
	for (size_t e = 0; e < c->nev; e++) {
		if (__builtin_expect(c->evs.e[e].status != 0, 0))
			out[e] = (struct hwc_value){0};
		else
			diff(&now[e], &was[e], &out[e]);
	}
	return 0;
}

HWC_EXPORT void hwc_counters_rebase(hwc_counters *c)
{
	memcpy(c->base, c->cur, c->ninst * c->nev * sizeof(*c->base));
}

HWC_EXPORT int hwc_counters_reset(hwc_counters *c)
{
	int err = hwc_counters_read(c);
	if (!err)
		hwc_counters_rebase(c);
	return err;
}

HWC_EXPORT pid_t hwc_counters_pid(const hwc_counters *c)
{
	return c->pid;
}

HWC_EXPORT int hwc_counters_wait_fd(hwc_counters *c)
{
	hwc__clear_error();
	if (c->pidfd >= 0 || (c->pidfd = hwc__child_take_pidfd(&c->child)) >= 0)
		return c->pidfd;
	if (c->pid <= 0)
		return hwc__fail(-EINVAL, "the counters have no process to wait for: the target is "
					  "this thread or CPUs without a command");
	int fd = hwc__pidfd_open(c->pid, c->kind == HWC_TARGET_THREAD);
	if (fd == -ESRCH)
		return hwc__fail(fd, "task %d has ended", (int)c->pid);
	if (fd == -EOPNOTSUPP)
		return hwc__fail(fd, "this kernel cannot watch thread %d, which does not lead its "
				     "process (Linux 6.9 can): look for it now and then",
				 (int)c->pid);
	if (fd < 0)
		return hwc__fail(fd, "cannot watch task %d: pidfd_open: %s", (int)c->pid,
				 strerror(-fd));
	return c->pidfd = fd;
}

HWC_EXPORT size_t hwc_counters_ninstances(const hwc_counters *c)
{
	return c->ninst;
}

HWC_EXPORT int hwc_counters_instance_cpu(const hwc_counters *c, size_t inst)
{
	return inst < c->ninst ? c->inst[inst].cpu : -1;
}

HWC_EXPORT pid_t hwc_counters_instance_tid(const hwc_counters *c, size_t inst)
{
	return inst < c->ninst ? c->inst[inst].tid : -1;
}

HWC_EXPORT int hwc_counters_event_status(const hwc_counters *c, size_t ev)
{
	return ev < c->nev ? c->evs.e[ev].status : -EINVAL;
}

HWC_EXPORT const char *hwc_counters_event_error(const hwc_counters *c, size_t ev)
{
	return ev < c->nev ? c->evs.e[ev].error : "";
}

HWC_EXPORT bool hwc_counters_user_only(const hwc_counters *c, size_t ev)
{
	return ev < c->nev && c->evs.e[ev].user_only;
}

HWC_EXPORT bool hwc_counters_ungrouped(const hwc_counters *c, size_t ev)
{
	return ev < c->nev && c->evs.e[ev].ungrouped;
}

HWC_EXPORT int hwc_counters_fd(const hwc_counters *c, size_t inst, size_t ev)
{
	return inst < c->ninst && ev < c->nev ? c->fd[SLOT(c, inst, ev)] : -1;
}

/* ------------------------------------------------------------- overflow */

/* Raw count of EV on instance I, read on the stack so that a signal handler
 * may call this while the thread it interrupted is in hwc_counters_read(). */
static int read_raw(const hwc_counters *c, size_t i, size_t ev, uint64_t *raw)
{
	size_t leader = c->evs.e[ev].leader;
	size_t n = c->evs.e[leader].group_size;
	uint64_t buf[3 + HWC__MAX_GROUP]; /* open refuses larger groups */
	size_t words = n > 1 ? 3 + n : 3;
	ssize_t r = read(c->fd[SLOT(c, i, leader)], buf, words * sizeof(uint64_t));
	if (r != (ssize_t)(words * sizeof(uint64_t)))
		return hwc__fail_text(r < 0 ? -errno : -EIO, "cannot read the counter to arm its "
							    "overflow notification");
	*raw = n > 1 ? buf[3 + c->evs.e[ev].pos] : buf[0];
	return 0;
}

/* Set event_limit to 1 (and enable EV): the next overflow stops EV. */
static int arm(hwc_counters *c, size_t slot, size_t i, size_t ev)
{
	struct ovf *o = &c->ovf[slot];
	int err = read_raw(c, i, ev, &o->armed_at);
	if (err)
		return err;
	if (ioctl(c->fd[slot], PERF_EVENT_IOC_REFRESH, 1) < 0)
		return hwc__fail_text(-errno, "the kernel refused PERF_EVENT_IOC_REFRESH");
	o->armed = true;
	return 0;
}

static int arm_pending(hwc_counters *c)
{
	if (!c->ovf)
		return 0;
	for (size_t i = 0; i < c->ninst; i++)
		for (size_t e = 0; e < c->nev; e++) {
			size_t slot = SLOT(c, i, e);
			if (!c->ovf[slot].on || c->ovf[slot].armed)
				continue;
			int err = arm(c, slot, i, e);
			if (err)
				return hwc__fail(err, "cannot arm overflow notification of '%s': %s",
						 c->evs.e[e].ev->name, strerror(-err));
		}
	return 0;
}

static int overflow_slot(const hwc_counters *c, size_t inst, size_t ev, size_t *slot)
{
	if (inst >= c->ninst || ev >= c->nev)
		return hwc__fail(-EINVAL, "no event %zu / instance %zu", ev, inst);
	*slot = SLOT(c, inst, ev);
	if (c->fd[*slot] < 0)
		return hwc__fail(-EINVAL, "'%s' is not open (%s)", c->evs.e[ev].ev->name, c->evs.e[ev].error);
	return 0;
}

HWC_EXPORT int hwc_counters_overflow_signal(hwc_counters *c, size_t inst, size_t ev, int sig,
					    pid_t tid)
{
	hwc__clear_error();
	size_t slot;
	int err = overflow_slot(c, inst, ev, &slot);
	if (err)
		return err;
	const struct perf_event_attr *a = &c->evs.e[ev].ev->pub.attr;
	if (!a->sample_period || a->freq)
		return hwc__fail(-EINVAL, "'%s' has no sample period: set attr.sample_period "
					  "before opening to get overflow notification",
				 c->evs.e[ev].ev->name);
	if (!hwc__cpu_wide(c->kind) && !(c->flags & HWC_NO_INHERIT))
		return hwc__fail(-EINVAL, "overflow notification of '%s' needs HWC_NO_INHERIT: the "
					  "kernel cannot stop inherited counters at an overflow",
				 c->evs.e[ev].ev->name);
	if (c->kind == HWC_TARGET_COMMAND && !c->child.started)
		return hwc__fail(-EINVAL, "start the command before asking for overflow signals");
	if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP)
		return hwc__fail(-EINVAL, "%d is not a signal that can be delivered", sig);
	if (!c->ovf) {
		c->ovf = calloc(c->ninst * c->nev, sizeof(*c->ovf));
		if (!c->ovf)
			return hwc__fail(-ENOMEM, "out of memory");
	}
	int fd = c->fd[slot];
	struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
	int flags = fcntl(fd, F_GETFL);
	if (fcntl(fd, F_SETOWN_EX, &owner) < 0 || fcntl(fd, F_SETSIG, sig) < 0 || flags < 0 ||
	    fcntl(fd, F_SETFL, flags | O_ASYNC) < 0)
		return hwc__fail(-errno, "cannot route overflow signals of '%s' to thread %d: %s",
				 c->evs.e[ev].ev->name, (int)tid, strerror(errno));
	struct ovf *o = &c->ovf[slot];
	o->on = true;
	o->period = a->sample_period;
	if (c->running && !o->armed && (err = arm(c, slot, inst, ev)))
		return hwc__fail(err, "cannot arm overflow notification of '%s': %s",
				 c->evs.e[ev].ev->name, strerror(-err));
	return 0;
}

HWC_EXPORT int hwc_counters_overflow_rearm(hwc_counters *c, size_t inst, size_t ev,
					   uint64_t period)
{
	hwc__clear_error();
	size_t slot;
	int err = overflow_slot(c, inst, ev, &slot);
	if (err)
		return err;
	struct ovf *o = c->ovf ? &c->ovf[slot] : NULL;
	if (!o || !o->on)
		return hwc__fail(-EINVAL, "'%s' has no overflow notification", c->evs.e[ev].ev->name);
	if (period >> 63)
		return hwc__fail(-EINVAL, "overflow period %#llx is too large (at most 2^63-1)",
				 (unsigned long long)period);
	int fd = c->fd[slot];
	/* Disabled first: a new period set while counting would make the
	 * kernel report an overflow at the very next event. */
	if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
		return hwc__fail_text(-errno, "cannot stop the event to re-arm it: the kernel "
					      "refused PERF_EVENT_IOC_DISABLE");
	uint64_t now;
	if ((err = read_raw(c, inst, ev, &now)))
		return err;
	/* The kernel's event_limit is 0 after an overflow, still 1 if the
	 * period has not been reached since arming. */
	bool limit_left = o->armed && now - o->armed_at < o->period;
	uint64_t p = period ? period : o->period;
	if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &p) < 0)
		return hwc__fail_text(-errno, "the kernel refused the new overflow period "
					      "(PERF_EVENT_IOC_PERIOD)");
	o->period = p;
	o->armed_at = now;
	o->armed = limit_left;
	if (!c->running)
		return 0; /* hwc_counters_start() arms it if needed and enables */
	if (ioctl(fd, limit_left ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_REFRESH, 1) < 0)
		return hwc__fail_text(-errno, "cannot let the event count again: the kernel "
					      "refused PERF_EVENT_IOC_ENABLE/REFRESH");
	o->armed = true;
	return 0;
}
