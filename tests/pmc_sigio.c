/* Target exit, as pmcstat waits for it: hwpmc sends the owner SIGIO when a
 * PMC has lost its last target process (at the target's exit, and when
 * it is detached).  The owner blocks SIGIO and waits for it, as a Linux
 * port of pmcstat's kqueue EVFILT_SIGNAL wait does with sigtimedwait(). */
#include "pmc_test.h"

#include <stdio.h>

/* Generous: only a lost signal reaches it, and that fails the test. */
#define WAIT_S 30

static bool sigio_within(long sec, long nsec)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	struct timespec ts = {sec, nsec};
	int s;
	while ((s = sigtimedwait(&set, NULL, &ts)) < 0 && errno == EINTR)
		;
	return s == SIGIO;
}

static int touch_and_exit(void *arg)
{
	(void)arg;
	volatile char buf[1 << 16];
	for (size_t i = 0; i < sizeof(buf); i += 4096)
		buf[i] = 1;
	return 0;
}

static void test_exit(void)
{
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	struct waiting w = spawn(touch_and_exit, NULL);
	CHECK_INT(pmc_attach(id, w.pid), ==, 0);
	CHECK_INT(pmc_start(id), ==, 0);
	CHECK(!sigio_within(0, 0)); /* the target lives */
	release(w);
	CHECK(sigio_within(WAIT_S, 0));
	/* Sent at the exit: the child is a zombie now. */
	int status;
	CHECK_INT(waitpid(w.pid, &status, WNOHANG), ==, w.pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_U64(read_pmc(id), >, 0); /* the counts stay */
	CHECK_INT(pmc_release(id), ==, 0);
	CHECK(!sigio_within(0, 0)); /* once */
}

/* With two targets, the last one's exit counts. */
static void test_last_of_two(void)
{
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	struct waiting a = spawn(touch_and_exit, NULL), b = spawn(touch_and_exit, NULL);
	CHECK_INT(pmc_attach(id, a.pid), ==, 0);
	CHECK_INT(pmc_attach(id, b.pid), ==, 0);
	CHECK_INT(pmc_start(id), ==, 0);
	release(a);
	reap(a.pid);
	CHECK(!sigio_within(0, 300 * 1000000L)); /* b still runs */
	release(b);
	CHECK(sigio_within(WAIT_S, 0));
	reap(b.pid);
	CHECK_INT(pmc_release(id), ==, 0);
}

/* pmc_detach() of the last target unlinks it too. */
static void test_detach(void)
{
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	struct waiting w = spawn(touch_and_exit, NULL);
	CHECK_INT(pmc_attach(id, w.pid), ==, 0);
	CHECK_INT(pmc_detach(id, w.pid), ==, 0);
	CHECK(sigio_within(WAIT_S, 0));
	release(w);
	reap(w.pid);
	CHECK(!sigio_within(0, 300 * 1000000L)); /* detached: its exit is not ours */
	CHECK_INT(pmc_release(id), ==, 0);
}

/* FreeBSD ignores SIGIO by default; Linux would terminate the owner, so an
 * owner that neither handles nor blocks it is not sent one. */
static void test_default_action(void)
{
	fflush(NULL);
	pid_t owner = fork();
	if (owner == 0) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGIO);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		signal(SIGIO, SIG_DFL);
		pmc_id_t id;
		if (pmc_allocate("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0))
			_exit(2);
		struct waiting w = spawn(touch_and_exit, NULL);
		if (pmc_attach(id, w.pid) || pmc_start(id))
			_exit(3);
		release(w);
		reap(w.pid);
		struct timespec ts = {0, 500 * 1000000L};
		nanosleep(&ts, NULL); /* time for a signal that must not come */
		_exit(0);
	}
	int status = reap(owner);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), ==, 0);
}

int main(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	sigprocmask(SIG_BLOCK, &set, NULL);
	init_or_die();
	RUN(test_exit);
	RUN(test_last_of_two);
	RUN(test_detach);
	RUN(test_default_action);
	return check_exit();
}
