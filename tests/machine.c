/* Machine information and time through the public API, checked against the
 * kernel's own files (/proc/cpuinfo, /proc/sys/kernel, sysfs) and clocks:
 * the TSC rate against CLOCK_MONOTONIC_RAW to 50 ppm, permissions as root
 * and as nobody, and no counters claimed without a core PMU. */
#include "check.h"

#include <errno.h>
#include <glob.h>
#include <hwc/hwc.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* x86's cpu (cpu_core on hybrids), or another architecture's core PMU:
 * the one with a cpus file (armv8_pmuv3, ...). */
static bool have_core_pmu(void)
{
	struct stat st;
	if (stat("/sys/bus/event_source/devices/cpu", &st) == 0 ||
	    stat("/sys/bus/event_source/devices/cpu_core", &st) == 0)
		return true;
	glob_t g;
	bool found = glob("/sys/bus/event_source/devices/*/cpus", 0, NULL, &g) == 0;
	if (found)
		globfree(&g);
	return found;
}

static long long read_proc_int(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The first "KEY : value" line of /proc/cpuinfo. */
static bool cpuinfo(const char *key, char *out, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[1024];
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		size_t n = strlen(key);
		if (strncmp(line, key, n) != 0)
			continue;
		const char *v = line + n;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v++ != ':')
			continue; /* "model" must not match "model name" */
		while (*v == ' ')
			v++;
		snprintf(out, size, "%s", v);
		out[strcspn(out, "\n")] = '\0';
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

static void test_cpu_info(void)
{
	struct hwc_cpu_info c;
	CHECK_OK(hwc_cpu_info(&c));
	char v[256];
	if (cpuinfo("vendor_id", v, sizeof(v))) {
		CHECK_STR_EQ(c.vendor, v);
		/* The vendor as a value, for the compat layers to compare. */
		int want = strcmp(v, "GenuineIntel") == 0 ? HWC_VENDOR_INTEL
			   : strcmp(v, "AuthenticAMD") == 0 || strcmp(v, "HygonGenuine") == 0
				   ? HWC_VENDOR_AMD
				   : HWC_VENDOR_UNKNOWN;
		CHECK_INT(c.vendor_id, ==, want);
		CHECK(cpuinfo("cpu family", v, sizeof(v)));
		CHECK_INT(c.family, ==, atoi(v));
		CHECK(cpuinfo("model", v, sizeof(v)));
		CHECK_INT(c.model, ==, atoi(v));
		CHECK(cpuinfo("stepping", v, sizeof(v)));
		CHECK_INT(c.stepping, ==, atoi(v));
		CHECK(cpuinfo("model name", v, sizeof(v)));
		CHECK_STR_EQ(c.brand, v);
		if (strcmp(c.brand, v) != 0)
			fprintf(stderr, "brand '%s' vs cpuinfo '%s'\n", c.brand, v);
	} else if (cpuinfo("CPU implementer", v, sizeof(v))) {
		/* Arm: the kernel's MIDR fields, as /proc/cpuinfo prints them. */
		CHECK_INT(c.vendor_id, ==, HWC_VENDOR_ARM);
		CHECK_INT(c.family, ==, strtol(v, NULL, 0));
		CHECK(cpuinfo("CPU part", v, sizeof(v)));
		CHECK_INT(c.model, ==, strtol(v, NULL, 0));
		CHECK(cpuinfo("CPU revision", v, sizeof(v)));
		CHECK_INT(c.stepping, ==, strtol(v, NULL, 0));
		CHECK(c.tsc_invariant);
	} else {
		SKIP_SUB("/proc/cpuinfo has no vendor_id nor CPU implementer: identity not compared");
	}
	CHECK_INT(c.cpus_online, ==, sysconf(_SC_NPROCESSORS_ONLN));
	CHECK_INT(c.cpus_configured, ==, sysconf(_SC_NPROCESSORS_CONF));
	CHECK_INT(c.nmi_watchdog, ==, read_proc_int("/proc/sys/kernel/nmi_watchdog") > 0 ? 1 : 0);
	if (*c.pfm_model) {
		CHECK(c.pfm_desc[0] != '\0');
		CHECK_INT(c.pfm_counters, >, 0);
	}
	CHECK(c.core_pmu == have_core_pmu());
	if (!c.core_pmu) {
		/* No core PMU: whatever CPUID or libpfm4 say, nothing can count. */
		CHECK_INT(c.counters, ==, 0);
		CHECK_INT(c.counter_width, ==, 0);
		CHECK_INT(c.fixed, ==, 0);
		CHECK_INT(c.fixed_width, ==, 0);
		CHECK(!c.watchdog_counter);
		CHECK(c.core_pmu_name[0] == '\0');
		CHECK(c.counters_source[0] == '\0');
	} else {
		CHECK_INT(c.counters, >, 0);
		CHECK_INT(c.counter_width, >=, 32);
		CHECK(c.counters_source[0] != '\0');
		CHECK(c.watchdog_counter == (c.nmi_watchdog == 1));
	}
}

/* MIDR_EL1 decoding, from values the Technical Reference Manuals give
 * (each core's "Main ID Register" section) and a fake sysfs tree. */
static void test_midr(void)
{
	static const struct {
		uint64_t midr;
		unsigned implementer, variant, part, revision;
		const char *vendor, *part_name;
	} cores[] = {
		{0x414fd0c1, 0x41, 4, 0xd0c, 1, "Arm", "Neoverse N1"}, /* QEMU's neoverse-n1 */
		{0x411fd070, 0x41, 1, 0xd07, 0, "Arm", "Cortex-A57"},  /* r1p0 */
		{0x410fd034, 0x41, 0, 0xd03, 4, "Arm", "Cortex-A53"},  /* r0p4 */
		{0x410fd083, 0x41, 0, 0xd08, 3, "Arm", "Cortex-A72"},  /* r0p3 */
		{0x431f0af1, 0x43, 1, 0x0af, 1, "Cavium", "ThunderX2"},
		{0x00000000, 0, 0, 0, 0, NULL, NULL},                  /* QEMU's max: all zero */
		{0x51ff0ff5, 0x51, 0xf, 0x0ff, 5, "Qualcomm", NULL},   /* a part not named here */
	};
	for (size_t i = 0; i < sizeof(cores) / sizeof(cores[0]); i++) {
		struct hwc_midr m;
		hwc_midr_decode(cores[i].midr, &m);
		CHECK_U64(m.value, ==, cores[i].midr);
		CHECK_INT(m.implementer, ==, cores[i].implementer);
		CHECK_INT(m.variant, ==, cores[i].variant);
		CHECK_INT(m.part, ==, cores[i].part);
		CHECK_INT(m.revision, ==, cores[i].revision);
		CHECK_INT(m.architecture, ==, cores[i].midr ? 0xf : 0);
		CHECK(!m.implementer_name == !cores[i].vendor);
		if (cores[i].vendor && m.implementer_name)
			CHECK_STR_EQ(m.implementer_name, cores[i].vendor);
		CHECK(!m.part_name == !cores[i].part_name);
		if (cores[i].part_name && m.part_name)
			CHECK_STR_EQ(m.part_name, cores[i].part_name);
	}

	/* Linux's file, in a fake tree (tests/golden/sysfs-arm64). */
	const char *src = getenv("HWC_SRC") ? getenv("HWC_SRC") : ".";
	char root[4096];
	snprintf(root, sizeof(root), "%s/tests/golden/sysfs-arm64", src);
	setenv("HWC_SYSFS_ROOT", root, 1);
	struct hwc_midr m;
	CHECK_OK(hwc_cpu_midr(1, &m));
	CHECK_U64(m.value, ==, 0x414fd0c1);
	CHECK(m.part_name && strcmp(m.part_name, "Neoverse N1") == 0);
	CHECK_INT(hwc_cpu_midr(7, &m), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "cpu7/regs/identification/midr_el1");
	CHECK_U64(m.value, ==, 0);
	unsetenv("HWC_SYSFS_ROOT");
}

static void test_permissions_root(void)
{
	struct hwc_permissions p;
	CHECK_OK(hwc_permissions(&p));
	CHECK_INT(p.paranoid, ==, read_proc_int("/proc/sys/kernel/perf_event_paranoid"));
	CHECK(p.summary[0] != '\0');
	if (geteuid() == 0) {
		CHECK(p.privileged);
		CHECK(p.user && p.kernel && p.cpu_wide);
		CHECK_STR_CONTAINS(p.summary, "privileged");
	}
}

/* What perf_event_paranoid allows an unprivileged user, per perf_event_open(2). */
static void test_permissions_nobody(void)
{
	if (geteuid() != 0) {
		SKIP_SUB("not root: cannot become nobody, unprivileged case not run");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		check_failures = 0;
		if (setgid(65534) || setuid(65534))
			_exit(3);
		struct hwc_permissions p;
		CHECK_OK(hwc_permissions(&p));
		CHECK(!p.privileged);
		CHECK(p.user == (p.paranoid <= 2));
		CHECK(p.kernel == (p.paranoid <= 1));
		CHECK(p.cpu_wide == (p.paranoid <= 0));
		if (p.paranoid == 2)
			CHECK_STR_CONTAINS(p.summary, "user space only");
		fprintf(stderr, "as nobody: %s\n", p.summary);
		_exit(check_failures ? 1 : 0);
	}
	int status;
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ------------------------------------------------------------- time */

static uint64_t raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A TSC reading and the MONOTONIC_RAW time at that instant, bracketed as
 * tightly as a few tries give; returns the bracket's width in ns. */
static uint64_t sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 32; i++) {
		uint64_t t0 = raw_ns(), c = hwc_rdtsc(), t1 = raw_ns();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = c;
			*ns = t0 + (t1 - t0) / 2;
		}
	}
	return best;
}

