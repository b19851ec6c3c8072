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
 *
 * pctx_impl.h says which file holds what; this one holds the handle and
 * its LWPs, and the helpers the others share.
 */
#include "pctx_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

pctx_t *pctx__handles;
/* Guards the list against pctx_terminate() in a signal handler: held only
 * with every signal blocked, so never by the thread a handler interrupts. */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock_handles(sigset_t *saved)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, saved);
	pthread_mutex_lock(&handles_lock);
}

static void unlock_handles(const sigset_t *saved)
{
	pthread_mutex_unlock(&handles_lock);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* ---------------------------------------------------------------- errors */

static void default_errfn(const char *fn, const char *fmt, va_list ap)
{
	fprintf(stderr, "libpctx: pctx_%s: ", fn);
	vfprintf(stderr, fmt, ap);
}

void pctx__report(const pctx_t *p, const char *fn, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	p->errfn(fn, fmt, ap);
	va_end(ap);
	errno = saved;
}

/* ---------------------------------------------------------------- /proc */

long pctx__proc_status_field(pid_t tid, const char *key)
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

/* ---------------------------------------------------------------- handles */

pctx_t *pctx__new_handle(const char *fn, pid_t pid, void *arg, int verbose, pctx_errfn_t *errfn)
{
	if (!errfn)
		errfn = default_errfn;
	pctx_t *p = calloc(1, sizeof(*p));
	if (p && pipe2(p->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		free(p);
		p = NULL;
	}
	if (!p) {
		pctx_t tmp = {.errfn = errfn};
		pctx__report(&tmp, fn, "out of memory\n");
		return NULL;
	}
	p->pid = pid;
	p->uarg = arg;
	p->verbose = verbose;
	p->errfn = errfn;
	p->next_id = 1;
	p->options = BASE_OPTIONS;
	sigset_t saved;
	lock_handles(&saved);
	p->next = pctx__handles;
	pctx__handles = p;
	unlock_handles(&saved);
	return p;
}

void pctx__free_handle(pctx_t *p)
{
	sigset_t saved;
	lock_handles(&saved);
	for (pctx_t **pp = &pctx__handles; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	unlock_handles(&saved);
	close(p->wake[0]);
	close(p->wake[1]);
	free(p->lwp);
	free(p->early);
	free(p);
}

/* ---------------------------------------------------------------- lwps */

struct lwp *pctx__find_lwp(const pctx_t *p, pid_t tid)
{
	for (size_t i = 0; i < p->nlwp; i++)
		if (p->lwp[i].tid == tid && p->lwp[i].state != LWP_GONE)
			return &p->lwp[i];
	return NULL;
}

struct lwp *pctx__add_lwp(pctx_t *p, pid_t tid, id_t id)
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

int pctx__add_early(pctx_t *p, pid_t tid, int status)
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

bool pctx__take_early(pctx_t *p, pid_t tid, int *status)
{
	for (size_t i = 0; i < p->nearly; i++)
		if (p->early[i].tid == tid) {
			*status = p->early[i].status;
			p->early[i] = p->early[--p->nearly];
			return true;
		}
	return false;
}

size_t pctx__running_threads(const pctx_t *p, const struct lwp *except)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nlwp; i++)
		n += &p->lwp[i] != except && p->lwp[i].state != LWP_GONE && !p->lwp[i].exiting;
	return n;
}

/* ---------------------------------------------------------------- ptrace */

long pctx__geteventmsg(pid_t tid)
{
	unsigned long msg = 0;
	if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) < 0)
		return -1;
	return (long)msg;
}

int pctx__wait_tid(pid_t tid, int *status)
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

void pctx__note_stop(struct lwp *l, int status)
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

bool pctx__wait_stop(struct lwp *l, int *status)
{
	if (pctx__wait_tid(l->tid, status) < 0 || WIFEXITED(*status) || WIFSIGNALED(*status)) {
		l->state = LWP_GONE;
		return false;
	}
	return true;
}

void pctx__finish_call(struct lwp *l, int sig)
{
	l->state = LWP_RUNNING;
	ptrace(PTRACE_CONT, l->tid, 0, sig);
	ptrace(PTRACE_INTERRUPT, l->tid, 0, 0);
}

/* ---------------------------------------------------------------- the interface */

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
			pctx__report(p, "set_events", "unknown event type %x\n", (unsigned)ev);
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

/* A handle already freed is ignored: libcpc's cpc_terminate() passes every
 * handle a set was bound to, and a controller made for a fork has freed
 * the handles it inherited. */
PCTX_EXPORT void pctx_terminate(pctx_t *p)
{
	int saved_errno = errno;
	sigset_t saved;
	lock_handles(&saved);
	for (pctx_t *h = pctx__handles; h; h = h->next)
		if (h == p) {
			p->terminate = 1;
			ssize_t w = write(p->wake[1], "x", 1); /* async-signal-safe */
			(void)w;
			break;
		}
	unlock_handles(&saved);
	errno = saved_errno;
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
