/* /dev/perfmon as a FreeBSD program sees it: only <machine/perfmon.h>,
 * open(2), ioctl(2) and close(2), linked with the perfmon library.  Live on
 * this host: PMIOTSTAMP, every request's error paths, and ENODEV for a
 * valid setup where the kernel exposes no hardware PMU (where it does, the
 * counter counts). */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <machine/cpu.h>
#include <machine/perfmon.h>

#include "check.h"

#include <hwc/hwc.h> /* hwc_tsc_hz(), the oracle for PMIOTSTAMP; hwc_paranoid() */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static bool have_pmu(void)
{
	struct stat st;
	return stat("/sys/bus/event_source/devices/cpu", &st) == 0 ||
	       stat("/sys/bus/event_source/devices/cpu_core", &st) == 0;
}

/* ioctl's errno, or 0 when it succeeded. */
static int ioctl_errno(int fd, unsigned long req, void *arg)
{
	errno = 0;
	return ioctl(fd, req, arg) == 0 ? 0 : errno;
}

static struct pmc instructions(int num, int flags)
{
	struct pmc p;
	memset(&p, 0, sizeof(p));
	p.pmc_num = num;
	p.pmc_event = PMC6_INST_RETIRED;
	p.pmc_flags = (unsigned char)flags;
	return p;
}

static void one_writer_at_a_time(void)
{
	int w = open(_PATH_PERFMON, O_RDWR);
	CHECK_INT(w, >=, 0);
	errno = 0;
	CHECK_INT(open(_PATH_PERFMON, O_WRONLY), ==, -1);
	CHECK_INT(errno, ==, EBUSY);
	int r = open(_PATH_PERFMON, O_RDONLY); /* readers are welcome */
	CHECK_INT(r, >=, 0);
	close(w);
	w = open(_PATH_PERFMON, O_WRONLY);
	CHECK_INT(w, >=, 0);
	close(w);
	close(r);
}

static void writing_requests_need_write_access(void)
{
	int fd = open(_PATH_PERFMON, O_RDONLY);
	struct pmc p = instructions(0, PMCF_USR);
	int num = 0;
	CHECK_INT(ioctl_errno(fd, PMIOSETUP, &p), ==, EPERM);
	CHECK_INT(ioctl_errno(fd, PMIOSTART, &num), ==, EPERM);
	CHECK_INT(ioctl_errno(fd, PMIOSTOP, &num), ==, EPERM);
	CHECK_INT(ioctl_errno(fd, PMIORESET, &num), ==, EPERM);
	close(fd);
}

static void counter_numbers_and_setup_state(void)
{
	int fd = open(_PATH_PERFMON, O_RDWR);
	for (int num = -1; num <= NPMC; num += NPMC + 1) { /* -1 and NPMC: no such counter */
		struct pmc p = instructions(num, PMCF_USR);
		struct pmc_data d = {num, 0};
		CHECK_INT(ioctl_errno(fd, PMIOSETUP, &p), ==, EINVAL);
		CHECK_INT(ioctl_errno(fd, PMIOGET, &p), ==, EINVAL);
		CHECK_INT(ioctl_errno(fd, PMIOSTART, &num), ==, EINVAL);
		CHECK_INT(ioctl_errno(fd, PMIOSTOP, &num), ==, EINVAL);
		CHECK_INT(ioctl_errno(fd, PMIORESET, &num), ==, EINVAL);
		CHECK_INT(ioctl_errno(fd, PMIOREAD, &d), ==, EINVAL);
	}
	/* A counter never set up: EBUSY, FreeBSD's (reversed-sense) answer. */
	int num = 1;
	struct pmc p = instructions(1, 0);
	struct pmc_data d = {1, 0};
	CHECK_INT(ioctl_errno(fd, PMIOGET, &p), ==, EBUSY);
	CHECK_INT(ioctl_errno(fd, PMIOSTART, &num), ==, EBUSY);
	CHECK_INT(ioctl_errno(fd, PMIOSTOP, &num), ==, EBUSY);
	CHECK_INT(ioctl_errno(fd, PMIORESET, &num), ==, EBUSY);
	CHECK_INT(ioctl_errno(fd, PMIOREAD, &d), ==, EBUSY);
	close(fd);
}

static void setup_here(void)
{
	int fd = open(_PATH_PERFMON, O_RDWR);
	struct pmc pin = instructions(0, PMCF_USR | PMCF_PC);
	CHECK_INT(ioctl_errno(fd, PMIOSETUP, &pin), ==, EINVAL); /* perf cannot drive the pins */
	struct pmc p = instructions(0, PMCF_USR | PMCF_OS | PMCF_E | PMCF_INV);
	p.pmc_mask = 2;
	p.pmc_unit = 0x0f;
	if (!have_pmu()) {
		CHECK_INT(ioctl_errno(fd, PMIOSETUP, &p), ==, ENODEV);
		struct pmc none = instructions(1, 0);
		CHECK_INT(ioctl_errno(fd, PMIOSETUP, &none), ==, ENODEV);
		CHECK_INT(ioctl_errno(fd, PMIOGET, &p), ==, EBUSY); /* still not set up */
		close(fd);
		return;
	}
	fprintf(stderr, "(the kernel exposes a hardware PMU: the counter counts)\n");
	struct pmc u = instructions(0, PMCF_USR | PMCF_INT | PMCF_EN);
	CHECK_INT(ioctl_errno(fd, PMIOSETUP, &u), ==, 0);
	struct pmc got = {.pmc_num = 0};
	CHECK_INT(ioctl_errno(fd, PMIOGET, &got), ==, 0);
	CHECK_INT(got.pmc_flags, ==, PMCF_USR); /* INT and EN are the driver's */
	int num = 0;
	CHECK_INT(ioctl_errno(fd, PMIOSTART, &num), ==, 0);
	volatile unsigned long x = 0;
	for (int i = 0; i < 1000000; i++)
		x += (unsigned long)i;
	CHECK_INT(ioctl_errno(fd, PMIORESET, &num), ==, EBUSY);
	CHECK_INT(ioctl_errno(fd, PMIOSTOP, &num), ==, 0);
	struct pmc_data d = {0, 0};
	CHECK_INT(ioctl_errno(fd, PMIOREAD, &d), ==, 0);
	CHECK_U64(d.pmcd_value, >=, 1000000);
	close(fd);
}

