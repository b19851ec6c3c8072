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
 * cpc_set_restart(), as on illumos.
 */
#include "cpc_impl.h"

#include <errno.h>
#include <hwc/hwc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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
static __thread cpc_set_t *curlwp_set __attribute__((tls_model("initial-exec")));

static pid_t self_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

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

/* Report SUBCODE for FN through the handler, as "text: DETAIL\n"; errno is
 * preserved across the handler. */
static void cpc_err(cpc_t *cpc, const char *fn, int subcode, const char *detail)
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

static int fail(int err)
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
		return fail(EINVAL);
	sigemt_sig = sig;
	return 0;
}

/* ---------------------------------------------------------------- handle */

/* Lists change with the overflow signal blocked, so that its handler
 * (which samples and restarts) never waits for a lock its thread holds. */
static void lock(cpc_t *cpc, sigset_t *saved)
{
	sigset_t emt;
	sigemptyset(&emt);
	sigaddset(&emt, cpc_sigemt());
	pthread_sigmask(SIG_BLOCK, &emt, saved);
	pthread_mutex_lock(&cpc->lock);
}

static void unlock(cpc_t *cpc, const sigset_t *saved)
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

static void free_set(cpc_set_t *set);

CPC_EXPORT int cpc_close(cpc_t *cpc)
{
	while (cpc->sets) {
		cpc_set_t *s = cpc->sets;
		if (s->state != UNBOUND)
			cpc_unbind(cpc, s);
		cpc->sets = s->next;
		free_set(s);
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

/* ---------------------------------------------------------------- sets */

static bool set_valid(cpc_t *cpc, const cpc_set_t *set)
{
	sigset_t saved;
	lock(cpc, &saved);
	const cpc_set_t *s = cpc->sets;
	while (s && s != set)
		s = s->next;
	unlock(cpc, &saved);
	return s != NULL;
}

CPC_EXPORT cpc_set_t *cpc_set_create(cpc_t *cpc)
{
	cpc_set_t *set = calloc(1, sizeof(*set));
	if (!set) {
		errno = ENOMEM;
		return NULL;
	}
	set->cpc = cpc;
	set->cpu = -1;
	sigset_t saved;
	lock(cpc, &saved);
	set->next = cpc->sets;
	cpc->sets = set;
	unlock(cpc, &saved);
	return set;
}

static void free_req(struct req *r)
{
	free(r->event);
	free(r->spec);
	for (uint_t i = 0; i < r->nattrs; i++)
		free(r->attrs[i].ca_name);
	free(r->attrs);
}

static void free_set(cpc_set_t *set)
{
	for (int i = 0; i < set->nreq; i++)
		free_req(&set->req[i]);
	free(set->req);
	free(set);
}

CPC_EXPORT int cpc_set_destroy(cpc_t *cpc, cpc_set_t *set)
{
	if (!set_valid(cpc, set))
		return fail(EINVAL);
	if (set->state != UNBOUND)
		cpc_unbind(cpc, set);
	sigset_t saved;
	lock(cpc, &saved);
	cpc_set_t **pp = &cpc->sets;
	while (*pp && *pp != set)
		pp = &(*pp)->next;
	if (*pp)
		*pp = set->next;
	unlock(cpc, &saved);
	free_set(set);
	return 0;
}

/* ---------------------------------------------------------------- requests */

static bool is_hw_type(uint32_t type)
{
	return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW;
}

/* The attributes this platform takes, as cpc_walk_attrs() lists them, with
 * the cpu/ term each becomes and its largest value. */
struct attr_def {
	const char *name;
	const char *term;
	uint64_t max;
};

static const struct attr_def x86_attrs[] = {
	{"picnum", NULL, 0}, {"edge", "edge", 1},   {"inv", "inv", 1},
	{"umask", "umask", 0xff}, {"cmask", "cmask", 0xff}, {"anythr", "any", 1},
};

static size_t nattr_defs(const cpc_t *cpc)
{
	if (!cpc->m.x86)
		return 1; /* picnum only */
	return cpc->m.intel ? 6 : 5;
}

static const struct attr_def *find_attr(const cpc_t *cpc, const char *name)
{
	for (size_t i = 0; i < nattr_defs(cpc); i++)
		if (strcmp(x86_attrs[i].name, name) == 0)
			return &x86_attrs[i];
	return NULL;
}

/* Resolve EVENT alone: 0 and what it is, or -errno with DETAIL. */
static int resolve(const char *spec, struct hwc_event *out, char *detail, size_t size)
{
	hwc_evlist *l;
	int err = hwc_evlist_new(&l);
	if (!err)
		err = hwc_evlist_add(l, spec);
	if (err) {
		snprintf(detail, size, "%s", hwc_errdetail());
	} else if (hwc_evlist_size(l) != 1) {
		snprintf(detail, size, "'%s' names %zu events; a request counts one", spec,
			 hwc_evlist_size(l));
		err = -EINVAL;
	} else {
		*out = *hwc_evlist_event(l, 0);
		out->name = out->pmu = out->origin = out->unit = NULL; /* freed below */
	}
	hwc_evlist_free(l);
	return err;
}

/* Build R->spec from the event name and the attributes.  0, or -1 with
 * errno EINVAL after reporting the subcode through the handler. */
static int make_spec(cpc_t *cpc, struct req *r)
{
	static const char fn[] = "cpc_set_add_request";
	char detail[1024];
	const char *name = r->event;
	if (!*name || strlen(name) >= CPC_MAX_EVENT_LEN || strpbrk(name, ",{}/ \t\n")) {
		snprintf(detail, sizeof(detail), "'%s' is not an event name", name);
		cpc_err(cpc, fn, CPC_INVALID_EVENT, detail);
		return fail(EINVAL);
	}
	/* A raw event code (strtol(3) syntax, not 0), as illumos allows. */
	char *end;
	unsigned long long raw = strtoull(name, &end, 0);
	bool is_raw = !*end && raw != 0 && name[0] != '-';
	struct hwc_event ev;
	char base[96];
	if (is_raw) {
		snprintf(base, sizeof(base), "event=%#llx", raw);
		r->hw = true;
	} else {
		if (resolve(name, &ev, detail, sizeof(detail))) {
			cpc_err(cpc, fn, CPC_INVALID_EVENT, detail);
			return fail(EINVAL);
		}
		if (ev.explicit_priv) {
			snprintf(detail, sizeof(detail),
				 "'%s' chooses its privilege levels; use CPC_COUNT_USER and "
				 "CPC_COUNT_SYSTEM instead",
				 name);
			cpc_err(cpc, fn, CPC_INVALID_EVENT, detail);
			return fail(EINVAL);
		}
		r->hw = is_hw_type(ev.attr.type);
		int n = snprintf(base, sizeof(base), "config=%#llx", (unsigned long long)ev.attr.config);
		if (ev.attr.config1)
			n += snprintf(base + n, sizeof(base) - (size_t)n, ",config1=%#llx",
				      (unsigned long long)ev.attr.config1);
		if (ev.attr.config2)
			snprintf(base + n, sizeof(base) - (size_t)n, ",config2=%#llx",
				 (unsigned long long)ev.attr.config2);
	}
	char terms[512] = "";
	size_t tlen = 0;
	for (uint_t i = 0; i < r->nattrs; i++) {
		const cpc_attr_t *a = &r->attrs[i];
		const struct attr_def *def = find_attr(cpc, a->ca_name);
		if (!def) {
			int n = snprintf(detail, sizeof(detail), "'%s'; this platform's are:", a->ca_name);
			for (size_t k = 0; k < nattr_defs(cpc); k++)
				n += snprintf(detail + n, sizeof(detail) - (size_t)n, " %s",
					      x86_attrs[k].name);
			cpc_err(cpc, fn, CPC_INVALID_ATTRIBUTE, detail);
			return fail(EINVAL);
		}
		if (!def->term) { /* picnum: the kernel picks the counter on Linux */
			if (r->hw && a->ca_val >= cpc->m.npic) {
				snprintf(detail, sizeof(detail), "picnum %llu, but this machine has %u "
								 "counters",
					 (unsigned long long)a->ca_val, cpc->m.npic);
				cpc_err(cpc, fn, CPC_INVALID_PICNUM, detail);
				return fail(EINVAL);
			}
			continue;
		}
		if (!is_raw && (!r->hw || ev.attr.type != PERF_TYPE_RAW)) {
			snprintf(detail, sizeof(detail),
				 "'%s' applies only to processor events; '%s' is a %s event", a->ca_name,
				 name, r->hw ? "Linux generic" : hwc_source_name(ev.source));
			cpc_err(cpc, fn, CPC_INVALID_ATTRIBUTE, detail);
			return fail(EINVAL);
		}
		if (a->ca_val > def->max) {
			snprintf(detail, sizeof(detail), "%s=%#llx (at most %#llx)", a->ca_name,
				 (unsigned long long)a->ca_val, (unsigned long long)def->max);
			cpc_err(cpc, fn, CPC_ATTRIBUTE_OUT_OF_RANGE, detail);
			return fail(EINVAL);
		}
		tlen += (size_t)snprintf(terms + tlen, sizeof(terms) - tlen, ",%s=%#llx", def->term,
					 (unsigned long long)a->ca_val);
	}
	char spec[1024];
	if (is_raw || tlen)
		snprintf(spec, sizeof(spec), "cpu/%s%s/", base, terms);
	else
		snprintf(spec, sizeof(spec), "%s", name);
	if (is_raw || tlen) {
		struct hwc_event check;
		if (resolve(spec, &check, detail, sizeof(detail))) {
			cpc_err(cpc, fn, is_raw && !tlen ? CPC_INVALID_EVENT : CPC_ATTRIBUTE_OUT_OF_RANGE,
				detail);
			return fail(EINVAL);
		}
	}
	/* Known here, but can this machine count it? */
	int err = cpc__probe(spec, detail, sizeof(detail));
	if (err && err != -EACCES && err != -EPERM && err != -EMFILE && err != -ENFILE) {
		cpc_err(cpc, fn, CPC_INVALID_EVENT, detail);
		return fail(EINVAL);
	}
	r->spec = strdup(spec);
	return r->spec ? 0 : fail(ENOMEM);
}

CPC_EXPORT int cpc_set_add_request(cpc_t *cpc, cpc_set_t *set, const char *event,
				   uint64_t preset, uint_t flags, uint_t nattrs,
				   const cpc_attr_t *attrs)
{
	static const char fn[] = "cpc_set_add_request";
	if (!set_valid(cpc, set) || set->state != UNBOUND || !event || (nattrs && !attrs))
		return fail(EINVAL);
	const uint_t all = CPC_OVF_NOTIFY_EMT | CPC_COUNT_USER | CPC_COUNT_SYSTEM | CPC_COUNT_HV;
	if (flags & ~all) {
		char detail[128];
		snprintf(detail, sizeof(detail), "%#x (valid: CPC_COUNT_USER, CPC_COUNT_SYSTEM, "
						 "CPC_COUNT_HV, CPC_OVF_NOTIFY_EMT)",
			 flags);
		cpc_err(cpc, fn, CPC_REQ_INVALID_FLAGS, detail);
		return fail(EINVAL);
	}
	for (uint_t i = 0; i < nattrs; i++)
		if (!attrs[i].ca_name || !attrs[i].ca_name[0]) {
			cpc_err(cpc, fn, CPC_INVALID_ATTRIBUTE, "an attribute has no name");
			return fail(EINVAL);
		}
	struct req r = {.preset = preset, .flags = flags, .nattrs = nattrs, .ev = -1};
	r.event = strdup(event);
	r.attrs = nattrs ? calloc(nattrs, sizeof(*r.attrs)) : NULL;
	bool nomem = !r.event || (nattrs && !r.attrs);
	for (uint_t i = 0; !nomem && i < nattrs; i++) {
		r.attrs[i].ca_val = attrs[i].ca_val;
		nomem = !(r.attrs[i].ca_name = strdup(attrs[i].ca_name));
	}
	if (nomem) {
		free_req(&r);
		return fail(ENOMEM);
	}
	if (make_spec(cpc, &r) < 0) {
		int e = errno;
		free_req(&r);
		return fail(e);
	}
	if (set->nreq == set->cap) {
		int cap = set->cap ? set->cap * 2 : 4;
		struct req *p = realloc(set->req, (size_t)cap * sizeof(*p));
		if (!p) {
			free_req(&r);
			return fail(ENOMEM);
		}
		set->req = p;
		set->cap = cap;
	}
	set->req[set->nreq] = r;
	return set->nreq++;
}

CPC_EXPORT void cpc_walk_requests(cpc_t *cpc, cpc_set_t *set, void *arg,
				  void (*action)(void *arg, int index, const char *event,
						 uint64_t preset, uint_t flags, int nattrs,
						 const cpc_attr_t *attrs))
{
	if (!set_valid(cpc, set))
		return;
	for (int i = 0; i < set->nreq; i++) {
		const struct req *r = &set->req[i];
		action(arg, i, r->event, r->preset, r->flags, (int)r->nattrs, r->attrs);
	}
}

/* ---------------------------------------------------------------- buffers */

CPC_EXPORT cpc_buf_t *cpc_buf_create(cpc_t *cpc, cpc_set_t *set)
{
	if (!set_valid(cpc, set)) {
		errno = EINVAL;
		return NULL;
	}
	cpc_buf_t *buf = calloc(1, sizeof(*buf));
	if (buf)
		buf->data = calloc(set->nreq ? (size_t)set->nreq : 1, sizeof(uint64_t));
	if (!buf || !buf->data) {
		if (buf)
			free(buf);
		errno = ENOMEM;
		return NULL;
	}
	buf->n = set->nreq;
	sigset_t saved;
	lock(cpc, &saved);
	buf->next = cpc->bufs;
	cpc->bufs = buf;
	unlock(cpc, &saved);
	return buf;
}

CPC_EXPORT int cpc_buf_destroy(cpc_t *cpc, cpc_buf_t *buf)
{
	sigset_t saved;
	lock(cpc, &saved);
	cpc_buf_t **pp = &cpc->bufs;
	while (*pp && *pp != buf)
		pp = &(*pp)->next;
	bool found = *pp != NULL;
	if (found)
		*pp = buf->next;
	unlock(cpc, &saved);
	if (!found)
		return fail(EINVAL);
	free(buf->data);
	free(buf);
	return 0;
}

CPC_EXPORT int cpc_buf_get(cpc_t *cpc, cpc_buf_t *buf, int index, uint64_t *val)
{
	(void)cpc;
	if (index < 0 || index >= buf->n)
		return fail(EINVAL);
	*val = buf->data[index];
	return 0;
}

CPC_EXPORT int cpc_buf_set(cpc_t *cpc, cpc_buf_t *buf, int index, uint64_t val)
{
	(void)cpc;
	if (index < 0 || index >= buf->n)
		return fail(EINVAL);
	buf->data[index] = val;
	return 0;
}

CPC_EXPORT hrtime_t cpc_buf_hrtime(cpc_t *cpc, cpc_buf_t *buf)
{
	(void)cpc;
	return buf->hrtime;
}

CPC_EXPORT uint64_t cpc_buf_tick(cpc_t *cpc, cpc_buf_t *buf)
{
	(void)cpc;
	return (uint64_t)((double)buf->tick * cpc__tsc_hz() / 1e9);
}

CPC_EXPORT void cpc_buf_sub(cpc_t *cpc, cpc_buf_t *ds, cpc_buf_t *a, cpc_buf_t *b)
{
	(void)cpc;
	if (a->n != ds->n || b->n != ds->n)
		return;
	ds->hrtime = a->hrtime > b->hrtime ? a->hrtime : b->hrtime;
	ds->tick = a->tick - b->tick;
	for (int i = 0; i < ds->n; i++)
		ds->data[i] = a->data[i] - b->data[i];
}

CPC_EXPORT void cpc_buf_add(cpc_t *cpc, cpc_buf_t *ds, cpc_buf_t *a, cpc_buf_t *b)
{
	(void)cpc;
	if (a->n != ds->n || b->n != ds->n)
		return;
	ds->hrtime = a->hrtime > b->hrtime ? a->hrtime : b->hrtime;
	ds->tick = a->tick + b->tick;
	for (int i = 0; i < ds->n; i++)
		ds->data[i] = a->data[i] + b->data[i];
}

CPC_EXPORT void cpc_buf_copy(cpc_t *cpc, cpc_buf_t *ds, cpc_buf_t *src)
{
	(void)cpc;
	if (ds->n != src->n)
		return;
	memcpy(ds->data, src->data, (size_t)ds->n * sizeof(uint64_t));
	ds->hrtime = src->hrtime;
	ds->tick = src->tick;
}

CPC_EXPORT void cpc_buf_zero(cpc_t *cpc, cpc_buf_t *buf)
{
	(void)cpc;
	memset(buf->data, 0, (size_t)buf->n * sizeof(uint64_t));
	buf->hrtime = 0;
	buf->tick = 0;
}

/* ---------------------------------------------------------------- binding */

/* The sample period that makes the kernel signal when PRESET + count wraps
 * at 2^64, or 0 when that is too far away to ever happen (2^63 or more). */
static uint64_t overflow_period(uint64_t preset)
{
	uint64_t period = 0 - preset;
	return preset == 0 || period >> 63 ? 0 : period;
}

static bool counts(const struct req *r)
{
	return r->flags & (CPC_COUNT_USER | CPC_COUNT_SYSTEM | CPC_COUNT_HV);
}

/* Map an -errno of hwc to errno, reporting the subcode through the handler. */
static int bind_error(cpc_t *cpc, const char *fn, int err, const char *detail)
{
	int e = -err, sub = 0;
	switch (e) {
	case EACCES:
	case EPERM:
		e = EACCES;
		sub = CPC_ATTR_REQUIRES_PRIVILEGE;
		break;
	case ENOENT:
	case ENODEV:
		e = EINVAL;
		sub = CPC_RESOURCE_UNAVAIL;
		break;
	case EOPNOTSUPP:
		e = ENOTSUP;
		sub = CPC_RESOURCE_UNAVAIL;
		break;
	case EBUSY:
		e = EAGAIN;
		sub = CPC_RESOURCE_UNAVAIL;
		break;
	case EINVAL:
		sub = CPC_RESOURCE_UNAVAIL;
		break;
	default:
		break;
	}
	if (sub)
		cpc_err(cpc, fn, sub, detail);
	return fail(e);
}

static void release_counters(cpc_set_t *set)
{
	hwc_counters_close(set->counters);
	set->counters = NULL;
	for (int i = 0; i < set->nreq; i++)
		set->req[i].ev = -1;
}

/* Open SET's requests as one group on TARGET and start them; overflow
 * signals go to thread SIG_TID. */
static int bind_set(cpc_t *cpc, cpc_set_t *set, const char *fn, const struct hwc_target *target,
		    pid_t sig_tid)
{
	/* The first request with CPC_OVF_NOTIFY_EMT leads: its overflow
	 * stops the whole group. */
	int lead = -1;
	for (int i = 0; i < set->nreq && lead < 0; i++)
		if (counts(&set->req[i]) && (set->req[i].flags & CPC_OVF_NOTIFY_EMT) &&
		    overflow_period(set->req[i].preset))
			lead = i;
	int *order = malloc((size_t)set->nreq * sizeof(*order)), n = 0;
	if (!order)
		return fail(ENOMEM);
	if (lead >= 0)
		order[n++] = lead;
	for (int i = 0; i < set->nreq; i++)
		if (i != lead && counts(&set->req[i]))
			order[n++] = i;
	for (int i = 0; i < set->nreq; i++) {
		struct req *r = &set->req[i];
		r->ev = -1;
		r->ovf = false;
		r->base = 0;
		r->start = r->origin = r->preset;
	}
	if (n == 0) {
		free(order);
		return 0; /* nothing counts: every request stays at its preset */
	}
	size_t len = 3;
	for (int k = 0; k < n; k++)
		len += strlen(set->req[order[k]].spec) + 1;
	char *spec = malloc(len);
	if (!spec) {
		free(order);
		return fail(ENOMEM);
	}
	size_t off = 0;
	spec[off++] = '{';
	for (int k = 0; k < n; k++)
		off += (size_t)sprintf(spec + off, "%s%s", k ? "," : "", set->req[order[k]].spec);
	spec[off++] = '}';
	spec[off] = '\0';
	hwc_evlist *l;
	int err = hwc_evlist_new(&l);
	if (!err)
		err = hwc_evlist_add(l, spec);
	free(spec);
	if (err) {
		char detail[1024];
		snprintf(detail, sizeof(detail), "%s", hwc_errdetail());
		hwc_evlist_free(l);
		free(order);
		return bind_error(cpc, fn, err, detail);
	}
	for (int k = 0; k < n; k++) {
		struct req *r = &set->req[order[k]];
		struct perf_event_attr *a = hwc_evlist_attr(l, (size_t)k);
		a->exclude_user = !(r->flags & CPC_COUNT_USER);
		a->exclude_kernel = !(r->flags & CPC_COUNT_SYSTEM);
		a->exclude_hv = !(r->flags & CPC_COUNT_HV);
		if (r->flags & CPC_OVF_NOTIFY_EMT)
			a->sample_period = overflow_period(r->preset);
		r->ev = k;
	}
	err = hwc_counters_open(&set->counters, l, target);
	hwc_evlist_free(l);
	for (int k = 0; !err && k < n; k++) {
		struct req *r = &set->req[order[k]];
		r->ovf = (r->flags & CPC_OVF_NOTIFY_EMT) && overflow_period(r->preset);
		if (r->ovf)
			err = hwc_counters_overflow_signal(set->counters, 0, (size_t)k, cpc_sigemt(),
							   sig_tid);
	}
	if (!err)
		err = hwc_counters_start(set->counters);
	free(order);
	if (err) {
		char detail[1024];
		snprintf(detail, sizeof(detail), "%s", hwc_errdetail());
		release_counters(set);
		return bind_error(cpc, fn, err, detail);
	}
	return 0;
}

static int check_bindable(cpc_t *cpc, cpc_set_t *set)
{
	if (!set_valid(cpc, set) || set->nreq <= 0)
		return fail(EINVAL);
	if (set->state != UNBOUND)
		cpc_unbind(cpc, set);
	return 0;
}

CPC_EXPORT int cpc_bind_curlwp(cpc_t *cpc, cpc_set_t *set, uint_t flags)
{
	static const char fn[] = "cpc_bind_curlwp";
	if (flags & ~(uint_t)CPC_BIND_LWP_INHERIT)
		return fail(EINVAL);
	if (check_bindable(cpc, set))
		return -1;
	if (flags & CPC_BIND_LWP_INHERIT)
		for (int i = 0; i < set->nreq; i++)
			if (set->req[i].flags & CPC_OVF_NOTIFY_EMT) {
				cpc_err(cpc, fn, CPC_REQ_INVALID_FLAGS,
					"CPC_OVF_NOTIFY_EMT cannot be combined with "
					"CPC_BIND_LWP_INHERIT on Linux: the kernel cannot stop "
					"inherited counters at an overflow");
				return fail(ENOTSUP);
			}
	/* One set per LWP: binding replaces the calling LWP's previous set. */
	cpc_set_t *old = curlwp_set;
	if (old && old != set && set_valid(cpc, old) && old->state == BOUND_CURLWP)
		cpc_unbind(cpc, old);
	struct hwc_target t = {.kind = HWC_TARGET_SELF,
			       .flags = HWC_NO_FALLBACK | ((flags & CPC_BIND_LWP_INHERIT)
								  ? HWC_THREADS_ONLY
								  : HWC_NO_INHERIT)};
	pid_t tid = self_tid();
	if (bind_set(cpc, set, fn, &t, tid))
		return -1;
	set->state = BOUND_CURLWP;
	set->tid = tid;
	set->thread = pthread_self();
	curlwp_set = set;
	return 0;
}

CPC_EXPORT int cpc_bind_pctx(cpc_t *cpc, pctx_t *pctx, id_t id, cpc_set_t *set, uint_t flags)
{
	static const char fn[] = "cpc_bind_pctx";
	if (flags != 0 || !pctx)
		return fail(EINVAL);
	if (check_bindable(cpc, set))
		return -1;
	pid_t tid = pctx_lwp_tid(pctx, id);
	if (tid < 0)
		return fail(ESRCH);
	/* One set per LWP: replace the one bound to this LWP before. */
	for (;;) {
		sigset_t saved;
		lock(cpc, &saved);
		cpc_set_t *s = cpc->sets;
		while (s && !(s != set && s->state == BOUND_PCTX && s->pctx == pctx && s->lwpid == id))
			s = s->next;
		unlock(cpc, &saved);
		if (!s)
			break;
		cpc_unbind(cpc, s);
	}
	struct hwc_target t = {.kind = HWC_TARGET_THREAD,
			       .pid = tid,
			       .flags = HWC_NO_INHERIT | HWC_NO_FALLBACK};
	if (bind_set(cpc, set, fn, &t, tid))
		return -1;
	set->state = BOUND_PCTX;
	set->pctx = pctx;
	set->lwpid = id;
	set->tid = tid;
	return 0;
}

/* 1 if CPU is online, 0 if it exists but is offline, -1 if it does not exist. */
static int cpu_online(int cpu)
{
	char path[64];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	if (cpu < 0 || access(path, F_OK) != 0)
		return -1;
	int cpus[CPU_SETSIZE];
	int n = hwc_online_cpus(cpus, CPU_SETSIZE);
	for (int i = 0; i < n && i < CPU_SETSIZE; i++)
		if (cpus[i] == cpu)
			return 1;
	return 0;
}

CPC_EXPORT int cpc_bind_cpu(cpc_t *cpc, processorid_t id, cpc_set_t *set, uint_t flags)
{
	static const char fn[] = "cpc_bind_cpu";
	if (flags != 0)
		return fail(EINVAL);
	if (check_bindable(cpc, set))
		return -1;
	int state = id >= CPU_SETSIZE ? -1 : cpu_online(id);
	if (state < 0)
		return fail(EINVAL);
	if (state == 0)
		return fail(ENOSYS);
	/* As on illumos, the calling LWP moves to the CPU it measures. */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(id, &one);
	if (sched_getaffinity(0, sizeof(set->saved_affinity), &set->saved_affinity) < 0 ||
	    sched_setaffinity(0, sizeof(one), &one) < 0) {
		int e = errno;
		char detail[128];
		snprintf(detail, sizeof(detail), "CPU %d: %s", (int)id, strerror(e));
		cpc_err(cpc, fn, CPC_PBIND_FAILED, detail);
		return fail(e);
	}
	int cpu = id;
	struct hwc_target t = {.kind = HWC_TARGET_CPUS, .cpus = &cpu, .ncpus = 1,
			       .flags = HWC_NO_FALLBACK};
	pid_t tid = self_tid();
	if (bind_set(cpc, set, fn, &t, tid)) {
		int e = errno;
		sched_setaffinity(0, sizeof(set->saved_affinity), &set->saved_affinity);
		return fail(e);
	}
	set->state = BOUND_CPU;
	set->cpu = id;
	set->tid = tid;
	set->thread = pthread_self();
	return 0;
}

CPC_EXPORT int cpc_unbind(cpc_t *cpc, cpc_set_t *set)
{
	if (!set_valid(cpc, set) || set->state == UNBOUND)
		return fail(EINVAL);
	release_counters(set);
	int ret = 0;
	if (set->state == BOUND_CPU &&
	    sched_setaffinity(0, sizeof(set->saved_affinity), &set->saved_affinity) < 0)
		ret = -1;
	if (set->state == BOUND_CURLWP && curlwp_set == set)
		curlwp_set = NULL;
	set->state = UNBOUND;
	set->pctx = NULL;
	set->tid = 0;
	set->cpu = -1;
	return ret;
}

/* ---------------------------------------------------------------- sampling */

static hrtime_t hrtime_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrtime_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Still bound to its CPU only?  illumos says EAGAIN otherwise. */
static bool on_own_cpu(const cpc_set_t *set)
{
	cpu_set_t now;
	if (!pthread_equal(pthread_self(), set->thread) ||
	    sched_getaffinity(0, sizeof(now), &now) < 0)
		return false;
	return CPU_COUNT(&now) == 1 && CPU_ISSET(set->cpu, &now);
}

/* Safe in a signal handler: reads and arithmetic only. */
CPC_EXPORT int cpc_set_sample(cpc_t *cpc, cpc_set_t *set, cpc_buf_t *buf)
{
	if (set->cpc != cpc || set->state == UNBOUND || buf->n != set->nreq)
		return fail(EINVAL);
	if (set->state == BOUND_CURLWP && !pthread_equal(pthread_self(), set->thread))
		return fail(EINVAL); /* only the LWP that bound it samples it */
	if (set->state == BOUND_CPU && !on_own_cpu(set))
		return fail(EAGAIN);
	uint64_t running = 0;
	if (set->counters) {
		int err = hwc_counters_read(set->counters);
		if (err)
			return fail(-err);
	}
	for (int i = 0; i < set->nreq; i++) {
		const struct req *r = &set->req[i];
		uint64_t v = r->origin;
		struct hwc_value val;
		if (r->ev >= 0 && hwc_counters_value(set->counters, 0, (size_t)r->ev, &val) == 0) {
			v += val.raw - r->base; /* wraps at 2^64 like the illumos counter */
			running = val.running;
		}
		buf->data[i] = v;
	}
	buf->hrtime = hrtime_now();
	buf->tick = running;
	return 0;
}

/* The calling LWP's bound set, if it is CPC's and still exists. */
static cpc_set_t *own_set(cpc_t *cpc)
{
	cpc_set_t *s = curlwp_set;
	return s && set_valid(cpc, s) && s->state == BOUND_CURLWP ? s : NULL;
}

CPC_EXPORT int cpc_request_preset(cpc_t *cpc, int index, uint64_t preset)
{
	cpc_set_t *set = own_set(cpc);
	if (!set || index < 0 || index >= set->nreq)
		return fail(EINVAL);
	set->req[index].start = preset; /* from the next cpc_set_restart() */
	return 0;
}

/* Restart the calling LWP's set from its presets: stop it, take the
 * current counts as the new zero, re-arm the overflows, start again.
 * ioctl(2) and read(2) only: the overflow signal handler calls this. */
CPC_EXPORT int cpc_set_restart(cpc_t *cpc, cpc_set_t *set)
{
	(void)set; /* as on illumos, the calling LWP's bound set */
	cpc_set_t *s = own_set(cpc);
	if (!s)
		return fail(EINVAL);
	hwc_counters *c = s->counters;
	int err = c ? hwc_counters_stop(c) : 0;
	if (!err && c)
		err = hwc_counters_read(c);
	for (int i = 0; !err && i < s->nreq; i++) {
		struct req *r = &s->req[i];
		r->origin = r->start;
		struct hwc_value v;
		if (r->ev < 0 || hwc_counters_value(c, 0, (size_t)r->ev, &v))
			continue;
		r->base = v.raw;
		/* A start too far from 2^64 to overflow: no overflow, ever. */
		uint64_t period = overflow_period(r->start);
		if (r->ovf)
			err = hwc_counters_overflow_rearm(c, 0, (size_t)r->ev,
							  period ? period : (1ULL << 63) - 1);
	}
	if (!err && c)
		err = hwc_counters_start(c);
	return err ? fail(-err) : 0;
}

CPC_EXPORT int cpc_enable(cpc_t *cpc)
{
	cpc_set_t *s = own_set(cpc);
	if (!s)
		return fail(EINVAL);
	int err = s->counters ? hwc_counters_start(s->counters) : 0;
	return err ? fail(-err) : 0;
}

CPC_EXPORT int cpc_disable(cpc_t *cpc)
{
	cpc_set_t *s = own_set(cpc);
	if (!s)
		return fail(EINVAL);
	int err = s->counters ? hwc_counters_stop(s->counters) : 0;
	return err ? fail(-err) : 0;
}

/* ---------------------------------------------------------------- walkers */

/* generic_events(3CPC): the names, in its order.  Each maps to a platform
 * event through hwc's presets; a walker lists those this machine counts. */
static const char *const generic_events[] = {
	"PAPI_br_cn",   "PAPI_br_ins",  "PAPI_br_msp",  "PAPI_br_ntk",  "PAPI_br_prc",
	"PAPI_br_tkn",  "PAPI_br_ucn",  "PAPI_bru_idl", "PAPI_btac_m",  "PAPI_ca_cln",
	"PAPI_ca_inv",  "PAPI_ca_itv",  "PAPI_ca_shr",  "PAPI_ca_snp",  "PAPI_csr_fal",
	"PAPI_csr_suc", "PAPI_csr_tot", "PAPI_fad_ins", "PAPI_fdv_ins", "PAPI_fma_ins",
	"PAPI_fml_ins", "PAPI_fnv_ins", "PAPI_fp_ins",  "PAPI_fp_ops",  "PAPI_fp_stal",
	"PAPI_fpu_idl", "PAPI_fsq_ins", "PAPI_ful_ccy", "PAPI_ful_icy", "PAPI_fxu_idl",
	"PAPI_hw_int",  "PAPI_int_ins", "PAPI_tot_cyc", "PAPI_tot_iis", "PAPI_tot_ins",
	"PAPI_vec_ins", "PAPI_l1_dca",  "PAPI_l1_dch",  "PAPI_l1_dcm",  "PAPI_l1_dcr",
	"PAPI_l1_dcw",  "PAPI_l1_ica",  "PAPI_l1_ich",  "PAPI_l1_icm",  "PAPI_l1_icr",
	"PAPI_l1_icw",  "PAPI_l1_ldm",  "PAPI_l1_stm",  "PAPI_l1_tca",  "PAPI_l1_tch",
	"PAPI_l1_tcm",  "PAPI_l1_tcr",  "PAPI_l1_tcw",  "PAPI_l2_dca",  "PAPI_l2_dch",
	"PAPI_l2_dcm",  "PAPI_l2_dcr",  "PAPI_l2_dcw",  "PAPI_l2_ica",  "PAPI_l2_ich",
	"PAPI_l2_icm",  "PAPI_l2_icr",  "PAPI_l2_icw",  "PAPI_l2_ldm",  "PAPI_l2_stm",
	"PAPI_l2_tca",  "PAPI_l2_tch",  "PAPI_l2_tcm",  "PAPI_l2_tcr",  "PAPI_l2_tcw",
	"PAPI_l3_dca",  "PAPI_l3_dch",  "PAPI_l3_dcm",  "PAPI_l3_dcr",  "PAPI_l3_dcw",
	"PAPI_l3_ica",  "PAPI_l3_ich",  "PAPI_l3_icm",  "PAPI_l3_icr",  "PAPI_l3_icw",
	"PAPI_l3_ldm",  "PAPI_l3_stm",  "PAPI_l3_tca",  "PAPI_l3_tch",  "PAPI_l3_tcm",
	"PAPI_l3_tcr",  "PAPI_l3_tcw",  "PAPI_ld_ins",  "PAPI_lst_ins", "PAPI_lsu_idl",
	"PAPI_mem_rcy", "PAPI_mem_scy", "PAPI_mem_wcy", "PAPI_prf_dm",  "PAPI_res_stl",
	"PAPI_sr_ins",  "PAPI_stl_ccy", "PAPI_stl_icy", "PAPI_syc_ins", "PAPI_tlb_dm",
	"PAPI_tlb_im",  "PAPI_tlb_sd",  "PAPI_tlb_tl",
};

static void walk_generic(cpc_t *cpc, void (*fn)(void *arg, const char *name), void *arg)
{
	if (cpc->m.npic == 0)
		return; /* each maps to a processor event, and there are none here */
	for (size_t i = 0; i < sizeof(generic_events) / sizeof(generic_events[0]); i++) {
		char detail[256];
		if (cpc__probe(generic_events[i], detail, sizeof(detail)) == 0)
			fn(arg, generic_events[i]);
	}
}

CPC_EXPORT void cpc_walk_generic_events_all(cpc_t *cpc, void *arg,
					    void (*action)(void *arg, const char *event))
{
	walk_generic(cpc, action, arg);
}

struct pic_walk {
	uint_t picno;
	void *arg;
	void (*action)(void *arg, uint_t picno, const char *event);
};

static void pic_adapter(void *arg, const char *name)
{
	struct pic_walk *w = arg;
	w->action(w->arg, w->picno, name);
}

CPC_EXPORT void cpc_walk_generic_events_pic(cpc_t *cpc, uint_t picno, void *arg,
					    void (*action)(void *arg, uint_t picno,
							   const char *event))
{
	if (picno >= cpc->m.npic) {
		errno = EINVAL;
		return;
	}
	/* The kernel may schedule any event on any general counter. */
	struct pic_walk w = {picno, arg, action};
	walk_generic(cpc, pic_adapter, &w);
}

CPC_EXPORT void cpc_walk_events_all(cpc_t *cpc, void *arg,
				    void (*action)(void *arg, const char *event))
{
	if (cpc->m.npic)
		cpc__walk_native(action, arg);
	cpc__walk_software(action, arg);
}

CPC_EXPORT void cpc_walk_events_pic(cpc_t *cpc, uint_t picno, void *arg,
				    void (*action)(void *arg, uint_t picno, const char *event))
{
	if (picno >= cpc->m.npic) {
		errno = EINVAL;
		return;
	}
	struct pic_walk w = {picno, arg, action};
	cpc__walk_native(pic_adapter, &w);
}

CPC_EXPORT void cpc_walk_attrs(cpc_t *cpc, void *arg, void (*action)(void *arg, const char *attr))
{
	for (size_t i = 0; i < nattr_defs(cpc); i++)
		action(arg, x86_attrs[i].name);
}
