/* libpmc's PMCs over libhwc.  A system-scope counting PMC is a counter on
 * one CPU; a process-scope counting PMC one counter per target process
 * (with inheritance: to new threads, and with PMC_F_DESCENDANTS to new
 * children); sampling PMCs, and counting ones that log context switches or
 * exits, are samplers that exist while the PMC runs and write into the log.
 * Counting PMCs keep hwpmc's 64-bit virtual value: the value last written
 * plus what the targets counted since. */
#include "pmc_impl.h"

#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pmc__pmc pmc__pmcs[PMC__MAX];

/* ------------------------------------------------------------ lookup */

static bool any_pmc(void)
{
	for (size_t i = 0; i < PMC__MAX; i++)
		if (pmc__pmcs[i].used)
			return true;
	return false;
}

/* The PMC of ID: NULL with ESRCH when this process owns none, EINVAL for
 * a handle it does not own. */
static struct pmc__pmc *find(pmc_id_t id)
{
	if (!pmc__initialized) {
		pmc__fail(ENXIO, "pmc_init() has not succeeded");
		return NULL;
	}
	size_t slot = PMC_ID_TO_ROWINDEX(id);
	if (pmc__pmcs[slot].used && pmc__pmcs[slot].id == id)
		return &pmc__pmcs[slot];
	if (!any_pmc())
		pmc__fail(ESRCH, "this process has allocated no PMC");
	else
		pmc__fail(EINVAL, "0x%x is not a PMC this process allocated", id);
	return NULL;
}

/* Lock, then look the PMC up; on failure unlock and return NULL. */
static struct pmc__pmc *lock_find(pmc_id_t id)
{
	pthread_mutex_lock(&pmc__lock);
	struct pmc__pmc *p = find(id);
	if (!p)
		pthread_mutex_unlock(&pmc__lock);
	return p;
}

static int unlock_ret(int rc)
{
	int e = errno;
	pthread_mutex_unlock(&pmc__lock);
	errno = e;
	return rc;
}

/* ------------------------------------------------------------ targets */

static bool pid_exists(pid_t pid)
{
	return kill(pid, 0) == 0 || errno != ESRCH;
}

static struct pmc__target *target_of(struct pmc__pmc *p, pid_t pid)
{
	for (size_t i = 0; i < p->nt; i++)
		if (p->t[i].pid == pid)
			return &p->t[i];
	return NULL;
}

/* The processes descended from ROOT, from /proc, parents before children:
 * *OUT (malloc'ed, sized from the process table) and their count, or -1
 * with errno ENOMEM. */
static ssize_t descendants(pid_t root, pid_t **out)
{
	struct {
		pid_t pid, ppid;
	} *procs = NULL;
	size_t np = 0, cap = 0;
	*out = NULL;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char path[64], buf[512];
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		char *rp = strrchr(buf, ')'); /* the command may hold spaces and parens */
		int parent;
		if (!rp || sscanf(rp + 1, " %*c %d", &parent) != 1)
			continue;
		if (!pmc__room(&procs, np, &cap, sizeof(*procs), 256)) {
			closedir(d);
			free(procs);
			errno = ENOMEM;
			return -1;
		}
		procs[np].pid = (pid_t)atoi(e->d_name);
		procs[np++].ppid = parent;
	}
	closedir(d);
	/* Breadth first from ROOT; the found ones are the queue.  Each process
	 * has one parent, so at most all of them are found. */
	pid_t *found = malloc((np ? np : 1) * sizeof(*found));
	if (!found) {
		free(procs);
		errno = ENOMEM;
		return -1;
	}
	size_t n = 0, head = 0;
	for (pid_t p = root;; p = found[head++]) {
		for (size_t i = 0; i < np && n < np; i++)
			if (procs[i].ppid == p && procs[i].pid != root)
				found[n++] = procs[i].pid;
		if (head == n)
			break;
	}
	free(procs);
	*out = found;
	return (ssize_t)n;
}

