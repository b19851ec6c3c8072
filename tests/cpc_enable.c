/* cpc_enable(3CPC): turning the calling LWP's counters off and on around
 * the code of interest, without touching their configuration. */
#include "cpc_test.h"

#include <pthread.h>

static void test_enable_disable(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	/* No counter context yet: EINVAL. */
	CHECK_INT(cpc_enable(cpc), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(cpc_disable(cpc), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	cpc_set_t *set = cpc_set_create(cpc);
	cpc_set_add_request(cpc, set, "page-faults", 0, CPC_COUNT_USER, 0, NULL);
	cpc_buf_t *buf = cpc_buf_create(cpc, set);
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
	uint64_t v0, v1, v2;
	cpc_set_sample(cpc, set, buf);
	cpc_buf_get(cpc, buf, 0, &v0);
	CHECK_INT(cpc_disable(cpc), ==, 0);
	touch_pages(500); /* not counted */
	cpc_set_sample(cpc, set, buf);
	cpc_buf_get(cpc, buf, 0, &v1);
	CHECK_U64(v1 - v0, <, 5);
	CHECK_INT(cpc_enable(cpc), ==, 0);
	touch_pages(500); /* counted */
	cpc_set_sample(cpc, set, buf);
	cpc_buf_get(cpc, buf, 0, &v2);
	CHECK_U64(v2 - v1, >=, 500);
	CHECK_U64(v2 - v1, <=, FAULTS_MAX(500));
	CHECK_INT(cpc_unbind(cpc, set), ==, 0);
	CHECK_INT(cpc_enable(cpc), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	cpc_close(cpc);
}

static cpc_t *shared;
static int other_result;

static void *other_lwp(void *arg)
{
	(void)arg;
	/* The set is bound to the main LWP: this one has no context. */
	other_result = cpc_disable(shared) == -1 && errno == EINVAL ? 0 : 1;
	return NULL;
}

static void test_per_lwp(void)
{
	shared = cpc_open(CPC_VER_CURRENT);
	cpc_set_t *set = cpc_set_create(shared);
	cpc_set_add_request(shared, set, "task-clock", 0, CPC_COUNT_USER, 0, NULL);
	CHECK_INT(cpc_bind_curlwp(shared, set, 0), ==, 0);
	pthread_t th;
	pthread_create(&th, NULL, other_lwp, NULL);
	pthread_join(th, NULL);
	CHECK_INT(other_result, ==, 0);
	CHECK_INT(cpc_disable(shared), ==, 0);
	cpc_close(shared);
}

int main(void)
{
	RUN(test_enable_disable);
	RUN(test_per_lwp);
	return check_exit();
}
