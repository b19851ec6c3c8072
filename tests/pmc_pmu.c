/* FreeBSD 12+'s pmc_pmu_* functions, used as pmcstat and pmc(8) use them:
 * list (-L), describe (-u), map a log's PMCALLOCATEDYN index to a name with
 * the log's cpuid, encode an event, and the stat mode's counters. */
#include "pmc_test.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What FN(ARG) prints on standard output. */
static const char *stdout_of(void (*fn)(const char *), const char *arg)
{
	static char buf[1 << 20];
	fflush(stdout);
	FILE *f = tmpfile();
	int saved = dup(1);
	dup2(fileno(f), 1);
	fn(arg);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_listing(void)
{
	CHECK_INT(pmc_pmu_enabled(), ==, 1);
	char *all = strdup(stdout_of(pmc_pmu_print_counters, NULL));
	CHECK_STR_CONTAINS(all, "\tpage-faults\n");
	CHECK_STR_CONTAINS(all, "\tcontext-switches\n");
	/* A part of the name, in any case, selects. */
	const char *some = stdout_of(pmc_pmu_print_counters, "PAGE-FAU");
	CHECK_STR_CONTAINS(some, "\tpage-faults\n");
	CHECK(strstr(some, "context-switches") == NULL);
	CHECK(strlen(some) < strlen(all));
	free(all);
	const char *none = stdout_of(pmc_pmu_print_counters, "no-such-event-xyzzy");
	CHECK_STR_EQ(none, "");
}

static void test_descriptions(void)
{
	const char *d = stdout_of(pmc_pmu_print_counter_desc, "context-switches");
	CHECK_STR_CONTAINS(d, "context-switches:\t");
	CHECK(strchr(strstr(d, ":\t") + 2, '\n') > strstr(d, ":\t") + 2); /* a text */
	const char *l = stdout_of(pmc_pmu_print_counter_desc_long, "context-switches");
	CHECK_STR_CONTAINS(l, "context-switches:\t");
	const char *f = stdout_of(pmc_pmu_print_counter_full, "page-faults");
	CHECK_STR_CONTAINS(f, "name: page-faults\n");
	CHECK_STR_CONTAINS(f, "desc: ");
	CHECK_STR_CONTAINS(f, "event: ");
	CHECK_STR_CONTAINS(f, "pmu: software\n");
	CHECK_STR_EQ(stdout_of(pmc_pmu_print_counter_full, "no-such-event-xyzzy"), "");
}

static void test_indices(void)
{
	int idx = pmc_pmu_idx_get_by_event(NULL, "page-faults");
	CHECK_INT(idx, >=, 0);
	CHECK_STR_EQ(pmc_pmu_event_get_by_idx(NULL, idx), "page-faults");
	CHECK_INT(pmc_pmu_idx_get_by_event(NULL, "PAGE-FAULTS"), ==, idx);
	int cs = pmc_pmu_idx_get_by_event(NULL, "context-switches");
	CHECK_INT(cs, >=, 0);
	CHECK_INT(cs, !=, idx);
	CHECK_INT(pmc_pmu_idx_get_by_event(NULL, "no-such-event-xyzzy"), ==, -1);
	CHECK(pmc_pmu_event_get_by_idx(NULL, -1) == NULL);
	CHECK(pmc_pmu_event_get_by_idx(NULL, 1 << 30) == NULL);

	/* pmcstat names a log's events with the cpuid the log carries. */
	init_or_die();
	FILE *log = tmpfile();
	CHECK_INT(pmc_configure_logfile(fileno(log)), ==, 0);
	CHECK_INT(pmc_close_logfile(), ==, 0);
	lseek(fileno(log), 0, SEEK_SET);
	void *parser = pmclog_open(fileno(log));
	struct pmclog_ev ev;
	CHECK_INT(pmclog_read(parser, &ev), ==, 0);
	CHECK_INT(ev.pl_type, ==, PMCLOG_TYPE_INITIALIZE);
	const char *cpuid = ev.pl_u.pl_i.pl_cpuid;
	CHECK(cpuid[0] != '\0');
	CHECK_INT(pmc_pmu_idx_get_by_event(cpuid, "page-faults"), ==, idx);
	CHECK_STR_EQ(pmc_pmu_event_get_by_idx(cpuid, idx), "page-faults");
	/* Another machine's table is not known. */
	const char *other = strncmp(cpuid, "Hygon", 5) ? "HygonGenuine,24,0,1" : "GenuineIntel,6,85,4";
	CHECK_INT(pmc_pmu_idx_get_by_event(other, "page-faults"), ==, -1);
	CHECK(pmc_pmu_event_get_by_idx(other, idx) == NULL);
	pmclog_close(parser);
	fclose(log);
}

static void test_pmcallocate(void)
{
	struct pmc_op_pmcallocate pm;
	memset(&pm, 0, sizeof(pm));
	pm.pm_caps = PMC_CAP_USER;
	CHECK_INT(pmc_pmu_pmcallocate("page-faults", &pm), ==, 0);
	CHECK_INT(pm.pm_ev, ==, pmc_pmu_idx_get_by_event(NULL, "page-faults"));
	CHECK_INT(pm.pm_class, ==, PMC_CLASS_SOFT);
	CHECK(pm.pm_caps & PMC_CAP_READ);
	CHECK(pm.pm_caps & PMC_CAP_WRITE);
	CHECK(pm.pm_caps & PMC_CAP_USER); /* the caller's caps are kept */
	CHECK_INT(pm.pm_md.pm_linux.pm_type, ==, PERF_TYPE_SOFTWARE);
	CHECK_U64(pm.pm_md.pm_linux.pm_config, ==, PERF_COUNT_SW_PAGE_FAULTS);
	CHECK_INT(pmc_pmu_pmcallocate("no-such-event-xyzzy", &pm), ==, ENOENT);
}

static void test_sample_rate(void)
{
	/* The tables carry no period: FreeBSD's default, 65536. */
	CHECK_U64(pmc_pmu_sample_rate_get("page-faults"), ==, 65536);
	CHECK_U64(pmc_pmu_sample_rate_get("no-such-event-xyzzy"), ==, 65536);
}

/* Can this machine count the generic hardware event CONFIG (user space,
 * this thread)?  perf_event_open itself: the oracle for pmc_pmu_stat_mode. */
static bool counts(uint64_t config)
{
	struct perf_event_attr a = {.type = PERF_TYPE_HARDWARE, .size = sizeof(a), .config = config,
				    .disabled = 1, .exclude_kernel = 1, .exclude_hv = 1};
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static void test_stat_mode(void)
{
	/* FreeBSD's six; without all of them (no PMU, or a PMU without branch
	 * or cache events, as QEMU's ARMv8 one) there is no stat mode. */
	static const uint64_t six[] = {
		PERF_COUNT_HW_CPU_CYCLES,	   PERF_COUNT_HW_INSTRUCTIONS,
		PERF_COUNT_HW_BRANCH_INSTRUCTIONS, PERF_COUNT_HW_BRANCH_MISSES,
		PERF_COUNT_HW_CACHE_REFERENCES,	   PERF_COUNT_HW_CACHE_MISSES,
	};
	bool all = true;
	for (int i = 0; i < 6; i++)
		all = all && counts(six[i]);
	const char **cntrs = NULL;
	int rc = pmc_pmu_stat_mode(&cntrs);
	if (!all) {
		fprintf(stderr, "measured: not all six counted here; pmc_pmu_stat_mode: %d (%s)\n", rc,
			rc ? pmc_errdetail() : "");
		CHECK_INT(rc, ==, EOPNOTSUPP);
		CHECK(cntrs == NULL);
		return;
	}
	CHECK_INT(rc, ==, 0);
	init_or_die();
	for (int i = 0; rc == 0 && i < 6; i++) {
		pmc_id_t id;
		int a = pmc_allocate(cntrs[i], PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0);
		if (a != 0)
			fprintf(stderr, "%s: %s\n", cntrs[i], pmc_errdetail());
		CHECK_INT(a, ==, 0);
		if (a == 0)
			pmc_release(id);
	}
}

int main(void)
{
	RUN(test_listing);
	RUN(test_descriptions);
	RUN(test_indices);
	RUN(test_pmcallocate);
	RUN(test_sample_rate);
	RUN(test_stat_mode);
	return check_exit();
}