static unsigned target_flags(const struct pmc__pmc *p)
{
	return p->flags & PMC_F_DESCENDANTS ? 0 : HWC_THREADS_ONLY;
}

/* Counts of target T, as libhwc counts them (scaled when multiplexed). */
static uint64_t target_count(const struct pmc__pmc *p, const struct pmc__target *t)
{
	if (!t->c || hwc_counters_read(t->c))
		return 0;
	uint64_t sum = 0;
	for (size_t e = 0; e < hwc_evlist_size(p->ev.list); e++) {
		struct hwc_value v;
		if (hwc_counters_value(t->c, HWC_ALL, e, &v) == 0)
			sum += v.scaled;
	}
	return sum;
}

/* Sampler options for P. */
static struct hwc_sampler_opts sampler_opts(const struct pmc__pmc *p)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t want = (size_t)pmc__tun.nsamples * (64 + 8 * (size_t)pmc__tun.callchaindepth);
	size_t logbuf = (size_t)pmc__tun.logbuffersize * 1024 * (size_t)pmc__tun.nbuffers;
	if (logbuf > want)
		want = logbuf;
	size_t pages = 1;
	while (pages * (size_t)page < want && pages < (1u << 16))
		pages *= 2;
	struct hwc_sampler_opts o = {
		.period = PMC_IS_SAMPLING_MODE(p->mode) ? p->count * p->ev.divisor : 0,
		.callgraph = p->flags & PMC_F_CALLCHAIN ? HWC_CALLGRAPH_FP : HWC_CALLGRAPH_NONE,
		.mmap_pages = pages,
		/* FreeBSD's records name their CPU; the log adds user records. */
		.flags = HWC_SAMPLE_CPU | HWC_SAMPLE_ID,
	};
	if (PMC_IS_COUNTING_MODE(p->mode)) {
		o.flags |= (p->flags & PMC_F_LOG_PROCEXIT ? HWC_LOG_PROCEXIT : 0) |
			  (p->flags & PMC_F_LOG_PROCCSW ? HWC_LOG_PROCCSW : 0);
		o.counted = p->ev.list;
	}
	return o;
}

static int open_sampler(struct pmc__pmc *p, const struct hwc_target *tgt, hwc_sampler **out)
{
	struct hwc_sampler_opts o = sampler_opts(p);
	const hwc_evlist *list = PMC_IS_SAMPLING_MODE(p->mode) ? p->ev.list : NULL;
	for (size_t e = 0; list && e < hwc_evlist_size(p->ev.list); e++)
		hwc_evlist_attr(p->ev.list, e)->sample_max_stack = (uint16_t)pmc__tun.callchaindepth;
	int err = hwc_sampler_open(out, list, tgt, &o);
	if (err)
		return pmc__fail_hwc(err, "cannot open the sampler");
	if (pmc__log_add_sampler(p, *out, tgt->kind == HWC_TARGET_CPUS ? -1 : tgt->pid) ||
	    hwc_sampler_start(*out)) {
		int e = errno;
		hwc_sampler_close(*out);
		*out = NULL;
		return pmc__fail(e, "cannot start the sampler: %s", hwc_errdetail());
	}
	return 0;
}

/* Stop sampler *S, move its last records into the log, close it. */
static void close_sampler(hwc_sampler **s)
{
	if (!*s)
		return;
	hwc_sampler_stop(*s);
	pmc__log_drain(*s);
	pmc__stats_sampler(*s);
	hwc_sampler_close(*s);
	*s = NULL;
}

