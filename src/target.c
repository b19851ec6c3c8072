/* What counting and sampling share about targets: running a command that
 * waits for its events before it execs, finding every thread of a process
 * (rescanning for threads created meanwhile), validating CPU lists, and the
 * retry in user space only when kernel profiling is denied. */
#include "internal.h"
#include "arch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

void hwc__child_init(struct hwc__child *ch)
{
	ch->pid = -1;
	ch->pidfd = -1;
	ch->started = false;
	ch->stack = NULL;
}

/* What the child reads, at the bottom of its stack.  Two futex words in
 * the memory it shares with the caller stand for the pipe a fork would
 * need: making and freeing a pipe's inode cost hwc stat ~0.03 ms (issue
 * 13). */
enum { CHILD_WAIT, CHILD_EXEC, CHILD_QUIT };
struct spawn_args {
	uint32_t go;    /* CHILD_WAIT until the caller says CHILD_EXEC or CHILD_QUIT */
	uint32_t alive; /* 1 until the child's exec or exit: the kernel clears it
			 * and wakes its waiter there (CLONE_CHILD_CLEARTID) with
			 * a shared futex wake, so no word is waited on or woken
			 * with FUTEX_PRIVATE_FLAG, whose key would differ */
	int err;        /* the exec's errno when it failed, else 0 */
	bool reset_handlers; /* clone() made the child: it resets the caller's
			      * handlers itself (clone3's CLONE_CLEAR_SIGHAND
			      * has the kernel do it, without ~60 sigactions) */
	pid_t parent;   /* the caller's process: the child quits once it is gone */
	char **argv;    /* a copy: the caller's may go before the release */
};

#ifndef SYS_faccessat2
#define SYS_faccessat2 439 /* Linux 5.8, numbered alike on x86-64 and arm64 */
#endif

/* The first DIR/FILE along PATH that this process may execute (access(2)
 * X_OK), as execvp(3) tries them; NULL when FILE has a slash, when none
 * is found, or at a candidate longer than BUF or an error on which execvp
 * would stop (ELOOP, EIO...): execvp then searches itself.  A directory or
 * a script without #! passes access() but not execve(), and execvp's
 * search after it gives the same result as ever.  Without errno, which is
 * the running caller's (hwc__syscall4_raw). */
__attribute__((no_sanitize("address", "undefined"))) static const char *
find_in_path(const char *file, char *buf, size_t size)
{
	const char *dirs = getenv("PATH");
	if (!dirs || !*file || strchr(file, '/'))
		return NULL;
	size_t flen = strlen(file);
	for (const char *d = dirs;; d++) {
		size_t dlen = strcspn(d, ":");
		if (dlen + 1 + flen >= size)
			return NULL;
		/* an empty entry is the current directory, as for execvp */
		memcpy(buf, d, dlen);
		buf[dlen] = '/';
		memcpy(buf + (dlen ? dlen + 1 : 0), file, flen + 1);
		long err = hwc__syscall4_raw(SYS_faccessat2, AT_FDCWD, (long)buf, X_OK, AT_EACCESS);
		if (err == 0)
			return buf;
		/* those on which execvp goes on to the next directory */
		if (err != -EACCES && err != -ENOENT && err != -ESTALE && err != -ENOTDIR &&
		    err != -ENODEV && err != -ETIMEDOUT)
			return NULL; /* ELOOP, EIO..., or no faccessat2 (before Linux 5.8) */
		d += dlen;
		if (!*d)
			return NULL;
	}
}

/* The child: it shares the caller's memory (CLONE_VM, as posix_spawn's
 * child does), so it runs on a stack of its own, calls nothing that locks
 * or allocates, and no handler of the caller's may run in it: it starts
 * with every signal blocked, and each handled signal is the default before
 * the mask opens (made so by clone3, or here after clone()).  Its errno is
 * the caller's thread's, which hwc__child_release expects.  No
 * instrumentation: ASan's per-thread state is the caller's too. */
