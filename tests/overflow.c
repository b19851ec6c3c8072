/* Overflow notification by signal while counting (hwc_counters_overflow_*),
 * and inheriting to threads only (HWC_THREADS_ONLY), with page-faults: a
 * software event whose count the test controls exactly by touching pages. */
#include <hwc/hwc.h>

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t nsig, last_code, last_fd;

static void on_overflow(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	nsig++;
	last_code = si->si_code;
	last_fd = si->si_fd;
}

static uint64_t raw(hwc_counters *c, size_t ev)
{
	struct hwc_value v;
	CHECK_OK(hwc_counters_read(c));
	CHECK_OK(hwc_counters_value(c, 0, ev, &v));
	return v.raw;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Open L on this thread, its event EV (page-faults) signalling SIGUSR1
 * every 100 counts, and start it. */
static hwc_counters *start_signalling(hwc_evlist *l, size_t ev)
{
	hwc_evlist_attr(l, ev)->sample_period = 100;
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	hwc_counters *c;
	int err = hwc_counters_open(&c, l, &t);
	CHECK_INT(err, ==, 0);
	if (err)
		exit(1);
	nsig = 0;
	CHECK_OK(hwc_counters_overflow_signal(c, 0, ev, SIGUSR1, gettid_()));
	CHECK_OK(hwc_counters_start(c));
	return c;
}

static void test_oneshot_and_rearm(void)
{
	hwc_evlist *l = check_evlist("{page-faults,task-clock}");
	hwc_counters *c = start_signalling(l, 0);
	touch_pages(300);
	/* One signal, then the group is frozen at the overflow. */
	CHECK_INT(nsig, ==, 1);
	CHECK_INT(last_code, ==, POLL_HUP);
	CHECK_INT(last_fd, ==, hwc_counters_fd(c, 0, 0));
	uint64_t frozen = raw(c, 0);
	CHECK_U64(frozen, >=, 100);
	CHECK_U64(frozen, <=, 102);
	uint64_t clock = raw(c, 1);
	touch_pages(50);
	CHECK_U64(raw(c, 1), ==, clock); /* the group member stopped too */
	CHECK_U64(raw(c, 0), ==, frozen);

	/* Re-armed with a new period: counts again, one more signal. */
	CHECK_OK(hwc_counters_overflow_rearm(c, 0, 0, 50));
	touch_pages(200);
	CHECK_INT(nsig, ==, 2);
	uint64_t second = raw(c, 0);
	CHECK_U64(second, >=, frozen + 50);
	CHECK_U64(second, <=, frozen + 52);

	/* Re-armed twice without an overflow in between: still exactly one
	 * signal, and the count stops a full period after the last re-arm. */
	CHECK_OK(hwc_counters_overflow_rearm(c, 0, 0, 1000));
	touch_pages(10);
	CHECK_OK(hwc_counters_overflow_rearm(c, 0, 0, 0));
	uint64_t at = raw(c, 0);
	touch_pages(1500);
	CHECK_INT(nsig, ==, 3);
	CHECK_U64(raw(c, 0) - at, >=, 1000);
	CHECK_U64(raw(c, 0) - at, <=, 1002);

	/* Stopped counters stay stopped through a re-arm; start arms again. */
	CHECK_OK(hwc_counters_stop(c));
	CHECK_OK(hwc_counters_overflow_rearm(c, 0, 0, 100));
	at = raw(c, 0);
	touch_pages(150);
	CHECK_U64(raw(c, 0), ==, at);
	CHECK_INT(nsig, ==, 3);
	CHECK_OK(hwc_counters_start(c));
	touch_pages(150);
	CHECK_INT(nsig, ==, 4);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

static void test_sibling_overflow(void)
{
	/* A member that overflows stops alone; its leader keeps counting. */
	hwc_evlist *l = check_evlist("{task-clock,page-faults}");
	hwc_counters *c = start_signalling(l, 1);
	touch_pages(300);
	CHECK_INT(nsig, ==, 1);
	uint64_t faults = raw(c, 1), clock = raw(c, 0);
	CHECK_U64(faults, <=, 102);
	touch_pages(50);
	CHECK_U64(raw(c, 1), ==, faults);
	CHECK_U64(raw(c, 0), >, clock);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

static void test_errors(void)
{
	hwc_evlist *l = check_evlist("page-faults");
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	hwc_counters *c;
	CHECK_OK(hwc_counters_open(&c, l, &t));
	CHECK_INT(hwc_counters_overflow_signal(c, 0, 0, SIGUSR1, gettid_()), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "has no sample period");
	CHECK_INT(hwc_counters_overflow_rearm(c, 0, 0, 10), ==, -EINVAL);
	CHECK_INT(hwc_counters_overflow_signal(c, 1, 0, SIGUSR1, gettid_()), ==, -EINVAL);
	hwc_counters_close(c);

	hwc_evlist_attr(l, 0)->sample_period = 10;
	t.flags = 0; /* inherit: the kernel cannot stop inherited counters */
	CHECK_OK(hwc_counters_open(&c, l, &t));
	CHECK_INT(hwc_counters_overflow_signal(c, 0, 0, SIGUSR1, gettid_()), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "HWC_NO_INHERIT");
	hwc_counters_close(c);

	t.flags = HWC_NO_INHERIT;
	CHECK_OK(hwc_counters_open(&c, l, &t));
	CHECK_INT(hwc_counters_overflow_signal(c, 0, 0, SIGKILL, gettid_()), ==, -EINVAL);
	CHECK_INT(hwc_counters_overflow_signal(c, 0, 0, 0, gettid_()), ==, -EINVAL);
	CHECK_OK(hwc_counters_overflow_signal(c, 0, 0, SIGUSR1, gettid_()));
	CHECK_INT(hwc_counters_overflow_rearm(c, 0, 0, 1ULL << 63), ==, -EINVAL);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

static void test_threads_only(void)
{
	hwc_evlist *l = check_evlist("page-faults");
	for (int only = 0; only < 2; only++) {
		struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = only ? HWC_THREADS_ONLY : 0};
		hwc_counters *c;
		int err = hwc_counters_open(&c, l, &t);
		if (err == -EINVAL && only) {
			SKIP_SUB("this kernel has no inherit_thread (Linux 5.13+): %s", hwc_errdetail());
			break;
		}
		CHECK_INT(err, ==, 0);
		CHECK_OK(hwc_counters_start(c));
		touch_pages_in_thread(500);
		touch_pages_in_child(1000);
		hwc_counters_stop(c);
		struct hwc_value v;
		hwc_counters_read(c);
		CHECK_OK(hwc_counters_value(c, HWC_ALL, 0, &v));
		CHECK_U64(v.raw, >=, 500); /* the thread is counted either way */
		if (only)
			CHECK_U64(v.raw, <, 1000); /* the child process is not */
		else
			CHECK_U64(v.raw, >=, 1500);
		hwc_counters_close(c);
	}
	hwc_evlist_free(l);
}

int main(void)
{
	struct sigaction sa = {.sa_sigaction = on_overflow, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	RUN(test_oneshot_and_rearm);
	RUN(test_sibling_overflow);
	RUN(test_errors);
	RUN(test_threads_only);
	return check_exit();
}