static double monotonic_raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* A PMIOTSTAMP read into *TS and, in *T0 and *T1, CLOCK_MONOTONIC_RAW just
 * before and after it: the tightest of a few tries, as preemption between
 * the three calls widens the bracket. */
static void tstamp_bracketed(int fd, struct pmc_tstamp *ts, double *t0, double *t1)
{
	double best = 1e300;
	for (int i = 0; i < 16; i++) {
		struct pmc_tstamp x;
		double a = monotonic_raw_ns();
		CHECK_INT(ioctl_errno(fd, PMIOTSTAMP, &x), ==, 0);
		double b = monotonic_raw_ns();
		if (b - a < best) {
			best = b - a;
			*ts = x;
			*t0 = a;
			*t1 = b;
		}
	}
}

static void tstamp_reads_the_tsc_and_its_rate(void)
{
	int fd = open(_PATH_PERFMON, O_RDONLY);
	struct pmc_tstamp a, b;
	double a0, a1, b0, b1;
	tstamp_bracketed(fd, &a, &a0, &a1);
	struct timespec nap = {0, 100 * 1000 * 1000};
	nanosleep(&nap, NULL);
	tstamp_bracketed(fd, &b, &b0, &b1);
	CHECK_U64(b.pmct_value, >, a.pmct_value);
	CHECK_INT(a.pmct_rate, ==, b.pmct_rate);
	/* The rate is libhwc's exact one (tested to 50 ppm against
	 * CLOCK_MONOTONIC_RAW in machine.c), rounded to whole MHz. */
	double hz = 0;
	CHECK_OK(hwc_tsc_hz(&hz, NULL));
	CHECK_INT(a.pmct_rate, ==, lround(hz / 1e6));
	/* And the values are that clock: the two reads were between b0 - a1
	 * and b1 - a0 apart, however long the thread waited for the CPU in
	 * between, so the ticks seen give the rate within those bounds (and
	 * 1 MHz of rounding). */
	double ticks = (double)(b.pmct_value - a.pmct_value);
	CHECK_INT(a.pmct_rate, >, 0);
	CHECK(ticks / (b1 - a0) * 1e3 <= a.pmct_rate + 1);
	CHECK(ticks / (b0 - a1) * 1e3 >= a.pmct_rate - 1);
	close(fd);
}

static void unknown_request_and_bad_argument(void)
{
	int fd = open(_PATH_PERFMON, O_RDWR);
	int x = 0;
	CHECK_INT(ioctl_errno(fd, _IOW('5', 9, int), &x), ==, ENOTTY);
	CHECK_INT(ioctl_errno(fd, _IOW('5', 9, int), NULL), ==, ENOTTY);
	static const unsigned long requests[] = {PMIOSETUP, PMIOGET,  PMIOSTART, PMIOSTOP,
						 PMIOREAD,  PMIORESET, PMIOTSTAMP};
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		CHECK_INT(ioctl_errno(fd, requests[i], NULL), ==, EFAULT); /* not a crash */
	close(fd);
}

/* As an unprivileged user at perf_event_paranoid 2: counting kernel mode is
 * refused before the hardware is looked at. */
static void kernel_counting_as_nobody(void)
{
	int fd = open(_PATH_PERFMON, O_RDWR);
	CHECK_INT(fd, >=, 0);
	struct pmc k = instructions(0, PMCF_OS), u = instructions(0, PMCF_USR);
	int paranoid = 2;
	hwc_paranoid(&paranoid);
	if (paranoid >= 2)
		CHECK_INT(ioctl_errno(fd, PMIOSETUP, &k), ==, EACCES);
	CHECK_INT(ioctl_errno(fd, PMIOSETUP, &u), ==, have_pmu() ? 0 : ENODEV);
	close(fd);
}

static void unprivileged_kernel_counting(void)
{
	run_as_nobody(kernel_counting_as_nobody, "kernel_counting_as_nobody");
}

int main(void)
{
	RUN(one_writer_at_a_time);
	RUN(writing_requests_need_write_access);
	RUN(counter_numbers_and_setup_state);
	RUN(setup_here);
	RUN(tstamp_reads_the_tsc_and_its_rate);
	RUN(unknown_request_and_bad_argument);
	RUN(unprivileged_kernel_counting);
	return check_exit();
}
