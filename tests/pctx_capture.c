/* pctx_capture(3CPC): starting a command and taking an existing process,
 * running the event loop with ticks, releasing -- and the promise that the
 * controlled process runs to completion, never stopped or killed, even
 * when its controller dies. */
#include "cpc_test.h"

#include <signal.h>
#include <sys/stat.h>
#include <time.h>

static char errbuf[2048];
static char errfn_seen[32];

static void errfn(const char *fn, const char *fmt, va_list ap)
{
	snprintf(errfn_seen, sizeof(errfn_seen), "%s", fn);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
}

static int exit_status = -1000, inits, finis, ticks;

static void on_exit_ev(pctx_t *p, pid_t pid, id_t lwpid, int status, void *arg)
{
	(void)p, (void)pid, (void)lwpid, (void)arg;
	exit_status = status;
}

static int on_init(pctx_t *p, pid_t pid, id_t lwpid, void *arg)
{
	(void)p, (void)pid, (void)lwpid, (void)arg;
	inits++;
	return 0;
}

static int on_fini(pctx_t *p, pid_t pid, id_t lwpid, void *arg)
{
	(void)p, (void)pid, (void)lwpid, (void)arg;
	finis++;
	return 0;
}

static int on_tick(pctx_t *p, pid_t pid, id_t lwpid, void *arg)
{
	(void)p, (void)pid, (void)arg;
	if (lwpid >= 1)
		ticks++;
	return 0;
}

static void test_create(void)
{
	/* The command runs to its end; the exit handler gets its status. */
	char *argv[] = {workload("family"), "50", NULL};
	pctx_t *p = pctx_create(argv[0], argv, NULL, 0, errfn);
	CHECK(p != NULL);
	if (!p)
		return;
	exit_status = -1000;
	inits = finis = 0;
	CHECK_INT(pctx_set_events(p, PCTX_SYSC_EXIT_EVENT, on_exit_ev, PCTX_INIT_LWP_EVENT, on_init,
				  PCTX_FINI_LWP_EVENT, on_fini, PCTX_NULL_EVENT), ==, 0);
	CHECK_INT(pctx_run(p, 0, 0, NULL), ==, 0);
	pctx_release(p);
	CHECK_INT(exit_status, ==, 7);
	CHECK_INT(inits, ==, 2); /* the main thread and the second one */
	CHECK_INT(finis, ==, 2);
	/* Released after its exit: reaped, no zombie left. */
	CHECK_INT(waitpid(-1, NULL, WNOHANG), ==, -1);
	CHECK_INT(errno, ==, ECHILD);
}

