/* The golden rows that need this machine's real sysfs: msr/tsc/ resolves to
 * the msr PMU's type and its tsc alias, counts, and msr/tsc/u fails with a
 * message that says why.  Skips where the kernel has no msr PMU (non-x86, or
 * a kernel built without it).  tests/golden_perf.py compares the same specs
 * with perf. */
#include "check.h"

#include <errno.h>
#include <hwc/hwc.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSR "/sys/bus/event_source/devices/msr"

static int read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static unsigned long long msr_type, tsc_config;

static void test_resolve(void)
{
	hwc_evlist *l;
	CHECK_OK(hwc_evlist_new(&l));
	CHECK_OK(hwc_evlist_add(l, "msr/tsc/"));
	const struct hwc_event *e = hwc_evlist_event(l, 0);
	CHECK(e != NULL);
	if (e) {
		CHECK_U64(e->attr.type, ==, msr_type);
		CHECK_U64(e->attr.config, ==, tsc_config);
		CHECK_U64(e->attr.config1, ==, 0);
		CHECK_INT(e->source, ==, HWC_SRC_PMU);
		CHECK_STR_CONTAINS(e->pmu, "msr");
		CHECK_INT(e->attr.exclude_user + e->attr.exclude_kernel + e->attr.exclude_hv, ==, 0);
	}
	hwc_evlist_free(l);
}

static void spin(void)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 20000000; i++)
		x += i;
}

static void test_count(void)
{
	hwc_evlist *l;
	hwc_counters *c;
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	CHECK_OK(hwc_evlist_new(&l));
	CHECK_OK(hwc_evlist_add(l, "msr/tsc/"));
	int err = hwc_counters_open(&c, l, &t);
	int paranoid = 2;
	hwc_paranoid(&paranoid);
	if (err && geteuid() != 0 && paranoid >= 2) {
		/* The msr PMU cannot count user space only, which is all this
		 * user may count: the error must say so. */
		CHECK_STR_CONTAINS(hwc_errdetail(), "may count user space only");
		SKIP_SUB("not counted, needs root or perf_event_paranoid < 2: "
				"%s",
			hwc_errdetail());
		hwc_evlist_free(l);
		return;
	}
	CHECK_INT(err, ==, 0);
	if (err) {
		fprintf(stderr, "open: %s\n", hwc_errdetail());
		hwc_evlist_free(l);
		return;
	}
	struct hwc_value first, second;
	CHECK_OK(hwc_counters_start(c));
	spin();
	CHECK_OK(hwc_counters_read(c));
	CHECK_OK(hwc_counters_value(c, HWC_ALL, 0, &first));
	spin();
	CHECK_OK(hwc_counters_stop(c));
	CHECK_OK(hwc_counters_read(c));
	CHECK_OK(hwc_counters_value(c, HWC_ALL, 0, &second));
	/* The time-stamp counter ticks while the task runs. */
	CHECK_U64(first.raw, >, 0);
	CHECK_U64(first.running, >, 0);
	CHECK_U64(second.raw, >, first.raw);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

/* The msr PMU counts everything or nothing: :u must fail, and say why. */
static void test_exclude_rejected(void)
{
	hwc_evlist *l;
	hwc_counters *c = NULL;
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	CHECK_OK(hwc_evlist_new(&l));
	CHECK_OK(hwc_evlist_add(l, "msr/tsc/u"));
	CHECK_INT(hwc_counters_open(&c, l, &t), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "msr/tsc/u");
	CHECK_STR_CONTAINS(hwc_errdetail(), "drop the u/k/h modifiers");
	hwc_evlist_free(l);
}

/* As an unprivileged user with perf_event_paranoid >= 2 only user space may
 * be counted, which the msr PMU cannot do: the error says why and what to do. */
static void test_unprivileged(void)
{
	int paranoid;
	if (geteuid() != 0 || hwc_paranoid(&paranoid) || paranoid < 2) {
		SKIP_SUB("needs root (to drop to an unprivileged uid) and perf_event_paranoid >= 2");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(3);
		hwc_evlist *l;
		hwc_counters *c;
		struct hwc_target t = {.kind = HWC_TARGET_SELF};
		if (hwc_evlist_new(&l) || hwc_evlist_add(l, "msr/tsc/"))
			_exit(4);
		if (hwc_counters_open(&c, l, &t) == 0)
			_exit(5);
		if (!strstr(hwc_errdetail(), "may count user space only") ||
		    !strstr(hwc_errdetail(), "sysctl kernel.perf_event_paranoid=1"))
			_exit(6);
		_exit(0);
	}
	int status;
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), ==, 0);
}

int main(void)
{
	char buf[256];
	if (read_text(MSR "/type", buf, sizeof(buf)) || (msr_type = strtoull(buf, NULL, 0)) == 0)
		SKIP("no msr PMU on this machine (%s/type is absent)", MSR);
	if (read_text(MSR "/events/tsc", buf, sizeof(buf)))
		SKIP("the msr PMU has no tsc event here (%s/events/tsc is absent)", MSR);
	/* Linux writes "event=0x00"; the format puts event in config:0-63. */
	if (strncmp(buf, "event=", 6) != 0) {
		fprintf(stderr, "unexpected %s/events/tsc: '%s'\n", MSR, buf);
		return 1;
	}
	tsc_config = strtoull(buf + 6, NULL, 0);
	RUN(test_resolve);
	RUN(test_count);
	RUN(test_exclude_rejected);
	RUN(test_unprivileged);
	return check_exit();
}
