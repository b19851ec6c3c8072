/* The perfmon library's driver logic, counting for real, in the order
 * FreeBSD's example program (share/examples/perfmon) uses it.
 *
 * TEST DOUBLE: this host has no hardware PMU, so every setup is ENODEV here
 * (perfmon_device.c tests that).  To exercise the state machine of a set-up
 * counter, this program links the perfmon library's own objects except the
 * one function that maps a PERFEVTSEL word to a hardware event,
 * devshim_event(), and stands the software event page-faults in for the
 * hardware, in the modes the PMCF_USR / PMCF_OS flags choose.  Everything
 * else (the interposed open/ioctl/close and every PMIO* request) is the
 * library's code. */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <machine/cpu.h>
#include <machine/perfmon.h>

#include "../compat/common/devshim.h"
#include "check.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int devshim_event(hwc_evlist *list, uint64_t evtsel)
{
	bool u = evtsel & (PMCF_USR << 16), k = evtsel & (PMCF_OS << 16);
	return hwc_evlist_add(list, u && k ? "page-faults:uk" : u ? "page-faults:u" : "page-faults:k");
}

static int dev;

static int request(unsigned long req, void *arg)
{
	errno = 0;
	return ioctl(dev, req, arg) == 0 ? 0 : errno;
}

static long long value(int num)
{
	struct pmc_data d = {num, -1};
	CHECK_INT(request(PMIOREAD, &d), ==, 0);
	return d.pmcd_value;
}

static void setup_get_start_stop(void)
{
	struct pmc p = {.pmc_num = 0};
	p.pmc_event = PMC6_INST_RETIRED;
	p.pmc_flags = PMCF_USR | PMCF_INT | PMCF_EN; /* INT and EN are the driver's */
	CHECK_INT(request(PMIOSETUP, &p), ==, 0);
	struct pmc got = {.pmc_num = 0};
	CHECK_INT(request(PMIOGET, &got), ==, 0);
	CHECK_INT(got.pmc_event, ==, PMC6_INST_RETIRED);
	CHECK_INT(got.pmc_flags, ==, PMCF_USR); /* set up stopped */
	touch_pages(50);
	CHECK_INT(value(0), ==, 0); /* not started: counts nothing */

	int num = 0;
	CHECK_INT(request(PMIOSTART, &num), ==, 0);
	CHECK_INT(request(PMIOGET, &got), ==, 0);
	CHECK_INT(got.pmc_flags, ==, PMCF_USR | PMCF_EN);
	touch_pages(100);
	CHECK_INT(request(PMIORESET, &num), ==, EBUSY); /* running: stop it first */
	CHECK_INT(request(PMIOSTOP, &num), ==, 0);
	long long v = value(0);
	CHECK_INT(v, >=, 100);
	touch_pages(100);
	CHECK_INT(value(0), ==, v); /* stopped: frozen */
	CHECK_INT(request(PMIORESET, &num), ==, 0);
	CHECK_INT(value(0), ==, 0);
	CHECK_INT(request(PMIOSTART, &num), ==, 0);
	touch_pages(10);
	CHECK_INT(request(PMIOSTOP, &num), ==, 0);
	CHECK_INT(value(0), >=, 10);
}

static void setup_resets_and_stops(void)
{
	int num = 0;
	CHECK_INT(request(PMIOSTART, &num), ==, 0);
	touch_pages(20);
	struct pmc p = {.pmc_num = 0};
	p.pmc_flags = PMCF_USR;
	CHECK_INT(request(PMIOSETUP, &p), ==, 0);
	CHECK_INT(value(0), ==, 0);
	struct pmc got = {.pmc_num = 0};
	CHECK_INT(request(PMIOGET, &got), ==, 0);
	CHECK_INT(got.pmc_flags, ==, PMCF_USR);
}

static void counts_children_created_while_started(void)
{
	struct pmc p = {.pmc_num = 1};
	p.pmc_flags = PMCF_USR;
	CHECK_INT(request(PMIOSETUP, &p), ==, 0);
	int num = 1;
	CHECK_INT(request(PMIOSTART, &num), ==, 0);
	pid_t pid = fork();
	if (pid == 0) {
		touch_pages(300);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	CHECK_INT(request(PMIOSTOP, &num), ==, 0);
	CHECK_INT(value(1), >=, 300);
}

static void modes_that_count_nothing(void)
{
	struct pmc p = {.pmc_num = 1}; /* neither PMCF_USR nor PMCF_OS */
	CHECK_INT(request(PMIOSETUP, &p), ==, 0);
	int num = 1;
	CHECK_INT(request(PMIOSTART, &num), ==, 0);
	touch_pages(50);
	CHECK_INT(request(PMIOSTOP, &num), ==, 0);
	CHECK_INT(value(1), ==, 0);
}

static void closing_the_writer_releases_the_counters(void)
{
	close(dev);
	dev = open(_PATH_PERFMON, O_RDONLY);
	struct pmc got = {.pmc_num = 0};
	CHECK_INT(request(PMIOGET, &got), ==, EBUSY);
	close(dev);
	dev = open(_PATH_PERFMON, O_RDWR);
	CHECK_INT(dev, >=, 0);
}

int main(void)
{
	dev = open(_PATH_PERFMON, O_RDWR);
	CHECK_INT(dev, >=, 0);
	RUN(setup_get_start_stop);
	RUN(setup_resets_and_stops);
	RUN(counts_children_created_while_started);
	RUN(modes_that_count_nothing);
	RUN(closing_the_writer_releases_the_counters);
	close(dev);
	return check_exit();
}
