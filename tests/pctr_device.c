/* /dev/pctr as an OpenBSD program sees it: only <machine/pctr.h>, open(2),
 * ioctl(2) and close(2), linked with the pctr library.  Live on this host:
 * the TSC, every error path, and ENODEV for a valid function where the
 * kernel exposes no hardware PMU (where it does, the function counts). */
#include <sys/types.h>
#include <machine/cpu.h>
#include <machine/pctr.h>

#include "check.h"

#include <hwc/hwc.h> /* hwc_paranoid() */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#define FN_INSTRUCTIONS (0xc0 | PCTR_U | PCTR_K | PCTR_EN) /* retired instructions, Intel and AMD */

static bool have_pmu(void)
{
	struct stat st;
	return stat("/sys/bus/event_source/devices/cpu", &st) == 0 ||
	       stat("/sys/bus/event_source/devices/cpu_core", &st) == 0;
}

static void read_gives_an_advancing_tsc(void)
{
	int fd = open(_PATH_PCTR, O_RDONLY);
	CHECK_INT(fd, >=, 0);
	struct pctrst a, b;
	memset(&a, 0xff, sizeof(a));
	pctrval before = rdtsc();
	CHECK_INT(ioctl(fd, PCIOCRD, &a), ==, 0);
	pctrval after = rdtsc();
	CHECK_U64(a.pctr_tsc, >, before);
	CHECK_U64(a.pctr_tsc, <, after);
	for (int i = 0; i < PCTR_NUM; i++) { /* nothing set in this process yet */
		CHECK_INT(a.pctr_fn[i], ==, 0);
		CHECK_U64(a.pctr_hwc[i], ==, 0);
	}
	CHECK_INT(ioctl(fd, PCIOCRD, &b), ==, 0);
	CHECK_U64(b.pctr_tsc, >, a.pctr_tsc);
	CHECK_INT(close(fd), ==, 0);
}

static void set_needs_write_access(void)
{
	int fd = open(_PATH_PCTR, O_RDONLY);
	unsigned fn = FN_INSTRUCTIONS;
	errno = 0;
	CHECK_INT(ioctl(fd, PCIOCS0, &fn), ==, -1);
	CHECK_INT(errno, ==, EPERM);
	errno = 0;
	CHECK_INT(ioctl(fd, PCIOCS3, &fn), ==, -1);
	CHECK_INT(errno, ==, EPERM);
	close(fd);
}

static void invalid_functions_are_einval(void)
{
	/* Pin control, APIC interrupt and any-thread: OpenBSD refuses them. */
	static const unsigned bad[] = {FN_INSTRUCTIONS | 0x80000, FN_INSTRUCTIONS | 0x100000,
				       FN_INSTRUCTIONS | 0x200000, 0x380000};
	int fd = open(_PATH_PCTR, O_WRONLY);
	CHECK_INT(fd, >=, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK_INT(ioctl(fd, PCIOCS1, &bad[i]), ==, -1);
		CHECK_INT(errno, ==, EINVAL);
	}
	close(fd);
}

static void valid_function_counts_or_enodev(void)
{
	int fd = open(_PATH_PCTR, O_RDWR);
	unsigned fn = FN_INSTRUCTIONS, off = 0, user_only = 0xc0 | PCTR_U | PCTR_EN;
	struct pctrst st;
	if (!have_pmu()) {
		/* No hardware PMU: every function is ENODEV, even one that counts
		 * nothing, and reading still gives the TSC. */
		errno = 0;
		CHECK_INT(ioctl(fd, PCIOCS0, &fn), ==, -1);
		CHECK_INT(errno, ==, ENODEV);
		errno = 0;
		CHECK_INT(ioctl(fd, PCIOCS2, &off), ==, -1);
		CHECK_INT(errno, ==, ENODEV);
		CHECK_INT(ioctl(fd, PCIOCRD, &st), ==, 0);
		CHECK_U64(st.pctr_tsc, >, 0);
		CHECK_INT(st.pctr_fn[0], ==, 0);
		CHECK_U64(rdpmc(0), ==, 0);
		close(fd);
		return;
	}
	fprintf(stderr, "(the kernel exposes a hardware PMU: the function counts)\n");
	CHECK_INT(ioctl(fd, PCIOCS0, &user_only), ==, 0);
	volatile unsigned long x = 0;
	for (int i = 0; i < 1000000; i++)
		x += (unsigned long)i;
	CHECK_INT(ioctl(fd, PCIOCRD, &st), ==, 0);
	CHECK_INT(st.pctr_fn[0], ==, user_only);
	CHECK_U64(st.pctr_hwc[0], >=, 1000000);
	pctrval r1 = rdpmc(0), r2 = rdpmc(0);
	CHECK_U64(r1, >=, st.pctr_hwc[0]);
	CHECK_U64(r2, >=, r1);
	CHECK_INT(ioctl(fd, PCIOCS0, &off), ==, 0); /* counts nothing, reads 0 */
	CHECK_INT(ioctl(fd, PCIOCRD, &st), ==, 0);
	CHECK_U64(st.pctr_hwc[0], ==, 0);
	close(fd);
}

