/* Code regions (hwc-regions(3)): hwc_region_begin/_end count the calling
 * thread's events between the two calls, per region name, and a report of
 * every thread's regions is written as JSON to HWC_REGIONS_OUT at exit.
 *
 * The switch is HWC_REGIONS_OUT, read once at the first call: unset or
 * empty, both calls only load a flag.  Each thread opens its own counters
 * (HWC_TARGET_SELF, not inherited, so mapped for user-space reads) at its
 * first begin; its records stay in a process-wide list after it ends, and
 * the report at exit merges them.  The hot path takes no lock: a thread
 * touches only its own records, and the list lock guards the list. */
#include "internal.h"

#include <hwc/output.h>
#include <hwc/region.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Events counted when HWC_EVENTS is not set; those this machine lacks are
 * left out.  Each group is read at once (the software one with read(2)).
 * Where user space may read the hardware counters, the software group is
 * left out too: a call is then one user-space read and no system call. */
#define DEFAULT_USER_READ_EVENTS "{cycles,instructions}"
#define DEFAULT_EVENTS DEFAULT_USER_READ_EVENTS ",{task-clock,page-faults}"
#define MAX_ERRORS 16

enum { UNKNOWN, OFF, ON };
static int state = UNKNOWN;

struct region {
	char *name;
	uint64_t calls;
	uint64_t *sum; /* [nev] inclusive counts */
};