static void test_tsc_rate(void)
{
	double hz = 0, again = 0;
	enum hwc_tsc_source src = HWC_TSC_CALIBRATED, src2 = HWC_TSC_PERF_MMAP;
	CHECK_OK(hwc_tsc_hz(&hz, &src));
	CHECK_OK(hwc_tsc_hz(&again, &src2));
	CHECK(hz == again && src == src2); /* cached */
	CHECK(hz > 1e6 && hz < 1e11);
	const char *name = hwc_tsc_source_name(src);
	CHECK(name && *name && strcmp(name, "unknown") != 0);

	/* Measure over 200 ms and compare: 50 ppm.  Each end is bracketed to
	 * well under a microsecond, i.e. a few ppm of 200 ms. */
	uint64_t c0, n0, c1, n1, w0, w1;
	double measured = 0, ppm = 1e9;
	for (int attempt = 0; attempt < 3; attempt++) {
		w0 = sample(&c0, &n0);
		struct timespec nap = {0, 200 * 1000 * 1000};
		while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
			;
		w1 = sample(&c1, &n1);
		measured = (double)(c1 - c0) * 1e9 / (double)(n1 - n0);
		ppm = fabs(hz / measured - 1) * 1e6;
		/* A bracket widened by preemption is the measurement's error,
		 * not hwc's: measure again rather than blame the rate. */
		if (w0 + w1 < 2000)
			break;
	}
	fprintf(stderr, "TSC %.1f Hz from %s; measured %.1f Hz over 200 ms: %.2f ppm "
			"(brackets %llu, %llu ns)\n",
		hz, name, measured, ppm, (unsigned long long)w0, (unsigned long long)w1);
	CHECK(ppm < 50);
}

