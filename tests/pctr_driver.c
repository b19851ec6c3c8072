/* The pctr library's driver logic, counting for real.
 *
 * TEST DOUBLE: this host has no hardware PMU, so every function is ENODEV
 * here (pctr_device.c tests that).  To exercise what happens once a function
 * is set, this program links the pctr library's own objects except the one
 * function that maps a PERFEVTSEL word to a hardware event, devshim_event(),
 * and stands the software event page-faults in for the hardware, in the
 * modes the word's PCTR_U / PCTR_K bits choose.  Everything else (the
 * interposed open/ioctl/close, PCIOCRD, PCIOCSx, rdpmc(), the per-thread
 * counters and the fast read under them, the whole-CPU helper process and
 * its socket) is the library's code.
 *
 * Root counts whole CPUs, as on OpenBSD; the per-thread tests run as the
 * user nobody, whom perf_event_paranoid >= 1 keeps to its own threads. */
#include <sys/types.h>
#include <machine/cpu.h>
#include <machine/pctr.h>

#include "../compat/common/devshim.h"
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int devshim_event(hwc_evlist *list, uint64_t evtsel)
{
	bool u = evtsel & PCTR_U, k = evtsel & PCTR_K;
	return hwc_evlist_add(list, u && k ? "page-faults:uk" : u ? "page-faults:u" : "page-faults:k");
}

#define FN (0xc0 | PCTR_U | PCTR_EN)

static int dev;

static pctrval counter(int n)
{
	struct pctrst st;
	CHECK_INT(ioctl(dev, PCIOCRD, &st), ==, 0);
	return st.pctr_hwc[n];
}

static void set_then_count(void)
{
	unsigned fn = FN;
	CHECK_INT(ioctl(dev, PCIOCS0, &fn), ==, 0);
	struct pctrst st;
	CHECK_INT(ioctl(dev, PCIOCRD, &st), ==, 0);
	CHECK_INT(st.pctr_fn[0], ==, FN);
	CHECK_INT(st.pctr_fn[1], ==, 0);
	pctrval before = st.pctr_hwc[0];
	touch_pages(100);
	pctrval after = counter(0);
	CHECK_U64(after - before, >=, 100);
	pctrval r = rdpmc(0); /* no hardware counter: the fast read falls back to read(2) */
	CHECK_U64(r, >=, after);
	CHECK_U64(rdpmc(1), ==, 0);
}

static void set_resets_the_counter(void)
{
	unsigned fn = FN;
	CHECK_INT(ioctl(dev, PCIOCS0, &fn), ==, 0);
	touch_pages(50);
	CHECK_U64(counter(0), >=, 50);
	CHECK_INT(ioctl(dev, PCIOCS0, &fn), ==, 0);
	CHECK_U64(counter(0), <, 50);
}

static void functions_that_count_nothing(void)
{
	unsigned no_en = FN & ~PCTR_EN, no_modes = 0xc0 | PCTR_EN;
	CHECK_INT(ioctl(dev, PCIOCS2, &no_en), ==, 0);
	/* Neither mode: checked as counting both, which perf_event_paranoid 2
	 * refuses an unprivileged user (kernel mode). */
	int paranoid = 2;
	hwc_paranoid(&paranoid);
	errno = 0;
	int r = ioctl(dev, PCIOCS3, &no_modes);
	CHECK_INT(r, ==, paranoid >= 2 && geteuid() != 0 ? -1 : 0);
	if (r < 0) {
		CHECK_INT(errno, ==, EACCES);
		no_modes = 0;
	}
	touch_pages(50);
	struct pctrst st;
	CHECK_INT(ioctl(dev, PCIOCRD, &st), ==, 0);
	CHECK_INT(st.pctr_fn[2], ==, no_en);
	CHECK_INT(st.pctr_fn[3], ==, no_modes);
	CHECK_U64(st.pctr_hwc[2], ==, 0);
	CHECK_U64(st.pctr_hwc[3], ==, 0);
	CHECK_U64(rdpmc(3), ==, 0);
}

