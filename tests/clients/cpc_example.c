/* An illumos libcpc client, built by tests/compat_clients.sh with nothing but
 *     cc cpc_example.c $(pkg-config --cflags --libs libcpc)
 * Counts task-clock on its own LWP; prints "ok 1" when it counted some. */
#include <libcpc.h>
#include <stdio.h>
int main(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_set_t *set = cpc ? cpc_set_create(cpc) : NULL;
	if (!set || cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER, 0, NULL) != 0)
		return 1;
	cpc_buf_t *buf = cpc_buf_create(cpc, set);
	uint64_t v = 0;
	if (cpc_bind_curlwp(cpc, set, 0) || cpc_set_sample(cpc, set, buf) ||
	    cpc_buf_get(cpc, buf, 0, &v))
		return 2;
	printf("ok %d\n", v > 0);
	return cpc_close(cpc);
}
