/* The pctr library's driver logic, counting for real.
 *
 * TEST DOUBLE: this host has no hardware PMU, so every function is ENODEV
 * here (pctr_device.c tests that).  To exercise what happens once a function
 * is set, this program links the pctr library's own objects except the one
 * function that maps a PERFEVTSEL word to a hardware event, devshim_event(),
 * and stands the software event page-faults in for the hardware, in the
 * modes the word's PCTR_U / PCTR_K bits choose.  Everything else (the
 * interposed open/ioctl/close, PCIOCRD, PCIOCSx, rdpmc(), the per-thread
 * counters and the fast read under them) is the library's code. */
#include <sys/types.h>
#include <machine/cpu.h>
#include <machine/pctr.h>

#include "../compat/common/devshim.h"
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
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
	touch_pages(50);
	CHECK_U64(counter(0), >=, 50);
	CHECK_INT(ioctl(dev, PCIOCS0, &fn), ==, 0);
	CHECK_U64(counter(0), <, 50);
}

static void functions_that_count_nothing(void)
{
	unsigned no_en = FN & ~PCTR_EN, no_modes = 0xc0 | PCTR_EN;
	CHECK_INT(ioctl(dev, PCIOCS2, &no_en), ==, 0);
	CHECK_INT(ioctl(dev, PCIOCS3, &no_modes), ==, 0);
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

int main(void)
{
	dev = open(_PATH_PCTR, O_RDWR);
	CHECK_INT(dev, >=, 0);
	RUN(set_then_count);
	RUN(set_resets_the_counter);
	RUN(functions_that_count_nothing);
	RUN(failed_set_keeps_the_function);
	RUN(counters_are_the_setting_threads);
	close(dev);
	return check_exit();
}
