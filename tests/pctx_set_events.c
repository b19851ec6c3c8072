/* pctx_set_events(3CPC): which handlers run, in which order, with which
 * pid, LWP id and arguments, for a plain program, threads, exec, exit and
 * fork (whose handler runs in a new controller process). */
#include "cpc_test.h"

#include <stdarg.h>

/* Every handler appends "event pid lwp [extra]" to LOG; the fork handler's
 * process writes its lines to a pipe. */
static char log_buf[16384];
static size_t log_len;
static int log_fd = -1;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_fd >= 0) {
		if (write(log_fd, line, (size_t)n) != n)
			abort();
	} else if (log_len + (size_t)n < sizeof(log_buf)) {
		memcpy(log_buf + log_len, line, (size_t)n + 1);
		log_len += (size_t)n;
	}
}

static pid_t target, forked;

/* P: the process run by the test; C: its child, followed after a fork. */
static const char *who(pid_t pid)
{
	return pid == target ? "P" : pid == forked ? "C" : "?";
}

static int ev_init(pctx_t *p, pid_t pid, id_t lwp, void *arg)
{
	(void)p;
	note("init_lwp %s %d%s\n", who(pid), (int)lwp, arg == &target ? "" : " bad-arg");
	return 0;
}

static int ev_fini(pctx_t *p, pid_t pid, id_t lwp, void *arg)
{
	(void)p, (void)arg;
	note("fini_lwp %s %d\n", who(pid), (int)lwp);
	return 0;
}

static int ev_lwp_create(pctx_t *p, pid_t pid, id_t lwp, void *arg)
{
	(void)p, (void)pid, (void)arg;
	note("lwp_create %d\n", (int)lwp);
	return 0;
}

static int ev_lwp_exit(pctx_t *p, pid_t pid, id_t lwp, void *arg)
{
	(void)p, (void)pid, (void)arg;
	note("lwp_exit %d\n", (int)lwp);
	return 0;
}

static int exec_result;

static int ev_exec(pctx_t *p, pid_t pid, id_t lwp, char *cmd, void *arg)
{
	(void)p, (void)arg;
	note("exec %s %d '%s'\n", who(pid), (int)lwp, cmd);
	return exec_result;
}

static void ev_exit(pctx_t *p, pid_t pid, id_t lwp, int status, void *arg)
{
	(void)p, (void)arg;
	note("exit %s %d %d\n", who(pid), (int)lwp, status);
}

/* As cputrack declares it: illumos's libpctx passes the child's pid third
 * and the LWP id fourth, although its typedef names them the other way. */
static void ev_fork(pctx_t *p, pid_t pid, pid_t child, id_t lwp, void *arg)
{
	/* In a new controller process, holding the child. */
	forked = child;
	note("fork %s %d child-%s\n", who(pid), (int)lwp,
	     child != pid && child > 0 ? "ok" : "bad");
	pctx_set_events(p, PCTX_SYSC_EXEC_EVENT, ev_exec, PCTX_SYSC_EXIT_EVENT, ev_exit,
			PCTX_INIT_LWP_EVENT, ev_init, PCTX_FINI_LWP_EVENT, ev_fini, PCTX_NULL_EVENT);
	note("child run %d\n", pctx_run(p, 0, 0, NULL));
	(void)arg;
}

static int run_program(char *const argv[], int result_of_exec, bool follow_fork)
{
	log_len = 0;
	log_buf[0] = '\0';
	exec_result = result_of_exec;
	pctx_t *p = pctx_create(argv[0], argv, &target, 0, NULL);
	if (!p)
		return -100;
	target = pctx_lwp_tid(p, 1);
	int err = pctx_set_events(p, PCTX_SYSC_EXEC_EVENT, ev_exec, PCTX_SYSC_EXIT_EVENT, ev_exit,
				  PCTX_SYSC_LWP_CREATE_EVENT, ev_lwp_create, PCTX_INIT_LWP_EVENT,
				  ev_init, PCTX_FINI_LWP_EVENT, ev_fini, PCTX_SYSC_LWP_EXIT_EVENT,
				  ev_lwp_exit, follow_fork ? PCTX_SYSC_FORK_EVENT : PCTX_NULL_EVENT,
				  ev_fork, PCTX_NULL_EVENT);
	int r = err ? -200 : pctx_run(p, 0, 0, NULL);
	pctx_release(p);
	return r;
}

static void test_hello_world(void)
{
	/* "init_lwp, fini_lwp and exit, in that order." */
	char *argv[] = {workload("pagetouch"), "1", NULL};
	CHECK_INT(run_program(argv, 0, false), ==, 0);
	CHECK_STR_EQ(log_buf, "init_lwp P 1\nfini_lwp P 1\nexit P 1 0\n");
	fprintf(stderr, "%s", log_buf);
}

