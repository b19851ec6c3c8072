/*
 * libpctx on Linux: the illumos process-context event loop on ptrace(2).
 *
 * Every thread of the controlled process is a seized tracee
 * (PTRACE_SEIZE with TRACECLONE/EXEC/EXIT, and FORK/VFORK when a fork
 * handler is set).  Events map to the illumos handlers:
 *   PTRACE_EVENT_CLONE (new thread)  init_lwp, lwp_create
 *   PTRACE_EVENT_EXEC                fini_lwp on every LWP, exec, init_lwp(1)
 *   PTRACE_EVENT_EXIT, not the last  fini_lwp, lwp_exit
 *   PTRACE_EVENT_EXIT, the last      fini_lwp, exit
 *   PTRACE_EVENT_FORK/VFORK          a new controller process takes the
 *                                    child and runs the fork handler
 * The controlled process is never killed and never left stopped: every
 * exit path detaches (and PTRACE_O_EXITKILL is never used, so if this
 * process dies the kernel detaches its tracees, which run on).
 */
#include "libpctx.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PCTX_EXPORT __attribute__((visibility("default")))

enum lwp_state {
	LWP_STOPPED,   /* in a ptrace-stop, ours to resume */
	LWP_RUNNING,   /* resumed with PTRACE_CONT */
	LWP_LISTENING, /* in a job-control stop, resumed with PTRACE_LISTEN */
	LWP_GONE,      /* exited */
};

struct lwp {
	pid_t tid;
	id_t id;
	enum lwp_state state;
	int inject;      /* signal to deliver when resumed */
	bool group_stop; /* job-control stopped: resume with PTRACE_LISTEN */
	bool live;       /* init_lwp succeeded and fini_lwp was not called yet */
	bool exiting;    /* reported PTRACE_EVENT_EXIT */
	bool quiet_cont; /* the next SIGCONT is ours (a fork hand-over): drop it */
	unsigned options;
};

/* A wait status for a tracee that the loop could not place yet. */
struct early {
	pid_t tid;
	int status;
};

struct __pctx {
	pid_t pid;
	struct lwp *lwp;
	size_t nlwp, cap;
	id_t next_id;
	struct early *early; /* new tracees seen before their creator's event */
	size_t nearly, early_cap;
	void *uarg;
	int verbose;
	pctx_errfn_t *errfn;
	bool created; /* our child: reaped when it has exited */
	bool exited;
	volatile sig_atomic_t terminate;
	int wake[2]; /* pctx_terminate() writes here to end a wait */
	int handler_depth;
	sigset_t handler_saved;
	unsigned options;
	pctx_sysc_execfn_t *exec;
	pctx_sysc_forkfn_t *fork;
	pctx_sysc_exitfn_t *exit;
	pctx_sysc_lwp_createfn_t *lwp_create;
	pctx_init_lwpfn_t *init_lwp;
	pctx_fini_lwpfn_t *fini_lwp;
	pctx_sysc_lwp_exitfn_t *lwp_exit;
	struct __pctx *next;
};

/* Every handle of this process, so a wait status for another handle's
 * tracee is kept for it rather than lost. */
static pctx_t *all_handles;

#define BASE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT)
#define FORK_OPTIONS (PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK)

/* ---------------------------------------------------------------- errors */

static void default_errfn(const char *fn, const char *fmt, va_list ap)
{
	fprintf(stderr, "libpctx: pctx_%s: ", fn);
	vfprintf(stderr, fmt, ap);
}

__attribute__((format(printf, 3, 4))) static void report(const pctx_t *p, const char *fn,
							 const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	p->errfn(fn, fmt, ap);
	va_end(ap);
	errno = saved;
}

/* ---------------------------------------------------------------- /proc */

