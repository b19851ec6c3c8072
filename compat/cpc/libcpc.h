/*
 * libcpc: the illumos CPU performance counter library (cpc(3CPC)), as hwc
 * implements it on Linux over perf_event_open(2).  The interface is
 * illumos's; libcpc(3) lists where Linux forces a difference (SIGEMT, the
 * counter a request uses, software events).
 */
#ifndef _LIBCPC_H
#define _LIBCPC_H

#include <inttypes.h>
#include <libpctx.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>
#include <ucontext.h>

#ifdef __cplusplus
extern "C" {
#endif

/* illumos types. */
#ifndef _HWC_HRTIME_T
#define _HWC_HRTIME_T
typedef long long hrtime_t; /* nanoseconds, CLOCK_MONOTONIC */
#endif
#ifndef _HWC_PROCESSORID_T
#define _HWC_PROCESSORID_T
typedef int processorid_t;
#endif

/* A processor-specific request attribute (umask, cmask, edge, ...). */
typedef struct {
	char *ca_name;
	uint64_t ca_val;
} cpc_attr_t;

/* cpc_bind_curlwp() flags. */
#define CPC_BIND_LWP_INHERIT (0x1)
#define CPC_BIND_EMT_OVF (0x2)

#define CPC_MAX_IMPL_NAME 512
#define CPC_MAX_CPUREF 1024
#define CPC_MAX_EVENT_LEN 512
#define CPC_MAX_ATTR_LEN 32

/* cpc_set_add_request() flags. */
#define CPC_OVF_NOTIFY_EMT 0x1
#define CPC_COUNT_USER 0x2
#define CPC_COUNT_SYSTEM 0x4
#define CPC_COUNT_HV 0x8
/* illumos: the SPARC T3 counters' sample mode; accepted, no effect on Linux. */
#define CPC_COUNT_SAMPLE_MODE 0x10

/* cpc_caps() bits. */
#define CPC_CAP_OVERFLOW_INTERRUPT 0x1
#define CPC_CAP_OVERFLOW_PRECISE 0x2

/* Error subcodes passed to the cpc_seterrhndlr() handler. */
#define CPC_INVALID_EVENT 1           /* unknown event */
#define CPC_INVALID_PICNUM 2          /* requested counter out of range */
#define CPC_INVALID_ATTRIBUTE 3       /* unknown attribute */
#define CPC_ATTRIBUTE_OUT_OF_RANGE 4  /* attribute value out of range */
#define CPC_RESOURCE_UNAVAIL 5        /* a needed resource is unavailable */
#define CPC_PIC_NOT_CAPABLE 6         /* the counter cannot count the event */
#define CPC_REQ_INVALID_FLAGS 7       /* invalid flags in a request */
#define CPC_CONFLICTING_REQS 8        /* requests conflict */
#define CPC_ATTR_REQUIRES_PRIVILEGE 9 /* insufficient privilege */
#define CPC_PBIND_FAILED 10           /* cannot bind to the processor */
#define CPC_HV_NO_ACCESS 11           /* no permission for hypervisor events */

/*
 * Linux has no SIGEMT: overflow notification uses the signal cpc_sigemt()
 * returns, SIGSTKFLT unless LIBCPC_SIGEMT (a number or a name such as
 * "SIGUSR2" or "SIGRTMIN+3") or cpc_set_sigemt() chose another.  Its
 * si_code is EMT_CPCOVF (POLL_HUP) and si_fd the counter's descriptor.
 */
#ifndef SIGEMT
#define SIGEMT (cpc_sigemt())
#endif
#ifndef EMT_CPCOVF
#ifdef POLL_HUP
#define EMT_CPCOVF POLL_HUP
#else
#define EMT_CPCOVF 6 /* POLL_HUP */
#endif
#endif
extern int cpc_sigemt(void);
/* Use SIG for overflow notification from the next bind on; 0 or -1 (EINVAL). */
extern int cpc_set_sigemt(int sig);

typedef struct __cpc cpc_t;
typedef struct __cpc_set cpc_set_t;
typedef struct __cpc_buf cpc_buf_t;

/* The interface version to pass to cpc_open(). */
#define CPC_VER_CURRENT 2

extern cpc_t *cpc_open(int ver);
extern int cpc_close(cpc_t *cpc);
/* Make a pctx_run() counting sets of CPC return at its next stop, the
 * process left running; safe in a signal handler. */
extern void cpc_terminate(cpc_t *cpc);

/* This machine's counters. */
extern uint_t cpc_npic(cpc_t *cpc);
extern uint_t cpc_caps(cpc_t *cpc);
extern const char *cpc_cciname(cpc_t *cpc);
extern const char *cpc_cpuref(cpc_t *cpc);

/* A vprintf-like error handler; NULL restores the default, which writes
 * "libcpc: function: message" to stderr.  errno is preserved across it. */
typedef void(cpc_errhndlr_t)(const char *fn, int subcode, const char *fmt, va_list ap);
extern int cpc_seterrhndlr(cpc_t *cpc, cpc_errhndlr_t *fn);

extern cpc_set_t *cpc_set_create(cpc_t *cpc);
extern int cpc_set_destroy(cpc_t *cpc, cpc_set_t *set);

/* The request's index in SET, or -1 with errno set. */
extern int cpc_set_add_request(cpc_t *cpc, cpc_set_t *set, const char *event, uint64_t preset,
			       uint_t flags, uint_t nattrs, const cpc_attr_t *attrs);

extern cpc_buf_t *cpc_buf_create(cpc_t *cpc, cpc_set_t *set);
extern int cpc_buf_destroy(cpc_t *cpc, cpc_buf_t *buf);

/* Count for the calling thread, for LWP ID of a libpctx-controlled
 * process, or for one CPU. */
extern int cpc_bind_curlwp(cpc_t *cpc, cpc_set_t *set, uint_t flags);
extern int cpc_bind_pctx(cpc_t *cpc, pctx_t *pctx, id_t id, cpc_set_t *set, uint_t flags);
extern int cpc_bind_cpu(cpc_t *cpc, processorid_t id, cpc_set_t *set, uint_t flags);

/* New start value of request INDEX of the calling LWP's bound set, used
 * from the next cpc_set_restart(), which restarts a set frozen by an
 * overflow from the requests' presets. */
extern int cpc_request_preset(cpc_t *cpc, int index, uint64_t preset);
extern int cpc_set_restart(cpc_t *cpc, cpc_set_t *set);

extern int cpc_unbind(cpc_t *cpc, cpc_set_t *set);

/* Snapshot the bound SET into BUF (created for SET). */
extern int cpc_set_sample(cpc_t *cpc, cpc_set_t *set, cpc_buf_t *buf);

extern void cpc_buf_sub(cpc_t *cpc, cpc_buf_t *ds, cpc_buf_t *a, cpc_buf_t *b);
extern void cpc_buf_add(cpc_t *cpc, cpc_buf_t *ds, cpc_buf_t *a, cpc_buf_t *b);
extern void cpc_buf_copy(cpc_t *cpc, cpc_buf_t *ds, cpc_buf_t *src);
extern void cpc_buf_zero(cpc_t *cpc, cpc_buf_t *buf);

extern int cpc_buf_get(cpc_t *cpc, cpc_buf_t *buf, int index, uint64_t *val);
extern int cpc_buf_set(cpc_t *cpc, cpc_buf_t *buf, int index, uint64_t val);
extern hrtime_t cpc_buf_hrtime(cpc_t *cpc, cpc_buf_t *buf);
extern uint64_t cpc_buf_tick(cpc_t *cpc, cpc_buf_t *buf);

extern void cpc_walk_requests(cpc_t *cpc, cpc_set_t *set, void *arg,
			      void (*action)(void *arg, int index, const char *event,
					     uint64_t preset, uint_t flags, int nattrs,
					     const cpc_attr_t *attrs));

extern void cpc_walk_events_all(cpc_t *cpc, void *arg,
				void (*action)(void *arg, const char *event));
extern void cpc_walk_generic_events_all(cpc_t *cpc, void *arg,
					void (*action)(void *arg, const char *event));
extern void cpc_walk_events_pic(cpc_t *cpc, uint_t picno, void *arg,
				void (*action)(void *arg, uint_t picno, const char *event));
extern void cpc_walk_generic_events_pic(cpc_t *cpc, uint_t picno, void *arg,
					void (*action)(void *arg, uint_t picno,
						       const char *event));
extern void cpc_walk_attrs(cpc_t *cpc, void *arg, void (*action)(void *arg, const char *attr));

/* Start and stop the counters of the calling LWP's bound set. */
extern int cpc_enable(cpc_t *cpc);
extern int cpc_disable(cpc_t *cpc);

#ifdef __cplusplus
}
#endif

#endif
