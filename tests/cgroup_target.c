/* The cgroup target of libhwc (HWC_TARGET_CGROUP) and per-event cgroups
 * (hwc_evlist_set_cgroup), on real cgroup v2 groups made here under the
 * hierarchy hwc_cgroup_path() finds: a workload with a known number of
 * page faults moved into one cgroup is counted there within 2%, an idle
 * cgroup counts zero, and the errors say what is wrong.  Needs root and a
 * writable cgroup2 hierarchy that perf_event uses (exit 77 otherwise). */
#include <hwc/hwc.h>

#include "check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#define PAGES 20000

static char root[4096];
static char busy[4200], idle[4200]; /* the cgroups, relative to the root */

/* Remove the test's cgroups (their tasks have been reaped). */
static void cleanup(void)
{
	char path[8400];
	const char *names[] = {busy, idle};
	for (size_t i = 0; i < 2; i++) {
		if (!names[i][0])
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, names[i]);
		for (int k = 0; k < 100 && rmdir(path) < 0 && errno == EBUSY; k++)
			usleep(50000);
	}
}

static void make_cgroups(void)
{
	if (geteuid() != 0)
		SKIP("needs root to make cgroups and count whole CPUs");
	int err = hwc_cgroup_path("", root, sizeof(root));
	if (err)
		SKIP("%s", hwc_errdetail());
	struct statfs fs;
	if (statfs(root, &fs) < 0 || fs.f_type != 0x63677270)
		SKIP("perf_event uses a cgroup v1 hierarchy here (%s)", root);
	if (access(root, W_OK) < 0)
		SKIP("the cgroup hierarchy at %s is not writable", root);
	snprintf(busy, sizeof(busy), "hwc-target-%d-busy", (int)getpid());
	snprintf(idle, sizeof(idle), "hwc-target-%d-idle", (int)getpid());
	char path[8400];
	const char *names[] = {busy, idle};
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, names[i]);
		if (mkdir(path, 0755) < 0) {
			fprintf(stderr, "mkdir %s: %s\n", path, strerror(errno));
			cleanup();
			exit(1);
		}
	}
	atexit(cleanup);
}

/* The command: a shell that moves itself into CGROUP, then runs pagetouch. */
static char script[9000];
static void command(const char *cgroup, char **argv)
{
	snprintf(script, sizeof(script), "echo $$ > '%s/%s/cgroup.procs' && exec '%s' %d", root,
		 cgroup, workload("pagetouch"), PAGES);
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = NULL;
}

static hwc_evlist *page_faults(void)
{
	hwc_evlist *l = NULL;
	CHECK_OK(hwc_evlist_new(&l));
	CHECK_OK(hwc_evlist_add(l, "page-faults"));
	return l;
}

/* Run T (with the pagetouch command), return the count of event EV. */
static uint64_t count_run(const hwc_evlist *l, struct hwc_target *t, size_t ev, uint64_t *other)
{
	char *argv[4];
	command(busy, argv);
	t->argv = argv;
	hwc_counters *c;
	int err = hwc_counters_open(&c, l, t);
	CHECK_OK(err);
	if (err)
		return 0;
	CHECK_INT(hwc_counters_ninstances(c), ==, hwc_online_cpus(NULL, 0));
	CHECK_OK(hwc_counters_start(c));
	int st = 0;
	CHECK_INT(waitpid(hwc_counters_pid(c), &st, 0), ==, hwc_counters_pid(c));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_OK(hwc_counters_stop(c));
	CHECK_OK(hwc_counters_read(c));
	struct hwc_value v = {0}, o = {0};
	CHECK_OK(hwc_counters_value(c, HWC_ALL, ev, &v));
	if (other) {
		CHECK_OK(hwc_counters_value(c, HWC_ALL, 1 - ev, &o));
		*other = o.raw;
	}
	hwc_counters_close(c);
	return v.raw;
}

static void within_2_percent(uint64_t n)
{
	CHECK_INT(n, >=, PAGES);
	CHECK_INT(n, <, PAGES + PAGES / 50);
}

/* HWC_TARGET_CGROUP: the busy cgroup counts the workload, the idle one nothing. */
static void test_target(void)
{
	hwc_evlist *l = page_faults();
	struct hwc_target t = {.kind = HWC_TARGET_CGROUP, .cgroup = busy};
	uint64_t n = count_run(l, &t, 0, NULL);
	within_2_percent(n);
	t.cgroup = idle;
	CHECK_U64(count_run(l, &t, 0, NULL), ==, 0);
	hwc_evlist_free(l);
}