static int attach_one(struct pmc__pmc *p, pid_t pid, pid_t root)
{
	struct pmc__target t = {pid, root, NULL, NULL, -1, false};
	/* Sampling PMCs open a counter too, for the permission check hwpmc
	 * makes at attach time; only counting ones keep it. */
	struct hwc_target tgt = {.kind = HWC_TARGET_PROCESS, .pid = pid, .flags = target_flags(p)};
	int err = hwc_counters_open(&t.c, p->ev.list, &tgt);
	if (err) {
		if (err == -ESRCH)
			return pmc__fail(ESRCH, "no process %d", (int)pid);
		return pmc__fail_hwc(err, "cannot attach");
	}
	if (PMC_IS_SAMPLING_MODE(p->mode)) {
		hwc_counters_close(t.c);
		t.c = NULL;
	}
	if (p->nt == p->cap_t) {
		size_t cap = p->cap_t ? p->cap_t * 2 : 4;
		struct pmc__target *n = realloc(p->t, cap * sizeof(*n));
		if (!n) {
			hwc_counters_close(t.c);
			return pmc__fail(ENOMEM, "out of memory");
		}
		p->t = n;
		p->cap_t = cap;
	}
	pmc__watch_target(&t);
	p->t[p->nt++] = t;
	p->signalled = false;
	pmc__log_pmc(p, PMCLOG_TYPE_PMCATTACH, pid);
	return 0;
}

/* Remove target I: its counts stay in the PMC's value. */
static void remove_target(struct pmc__pmc *p, size_t i)
{
	struct pmc__target *t = &p->t[i];
	p->saved += target_count(p, t);
	close_sampler(&t->s);
	hwc_counters_close(t->c);
	pmc__unwatch_target(t);
	pmc__log_pmc(p, PMCLOG_TYPE_PMCDETACH, t->pid);
	p->t[i] = p->t[--p->nt];
}

/* Attach P to PID and, with PMC_F_DESCENDANTS, its current descendants
 * (found first: a child forked later inherits from its attached parent). */
static int attach(struct pmc__pmc *p, pid_t pid)
{
	pid_t *desc = NULL;
	ssize_t nd = p->flags & PMC_F_DESCENDANTS ? descendants(pid, &desc) : 0;
	if (nd < 0)
		return -1;
	size_t before = p->nt;
	int rc = attach_one(p, pid, pid);
	for (size_t i = 0; rc == 0 && i < (size_t)nd; i++) {
		if (target_of(p, desc[i]))
			continue;
		if (attach_one(p, desc[i], pid) && errno != ESRCH)
			rc = -1; /* a child that exited meanwhile is no loss */
	}
	free(desc);
	if (rc) {
		int e = errno;
		while (p->nt > before)
			remove_target(p, p->nt - 1);
		errno = e;
		return -1;
	}
	p->flags |= PMC_F_ATTACH_DONE;
	if (pid == getpid())
		p->flags |= PMC_F_ATTACHED_TO_OWNER;
	return 0;
}

/* ------------------------------------------------------------ allocation */

static bool class_rows_disabled(enum pmc_class cls, int cpu)
{
	const struct pmc__class *c = pmc__class_of(cls);
	if (!c)
		return false;
	for (uint32_t k = 0; k < c->num; k++)
		if (!pmc__row_disabled(cpu, c->first_row + (int)k))
			return false;
	return true;
}