static void test_create_errors(void)
{
	char *argv[] = {"hwc-no-such-program", NULL};
	errbuf[0] = '\0';
	CHECK(pctx_create(argv[0], argv, NULL, 0, errfn) == NULL);
	CHECK_STR_EQ(errfn_seen, "create");
	CHECK_STR_CONTAINS(errbuf, "cannot find program 'hwc-no-such-program'");
	char *argv2[] = {"/tmp", NULL}; /* a directory */
	CHECK(pctx_create(argv2[0], argv2, NULL, 0, errfn) == NULL);
	CHECK_STR_CONTAINS(errbuf, "cannot execute program '/tmp': Permission denied");
	/* The default report goes to stderr. */
	stderr_capture();
	CHECK(pctx_create(argv[0], argv, NULL, 0, NULL) == NULL);
	CHECK_STR_CONTAINS(stderr_captured(),
			   "libpctx: pctx_create: cannot find program 'hwc-no-such-program'");
	/* Nothing left behind. */
	CHECK_INT(waitpid(-1, NULL, WNOHANG), ==, -1);
}

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void test_capture_run_release(void)
{
	/* Sleeps 400 times 1 ms: long enough for a few ticks of 20 ms. */
	char *argv[] = {workload("sleeper"), "400", NULL};
	pid_t pid = spawn(argv);
	usleep(20000);
	pctx_t *p = pctx_capture(pid, NULL, 0, errfn);
	CHECK(p != NULL);
	if (!p)
		return;
	inits = ticks = 0;
	pctx_set_events(p, PCTX_INIT_LWP_EVENT, on_init, PCTX_NULL_EVENT);
	/* Three ticks, then pctx_run() returns with the process still ours. */
	CHECK_INT(pctx_run(p, 20, 3, on_tick), ==, 0);
	CHECK_INT(inits, ==, 1); /* the process was met: init_lwp for its LWP */
	CHECK_INT(ticks, ==, 3);
	pctx_release(p);
	/* Released: it runs on, untraced, and ends normally. */
	CHECK(proc_state(pid) != 't');
	int status;
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_capture_errors(void)
{
	CHECK(pctx_capture(getpid(), NULL, 0, errfn) == NULL);
	CHECK_STR_CONTAINS(errbuf, "cannot capture self!");
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	/* A zombie until reaped. */
	while (proc_state(dead) != 'Z')
		usleep(1000);
	CHECK(pctx_capture(dead, NULL, 0, errfn) == NULL);
	CHECK_STR_CONTAINS(errbuf, "is a zombie");
	waitpid(dead, NULL, 0);
	CHECK(pctx_capture(dead, NULL, 0, errfn) == NULL);
	CHECK_STR_CONTAINS(errbuf, "doesn't exist");
	CHECK(pctx_capture(2, NULL, 0, errfn) == NULL); /* kthreadd */
	CHECK_STR_CONTAINS(errbuf, "is a system process");
	/* One controller at a time. */
	char *argv[] = {workload("sleeper"), "200", NULL};
	pid_t pid = spawn(argv);
	pctx_t *p = pctx_capture(pid, NULL, 0, errfn);
	CHECK(p != NULL);
	CHECK(pctx_capture(pid, NULL, 0, errfn) == NULL);
	CHECK_STR_CONTAINS(errbuf, "is already being traced");
	pctx_release(p);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int capture_root_process(void)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", getenv("PCTX_TEST_TARGET"));
	pctx_t *p = pctx_capture((pid_t)atoi(buf), NULL, 0, errfn);
	if (p || !strstr(errbuf, "permission denied"))
		return 1;
	return 0;
}

static void test_capture_unprivileged(void)
{
	if (geteuid() != 0) {
		SKIP_SUB("needs root to become nobody");
		return;
	}
	char *argv[] = {workload("sleeper"), "200", NULL};
	pid_t pid = spawn(argv);
	char buf[32];
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	setenv("PCTX_TEST_TARGET", buf, 1);
	CHECK_INT(as_nobody(capture_root_process), ==, 0);
	waitpid(pid, NULL, 0);
}

/* SIGUSR1, raised from a handler, ends pctx_run() through pctx_terminate(). */
static pctx_t *to_end;

static void on_usr1(int sig)
{
	(void)sig;
	pctx_terminate(to_end);
}

static int init_then_signal(pctx_t *p, pid_t pid, id_t lwpid, void *arg)
{
	(void)p, (void)pid, (void)lwpid, (void)arg;
	raise(SIGUSR1);
	return 0;
}

static void test_terminate(void)
{
	signal(SIGUSR1, on_usr1);
	char *argv[] = {workload("sleeper"), "300", NULL};
	to_end = pctx_create(argv[0], argv, NULL, 0, errfn);
	CHECK(to_end != NULL);
	if (!to_end)
		return;
	pctx_set_events(to_end, PCTX_INIT_LWP_EVENT, init_then_signal, PCTX_SYSC_EXIT_EVENT,
			on_exit_ev, PCTX_NULL_EVENT);
	exit_status = -1000;
	CHECK_INT(pctx_run(to_end, 0, 0, NULL), ==, 0);
	CHECK_INT(exit_status, ==, -1000); /* returned before the process ended */
	pctx_release(to_end);
	/* The created process is our child: it ends normally, untraced. */
	int status;
	CHECK(wait(&status) > 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	signal(SIGUSR1, SIG_DFL);
}

/* A controller process that starts the command, says its pid on FD, and
 * runs the loop; the test kills it with SIG mid-run. */
static void controller(int fd, const char *marker)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "%s 300 && echo done > %s", workload("sleeper"), marker);
	char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	pctx_t *p = pctx_create(argv[0], argv, NULL, 0, NULL);
	if (!p)
		_exit(1);
	pid_t pid = pctx_lwp_tid(p, 1);
	if (write(fd, &pid, sizeof(pid)) != sizeof(pid))
		_exit(1);
	close(fd);
	pctx_set_events(p, PCTX_INIT_LWP_EVENT, on_init, PCTX_FINI_LWP_EVENT, on_fini,
			PCTX_NULL_EVENT);
	pctx_run(p, 5, 0, on_tick);
	pctx_release(p);
	_exit(0);
}

static void test_controller_killed(void)
{
	int sigs[] = {SIGKILL, SIGTERM, SIGINT, SIGHUP};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		char marker[64];
		snprintf(marker, sizeof(marker), "/tmp/pctx-test-%d-%zu", (int)getpid(), i);
		unlink(marker);
		int p[2];
		if (pipe(p))
			abort();
		pid_t ctl = fork();
		if (ctl == 0) {
			close(p[0]);
			controller(p[1], marker);
		}
		close(p[1]);
		pid_t target = -1;
		CHECK_INT(read(p[0], &target, sizeof(target)), ==, sizeof(target));
		close(p[0]);
		usleep(50000); /* in the middle of the run (the command sleeps 300 ms) */
		kill(ctl, sigs[i]);
		int status;
		waitpid(ctl, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i]);
		/* The command finishes normally: the marker appears.  (The limit
		 * only guards against a hang; nothing here is timed.) */
		struct stat st;
		for (int tries = 0; tries < 3000 && stat(marker, &st) != 0; tries++)
			usleep(10000);
		CHECK_INT(stat(marker, &st), ==, 0);
		if (stat(marker, &st) != 0)
			fprintf(stderr, "  after %s: target %d is in state '%c'\n", strsignal(sigs[i]),
				(int)target, proc_state(target));
		unlink(marker);
	}
}

int main(void)
{
	RUN(test_create);
	RUN(test_create_errors);
	RUN(test_capture_run_release);
	RUN(test_capture_errors);
	RUN(test_capture_unprivileged);
	RUN(test_terminate);
	RUN(test_controller_killed);
	return check_exit();
}