__attribute__((no_sanitize("address", "undefined"))) static int child_main(void *arg)
{
	struct spawn_args *a = arg;
	/* Meanwhile the caller opens the events. */
	struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
	for (int sig = 1; a->reset_handlers && sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || (sig > SIGSYS && sig < SIGRTMIN))
			continue; /* not to be changed, or glibc's own */
		if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_DFL &&
		    old.sa_handler != SIG_IGN)
			sigaction(sig, &dfl, NULL);
	}
	/* While the caller opens the events: where execvp will find the
	 * command, so that the release costs one execve rather than one per
	 * directory of PATH before the command's (issue 13). */
	char found[4096];
	const char *path = find_in_path(a->argv[0], found, sizeof(found));
	/* A caller killed before its release never says: the child looks
	 * every 0.1 s whether it still has its parent. */
	const struct timespec tick = {0, 100 * 1000 * 1000};
	uint32_t go;
	while ((go = __atomic_load_n(&a->go, __ATOMIC_ACQUIRE)) == CHILD_WAIT) {
		if (hwc__futex_raw(&a->go, FUTEX_WAIT, CHILD_WAIT, &tick) == -ETIMEDOUT &&
		    getppid() != a->parent)
			_exit(127);
	}
	if (go != CHILD_EXEC)
		_exit(127); /* discarded */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (path)
		execve(path, a->argv, environ);
	execvp(a->argv[0], a->argv); /* its own search, errors and scripts */
	a->err = errno; /* read by the caller once the exit cleared a->alive */
	_exit(127);
}

int hwc__child_spawn(struct hwc__child *ch, char *const *argv)
{
	if (!argv || !argv[0])
		return hwc__fail(-EINVAL, "no command to run");
	/* The child's stack: room for execvp's path buffer and a script's
	 * argument vector, above the copy of ARGV at its bottom.  From the
	 * heap: a mapping of its own cost hwc stat an mmap, an munmap (a TLB
	 * flush once the child ran on another CPU) and a page fault more
	 * (issue 13). */
	size_t argc = 0, strings = 0;
	for (; argv[argc]; argc++)
		strings += strlen(argv[argc]) + 1;
	size_t size = sizeof(struct spawn_args) + (argc + 1) * sizeof(char *) + strings;
	size = (size + 2 * (argc + 2) * sizeof(char *) + 64 * 1024 + 15) & ~(size_t)15;
	char *stack = malloc(size);
	if (!stack)
		return hwc__fail(-ENOMEM, "out of memory");
	struct spawn_args *a = (struct spawn_args *)stack;
	a->argv = (char **)(a + 1);
	char *text = (char *)(a->argv + argc + 1);
	for (size_t i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;
		a->argv[i] = memcpy(text, argv[i], n);
		text += n;
	}
	a->argv[argc] = NULL;
	a->go = CHILD_WAIT;
	a->alive = 1;
	a->err = 0;
	a->parent = getpid();
	/* Not a fork: copying the caller's page tables, faulting its pages
	 * copied on write and dropping the copy at the exec cost hwc stat
	 * ~0.15 ms of CPU (issue 13).  Every signal is blocked until the
	 * exec, and the child starts with the caller's handlers made the
	 * default.  clone3 also gives the pidfd that hwc_counters_wait_fd()
	 * and the sampler wait on, saving a pidfd_open. */
	sigset_t all, mask;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mask);
	struct clone_args args = {
		.flags = CLONE_VM | CLONE_CHILD_CLEARTID | CLONE_CLEAR_SIGHAND | CLONE_PIDFD,
		.pidfd = (uintptr_t)&ch->pidfd,
		.child_tid = (uintptr_t)&a->alive,
		.exit_signal = SIGCHLD,
		.stack = (uintptr_t)stack,
		/* the top 16-byte aligned, as the ABI wants at the child's call,
		 * whatever malloc's alignment */
		.stack_size = (((uintptr_t)stack + size) & ~(uintptr_t)15) - (uintptr_t)stack,
	};
	a->reset_handlers = false;
	long pid = hwc__clone3_raw(&args, child_main, a);
	/* Before Linux 5.5 (no clone3, or no CLONE_CLEAR_SIGHAND), or a
	 * sandbox that forbids clone3: clone(), as before. */
	if (pid == -ENOSYS || pid == -EINVAL || pid == -EPERM) {
		ch->pidfd = -1;
		a->reset_handlers = true;
		pid = clone(child_main, stack + size, CLONE_VM | CLONE_CHILD_CLEARTID | SIGCHLD, a,
			    NULL, NULL, &a->alive);
		if (pid < 0)
			pid = -errno;
	}
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (pid < 0) {
		ch->pidfd = -1;
		free(stack);
		return hwc__fail((int)pid, "cannot start a process: %s", strerror((int)-pid));
	}
	snprintf(ch->name, sizeof(ch->name), "%s", argv[0]);
	ch->pid = (pid_t)pid;
	ch->stack = stack;
	return 0;
}

int hwc__child_take_pidfd(struct hwc__child *ch)
{
	int fd = ch->pidfd;
	ch->pidfd = -1;
	return fd;
}

