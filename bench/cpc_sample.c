/* Per-call cost of sampling a counter set: libcpc's cpc_set_sample() plus
 * cpc_buf_get() of every request, against PAPI_read() of the same software
 * events, for 1, 4 and 8 events.  Median ns per call over ROUNDS rounds of
 * CALLS calls, the methods interleaved round by round so that the machine's
 * load hits them all alike. */
#include <libcpc.h>
#include <papi.h>
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 9
#define CALLS 100000

struct method {
	const char *name;
	int n;
	/* libcpc */
	cpc_t *cpc;
	cpc_set_t *set;
	cpc_buf_t *buf;
	/* PAPI */
	int es;
	long long v[8];
	double ns[ROUNDS];
};

static void cpc_prepare(struct method *m)
{
	m->cpc = cpc_open(CPC_VER_CURRENT);
	if (!m->cpc)
		exit(1);
	m->set = cpc_set_create(m->cpc);
	for (int i = 0; i < m->n; i++)
		if (cpc_set_add_request(m->cpc, m->set, bench_sw_events[i], 0, CPC_COUNT_USER, 0, NULL) < 0)
			exit(1);
	m->buf = cpc_buf_create(m->cpc, m->set);
	if (cpc_bind_curlwp(m->cpc, m->set, 0))
		exit(1);
}

static void cpc_round(struct method *m)
{
	uint64_t v;
	for (int c = 0; c < CALLS; c++) {
		if (cpc_set_sample(m->cpc, m->set, m->buf))
			abort();
		for (int i = 0; i < m->n; i++)
			cpc_buf_get(m->cpc, m->buf, i, &v);
	}
}

static void papi_prepare(struct method *m)
{
	m->es = PAPI_NULL;
	if (PAPI_create_eventset(&m->es) != PAPI_OK)
		exit(1);
	for (int i = 0; i < m->n; i++) {
		int err = PAPI_add_named_event(m->es, bench_papi_events[i]);
		if (err != PAPI_OK) {
			fprintf(stderr, "PAPI_add_named_event %s: %s\n", bench_papi_events[i], PAPI_strerror(err));
			exit(1);
		}
	}
}

static void papi_round(struct method *m)
{
	/* One running event set per thread: started around each round. */
	if (PAPI_start(m->es) != PAPI_OK)
		exit(1);
	double t0 = bench_now_ns();
	for (int c = 0; c < CALLS; c++)
		if (PAPI_read(m->es, m->v) != PAPI_OK)
			abort();
	m->ns[0] = bench_now_ns() - t0;
	PAPI_stop(m->es, m->v);
}

int main(void)
{
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
		fprintf(stderr, "PAPI_library_init failed\n");
		return 1;
	}
	struct method m[] = {
		{.name = "cpc_set_sample, 1 event", .n = 1},  {.name = "PAPI_read, 1 event", .n = 1},
		{.name = "cpc_set_sample, 4 events", .n = 4}, {.name = "PAPI_read, 4 events", .n = 4},
		{.name = "cpc_set_sample, 8 events", .n = 8}, {.name = "PAPI_read, 8 events", .n = 8},
	};
	size_t nm = sizeof(m) / sizeof(m[0]);
	for (size_t k = 0; k < nm; k++)
		if (strncmp(m[k].name, "PAPI", 4) == 0)
			papi_prepare(&m[k]);
	for (int r = -1; r < ROUNDS; r++) /* round -1 warms up */
		for (size_t k = 0; k < nm; k++) {
			double ns;
			if (strncmp(m[k].name, "PAPI", 4) == 0) {
				papi_round(&m[k]);
				ns = m[k].ns[0] / CALLS;
			} else {
				/* A set is bound to its LWP: rebind before each round. */
				if (!m[k].cpc)
					cpc_prepare(&m[k]);
				else if (cpc_bind_curlwp(m[k].cpc, m[k].set, 0))
					exit(1);
				double t0 = bench_now_ns();
				cpc_round(&m[k]);
				ns = (bench_now_ns() - t0) / CALLS;
			}
			if (r >= 0)
				m[k].ns[r] = ns;
		}
	for (size_t k = 0; k < nm; k++)
		printf("%-28s %8.1f ns/call\n", m[k].name, bench_median(m[k].ns, ROUNDS));
	return 0;
}
