/* cpc_open(3CPC): the version check, cpc_close() unbinding and freeing
 * everything, and the overflow signal that stands in for SIGEMT. */
#include "cpc_test.h"

static void test_version(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	CHECK(cpc != NULL);
	CHECK_INT(cpc_close(cpc), ==, 0);
	int bad[] = {0, 1, 3, -1, 1000};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK(cpc_open(bad[i]) == NULL);
		CHECK_INT(errno, ==, EINVAL);
	}
}

static void test_close_unbinds(void)
{
	int before = open_fds();
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_set_t *set = cpc_set_create(cpc);
	CHECK_INT(cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER, 0, NULL), ==, 0);
	CHECK_INT(cpc_set_add_request(cpc, set, "page-faults", 0, CPC_COUNT_USER, 0, NULL), ==, 1);
	CHECK(cpc_buf_create(cpc, set) != NULL);
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
	CHECK_INT(open_fds(), ==, before + 2); /* one counter per request */
	/* Sets and buffers are destroyed with the handle, counters unbound. */
	CHECK_INT(cpc_close(cpc), ==, 0);
	CHECK_INT(open_fds(), ==, before);
	/* The calling LWP has no bound set any more. */
	cpc = cpc_open(CPC_VER_CURRENT);
	CHECK_INT(cpc_enable(cpc), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	cpc_close(cpc);
}

static void test_sigemt(void)
{
	/* Linux has no SIGEMT: SIGSTKFLT, which Linux never raises, by default. */
	unsetenv("LIBCPC_SIGEMT");
	CHECK_INT(cpc_sigemt(), ==, SIGSTKFLT);
	CHECK_INT(SIGEMT, ==, SIGSTKFLT);
	setenv("LIBCPC_SIGEMT", "SIGUSR2", 1);
	CHECK_INT(SIGEMT, ==, SIGUSR2);
	setenv("LIBCPC_SIGEMT", "usr1", 1);
	CHECK_INT(SIGEMT, ==, SIGUSR1);
	setenv("LIBCPC_SIGEMT", "SIGRTMIN+2", 1);
	CHECK_INT(SIGEMT, ==, SIGRTMIN + 2);
	setenv("LIBCPC_SIGEMT", "12", 1);
	CHECK_INT(SIGEMT, ==, 12);

	/* A bad value is refused at cpc_open(), with the reason. */
	const char *bad[] = {"SIGKILL", "SIGBOGUS", "0", "65", "RTMIN+99", "9"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("LIBCPC_SIGEMT", bad[i], 1);
		stderr_capture();
		errno = 0;
		cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
		const char *err = stderr_captured();
		CHECK(cpc == NULL);
		CHECK_INT(errno, ==, EINVAL);
		CHECK_STR_CONTAINS(err, "libcpc: cpc_open: LIBCPC_SIGEMT=");
		CHECK_STR_CONTAINS(err, bad[i]);
	}
	unsetenv("LIBCPC_SIGEMT");

	/* cpc_set_sigemt() overrides the environment. */
	setenv("LIBCPC_SIGEMT", "SIGUSR2", 1);
	CHECK_INT(cpc_set_sigemt(SIGRTMIN + 1), ==, 0);
	CHECK_INT(SIGEMT, ==, SIGRTMIN + 1);
	CHECK_INT(cpc_set_sigemt(SIGKILL), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(cpc_set_sigemt(0), ==, -1);
	CHECK_INT(SIGEMT, ==, SIGRTMIN + 1);
	CHECK_INT(cpc_set_sigemt(SIGSTKFLT), ==, 0);
	unsetenv("LIBCPC_SIGEMT");
}

static int open_unprivileged(void)
{
	/* perf_event_paranoid 2 still lets anyone count its own user space. */
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	if (!cpc)
		return 1;
	return cpc_close(cpc);
}

static void test_unprivileged(void)
{
	CHECK_AS_NOBODY(open_unprivileged);
}

int main(void)
{
	RUN(test_version);
	RUN(test_close_unbinds);
	RUN(test_sigemt);
	RUN(test_unprivileged);
	return check_exit();
}
