/* libpctx internals shared between its files; never installed.
 *
 *   pctx.c    the handle, its LWPs, error reports, ptrace and /proc helpers,
 *             pctx_set_events(), pctx_terminate(), pctx_lwp_tid()
 *   spawn.c   taking control: pctx_create() and pctx_capture()
 *   loop.c    the event loop: pctx_run() and the handlers it calls
 *   detach.c  letting go: pctx_release()
 */
#ifndef PCTX_IMPL_H
#define PCTX_IMPL_H

#include "libpctx.h"

#include <signal.h>
#include <stdbool.h>
#include <sys/ptrace.h>

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
extern pctx_t *pctx__handles;

#define BASE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT)
#define FORK_OPTIONS (PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK)

/* A new handle for PID, on the list of handles; NULL after reporting
 * "out of memory" for pctx_FN. */
pctx_t *pctx__new_handle(const char *fn, pid_t pid, void *arg, int verbose, pctx_errfn_t *errfn);
void pctx__free_handle(pctx_t *p);

/* Report through P's error function, as "libpctx: pctx_FN: ..." by
 * default; errno is preserved. */
__attribute__((format(printf, 3, 4))) void pctx__report(const pctx_t *p, const char *fn,
							const char *fmt, ...);

/* Value of "Key:" in /proc/TID/status, or -1. */
long pctx__proc_status_field(pid_t tid, const char *key);

/* P's LWPs: the live one with thread ID TID, or NULL; a new one. */
struct lwp *pctx__find_lwp(const pctx_t *p, pid_t tid);
struct lwp *pctx__add_lwp(pctx_t *p, pid_t tid, id_t id);
/* Keep a wait STATUS of a tracee whose creator's event is still due; take
 * it back (false if there is none). */
int pctx__add_early(pctx_t *p, pid_t tid, int status);
bool pctx__take_early(pctx_t *p, pid_t tid, int *status);
/* Threads that have not started to exit. */
size_t pctx__running_threads(const pctx_t *p, const struct lwp *except);

/* ptrace(2): the event message of TID's stop, or -1. */
long pctx__geteventmsg(pid_t tid);
/* Wait for TID (a tracee) and return its status; -1 if it is not ours. */
int pctx__wait_tid(pid_t tid, int *status);
/* Wait for L's next stop: false (and L gone) if it died instead. */
bool pctx__wait_stop(struct lwp *l, int *status);
/* Note a ptrace-stop STATUS of L: how to resume it later. */
void pctx__note_stop(struct lwp *l, int status);
/* Let L finish the system call it stopped in (delivering SIG), then stop
 * it again. */
void pctx__finish_call(struct lwp *l, int sig);

#endif
