/* A libpmc client on a real PMU (only <pmc.h> and <pmclog.h>): a counting
 * PMC on the calling process counts the loop exactly, and a sampling PMC
 * with reload count P logs one sample per P events. */
#include "pmu.h"

#include <fcntl.h>
#include <pmc.h>
#include <pmclog.h>

#define N 1000000ull

static pmc_id_t alloc_or_die(const char *spec, enum pmc_mode mode, uint64_t count)
{
	pmc_id_t id;
	if (pmc_allocate(spec, mode, 0, PMC_CPU_ANY, &id, count) < 0) {
		fprintf(stderr, "pmc_allocate(%s): %s: %s\n", spec, strerror(errno), pmc_errdetail());
		exit(1);
	}
	return id;
}

static uint64_t count(uint64_t n)
{
	pmc_id_t id = alloc_or_die("instructions,usr", PMC_MODE_TC, 0);
	pmc_value_t a = 0, b = 0;
	CHECK_INT(pmc_attach(id, 0), ==, 0);
	CHECK_INT(pmc_start(id), ==, 0);
	CHECK_INT(pmc_read(id, &a), ==, 0);
	pmu_loop(n);
	CHECK_INT(pmc_read(id, &b), ==, 0);
	CHECK_INT(pmc_stop(id), ==, 0);
	pmc_release(id);
	return b - a;
}

static void test_count(void)
{
	check_doubling("libpmc instructions,usr", count, N);
}

/* cpu-cycles: QEMU raises no overflow interrupt for its instruction
 * counter, and with -icount shift=0 a cycle is one instruction. */
static void test_sampling(void)
{
	const uint64_t period = 100000, n = 10 * N;
	char path[] = "/tmp/pmc-client-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(path);
	CHECK_INT(pmc_configure_logfile(fd), ==, 0);
	pmc_id_t id = alloc_or_die("cpu-cycles,usr", PMC_MODE_TS, period);
	CHECK_INT(pmc_attach(id, 0), ==, 0);
	CHECK_INT(pmc_start(id), ==, 0);
	pmu_loop(n);
	CHECK_INT(pmc_stop(id), ==, 0);
	CHECK_INT(pmc_flush_logfile(), ==, 0);
	CHECK_INT(pmc_close_logfile(), ==, 0);
	pmc_release(id);
	lseek(fd, 0, SEEK_SET);
	void *parser = pmclog_open(fd);
	CHECK(parser != NULL);
	uint64_t samples = 0;
	struct pmclog_ev ev;
	while (parser && pmclog_read(parser, &ev) == 0)
		samples += ev.pl_type == PMCLOG_TYPE_PCSAMPLE || ev.pl_type == PMCLOG_TYPE_CALLCHAIN;
	if (parser)
		pmclog_close(parser);
	close(fd);
	fprintf(stderr, "measured: libpmc sampling PMC cpu-cycles,usr reload %" PRIu64 ": %" PRIu64
		" samples over a %" PRIu64 "-instruction loop (expected %" PRIu64 " +- 2%%)\n", period,
		samples, 2 * n, 2 * n / period);
	CHECK_NEAR(samples, 2 * n / period, 20000);
}

int main(void)
{
	require_pmu();
	run_on_cpu0();
	if (pmc_init() < 0) {
		fprintf(stderr, "pmc_init: %s: %s\n", strerror(errno), pmc_errdetail());
		return 1;
	}
	RUN(test_count);
	RUN(test_sampling);
	return check_failures ? 1 : 0;
}
