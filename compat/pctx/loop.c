/* The event loop: pctx_run() waits for the tracees' stops, calls the
 * illumos handlers for each (new LWPs, exits, exec, fork) and the tick
 * handler every interval, and resumes every thread it stopped. */
#include "pctx_impl.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The process's arguments, as illumos's pr_psargs: at most 80 bytes. */
static void proc_args(pid_t pid, char *out, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	out[0] = '\0';
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	size_t n = fread(out, 1, size - 1, f);
	fclose(f);
	while (n > 0 && out[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	out[n] = '\0';
}

/* ---------------------------------------------------------------- handlers */

/* Keyboard and termination signals wait while a handler runs, as on illumos. */
static void handlers_begin(pctx_t *p)
{
	if (p->handler_depth++ == 0) {
		sigset_t term;
		sigemptyset(&term);
		sigaddset(&term, SIGHUP);
		sigaddset(&term, SIGINT);
		sigaddset(&term, SIGQUIT);
		sigaddset(&term, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &term, &p->handler_saved);
	}
}

static void handlers_end(pctx_t *p)
{
	if (--p->handler_depth == 0)
		pthread_sigmask(SIG_SETMASK, &p->handler_saved, NULL);
}

static int call_init(pctx_t *p, struct lwp *l)
{
	int rc = 0;
	if (p->init_lwp) {
		handlers_begin(p);
		rc = p->init_lwp(p, p->pid, l->id, p->uarg);
		handlers_end(p);
	}
	l->live = rc == 0;
	return rc;
}

static int call_fini(pctx_t *p, struct lwp *l)
{
	if (!l->live)
		return 0;
	l->live = false;
	int rc = 0;
	if (p->fini_lwp) {
		handlers_begin(p);
		rc = p->fini_lwp(p, p->pid, l->id, p->uarg);
		handlers_end(p);
	}
	return rc;
}

/* Let a stopped L run on with its pending signal (a job-control stop stays
 * stopped, listening), taking the handle's current ptrace options. */
static void resume(pctx_t *p, struct lwp *l)
{
	if (l->state != LWP_STOPPED)
		return;
	if (l->options != p->options && ptrace(PTRACE_SETOPTIONS, l->tid, 0, p->options) == 0)
		l->options = p->options;
	int r;
	if (l->group_stop) {
		r = (int)ptrace(PTRACE_LISTEN, l->tid, 0, 0);
		l->state = LWP_LISTENING;
	} else {
		r = (int)ptrace(PTRACE_CONT, l->tid, 0, l->inject);
		l->inject = 0;
		l->state = LWP_RUNNING;
	}
	(void)r; /* ESRCH: killed meanwhile; its death is reported by waitpid */
}

/* ---------------------------------------------------------------- the loop */

struct run {
	pctx_t *p;
	int running; /* 1 running, 0 done, -1 error */
};

/* The handle a wait status belongs to, or NULL.  A new tracee (thread or
 * child) belongs to the handle of its process or parent. */
static pctx_t *owner_of(pid_t tid, int status)
{
	for (pctx_t *h = pctx__handles; h; h = h->next)
		if (pctx__find_lwp(h, tid))
			return h;
	if (!WIFSTOPPED(status))
		return NULL;
	long tgid = pctx__proc_status_field(tid, "Tgid");
	long ppid = pctx__proc_status_field(tid, "PPid");
	for (pctx_t *h = pctx__handles; h; h = h->next)
		if (h->pid == tgid || h->pid == ppid)
			return h;
	return NULL;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Next wait status for R->p, or 1 at DEADLINE (CLOCK_MONOTONIC ms; -1 for
 * none) or on pctx_terminate(), or -1 when nothing is traced any more.
 * SIGCHLD is blocked and read from SIGFD. */
static int next_status(struct run *r, int sigfd, int64_t deadline, pid_t *tid, int *status)
{
	pctx_t *p = r->p;
	for (;;) {
		if (p->terminate)
			return 1;
		pid_t got = waitpid(-1, status, WNOHANG | __WALL);
		if (got < 0 && errno == ECHILD)
			return -1;
		if (got > 0) {
			pctx_t *h = owner_of(got, *status);
			bool first = WIFSTOPPED(*status) &&
				     ((unsigned)*status >> 16) == PTRACE_EVENT_STOP;
			if (h == p && (pctx__find_lwp(p, got) || !first)) {
				*tid = got;
				return 0;
			}
			if (h)
				/* A new tracee; its creator's event is due. */
				pctx__add_early(h, got, *status);
			else if (WIFSTOPPED(*status))
				ptrace(PTRACE_DETACH, got, 0, 0); /* nobody's: let it go */
			continue;
		}
		/* Nothing now: wait for SIGCHLD, the wake pipe or the deadline.  The
		 * wait is capped so that a SIGCHLD taken by another thread of this
		 * process cannot leave us asleep. */
		int ms = 200;
		if (deadline >= 0) {
			int64_t left = deadline - now_ms();
			if (left <= 0)
				return 1;
			if (left < ms)
				ms = (int)left;
		}
		struct pollfd fds[2] = {{.fd = sigfd, .events = POLLIN},
					{.fd = p->wake[0], .events = POLLIN}};
		if (poll(fds, 2, ms) > 0) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof(si)) > 0)
				;
			char buf[16];
			while (read(p->wake[0], buf, sizeof(buf)) > 0)
				;
		}
	}
}

