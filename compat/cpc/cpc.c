/*
 * libcpc on Linux: illumos's sets, requests and buffers over libhwc.
 *
 * A set becomes one hwc event group (one perf group: its requests are
 * scheduled on the counters together, as a cpc set is programmed at once).
 * Requests keep illumos's 64-bit virtual counters: a request reads as its
 * preset plus what was counted since the bind or the last restart.  With
 * CPC_OVF_NOTIFY_EMT the request's perf event gets a sample period of
 * 2^64 - preset, so the kernel signals exactly when the virtual counter
 * wraps; that request leads the group, so the whole set stops there until
 * cpc_set_restart(), as on illumos.  cpc_impl.h says which file holds what;
 * this one holds the handle, the error reports and the overflow signal.
 */
#include "cpc_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

/* ---------------------------------------------------------------- errors */

static const char *const subcode_text[] = {
	"",
	"Unknown event",
	"Invalid counter number",
	"Unknown attribute",
	"Attribute out of range",
	"Hardware resource unavailable",
	"Counter cannot count requested event",
	"Invalid flags in a request",
	"Requests conflict with each other",
	"Insufficient privilege",
	"Couldn't bind LWP to requested processor",
	"No permission for hypervisor events",
};

static void call_handler(cpc_errhndlr_t *h, const char *fn, int subcode, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	h(fn, subcode, fmt, ap);
	va_end(ap);
}

void cpc__err(cpc_t *cpc, const char *fn, int subcode, const char *detail)
{
	int saved = errno;
	char buf[1536];
	snprintf(buf, sizeof(buf), "%s%s%s\n", subcode_text[subcode], *detail ? ": " : "",
		 detail);
	if (cpc->errfn)
		call_handler(cpc->errfn, fn, subcode, "%s", buf);
	else
		fprintf(stderr, "libcpc: %s: %s", fn, buf);
	errno = saved;
}

int cpc__fail(int err)
{
	errno = err;
	return -1;
}

/* ---------------------------------------------------------------- SIGEMT */

static volatile int sigemt_sig; /* 0: not chosen yet */

static int default_sigemt(void)
{
#ifdef SIGSTKFLT
	return SIGSTKFLT; /* never raised by Linux on x86 or arm64 */
#else
	return SIGRTMIN + 3;
#endif
}

static bool deliverable(int sig)
{
	return sig > 0 && sig < NSIG && sig != SIGKILL && sig != SIGSTOP;
}

/* "16", "SIGUSR2", "usr2", "SIGRTMIN+3", "RTMAX-1"; 0 if not a signal. */
static int parse_signal(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (end != s && !*end)
		return deliverable((int)n) ? (int)n : 0;
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (const char *base = "RTMIN"; base; base = strcmp(base, "RTMIN") == 0 ? "RTMAX" : NULL) {
		size_t len = strlen(base);
		if (strncasecmp(s, base, len) != 0)
			continue;
		long off = 0;
		if (s[len]) {
			off = strtol(s + len, &end, 10);
			if (*end || (s[len] != '+' && s[len] != '-'))
				return 0;
		}
		long sig = (base[4] == 'N' ? SIGRTMIN : SIGRTMAX) + off;
		return sig >= SIGRTMIN && sig <= SIGRTMAX ? (int)sig : 0;
	}
	for (int sig = 1; sig < SIGRTMIN; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && strcasecmp(abbrev, s) == 0)
			return deliverable(sig) ? sig : 0;
	}
	return 0;
}

/* The signal from LIBCPC_SIGEMT, the default without it, 0 if it is bad. */
static int env_sigemt(void)
{
	const char *env = getenv("LIBCPC_SIGEMT");
	return env && *env ? parse_signal(env) : default_sigemt();
}

CPC_EXPORT int cpc_sigemt(void)
{
	int sig = sigemt_sig;
	if (sig)
		return sig;
	sig = env_sigemt();
	return sig ? sig : default_sigemt();
}