static void test_rdtsc(void)
{
	uint64_t a = hwc_rdtsc(), b = hwc_rdtsc();
	CHECK_U64(b, >=, a);
	struct timespec nap = {0, 1000 * 1000};
	nanosleep(&nap, NULL);
	CHECK_U64(hwc_rdtsc(), >, b);
}

static void test_user_reads(void)
{
	struct hwc_user_reads r;
	CHECK_OK(hwc_user_reads(&r));
	CHECK(r.time ? r.time_why[0] == '\0' : r.time_why[0] != '\0');
	CHECK(r.rdpmc ? r.rdpmc_why[0] == '\0' : r.rdpmc_why[0] != '\0');
	long long sysfs = read_proc_int("/sys/bus/event_source/devices/cpu/rdpmc");
	CHECK_INT(r.rdpmc_sysfs, ==, sysfs);
	if (r.time) {
		/* The kernel's conversion is the rate hwc_tsc_hz() reports. */
		double hz, from_page = 1e9 * (double)(1ull << r.time_shift) / r.time_mult;
		enum hwc_tsc_source src;
		CHECK_OK(hwc_tsc_hz(&hz, &src));
		CHECK_INT(src, ==, HWC_TSC_PERF_MMAP);
		CHECK(fabs(hz / from_page - 1) < 1e-9);
	} else {
		SKIP_SUB("no cap_user_time here (%s): mmap-page rate not compared",
			r.time_why);
	}
	if (!have_core_pmu()) {
		CHECK(!r.rdpmc);
		CHECK_INT(r.pmc_width, ==, 0);
		CHECK_STR_CONTAINS(r.rdpmc_why, "no hardware PMU");
	} else if (r.rdpmc) {
		CHECK_INT(r.pmc_width, >=, 32);
	}
}

int main(void)
{
	RUN(test_cpu_info);
	RUN(test_midr);
	RUN(test_permissions_root);
	RUN(test_permissions_nobody);
	RUN(test_rdtsc);
	RUN(test_tsc_rate);
	RUN(test_user_reads);
	return check_exit();
}