struct thr {
	pid_t tid;
	hwc_counters *c;   /* NULL once the thread ended, or if it could not open */
	int err;           /* the open's error: every call returns it */
	struct region *r;
	size_t nr, cap_r;
	size_t *stack;     /* open regions' indexes in r, innermost last */
	uint64_t *starts;  /* [depth][nev]: counts at each open region's begin */
	size_t depth, cap_stack, cap_starts;
	uint64_t *now;     /* [nev] scratch */
	bool *counted;     /* [nev] the event opened (others were skipped) */
	struct thr *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_once_t once;
	pthread_key_t key;
	char *out;          /* HWC_REGIONS_OUT */
	const char *spec;   /* the events' spec */
	hwc_evlist *list;   /* NULL when HWC_EVENTS did not resolve */
	int list_err;
	size_t nev;
	struct thr *threads;
	char *errors[MAX_ERRORS];
	uint64_t error_count[MAX_ERRORS];
	size_t nerrors;
	uint64_t errors_dropped;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

static __thread struct thr *self;

/* Note an error: each distinct text goes to stderr once and into the
 * report with how often it happened.  Never fails. */
__attribute__((format(printf, 1, 2))) static void region_error(const char *fmt, ...)
{
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&g.lock);
	size_t i = 0;
	while (i < g.nerrors && strcmp(g.errors[i], text) != 0)
		i++;
	if (i < g.nerrors) {
		g.error_count[i]++;
	} else if (i < MAX_ERRORS && (g.errors[i] = strdup(text))) {
		g.error_count[i] = 1;
		g.nerrors++;
		fprintf(stderr, "hwc regions: %s\n", text);
	} else {
		g.errors_dropped++;
	}
	pthread_mutex_unlock(&g.lock);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* The index of the generic hardware event CONFIG in the list, or -1. */
static long find_hw(uint64_t config)
{
	for (size_t e = 0; e < g.nev; e++) {
		const struct hwc_event *ev = hwc_evlist_event(g.list, e);
		if (ev->attr.type == PERF_TYPE_HARDWARE && ev->attr.config == config)
			return (long)e;
	}
	return -1;
}

static void write_thread(FILE *f, const struct thr *t, long cyc, long ins)
{
	fprintf(f, "    {\"tid\": %d, \"regions\": [", (int)t->tid);
	for (size_t i = 0; i < t->nr; i++) {
		const struct region *r = &t->r[i];
		fprintf(f, "%s\n      {\"name\": ", i ? "," : "");
		json_string(f, r->name);
		fprintf(f, ", \"calls\": %" PRIu64 ", \"counts\": {", r->calls);
		size_t shown = 0;
		for (size_t e = 0; e < g.nev; e++) {
			if (!t->counted[e])
				continue;
			fprintf(f, "%s", shown++ ? ", " : "");
			json_string(f, hwc_evlist_event(g.list, e)->name);
			fprintf(f, ": %" PRIu64, r->sum[e]);
		}
		fprintf(f, "}, \"metrics\": {");
		if (cyc >= 0 && ins >= 0 && r->sum[cyc])
			fprintf(f, "\"ipc\": %.4f", (double)r->sum[ins] / (double)r->sum[cyc]);
		fprintf(f, "}}");
	}
	fprintf(f, "%s]}", t->nr ? "\n    " : "");
}

/* At exit: the report of every thread that measured anything.  Threads
 * still running are reported as they stand. */
static void write_report(void)
{
	if (__atomic_load_n(&state, __ATOMIC_RELAXED) != ON)
		return; /* a forked child's copy */
	pthread_mutex_lock(&g.lock);
	for (struct thr *t = g.threads; t; t = t->next)
		for (size_t d = 0; d < t->depth; d++)
			fprintf(stderr, "hwc regions: region '%s' of thread %d still open at exit\n",
				t->r[t->stack[d]].name, (int)t->tid);
	hwc_output *o = NULL;
	FILE *f = NULL;
	if (hwc_output_create(&o, g.out, 0) || !(f = hwc_output_stream(o))) {
		fprintf(stderr, "hwc regions: cannot write HWC_REGIONS_OUT: %s\n", hwc_errdetail());
		hwc_output_discard(o);
		pthread_mutex_unlock(&g.lock);
		return;
	}
	long cyc = g.list ? find_hw(PERF_COUNT_HW_CPU_CYCLES) : -1;
	long ins = g.list ? find_hw(PERF_COUNT_HW_INSTRUCTIONS) : -1;
	fprintf(f, "{\"hwc_regions\": 1, \"pid\": %d, \"events\": [", (int)getpid());
	/* Events no thread could count are left out of "events" too. */
	for (size_t e = 0, shown = 0; e < g.nev; e++) {
		bool counted = false;
		for (struct thr *t = g.threads; t && !counted; t = t->next)
			counted = !t->err && t->counted[e];
		if (!counted && g.threads)
			continue;
		fprintf(f, "%s", shown++ ? ", " : "");
		json_string(f, hwc_evlist_event(g.list, e)->name);
	}
	fprintf(f, "],\n  \"errors\": [");
	for (size_t i = 0; i < g.nerrors; i++) {
		fprintf(f, "%s{\"error\": ", i ? ", " : "");
		json_string(f, g.errors[i]);
		fprintf(f, ", \"count\": %" PRIu64 "}", g.error_count[i]);
	}
	if (g.errors_dropped)
		fprintf(f, "%s{\"error\": \"more errors\", \"count\": %" PRIu64 "}",
			g.nerrors ? ", " : "", g.errors_dropped);
	fprintf(f, "],\n  \"threads\": [");
	size_t n = 0;
	for (struct thr *t = g.threads; t; t = t->next)
		if (t->nr) {
			fprintf(f, "%s\n", n++ ? "," : "");
			write_thread(f, t, cyc, ins);
		}
	fprintf(f, "\n  ]}\n");
	if (hwc_output_commit(o))
		fprintf(stderr, "hwc regions: cannot write HWC_REGIONS_OUT: %s\n", hwc_errdetail());
	pthread_mutex_unlock(&g.lock);
}

/* A thread ends: its counters close, its records stay for the report. */
static void thread_end(void *arg)
{
	struct thr *t = arg;
	for (size_t d = 0; d < t->depth; d++)
		region_error("region '%s' still open when its thread ended", t->r[t->stack[d]].name);
	pthread_mutex_lock(&g.lock);
	hwc_counters_close(t->c);
	t->c = NULL;
	t->err = -ESRCH; /* a later thread-exit destructor's call */
	pthread_mutex_unlock(&g.lock);
}

/* A forked child's regions are the parent's: the child measures none. */
static void fork_child(void)
{
	__atomic_store_n(&state, OFF, __ATOMIC_RELAXED);
}

static void activate(void)
{
	const char *out = getenv("HWC_REGIONS_OUT");
	if (!out || !*out || !(g.out = strdup(out))) {
		__atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
		return;
	}
	const char *events = getenv("HWC_EVENTS");
	struct hwc_user_reads reads;
	if (events && *events)
		g.spec = events;
	else if (hwc_user_reads(&reads) == 0 && reads.rdpmc)
		g.spec = DEFAULT_USER_READ_EVENTS;
	else
		g.spec = DEFAULT_EVENTS;
	int err = hwc_evlist_new(&g.list);
	if (!err)
		err = hwc_evlist_add(g.list, g.spec);
	if (err) {
		region_error("HWC_EVENTS '%s': %s; no region is measured", g.spec, hwc_errdetail());
		hwc_evlist_free(g.list);
		g.list = NULL;
		g.list_err = err;
	} else {
		g.nev = hwc_evlist_size(g.list);
	}
	if (pthread_key_create(&g.key, thread_end) || atexit(write_report) ||
	    pthread_atfork(NULL, NULL, fork_child)) {
		fprintf(stderr, "hwc regions: cannot set up the report at exit\n");
		__atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&state, ON, __ATOMIC_RELEASE);
}

/* The calling thread's records, made (and its counters opened) at its
 * first call; NULL when out of memory. */
static struct thr *thread_start(void)
{
	struct thr *t = calloc(1, sizeof(*t));
	size_t n = g.nev ? g.nev : 1;
	if (!t || !(t->now = calloc(n, sizeof(*t->now))) ||
	    !(t->counted = calloc(n, sizeof(*t->counted)))) {
		if (t)
			free(t->now);
		free(t);
		region_error("out of memory");
		return NULL;
	}
	t->tid = (pid_t)syscall(SYS_gettid);
	t->err = g.list_err;
	if (g.list) {
		struct hwc_target target = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
		if (!getenv("HWC_EVENTS") || !*getenv("HWC_EVENTS"))
			target.flags |= HWC_SKIP_UNSUPPORTED;
		t->err = hwc_counters_open(&t->c, g.list, &target);
		if (!t->err && (t->err = hwc_counters_start(t->c))) {
			hwc_counters_close(t->c);
			t->c = NULL;
		}
		if (t->err)
			region_error("cannot count '%s': %s", g.spec, hwc_errdetail());
		for (size_t e = 0; !t->err && e < g.nev; e++)
			t->counted[e] = hwc_counters_event_status(t->c, e) == 0;
	}
	pthread_mutex_lock(&g.lock);
	t->next = g.threads;
	g.threads = t;
	pthread_mutex_unlock(&g.lock);
	self = t;
	pthread_setspecific(g.key, t);
	return t;
}

/* The calling thread's records when regions are measured; NULL with *ERR
 * set (0 when regions are off). */
static inline struct thr *current(int *err)
{
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
	*err = 0;
	if (s == OFF)
		return NULL;
	if (s == UNKNOWN) {
		pthread_once(&g.once, activate);
		if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != ON)
			return NULL;
	}
	struct thr *t = self ? self : thread_start();
	*err = !t ? -ENOMEM : t->err;
	return *err ? NULL : t;
}