/* The last thread is exiting (or died): finish the LWPs, then the exit handler. */
static void process_exit(struct run *r, struct lwp *l, int wstatus)
{
	pctx_t *p = r->p;
	for (size_t i = 0; i < p->nlwp; i++)
		if (call_fini(p, &p->lwp[i]) != 0)
			r->running = -1;
	int code = WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus) && p->verbose)
		pctx__report(p, "run", "%d: process terminated by signal %d\n", (int)p->pid,
			     WTERMSIG(wstatus));
	if (p->exit) {
		handlers_begin(p);
		p->exit(p, p->pid, l->id, code, p->uarg);
		handlers_end(p);
	}
	p->exited = true;
	if (r->running == 1)
		r->running = 0;
}

/* L stopped at PTRACE_EVENT_EXIT, or died without that stop (SIGKILL). */
static void lwp_exits(struct run *r, struct lwp *l, int wstatus)
{
	pctx_t *p = r->p;
	l->exiting = true;
	if (pctx__running_threads(p, l) > 0) {
		bool was_live = l->live;
		if (call_fini(p, l) != 0)
			r->running = -1;
		if (was_live && p->lwp_exit) {
			handlers_begin(p);
			if (p->lwp_exit(p, p->pid, l->id, p->uarg) != 0)
				r->running = -1;
			handlers_end(p);
		}
		resume(p, l); /* let it die */
		return;
	}
	/* The process exits; it stays stopped at the exit until pctx_release(). */
	process_exit(r, l, wstatus);
}

static void on_clone(struct run *r, struct lwp *creator, pid_t tid);
static void on_fork(struct run *r, struct lwp *parent, pid_t child);

static void on_exec(struct run *r, struct lwp *l)
{
	pctx_t *p = r->p;
	pid_t former = (pid_t)pctx__geteventmsg(l->tid);
	/* The execing thread finished its other threads: finish their LWPs
	 * and start over with one LWP, 1, whose tid is the process id. */
	for (size_t i = 0; i < p->nlwp; i++)
		(void)call_fini(p, &p->lwp[i]);
	struct lwp keep = *l;
	if (former > 0 && former != l->tid) {
		struct lwp *f = pctx__find_lwp(p, former);
		if (f)
			keep = *f;
	}
	keep.tid = p->pid;
	keep.id = 1;
	keep.live = keep.exiting = false;
	keep.state = LWP_STOPPED;
	p->nlwp = 0;
	p->next_id = 1;
	l = pctx__add_lwp(p, keep.tid, 1);
	*l = keep;
	p->next_id = 2;
	if (!p->exec) {
		r->running = 0; /* nobody asked to follow the exec */
		return;
	}
	char args[81];
	proc_args(p->pid, args, sizeof(args));
	handlers_begin(p);
	int rc = p->exec(p, p->pid, 1, args, p->uarg);
	handlers_end(p);
	if (rc != 0) {
		r->running = -1;
		return;
	}
	if (call_init(p, l) != 0 && p->init_lwp) {
		r->running = -1;
		return;
	}
	resume(p, l);
}

