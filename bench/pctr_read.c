/* Per-call cost of the classic user-space reads next to a raw read(2):
 * rdtsc() (pctr.h's inline instruction) and hwc_rdtsc(), libhwc's fast read
 * (hwc_counters_read_fast), the snapshot read (hwc_counters_read + value),
 * and, built with the pctr or the perfmon driver, PCIOCRD and rdpmc() or
 * PMIOREAD and PMIOTSTAMP.  Prints one line per method: the median ns per
 * call over ROUNDS rounds of CALLS calls, methods interleaved round by round,
 * and the median of its per-round ratios to the raw read(2).
 *
 * The drivers' counters need a hardware PMU, which these machines lack; as
 * in their tests, this program links the driver's objects with its own
 * devshim_event(), so a software event (page-faults) stands in for the
 * hardware event and every read goes the way it would without rdpmc.
 * Where the kernel has a PMU, "fast read, instructions:u" shows rdpmc. */
#include "../compat/common/devshim.h"

#include <fcntl.h>
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#ifdef BENCH_PCTR
#include <machine/pctr.h>
#else
#include <machine/perfmon.h>
#endif

#define ROUNDS 101
#define CALLS 4000

int devshim_event(hwc_evlist *list, uint64_t evtsel)
{
	(void)evtsel;
	return hwc_evlist_add(list, "page-faults:u");
}

struct method {
	const char *name;
	void (*call)(void *);
	void *arg;
	void (*begin)(void); /* untimed, before each round */
	double ns[ROUNDS];
};

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

/* Counters of the calling thread that libhwc maps for the fast read. */
static hwc_counters *open_self(const char *spec)
{
	hwc_evlist *l;
	hwc_counters *c;
	struct hwc_target t = {.kind = HWC_TARGET_SELF, .flags = HWC_NO_INHERIT};
	hwc_evlist_new(&l);
	if (hwc_evlist_add(l, spec))
		fail(spec);
	int err = hwc_counters_open(&c, l, &t);
	hwc_evlist_free(l);
	if (err)
		return NULL;
	if (hwc_counters_start(c))
		fail("start");
	return c;
}

static volatile uint64_t sink;

static void rdtsc_call(void *arg)
{
	(void)arg;
	for (int i = 0; i < CALLS; i++)
		sink += __builtin_ia32_rdtsc();
}

static void hwc_rdtsc_call(void *arg)
{
	(void)arg;
	for (int i = 0; i < CALLS; i++)
		sink += hwc_rdtsc();
}

/* The raw syscall on the very fd the fast read uses: the floor. */
static void raw_call(void *arg)
{
	int fd = hwc_counters_fd(arg, 0, 0);
	uint64_t buf[3];
	for (int i = 0; i < CALLS; i++)
		if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			abort();
	sink += buf[0];
}

static void fast_call(void *arg)
{
	struct hwc_value v;
	for (int i = 0; i < CALLS; i++)
		if (hwc_counters_read_fast(arg, 0, 0, &v))
			abort();
	sink += v.raw;
}

static void snapshot_call(void *arg)
{
	struct hwc_value v;
	for (int i = 0; i < CALLS; i++)
		if (hwc_counters_read(arg) || hwc_counters_value(arg, 0, 0, &v))
			abort();
	sink += v.raw;
}

static int dev;

#ifdef BENCH_PCTR
static void pciocrd_call(void *arg)
{
	(void)arg;
	struct pctrst st;
	for (int i = 0; i < CALLS; i++)
		if (ioctl(dev, PCIOCRD, &st))
			abort();
	sink += st.pctr_hwc[0];
}

static void rdpmc_call(void *arg)
{
	(void)arg;
	for (int i = 0; i < CALLS; i++)
		sink += rdpmc(0);
}

/* The counters PCIOCRD reads: the first N count, the others are unset. */
static void set_counters(int n)
{
	for (int i = 0; i < PCTR_NUM; i++) {
		unsigned fn = i < n ? 0xc0 | PCTR_U | PCTR_EN : 0;
		if (ioctl(dev, PCIOCS0 + (unsigned long)i, &fn))
			fail("PCIOCSx");
	}
}

static void no_counter(void)
{
	set_counters(0);
}