static int check_args(enum pmc_mode mode, uint32_t flags, int cpu)
{
	const uint32_t known = PMC_F_DESCENDANTS | PMC_F_LOG_PROCCSW | PMC_F_LOG_PROCEXIT |
			       PMC_F_CALLCHAIN | PMC_F_USERCALLCHAIN;
	if ((unsigned)mode > PMC_MODE_LAST)
		return pmc__fail(EINVAL, "%d is not a PMC mode (PMC_MODE_SS, _SC, _TS, _TC)",
				 (int)mode);
	if (flags & ~known)
		return pmc__fail(EINVAL, "unknown or unsupported flags 0x%x", flags & ~known);
	if (PMC_IS_SYSTEM_MODE(mode) &&
	    (flags & (PMC_F_DESCENDANTS | PMC_F_LOG_PROCCSW | PMC_F_LOG_PROCEXIT)))
		return pmc__fail(EINVAL, "PMC_F_DESCENDANTS, PMC_F_LOG_PROCCSW and "
					 "PMC_F_LOG_PROCEXIT need a process-scope PMC");
	if (PMC_IS_SAMPLING_MODE(mode) && (flags & (PMC_F_LOG_PROCCSW | PMC_F_LOG_PROCEXIT)))
		return pmc__fail(EINVAL, "PMC_F_LOG_PROCCSW and PMC_F_LOG_PROCEXIT need a "
					 "counting PMC");
	if ((flags & PMC_F_USERCALLCHAIN) &&
	    (!(flags & PMC_F_CALLCHAIN) || !PMC_IS_SAMPLING_MODE(mode)))
		return pmc__fail(EINVAL, "PMC_F_USERCALLCHAIN needs a sampling PMC with "
					 "PMC_F_CALLCHAIN");
	if (PMC_IS_VIRTUAL_MODE(mode) && cpu != PMC_CPU_ANY)
		return pmc__fail(EINVAL, "a process-scope PMC takes PMC_CPU_ANY, not CPU %d", cpu);
	if (PMC_IS_SYSTEM_MODE(mode)) {
		if (cpu == PMC_CPU_ANY || cpu < 0 || cpu >= pmc__m.ncpu)
			return pmc__fail(EINVAL, "a system-scope PMC needs a CPU from 0 to %d", 
					 pmc__m.ncpu - 1);
		if (!pmc__cpu_online(cpu))
			return pmc__fail(ENXIO, "CPU %d is offline", cpu);
	}
	return 0;
}

/* Can the event be opened as P will open it?  System-scope PMCs are
 * opened here (counting) or tried (sampling): that is where the
 * privilege shows. */
static int probe(struct pmc__pmc *p)
{
	char what[PMC_NAME_MAX + 32];
	snprintf(what, sizeof(what), "'%s': cannot count it", p->ev.name);
	if (PMC_IS_VIRTUAL_MODE(p->mode)) {
		int err = hwc_event_probe(p->ev.spec, NULL);
		return err ? pmc__fail_hwc(err, what) : 0;
	}
	struct hwc_target tgt = {.kind = HWC_TARGET_CPUS, .cpus = &p->cpu, .ncpus = 1};
	hwc_counters *c;
	int err = hwc_counters_open(&c, p->ev.list, &tgt);
	if (err)
		return pmc__fail_hwc(err, what);
	if (p->mode == PMC_MODE_SC)
		p->sys = c;
	else
		hwc_counters_close(c);
	return 0;
}

PMC_EXPORT int pmc_allocate(const char *ctrspec, enum pmc_mode mode, uint32_t flags, int cpu,
			    pmc_id_t *pmcid, uint64_t count)
{
	pmc__call();
	if (!pmc__initialized)
		return pmc__fail(ENXIO, "pmc_init() has not succeeded");
	if (!pmcid)
		return pmc__fail(EFAULT, "pmcid is NULL");
	if (check_args(mode, flags, cpu))
		return -1;
	struct pmc__event ev;
	if (pmc__resolve(ctrspec, &ev))
		return -1;
	if (PMC_IS_SAMPLING_MODE(mode) && !ev.can_sample) {
		pmc__event_free(&ev);
		return pmc__fail(EOPNOTSUPP, "'%s' (class %s) raises no interrupt to sample with; "
					     "count it instead",
				 ev.name, pmc_name_of_class(ev.cls));
	}
	for (int c = PMC_IS_SYSTEM_MODE(mode) ? cpu : 0;
	     c < (PMC_IS_SYSTEM_MODE(mode) ? cpu + 1 : pmc__m.ncpu); c++)
		if (class_rows_disabled(ev.cls, c)) {
			pmc__event_free(&ev);
			return pmc__fail(ENXIO, "every %s PMC of CPU %d is administratively "
						"disabled (pmccontrol -l)",
					 pmc_name_of_class(ev.cls), c);
		}
	pthread_mutex_lock(&pmc__lock);
	size_t slot = 0;
	while (slot < PMC__MAX && pmc__pmcs[slot].used)
		slot++;
	if (slot == PMC__MAX) {
		pmc__event_free(&ev);
		return unlock_ret(pmc__fail(EINVAL, "this process has %d PMCs: no more", PMC__MAX));
	}
	struct pmc__pmc *p = &pmc__pmcs[slot];
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->flags = flags;
	p->cpu = PMC_IS_SYSTEM_MODE(mode) ? cpu : -1;
	p->ev = ev;
	p->state = PMC_STATE_ALLOCATED;
	if (PMC_IS_SAMPLING_MODE(mode) || (flags & (PMC_F_LOG_PROCCSW | PMC_F_LOG_PROCEXIT)))
		p->flags |= PMC_F_NEEDS_LOGFILE;
	p->count = count;
	if (PMC_IS_SAMPLING_MODE(mode) && count < (uint64_t)pmc__tun.mincount)
		p->count = (uint64_t)pmc__tun.mincount;
	if (probe(p)) {
		int e = errno;
		pmc__event_free(&p->ev);
		errno = e;
		return unlock_ret(-1);
	}
	p->id = PMC_ID_MAKE_ID(PMC_IS_SYSTEM_MODE(mode) ? cpu : PMC_CPU_ANY, mode, ev.cls, slot);
	p->used = true;
	pmc__log_pmc(p, PMCLOG_TYPE_PMCALLOCATE, -1);
	*pmcid = p->id;
	return unlock_ret(0);
}