static long find_region(const struct thr *t, const char *name)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->r[i].name == name || strcmp(t->r[i].name, name) == 0)
			return (long)i;
	return -1;
}

HWC_EXPORT int hwc_region_begin(const char *name)
{
	int err;
	struct thr *t = current(&err);
	if (!t)
		return err;
	if (!name) {
		region_error("hwc_region_begin(NULL): a region needs a name");
		return -EINVAL;
	}
	long i = find_region(t, name);
	if (i < 0) {
		if (hwc__reserve(&t->r, &t->cap_r, t->nr + 1, sizeof(*t->r)))
			goto nomem;
		struct region *r = &t->r[t->nr];
		r->calls = 0;
		r->name = strdup(name);
		r->sum = calloc(g.nev ? g.nev : 1, sizeof(*r->sum));
		if (!r->name || !r->sum) {
			free(r->name);
			free(r->sum);
			goto nomem;
		}
		i = (long)t->nr++;
	}
	if (hwc__reserve(&t->stack, &t->cap_stack, t->depth + 1, sizeof(*t->stack)) ||
	    hwc__reserve(&t->starts, &t->cap_starts, (t->depth + 1) * g.nev, sizeof(*t->starts)))
		goto nomem;
	uint64_t *start = &t->starts[t->depth * g.nev];
	if ((err = hwc__counters_read_raw(t->c, start))) {
		region_error("reading the counters failed: %s", hwc_errdetail());
		return err;
	}
	t->stack[t->depth++] = (size_t)i;
	return 0;
nomem:
	region_error("out of memory");
	return -ENOMEM;
}

HWC_EXPORT int hwc_region_end(const char *name)
{
	int err;
	struct thr *t = current(&err);
	if (!t)
		return err;
	if ((err = hwc__counters_read_raw(t->c, t->now))) {
		region_error("reading the counters failed: %s", hwc_errdetail());
		return err;
	}
	if (!name) {
		region_error("hwc_region_end(NULL): a region needs a name");
		return -EINVAL;
	}
	struct region *top = t->depth ? &t->r[t->stack[t->depth - 1]] : NULL;
	if (!top || (top->name != name && strcmp(top->name, name) != 0)) {
		bool open = false;
		for (size_t d = 0; d + 1 < t->depth; d++)
			open |= strcmp(t->r[t->stack[d]].name, name) == 0;
		if (open)
			region_error("hwc_region_end(\"%s\") while region '%s' inside it is open: "
				     "regions must nest; the call is ignored", name, top->name);
		else
			region_error("hwc_region_end(\"%s\") without hwc_region_begin(\"%s\"); the "
				     "call is ignored", name, name);
		return -EINVAL;
	}
	const uint64_t *start = &t->starts[--t->depth * g.nev];
	for (size_t e = 0; e < g.nev; e++)
		top->sum[e] += t->now[e] - start[e];
	top->calls++;
	return 0;
}