/* Value of "Key:" in /proc/TID/status, or -1. */
static long proc_status_field(pid_t tid, const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long v = -1;
	size_t klen = strlen(key);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* State letter and flags from /proc/PID/stat; false if there is no such process. */
static bool proc_stat(pid_t pid, char *state, unsigned long *flags)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command may contain spaces and ')' */
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		return false;
	return true;
}

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

/* ---------------------------------------------------------------- lwps */

static struct lwp *find_lwp(const pctx_t *p, pid_t tid)
{
	for (size_t i = 0; i < p->nlwp; i++)
		if (p->lwp[i].tid == tid && p->lwp[i].state != LWP_GONE)
			return &p->lwp[i];
	return NULL;
}

static struct lwp *add_lwp(pctx_t *p, pid_t tid, id_t id)
{
	if (p->nlwp == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		struct lwp *l = realloc(p->lwp, cap * sizeof(*l));
		if (!l)
			return NULL;
		p->lwp = l;
		p->cap = cap;
	}
	struct lwp *l = &p->lwp[p->nlwp++];
	*l = (struct lwp){.tid = tid, .id = id, .state = LWP_STOPPED, .options = p->options};
	if (id >= p->next_id)
		p->next_id = id + 1;
	return l;
}

static int add_early(pctx_t *p, pid_t tid, int status)
{
	if (p->nearly == p->early_cap) {
		size_t cap = p->early_cap ? p->early_cap * 2 : 4;
		struct early *e = realloc(p->early, cap * sizeof(*e));
		if (!e)
			return -1;
		p->early = e;
		p->early_cap = cap;
	}
	p->early[p->nearly++] = (struct early){tid, status};
	return 0;
}

static bool take_early(pctx_t *p, pid_t tid, int *status)
{
	for (size_t i = 0; i < p->nearly; i++)
		if (p->early[i].tid == tid) {
			*status = p->early[i].status;
			p->early[i] = p->early[--p->nearly];
			return true;
		}
	return false;
}

/* Threads that have not started to exit. */
static size_t running_threads(const pctx_t *p, const struct lwp *except)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nlwp; i++)
		n += &p->lwp[i] != except && p->lwp[i].state != LWP_GONE && !p->lwp[i].exiting;
	return n;
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

/* ---------------------------------------------------------------- ptrace */

static long geteventmsg(pid_t tid)
{
	unsigned long msg = 0;
	if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) < 0)
		return -1;
	return (long)msg;
}