static void stop_pmc(struct pmc__pmc *p)
{
	if (p->sys)
		hwc_counters_stop(p->sys);
	close_sampler(&p->ss);
	for (size_t i = 0; i < p->nt; i++) {
		if (p->t[i].c)
			hwc_counters_stop(p->t[i].c);
		close_sampler(&p->t[i].s);
	}
	if (p->state == PMC_STATE_RUNNING)
		p->state = PMC_STATE_STOPPED;
}

/* Are all of P's targets gone (or has it none left)? */
static bool targets_exited(const struct pmc__pmc *p)
{
	for (size_t i = 0; i < p->nt; i++)
		if (!p->t[i].exited)
			return false;
	return true;
}

static void free_pmc(struct pmc__pmc *p)
{
	stop_pmc(p);
	/* Releasing unlinks the targets left: hwpmc's SIGIO. */
	if (p->nt && !targets_exited(p))
		pmc__targets_gone(p);
	for (size_t i = 0; i < p->nt; i++) {
		hwc_counters_close(p->t[i].c);
		pmc__unwatch_target(&p->t[i]);
	}
	free(p->t);
	hwc_counters_close(p->sys);
	pmc__event_free(&p->ev);
	memset(p, 0, sizeof(*p));
}

PMC_EXPORT int pmc_release(pmc_id_t pmc)
{
	pmc__call();
	struct pmc__pmc *p = lock_find(pmc);
	if (!p)
		return -1;
	free_pmc(p);
	return unlock_ret(0);
}
/* ------------------------------------------------------------ attach */

/* Lock, find process-scope PMC ID, and make *PID a process id (0: the
 * caller); on failure unlock and return NULL. */
static struct pmc__pmc *process_pmc(pmc_id_t id, pid_t *pid)
{
	struct pmc__pmc *p = lock_find(id);
	if (!p)
		return NULL;
	if (PMC_IS_SYSTEM_MODE(p->mode))
		pmc__fail(EINVAL, "a system-scope PMC attaches to no process");
	else if (*pid < 0)
		pmc__fail(EINVAL, "%d is not a process id", (int)*pid);
	else {
		if (*pid == 0)
			*pid = getpid();
		return p;
	}
	unlock_ret(-1);
	return NULL;
}

