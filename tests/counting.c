/* Live tests of the counting core with software events: self, group read,
 * start/stop/reset, attach to a pid (and a thread created after attaching),
 * inherit on/off, per-CPU (with a command), tracepoint filters, and the
 * error paths.  Starting a command: tests/spawn.c.  And, through src/ and
 * libhwc.a, which events of a refused weak group stay grouped: a rule for
 * Intel's PMU, which these machines lack. */
#include <hwc/hwc.h>
#include <hwc/sample.h>

#include "check.h"
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_self(void)
{
	hwc_evlist *l = check_evlist("{task-clock,page-faults}");
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	hwc_counters *c = check_counters_open(l, &t);
	CHECK_INT(hwc_counters_ninstances(c), ==, 1);
	CHECK_OK(hwc_counters_start(c));
	touch_pages(500);
	CHECK_OK(hwc_counters_stop(c));
	CHECK_OK(hwc_counters_read(c));
	struct hwc_value clock, faults;
	CHECK_OK(hwc_counters_value(c, HWC_ALL, 0, &clock));
	CHECK_OK(hwc_counters_value(c, HWC_ALL, 1, &faults));
	CHECK_U64(faults.raw, >=, 500);
	CHECK_U64(faults.raw, <, 600);
	CHECK_U64(clock.raw, >, 0);
	/* One read(2) of the group: both members carry the same times. */
	CHECK_U64(clock.enabled, ==, faults.enabled);
	CHECK_U64(clock.running, ==, faults.running);
	CHECK_U64(faults.scaled, ==, faults.raw);
	CHECK(!hwc_value_multiplexed(&faults));
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

/* A group is one kernel group: one read(2) of the leader returns every
 * member, and the members count only while the leader is scheduled. */
static void test_group_is_one_kernel_group(void)
{
	hwc_evlist *l = check_evlist("{task-clock,page-faults,context-switches},page-faults");
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	hwc_counters *c = check_counters_open(l, &t);
	CHECK_INT(hwc_evlist_event(l, 0)->group, ==, hwc_evlist_event(l, 2)->group);
	CHECK_INT(hwc_evlist_event(l, 3)->group, !=, hwc_evlist_event(l, 0)->group);
	CHECK_OK(hwc_counters_start(c));
	touch_pages(200);

	/* PERF_FORMAT_GROUP: nr, time enabled, time running, then one value
	 * per member, all from the leader's file descriptor. */
	uint64_t buf[16] = {0};
	int leader = hwc_counters_fd(c, 0, 0);
	CHECK(leader >= 0);
	ssize_t n = read(leader, buf, sizeof(buf));
	CHECK_INT(n, ==, (ssize_t)(6 * sizeof(uint64_t)));
	CHECK_U64(buf[0], ==, 3);
	CHECK_U64(buf[1], >, 0);
	CHECK_U64(buf[4], >=, 200); /* page-faults, the second member */
	/* The single event after the group is a group of its own. */
	CHECK_INT(read(hwc_counters_fd(c, 0, 3), buf + 8, sizeof(buf) / 2), ==,
		  (ssize_t)(3 * sizeof(uint64_t)));

	/* Disabling the leader alone takes the whole group off the PMU: the
	 * members stop, the event outside the group goes on. */
	CHECK_INT(ioctl(leader, PERF_EVENT_IOC_DISABLE, 0), ==, 0);
	CHECK_OK(hwc_counters_read(c));
	uint64_t member = check_value(c, 1), outside = check_value(c, 3);
	touch_pages(200);
	CHECK_OK(hwc_counters_read(c));
	CHECK_U64(check_value(c, 1), ==, member);
	CHECK_U64(check_value(c, 3), >=, outside + 200);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

static void test_start_stop_reset(void)
{
	hwc_evlist *l = check_evlist("page-faults");
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	hwc_counters *c = check_counters_open(l, &t);
	hwc_counters_read(c);
	CHECK_U64(check_value(c, 0), ==, 0); /* opened disabled */
	hwc_counters_start(c);
	touch_pages(100);
	hwc_counters_stop(c);
	hwc_counters_read(c);
	uint64_t stopped = check_value(c, 0);
	CHECK_U64(stopped, >=, 100);
	touch_pages(100); /* not counted: stopped */
	hwc_counters_read(c);
	CHECK_U64(check_value(c, 0), ==, stopped);
	hwc_counters_start(c);
	touch_pages(100);
	hwc_counters_read(c);
	CHECK_U64(check_value(c, 0), >=, stopped + 100);
	CHECK_OK(hwc_counters_reset(c));
	CHECK_U64(check_value(c, 0), ==, 0);
	touch_pages(50);
	hwc_counters_read(c);
	struct hwc_value v;
	hwc_counters_value(c, HWC_ALL, 0, &v);
	CHECK_U64(v.raw, >=, 50);
	CHECK_U64(v.raw, <, 100);
	/* Times restart at the reset too, so scaling stays honest. */
	CHECK_U64(v.enabled, <, 1000000000ULL);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

/* A child that, on each byte from the parent, starts a new thread that
 * touches pages; then reports back.  Lets us attach first and create the
 * thread afterwards. */
static pid_t start_helper(int *cmd, int *ack)
{
	int a[2], b[2];
	if (pipe(a) || pipe(b))
		abort();
	pid_t pid = fork();
	if (pid == 0) {
		close(a[1]);
		close(b[0]);
		char x;
		while (read(a[0], &x, 1) == 1) {
			touch_pages_in_thread(300);
			if (write(b[1], "k", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	*cmd = a[1];
	*ack = b[0];
	return pid;
}

static void test_attach_pid_new_thread(void)
{
	int cmd, ack;
	pid_t pid = start_helper(&cmd, &ack);
	hwc_evlist *l = check_evlist("page-faults");
	struct hwc_target t = {.kind = HWC_TARGET_PROCESS, .pid = pid};
	hwc_counters *c = check_counters_open(l, &t);
	CHECK_INT(hwc_counters_pid(c), ==, pid);
	CHECK_INT(hwc_counters_ninstances(c), ==, 1);
	CHECK_INT(hwc_counters_instance_tid(c, 0), ==, pid);
	hwc_counters_start(c);
	char x;
	CHECK_INT(write(cmd, "g", 1), ==, 1); /* the thread is created now */
	CHECK_INT(read(ack, &x, 1), ==, 1);
	hwc_counters_read(c);
	CHECK_U64(check_value(c, 0), >=, 300);
	close(cmd);
	waitpid(pid, NULL, 0);
	/* Reading after the target died still works and keeps the counts. */
	CHECK_OK(hwc_counters_read(c));
	CHECK_U64(check_value(c, 0), >=, 300);
	hwc_counters_close(c);
	close(ack);

	/* Without inherit the new thread is not counted. */
	pid = start_helper(&cmd, &ack);
	t.pid = pid;
	t.flags = HWC_NO_INHERIT;
	c = check_counters_open(l, &t);
	hwc_counters_start(c);
	CHECK_INT(write(cmd, "g", 1), ==, 1);
	CHECK_INT(read(ack, &x, 1), ==, 1);
	hwc_counters_read(c);
	CHECK_U64(check_value(c, 0), <, 300);
	close(cmd);
	waitpid(pid, NULL, 0);
	close(ack);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

static void *idle_thread(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char x;
	if (read(fd, &x, 1) < 0)
		return NULL;
	return NULL;
}

static void test_attach_existing_threads(void)
{
	/* A process with 3 threads: one instance per thread. */
	int p[2];
	if (pipe(p))
		abort();
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, idle_thread, (void *)(intptr_t)p[0]);
	hwc_evlist *l = check_evlist("task-clock");
	struct hwc_target t = {.kind = HWC_TARGET_PROCESS, .pid = getpid()};
	hwc_counters *c = check_counters_open(l, &t);
	CHECK_INT(hwc_counters_ninstances(c), ==, 3);
	hwc_counters_close(c);
	CHECK_INT(write(p[1], "xx", 2), ==, 2);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	close(p[0]);
	close(p[1]);
	hwc_evlist_free(l);
}

static void test_inherit(void)
{
	hwc_evlist *l = check_evlist("page-faults");
	for (int inherit = 0; inherit < 2; inherit++) {
		struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = inherit ? 0 : HWC_NO_INHERIT};
		hwc_counters *c = check_counters_open(l, &t);
		hwc_counters_start(c);
		touch_pages_in_child(1000);
		hwc_counters_stop(c);
		hwc_counters_read(c);
		if (inherit)
			CHECK_U64(check_value(c, 0), >=, 1000);
		else
			CHECK_U64(check_value(c, 0), <, 1000);
		hwc_counters_close(c);
	}
	hwc_evlist_free(l);
}

static void test_per_cpu(void)
{
	int cpus[256];
	int n = hwc_online_cpus(cpus, 256);
	CHECK(n >= 1);
	hwc_evlist *l = check_evlist("cpu-clock");
	struct hwc_target t = {.kind = HWC_TARGET_CPUS};
	hwc_counters *c;
	int err = hwc_counters_open(&c, l, &t);
	if (err == -EACCES || err == -EPERM) {
		SKIP_SUB("system-wide counting not permitted: %s", hwc_errdetail());
		hwc_evlist_free(l);
		return;
	}
	CHECK_INT(err, ==, 0);
	CHECK_INT(hwc_counters_ninstances(c), ==, n);
	for (int i = 0; i < n; i++)
		CHECK_INT(hwc_counters_instance_cpu(c, (size_t)i), ==, cpus[i]);
	hwc_counters_start(c);
	usleep(20000);
	hwc_counters_stop(c);
	hwc_counters_read(c);
	uint64_t sum = 0;
	for (int i = 0; i < n; i++) {
		struct hwc_value v;
		hwc_counters_value(c, (size_t)i, 0, &v);
		CHECK_U64(v.enabled, >=, 15000000);
		CHECK_U64(v.raw, >, 0);
		sum += v.raw;
	}
	CHECK_U64(check_value(c, 0), ==, sum);
	hwc_counters_close(c);

	/* Only CPU 0. */
	int one = cpus[0];
	t.cpus = &one;
	t.ncpus = 1;
	c = check_counters_open(l, &t);
	CHECK_INT(hwc_counters_ninstances(c), ==, 1);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

/* A CPUS target with argv runs the command while every CPU counts (perf
 * stat -a -- CMD): the caller gets its pid, a descriptor that says when it
 * ended, and its exit status; an exec failure comes back from start. */
static void test_cpus_with_command(void)
{
	hwc_evlist *l = check_evlist("page-faults");
	char *argv[] = {"sh", "-c", "\"$0\" 3000; exit 7", workload("pagetouch"), NULL};
	struct hwc_target t = {.kind = HWC_TARGET_CPUS, .argv = argv};
	hwc_counters *c;
	int err = hwc_counters_open(&c, l, &t);
	if (err == -EACCES || err == -EPERM) {
		SKIP_SUB("system-wide counting not permitted: %s", hwc_errdetail());
		hwc_evlist_free(l);
		return;
	}
	CHECK_OK(err);
	pid_t pid = hwc_counters_pid(c);
	CHECK(pid > 0);
	CHECK_OK(hwc_counters_start(c));
	int fd = hwc_counters_wait_fd(c);
	CHECK(fd >= 0);
	if (pid <= 0 || fd < 0) { /* no command to wait for */
		hwc_counters_close(c);
		hwc_evlist_free(l);
		return;
	}
	struct pollfd p = {.fd = fd, .events = POLLIN};
	CHECK_INT(poll(&p, 1, -1), ==, 1);
	int status;
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	CHECK_OK(hwc_counters_stop(c));
	CHECK_OK(hwc_counters_read(c));
	CHECK_U64(check_value(c, 0), >=, 3000);
	hwc_counters_close(c);

	char *bad[] = {"/nonexistent/hwc-no-such-command", NULL};
	t.argv = bad;
	c = check_counters_open(l, &t);
	CHECK_INT(hwc_counters_start(c), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "cannot execute");
	CHECK_INT(hwc_counters_pid(c), ==, -1); /* reaped */
	CHECK_INT(hwc_counters_wait_fd(c), ==, -EINVAL);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

static void test_errors(void)
{
	hwc_evlist *l = check_evlist("task-clock");
	hwc_counters *c = NULL;

	int bad_cpu = 4096 + 7;
	struct hwc_target t = {.kind = HWC_TARGET_CPUS, .cpus = &bad_cpu, .ncpus = 1};
	CHECK_INT(hwc_counters_open(&c, l, &t), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "CPU 4103 is out of range");
	CHECK(c == NULL);

	/* A pid that does not exist: fork a child and reap it first. */
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	struct hwc_target p = {.kind = HWC_TARGET_PROCESS, .pid = dead};
	CHECK_INT(hwc_counters_open(&c, l, &p), ==, -ESRCH);
	CHECK_STR_CONTAINS(hwc_errdetail(), "no process with pid");
	p.kind = HWC_TARGET_THREAD;
	CHECK_INT(hwc_counters_open(&c, l, &p), ==, -ESRCH);
	hwc_evlist_free(l);
}

static void test_unsupported_hardware(void)
{
	hwc_evlist *l = check_evlist("cycles,task-clock");
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	hwc_counters *c = NULL;
	int err = hwc_counters_open(&c, l, &t);
	if (err == 0) {
		SKIP_SUB("this machine has a hardware PMU");
		hwc_counters_close(c);
		hwc_evlist_free(l);
		return;
	}
	CHECK_INT(err, ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "'cycles' is not supported on this machine");
	CHECK_STR_CONTAINS(hwc_errdetail(), "no hardware PMU");
	/* With SKIP_UNSUPPORTED the rest is counted and the skip is visible. */
	t.flags = HWC_SKIP_UNSUPPORTED;
	CHECK_OK(hwc_counters_open(&c, l, &t));
	CHECK_INT(hwc_counters_event_status(c, 0), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_counters_event_error(c, 0), "no hardware PMU");
	CHECK_OK(hwc_counters_event_status(c, 1));
	CHECK_INT(hwc_counters_fd(c, 0, 0), ==, -1);
	CHECK(hwc_counters_fd(c, 0, 1) >= 0);
	hwc_counters_start(c);
	hwc_counters_read(c);
	struct hwc_value v;
	CHECK_INT(hwc_counters_value(c, HWC_ALL, 0, &v), ==, -ENOENT);
	CHECK_OK(hwc_counters_value(c, HWC_ALL, 1, &v));
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

static void test_scale(void)
{
	CHECK_U64(hwc_scale(100, 1000, 1000), ==, 100);
	CHECK_U64(hwc_scale(100, 1000, 500), ==, 200);
	CHECK_U64(hwc_scale(100, 1000, 0), ==, 0);
	CHECK_U64(hwc_scale(100, 1000, 2000), ==, 100); /* never scaled down */
	CHECK_U64(hwc_scale(UINT64_MAX / 2, UINT64_MAX, 3), ==, UINT64_MAX);
	CHECK_U64(hwc_scale(1ULL << 62, 4, 2), ==, 1ULL << 63);
}

/* As an unprivileged user with perf_event_paranoid >= 2, kernel counting is
 * refused; the library counts user space only and says so. */
static void user_only_fallback_as_nobody(void)
{
	hwc_evlist *l = check_evlist("task-clock,page-faults:k");
	hwc_evlist *u = check_evlist("task-clock,page-faults");
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	hwc_counters *c;
	/* page-faults:k asks for the kernel explicitly: refused, with the fix. */
	CHECK_INT(hwc_counters_open(&c, l, &t), ==, -EACCES);
	CHECK_STR_CONTAINS(hwc_errdetail(), "perf_event_paranoid is");
	CHECK_STR_CONTAINS(hwc_errdetail(), "sysctl kernel.perf_event_paranoid=1");
	CHECK_OK(hwc_counters_open(&c, u, &t));
	CHECK(hwc_counters_user_only(c, 0));
	CHECK(hwc_counters_user_only(c, 1));
	hwc_counters_close(c);
	t.flags = HWC_NO_FALLBACK;
	CHECK_INT(hwc_counters_open(&c, u, &t), ==, -EACCES);
	hwc_evlist_free(l);
	hwc_evlist_free(u);
}

static void test_user_only_fallback(void)
{
	int paranoid;
	if (hwc_paranoid(&paranoid) || paranoid < 2) {
		SKIP_SUB("needs perf_event_paranoid >= 2");
		return;
	}
	run_as_nobody(user_only_fallback_as_nobody, "test_user_only_fallback");
}

/* Tracepoint filters: pagetouch's write faults and the rest add up to all
 * its user page faults, each counted by the same tracepoint. */
static void test_tracepoint_filter(void)
{
	hwc_evlist *l;
	CHECK_OK(hwc_evlist_new(&l));
	if (hwc_evlist_add(l, "exceptions:page_fault_user,exceptions:page_fault_user,"
			      "exceptions:page_fault_user")) {
		SKIP_SUB("%s", hwc_errdetail());
		hwc_evlist_free(l);
		return;
	}
	CHECK_OK(hwc_evlist_set_filter(l, 0, "error_code & 2"));
	CHECK_OK(hwc_evlist_set_filter(l, 1, "!(error_code & 2)"));
	CHECK_STR_EQ(hwc_evlist_event(l, 0)->filter, "error_code & 2");
	CHECK_STR_EQ(hwc_evlist_event(l, 2)->filter, "");
	char *argv[] = {workload("pagetouch"), "3000", NULL};
	struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	hwc_counters *c;
	int err = hwc_counters_open(&c, l, &t);
	if (err == -EACCES || err == -EPERM) {
		SKIP_SUB("%s", hwc_errdetail());
		hwc_evlist_free(l);
		return;
	}
	CHECK_INT(err, ==, 0);
	if (err) {
		hwc_evlist_free(l);
		return;
	}
	CHECK_OK(hwc_counters_start(c));
	int status;
	CHECK_INT(waitpid(hwc_counters_pid(c), &status, 0), ==, hwc_counters_pid(c));
	CHECK_OK(hwc_counters_read(c));
	uint64_t w = check_value(c, 0), r = check_value(c, 1), all = check_value(c, 2);
	CHECK_U64(w, >=, 3000);
	CHECK_U64(w, <, all);
	CHECK_U64(w + r, ==, all);
	hwc_counters_close(c);
	/* A filter the kernel refuses fails the open and is quoted. */
	CHECK_OK(hwc_evlist_set_filter(l, 2, "no_such_field == 1"));
	hwc_evlist *one;
	CHECK_OK(hwc_evlist_new(&one));
	CHECK_OK(hwc_evlist_add(one, "exceptions:page_fault_user"));
	CHECK_OK(hwc_evlist_set_filter(one, 0, "no_such_field == 1"));
	struct hwc_target self = {.kind = HWC_TARGET_SELF};
	CHECK_INT(hwc_counters_open(&c, one, &self), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "no_such_field == 1");
	/* Only tracepoints take filters; NULL removes one. */
	hwc_evlist *sw = check_evlist("page-faults");
	CHECK_INT(hwc_evlist_set_filter(sw, 0, "x == 1"), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "not a tracepoint");
	CHECK_INT(hwc_evlist_set_filter(sw, 1, "x == 1"), ==, -EINVAL);
	CHECK_OK(hwc_evlist_set_filter(one, 0, NULL));
	CHECK_OK(hwc_counters_open(&c, one, &self));
	hwc_counters_close(c);
	hwc_evlist_free(sw);
	hwc_evlist_free(one);
	hwc_evlist_free(l);
}

/* A group's values are read into a buffer of 64 members: open says so
 * rather than opening a group that overflow reads cannot read. */
static hwc_evlist *group_of(int n)
{
	char spec[1400] = "{";
	for (int i = 0; i < n; i++)
		strcat(spec, i ? ",page-faults" : "page-faults");
	strcat(spec, "}");
	return check_evlist(spec);
}

static void test_group_cap(void)
{
	hwc_evlist *big = group_of(65), *most = group_of(64);
	struct hwc_target self = {.kind = HWC_TARGET_SELF};
	hwc_counters *c = NULL;
	CHECK_INT(hwc_counters_open(&c, big, &self), ==, -E2BIG);
	CHECK_STR_CONTAINS(hwc_errdetail(), "has 65 events: a group holds at most 64");
	CHECK(c == NULL);
	hwc_sampler *s = NULL;
	CHECK_INT(hwc_sampler_open(&s, big, &self, NULL), ==, -E2BIG);
	CHECK(s == NULL);
	CHECK_INT(hwc_counters_open(&c, most, &self), ==, 0);
	hwc_counters_close(c);
	hwc_evlist_free(most);
	hwc_evlist_free(big);
}

/* The error of adding SPEC to a new list, with its detail in DETAIL. */
static int add_error(const char *spec, char *detail, size_t size)
{
	hwc_evlist *l;
	CHECK_OK(hwc_evlist_new(&l));
	int err = hwc_evlist_add(l, spec);
	snprintf(detail, size, "%s", hwc_errdetail());
	hwc_evlist_free(l);
	return err;
}

/* perf's modifier rules for groups: W (weak) only on a group; a group's D
 * and e go to its leader alone, as the kernel refuses them on a member. */
static void test_weak_group_modifiers(void)
{
	hwc_evlist *l = check_evlist("{task-clock,page-faults:D}:uW,{cpu-clock,minor-faults}:De,"
				     "context-switches");
	const struct hwc_event *lead = hwc_evlist_event(l, 0), *member = hwc_evlist_event(l, 1);
	CHECK(lead->weak && member->weak);
	CHECK(!hwc_evlist_event(l, 2)->weak && !hwc_evlist_event(l, 4)->weak);
	CHECK(lead->attr.exclude_kernel && member->attr.exclude_kernel); /* :uW is u and W */
	CHECK_INT(lead->attr.pinned, ==, 0);
	CHECK_INT(member->attr.pinned, ==, 1); /* its own D */
	CHECK_INT(hwc_evlist_event(l, 2)->attr.pinned, ==, 1);
	CHECK_INT(hwc_evlist_event(l, 2)->attr.exclusive, ==, 1);
	CHECK_INT(hwc_evlist_event(l, 3)->attr.pinned, ==, 0);
	CHECK_INT(hwc_evlist_event(l, 3)->attr.exclusive, ==, 0);
	/* the group's D opens: its member is not pinned */
	struct hwc_target self = {.kind = HWC_TARGET_SELF};
	hwc_evlist *pinned = check_evlist("{task-clock,page-faults}:D");
	hwc_counters *c = check_counters_open(pinned, &self);
	hwc_counters_close(c);
	hwc_evlist_free(pinned);
	hwc_evlist_free(l);

	char detail[512];
	CHECK_INT(add_error("task-clock:W", detail, sizeof(detail)), ==, -EINVAL);
	CHECK_STR_CONTAINS(detail, "the weak modifier 'W' is for groups");
	CHECK_INT(add_error("{task-clock,page-faults:W}", detail, sizeof(detail)), ==, -EINVAL);
	CHECK_STR_CONTAINS(detail, "malformed event 'page-faults:W'");
	CHECK_INT(add_error("{task-clock,page-faults}:WuW", detail, sizeof(detail)), ==, -EINVAL);
	CHECK_STR_CONTAINS(detail, "modifier 'W' is repeated");
	CHECK_INT(add_error("{task-clock,page-faults}:Wx", detail, sizeof(detail)), ==, -EINVAL);
	CHECK_STR_CONTAINS(detail, "unknown modifier 'x'");
}

/* A weak group the kernel refuses (a pinned member: only a leader may be
 * pinned) opens as independent events, as perf's weak groups do; without
 * W the group's failure is the error.  On every target kind. */
static void test_weak_group_fallback(void)
{
	char detail[512];
	hwc_evlist *strong = check_evlist("{task-clock,page-faults:D}");
	struct hwc_target self = {.kind = HWC_TARGET_SELF};
	hwc_counters *c = NULL;
	CHECK_INT(hwc_counters_open(&c, strong, &self), ==, -EINVAL);
	snprintf(detail, sizeof(detail), "%s", hwc_errdetail());
	CHECK_STR_CONTAINS(detail, "only a group's leader may be pinned (D)");
	CHECK(c == NULL);
	hwc_evlist_free(strong);

	hwc_evlist *l = check_evlist("{task-clock,page-faults:D,minor-faults}:W,{cpu-clock,"
				     "minor-faults}:W");
	c = check_counters_open(l, &self);
	for (size_t e = 0; e < 3; e++) {
		CHECK(hwc_counters_ungrouped(c, e));
		/* each on its own: read(2) gives one value and its times */
		uint64_t buf[8];
		CHECK_INT(read(hwc_counters_fd(c, 0, e), buf, sizeof(buf)), ==,
			  (ssize_t)(3 * sizeof(uint64_t)));
	}
	CHECK(!hwc_counters_ungrouped(c, 3) && !hwc_counters_ungrouped(c, 4));
	CHECK(!hwc_counters_ungrouped(c, 5)); /* out of range */
	CHECK_OK(hwc_counters_start(c));
	touch_pages(300);
	CHECK_OK(hwc_counters_stop(c));
	CHECK_OK(hwc_counters_read(c));
	CHECK_U64(check_value(c, 1), >=, 300);
	CHECK_U64(check_value(c, 2), >=, 300);
	CHECK_U64(check_value(c, 4), >=, 300);
	hwc_counters_close(c);

	/* A command, and every CPU: each instance opened the same way. */
	char *argv[] = {"true", NULL};
	struct hwc_target cmd = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	c = check_counters_open(l, &cmd);
	CHECK(hwc_counters_ungrouped(c, 0) && hwc_counters_ungrouped(c, 2));
	CHECK_OK(hwc_counters_start(c));
	waitpid(hwc_counters_pid(c), NULL, 0);
	CHECK_OK(hwc_counters_read(c));
	CHECK_U64(check_value(c, 1), >, 0);
	hwc_counters_close(c);
	struct hwc_target cpus = {.kind = HWC_TARGET_CPUS};
	c = check_counters_open(l, &cpus);
	CHECK(hwc_counters_ninstances(c) > 0);
	for (size_t i = 0; i < hwc_counters_ninstances(c); i++)
		CHECK(hwc_counters_fd(c, i, 1) >= 0);
	CHECK(hwc_counters_ungrouped(c, 1) && !hwc_counters_ungrouped(c, 3));
	hwc_counters_close(c);

	/* Sampling too; but a group whose members are read with the leader's
	 * samples (HWC_GROUP_VALUES) opens as one or not at all. */
	hwc_sampler *s = NULL;
	struct hwc_sampler_opts opts = {.period = 1000000};
	CHECK_INT(hwc_sampler_open(&s, l, &self, &opts), ==, 0);
	hwc_sampler_close(s);
	s = NULL;
	opts.flags = HWC_GROUP_VALUES;
	struct hwc_target alone = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT}; /* Linux 6.1 */
	CHECK_INT(hwc_sampler_open(&s, l, &alone, &opts), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "only a group's leader may be pinned (D)");
	CHECK(s == NULL);
	hwc_evlist_free(l);
}

/* Test double: no Intel PMU with perf metrics here (no PMU at all), so the
 * kernel never refuses a topdown event into a weak group for real.  What
 * hwc does then is a pure function, hwc__split_weak_group(), driven here
 * with made-up events (their names and types as an Ice Lake's resolve,
 * never opened) and the "this system has perf metrics" flag given. */
static void fake_event(struct hwc__events *s, const char *name, uint32_t type, size_t leader,
		       size_t group_size)
{
	struct hwc_event pub = {.name = name, .pmu = "", .origin = "", .unit = "",
				.attr = {.type = type, .size = sizeof(pub.attr)}, .weak = true,
				.leader = group_size > 0};
	CHECK_OK(hwc__events_add(s, &pub, leader, group_size));
}

/* The group's events from its leader G, as opened and read: "a,b,c". */
static const char *group_order(const struct hwc__events *s, size_t g)
{
	static char out[512];
	size_t len = 0, pos = 0;
	out[0] = '\0';
	for (size_t k = g; k != HWC__NO_EVENT; k = s->e[k].next, pos++) {
		CHECK_INT(s->e[k].leader, ==, g);
		CHECK_INT(s->e[k].pos, ==, pos);
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", k == g ? "" : ",",
					s->e[k].ev->name);
	}
	CHECK_INT(s->e[g].group_size, ==, pos);
	return out;
}

static void test_weak_group_keeps_topdown_rule(void)
{
	const struct {
		const char *name;
		uint32_t type;
		bool grouped;
	} cases[] = {
		{"slots", PERF_TYPE_RAW, true},
		{"cpu/slots/", PERF_TYPE_RAW, true},
		{"TOPDOWN.SLOTS", PERF_TYPE_RAW, true},
		{"cpu_core/topdown-retiring/", PERF_TYPE_RAW, true},
		{"topdown-be-bound", PERF_TYPE_RAW, true},
		{"UOPS_RETIRED.SLOTS", PERF_TYPE_RAW, false}, /* not the topdown slots */
		{"cpu/uops_retired.slots/", PERF_TYPE_RAW, false},
		{"topdown-retiring", PERF_TYPE_SOFTWARE, false}, /* not the core PMU */
		{"topdown-retiring", 10, false},                 /* a hybrid's cpu_atom */
		{"instructions", PERF_TYPE_HARDWARE, false},
		{"inst_retired.any", PERF_TYPE_RAW, false},
	};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(cases); i++) {
		struct hwc_event ev = {.name = cases[i].name, .attr = {.type = cases[i].type}};
		if (hwc__must_stay_grouped(&ev, true) != cases[i].grouped) {
			fprintf(stderr, "  %s (type %u): must stay grouped should be %d\n",
				cases[i].name, cases[i].type, cases[i].grouped);
			check_failures++;
		}
		CHECK(!hwc__must_stay_grouped(&ev, false)); /* no perf metrics: none */
	}
}

static void test_weak_group_keeps_topdown(void)
{
	/* {instructions,topdown-retiring,slots,cpu/topdown-bad-spec/,
	 *  uops_retired.slots,cycles}:W, then {TOPDOWN.SLOTS,topdown-fe-bound}:W */
	struct hwc__events s = {0};
	fake_event(&s, "instructions", PERF_TYPE_HARDWARE, 0, 6);
	fake_event(&s, "topdown-retiring", PERF_TYPE_RAW, 0, 0);
	fake_event(&s, "slots", PERF_TYPE_RAW, 0, 0);
	fake_event(&s, "cpu/topdown-bad-spec/", PERF_TYPE_RAW, 0, 0);
	fake_event(&s, "uops_retired.slots", PERF_TYPE_RAW, 0, 0);
	fake_event(&s, "cycles", PERF_TYPE_HARDWARE, 0, 0);
	fake_event(&s, "TOPDOWN.SLOTS", PERF_TYPE_RAW, 6, 2);
	fake_event(&s, "topdown-fe-bound", PERF_TYPE_RAW, 6, 0);
	CHECK_STR_EQ(group_order(&s, 0), "instructions,topdown-retiring,slots,"
					 "cpu/topdown-bad-spec/,uops_retired.slots,cycles");
	CHECK(hwc__group_in_place(&s, 0));

	hwc__split_weak_group(&s, 0, true);
	/* slots leads the topdown events, which stay in their order; the
	 * others are alone; the events keep their places (the user's order) */
	CHECK_STR_EQ(group_order(&s, 2), "slots,topdown-retiring,cpu/topdown-bad-spec/");
	CHECK(!hwc__group_in_place(&s, 2));
	const size_t alone[] = {0, 4, 5};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(alone); i++)
		CHECK_STR_EQ(group_order(&s, alone[i]), s.e[alone[i]].ev->name);
	for (size_t e = 0; e < 6; e++) {
		CHECK(s.e[e].refused);
		CHECK_INT(s.e[e].ungrouped, ==, (e == 0 || e == 4 || e == 5));
	}
	/* the next group is not touched */
	CHECK_STR_EQ(group_order(&s, 6), "TOPDOWN.SLOTS,topdown-fe-bound");
	CHECK(hwc__group_in_place(&s, 6) && !s.e[6].refused && !s.e[7].refused);
	hwc__events_free(&s);

	/* Without perf metrics every event of the group is alone, as before. */
	fake_event(&s, "slots", PERF_TYPE_RAW, 0, 3);
	fake_event(&s, "topdown-retiring", PERF_TYPE_RAW, 0, 0);
	fake_event(&s, "topdown-fe-bound", PERF_TYPE_RAW, 0, 0);
	hwc__split_weak_group(&s, 0, false);
	for (size_t e = 0; e < 3; e++) {
		CHECK_STR_EQ(group_order(&s, e), s.e[e].ev->name);
		CHECK(s.e[e].ungrouped && s.e[e].refused);
	}
	hwc__events_free(&s);

	/* No slots among them: the first topdown event leads; a lone one is
	 * alone (a group of one). */
	fake_event(&s, "cycles", PERF_TYPE_HARDWARE, 0, 4);
	fake_event(&s, "topdown-fe-bound", PERF_TYPE_RAW, 0, 0);
	fake_event(&s, "instructions", PERF_TYPE_HARDWARE, 0, 0);
	fake_event(&s, "topdown-be-bound", PERF_TYPE_RAW, 0, 0);
	fake_event(&s, "cycles", PERF_TYPE_HARDWARE, 4, 2);
	fake_event(&s, "TOPDOWN.SLOTS", PERF_TYPE_RAW, 4, 0);
	hwc__split_weak_group(&s, 0, true);
	CHECK_STR_EQ(group_order(&s, 1), "topdown-fe-bound,topdown-be-bound");
	CHECK(!s.e[1].ungrouped && !s.e[3].ungrouped && s.e[0].ungrouped && s.e[2].ungrouped);
	hwc__split_weak_group(&s, 4, true);
	CHECK_STR_EQ(group_order(&s, 5), "TOPDOWN.SLOTS");
	CHECK(s.e[5].ungrouped && s.e[4].ungrouped);
	hwc__events_free(&s);
}

/* The flag from sysfs trees written here (HWC_SYSFS_ROOT), as tests/topology.c
 * writes its own: perf metrics when the core PMU, cpu or a hybrid's
 * cpu_core, names a slots event. */
static void put_sysfs(const char *root, const char *path, const char *text)
{
	char rel[1024];
	snprintf(rel, sizeof(rel), "bus/event_source/devices/%s", path);
	check_put_line(root, rel, text);
}

static void test_perf_metrics_from_sysfs(void)
{
	const char *trees[] = {"icelake", "skylake", "hybrid", "uncore_slots", "arm", "none"};
	char root[] = "/tmp/hwc-perf-metrics-XXXXXX", dir[256];
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		check_failures++;
		return;
	}
	snprintf(dir, sizeof(dir), "%s/icelake", root);
	put_sysfs(dir, "cpu/type", "4");
	put_sysfs(dir, "cpu/events/slots", "event=0x00,umask=0x4");
	put_sysfs(dir, "cpu/events/topdown-retiring", "event=0x00,umask=0x80");
	snprintf(dir, sizeof(dir), "%s/skylake", root); /* topdown-* but no slots */
	put_sysfs(dir, "cpu/type", "4");
	put_sysfs(dir, "cpu/events/topdown-total-slots", "event=0x3c,umask=0x0,any=1");
	snprintf(dir, sizeof(dir), "%s/hybrid", root);
	put_sysfs(dir, "cpu_atom/type", "10");
	put_sysfs(dir, "cpu_atom/events/topdown-retiring", "event=0xc2,umask=0x2");
	put_sysfs(dir, "cpu_core/type", "4");
	put_sysfs(dir, "cpu_core/events/slots", "event=0x00,umask=0x4");
	snprintf(dir, sizeof(dir), "%s/uncore_slots", root); /* slots, not the core PMU's */
	put_sysfs(dir, "cpu/type", "4");
	put_sysfs(dir, "uncore_foo/type", "12");
	put_sysfs(dir, "uncore_foo/events/slots", "event=0x1");
	snprintf(dir, sizeof(dir), "%s/arm", root);
	put_sysfs(dir, "armv8_pmuv3_0/type", "8");
	put_sysfs(dir, "armv8_pmuv3_0/cpus", "0-3");
	put_sysfs(dir, "armv8_pmuv3_0/events/slots", "event=0x003f"); /* STALL_SLOT-like */
	snprintf(dir, sizeof(dir), "%s/none", root); /* sysfs without PMUs */
	put_sysfs(dir, "README", "");
	for (size_t i = 0; i < HWC_ARRAY_SIZE(trees); i++) {
		snprintf(dir, sizeof(dir), "%s/%s", root, trees[i]);
		setenv("HWC_SYSFS_ROOT", dir, 1);
		bool want = i == 0 || i == 2;
		if (hwc__perf_metrics() != want) {
			fprintf(stderr, "  %s: perf metrics should be %d\n", trees[i], want);
			check_failures++;
		}
	}
	unsetenv("HWC_SYSFS_ROOT");
	remove_tree(root);
}

int main(void)
{
	RUN(test_self);
	RUN(test_group_is_one_kernel_group);
	RUN(test_start_stop_reset);
	RUN(test_attach_pid_new_thread);
	RUN(test_attach_existing_threads);
	RUN(test_inherit);
	RUN(test_per_cpu);
	RUN(test_cpus_with_command);
	RUN(test_errors);
	RUN(test_unsupported_hardware);
	RUN(test_scale);
	RUN(test_user_only_fallback);
	RUN(test_tracepoint_filter);
	RUN(test_group_cap);
	RUN(test_weak_group_modifiers);
	RUN(test_weak_group_fallback);
	RUN(test_weak_group_keeps_topdown_rule);
	RUN(test_weak_group_keeps_topdown);
	RUN(test_perf_metrics_from_sysfs);
	return check_exit();
}