static void failed_set_keeps_the_function(void)
{
	unsigned fn = FN, bad = FN | 0x100000;
	CHECK_INT(ioctl(dev, PCIOCS1, &fn), ==, 0);
	errno = 0;
	CHECK_INT(ioctl(dev, PCIOCS1, &bad), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	pctrval before = counter(1);
	touch_pages(20);
	struct pctrst st;
	CHECK_INT(ioctl(dev, PCIOCRD, &st), ==, 0);
	CHECK_INT(st.pctr_fn[1], ==, FN);
	CHECK_U64(st.pctr_hwc[1] - before, >=, 20);
}

static void *touch_in_thread(void *arg)
{
	(void)arg;
	touch_pages(300);
	return NULL;
}

static void *set_in_thread(void *arg)
{
	unsigned fn = FN;
	*(int *)arg = ioctl(dev, PCIOCS2, &fn);
	touch_pages(200);
	return NULL;
}

static void counters_are_the_setting_threads(void)
{
	unsigned fn = FN;
	CHECK_INT(ioctl(dev, PCIOCS0, &fn), ==, 0);
	pctrval before = counter(0);
	pthread_t t;
	CHECK_INT(pthread_create(&t, NULL, touch_in_thread, NULL), ==, 0);
	pthread_join(t, NULL);
	CHECK_U64(counter(0) - before, <, 300); /* another thread's faults are not ours */

	/* A counter set by another thread counts that thread; this one reads
	 * it through the kernel (rdpmc is for the counting thread itself). */
	int rc = -1;
	CHECK_INT(pthread_create(&t, NULL, set_in_thread, &rc), ==, 0);
	pthread_join(t, NULL);
	CHECK_INT(rc, ==, 0);
	CHECK_U64(counter(2), >=, 200);
	CHECK_U64(rdpmc(2), ==, counter(2)); /* the thread is gone: the count stands */
}

/* ------------------------------------------------------------ whole CPUs */

static char helper_name[64]; /* this test's own helper socket ($HWC_PCTR_SOCKET) */

static socklen_t helper_address(struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path + 1, helper_name, strlen(helper_name));
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(helper_name));
}

/* The pid of the process listening on the helper's name, or 0 when none. */
static pid_t helper_pid(void)
{
	struct sockaddr_un a;
	socklen_t len = helper_address(&a);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct ucred cr = {0};
	socklen_t crlen = sizeof(cr);
	if (connect(fd, (struct sockaddr *)&a, len) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0)
		cr.pid = 0;
	close(fd);
	return cr.pid;
}

/* Is PID gone (or a zombie nobody reaped: no longer running)? */
static bool gone(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true;
	bool zombie = fgets(buf, sizeof(buf), f) && strstr(buf, ") Z ");
	fclose(f);
	return zombie;
}

/* Wait for PID to end: a hang guard, not a time limit on the helper. */
static bool ends(pid_t pid)
{
	for (int i = 0; i < 1000 && !gone(pid); i++)
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	return gone(pid);
}

static void pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_INT(sched_setaffinity(0, sizeof(set), &set), ==, 0);
}

/* In a child process: set counter N to FN (and nothing else), exit. */
static void set_in_child(unsigned n, unsigned fn)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(_PATH_PCTR, O_WRONLY);
		int r = ioctl(fd, PCIOCS0 + n, &fn);
		_exit(r == 0 ? 0 : 10 + errno);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK_INT(status, ==, 0);
}

/* Read counter N of the CPU this process is pinned to, around work done
 * here: the counts grow with it, and rdpmc() reads the same counter. */
static void cpu_counts_work(unsigned n)
{
	struct pctrst st;
	int fd = open(_PATH_PCTR, O_RDONLY);
	CHECK_INT(ioctl(fd, PCIOCRD, &st), ==, 0);
	CHECK_INT(st.pctr_fn[n], ==, FN);
	pctrval before = st.pctr_hwc[n];
	touch_pages(500);
	CHECK_INT(ioctl(fd, PCIOCRD, &st), ==, 0);
	CHECK_U64(st.pctr_hwc[n] - before, >=, 500);
	CHECK_U64(rdpmc(n), >=, st.pctr_hwc[n]);
	close(fd);
}

static void set_by_one_process_read_by_another(void)
{
	set_in_child(0, FN); /* the setter is gone: its function stays */
	pid_t helper = helper_pid();
	CHECK_INT(helper, >, 0);
	CHECK(helper > 0 && !gone(helper));
	pin_to(sched_getcpu());
	cpu_counts_work(0);

	/* Every CPU counts, and a process reads the CPU it runs on. */
	int cpus[2];
	int n = hwc_online_cpus(cpus, 2);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		check_failures = 0;
		pin_to(cpus[n - 1]);
		cpu_counts_work(0);
		_exit(check_failures != 0);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK_INT(status, ==, 0);
}

static void nobody_reads_cpu_counters(void)
{
	pin_to(sched_getcpu());
	cpu_counts_work(0);
	/* Setting a function of its own, nobody counts its own thread: the
	 * helper keeps root's function. */
	unsigned fn = FN | 0x100; /* another function: the unit mask differs */
	CHECK_INT(ioctl(dev, PCIOCS1, &fn), ==, 0);
	struct pctrst st;
	CHECK_INT(ioctl(dev, PCIOCRD, &st), ==, 0);
	CHECK_INT(st.pctr_fn[0], ==, 0);
	CHECK_INT(st.pctr_fn[1], ==, fn);
}

