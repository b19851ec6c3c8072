/* FreeBSD's qualifiers ("EVENT,usr,os,cmask=2") with every event source:
 * software events (the attr they open, read back from the log, which is a
 * perf.data file: hwc-data(5)), perf's generic hardware events, libpfm4
 * events and raw events.  This machine has no hardware PMU, so hardware
 * rows check their error is "not supported" and not a parse error, and
 * their encodings are checked in a child that sees a fake Intel sysfs
 * (tests/golden/sysfs) and libpfm4's Skylake: the kernel refuses to open
 * them, and the detail names the spec and the config it tried. */
#include "pmc_test.h"

#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/stat.h>

/* The attrs section of the perf.data file FD; how many attrs into OUT. */
static int log_attrs(int fd, struct perf_event_attr *out, int max)
{
	struct {
		char magic[8];
		uint64_t size, attr_size;
		uint64_t attrs[2], data[2], types[2];
	} h;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h.magic, "PERFILE2", 8))
		return -1;
	int n = 0;
	for (uint64_t off = h.attrs[0]; off + h.attr_size <= h.attrs[0] + h.attrs[1] && n < max;
	     off += h.attr_size) {
		memset(&out[n], 0, sizeof(out[n]));
		size_t len = h.attr_size - 16 < sizeof(out[n]) ? h.attr_size - 16 : sizeof(out[n]);
		if (pread(fd, &out[n], len, (off_t)off) != (ssize_t)len)
			return -1;
		n++;
	}
	return n;
}

