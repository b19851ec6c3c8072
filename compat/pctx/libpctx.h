/*
 * libpctx: control another process through an event loop, as illumos
 * libpctx does (pctx_capture(3CPC), pctx_set_events(3CPC)).  This is hwc's
 * Linux implementation, built on ptrace(2); libpctx(3) lists where Linux
 * forces a difference.  The interface below is illumos's.
 */
#ifndef _LIBPCTX_H
#define _LIBPCTX_H

#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* illumos types that Linux does not have, or has only in some modes. */
#ifndef _HWC_UINT_T
#define _HWC_UINT_T
typedef unsigned int uint_t;
#endif
#ifndef __id_t_defined
typedef __id_t id_t;
#define __id_t_defined
#endif

typedef struct __pctx pctx_t;

/* A vprintf-like error reporter; NULL selects the default, which writes
 * "libpctx: pctx_FN: message" to stderr. */
typedef void(pctx_errfn_t)(const char *fn, const char *fmt, va_list ap);

/* Start FILENAME (looked up in PATH) with ARGV, stopped just after its
 * exec, or take control of the existing process PID, stopped.  ARG is
 * passed to every handler.  NULL (after a message) on failure. */
extern pctx_t *pctx_create(const char *filename, char *const *argv, void *arg, int verbose,
			   pctx_errfn_t *errfn);
extern pctx_t *pctx_capture(pid_t pid, void *arg, int verbose, pctx_errfn_t *errfn);

/* Handlers.  LWP ids are illumos-style: 1 for the main thread, then 2, 3,
 * ... in the order libpctx first sees each thread (pctx_lwp_tid() gives
 * the Linux thread ID). */
typedef int pctx_sysc_execfn_t(pctx_t *, pid_t, id_t, char *, void *);
/* The fork handler is called as (pctx, pid, child's pid, lwpid, arg), the
 * order illumos's libpctx passes, whatever this typedef (illumos's) says. */
typedef void pctx_sysc_forkfn_t(pctx_t *, pid_t, id_t, pid_t, void *);
typedef void pctx_sysc_exitfn_t(pctx_t *, pid_t, id_t, int, void *);
typedef int pctx_sysc_lwp_createfn_t(pctx_t *, pid_t, id_t, void *);
typedef int pctx_init_lwpfn_t(pctx_t *, pid_t, id_t, void *);
typedef int pctx_fini_lwpfn_t(pctx_t *, pid_t, id_t, void *);
typedef int pctx_sysc_lwp_exitfn_t(pctx_t *, pid_t, id_t, void *);

/* Make pctx_run() return as soon as possible; safe in a signal handler. */
extern void pctx_terminate(pctx_t *);

typedef enum {
	PCTX_NULL_EVENT = 0,
	PCTX_SYSC_EXEC_EVENT,
	PCTX_SYSC_FORK_EVENT,
	PCTX_SYSC_EXIT_EVENT,
	PCTX_SYSC_LWP_CREATE_EVENT,
	PCTX_INIT_LWP_EVENT,
	PCTX_FINI_LWP_EVENT,
	PCTX_SYSC_LWP_EXIT_EVENT
} pctx_event_t;

/* Pairs of (pctx_event_t, handler), ended by PCTX_NULL_EVENT.  0 or -1. */
extern int pctx_set_events(pctx_t *pctx, ...);

/* Run the event loop until the process exits (0), NSAMPLES ticks of MSEC
 * milliseconds have been taken (0), or an error (-1). */
extern int pctx_run(pctx_t *pctx, uint_t msec, uint_t nsamples,
		    int (*tick)(pctx_t *, pid_t, id_t, void *));

/* Let the process go (it runs on, never killed) and free PCTX. */
extern void pctx_release(pctx_t *pctx);

/* Linux extension: the thread ID of LWP LWPID of the controlled process,
 * or -1 with errno ESRCH.  libcpc's cpc_bind_pctx() counts that thread. */
extern pid_t pctx_lwp_tid(pctx_t *pctx, id_t lwpid);

#ifdef __cplusplus
}
#endif

#endif