static void other_requests_and_counters(void)
{
	int fd = open(_PATH_PCTR, O_RDWR);
	int dummy = 0;
	errno = 0;
	CHECK_INT(ioctl(fd, _IOW('c', 12, unsigned int), &dummy), ==, -1);
	CHECK_INT(errno, ==, ENOTTY);
	errno = 0;
	CHECK_INT(ioctl(fd, PCIOCRD, NULL), ==, -1); /* a bad argument, not a crash */
	CHECK_INT(errno, ==, EFAULT);
	errno = 0;
	CHECK_INT(ioctl(fd, PCIOCS2, NULL), ==, -1);
	CHECK_INT(errno, ==, EFAULT);
	CHECK_U64(rdpmc(PCTR_NUM), ==, 0); /* no such counter */
	CHECK_U64(rdpmc(1), ==, 0);        /* never set */
	CHECK_INT(close(fd), ==, 0);
	errno = 0;
	CHECK_INT(ioctl(fd, PCIOCRD, &dummy), ==, -1); /* closed: the kernel says so */
	CHECK_INT(errno, ==, EBADF);
}

static void every_open_entry_point(void)
{
	int fds[3] = {openat(AT_FDCWD, _PATH_PCTR, O_RDONLY | O_CLOEXEC),
		      open64(_PATH_PCTR, O_WRONLY), openat64(AT_FDCWD, _PATH_PCTR, O_RDWR)};
	for (int i = 0; i < 3; i++) {
		struct pctrst st;
		CHECK_INT(fds[i], >=, 0);
		CHECK_INT(ioctl(fds[i], PCIOCRD, &st), ==, 0);
		close(fds[i]);
	}
	CHECK_INT(fcntl(fds[0], F_GETFD), ==, -1); /* really closed */
}

static void other_files_pass_through(void)
{
	char path[] = "/tmp/hwc-pctr-XXXXXX";
	int fd = mkstemp(path);
	CHECK_INT(fd, >=, 0);
	CHECK_INT(write(fd, "hello", 5), ==, 5);
	close(fd);
	fd = open(path, O_RDONLY);
	CHECK_INT(fd, >=, 0);
	int avail = -1;
	CHECK_INT(ioctl(fd, FIONREAD, &avail), ==, 0); /* a real ioctl, on a real file */
	CHECK_INT(avail, ==, 5);
	struct pctrst st;
	errno = 0;
	CHECK_INT(ioctl(fd, PCIOCRD, &st), ==, -1); /* not the device: the kernel's answer */
	CHECK_INT(errno, ==, ENOTTY);
	CHECK_INT(close(fd), ==, 0);
	errno = 0;
	CHECK_INT(open("/dev/pctr/", O_RDONLY), ==, -1); /* only the exact path is the device */
	CHECK_INT(open("/nonexistent/x", O_RDONLY), ==, -1);
	CHECK_INT(errno, ==, ENOENT);
	unlink(path);
}

/* As an unprivileged user at perf_event_paranoid 2: counting kernel mode is
 * refused before the hardware is looked at. */
static void kernel_counting_as_nobody(void)
{
	int fd = open(_PATH_PCTR, O_WRONLY);
	unsigned k = FN_INSTRUCTIONS, u = 0xc0 | PCTR_U | PCTR_EN;
	CHECK_INT(fd, >=, 0);
	int paranoid = 2;
	hwc_paranoid(&paranoid);
	if (paranoid >= 2) {
		errno = 0;
		CHECK_INT(ioctl(fd, PCIOCS0, &k), ==, -1);
		CHECK_INT(errno, ==, EACCES);
	}
	errno = 0;
	int r = ioctl(fd, PCIOCS0, &u), err = errno;
	CHECK_INT(r, ==, have_pmu() ? 0 : -1);
	CHECK_INT(err, ==, have_pmu() ? 0 : ENODEV);
	close(fd);
}

static void unprivileged_kernel_counting(void)
{
	run_as_nobody(kernel_counting_as_nobody, "kernel_counting_as_nobody");
}

int main(void)
{
	/* Our own whole-CPU helper name: the default one is machine-wide. */
	char name[64];
	snprintf(name, sizeof(name), "hwc-pctr-test-%d", (int)getpid());
	setenv("HWC_PCTR_SOCKET", name, 1);
	RUN(read_gives_an_advancing_tsc);
	RUN(set_needs_write_access);
	RUN(invalid_functions_are_einval);
	RUN(valid_function_counts_or_enodev);
	RUN(other_requests_and_counters);
	RUN(every_open_entry_point);
	RUN(other_files_pass_through);
	RUN(unprivileged_kernel_counting);
	return check_exit();
}