/* Wait for TID (a tracee) and return its status; -1 if it is not ours. */
static int wait_tid(pid_t tid, int *status)
{
	for (;;) {
		pid_t r = waitpid(tid, status, __WALL);
		if (r == tid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

static bool stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

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

/* Note a ptrace-stop STATUS of L: how to resume it later. */
static void note_stop(struct lwp *l, int status)
{
	l->state = LWP_STOPPED;
	int sig = WSTOPSIG(status), event = (unsigned)status >> 16;
	if (event == 0) { /* signal-delivery-stop */
		if (sig == SIGCONT && l->quiet_cont) {
			l->quiet_cont = false;
			sig = 0;
		}
		l->inject = sig;
	} else if (event == PTRACE_EVENT_STOP) {
		/* An interrupt, a new tracee's first stop, or a job-control stop. */
		l->group_stop = stop_signal(sig);
	}
}

/* ---------------------------------------------------------------- creation */

static pctx_t *new_handle(pid_t pid, void *arg, int verbose, pctx_errfn_t *errfn)
{
	pctx_t *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->uarg = arg;
	p->verbose = verbose;
	p->errfn = errfn ? errfn : default_errfn;
	p->next_id = 1;
	p->options = BASE_OPTIONS;
	if (pipe2(p->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		free(p);
		return NULL;
	}
	p->next = all_handles;
	all_handles = p;
	return p;
}

static void free_handle(pctx_t *p)
{
	for (pctx_t **pp = &all_handles; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	close(p->wake[0]);
	close(p->wake[1]);
	free(p->lwp);
	free(p->early);
	free(p);
}

/* Bring every seized thread of P to a stop before the caller sets events:
 * PTRACE_INTERRUPT was sent to each LWP_RUNNING one. */
static void settle(pctx_t *p)
{
	for (size_t i = 0; i < p->nlwp; i++) {
		struct lwp *l = &p->lwp[i];
		while (l->state == LWP_RUNNING) {
			int st;
			if (wait_tid(l->tid, &st) < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
				l->state = LWP_GONE;
				break;
			}
			int event = (unsigned)st >> 16;
			note_stop(l, st);
			if (event == PTRACE_EVENT_CLONE) {
				/* A thread started meanwhile: it is traced already. */
				pid_t tid = (pid_t)geteventmsg(l->tid);
				if (tid > 0 && !find_lwp(p, tid)) {
					int nst;
					if (wait_tid(tid, &nst) == 0 && WIFSTOPPED(nst)) {
						struct lwp *n = add_lwp(p, tid, p->next_id);
						l = &p->lwp[i]; /* add_lwp may move the array */
						if (!n)
							ptrace(PTRACE_DETACH, tid, 0, 0);
					}
				}
				l->state = LWP_RUNNING;
				ptrace(PTRACE_CONT, l->tid, 0, 0);
				ptrace(PTRACE_INTERRUPT, l->tid, 0, 0);
			} else if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
				/* Not followed yet: let the child go. */
				pid_t child = (pid_t)geteventmsg(l->tid);
				int nst;
				if (child > 0 && wait_tid(child, &nst) == 0 && WIFSTOPPED(nst))
					ptrace(PTRACE_DETACH, child, 0, 0);
				l->state = LWP_RUNNING;
				ptrace(PTRACE_CONT, l->tid, 0, 0);
				ptrace(PTRACE_INTERRUPT, l->tid, 0, 0);
			} else if (event == PTRACE_EVENT_EXIT) {
				l->exiting = true;
			}
		}
	}
}

PCTX_EXPORT pctx_t *pctx_capture(pid_t pid, void *arg, int verbose, pctx_errfn_t *errfn)
{
	static const char fn[] = "capture";
	pctx_t *p = new_handle(pid, arg, verbose, errfn);
	if (!p) {
		pctx_t tmp = {.errfn = errfn ? errfn : default_errfn};
		report(&tmp, fn, "out of memory\n");
		return NULL;
	}
	char state;
	unsigned long flags;
	if (pid <= 0 || !proc_stat(pid, &state, &flags)) {
		report(p, fn, "pid %d doesn't exist\n", (int)pid);
		goto fail;
	}
	if (pid == getpid()) {
		report(p, fn, "cannot capture self!\n");
		goto fail;
	}
	if (state == 'Z' || state == 'X') {
		report(p, fn, "pid %d is a zombie\n", (int)pid);
		goto fail;
	}
	if (flags & 0x00200000) { /* PF_KTHREAD */
		report(p, fn, "pid %d is a system process\n", (int)pid);
		goto fail;
	}
	if (proc_status_field(pid, "TracerPid") > 0) {
		report(p, fn, "pid %d is already being traced\n", (int)pid);
		goto fail;
	}
	/* Seize every thread; again until no new thread shows up. */
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	bool added = true;
	while (added) {
		added = false;
		DIR *d = opendir(dir);
		if (!d) {
			if (p->nlwp)
				break;
			report(p, fn, "pid %d doesn't exist\n", (int)pid);
			goto fail;
		}
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid <= 0 || find_lwp(p, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, p->options) < 0) {
				if (errno == ESRCH)
					continue; /* exited meanwhile */
				if (errno == EPERM && proc_status_field(tid, "TracerPid") == getpid())
					continue; /* auto-attached as a new thread; settle() adds it */
				int e = errno;
				closedir(d);
				if (e == EPERM)
					report(p, fn, "pid %d: permission denied (ptrace access to it is "
						      "needed: same user, or root; see ptrace(2))\n",
					       (int)pid);
				else
					report(p, fn, "cannot trace pid %d: %s\n", (int)pid, strerror(e));
				pctx_release(p);
				return NULL;
			}
			struct lwp *l = add_lwp(p, tid, 0);
			if (!l) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				closedir(d);
				report(p, fn, "out of memory\n");
				pctx_release(p);
				return NULL;
			}
			l->state = LWP_RUNNING;
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			added = true;
		}
		closedir(d);
	}
	/* illumos numbering: the main thread is LWP 1, the others follow by tid. */
	p->next_id = 2;
	for (size_t i = 0; i < p->nlwp; i++)
		if (p->lwp[i].tid == pid)
			p->lwp[i].id = 1;
	for (pid_t last = 0;;) {
		struct lwp *lowest = NULL;
		for (size_t i = 0; i < p->nlwp; i++)
			if (p->lwp[i].id == 0 && p->lwp[i].tid > last &&
			    (!lowest || p->lwp[i].tid < lowest->tid))
				lowest = &p->lwp[i];
		if (!lowest)
			break;
		lowest->id = p->next_id++;
		last = lowest->tid;
	}
	settle(p);
	if (!find_lwp(p, pid) && running_threads(p, NULL) == 0) {
		report(p, fn, "pid %d doesn't exist\n", (int)pid);
		pctx_release(p);
		return NULL;
	}
	return p;
fail:
	free_handle(p);
	return NULL;
}

PCTX_EXPORT pctx_t *pctx_create(const char *filename, char *const *argv, void *arg, int verbose,
				pctx_errfn_t *errfn)
{
	static const char fn[] = "create";
	pctx_t *p = new_handle(0, arg, verbose, errfn);
	if (!p) {
		pctx_t tmp = {.errfn = errfn ? errfn : default_errfn};
		report(&tmp, fn, "out of memory\n");
		return NULL;
	}
	int go[2], st[2];
	if (!filename || !*filename || !argv) {
		report(p, fn, "no program to run\n");
		goto fail;
	}
	if (pipe2(go, O_CLOEXEC) < 0) {
		report(p, fn, "cannot fork, program '%s': %s\n", filename, strerror(errno));
		goto fail;
	}
	if (pipe2(st, O_CLOEXEC) < 0) {
		report(p, fn, "cannot fork, program '%s': %s\n", filename, strerror(errno));
		close(go[0]);
		close(go[1]);
		goto fail;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		report(p, fn, "cannot fork, program '%s': %s\n", filename, strerror(errno));
		close(go[0]), close(go[1]), close(st[0]), close(st[1]);
		goto fail;
	}
	if (pid == 0) {
		/* Wait until traced, then exec; an exec failure goes up the pipe. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(go[1]);
		close(st[0]);
		char x;
		ssize_t r;
		do
			r = read(go[0], &x, 1);
		while (r < 0 && errno == EINTR);
		if (r != 1)
			_exit(127);
		execvp(filename, argv);
		int e = errno;
		if (write(st[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(st[1]);
	p->pid = pid;
	p->created = true;
	if (ptrace(PTRACE_SEIZE, pid, 0, p->options) < 0) {
		report(p, fn, "cannot trace program '%s': %s\n", filename, strerror(errno));
		close(go[1]), close(st[0]);
		waitpid(pid, NULL, 0); /* EOF on the pipe: the child exits */
		goto fail;
	}
	ssize_t w;
	do
		w = write(go[1], "x", 1);
	while (w < 0 && errno == EINTR);
	close(go[1]);
	/* Run it to the end of its exec (PTRACE_EVENT_EXEC), or to its death. */
	for (;;) {
		int status;
		if (wait_tid(pid, &status) < 0) {
			report(p, fn, "lost program '%s': %s\n", filename, strerror(errno));
			close(st[0]);
			goto fail;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			int e = 0;
			ssize_t r;
			do
				r = read(st[0], &e, sizeof(e));
			while (r < 0 && errno == EINTR);
			close(st[0]);
			if (r == (ssize_t)sizeof(e) && e == ENOENT)
				report(p, fn, "cannot find program '%s'\n", filename);
			else if (r == (ssize_t)sizeof(e))
				report(p, fn, "cannot execute program '%s': %s\n", filename, strerror(e));
			else
				report(p, fn, "program '%s' died before it started\n", filename);
			goto fail;
		}
		int event = (unsigned)status >> 16;
		if (event == PTRACE_EVENT_EXEC)
			break;
		int sig = event == 0 ? WSTOPSIG(status) : 0;
		ptrace(PTRACE_CONT, pid, 0, sig);
	}
	close(st[0]);
	if (!add_lwp(p, pid, 1)) {
		report(p, fn, "out of memory\n");
		pctx_release(p);
		return NULL;
	}
	return p;
fail:
	free_handle(p);
	return NULL;
}

PCTX_EXPORT int pctx_set_events(pctx_t *p, ...)
{
	va_list ap;
	va_start(ap, p);
	int err = 0;
	for (;;) {
		pctx_event_t ev = (pctx_event_t)va_arg(ap, int);
		if (ev == PCTX_NULL_EVENT)
			break;
		switch (ev) {
		case PCTX_SYSC_EXEC_EVENT: p->exec = va_arg(ap, pctx_sysc_execfn_t *); break;
		case PCTX_SYSC_FORK_EVENT: p->fork = va_arg(ap, pctx_sysc_forkfn_t *); break;
		case PCTX_SYSC_EXIT_EVENT: p->exit = va_arg(ap, pctx_sysc_exitfn_t *); break;
		case PCTX_SYSC_LWP_CREATE_EVENT:
			p->lwp_create = va_arg(ap, pctx_sysc_lwp_createfn_t *);
			break;
		case PCTX_INIT_LWP_EVENT: p->init_lwp = va_arg(ap, pctx_init_lwpfn_t *); break;
		case PCTX_FINI_LWP_EVENT: p->fini_lwp = va_arg(ap, pctx_fini_lwpfn_t *); break;
		case PCTX_SYSC_LWP_EXIT_EVENT:
			p->lwp_exit = va_arg(ap, pctx_sysc_lwp_exitfn_t *);
			break;
		default:
			report(p, "set_events", "unknown event type %x\n", (unsigned)ev);
			err = -1;
			break;
		}
		if (err)
			break;
	}
	va_end(ap);
	if (err)
		return -1;
	/* Forks are traced only to be followed; stopped threads take the new
	 * options now, running ones when they next stop. */
	p->options = BASE_OPTIONS | (p->fork ? FORK_OPTIONS : 0);
	for (size_t i = 0; i < p->nlwp; i++) {
		struct lwp *l = &p->lwp[i];
		if (l->state == LWP_STOPPED && l->options != p->options &&
		    ptrace(PTRACE_SETOPTIONS, l->tid, 0, p->options) == 0)
			l->options = p->options;
	}
	return 0;
}

PCTX_EXPORT void pctx_terminate(pctx_t *p)
{
	p->terminate = 1;
	ssize_t w = write(p->wake[1], "x", 1); /* async-signal-safe */
	(void)w;
}

PCTX_EXPORT pid_t pctx_lwp_tid(pctx_t *p, id_t lwpid)
{
	for (size_t i = 0; i < p->nlwp; i++)
		if (p->lwp[i].id == lwpid && p->lwp[i].state != LWP_GONE)
			return p->lwp[i].tid;
	/* An LWP that just exited is still counted by its last counters. */
	for (size_t i = p->nlwp; i-- > 0;)
		if (p->lwp[i].id == lwpid)
			return p->lwp[i].tid;
	errno = ESRCH;
	return -1;
}

/* ---------------------------------------------------------------- release */

/* Detach every thread: stop the running ones first (the kernel requires a
 * ptrace-stop), keep pending signals, and let new tracees go too. */
static void detach_all(pctx_t *p)
{
	/* New tracees first: a vfork parent waits for its child to run. */
	for (size_t i = 0; i < p->nearly; i++)
		if (WIFSTOPPED(p->early[i].status))
			ptrace(PTRACE_DETACH, p->early[i].tid, 0, 0);
	p->nearly = 0;
	for (size_t i = 0; i < p->nlwp; i++) {
		struct lwp *l = &p->lwp[i];
		if (l->exiting && l->state == LWP_RUNNING) {
			/* Let go at its exit: it dies without another stop (a dead
			 * leader waits for the whole process, so do not wait). */
			waitpid(l->tid, NULL, WNOHANG | __WALL);
			l->state = LWP_GONE;
		}
		if (l->state == LWP_RUNNING || l->state == LWP_LISTENING)
			ptrace(PTRACE_INTERRUPT, l->tid, 0, 0);
	}
	for (size_t i = 0; i < p->nlwp; i++) {
		while (p->lwp[i].state == LWP_RUNNING || p->lwp[i].state == LWP_LISTENING) {
			struct lwp *l = &p->lwp[i];
			int st;
			if (wait_tid(l->tid, &st) < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
				l->state = LWP_GONE;
				break;
			}
			int event = (unsigned)st >> 16;
			bool listening = l->state == LWP_LISTENING;
			note_stop(l, st);
			if (listening && event == PTRACE_EVENT_STOP)
				l->group_stop = true; /* still job-control stopped: stays so */
			if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
			    event == PTRACE_EVENT_VFORK) {
				pid_t tid = (pid_t)geteventmsg(l->tid);
				int nst;
				if (tid > 0 && (take_early(p, tid, &nst) || wait_tid(tid, &nst) == 0) &&
				    WIFSTOPPED(nst))
					ptrace(PTRACE_DETACH, tid, 0, 0);
				/* Let the creator finish its call, then stop it again. */
				ptrace(PTRACE_CONT, l->tid, 0, l->inject);
				l->inject = 0;
				l->state = LWP_RUNNING;
				ptrace(PTRACE_INTERRUPT, l->tid, 0, 0);
			}
		}
	}
	for (size_t i = 0; i < p->nlwp; i++) {
		struct lwp *l = &p->lwp[i];
		if (l->state == LWP_STOPPED)
			ptrace(PTRACE_DETACH, l->tid, 0, l->inject);
		l->state = LWP_GONE;
	}
}