PMC_EXPORT int pmc_attach(pmc_id_t pmcid, pid_t pid)
{
	pmc__call();
	struct pmc__pmc *p = process_pmc(pmcid, &pid);
	if (!p)
		return -1;
	if (p->state == PMC_STATE_RUNNING)
		return unlock_ret(pmc__fail(EBUSY, "the PMC is running: stop it to attach it"));
	if (p->msr)
		return unlock_ret(pmc__fail(EPERM, "the PMC's counter was handed out by "
						   "pmc_get_msr(): it stays with its owner"));
	if (!pid_exists(pid))
		return unlock_ret(pmc__fail(ESRCH, "no process %d", (int)pid));
	if (target_of(p, pid))
		return unlock_ret(pmc__fail(EEXIST, "the PMC is already attached to process %d",
					    (int)pid));
	return unlock_ret(attach(p, pid));
}

PMC_EXPORT int pmc_detach(pmc_id_t pmcid, pid_t pid)
{
	pmc__call();
	struct pmc__pmc *p = process_pmc(pmcid, &pid);
	if (!p)
		return -1;
	/* A process that exited was detached then, as hwpmc does at exit. */
	if (!pid_exists(pid))
		return unlock_ret(pmc__fail(ESRCH, "no process %d", (int)pid));
	if (!target_of(p, pid)) {
		bool monitored = false;
		for (size_t i = 0; i < PMC__MAX && !monitored; i++)
			monitored = pmc__pmcs[i].used && target_of(&pmc__pmcs[i], pid);
		if (!monitored)
			return unlock_ret(pmc__fail(ESRCH, "process %d is not monitored", (int)pid));
		return unlock_ret(pmc__fail(EINVAL, "the PMC is not attached to process %d",
					    (int)pid));
	}
	/* A process named to pmc_attach() takes its descendants with it. */
	for (size_t i = p->nt; i-- > 0;)
		if (p->t[i].pid == pid || (p->t[i].root == pid && p->t[i].pid != pid))
			remove_target(p, i);
	if (pid == getpid())
		p->flags &= ~PMC_F_ATTACHED_TO_OWNER;
	if (targets_exited(p))
		pmc__targets_gone(p);
	return unlock_ret(0);
}

/* ------------------------------------------------------------ start, stop */

static int start_pmc(struct pmc__pmc *p)
{
	if ((p->flags & PMC_F_NEEDS_LOGFILE) && !pmc__have_log())
		return pmc__fail(EDOOFUS, "the PMC writes to the log, and no log is configured "
					  "(pmc_configure_logfile())");
	if (PMC_IS_SYSTEM_MODE(p->mode)) {
		if (!pmc__cpu_online(p->cpu))
			return pmc__fail(ENXIO, "CPU %d is offline", p->cpu);
		if (p->mode == PMC_MODE_SC) {
			int err = hwc_counters_start(p->sys);
			return err ? pmc__fail_hwc(err, "cannot start") : 0;
		}
		struct hwc_target tgt = {.kind = HWC_TARGET_CPUS, .cpus = &p->cpu, .ncpus = 1};
		return open_sampler(p, &tgt, &p->ss);
	}
	if (p->nt == 0) {
		if (p->flags & PMC_F_ATTACH_DONE)
			return pmc__fail(ESRCH, "the PMC was detached from all its targets");
		if (attach(p, getpid()))
			return -1;
	}
	size_t started = 0;
	for (size_t i = 0; i < p->nt; i++, started++) {
		struct pmc__target *t = &p->t[i];
		if (t->c) {
			int err = hwc_counters_start(t->c);
			if (err) {
				pmc__fail_hwc(err, "cannot start");
				break;
			}
		}
		if (PMC_IS_SAMPLING_MODE(p->mode) || (p->flags & PMC_F_NEEDS_LOGFILE)) {
			struct hwc_target tgt = {.kind = HWC_TARGET_PROCESS, .pid = t->pid,
						 .flags = target_flags(p)};
			if (open_sampler(p, &tgt, &t->s)) {
				/* A target that exited before the start samples nothing. */
				if (errno == ESRCH && p->nt > 1)
					continue;
				break;
			}
		}
	}
	if (started < p->nt) {
		int e = errno;
		stop_pmc(p);
		errno = e;
		return -1;
	}
	return 0;
}