/* A pidfd nobody took. */
static void close_pidfd(struct hwc__child *ch)
{
	if (ch->pidfd >= 0)
		close(ch->pidfd);
	ch->pidfd = -1;
}

/* The child's stack, once it exec'd or ended. */
static void free_stack(struct hwc__child *ch)
{
	if (ch->stack)
		free(ch->stack);
	ch->stack = NULL;
}

int hwc__child_reap(struct hwc__child *ch, int *status)
{
	int st = 0;
	pid_t r;
	while ((r = waitpid(ch->pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (status)
		*status = st;
	ch->pid = -1;
	close_pidfd(ch);
	return r < 0 ? -ECHILD : 0;
}

/* Tell a waiting child what to do: CHILD_EXEC or CHILD_QUIT. */
static void child_tell(struct hwc__child *ch, uint32_t what)
{
	struct spawn_args *a = ch->stack;
	__atomic_store_n(&a->go, what, __ATOMIC_RELEASE);
	hwc__futex_raw(&a->go, FUTEX_WAKE, 1, NULL);
}

int hwc__child_release(struct hwc__child *ch)
{
	ch->started = true;
	/* From the release to its exec the child's errno is this thread's
	 * (CLONE_VM): this thread's errno is kept, no handler runs on it
	 * meanwhile (signals wait until the exec, as posix_spawn's caller's
	 * do), and the wait below never looks at errno. */
	int saved_errno = errno;
	sigset_t all, mask;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mask);
	child_tell(ch, CHILD_EXEC);
	struct spawn_args *a = ch->stack;
	for (uint32_t alive; (alive = __atomic_load_n(&a->alive, __ATOMIC_ACQUIRE));)
		hwc__futex_raw(&a->alive, FUTEX_WAIT, alive, NULL);
	int child_errno = a->err;
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	errno = saved_errno;
	if (!child_errno) {
		free_stack(ch);
		return 0;
	}
	hwc__child_reap(ch, NULL);
	free_stack(ch);
	return hwc__fail(-child_errno, "cannot execute '%s': %s%s", ch->name, strerror(child_errno),
			 child_errno == ENOENT && !strchr(ch->name, '/') ? " (not found in PATH)" : "");
}

void hwc__child_discard(struct hwc__child *ch)
{
	if (ch->pid > 0 && !ch->started) {
		child_tell(ch, CHILD_QUIT);
		hwc__child_reap(ch, NULL);
		free_stack(ch);
	}
	close_pidfd(ch);
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

int hwc__pidfd_open(pid_t pid, bool thread)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, thread ? PIDFD_THREAD : 0);
	/* Before Linux 6.9 a pidfd names a whole process: a thread that leads
	 * its process is watched as the process, any other cannot be. */
	if (fd < 0 && thread && errno == EINVAL)
		fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 && thread && errno == EINVAL)
		return -EOPNOTSUPP;
	return fd < 0 ? -errno : fd;
}

/* The online CPUs, read once and sized from the machine: *N of them in
 * *CPUS (malloc'ed). */
static int online_cpus(int **cpus, size_t *n)
{
	*cpus = NULL;
	*n = 0;
	for (;;) {
		int k = hwc_online_cpus(*cpus, *n);
		if (k < 0)
			return k;
		if ((size_t)k <= *n) { /* it fit: a CPU may have gone offline meanwhile */
			*n = (size_t)k;
			return 0;
		}
		free(*cpus);
		if (!(*cpus = malloc((size_t)k * sizeof(**cpus))))
			return hwc__fail(-ENOMEM, "out of memory");
		*n = (size_t)k;
	}
}

int hwc__target_cpus(const struct hwc_target *t, int **out, size_t *n)
{
	int *online;
	size_t nonline;
	*out = NULL;
	*n = 0;
	int err = online_cpus(&online, &nonline);
	if (err)
		return err;
	if (nonline == 0 || (t->cpus && t->ncpus == 0)) {
		free(online);
		return hwc__fail(-EINVAL, "no CPUs to count on");
	}
	if (!t->cpus) { /* all of them */
		*out = online;
		*n = nonline;
		return 0;
	}
	for (size_t i = 0; i < t->ncpus; i++) {
		bool ok = false;
		for (size_t k = 0; k < nonline; k++)
			ok |= online[k] == t->cpus[i];
		if (!ok) {
			err = hwc__fail(-EINVAL, "CPU %d is out of range: the online CPUs are %d-%d "
						 "(%zu CPUs; see /sys/devices/system/cpu/online)",
					t->cpus[i], online[0], online[nonline - 1], nonline);
			free(online);
			return err;
		}
	}
	free(online);
	*out = malloc(t->ncpus * sizeof(**out));
	if (!*out)
		return hwc__fail(-ENOMEM, "out of memory");
	memcpy(*out, t->cpus, t->ncpus * sizeof(**out));
	*n = t->ncpus;
	return 0;
}