/* Per-event cgroups on a CPUS target, the event's own winning over the target's. */
static void test_per_event(void)
{
	hwc_evlist *l = page_faults();
	CHECK_OK(hwc_evlist_add(l, "page-faults"));
	CHECK_OK(hwc_evlist_set_cgroup(l, 0, busy));
	CHECK_OK(hwc_evlist_set_cgroup(l, 1, idle));
	CHECK_STR_EQ(hwc_evlist_event(l, 0)->cgroup, busy);
	struct hwc_target t = {.kind = HWC_TARGET_CPUS};
	uint64_t in_idle = 1;
	within_2_percent(count_run(l, &t, 0, &in_idle));
	CHECK_U64(in_idle, ==, 0);
	/* The target's cgroup goes to events without their own. */
	CHECK_OK(hwc_evlist_set_cgroup(l, 0, NULL));
	CHECK_STR_EQ(hwc_evlist_event(l, 0)->cgroup, "");
	t = (struct hwc_target){.kind = HWC_TARGET_CGROUP, .cgroup = busy};
	within_2_percent(count_run(l, &t, 0, &in_idle));
	CHECK_U64(in_idle, ==, 0);
	hwc_evlist_free(l);
}

static void expect_open_error(const struct hwc_target *t, const hwc_evlist *l, int want,
			      const char *text)
{
	hwc_counters *c = NULL;
	CHECK_INT(hwc_counters_open(&c, l, t), ==, want);
	CHECK(c == NULL);
	CHECK_STR_CONTAINS(hwc_errdetail(), text);
}

static void test_errors(void)
{
	hwc_evlist *l = page_faults();
	struct hwc_target t = {.kind = HWC_TARGET_CGROUP, .cgroup = "hwc-no-such-cgroup"};
	expect_open_error(&t, l, -ENOENT, "no cgroup 'hwc-no-such-cgroup'");
	t.cgroup = "../../etc";
	expect_open_error(&t, l, -EINVAL, "cannot contain '..'");
	t.cgroup = NULL;
	expect_open_error(&t, l, -EINVAL, "needs a cgroup");
	char file[8400];
	snprintf(file, sizeof(file), "%s/%s/cgroup.procs", root, busy);
	t.cgroup = file;
	expect_open_error(&t, l, -ENOTDIR, "is not a cgroup");
	/* A cgroup counts per CPU: not on a thread. */
	CHECK_OK(hwc_evlist_set_cgroup(l, 0, busy));
	t = (struct hwc_target){.kind = HWC_TARGET_SELF};
	expect_open_error(&t, l, -EINVAL, "needs a system-wide target");
	hwc_evlist_free(l);

	char path[64];
	CHECK_INT(hwc_cgroup_path("hwc-no-such-cgroup", path, sizeof(path)), ==, -ENOENT);
	CHECK_INT(hwc_cgroup_path(busy, path, 8), ==, -ENAMETOOLONG);
	char full[8400];
	CHECK_OK(hwc_cgroup_path(busy, full, sizeof(full)));
	char abs[8400];
	CHECK_OK(hwc_cgroup_path(full, abs, sizeof(abs))); /* absolute: the same */
	CHECK_STR_EQ(abs, full);
}

/* A directory of a cgroup v1 hierarchy (one without perf_event): -EBADF. */
static void test_v1_hierarchy(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], v1[4096] = "";
	while (f && fgets(line, sizeof(line), f)) {
		char mnt[4096], type[64];
		char *sep = strstr(line, " - ");
		if (sep && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    sscanf(sep + 3, "%63s", type) == 1 && strcmp(type, "cgroup") == 0 && !strstr(sep, "perf_event") && !v1[0])
			snprintf(v1, sizeof(v1), "%s", mnt);
	}
	if (f)
		fclose(f);
	if (!v1[0]) {
		SKIP_SUB("no cgroup v1 hierarchy without perf_event is mounted");
		return;
	}
	hwc_evlist *l = page_faults();
	struct hwc_target t = {.kind = HWC_TARGET_CGROUP, .cgroup = v1};
	expect_open_error(&t, l, -EBADF, "without the perf_event controller");
	hwc_evlist_free(l);
}

int main(void)
{
	make_cgroups();
	RUN(test_target);
	RUN(test_per_event);
	RUN(test_errors);
	RUN(test_v1_hierarchy);
	return check_exit();
}
