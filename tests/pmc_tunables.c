/* hwpmc(4)'s tunables, set in the environment before pmc_init() (hashsize,
 * mtxpoolsize and debugflags are checked but change nothing here):
 * callchaindepth bounds the call chains logged, mincount the sampling
 * rate; a value out of range is reported as hwpmc's loader does and the
 * default kept.  Buffers too small for the sampling rate lose samples:
 * DROPNOTIFY records and the statistics say so. */
#include "pmc_test.h"

/* Run again with one-page buffers, sampling 100000 times a second. */
static int drops(void)
{
	init_or_die();
	FILE *log = tmpfile();
	CHECK_INT(pmc_configure_logfile(fileno(log)), ==, 0);
	pmc_id_t id = alloc_or_die("cpu-clock", PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY, 10000);
	CHECK_INT(pmc_start(id), ==, 0);
	spin_ms(300);
	CHECK_INT(pmc_stop(id), ==, 0);
	struct pmc_driverstats ds;
	CHECK_INT(pmc_get_driver_stats(&ds), ==, 0);
	CHECK_U64(ds.pm_intr_bufferfull, >, 0);
	CHECK_INT(pmc_close_logfile(), ==, 0);
	lseek(fileno(log), 0, SEEK_SET);
	void *parser = pmclog_open(fileno(log));
	struct pmclog_ev ev;
	int dropped = 0, samples = 0;
	while (pmclog_read(parser, &ev) == 0) {
		dropped += ev.pl_type == PMCLOG_TYPE_DROPNOTIFY;
		samples += ev.pl_type == PMCLOG_TYPE_CALLCHAIN;
	}
	CHECK_INT(ev.pl_state, ==, PMCLOG_EOF);
	CHECK_INT(dropped, >, 0);
	CHECK_INT(samples, >, 0);
	pmclog_close(parser);
	return check_exit();
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "drops") == 0)
		return drops();
	setenv("HWPMC_CALLCHAINDEPTH", "3", 1);
	setenv("HWPMC_MINCOUNT", "50000", 1);
	setenv("HWPMC_NSAMPLES", "70000", 1);
	setenv("HWPMC_LOGBUFFERSIZE", "-1", 1);
	/* Accepted, checked as hwpmc checks them, with no effect here. */
	setenv("HWPMC_HASHSIZE", "0", 1);
	setenv("HWPMC_MTXPOOLSIZE", "many", 1);
	setenv("HWPMC_DEBUGFLAGS", "CSW=SWI,SWO LOG=ALL", 1);
	stderr_capture();
	int rc = pmc_init();
	const char *msgs = stderr_captured();
	if (rc < 0) {
		fprintf(stderr, "pmc_init: %s: %s\n", strerror(errno), pmc_errdetail());
		return 1;
	}
	CHECK_STR_CONTAINS(msgs, "hwpmc: tunable nsamples=70000 out of range.\n");
	CHECK_STR_CONTAINS(msgs, "hwpmc: tunable logbuffersize=-1 must be greater than zero.\n");
	CHECK_STR_CONTAINS(msgs, "hwpmc: tunable hashsize=0 must be greater than zero.\n");
	CHECK_STR_CONTAINS(msgs, "hwpmc: tunable mtxpoolsize=many must be greater than zero.\n");
	CHECK(strstr(msgs, "debugflags") == NULL);

	char path[] = "/tmp/hwc-pmc-tunables-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	unlink(path);
	CHECK_INT(pmc_configure_logfile(fd), ==, 0);
	/* A rate under mincount is raised to it, at allocation and by pmc_set(). */
	pmc_id_t id = alloc_or_die("cpu-clock", PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY, 10);
	CHECK_INT(pmc_set(id, 20), ==, 0);
	struct pmc_info row = {0};
	CHECK_INT(own_rows(0, &row, 1), ==, 1);
	CHECK_U64(row.pm_reloadcount, ==, 50000);
	char *cmd[] = {workload("hotspots"), "3", NULL};
	run_attached(id, cmd);
	CHECK_INT(pmc_close_logfile(), ==, 0);
	lseek(fd, 0, SEEK_SET);
	void *parser = pmclog_open(fd);
	struct pmclog_ev ev;
	int chains = 0, full = 0;
	while (pmclog_read(parser, &ev) == 0) {
		if (ev.pl_type == PMCLOG_TYPE_PMCALLOCATE)
			CHECK_U64(ev.pl_u.pl_a.pl_rate, ==, 50000);
		if (ev.pl_type != PMCLOG_TYPE_CALLCHAIN)
			continue;
		chains++;
		CHECK_INT(ev.pl_u.pl_cc.pl_npc, <=, 3);
		full += ev.pl_u.pl_cc.pl_npc == 3;
	}
	CHECK_INT(ev.pl_state, ==, PMCLOG_EOF);
	CHECK_INT(chains, >, 10);
	CHECK_INT(full, >, chains / 2); /* f1, f2 under g under main: deeper than 3 */
	pmclog_close(parser);
	close(fd);
	pmc_release(id);

	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("HWPMC_NSAMPLES", "1", 1);
		setenv("HWPMC_LOGBUFFERSIZE", "1", 1);
		setenv("HWPMC_NBUFFERS", "1", 1);
		setenv("HWPMC_MINCOUNT", "1000", 1);
		execl("/proc/self/exe", argv[0], "drops", (char *)NULL);
		_exit(127);
	}
	int status = reap(pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return check_exit();
}