struct seen {
	pid_t *tid;
	size_t n, cap;
};

static bool seen_has(const struct seen *s, pid_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->tid[i] == tid)
			return true;
	return false;
}

static int seen_add(struct seen *s, pid_t tid)
{
	int err = hwc__reserve(&s->tid, &s->cap, s->n + 1, sizeof(*s->tid));
	if (!err)
		s->tid[s->n++] = tid;
	return err;
}

int hwc__each_thread(pid_t pid, int (*open_tid)(void *arg, pid_t tid), void *arg)
{
	char path[64];
	struct seen seen = {0};
	size_t opened = 0;
	int err = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (int pass = 0; pass < 100 && !err; pass++) {
		DIR *d = opendir(path);
		if (!d)
			break; /* exited; keep what we have */
		bool added = false;
		struct dirent *de;
		while (!err && (de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid <= 0 || seen_has(&seen, tid))
				continue;
			if ((err = seen_add(&seen, tid)))
				break;
			err = open_tid(arg, tid);
			if (err == -ESRCH) { /* the thread exited meanwhile */
				err = 0;
				continue;
			}
			opened += !err;
			added = !err;
		}
		closedir(d);
		if (!added)
			break;
	}
	free(seen.tid);
	if (!err && opened == 0)
		err = hwc__fail(-ESRCH, "no process with pid %d", (int)pid);
	return err;
}

