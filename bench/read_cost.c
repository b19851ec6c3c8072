/* Per-call cost of reading counters: libhwc vs a raw read(2) of the same
 * perf_event fd vs PAPI_read, for one software event and for groups of 4
 * and 8.  Prints one line per method: median ns per call over ROUNDS
 * rounds of CALLS calls each, methods interleaved round by round so load
 * changes on the machine hit them all alike. */
#include <hwc/hwc.h>
#include <papi.h>
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 9
#define CALLS 100000

struct method {
	const char *name;
	void (*call)(void *);
	void *arg;
	void (*begin)(void *), (*end)(void *); /* untimed, around each round */
	double ns[ROUNDS];
};

/* --- libhwc --- */
struct lib {
	hwc_counters *c;
	size_t n;
	struct hwc_value v[8];
};

static struct lib *lib_open(int n)
{
	char spec[512] = "{";
	for (int i = 0; i < n; i++)
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "%s%s:u", i ? "," : "",
			 bench_sw_events[i]);
	strcat(spec, "}");
	hwc_evlist *l;
	hwc_evlist_new(&l);
	if (hwc_evlist_add(l, n > 1 ? spec : "page-faults:u")) {
		fprintf(stderr, "%s\n", hwc_errdetail());
		exit(1);
	}
	struct lib *b = calloc(1, sizeof(*b));
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	if (hwc_counters_open(&b->c, l, &t) || hwc_counters_start(b->c)) {
		fprintf(stderr, "%s\n", hwc_errdetail());
		exit(1);
	}
	b->n = (size_t)n;
	hwc_evlist_free(l);
	return b;
}

/* The raw syscall on the very fd libhwc opened: same attributes, same
 * kernel work, nothing of the library's. */
struct raw {
	int fd;
	size_t bytes;
	uint64_t buf[16];
};

static struct raw *raw_open(int n)
{
	struct raw *r = calloc(1, sizeof(*r));
	r->fd = hwc_counters_fd(lib_open(n)->c, 0, 0);
	r->bytes = (n > 1 ? 3 + (size_t)n : 3) * sizeof(uint64_t);
	return r;
}

static void raw_call(void *arg)
{
	struct raw *r = arg;
	for (int i = 0; i < CALLS; i++)
		if (read(r->fd, r->buf, r->bytes) != (ssize_t)r->bytes)
			abort();
}

static void lib_call(void *arg)
{
	struct lib *b = arg;
	for (int i = 0; i < CALLS; i++) {
		if (hwc_counters_read(b->c))
			abort();
		hwc_counters_values(b->c, 0, b->v);
	}
}

/* --- PAPI --- */
struct papi {
	int es;
	long long v[8];
};

static struct papi *papi_open(int n)
{
	struct papi *p = calloc(1, sizeof(*p));
	p->es = PAPI_NULL;
	int err = PAPI_create_eventset(&p->es);
	if (err != PAPI_OK) {
		fprintf(stderr, "PAPI_create_eventset: %s\n", PAPI_strerror(err));
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		err = PAPI_add_named_event(p->es, bench_papi_events[i]);
		if (err != PAPI_OK) {
			fprintf(stderr, "PAPI_add_named_event %s: %s\n", bench_papi_events[i], PAPI_strerror(err));
			exit(1);
		}
	}
	return p;
}

/* PAPI runs one event set per thread at a time: start and stop around rounds. */
static void papi_begin(void *arg)
{
	struct papi *p = arg;
	int err = PAPI_start(p->es);
	if (err != PAPI_OK) {
		fprintf(stderr, "PAPI_start: %s\n", PAPI_strerror(err));
		exit(1);
	}
}

static void papi_end(void *arg)
{
	struct papi *p = arg;
	PAPI_stop(p->es, p->v);
}

static void papi_call(void *arg)
{
	struct papi *p = arg;
	for (int i = 0; i < CALLS; i++)
		if (PAPI_read(p->es, p->v) != PAPI_OK)
			abort();
}

int main(void)
{
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
		fprintf(stderr, "PAPI_library_init failed\n");
		return 1;
	}
	struct method m[] = {
		{"raw read(2), 1 event", raw_call, raw_open(1), NULL, NULL, {0}},
		{"libhwc read, 1 event", lib_call, lib_open(1), NULL, NULL, {0}},
		{"PAPI_read, 1 event", papi_call, papi_open(1), papi_begin, papi_end, {0}},
		{"raw read(2), group of 4", raw_call, raw_open(4), NULL, NULL, {0}},
		{"libhwc read, group of 4", lib_call, lib_open(4), NULL, NULL, {0}},
		{"PAPI_read, 4 events", papi_call, papi_open(4), papi_begin, papi_end, {0}},
		{"raw read(2), group of 8", raw_call, raw_open(8), NULL, NULL, {0}},
		{"libhwc read, group of 8", lib_call, lib_open(8), NULL, NULL, {0}},
		{"PAPI_read, 8 events", papi_call, papi_open(8), papi_begin, papi_end, {0}},
	};
	size_t nm = sizeof(m) / sizeof(m[0]);
	for (int r = -1; r < ROUNDS; r++) /* round -1 warms up */
		for (size_t k = 0; k < nm; k++) {
			if (m[k].begin)
				m[k].begin(m[k].arg);
			double t0 = bench_now_ns();
			m[k].call(m[k].arg);
			double ns = (bench_now_ns() - t0) / CALLS;
			if (m[k].end)
				m[k].end(m[k].arg);
			if (r >= 0)
				m[k].ns[r] = ns;
		}
	for (size_t k = 0; k < nm; k++)
		printf("%-28s %8.1f ns/call\n", m[k].name, bench_median(m[k].ns, ROUNDS));
	return 0;
}
