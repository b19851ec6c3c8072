/* The log (pmc_configure_logfile(3), pmclog(3)): process-scope sampling
 * with and without call chains, a counting PMC that logs context switches
 * and exits of a process and its descendants, a user record, all read back
 * with pmclog_read() from a file and from memory (pmclog_feed()); system
 * sampling per CPU; a write error kept for pmc_flush_logfile(); the
 * driver statistics; and what pmclog makes of files that are no logs. */
#include "pmc_test.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>

static char dir[] = "/tmp/hwc-pmclog-XXXXXX";

struct seen {
	int n[32];
	int first_type, last_type;
	size_t records;
	enum pmclog_state end;
};

static int open_log(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	return fd;
}

/* The four PMCs of test_records and what their log must show. */
static pmc_id_t cc_id, pc_id, tc_id, det_id;
static pid_t child;

static void check_record(const struct pmclog_ev *ev, uint64_t *exit_sum,
			 uint64_t *csw_sum, int *forks)
{
	switch (ev->pl_type) {
	case PMCLOG_TYPE_INITIALIZE: {
		const struct pmc_cpuinfo *ci;
		pmc_cpuinfo(&ci);
		CHECK_INT(ev->pl_u.pl_i.pl_version, ==, PMC_VERSION);
		CHECK_INT(ev->pl_u.pl_i.pl_arch, ==, ci->pm_cputype);
		CHECK(ev->pl_u.pl_i.pl_cpuid[0] != '\0');
		CHECK(ev->pl_u.pl_i.pl_ts.tv_sec > 1600000000); /* the wall clock */
		break;
	}
	case PMCLOG_TYPE_PMCALLOCATE: {
		const struct pmclog_ev_pmcallocate *a = &ev->pl_u.pl_a;
		if (a->pl_pmcid == cc_id) {
			CHECK_STR_EQ(a->pl_evname, "cpu-clock");
			CHECK(a->pl_flags & PMC_F_CALLCHAIN);
			CHECK_U64(a->pl_rate, ==, 200000);
		} else if (a->pl_pmcid == pc_id) {
			CHECK_STR_EQ(a->pl_evname, "task-clock");
			CHECK(!(a->pl_flags & PMC_F_CALLCHAIN));
		} else if (a->pl_pmcid == tc_id) {
			CHECK(a->pl_flags & PMC_F_LOG_PROCEXIT);
			CHECK_U64(a->pl_rate, ==, 0);
		} else if (a->pl_pmcid == det_id) {
			CHECK_STR_EQ(a->pl_evname, "PAGE_FAULT.ALL");
		} else {
			CHECK(!"an allocation of an unknown PMC");
		}
		CHECK_STR_EQ(pmc_name_of_event((enum pmc_event)a->pl_event), a->pl_evname);
		break;
	}
	case PMCLOG_TYPE_PMCATTACH:
		CHECK_INT(ev->pl_u.pl_t.pl_pid, ==, ev->pl_u.pl_t.pl_pmcid == det_id ? getpid() : child);
		CHECK(ev->pl_u.pl_t.pl_pathname[0] == '/');
		break;
	case PMCLOG_TYPE_PMCDETACH:
		CHECK_U64(ev->pl_u.pl_d.pl_pmcid, ==, det_id);
		CHECK_INT(ev->pl_u.pl_d.pl_pid, ==, getpid());
		break;
	case PMCLOG_TYPE_CALLCHAIN: {
		const struct pmclog_ev_callchain *cc = &ev->pl_u.pl_cc;
		CHECK_U64(cc->pl_pmcid, ==, cc_id);
		CHECK(cc->pl_npc >= 1 && cc->pl_npc <= 8); /* kern.hwpmc.callchaindepth */
		CHECK_INT(PMC_CALLCHAIN_CPUFLAGS_TO_CPU(cc->pl_cpuflags), <, pmc_ncpu());
		CHECK(cc->pl_pc[0] != 0);
		break;
	}
	case PMCLOG_TYPE_PCSAMPLE:
		CHECK_U64(ev->pl_u.pl_s.pl_pmcid, ==, pc_id);
		CHECK(ev->pl_u.pl_s.pl_pc != 0);
		break;
	case PMCLOG_TYPE_PROCEXIT:
		CHECK_U64(ev->pl_u.pl_e.pl_pmcid, ==, tc_id);
		CHECK_U64(ev->pl_u.pl_e.pl_value, >, 0);
		*exit_sum += ev->pl_u.pl_e.pl_value;
		break;
	case PMCLOG_TYPE_PROCCSW:
		CHECK_U64(ev->pl_u.pl_c.pl_pmcid, ==, tc_id);
		*csw_sum += ev->pl_u.pl_c.pl_value;
		break;
	case PMCLOG_TYPE_USERDATA:
		CHECK_U64(ev->pl_u.pl_u.pl_userdata, ==, 0xdeadbeef);
		break;
	case PMCLOG_TYPE_PROCEXEC:
		if (ev->pl_u.pl_x.pl_pid == child) {
			const char *p = ev->pl_u.pl_x.pl_pathname;
			CHECK(strlen(p) > 9 && strcmp(p + strlen(p) - 9, "/hotspots") == 0);
		}
		break;
	case PMCLOG_TYPE_PROCFORK:
		*forks += ev->pl_u.pl_f.pl_oldpid == child;
		break;
	default:
		break;
	}
}