CPC_EXPORT int cpc_set_sigemt(int sig)
{
	if (!deliverable(sig))
		return cpc__fail(EINVAL);
	sigemt_sig = sig;
	return 0;
}

/* ---------------------------------------------------------------- handle */

void cpc__lock(cpc_t *cpc, sigset_t *saved)
{
	/* Every signal, not only the overflow one: a handler (the overflow
	 * handler, or one calling cpc_terminate()) may take the lock, and it
	 * must never wait for its own thread. */
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, saved);
	pthread_mutex_lock(&cpc->lock);
}

void cpc__unlock(cpc_t *cpc, const sigset_t *saved)
{
	pthread_mutex_unlock(&cpc->lock);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

CPC_EXPORT cpc_t *cpc_open(int ver)
{
	if (ver != CPC_VER_CURRENT) {
		errno = EINVAL;
		return NULL;
	}
	if (!sigemt_sig && !env_sigemt()) {
		fprintf(stderr, "libcpc: cpc_open: LIBCPC_SIGEMT='%s' is not a signal this process "
				"can receive (a number, or a name such as SIGUSR2 or SIGRTMIN+3)\n",
			getenv("LIBCPC_SIGEMT"));
		errno = EINVAL;
		return NULL;
	}
	/* The counters are accessible if this thread may count a software
	 * event in user space (perf_event_paranoid 3 forbids even that). */
	char detail[1024];
	int err = cpc__probe("task-clock", detail, sizeof(detail));
	if (err == -EACCES || err == -EPERM) {
		fprintf(stderr, "libcpc: cpc_open: %s\n", detail);
		errno = EACCES;
		return NULL;
	}
	cpc_t *cpc = calloc(1, sizeof(*cpc));
	if (!cpc) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&cpc->lock, NULL);
	if ((err = cpc__machine(&cpc->m))) {
		free(cpc);
		errno = -err;
		return NULL;
	}
	return cpc;
}

CPC_EXPORT int cpc_close(cpc_t *cpc)
{
	while (cpc->sets) {
		cpc_set_t *s = cpc->sets;
		if (s->state != UNBOUND)
			cpc_unbind(cpc, s);
		sigset_t saved;
		cpc__lock(cpc, &saved);
		cpc->sets = s->next;
		cpc__unlock(cpc, &saved);
		cpc__free_set(s);
	}
	while (cpc->bufs) {
		cpc_buf_t *b = cpc->bufs;
		cpc->bufs = b->next;
		free(b->data);
		free(b);
	}
	pthread_mutex_destroy(&cpc->lock);
	free(cpc);
	return 0;
}

/* From a signal handler too: the lock is only ever held with every signal
 * blocked, so it is never held by the thread the handler interrupted; and
 * pctx_terminate() ignores a handle that libpctx has already freed. */
CPC_EXPORT void cpc_terminate(cpc_t *cpc)
{
	int saved_errno = errno;
	sigset_t saved;
	cpc__lock(cpc, &saved);
	for (cpc_set_t *s = cpc->sets; s; s = s->next)
		if (s->state == BOUND_PCTX && s->pctx)
			pctx_terminate(s->pctx);
	cpc__unlock(cpc, &saved);
	errno = saved_errno;
}

CPC_EXPORT uint_t cpc_npic(cpc_t *cpc)
{
	return cpc->m.npic;
}

CPC_EXPORT uint_t cpc_caps(cpc_t *cpc)
{
	(void)cpc;
	/* Every event perf can count can also signal an overflow (software
	 * events included), and the signal names the request (si_fd). */
	return CPC_CAP_OVERFLOW_INTERRUPT | CPC_CAP_OVERFLOW_PRECISE;
}

CPC_EXPORT const char *cpc_cciname(cpc_t *cpc)
{
	return cpc->m.cciname;
}

CPC_EXPORT const char *cpc_cpuref(cpc_t *cpc)
{
	return cpc->m.cpuref;
}

CPC_EXPORT int cpc_seterrhndlr(cpc_t *cpc, cpc_errhndlr_t *fn)
{
	cpc->errfn = fn;
	return 0;
}