/* Software events: the modes each qualifier chooses, as opened. */
static void test_software_modes(void)
{
	static const struct {
		int line;
		const char *spec;
		uint64_t config; /* PERF_TYPE_SOFTWARE */
		int exclude_user, exclude_kernel;
	} rows[] = {
		{__LINE__, "cpu-clock,usr,os", PERF_COUNT_SW_CPU_CLOCK, 0, 0},
		{__LINE__, "cpu-clock,usr", PERF_COUNT_SW_CPU_CLOCK, 0, 1},
		{__LINE__, "cpu-clock,os", PERF_COUNT_SW_CPU_CLOCK, 1, 0},
		{__LINE__, "cpu-clock, OS ,Usr", PERF_COUNT_SW_CPU_CLOCK, 0, 0},
		{__LINE__, "cpu-clock", PERF_COUNT_SW_CPU_CLOCK, 0, 0},
		{__LINE__, "task-clock,usr", PERF_COUNT_SW_TASK_CLOCK, 0, 1},
		{__LINE__, "page-faults,usr,os", PERF_COUNT_SW_PAGE_FAULTS, 0, 0},
		{__LINE__, "page-faults,os", PERF_COUNT_SW_PAGE_FAULTS, 1, 0},
		{__LINE__, "PAGE_FAULT.ALL,usr", PERF_COUNT_SW_PAGE_FAULTS, 0, 1},
		{__LINE__, "minor-faults,usr", PERF_COUNT_SW_PAGE_FAULTS_MIN, 0, 1},
		{__LINE__, "context-switches,os", PERF_COUNT_SW_CONTEXT_SWITCHES, 1, 0},
		{__LINE__, "cpu-migrations,usr,os", PERF_COUNT_SW_CPU_MIGRATIONS, 0, 0},
		{__LINE__, "CLOCK.HARD,usr", PERF_COUNT_SW_CPU_CLOCK, 0, 1},
		{__LINE__, "CLOCK.PROF,os", PERF_COUNT_SW_CPU_CLOCK, 1, 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		/* A log with no name: nothing in the working directory (the
		 * source tree, under tests/run) is created, truncated or removed. */
		int fd = open("/tmp", O_TMPFILE | O_RDWR, 0600);
		CHECK(fd >= 0);
		/* Counting takes the qualifiers too. */
		pmc_id_t id;
		if (pmc_allocate(rows[i].spec, PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) < 0) {
			fprintf(stderr, "line %d: %s (counting): %s\n", rows[i].line, pmc_errdetail(),
				strerror(errno));
			check_failures++;
			close(fd);
			continue;
		}
		pmc_release(id);
		CHECK_INT(pmc_configure_logfile(fd), ==, 0);
		if (pmc_allocate(rows[i].spec, PMC_MODE_TS, 0, PMC_CPU_ANY, &id, 100000) < 0) {
			fprintf(stderr, "line %d: %s (sampling): %s\n", rows[i].line, pmc_errdetail(),
				strerror(errno));
			check_failures++;
		} else {
			CHECK_INT(pmc_start(id), ==, 0);
			spin_ms(5);
			CHECK_INT(pmc_stop(id), ==, 0);
			pmc_release(id);
		}
		CHECK_INT(pmc_close_logfile(), ==, 0);
		struct perf_event_attr a[8];
		int n = log_attrs(fd, a, 8), found = 0;
		for (int k = 0; k < n; k++) {
			if (a[k].type != PERF_TYPE_SOFTWARE || a[k].config != rows[i].config ||
			    !a[k].sample_period)
				continue;
			found++;
			if (a[k].exclude_user != (unsigned)rows[i].exclude_user ||
			    a[k].exclude_kernel != (unsigned)rows[i].exclude_kernel) {
				fprintf(stderr,
					"line %d: '%s' opened exclude_user %u exclude_kernel %u, "
					"want %d %d\n",
					rows[i].line, rows[i].spec, a[k].exclude_user,
					a[k].exclude_kernel, rows[i].exclude_user,
					rows[i].exclude_kernel);
				check_failures++;
			}
		}
		if (found != 1) {
			fprintf(stderr, "line %d: '%s': %d matching attrs of %d in the log\n",
				rows[i].line, rows[i].spec, found, n);
			check_failures++;
		}
		close(fd);
	}
}

/* Qualifiers an event cannot take: a clear error, never a count. */
static void test_refused(void)
{
	static const struct {
		int line;
		const char *spec;
		int err;
		const char *detail;
	} rows[] = {
		{__LINE__, "cpu-clock,cmask=2", EINVAL, "software event"},
		{__LINE__, "cpu-clock,edge", EINVAL, "not 'edge'"},
		{__LINE__, "page-faults,inv", EINVAL, "software event"},
		{__LINE__, "task-clock,umask=0x1", EINVAL, "software event"},
		{__LINE__, "context-switches,threshold=1", EINVAL, "software event"},
		{__LINE__, "cpu-clock,anythread", EINVAL, "software event"},
		{__LINE__, "cpu-clock,precise", EINVAL, "software event"},
		{__LINE__, "CLOCK.STAT,count=1", EINVAL, "software event"},
		{__LINE__, "PAGE_FAULT.READ,cmask=1", EINVAL, "software event"},
		{__LINE__, "cpu-clock,foo", EINVAL, "unknown qualifier 'foo'"},
		{__LINE__, "cpu-clock,umask=BAR", EINVAL, "unknown qualifier 'BAR'"},
		{__LINE__, "TSC,usr", EINVAL, "no qualifiers"},
		{__LINE__, "cycles,os", EINVAL, "no qualifiers"},
		{__LINE__, "cpu-clock,cmask=256", EINVAL, "0 to 255"},
		{__LINE__, "cpu-clock,cmask=", EINVAL, "0 to 255"},
		{__LINE__, "r1c2,umask=0x1g", EINVAL, "0 to 255"},
		{__LINE__, "cpu-clock,cascade", EINVAL, "Pentium 4"},
		{__LINE__, "r1c2,rsp=DMND_DATA_RD", EINVAL, "Core 2"},
		{__LINE__, "L1-dcache-load-misses,edge", EINVAL, "cache events are encoded"},
		{__LINE__, "r1c2,nosuchword", EINVAL, "unknown qualifier 'nosuchword'"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		pmc_id_t id;
		int rc = pmc_allocate(rows[i].spec, PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0);
		if (rc == 0 || errno != rows[i].err || !strstr(pmc_errdetail(), rows[i].detail)) {
			fprintf(stderr, "line %d: '%s': rc %d errno %s detail '%s', want %s and '%s'\n",
				rows[i].line, rows[i].spec, rc, strerror(errno), pmc_errdetail(),
				strerror(rows[i].err), rows[i].detail);
			check_failures++;
		}
		if (rc == 0)
			pmc_release(id);
	}
}

static bool have_cpu_pmu(void)
{
	struct stat st;
	return stat("/sys/bus/event_source/devices/cpu", &st) == 0;
}

/* Hardware events with qualifiers parse; here they fail as hardware that
 * is absent (EINVAL, "not supported"), never as a malformed spec. */
static void test_hardware_here(void)
{
	static const char *const specs[] = {
		"instructions,usr,os", "instructions,usr", "unhalted-cycles,os",
		"branches,usr,os",     "branch-mispredicts,usr", "dc-misses,os",
		"r1c2,usr,os",	       "r1c2,edge,inv,cmask=1,umask=0x2,usr",
		"INST_RETIRED.ANY_P,usr,os", "instructions,cmask=2",
	};
	if (have_cpu_pmu()) {
		fprintf(stderr, "test_hardware_here: this machine has a cpu PMU: the rows must "
				"count\n");
	}
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		pmc_id_t id;
		int rc = pmc_allocate(specs[i], PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0);
		int err = errno;
		const char *d = pmc_errdetail();
		if (rc == 0) {
			pmc_release(id);
			continue;
		}
		bool libpfm_other_cpu = strstr(d, "is an event of other CPU models") != NULL;
		if (libpfm_other_cpu)
			continue; /* INST_RETIRED.ANY_P on an AMD host: unknown here, rightly */
		if (have_cpu_pmu() || err != EINVAL ||
		    (!strstr(d, "not supported") && !strstr(d, "no hardware PMU")) ||
		    strstr(d, "malformed") || strstr(d, "modifier")) {
			fprintf(stderr, "'%s': rc %d errno %s: %s\n", specs[i], rc, strerror(err), d);
			check_failures++;
		}
	}
}

/* In a child that sees an Intel machine: the encoding each qualifier sets. */
static void golden_rows(void)
{
	static const struct {
		int line;
		const char *spec;
		const char *hwc_spec; /* what libpmc asks libhwc for */
		const char *config;   /* what the open tried: "type T, config C" */
	} rows[] = {
		{__LINE__, "instructions,usr,os", "'instructions:uk'", "type 0, config 0x1)"},
		{__LINE__, "instructions,cmask=2,edge,usr", "'cpu/config=0xc0,cmask=2,edge/u'",
		 "type 4, config 0x20400c0)"},
		{__LINE__, "unhalted-cycles,inv,cmask=1", "'cpu/config=0x3c,cmask=1,inv/'",
		 "type 4, config 0x180003c)"},
		{__LINE__, "branches,umask=0x3,os", "'cpu/config=0xc4,umask=0x3/k'",
		 "type 4, config 0x3c4)"},
		{__LINE__, "INST_RETIRED.ANY_P,usr,os", "'INST_RETIRED.ANY_P:u:k'",
		 "type 4, config 0xc0)"},
		{__LINE__, "INST_RETIRED:ANY_P,anythread,threshold=3",
		 "'cpu/config=0xc0,cmask=3,any/'", "type 4, config 0x32000c0)"},
		{__LINE__, "INST_RETIRED,umask=ANY_P,usr", "'INST_RETIRED:ANY_P:u'",
		 "type 4, config 0xc0)"},
		{__LINE__, "OFFCORE_RESPONSE_0:DMND_DATA_RD:ANY_RESPONSE,complement",
		 "'cpu/config=0x1b7,config1=0x10001,inv/'", "type 4, config 0x8001b7)"},
		{__LINE__, "r1c2,inv,os", "'cpu/config=0x1c2,inv/k'", "type 4, config 0x8001c2)"},
		{__LINE__, "r1c2,umask=0", "'cpu/config=0x1c2,umask=0/'", "type 4, config 0xc2)"},
		{__LINE__, "cpu/event=0x3c/,edge,usr", "'cpu/config=0x3c,edge/u'",
		 "type 4, config 0x4003c)"},
	};
	init_or_die();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		pmc_id_t id;
		int rc = pmc_allocate(rows[i].spec, PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0);
		const char *d = pmc_errdetail();
		if (rc == 0 || errno != EINVAL || !strstr(d, rows[i].hwc_spec) ||
		    !strstr(d, rows[i].config)) {
			fprintf(stderr, "line %d: '%s': rc %d errno %s: %s\n  want %s and %s\n",
				rows[i].line, rows[i].spec, rc, strerror(errno), d, rows[i].hwc_spec,
				rows[i].config);
			check_failures++;
		}
		if (rc == 0)
			pmc_release(id);
	}
}

static void test_golden(void)
{
	if (have_cpu_pmu()) {
		fprintf(stderr, "test_golden: not run: a real cpu PMU would count the rows\n");
		return;
	}
	char root[4096];
	const char *src = getenv("HWC_SRC") ? getenv("HWC_SRC") : ".";
	snprintf(root, sizeof(root), "%s/tests/golden/sysfs", src);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("HWC_SYSFS_ROOT", root, 1);
		setenv("LIBPFM_FORCE_PMU", "skl", 1);
		check_failures = 0;
		golden_rows();
		_exit(check_failures ? 1 : 0);
	}
	int status = reap(pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	char dir[] = "/tmp/pmc_qualXXXXXX";
	if (!mkdtemp(dir) || chdir(dir))
		return 1;
	RUN(test_golden); /* before pmc_init(): the child reads the fake machine */
	init_or_die();
	RUN(test_software_modes);
	RUN(test_refused);
	RUN(test_hardware_here);
	rmdir(dir);
	return check_exit();
}