static struct seen read_all(void *parser, uint64_t *exit_sum, uint64_t *csw_sum, int *forks)
{
	struct seen s = {.first_type = -1};
	struct pmclog_ev ev;
	*exit_sum = *csw_sum = 0;
	*forks = 0;
	while (pmclog_read(parser, &ev) == 0) {
		CHECK_INT(ev.pl_state, ==, PMCLOG_OK);
		CHECK_U64(ev.pl_count, ==, s.records + 1);
		s.records++;
		if (s.first_type < 0)
			s.first_type = ev.pl_type;
		s.last_type = ev.pl_type;
		if ((unsigned)ev.pl_type < 32)
			s.n[ev.pl_type]++;
		check_record(&ev, exit_sum, csw_sum, forks);
	}
	s.end = ev.pl_state;
	return s;
}

static void test_records(void)
{
	int fd = open_log("records.log");
	CHECK_INT(pmc_configure_logfile(fd), ==, 0);
	cc_id = alloc_or_die("cpu-clock", PMC_MODE_TS, PMC_F_CALLCHAIN | PMC_F_DESCENDANTS,
			     PMC_CPU_ANY, 200000);
	pc_id = alloc_or_die("task-clock", PMC_MODE_TS, 0, PMC_CPU_ANY, 200000);
	tc_id = alloc_or_die("task-clock", PMC_MODE_TC,
			     PMC_F_LOG_PROCEXIT | PMC_F_LOG_PROCCSW | PMC_F_DESCENDANTS, PMC_CPU_ANY,
			     0);
	char *argv[] = {workload("hotspots"), "4", NULL};
	struct waiting w = spawn(exec_argv, argv);
	child = w.pid;
	CHECK_INT(pmc_attach(cc_id, child), ==, 0);
	CHECK_INT(pmc_attach(pc_id, child), ==, 0);
	CHECK_INT(pmc_attach(tc_id, child), ==, 0);
	CHECK_INT(pmc_start(cc_id), ==, 0);
	CHECK_INT(pmc_start(pc_id), ==, 0);
	int started = pmc_start(tc_id);
	if (started)
		fprintf(stderr, "pmc_start(task-clock with PMC_F_LOG_PROCCSW): %s\n", pmc_errdetail());
	CHECK_INT(started, ==, 0);
	CHECK_INT(pmc_writelog(0xdeadbeef), ==, 0);
	det_id = alloc_or_die("PAGE_FAULT.ALL", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	CHECK_INT(pmc_attach(det_id, 0), ==, 0);
	CHECK_INT(pmc_detach(det_id, 0), ==, 0);
	pmc_release(det_id);
	release(w);
	int status = reap(child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pmc_value_t counted = read_pmc(tc_id);
	struct pmc_driverstats ds;
	CHECK_INT(pmc_get_driver_stats(&ds), ==, 0);
	CHECK_U64(ds.pm_intr_processed, >, 0);
	CHECK_U64(ds.pm_syscalls, >, 10);
	CHECK_INT(pmc_flush_logfile(), ==, 0);
	CHECK_INT(pmc_close_logfile(), ==, 0);
	CHECK_INT(pmc_get_driver_stats(&ds), ==, 0);
	CHECK_U64(ds.pm_log_sweeps, >, 0);
	CHECK_U64(ds.pm_buffer_requests, >, 0);
	CHECK_U64(ds.pm_buffer_requests_failed, ==, 0);
	pmc_release(cc_id);
	pmc_release(pc_id);
	pmc_release(tc_id);

	lseek(fd, 0, SEEK_SET);
	void *parser = pmclog_open(fd);
	CHECK(parser != NULL);
	uint64_t exit_sum, csw_sum;
	int forks;
	struct seen s = read_all(parser, &exit_sum, &csw_sum, &forks);
	pmclog_close(parser);
	CHECK_INT(s.end, ==, PMCLOG_EOF);
	CHECK_INT(s.first_type, ==, PMCLOG_TYPE_INITIALIZE);
	CHECK_INT(s.last_type, ==, PMCLOG_TYPE_CLOSELOG);
	CHECK_INT(s.n[PMCLOG_TYPE_INITIALIZE], ==, 1);
	CHECK_INT(s.n[PMCLOG_TYPE_CLOSELOG], ==, 1);
	CHECK_INT(s.n[PMCLOG_TYPE_PMCALLOCATE], ==, 4);
	CHECK_INT(s.n[PMCLOG_TYPE_PMCATTACH], ==, 4);
	CHECK_INT(s.n[PMCLOG_TYPE_PMCDETACH], ==, 1);
	CHECK_INT(s.n[PMCLOG_TYPE_USERDATA], ==, 1);
	CHECK_INT(s.n[PMCLOG_TYPE_CALLCHAIN], >, 100);
	CHECK_INT(s.n[PMCLOG_TYPE_PCSAMPLE], >, 100);
	/* hotspots forks a child per round: the process and 4 children exit. */
	CHECK_INT(forks, ==, 4);
	CHECK_INT(s.n[PMCLOG_TYPE_PROCFORK], >=, 4);
	CHECK_INT(s.n[PMCLOG_TYPE_PROCEXIT], ==, 5);
	CHECK_INT(s.n[PMCLOG_TYPE_SYSEXIT], >=, 1);
	CHECK_INT(s.n[PMCLOG_TYPE_PROCCSW], >, 4);
	CHECK_INT(s.n[PMCLOG_TYPE_PROCEXEC], >=, 1);
	CHECK_INT(s.n[PMCLOG_TYPE_MAP_IN], >=, 3);
	CHECK_INT(s.n[PMCLOG_TYPE_DROPNOTIFY], ==, 0);
	/* The exit counts add up to what the PMC counted, the switches' to
	 * no more (the last slice of each process ends with its exit). */
	CHECK_U64(exit_sum, >=, counted * 9 / 10);
	CHECK_U64(exit_sum, <=, counted * 11 / 10);
	CHECK_U64(csw_sum, >, 0);
	CHECK_U64(csw_sum, <=, exit_sum);

	/* The same records from memory, fed in two halves. */
	struct stat st;
	CHECK_INT(fstat(fd, &st), ==, 0);
	char *data = malloc((size_t)st.st_size);
	CHECK_INT(pread(fd, data, (size_t)st.st_size, 0), ==, st.st_size);
	parser = pmclog_open(PMCLOG_FD_NONE);
	struct pmclog_ev ev;
	CHECK_INT(pmclog_read(parser, &ev), ==, -1);
	CHECK_INT(ev.pl_state, ==, PMCLOG_REQUIRE_DATA);
	CHECK_INT(pmclog_feed(parser, data, (int)(st.st_size / 2)), ==, 0);
	CHECK_INT(pmclog_read(parser, &ev), ==, -1);
	CHECK_INT(ev.pl_state, ==, PMCLOG_REQUIRE_DATA);
	CHECK_INT(pmclog_feed(parser, data + st.st_size / 2, (int)(st.st_size - st.st_size / 2)),
		  ==, 0);
	uint64_t e2, c2;
	int f2;
	struct seen m = read_all(parser, &e2, &c2, &f2);
	pmclog_close(parser);
	CHECK_INT(m.end, ==, PMCLOG_REQUIRE_DATA); /* memory parsers wait for more */
	CHECK_U64(m.records, ==, s.records);
	CHECK_U64(e2, ==, exit_sum);
	free(data);
	/* A file parser refuses to be fed. */
	parser = pmclog_open(fd);
	CHECK_INT(pmclog_feed(parser, "x", 1), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	pmclog_close(parser);
	close(fd);
}

/* System-scope sampling: each PMC samples its CPU. */
static void test_system(void)
{
	int n = pmc_ncpu() < 8 ? pmc_ncpu() : 8;
	pmc_id_t ids[8];
	for (int c = 0; c < n; c++)
		if (pmc_allocate("cpu-clock", PMC_MODE_SS, PMC_F_CALLCHAIN, c, &ids[c], 100000) < 0) {
			CHECK_INT(errno, ==, EPERM);
			SKIP_SUB("%s", pmc_errdetail());
			return;
		}
	int fd = open_log("system.log");
	CHECK_INT(pmc_configure_logfile(fd), ==, 0);
	for (int c = 0; c < n; c++)
		CHECK_INT(pmc_start(ids[c]), ==, 0);
	cpu_set_t saved;
	sched_getaffinity(0, sizeof(saved), &saved);
	for (int c = 0; c < n; c++)
		if (pin(c))
			spin_ms(100);
	sched_setaffinity(0, sizeof(saved), &saved);
	CHECK_INT(pmc_close_logfile(), ==, 0);
	lseek(fd, 0, SEEK_SET);
	void *parser = pmclog_open(fd);
	struct pmclog_ev ev;
	int mine[8] = {0}, allocs = 0;
	while (pmclog_read(parser, &ev) == 0) {
		if (ev.pl_type == PMCLOG_TYPE_PMCALLOCATE)
			allocs++;
		if (ev.pl_type != PMCLOG_TYPE_CALLCHAIN)
			continue;
		int cpu = PMC_CALLCHAIN_CPUFLAGS_TO_CPU(ev.pl_u.pl_cc.pl_cpuflags);
		CHECK_INT(cpu, ==, PMC_ID_TO_CPU(ev.pl_u.pl_cc.pl_pmcid));
		if (cpu < n && ev.pl_u.pl_cc.pl_pid == (uint32_t)getpid())
			mine[cpu]++;
	}
	CHECK_INT(ev.pl_state, ==, PMCLOG_EOF);
	CHECK_INT(allocs, ==, n);
	for (int c = 0; c < n; c++)
		CHECK_INT(mine[c], >, 50); /* of 100 ms at 10 kHz */
	pmclog_close(parser);
	close(fd);
	for (int c = 0; c < n; c++)
		pmc_release(ids[c]);
}

/* A write error stops the log and is kept for pmc_flush_logfile(). */
static void full_disk(void)
{
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {64 * 1024, 64 * 1024};
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &rl), ==, 0);
	int fd = open_log("full.log");
	CHECK_INT(pmc_configure_logfile(fd), ==, 0);
	pmc_id_t id = alloc_or_die("cpu-clock", PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY, 20000);
	CHECK_INT(pmc_start(id), ==, 0);
	spin_ms(300);
	CHECK_INT(pmc_flush_logfile(), ==, -1);
	CHECK_INT(errno, ==, EFBIG);
	struct pmc_driverstats ds;
	CHECK_INT(pmc_get_driver_stats(&ds), ==, 0);
	CHECK_U64(ds.pm_buffer_requests_failed, >, 0);
	CHECK_INT(pmc_close_logfile(), ==, -1);
	CHECK_INT(errno, ==, EFBIG);
	/* What fit is still a log. */
	lseek(fd, 0, SEEK_SET);
	void *parser = pmclog_open(fd);
	struct pmclog_ev ev;
	int n = 0;
	while (pmclog_read(parser, &ev) == 0)
		n++;
	CHECK_INT(ev.pl_state, ==, PMCLOG_EOF);
	CHECK_INT(n, >, 10);
	pmclog_close(parser);
	close(fd);
	pmc_release(id);
}

static void test_write_error(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		check_failures = 0;
		full_disk();
		_exit(check_failures ? 1 : 0);
	}
	int status = reap(pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* pmclog on what is not a log. */
static void test_not_a_log(void)
{
	struct pmclog_ev ev;
	int fd = open_log("empty");
	void *parser = pmclog_open(fd);
	CHECK_INT(pmclog_read(parser, &ev), ==, -1);
	CHECK_INT(ev.pl_state, ==, PMCLOG_EOF);
	pmclog_close(parser);
	CHECK_INT(write(fd, "this is not a perf.data file, not at all\n", 41), ==, 41);
	parser = pmclog_open(fd);
	memset(&ev, 0xaa, sizeof(ev)); /* a caller's stack: the failure sets what it tells */
	CHECK_INT(pmclog_read(parser, &ev), ==, -1);
	CHECK_INT(ev.pl_state, ==, PMCLOG_ERROR);
	CHECK_U64(ev.pl_count, ==, 0);
	CHECK_U64(ev.pl_offset, ==, 0);
	pmclog_close(parser);
	close(fd);
	/* A device is no log: refused from its first bytes, not read to its end. */
	fd = open("/dev/zero", O_RDONLY);
	parser = pmclog_open(fd);
	CHECK_INT(pmclog_read(parser, &ev), ==, -1);
	CHECK_INT(ev.pl_state, ==, PMCLOG_ERROR);
	CHECK_INT(errno, ==, EINVAL);
	pmclog_close(parser);
	close(fd);
	CHECK_INT(pmclog_read(NULL, &ev), ==, -1);
	pmclog_close(NULL);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	init_or_die();
	RUN(test_records);
	RUN(test_system);
	RUN(test_write_error);
	RUN(test_not_a_log);
	remove_tree(dir);
	return check_exit();
}
