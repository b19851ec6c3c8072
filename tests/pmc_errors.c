/* Every error of hwpmc(4) and the pmc_*(3) pages that can be provoked on
 * this machine, each as -1 with its errno: EBADF, EBUSY, EDOOFUS, EEXIST, EFAULT,
 * EINVAL, ENOSYS, ENXIO, EOPNOTSUPP, EPERM (as nobody) and ESRCH. */
#include "pmc_test.h"

#include <stdarg.h>

static char admin_file[] = "/tmp/hwc-pmc-admin-XXXXXX";

#define FAILS(call, err)                                                                 \
	do {                                                                             \
		errno = 0;                                                               \
		int rc_ = (call);                                                        \
		int e_ = errno;                                                          \
		if (rc_ != -1 || e_ != (err)) {                                          \
			fprintf(stderr, "%s:%d: %s: got %d (%s), wanted -1 (%s)\n", __FILE__,  \
				__LINE__, #call, rc_, strerror(e_), strerror(err));      \
			check_failures++;                                                \
		}                                                                        \
	} while (0)

static pid_t dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	reap(pid);
	return pid;
}

/* Before pmc_init(): ENXIO, as after a failed pmc_init(). */
static void test_before_init(void)
{
	pmc_id_t id;
	const struct pmc_cpuinfo *ci;
	FAILS(pmc_allocate("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), ENXIO);
	FAILS(pmc_cpuinfo(&ci), ENXIO);
	FAILS(pmc_ncpu(), ENXIO);
	FAILS(pmc_npmc(0), ENXIO);
	CHECK_STR_CONTAINS(pmc_errdetail(), "pmc_init()");
	CHECK_INT(EDOOFUS, ==, EDESTADDRREQ);
}

/* ESRCH: a process that allocated no PMC asks for one. */
static void test_no_pmcs(void)
{
	pmc_value_t v;
	FAILS(pmc_start(0x12345), ESRCH);
	FAILS(pmc_read(0x12345, &v), ESRCH);
	FAILS(pmc_release(0x12345), ESRCH);
	FAILS(pmc_attach(0x12345, getpid()), ESRCH);
}

static void test_allocate(void)
{
	pmc_id_t id;
	FAILS(pmc_allocate("page-faults", (enum pmc_mode)7, 0, PMC_CPU_ANY, &id, 0), EINVAL);
	FAILS(pmc_allocate("page-faults", PMC_MODE_TC, 0x80000000, PMC_CPU_ANY, &id, 0), EINVAL);
	FAILS(pmc_allocate("page-faults", PMC_MODE_TC, PMC_F_KGMON, PMC_CPU_ANY, &id, 0), EINVAL);
	FAILS(pmc_allocate("page-faults", PMC_MODE_SC, PMC_F_DESCENDANTS, 0, &id, 0), EINVAL);
	FAILS(pmc_allocate("page-faults", PMC_MODE_SC, PMC_F_LOG_PROCEXIT, 0, &id, 0), EINVAL);
	FAILS(pmc_allocate("cpu-clock", PMC_MODE_TS, PMC_F_LOG_PROCCSW, PMC_CPU_ANY, &id, 0), EINVAL);
	FAILS(pmc_allocate("cpu-clock", PMC_MODE_TS, PMC_F_USERCALLCHAIN, PMC_CPU_ANY, &id, 0),
	      EINVAL);
	FAILS(pmc_allocate("page-faults", PMC_MODE_TC, 0, 0, &id, 0), EINVAL);
	FAILS(pmc_allocate("page-faults", PMC_MODE_SC, 0, PMC_CPU_ANY, &id, 0), EINVAL);
	FAILS(pmc_allocate("page-faults", PMC_MODE_SC, 0, pmc_ncpu(), &id, 0), EINVAL);
	FAILS(pmc_allocate("page-faults", PMC_MODE_SC, 0, -5, &id, 0), EINVAL);
	FAILS(pmc_allocate("no-such-event", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), EINVAL);
	CHECK_STR_CONTAINS(pmc_errdetail(), "no-such-event");
	FAILS(pmc_allocate("", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), EINVAL);
	FAILS(pmc_allocate(NULL, PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), EINVAL);
	FAILS(pmc_allocate("CLOCK.HARD,edge", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), EINVAL);
	FAILS(pmc_allocate("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, NULL, 0), EFAULT);
	/* The TSC cannot interrupt: no sampling on it. */
	if (pmc_allocate("tsc", PMC_MODE_SC, 0, 0, &id, 0) == 0) {
		pmc_release(id);
		FAILS(pmc_allocate("tsc", PMC_MODE_SS, 0, 0, &id, 0), EOPNOTSUPP);
		FAILS(pmc_allocate("cycles", PMC_MODE_TS, 0, PMC_CPU_ANY, &id, 0), EOPNOTSUPP);
	} else {
		SKIP_SUB("EOPNOTSUPP not provoked: %s", pmc_errdetail());
	}
	/* Hardware the machine lacks: hwpmc(4)'s "a suitable PMC could not be
	 * allocated", EINVAL, with the detail naming the event. */
	const struct pmc_cpuinfo *ci;
	pmc_cpuinfo(&ci);
	if (pmc_allocate("branch-mispredicts", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) == 0) {
		SKIP_SUB("this machine has a PMU: the absent-hardware EINVAL not provoked");
		pmc_release(id);
	} else {
		CHECK_INT(errno, ==, EINVAL);
		CHECK_STR_CONTAINS(pmc_errdetail(), "branch-mispredicts");
	}
}

static void test_handles(void)
{
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	pmc_id_t bad = id ^ 0x80; /* another row index */
	pmc_value_t v;
	uint32_t u;
	FAILS(pmc_start(bad), EINVAL);
	FAILS(pmc_stop(bad), EINVAL);
	FAILS(pmc_read(bad, &v), EINVAL);
	FAILS(pmc_write(bad, 1), EINVAL);
	FAILS(pmc_rw(bad, 1, &v), EINVAL);
	FAILS(pmc_set(bad, 1), EINVAL);
	FAILS(pmc_attach(bad, 0), EINVAL);
	FAILS(pmc_detach(bad, 0), EINVAL);
	FAILS(pmc_capabilities(bad, &u), EINVAL);
	FAILS(pmc_width(bad, &u), EINVAL);
	FAILS(pmc_get_msr(bad, &u), EINVAL);
	FAILS(pmc_release(bad), EINVAL);
	FAILS(pmc_release(PMC_ID_INVALID), EINVAL);
	/* Never started: nothing to stop. */
	FAILS(pmc_stop(id), EINVAL);
	FAILS(pmc_read(id, NULL), EFAULT);
	FAILS(pmc_capabilities(id, NULL), EFAULT);
	CHECK_INT(pmc_release(id), ==, 0);
	FAILS(pmc_release(id), ESRCH); /* none left */
}

static void test_running(void)
{
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	pmc_id_t keep = alloc_or_die("task-clock", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	CHECK_INT(pmc_start(id), ==, 0);
	pmc_value_t v;
	FAILS(pmc_set(id, 10), EBUSY);
	FAILS(pmc_write(id, 10), EBUSY);
	FAILS(pmc_rw(id, 10, &v), EBUSY);
	/* Attached to its owner by pmc_start(): a second attach is EEXIST,
	 * but a running PMC is EBUSY first. */
	FAILS(pmc_attach(id, getpid()), EBUSY);
	CHECK_INT(pmc_stop(id), ==, 0);
	FAILS(pmc_attach(id, 0), EEXIST);
	/* Detached from every target, it has nothing to start on. */
	CHECK_INT(pmc_detach(id, 0), ==, 0);
	FAILS(pmc_start(id), ESRCH);
	FAILS(pmc_detach(id, 0), ESRCH); /* no PMC monitors us now */
	CHECK_INT(pmc_start(keep), ==, 0);
	FAILS(pmc_detach(id, 0), EINVAL); /* monitored, by another PMC */
	CHECK_INT(pmc_release(id), ==, 0);
	CHECK_INT(pmc_release(keep), ==, 0);
}

static void test_attach(void)
{
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	pid_t dead = dead_pid();
	FAILS(pmc_attach(id, dead), ESRCH);
	FAILS(pmc_attach(id, -5), EINVAL);
	FAILS(pmc_detach(id, -5), EINVAL);
	FAILS(pmc_detach(id, dead), ESRCH);
	CHECK_INT(pmc_attach(id, getpid()), ==, 0);
	FAILS(pmc_attach(id, 0), EEXIST);
	FAILS(pmc_detach(id, getppid()), ESRCH);
	CHECK_INT(pmc_release(id), ==, 0);
	if (pmc_allocate("page-faults", PMC_MODE_SC, 0, 0, &id, 0) == 0) {
		FAILS(pmc_attach(id, getpid()), EINVAL);
		FAILS(pmc_detach(id, getpid()), EINVAL);
		FAILS(pmc_get_msr(id, &(uint32_t){0}), EINVAL);
		CHECK_INT(pmc_release(id), ==, 0);
	}
}

/* Sampling PMCs and logging ones need a log: EDOOFUS without. */
static void test_needs_log(void)
{
	pmc_id_t ts = alloc_or_die("cpu-clock", PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY, 0);
	pmc_id_t exit_ = alloc_or_die("task-clock", PMC_MODE_TC, PMC_F_LOG_PROCEXIT, PMC_CPU_ANY, 0);
	pmc_id_t csw = alloc_or_die("task-clock", PMC_MODE_TC, PMC_F_LOG_PROCCSW, PMC_CPU_ANY, 0);
	FAILS(pmc_start(ts), EDOOFUS);
	FAILS(pmc_start(exit_), EDOOFUS);
	FAILS(pmc_start(csw), EDOOFUS);
	CHECK_STR_CONTAINS(pmc_errdetail(), "pmc_configure_logfile");
	pmc_value_t v;
	FAILS(pmc_read(ts, &v), EINVAL); /* sampling PMCs have no value */
	FAILS(pmc_write(ts, 1), EINVAL);
	FAILS(pmc_get_msr(ts, &(uint32_t){0}), EINVAL);
	pmc_id_t ss;
	if (pmc_allocate("cpu-clock", PMC_MODE_SS, 0, 0, &ss, 0) == 0) {
		FAILS(pmc_start(ss), EDOOFUS);
		pmc_release(ss);
	}
	FAILS(pmc_flush_logfile(), EINVAL);
	FAILS(pmc_close_logfile(), EINVAL);
	FAILS(pmc_configure_logfile(-1), EINVAL);
	FAILS(pmc_writelog(1), EINVAL);
	/* A log needs a descriptor open for writing (a file, a pipe, a
	 * socket: hwpmc's fget_write()), a second one is EBUSY. */
	int p[2];
	CHECK_INT(pipe(p), ==, 0);
	FAILS(pmc_configure_logfile(p[0]), EBADF);
	FAILS(pmc_configure_logfile(1 << 20), EBADF);
	FILE *f = tmpfile(), *g = tmpfile();
	CHECK_INT(pmc_configure_logfile(fileno(f)), ==, 0);
	FAILS(pmc_configure_logfile(fileno(g)), EBUSY);
	CHECK_INT(pmc_start(exit_), ==, 0);
	CHECK_INT(pmc_close_logfile(), ==, 0);
	fclose(f);
	fclose(g);
	close(p[0]);
	close(p[1]);
	pmc_release(ts);
	pmc_release(exit_);
	pmc_release(csw);
}

/* RDPMC needs a hardware counter of a process-scope counting PMC that is
 * its owner's alone. */
static void test_get_msr(void)
{
	uint32_t msr;
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	FAILS(pmc_get_msr(id, &msr), ENOSYS);
	CHECK_STR_CONTAINS(pmc_errdetail(), "RDPMC");
	pmc_release(id);
	id = alloc_or_die("page-faults", PMC_MODE_TC, PMC_F_DESCENDANTS, PMC_CPU_ANY, 0);
	FAILS(pmc_get_msr(id, &msr), EINVAL);
	pmc_release(id);
	id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	CHECK_INT(pmc_attach(id, getppid()), ==, 0);
	FAILS(pmc_get_msr(id, &msr), EINVAL);
	pmc_release(id);
}

static void test_queries(void)
{
	struct pmc_pmcinfo *pi;
	FAILS(pmc_pmcinfo(-1, &pi), EINVAL);
	FAILS(pmc_pmcinfo(pmc_ncpu(), &pi), EINVAL);
	FAILS(pmc_npmc(-1), EINVAL);
	const char **names;
	int n;
	FAILS(pmc_event_names_of_class(PMC_CLASS_XSCALE, &names, &n), EINVAL);
	FAILS(pmc_event_names_of_class((enum pmc_class)99, &names, &n), EINVAL);
	errno = 0;
	CHECK(pmc_name_of_class((enum pmc_class)99) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pmc_name_of_mode((enum pmc_mode)4) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pmc_name_of_state(PMC_STATE_MAX) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pmc_name_of_disposition((enum pmc_disp)9) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pmc_name_of_capability((enum pmc_caps)(PMC_CAP_READ | PMC_CAP_WRITE)) == NULL &&
	      errno == EINVAL);
	errno = 0;
	CHECK(pmc_name_of_cputype((enum pmc_cputype)0x7777) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pmc_name_of_event((enum pmc_event)5) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pmc_name_of_event((enum pmc_event)(PMC_EV_SOFT_FIRST + 4000)) == NULL &&
	      errno == EINVAL);
}

/* pmc_disable(), pmc_enable(): privileged; a row in use cannot be disabled;
 * a class with every row disabled is absent. */
static void test_admin(void)
{
	int soft_first = -1;
	const struct pmc_cpuinfo *ci;
	pmc_cpuinfo(&ci);
	int row = 0;
	for (uint32_t i = 0; i < ci->pm_nclass; i++) {
		if (ci->pm_classes[i].pm_class == PMC_CLASS_SOFT)
			soft_first = row;
		row += (int)ci->pm_classes[i].pm_num;
	}
	CHECK(soft_first >= 0);
	FAILS(pmc_disable(-1, 0), EINVAL);
	FAILS(pmc_disable(pmc_ncpu(), 0), EINVAL);
	FAILS(pmc_disable(0, pmc_npmc(0)), EINVAL);
	if (geteuid() != 0) {
		SKIP_SUB("not root: the privileged part is not run");
		return;
	}
	pmc_id_t id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	FAILS(pmc_disable(0, soft_first), EBUSY);
	pmc_release(id);
	for (int r = soft_first; r < soft_first + 16; r++)
		CHECK_INT(pmc_disable(1 % pmc_ncpu(), r), ==, 0);
	struct pmc_pmcinfo *pi;
	CHECK_INT(pmc_pmcinfo(1 % pmc_ncpu(), &pi), ==, 0);
	CHECK_INT(pi->pm_pmcs[soft_first].pm_enabled, ==, 0);
	CHECK_INT(pi->pm_pmcs[soft_first].pm_rowdisp, ==, PMC_DISP_STANDALONE);
	free(pi);
	/* A process-scope PMC needs its class on every CPU. */
	FAILS(pmc_allocate("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), ENXIO);
	CHECK_STR_CONTAINS(pmc_errdetail(), "disabled");
	if (pmc_ncpu() > 1) {
		FAILS(pmc_allocate("page-faults", PMC_MODE_SC, 0, 1, &id, 0), ENXIO);
		CHECK_INT(pmc_allocate("page-faults", PMC_MODE_SC, 0, 0, &id, 0), ==, 0);
		pmc_release(id);
	}
	CHECK_INT(pmc_enable(1 % pmc_ncpu(), soft_first), ==, 0);
	CHECK_INT(pmc_allocate("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0), ==, 0);
	pmc_release(id);
	for (int r = soft_first; r < soft_first + 16; r++)
		CHECK_INT(pmc_enable(1 % pmc_ncpu(), r), ==, 0);
}

/* As nobody (perf_event_paranoid 2): no system-wide PMCs, no attaching to
 * root's processes, no administration. */
static void unprivileged(void)
{
	pmc_id_t id;
	int paranoid = 2;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	if (paranoid >= 1) {
		FAILS(pmc_allocate("page-faults", PMC_MODE_SC, 0, 0, &id, 0), EPERM);
		FAILS(pmc_allocate("cpu-clock", PMC_MODE_SS, 0, 0, &id, 0), EPERM);
	}
	id = alloc_or_die("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, 0);
	FAILS(pmc_attach(id, getppid()), EPERM); /* root's */
	FAILS(pmc_disable(0, 0), EPERM);
	FAILS(pmc_enable(0, 0), EPERM);
	/* Its own process it may count. */
	CHECK_INT(pmc_start(id), ==, 0);
	touch_pages(500);
	CHECK_U64(read_pmc(id), >=, 500);
	pmc_release(id);
}

static void test_unprivileged(void)
{
	run_as_nobody(unprivileged, "test_unprivileged");
}

int main(void)
{
	int fd = mkstemp(admin_file);
	if (fd < 0) {
		perror(admin_file);
		return 1;
	}
	close(fd);
	setenv("HWPMC_ADMIN_FILE", admin_file, 1);
	RUN(test_before_init);
	init_or_die();
	RUN(test_no_pmcs);
	RUN(test_allocate);
	RUN(test_handles);
	RUN(test_running);
	RUN(test_attach);
	RUN(test_needs_log);
	RUN(test_get_msr);
	RUN(test_queries);
	RUN(test_admin);
	RUN(test_unprivileged);
	unlink(admin_file);
	return check_exit();
}
