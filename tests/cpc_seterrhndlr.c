/* cpc_seterrhndlr(3CPC): the default report on stderr, a handler of the
 * caller's (function name, subcode, format), errno kept across it, and
 * NULL giving the default back. */
#include "cpc_test.h"

static int calls, subcode;
static char fn_seen[64], msg[1024];

static void handler(const char *fn, int code, const char *fmt, va_list ap)
{
	calls++;
	subcode = code;
	snprintf(fn_seen, sizeof(fn_seen), "%s", fn);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	errno = ERANGE; /* the library must not let this through */
}

/* Request an unknown event in SET: refused with EINVAL, errno surviving
 * any handler.  What was written to stderr meanwhile. */
static const char *add_bogus(cpc_t *cpc, cpc_set_t *set)
{
	stderr_capture();
	errno = 0;
	int r = cpc_set_add_request(cpc, set, "bogus-event", 0, CPC_COUNT_USER, 0, NULL);
	int e = errno;
	const char *out = stderr_captured();
	CHECK_INT(r, ==, -1);
	CHECK_INT(e, ==, EINVAL);
	return out;
}

static void test_default_report(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_set_t *set = cpc_set_create(cpc);
	const char *out = add_bogus(cpc, set);
	CHECK(strncmp(out, "libcpc: cpc_set_add_request: Unknown event: ", 44) == 0);
	CHECK_STR_CONTAINS(out, "'bogus-event'");
	CHECK(out[strlen(out) - 1] == '\n');
	cpc_close(cpc);
}

static void test_handler(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	CHECK_INT(cpc_seterrhndlr(cpc, handler), ==, 0);
	cpc_set_t *set = cpc_set_create(cpc);
	const char *out = add_bogus(cpc, set);
	CHECK_INT(calls, ==, 1);
	CHECK_INT(subcode, ==, CPC_INVALID_EVENT);
	CHECK_STR_EQ(fn_seen, "cpc_set_add_request");
	CHECK(strncmp(msg, "Unknown event: ", 15) == 0);
	CHECK_STR_EQ(out, ""); /* nothing on stderr */

	cpc_attr_t a = {"no-such-attribute", 1};
	errno = 0;
	CHECK_INT(cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER, 1, &a), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(subcode, ==, CPC_INVALID_ATTRIBUTE);
	CHECK_INT(cpc_set_add_request(cpc, set, "task-clock", 0, 0x100, 0, NULL), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(subcode, ==, CPC_REQ_INVALID_FLAGS);
	CHECK_INT(calls, ==, 3);

	/* NULL: the default report again. */
	CHECK_INT(cpc_seterrhndlr(cpc, NULL), ==, 0);
	out = add_bogus(cpc, set);
	CHECK_INT(calls, ==, 3);
	CHECK_STR_CONTAINS(out, "libcpc: cpc_set_add_request: Unknown event");
	cpc_close(cpc);
}

/* The page's example: report only binding errors unless debugging. */
static int debugging;
static int reported;

static void myapp_errfn(const char *fn, int code, const char *fmt, va_list ap)
{
	(void)code, (void)fmt, (void)ap;
	if (strncmp(fn, "cpc_bind", 8) != 0 && !debugging)
		return;
	reported++;
}

static int example_unprivileged(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	if (!cpc)
		return 1;
	cpc_seterrhndlr(cpc, myapp_errfn);
	cpc_set_t *set = cpc_set_create(cpc);
	if (cpc_set_add_request(cpc, set, "bogus", 0, CPC_COUNT_USER, 0, NULL) != -1 || reported)
		return 2;
	/* Kernel counting is refused to nobody at perf_event_paranoid 2. */
	cpc_set_add_request(cpc, set, "page-faults", 0, CPC_COUNT_SYSTEM, 0, NULL);
	if (cpc_bind_curlwp(cpc, set, 0) != -1 || errno != EACCES || reported != 1)
		return 3;
	return cpc_close(cpc);
}

static void test_example(void)
{
	CHECK_AS_NOBODY(example_unprivileged);
}

int main(void)
{
	RUN(test_default_report);
	RUN(test_handler);
	RUN(test_example);
	return check_exit();
}
