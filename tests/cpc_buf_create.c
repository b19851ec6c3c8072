/* cpc_buf_create(3CPC): sampling into buffers, the buffer arithmetic, the
 * sample's time and tick, and the errors. */
#include "cpc_test.h"

#include <time.h>

static hrtime_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (hrtime_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static hrtime_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void test_arithmetic(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_set_t *set = cpc_set_create(cpc);
	cpc_set_add_request(cpc, set, "page-faults", 0, CPC_COUNT_USER, 0, NULL);
	cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER, 0, NULL);
	cpc_buf_t *a = cpc_buf_create(cpc, set), *b = cpc_buf_create(cpc, set),
		  *ds = cpc_buf_create(cpc, set);
	uint64_t v;
	/* A new buffer holds zeros. */
	CHECK_INT(cpc_buf_get(cpc, a, 0, &v), ==, 0);
	CHECK_U64(v, ==, 0);
	CHECK(cpc_buf_hrtime(cpc, a) == 0);
	CHECK_U64(cpc_buf_tick(cpc, a), ==, 0);
	cpc_buf_set(cpc, a, 0, 1000);
	cpc_buf_set(cpc, a, 1, 7);
	cpc_buf_set(cpc, b, 0, 300);
	cpc_buf_set(cpc, b, 1, 9);
	cpc_buf_sub(cpc, ds, a, b);
	CHECK_INT(cpc_buf_get(cpc, ds, 0, &v), ==, 0);
	CHECK_U64(v, ==, 700);
	cpc_buf_get(cpc, ds, 1, &v);
	CHECK_U64(v, ==, UINT64_MAX - 1); /* 64-bit arithmetic, as the counters wrap */
	cpc_buf_add(cpc, ds, a, b);
	cpc_buf_get(cpc, ds, 0, &v);
	CHECK_U64(v, ==, 1300);
	cpc_buf_get(cpc, ds, 1, &v);
	CHECK_U64(v, ==, 16);
	cpc_buf_copy(cpc, ds, b);
	cpc_buf_get(cpc, ds, 0, &v);
	CHECK_U64(v, ==, 300);
	cpc_buf_zero(cpc, ds);
	cpc_buf_get(cpc, ds, 0, &v);
	CHECK_U64(v, ==, 0);
	cpc_buf_get(cpc, ds, 1, &v);
	CHECK_U64(v, ==, 0);
	/* Indices outside the set: EINVAL, nothing touched. */
	CHECK_INT(cpc_buf_get(cpc, a, 2, &v), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(cpc_buf_get(cpc, a, -1, &v), ==, -1);
	CHECK_INT(cpc_buf_set(cpc, a, 2, 5), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	/* Buffers of a set of another size are left alone by the arithmetic. */
	cpc_set_t *one = cpc_set_create(cpc);
	cpc_set_add_request(cpc, one, "page-faults", 0, CPC_COUNT_USER, 0, NULL);
	cpc_buf_t *small = cpc_buf_create(cpc, one);
	cpc_buf_set(cpc, small, 0, 55);
	cpc_buf_copy(cpc, small, a);
	cpc_buf_sub(cpc, small, a, b);
	cpc_buf_get(cpc, small, 0, &v);
	CHECK_U64(v, ==, 55);
	CHECK_INT(cpc_buf_destroy(cpc, small), ==, 0);
	CHECK_INT(cpc_buf_destroy(cpc, small), ==, -1); /* not a live buffer */
	CHECK_INT(errno, ==, EINVAL);
	/* A buffer needs a set of this handle. */
	cpc_t *other = cpc_open(CPC_VER_CURRENT);
	errno = 0;
	CHECK(cpc_buf_create(other, set) == NULL);
	CHECK_INT(errno, ==, EINVAL);
	cpc_close(other);
	cpc_close(cpc);
}

static void test_sample(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_set_t *set = cpc_set_create(cpc);
	cpc_set_add_request(cpc, set, "page-faults", 10, CPC_COUNT_USER, 0, NULL);
	cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER | CPC_COUNT_SYSTEM, 0, NULL);
	cpc_buf_t *a = cpc_buf_create(cpc, set), *b = cpc_buf_create(cpc, set),
		  *d = cpc_buf_create(cpc, set);
	/* Not bound yet. */
	CHECK_INT(cpc_set_sample(cpc, set, a), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
	hrtime_t t0 = now_ns();
	CHECK_INT(cpc_set_sample(cpc, set, a), ==, 0);
	hrtime_t t1 = now_ns();
	/* hrtime says when the sample was taken, on gethrtime()'s clock. */
	CHECK(cpc_buf_hrtime(cpc, a) >= t0 && cpc_buf_hrtime(cpc, a) <= t1);
	uint64_t v;
	cpc_buf_get(cpc, a, 0, &v);
	CHECK_U64(v, >=, 10); /* counting starts at the preset */
	CHECK_U64(v, <, 20);
	/* 50 ms on the CPU (however long that takes on a loaded machine):
	 * the 64-bit counters and the tick move. */
	volatile uint64_t x = 0;
	hrtime_t until = clock_ns(CLOCK_THREAD_CPUTIME_ID) + 50000000;
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		x++;
	touch_pages(200);
	CHECK_INT(cpc_set_sample(cpc, set, b), ==, 0);
	cpc_buf_sub(cpc, d, b, a);
	CHECK(cpc_buf_hrtime(cpc, d) == cpc_buf_hrtime(cpc, b)); /* the later of the two */
	cpc_buf_get(cpc, d, 0, &v);
	CHECK_U64(v, >=, 200);
	CHECK_U64(v, <=, FAULTS_MAX(200));
	uint64_t clock;
	cpc_buf_get(cpc, d, 1, &clock);
	CHECK_U64(clock, >=, 45000000);
	/* The tick counts CPU cycles the set was on the counters; unknown
	 * rate means 0, else it matches the time the thread ran. */
	uint64_t tick = cpc_buf_tick(cpc, d);
	if (tick == 0)
		SKIP_SUB("the TSC rate is unknown here: tick not checked");
	else {
#if defined(__aarch64__)
		/* The generic timer, at the rate the CPU reports (62.5 MHz in
		 * QEMU, 1 GHz from Armv8.6): within a factor 10 of it. */
		uint64_t hz;
		__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
		CHECK_U64(tick, >, clock / 10 * hz / 1000000000);
		CHECK_U64(tick, <, clock * 10 / 1000 * hz / 1000000);
#else
		CHECK_U64(tick, >, clock / 10);  /* a TSC above 100 MHz */
		CHECK_U64(tick, <, clock * 10);  /* and below 10 GHz */
#endif
	}
	/* A buffer created for another set cannot hold this set's sample. */
	cpc_set_t *one = cpc_set_create(cpc);
	cpc_set_add_request(cpc, one, "page-faults", 0, CPC_COUNT_USER, 0, NULL);
	cpc_buf_t *small = cpc_buf_create(cpc, one);
	CHECK_INT(cpc_set_sample(cpc, set, small), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	cpc_close(cpc);
}

int main(void)
{
	RUN(test_arithmetic);
	RUN(test_sample);
	return check_exit();
}