PMC_EXPORT int pmc_start(pmc_id_t pmc)
{
	pmc__call();
	struct pmc__pmc *p = lock_find(pmc);
	if (!p)
		return -1;
	if (p->state == PMC_STATE_RUNNING)
		return unlock_ret(0);
	if (start_pmc(p))
		return unlock_ret(-1);
	p->state = PMC_STATE_RUNNING;
	return unlock_ret(0);
}

PMC_EXPORT int pmc_stop(pmc_id_t pmc)
{
	pmc__call();
	struct pmc__pmc *p = lock_find(pmc);
	if (!p)
		return -1;
	if (p->state == PMC_STATE_ALLOCATED)
		return unlock_ret(pmc__fail(EINVAL, "the PMC was never started"));
	stop_pmc(p);
	return unlock_ret(0);
}

void pmc__stop_logging_pmcs(void)
{
	for (size_t i = 0; i < PMC__MAX; i++)
		if (pmc__pmcs[i].used && (pmc__pmcs[i].flags & PMC_F_NEEDS_LOGFILE) &&
		    pmc__pmcs[i].state == PMC_STATE_RUNNING)
			stop_pmc(&pmc__pmcs[i]);
}

/* ------------------------------------------------------------ values */

static int value_of(struct pmc__pmc *p, pmc_value_t *out)
{
	uint64_t raw = p->saved;
	if (p->sys) {
		struct pmc__target t = {.c = p->sys};
		raw += target_count(p, &t);
	}
	for (size_t i = 0; i < p->nt; i++)
		raw += target_count(p, &p->t[i]);
	*out = p->count + raw / p->ev.divisor;
	return 0;
}

/* Make the targets' current counts the new zero and the value V. */
static void set_value(struct pmc__pmc *p, pmc_value_t v)
{
	if (p->sys)
		hwc_counters_reset(p->sys);
	for (size_t i = 0; i < p->nt; i++)
		if (p->t[i].c)
			hwc_counters_reset(p->t[i].c);
	p->saved = 0;
	p->count = v;
}

static struct pmc__pmc *counting(pmc_id_t id)
{
	struct pmc__pmc *p = lock_find(id);
	if (p && !PMC_IS_COUNTING_MODE(p->mode)) {
		pmc__fail(EINVAL, "a sampling PMC has no value to read or write");
		pthread_mutex_unlock(&pmc__lock);
		return NULL;
	}
	return p;
}

PMC_EXPORT int pmc_read(pmc_id_t pmc, pmc_value_t *value)
{
	pmc__call();
	if (!value)
		return pmc__fail(EFAULT, "value is NULL");
	struct pmc__pmc *p = counting(pmc);
	if (!p)
		return -1;
	return unlock_ret(value_of(p, value));
}

PMC_EXPORT int pmc_rw(pmc_id_t pmc, pmc_value_t newvalue, pmc_value_t *oldvaluep)
{
	pmc__call();
	struct pmc__pmc *p = counting(pmc);
	if (!p)
		return -1;
	if (p->state == PMC_STATE_RUNNING)
		return unlock_ret(pmc__fail(EBUSY, "the PMC is running: stop it to write it"));
	pmc_value_t old;
	value_of(p, &old);
	set_value(p, newvalue);
	if (oldvaluep)
		*oldvaluep = old;
	return unlock_ret(0);
}

PMC_EXPORT int pmc_write(pmc_id_t pmc, pmc_value_t value)
{
	return pmc_rw(pmc, value, NULL);
}

PMC_EXPORT int pmc_set(pmc_id_t pmc, pmc_value_t value)
{
	pmc__call();
	struct pmc__pmc *p = lock_find(pmc);
	if (!p)
		return -1;
	if (p->state == PMC_STATE_RUNNING)
		return unlock_ret(pmc__fail(EBUSY, "the PMC is running: stop it to set its count"));
	if (PMC_IS_COUNTING_MODE(p->mode))
		set_value(p, value);
	else
		p->count = value < (pmc_value_t)pmc__tun.mincount ? (pmc_value_t)pmc__tun.mincount
								 : value;
	return unlock_ret(0);
}