PCTX_EXPORT void pctx_release(pctx_t *p)
{
	if (!p)
		return;
	detach_all(p);
	/* A created process that has exited is our child: reap it. */
	if (p->created && p->exited) {
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	free_handle(p);
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
	for (pctx_t *h = all_handles; h; h = h->next)
		if (find_lwp(h, tid))
			return h;
	if (!WIFSTOPPED(status))
		return NULL;
	long tgid = proc_status_field(tid, "Tgid"), ppid = proc_status_field(tid, "PPid");
	for (pctx_t *h = all_handles; h; h = h->next)
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
			if (h == p && (find_lwp(p, got) || !first)) {
				*tid = got;
				return 0;
			}
			if (h)
				add_early(h, got, *status); /* a new tracee; its creator's event is due */
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
		report(p, "run", "%d: process terminated by signal %d\n", (int)p->pid,
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
	if (running_threads(p, l) > 0) {
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
	pid_t former = (pid_t)geteventmsg(l->tid);
	/* The execing thread finished its other threads: finish their LWPs
	 * and start over with one LWP, 1, whose tid is the process id. */
	for (size_t i = 0; i < p->nlwp; i++)
		(void)call_fini(p, &p->lwp[i]);
	struct lwp keep = *l;
	if (former > 0 && former != l->tid) {
		struct lwp *f = find_lwp(p, former);
		if (f)
			keep = *f;
	}
	keep.tid = p->pid;
	keep.id = 1;
	keep.live = keep.exiting = false;
	keep.state = LWP_STOPPED;
	p->nlwp = 0;
	p->next_id = 1;
	l = add_lwp(p, keep.tid, 1);
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
	struct lwp *l = find_lwp(p, tid);
	if (!l && WIFSTOPPED(status)) {
		/* After an exec by a thread whose leader is gone, the execing
		 * thread reports under the process id. */
		if (tid == p->pid && ((unsigned)status >> 16) == PTRACE_EVENT_EXEC)
			l = find_lwp(p, (pid_t)geteventmsg(tid));
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
	note_stop(l, status);
	switch ((unsigned)status >> 16) {
	case PTRACE_EVENT_CLONE: {
		pid_t n = (pid_t)geteventmsg(tid);
		if (n > 0)
			on_clone(r, l, n);
		break;
	}
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK: {
		pid_t n = (pid_t)geteventmsg(tid);
		if (n > 0)
			on_fork(r, l, n);
		break;
	}
	case PTRACE_EVENT_EXEC:
		on_exec(r, l);
		return;
	case PTRACE_EVENT_EXIT: {
		long st = geteventmsg(tid);
		lwp_exits(r, l, st < 0 ? 0 : (int)st);
		return;
	}
	default:
		break;
	}
	l = find_lwp(p, tid); /* the array may have moved */
	if (l)
		resume(p, l);
}

/* The first stop of a tracee created by another: from the early list, or
 * waited for now (the kernel always reports it).  False if it died. */
static bool first_stop(pctx_t *p, pid_t tid)
{
	int st;
	if (!take_early(p, tid, &st) && wait_tid(tid, &st) < 0)
		return false;
	return WIFSTOPPED(st);
}

static void on_clone(struct run *r, struct lwp *creator, pid_t tid)
{
	pctx_t *p = r->p;
	long tgid = proc_status_field(tid, "Tgid");
	if (tgid > 0 && tgid != p->pid) { /* clone(2) of a new process */
		on_fork(r, creator, tid);
		return;
	}
	if (!first_stop(p, tid))
		return;
	struct lwp *l = add_lwp(p, tid, p->next_id);
	if (!l) {
		report(p, "run", "out of memory for lwp %d\n", (int)tid);
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
	while (all_handles)
		free_handle(all_handles);
	pctx_t *np = pctx_capture(child, uarg, verbose, errfn);
	if (!np) {
		kill(child, SIGCONT);
		_exit(1);
	}
	/* It was stopped by us for the hand-over: let it continue (our
	 * SIGCONT is not delivered to it). */
	struct lwp *l = find_lwp(np, child);
	if (l) {
		l->group_stop = false;
		l->quiet_cont = true;
	}
	kill(child, SIGCONT);
	forkfn(np, ppid, lwpid, child, uarg);
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
		if (wait_tid(child, &st) < 0 || !WIFSTOPPED(st))
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
		report(p, "run", "cannot follow pid %d: %s\n", (int)child, strerror(errno));
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
		report(p, fn, "signalfd: %s\n", strerror(errno));
		r.running = -1;
	}

	/* A process just taken may have run for weeks: meet its LWPs first. */
	for (size_t i = 0; r.running == 1 && i < p->nlwp; i++) {
		struct lwp *l = &p->lwp[i];
		if (l->state != LWP_GONE && !l->exiting && !l->live && call_init(p, l) != 0 &&
		    p->init_lwp) {
			if (p->verbose)
				report(p, fn, "%d: lwp discovery failed\n", (int)p->pid);
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
			report(p, fn, "lost control of pid %d\n", (int)p->pid);
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