static void handle(struct run *r, pid_t tid, int status)
{
	pctx_t *p = r->p;
	struct lwp *l = pctx__find_lwp(p, tid);
	if (!l && WIFSTOPPED(status)) {
		/* After an exec by a thread whose leader is gone, the execing
		 * thread reports under the process id. */
		if (tid == p->pid && ((unsigned)status >> 16) == PTRACE_EVENT_EXEC)
			l = pctx__find_lwp(p, (pid_t)pctx__geteventmsg(tid));
		if (!l) {
			ptrace(PTRACE_CONT, tid, 0, 0); /* never leave a thread stopped */
			return;
		}
		l->tid = tid;
	}
	if (!l)
		return;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		bool handled = l->exiting;
		l->state = LWP_GONE;
		if (!handled)
			lwp_exits(r, l, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	pctx__note_stop(l, status);
	switch ((unsigned)status >> 16) {
	case PTRACE_EVENT_CLONE: {
		pid_t n = (pid_t)pctx__geteventmsg(tid);
		if (n > 0)
			on_clone(r, l, n);
		break;
	}
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK: {
		pid_t n = (pid_t)pctx__geteventmsg(tid);
		if (n > 0)
			on_fork(r, l, n);
		break;
	}
	case PTRACE_EVENT_EXEC:
		on_exec(r, l);
		return;
	case PTRACE_EVENT_EXIT: {
		long st = pctx__geteventmsg(tid);
		lwp_exits(r, l, st < 0 ? 0 : (int)st);
		return;
	}
	default:
		break;
	}
	l = pctx__find_lwp(p, tid); /* the array may have moved */
	if (l)
		resume(p, l);
}

/* The first stop of a tracee created by another: from the early list, or
 * waited for now (the kernel always reports it).  False if it died. */
static bool first_stop(pctx_t *p, pid_t tid)
{
	int st;
	if (!pctx__take_early(p, tid, &st) && pctx__wait_tid(tid, &st) < 0)
		return false;
	return WIFSTOPPED(st);
}

static void on_clone(struct run *r, struct lwp *creator, pid_t tid)
{
	pctx_t *p = r->p;
	long tgid = pctx__proc_status_field(tid, "Tgid");
	if (tgid > 0 && tgid != p->pid) { /* clone(2) of a new process */
		on_fork(r, creator, tid);
		return;
	}
	if (!first_stop(p, tid))
		return;
	struct lwp *l = pctx__add_lwp(p, tid, p->next_id);
	if (!l) {
		pctx__report(p, "run", "out of memory for lwp %d\n", (int)tid);
		ptrace(PTRACE_DETACH, tid, 0, 0);
		r->running = -1;
		return;
	}
	int rc = call_init(p, l);
	if (rc == 0 && p->lwp_create) {
		handlers_begin(p);
		rc = p->lwp_create(p, p->pid, l->id, p->uarg);
		handlers_end(p);
	}
	if (rc != 0)
		r->running = -1;
	resume(p, l);
}

/* In the new controller: forget the handles this process inherited (their
 * tracees belong to our parent), take CHILD and run the fork handler. */
static void follow_child(pctx_t *p, pid_t ppid, id_t lwpid, pid_t child)
{
	pctx_sysc_forkfn_t *forkfn = p->fork;
	void *uarg = p->uarg;
	int verbose = p->verbose;
	pctx_errfn_t *errfn = p->errfn;
	while (pctx__handles)
		pctx__free_handle(pctx__handles);
	pctx_t *np = pctx_capture(child, uarg, verbose, errfn);
	if (!np) {
		kill(child, SIGCONT);
		_exit(1);
	}
	/* It was stopped by us for the hand-over: let it continue (our
	 * SIGCONT is not delivered to it). */
	struct lwp *l = pctx__find_lwp(np, child);
	if (l) {
		l->group_stop = false;
		l->quiet_cont = true;
	}
	kill(child, SIGCONT);
	/* illumos's libpctx passes the child's pid third and the LWP id
	 * fourth, whatever the typedef's names say; cputrack relies on it. */
	forkfn(np, ppid, (id_t)child, (pid_t)lwpid, uarg);
	pctx_release(np);
	fflush(NULL);
	_exit(0);
}

static void on_fork(struct run *r, struct lwp *parent, pid_t child)
{
	pctx_t *p = r->p;
	if (!first_stop(p, child))
		return;
	if (!p->fork) {
		ptrace(PTRACE_DETACH, child, 0, 0);
		return;
	}
	/* Hand the child over stopped: a SIGSTOP it takes while still traced
	 * by us is injected at the detach, so it cannot run untraced. */
	kill(child, SIGSTOP);
	ptrace(PTRACE_CONT, child, 0, 0);
	for (;;) {
		int st;
		if (pctx__wait_tid(child, &st) < 0 || !WIFSTOPPED(st))
			return; /* died */
		int event = (unsigned)st >> 16, sig = WSTOPSIG(st);
		if (event == 0 && sig == SIGSTOP)
			break;
		ptrace(PTRACE_CONT, child, 0, event == 0 ? sig : 0);
	}
	ptrace(PTRACE_DETACH, child, 0, SIGSTOP);
	pid_t ppid = p->pid;
	id_t lwpid = parent->id;
	fflush(NULL);
	pid_t mid = fork();
	if (mid == 0) {
		/* Twice, so that the controller is not our child to reap. */
		pid_t ctl = fork();
		if (ctl == 0)
			follow_child(p, ppid, lwpid, child);
		if (ctl < 0)
			kill(child, SIGCONT);
		_exit(ctl < 0);
	}
	if (mid < 0) {
		pctx__report(p, "run", "cannot follow pid %d: %s\n", (int)child, strerror(errno));
		kill(child, SIGCONT);
		return;
	}
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
}

static void do_tick(struct run *r, int (*tick)(pctx_t *, pid_t, id_t, void *))
{
	pctx_t *p = r->p;
	handlers_begin(p);
	for (id_t id = 1; id < p->next_id; id++)
		for (size_t i = 0; i < p->nlwp; i++) {
			struct lwp *l = &p->lwp[i];
			if (l->id == id && l->live && l->state != LWP_GONE && !l->exiting &&
			    tick(p, p->pid, id, p->uarg) != 0)
				r->running = -1;
		}
	handlers_end(p);
}

PCTX_EXPORT int pctx_run(pctx_t *p, uint_t msec, uint_t nsamples,
			 int (*tick)(pctx_t *, pid_t, id_t, void *))
{
	static const char fn[] = "run";
	struct run r = {.p = p, .running = 1};
	if (msec == 0 || !tick)
		nsamples = 0;
	if (nsamples == 0)
		nsamples = UINT_MAX;

	/* SIGCHLD is read from a signalfd; SIG_IGN would reap our child. */
	sigset_t chld, saved_mask;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &saved_mask);
	struct sigaction dfl = {.sa_handler = SIG_DFL}, saved_act;
	sigaction(SIGCHLD, NULL, &saved_act);
	if (saved_act.sa_handler == SIG_IGN || (saved_act.sa_flags & SA_NOCLDWAIT))
		sigaction(SIGCHLD, &dfl, NULL);
	int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		pctx__report(p, fn, "signalfd: %s\n", strerror(errno));
		r.running = -1;
	}

	/* A process just taken may have run for weeks: meet its LWPs first. */
	for (size_t i = 0; r.running == 1 && i < p->nlwp; i++) {
		struct lwp *l = &p->lwp[i];
		if (l->state != LWP_GONE && !l->exiting && !l->live && call_init(p, l) != 0 &&
		    p->init_lwp) {
			if (p->verbose)
				pctx__report(p, fn, "%d: lwp discovery failed\n", (int)p->pid);
			r.running = -1;
		}
	}
	for (size_t i = 0; r.running == 1 && i < p->nlwp; i++)
		resume(p, &p->lwp[i]);

	int64_t next = now_ms() + msec;
	while (r.running == 1 && !p->terminate) {
		if (msec) {
			int64_t now = now_ms();
			if (now >= next) {
				do_tick(&r, tick);
				if (r.running == 1 && --nsamples == 0)
					r.running = 0;
				next += msec;
				while (next <= now) { /* behind: skip ahead, keep the last */
					next += msec;
					if (nsamples > 1)
						nsamples--;
				}
				continue;
			}
		}
		pid_t tid;
		int status;
		int got = next_status(&r, sigfd, msec ? next : -1, &tid, &status);
		if (got == 1)
			continue;
		if (got < 0) {
			pctx__report(p, fn, "lost control of pid %d\n", (int)p->pid);
			r.running = -1;
			break;
		}
		handle(&r, tid, status);
	}

	if (sigfd >= 0)
		close(sigfd);
	sigaction(SIGCHLD, &saved_act, NULL);
	pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
	if (p->terminate)
		return 0;
	return r.running < 0 ? -1 : 0;
}