static void test_threads(void)
{
	/* family: a second thread, then a fork not followed, exit 7. */
	char *argv[] = {workload("family"), "10", NULL};
	CHECK_INT(run_program(argv, 0, false), ==, 0);
	CHECK_STR_EQ(log_buf, "init_lwp P 1\n"
			      "init_lwp P 2\nlwp_create 2\n"
			      "fini_lwp P 2\nlwp_exit 2\n"
			      "fini_lwp P 1\nexit P 1 7\n");
	fprintf(stderr, "%s", log_buf);
}

static void test_exec(void)
{
	/* fini_lwp before the exec, exec with the command, init_lwp on LWP 1. */
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "exec %s 3", workload("pagetouch"));
	char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	CHECK_INT(run_program(argv, 0, false), ==, 0);
	char want[2048];
	snprintf(want, sizeof(want),
		 "init_lwp P 1\nfini_lwp P 1\nexec P 1 '%s 3'\ninit_lwp P 1\nfini_lwp P 1\n"
		 "exit P 1 0\n",
		 workload("pagetouch"));
	CHECK_STR_EQ(log_buf, want);
	fprintf(stderr, "%s", log_buf);
	/* An exec handler that fails ends the loop with -1; the program goes on. */
	CHECK_INT(run_program(argv, -1, false), ==, -1);
	CHECK_STR_CONTAINS(log_buf, "exec P 1");
	int status;
	CHECK(wait(&status) > 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_fork(void)
{
	/* The fork handler runs in a new controller; its lines come by pipe. */
	int fds[2];
	if (pipe(fds))
		abort();
	char *argv[] = {workload("family"), "10", NULL};
	log_fd = fds[1];
	int r = run_program(argv, 0, true);
	log_fd = -1;
	close(fds[1]);
	char all[8192];
	size_t n = 0;
	ssize_t got;
	while ((got = read(fds[0], all + n, sizeof(all) - 1 - n)) > 0)
		n += (size_t)got;
	all[n] = '\0';
	close(fds[0]);
	CHECK_INT(r, ==, 0);
	fprintf(stderr, "%s", all);
	/* The parent's own events, in order... */
	const char *order[] = {"init_lwp P 1\n", "init_lwp P 2\n", "lwp_create 2\n",
			       "fini_lwp P 2\n", "lwp_exit 2\n", "fini_lwp P 1\n", "exit P 1 7\n"};
	const char *at = all;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const char *hit = strstr(at, order[i]);
		CHECK(hit != NULL);
		if (!hit)
			fprintf(stderr, "missing or out of order: %s", order[i]);
		else
			at = hit + strlen(order[i]);
	}
	/* ...and the child's, from its controller: fork, then its life. */
	CHECK_STR_CONTAINS(all, "fork P 1 child-ok\n");
	CHECK_STR_CONTAINS(all, "init_lwp C 1\nfini_lwp C 1\nexec C 1 'pagetouch 10'\n"
				"init_lwp C 1\nfini_lwp C 1\nexit C 1 0\nchild run 0\n");
}

static char errbuf[512];

static void errfn(const char *fn, const char *fmt, va_list ap)
{
	(void)fn;
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
}

static void test_bad_event(void)
{
	char *argv[] = {workload("pagetouch"), "1", NULL};
	pctx_t *p = pctx_create(argv[0], argv, NULL, 0, errfn);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_INT(pctx_set_events(p, (pctx_event_t)42, ev_init, PCTX_NULL_EVENT), ==, -1);
	CHECK_STR_CONTAINS(errbuf, "unknown event type 2a");
	/* Still usable: run it to its end. */
	CHECK_INT(pctx_set_events(p, PCTX_NULL_EVENT), ==, 0);
	CHECK_INT(pctx_run(p, 0, 0, NULL), ==, 0);
	pctx_release(p);
}

static int ticks_bad, ticks;

static int tick_fn(pctx_t *p, pid_t pid, id_t lwp, void *arg)
{
	(void)arg;
	ticks++;
	if (pid != target || pctx_lwp_tid(p, lwp) != target)
		ticks_bad++;
	return 0;
}

static void test_ticks(void)
{
	/* 300 sleeps of 1 ms: at least 300 ms, so at least one 20 ms tick. */
	char *argv[] = {workload("sleeper"), "300", NULL};
	pctx_t *p = pctx_create(argv[0], argv, &target, 0, NULL);
	CHECK(p != NULL);
	if (!p)
		return;
	target = pctx_lwp_tid(p, 1);
	pctx_set_events(p, PCTX_INIT_LWP_EVENT, ev_init, PCTX_NULL_EVENT);
	CHECK_INT(pctx_run(p, 20, 0, tick_fn), ==, 0);
	pctx_release(p);
	CHECK_INT(ticks, >=, 1);
	CHECK_INT(ticks_bad, ==, 0);
}

int main(void)
{
	RUN(test_hello_world);
	RUN(test_threads);
	RUN(test_exec);
	RUN(test_fork);
	RUN(test_bad_event);
	RUN(test_ticks);
	return check_exit();
}