static void one_counter(void)
{
	set_counters(1);
}

static void four_counters(void)
{
	set_counters(4);
}
#else
static void pmioread_call(void *arg)
{
	(void)arg;
	struct pmc_data d = {0, 0};
	for (int i = 0; i < CALLS; i++)
		if (ioctl(dev, PMIOREAD, &d))
			abort();
	sink += (uint64_t)d.pmcd_value;
}

static void pmiotstamp_call(void *arg)
{
	(void)arg;
	struct pmc_tstamp t;
	for (int i = 0; i < CALLS; i++)
		if (ioctl(dev, PMIOTSTAMP, &t))
			abort();
	sink += (uint64_t)t.pmct_value;
}
#endif

/* Prints each method's median ns per call and, against the raw read(2)
 * (method BASE), the median of the per-round ratios: rounds are short and
 * adjacent, so the ratio holds while the machine's load drifts. */
static void run(struct method *m, size_t nm, size_t base)
{
	for (int r = -1; r < ROUNDS; r++) /* round -1 warms up */
		for (size_t k = 0; k < nm; k++) {
			if (m[k].begin)
				m[k].begin();
			double t0 = bench_now_ns();
			m[k].call(m[k].arg);
			double ns = (bench_now_ns() - t0) / CALLS;
			if (r >= 0)
				m[k].ns[r] = ns;
		}
	for (size_t k = 0; k < nm; k++) {
		double ratio[ROUNDS];
		for (int r = 0; r < ROUNDS; r++)
			ratio[r] = m[k].ns[r] / m[base].ns[r];
		double sorted[ROUNDS];
		memcpy(sorted, m[k].ns, sizeof(sorted));
		printf("%-36s %8.1f ns/call  %6.3f x raw read(2)\n", m[k].name,
		       bench_median(sorted, ROUNDS), bench_median(ratio, ROUNDS));
	}
}

int main(void)
{
	hwc_counters *sw = open_self("page-faults:u");
	if (!sw)
		fail("page-faults:u");
	hwc_counters *hw = open_self("instructions:u");
	struct method m[] = {
		{"rdtsc()", rdtsc_call, NULL, NULL, {0}},
		{"hwc_rdtsc()", hwc_rdtsc_call, NULL, NULL, {0}},
		{"raw read(2), 1 event", raw_call, sw, NULL, {0}},
		{"libhwc fast read, 1 event", fast_call, sw, NULL, {0}},
		{"libhwc snapshot read, 1 event", snapshot_call, sw, NULL, {0}},
		{"libhwc fast read, instructions:u", fast_call, hw, NULL, {0}},
#ifdef BENCH_PCTR
		{"PCIOCRD, no counter set", pciocrd_call, NULL, no_counter, {0}},
		{"PCIOCRD, 1 counter", pciocrd_call, NULL, one_counter, {0}},
		{"PCIOCRD, 4 counters", pciocrd_call, NULL, four_counters, {0}},
		{"rdpmc(0)", rdpmc_call, NULL, one_counter, {0}},
#else
		{"PMIOREAD", pmioread_call, NULL, NULL, {0}},
		{"PMIOTSTAMP", pmiotstamp_call, NULL, NULL, {0}},
#endif
	};
	size_t nm = sizeof(m) / sizeof(m[0]);
	if (!hw) { /* no hardware PMU: nothing to read with rdpmc */
		printf("%-36s      n/a (no hardware PMU)\n", m[5].name);
		memmove(&m[5], &m[6], (nm - 6) * sizeof(m[0]));
		nm--;
	}
#ifdef BENCH_PCTR
	dev = open(_PATH_PCTR, O_RDWR);
	if (dev < 0)
		fail(_PATH_PCTR);
#else
	dev = open(_PATH_PERFMON, O_RDWR);
	struct pmc p = {.pmc_num = 0};
	p.pmc_event = PMC6_INST_RETIRED;
	p.pmc_flags = PMCF_USR;
	int num = 0;
	if (dev < 0 || ioctl(dev, PMIOSETUP, &p) || ioctl(dev, PMIOSTART, &num))
		fail(_PATH_PERFMON);
#endif
	run(m, nm, 2);
	return 0;
}
