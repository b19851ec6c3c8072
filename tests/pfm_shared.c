/* libpfm4's tables are one per process.  libhwc starts libpfm4 without its
 * copy of perf's generic events (the "perf" table, whose setup reads every
 * tracepoint), but not where libpfm4 was loaded before it: a program that
 * also uses PAPI, or libpfm4 itself, needs that table.  This program links
 * libpfm4 ahead of libhwc, as a PAPI program does through libpapi. */
#include <hwc/hwc.h>

#include "check.h"

#include <perfmon/pfmlib_perf_event.h>

static void test_perf_table_kept(void)
{
	/* perf::TASK-CLOCK reaches libpfm4 through hwc, which starts it. */
	hwc_evlist *l = check_evlist("perf::TASK-CLOCK");
	hwc_evlist_free(l);
	pfm_pmu_info_t info = {.size = sizeof(info)};
	CHECK_INT(pfm_get_pmu_info(PFM_PMU_PERF_EVENT, &info), ==, PFM_SUCCESS);
	if (!info.is_present)
		fprintf(stderr, "  libpfm4's perf table was left out, though libpfm4 was ours first\n");
	CHECK(info.is_present);
	/* What a PAPI program asks of libpfm4 itself. */
	pfm_perf_encode_arg_t arg = {.size = sizeof(arg)};
	struct perf_event_attr attr = {0};
	arg.attr = &attr;
	CHECK_INT(pfm_get_os_event_encoding("perf::PERF_COUNT_SW_TASK_CLOCK", PFM_PLM3, PFM_OS_PERF_EVENT,
					    &arg),
		  ==, PFM_SUCCESS);
}

int main(void)
{
	RUN(test_perf_table_kept);
	return check_exit();
}