/* ------------------------------------------------------------ queries */

/* The capabilities (or WIDTH: the counter width) of the class of PMC. */
static int class_query(pmc_id_t pmc, uint32_t *out, bool width)
{
	pmc__call();
	if (!out)
		return pmc__fail(EFAULT, "a NULL pointer to store into");
	struct pmc__pmc *p = lock_find(pmc);
	if (!p)
		return -1;
	const struct pmc__class *c = pmc__class_of(p->ev.cls);
	if (width)
		*out = c ? c->width : 64;
	else
		*out = (c ? c->caps : PMC_CAP_READ | PMC_CAP_WRITE | PMC_CAP_USER | PMC_CAP_SYSTEM) &
		       ~(uint32_t)(p->ev.can_sample ? 0 : PMC_CAP_INTERRUPT);
	return unlock_ret(0);
}

PMC_EXPORT int pmc_capabilities(pmc_id_t pmc, uint32_t *caps)
{
	return class_query(pmc, caps, false);
}

PMC_EXPORT int pmc_width(pmc_id_t pmc, uint32_t *width)
{
	return class_query(pmc, width, true);
}

/* x86 RDPMC: the PMC then counts the calling thread on a counter of its
 * own, which is what Linux lets a thread read without a system call. */
PMC_EXPORT int pmc_get_msr(pmc_id_t pmc, uint32_t *msr)
{
	pmc__call();
	if (!msr)
		return pmc__fail(EFAULT, "msr is NULL");
	struct pmc__pmc *p = lock_find(pmc);
	if (!p)
		return -1;
	if (p->mode != PMC_MODE_TC)
		return unlock_ret(pmc__fail(EINVAL, "only a process-scope counting PMC has a "
						    "counter to read with RDPMC"));
	if (p->flags & PMC_F_DESCENDANTS)
		return unlock_ret(pmc__fail(EINVAL, "the PMC tracks descendants"));
	for (size_t i = 0; i < p->nt; i++)
		if (p->t[i].pid != getpid())
			return unlock_ret(pmc__fail(EINVAL, "the PMC is attached to process %d, "
							    "not only to its owner",
						    (int)p->t[i].pid));
	if (p->state == PMC_STATE_RUNNING)
		return unlock_ret(pmc__fail(EBUSY, "the PMC is running: stop it first"));
	struct hwc_target self = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	hwc_counters *c;
	int err = hwc_counters_open(&c, p->ev.list, &self);
	if (err)
		return unlock_ret(pmc__fail_hwc(err, "cannot open the PMC on this thread"));
	const struct perf_event_mmap_page *page = hwc_counters_userpage(c, 0);
	if (hwc_evlist_size(p->ev.list) != 1 || !page || !page->cap_user_rdpmc || !page->index) {
		hwc_counters_close(c);
		return unlock_ret(pmc__fail(ENOSYS, "'%s' is not on a counter RDPMC can read "
						    "(software events, no hardware PMU, or "
						    "/sys/bus/event_source/devices/cpu/rdpmc is 0)",
					    p->ev.name));
	}
	if (!p->t && !(p->t = malloc(sizeof(*p->t)))) {
		hwc_counters_close(c);
		return unlock_ret(pmc__fail(ENOMEM, "out of memory"));
	}
	if (!p->cap_t)
		p->cap_t = 1;
	*msr = page->index - 1;
	pmc_value_t now;
	value_of(p, &now);
	while (p->nt)
		remove_target(p, p->nt - 1);
	p->t[p->nt++] = (struct pmc__target){getpid(), getpid(), c, NULL, -1, false};
	set_value(p, now);
	p->flags |= PMC_F_ATTACH_DONE | PMC_F_ATTACHED_TO_OWNER;
	p->msr = true;
	return unlock_ret(0);
}