pid_t hwc__tgid_of(pid_t tid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int tgid = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* ---------------------------------------------------------------- events */

int hwc__events_add(struct hwc__events *s, const struct hwc_event *pub, size_t leader,
		    size_t group_size)
{
	if (group_size > HWC__MAX_GROUP)
		return hwc__fail(-E2BIG, "the group led by '%s' has %zu events: a group holds at "
					 "most %d; split it",
				 pub->name, group_size, HWC__MAX_GROUP);
	int err = hwc__reserve(&s->e, &s->cap, s->n + 1, sizeof(*s->e));
	if (err)
		return err;
	struct hwc__ev *ev = hwc__ev_dup(pub);
	if (!ev)
		return hwc__fail(-ENOMEM, "out of memory");
	size_t pos = 0;
	if (!group_size) { /* a member: last in its group's order */
		size_t *link = &s->e[leader].next;
		for (pos = 1; *link != HWC__NO_EVENT; pos++)
			link = &s->e[*link].next;
		*link = s->n;
	}
	s->e[s->n++] = (struct hwc__opened){.ev = ev, .leader = leader, .group_size = group_size,
					    .next = HWC__NO_EVENT, .pos = pos, .cgroup_fd = -1};
	return 0;
}

int hwc__events_add_list(struct hwc__events *s, const hwc_evlist *list)
{
	size_t leader = s->n;
	for (size_t i = 0; i < hwc_evlist_size(list); i++) {
		size_t gs = hwc__group_size(list, i);
		if (gs)
			leader = s->n;
		int err = hwc__events_add(s, hwc_evlist_event(list, i), leader, gs);
		if (err)
			return err;
	}
	return 0;
}

void hwc__events_free(struct hwc__events *s)
{
	for (size_t i = 0; i < s->n; i++) {
		hwc__ev_free(s->e[i].ev);
		free(s->e[i].ids);
		if (s->e[i].cgroup_fd >= 0)
			close(s->e[i].cgroup_fd);
	}
	free(s->e);
	*s = (struct hwc__events){0};
}

bool hwc__group_in_place(const struct hwc__events *s, size_t g)
{
	for (size_t k = g; k != HWC__NO_EVENT; k = s->e[k].next)
		if (k != g + s->e[k].pos)
			return false;
	return true;
}

/* The slots event that leads a topdown group (not uops_retired.slots)? */
static bool names_slots(const char *name)
{
	return strcasestr(name, "slots") && !strcasestr(name, "uops_retired.slots");
}

bool hwc__must_stay_grouped(const struct hwc_event *ev, bool perf_metrics)
{
	return perf_metrics && ev->attr.type == PERF_TYPE_RAW &&
	       (strcasestr(ev->name, "topdown") || names_slots(ev->name));
}

void hwc__split_weak_group(struct hwc__events *s, size_t leader, bool perf_metrics)
{
	size_t keep[HWC__MAX_GROUP], nkeep = 0, lead = HWC__NO_EVENT;
	for (size_t k = leader, next; k != HWC__NO_EVENT; k = next) {
		struct hwc__opened *m = &s->e[k];
		next = m->next;
		m->leader = k;
		m->group_size = 1;
		m->next = HWC__NO_EVENT;
		m->pos = 0;
		m->ungrouped = m->refused = true;
		if (hwc__must_stay_grouped(&m->ev->pub, perf_metrics)) {
			keep[nkeep++] = k;
			if (lead == HWC__NO_EVENT && names_slots(m->ev->pub.name))
				lead = k;
		}
	}
	if (nkeep < 2)
		return;
	/* keep[] is in group order, which is index order: the group was as
	 * written (it is split once) */
	if (lead == HWC__NO_EVENT)
		lead = keep[0];
	s->e[lead].group_size = nkeep;
	size_t *link = &s->e[lead].next, pos = 1;
	for (size_t i = 0; i < nkeep; i++) {
		struct hwc__opened *m = &s->e[keep[i]];
		m->ungrouped = false;
		if (keep[i] == lead)
			continue;
		m->leader = lead;
		m->group_size = 0;
		m->pos = pos++;
		*link = keep[i];
		link = &m->next;
	}
}

/* May an open that failed with ERR be retried counting user space only? */
static bool fallback_allowed(const struct hwc_event *ev, unsigned flags, int err)
{
	return (err == -EACCES || err == -EPERM) && !(flags & HWC_NO_FALLBACK) &&
	       !ev->explicit_priv && !ev->attr.exclude_kernel;
}

int hwc__open_event(struct hwc__events *s, size_t e, struct perf_event_attr *attr, pid_t pid,
		    int cpu, int group_fd, unsigned flags, int *fd)
{
	unsigned long how = PERF_FLAG_FD_CLOEXEC;
	if (s->e[e].cgroup_fd >= 0) { /* per CPU, only while a task of the cgroup runs */
		pid = s->e[e].cgroup_fd;
		how |= PERF_FLAG_PID_CGROUP;
	}
	*fd = hwc__perf_event_open(attr, pid, cpu, group_fd, how);
	if (*fd >= 0)
		return 0;
	if ((*fd == -EINVAL || *fd == -EBADF) && group_fd >= 0 && s->e[e].ev->pub.weak &&
	    !s->e[e].refused) {
		/* perf's rule: a member the kernel refuses into its weak group
		 * (more events than counters, or attributes a member may not
		 * have) makes every event of the group a group of its own, but
		 * for those that must be in a group.  What is left of the group
		 * is not split again: a second refusal is the error. */
		hwc__split_weak_group(s, s->e[e].leader, hwc__perf_metrics());
		return HWC__RETRY_UNGROUPED;
	}
	if (!fallback_allowed(&s->e[e].ev->pub, flags, *fd))
		return *fd;
	/* Kernel counting is denied to this user: count user space only, for
	 * every event that did not choose its privilege levels. */
	for (size_t k = 0; k < s->n; k++) {
		struct hwc_event *pub = &s->e[k].ev->pub;
		if (!pub->explicit_priv && !pub->attr.exclude_kernel) {
			pub->attr.exclude_kernel = 1;
			pub->attr.exclude_hv = 1;
			s->e[k].user_only = true;
		}
	}
	return HWC__RETRY_USER_ONLY;
}

int hwc__open_with_fallback(int (*open)(void *arg), void (*close)(void *arg), void *arg,
			    const char *what)
{
	bool user_only = false;
	for (;;) {
		int err = open(arg);
		if (err == HWC__RETRY_USER_ONLY && user_only)
			return hwc__fail(-EACCES, "permission denied even for user-space %s", what);
		if (!hwc__open_again(err))
			return err;
		user_only |= err == HWC__RETRY_USER_ONLY;
		close(arg); /* each retry switched to user-only, or split a group: few */
	}
}

int hwc__ioctl_leaders(const struct hwc__events *s, const int *fd, size_t ninst,
		       unsigned long req)
{
	for (size_t i = 0; i < ninst; i++)
		for (size_t g = 0; g < s->n; g++) {
			int f = fd[i * s->n + g];
			if (s->e[g].group_size && f >= 0 && ioctl(f, req, 0) < 0)
				return hwc__fail(-errno, "ioctl on '%s': %s", s->e[g].ev->name,
						 strerror(errno));
		}
	return 0;
}
