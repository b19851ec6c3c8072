/* libcpc internals shared between its files; never installed.
 *
 *   cpc.c      the handle, error reports, the overflow signal (SIGEMT)
 *   set.c      sets and their requests (event names and attributes to specs)
 *   buf.c      buffers and their arithmetic
 *   bind.c     binding a set to an LWP, a process's LWP or a CPU
 *   sample.c   sampling, presets and restarts, cpc_enable()/cpc_disable()
 *   walk.c     the event and attribute walkers
 *   machine.c  what libcpc says about this machine (from libhwc)
 */
#ifndef CPC_IMPL_H
#define CPC_IMPL_H

#include "libcpc.h"

#include <hwc/hwc.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

#define CPC_EXPORT __attribute__((visibility("default")))

/* What libcpc says about this machine; gathered once by cpc_open(). */
struct cpc_machine {
	unsigned hwpic; /* core PMU counters the kernel exposes; 0 without a PMU */
	unsigned npic;  /* cpc_npic(): hwpic, or more so that every software event has a pic */
	bool x86;
	bool intel;     /* has the AnyThread bit (anythr) */
	char cciname[CPC_MAX_IMPL_NAME];
	char cpuref[CPC_MAX_CPUREF];
};

struct req {
	char *event;      /* as the caller named it */
	char *spec;       /* what hwc_evlist_add() takes */
	uint64_t preset;  /* from cpc_set_add_request() */
	uint64_t start;   /* where the next restart starts: preset, or cpc_request_preset()'s */
	uint64_t origin;  /* the virtual counter's value at the bind or the last restart */
	uint_t flags;
	uint_t nattrs;
	cpc_attr_t *attrs; /* private copy */
	bool hw;          /* counts on a hardware counter */
	int ev;           /* event index in the bound group; -1: counts nothing */
	bool ovf;         /* its event signals overflows */
	uint64_t base;    /* raw count at the bind or the last restart */
};

enum bind_state { UNBOUND, BOUND_CURLWP, BOUND_PCTX, BOUND_CPU };

struct __cpc_set {
	cpc_t *cpc;
	struct req *req;
	int nreq, cap;
	enum bind_state state;
	hwc_counters *counters; /* NULL when bound but no request counts */
	pid_t tid;              /* CURLWP and CPU: the binding thread; PCTX: the target */
	pthread_t thread;       /* CURLWP and CPU: the binding thread, compared without a system call */
	pctx_t *pctx;
	id_t lwpid;
	int cpu;
	cpu_set_t saved_affinity;
	struct __cpc_set *next;
};

struct __cpc_buf {
	int n;
	uint64_t *data;
	hrtime_t hrtime;
	uint64_t tick; /* ns on the counters: cpc_buf_tick() converts to cycles */
	struct __cpc_buf *next;
};

struct __cpc {
	pthread_mutex_t lock; /* the lists only */
	cpc_errhndlr_t *errfn;
	cpc_set_t *sets;
	cpc_buf_t *bufs;
	struct cpc_machine m;
};

/* The set the calling thread bound with cpc_bind_curlwp(), for the calls
 * that act on "the calling LWP's set" (cpc_set_restart() among them, from
 * the overflow signal handler: the handle's lock is only ever held with
 * that signal blocked). */
extern __thread cpc_set_t *cpc__curlwp_set __attribute__((tls_model("initial-exec")));

/* cpc.c */
/* Report SUBCODE for FN through the handler, as "text: DETAIL\n"; errno is
 * preserved across the handler. */
void cpc__err(cpc_t *cpc, const char *fn, int subcode, const char *detail);
/* errno = ERR; -1. */
int cpc__fail(int err);
/* The handle's lists change with the overflow signal blocked, so that its
 * handler (which samples and restarts) never waits for a lock its thread
 * holds. */
void cpc__lock(cpc_t *cpc, sigset_t *saved);
void cpc__unlock(cpc_t *cpc, const sigset_t *saved);

/* set.c */
/* Is SET one of CPC's sets? */
bool cpc__set_valid(cpc_t *cpc, const cpc_set_t *set);
void cpc__free_set(cpc_set_t *set);

/* bind.c */
/* The sample period that makes the kernel signal when PRESET + count wraps
 * at 2^64, or 0 when that is too far away to ever happen (2^63 or more). */
uint64_t cpc__overflow_period(uint64_t preset);

/* machine.c */
int cpc__machine(struct cpc_machine *m);
/* The TSC rate in Hz, 0 when unknown; found on the first call (it may take
 * a calibration of 25 ms), so only programs that ask for ticks pay. */
double cpc__tsc_hz(void);

/* A platform attribute, as cpc_walk_attrs() lists it, with the cpu/ term
 * it becomes (NULL for picnum, which is only checked) and its largest value. */
struct cpc_attr_def {
	const char *name;
	const char *term;
	uint64_t max;
};
/* The attributes this machine takes: *N of them. */
const struct cpc_attr_def *cpc__attrs(const struct cpc_machine *m, size_t *n);

/* Names of this machine's native (libpfm4) events, none without a core PMU. */
void cpc__walk_native(void (*fn)(void *arg, const char *name), void *arg);
/* Linux software events: an hwc extension, so that everything works on a
 * machine without a hardware PMU. */
void cpc__walk_software(void (*fn)(void *arg, const char *name), void *arg);
/* Can SPEC be counted on this machine (on the calling thread, user space)?
 * 0, or -errno with DETAIL set. */
int cpc__probe(const char *spec, char *detail, size_t size);
/* Does cpc_set_add_request() take an event whose probe gave ERR?  It
 * exists here; only limits of the moment (permissions, descriptors) stop it. */
bool cpc__probe_accepts(int err);

#endif