static void unprivileged_readers_see_the_cpus(void)
{
	run_as_nobody(nobody_reads_cpu_counters, "nobody_reads_cpu_counters");
	struct pctrst st;
	CHECK_INT(ioctl(dev, PCIOCRD, &st), ==, 0);
	CHECK_INT(st.pctr_fn[0], ==, FN);
	CHECK_INT(st.pctr_fn[1], ==, 0);
}

static void resetting_every_function_stops_the_helper(void)
{
	pid_t helper = helper_pid();
	CHECK_INT(helper, >, 0);
	unsigned off = FN & ~PCTR_EN; /* set, counting nothing: the helper stays */
	set_in_child(3, off);
	CHECK_INT(helper_pid(), ==, helper);
	set_in_child(0, 0);
	CHECK_INT(helper_pid(), ==, helper);
	set_in_child(3, 0);
	CHECK(ends(helper));
	CHECK_INT(helper_pid(), ==, 0);
	struct pctrst st;
	CHECK_INT(ioctl(dev, PCIOCRD, &st), ==, 0);
	CHECK_INT(st.pctr_fn[0], ==, 0);
	CHECK_U64(st.pctr_hwc[0], ==, 0);
	/* Function 0 with no helper running starts none. */
	set_in_child(2, 0);
	CHECK_INT(helper_pid(), ==, 0);
}

/* A process of the user nobody holds the helper's name, as a hostile user
 * could: root neither sets nor reads through it. */
static void another_users_helper_is_never_used(void)
{
	int ready[2];
	CHECK_INT(pipe(ready), ==, 0);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(3);
		struct sockaddr_un a;
		socklen_t len = helper_address(&a);
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (bind(fd, (struct sockaddr *)&a, len) < 0 || listen(fd, 8) < 0)
			_exit(2);
		if (write(ready[1], "x", 1) != 1)
			_exit(2);
		for (;;) { /* accept and answer nothing useful */
			int c = accept(fd, NULL, NULL);
			if (c >= 0) {
				char junk[256] = {0};
				if (write(c, junk, sizeof(junk)) < 0)
					_exit(2);
			}
		}
	}
	char x;
	CHECK_INT(read(ready[0], &x, 1), ==, 1);
	unsigned fn = FN;
	errno = 0;
	CHECK_INT(ioctl(dev, PCIOCS0, &fn), ==, -1);
	CHECK_INT(errno, ==, EBUSY);
	struct pctrst st;
	memset(&st, 0xff, sizeof(st));
	CHECK_INT(ioctl(dev, PCIOCRD, &st), ==, 0); /* nothing set: no counters read */
	CHECK_INT(st.pctr_fn[0], ==, 0);
	CHECK_U64(st.pctr_hwc[0], ==, 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(ready[0]);
	close(ready[1]);
}

/* The per-thread tests, as nobody, who may not count whole CPUs. */
static void per_thread(void (*fn)(void), const char *name)
{
	int paranoid = 2;
	hwc_paranoid(&paranoid);
	if (paranoid < 1) {
		fprintf(stderr, "%s: skipped: perf_event_paranoid %d lets nobody count whole CPUs\n",
			name, paranoid);
		check_skips++;
		return;
	}
	run_as_nobody(fn, name);
}

#define PER_THREAD(fn)                                                                   \
	static void fn##_as_nobody(void)                                                 \
	{                                                                                \
		per_thread(fn, #fn);                                                     \
	}
PER_THREAD(set_then_count)
PER_THREAD(set_resets_the_counter)
PER_THREAD(functions_that_count_nothing)
PER_THREAD(failed_set_keeps_the_function)
PER_THREAD(counters_are_the_setting_threads)

int main(void)
{
	if (geteuid() != 0)
		SKIP("needs root: whole-CPU counters, and nobody for the per-thread ones");
	snprintf(helper_name, sizeof(helper_name), "hwc-pctr-test-%d", (int)getpid());
	setenv("HWC_PCTR_SOCKET", helper_name, 1);
	dev = open(_PATH_PCTR, O_RDWR);
	CHECK_INT(dev, >=, 0);
	RUN(set_then_count_as_nobody);
	RUN(set_resets_the_counter_as_nobody);
	RUN(functions_that_count_nothing_as_nobody);
	RUN(failed_set_keeps_the_function_as_nobody);
	RUN(counters_are_the_setting_threads_as_nobody);
	RUN(set_by_one_process_read_by_another);
	RUN(unprivileged_readers_see_the_cpus);
	RUN(resetting_every_function_stops_the_helper);
	RUN(another_users_helper_is_never_used);
	for (unsigned i = 0; i < PCTR_NUM; i++) /* never leave a helper behind */
		set_in_child(i, 0);
	close(dev);
	return check_exit();
}
