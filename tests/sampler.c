/* Live tests of the sampling API with software events: samples of this
 * thread through the iterator, a new command with its children, group
 * values, exit and context-switch logs, lost records on a tiny buffer, user
 * records and recordings (checked with perf script when perf is there), and
 * the error paths. */
#include <hwc/perfdata.h>
#include <hwc/sample.h>
#include <hwc/symbol.h>
#include <elf.h>

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char workloads[4096];
static char tmpdir[] = "/tmp/hwc-sampler-XXXXXX";

static volatile uint64_t sink;

static void spin(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i;
}

static hwc_sampler *open_or_die(const hwc_evlist *l, const struct hwc_target *t,
				const struct hwc_sampler_opts *o)
{
	hwc_sampler *s;
	if (hwc_sampler_open(&s, l, t, o)) {
		fprintf(stderr, "hwc_sampler_open: %s\n", hwc_errdetail());
		exit(1);
	}
	return s;
}

/* Workloads print to stdout: keep the test's output clean. */
static int quiet(void)
{
	fflush(stdout);
	int saved = dup(1), null = open("/dev/null", O_WRONLY);
	dup2(null, 1);
	close(null);
	return saved;
}

static void loud(int saved)
{
	dup2(saved, 1);
	close(saved);
}

/* Run the sampler's command to its end, taking records into FN. */
static void run_command(hwc_sampler *s, void (*fn)(const struct hwc_record *, void *), void *arg,
			int *status)
{
	CHECK_INT(hwc_sampler_start(s), ==, 0);
	struct hwc_record r;
	while (!hwc_sampler_ended(s, status)) {
		hwc_sampler_poll(s, 100);
		while (hwc_sampler_next(s, &r) > 0)
			fn(&r, arg);
	}
	CHECK_INT(hwc_sampler_stop(s), ==, 0);
	while (hwc_sampler_next(s, &r) > 0)
		fn(&r, arg);
}

/* ------------------------------------------------------------------ self */

static void test_self_iterator(void)
{
	hwc_evlist *l = check_evlist("cpu-clock");
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	/* A single event's samples carry no id, and their CPU only when asked
	 * (as perf record's): here it is. */
	struct hwc_sampler_opts o = {.period = 200000, .callgraph = HWC_CALLGRAPH_FP,
				     .flags = HWC_SAMPLE_CPU};
	hwc_sampler *s = open_or_die(l, &t, &o);
	CHECK_INT(hwc_sampler_nevents(s), ==, 1);
	const char *name;
	const struct perf_event_attr *a = hwc_sampler_event(s, 0, &name);
	CHECK(a && strcmp(name, "cpu-clock") == 0);
	CHECK_U64(a->sample_period, ==, 200000);
	CHECK(a->sample_type & PERF_SAMPLE_CALLCHAIN);
	CHECK(a->sample_type & PERF_SAMPLE_CPU);
	CHECK(!(a->sample_type & PERF_SAMPLE_IDENTIFIER));
	CHECK(hwc_sampler_event(s, 1, NULL) == NULL);
	CHECK_INT(hwc_sampler_start(s), ==, 0);
	spin(300000000);
	CHECK_INT(hwc_sampler_stop(s), ==, 0);
	struct hwc_record r;
	uint64_t samples = 0, last_time[1024] = {0};
	pid_t tid = (pid_t)syscall(SYS_gettid);
	while (hwc_sampler_next(s, &r) > 0) {
		if (r.hdr->type != PERF_RECORD_SAMPLE)
			continue;
		struct hwc_sample smp;
		CHECK_INT(hwc_sample_parse(r.hdr, r.attr, &smp), ==, 0);
		CHECK_STR_CONTAINS(r.event, "cpu-clock");
		CHECK_INT(smp.pid, ==, getpid());
		CHECK_INT(smp.tid, ==, tid);
		CHECK_INT(smp.cpu, ==, r.cpu);
		CHECK_U64(smp.period, ==, 200000);
		CHECK_U64(smp.nr_callchain, >, 0);
		/* One CPU's buffer is in time order. */
		if (r.cpu >= 0 && r.cpu < 1024) {
			CHECK_U64(smp.time, >=, last_time[r.cpu]);
			last_time[r.cpu] = smp.time;
		}
		samples++;
	}
	struct hwc_sampler_stats st;
	hwc_sampler_stats(s, &st);
	CHECK_U64(samples, >, 10);
	CHECK_U64(st.samples, ==, samples);
	CHECK_U64(st.lost, ==, 0);
	CHECK_INT(hwc_sampler_next(s, &r), ==, 0); /* stays empty once stopped */
	hwc_sampler_close(s);
	hwc_evlist_free(l);
}

/* ------------------------------------------------------------ live symbols */

#if defined(__x86_64__)
#define HWC_TEST_EM EM_X86_64
#elif defined(__aarch64__)
#define HWC_TEST_EM EM_AARCH64
#else
#define HWC_TEST_EM EM_NONE
#endif

__attribute__((noipa)) static void live_spin(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i;
}

/* hwc_symbols_code(), hwc_symbols_srcline() and hwc_symbols_resolve_in() on live_spin, sampled at IP
 * (LOC): its code is what this process runs, byte for byte; its source is
 * this file. */
static void check_code(hwc_symbols *syms, const struct hwc_location *loc, uint64_t ip)
{
	struct hwc_code code;
	CHECK_OK(hwc_symbols_code(syms, loc->sym, &code));
	CHECK_U64(code.start, ==, loc->sym->start);
	CHECK_U64(code.size, ==, loc->sym->size);
	CHECK_INT(code.machine, ==, HWC_TEST_EM);
	const void *mem = (const void *)(uintptr_t)(ip - loc->dso_offset + code.start);
	CHECK(code.size && memcmp(code.bytes, mem, code.size) == 0);
	struct hwc_srcline src;
	CHECK_OK(hwc_symbols_srcline(syms, loc->sym, loc->dso_offset, &src));
	CHECK_STR_CONTAINS(src.file, "/tests/sampler.c");
	CHECK(src.file && src.file[0] == '/'); /* joined with the compilation's directory */
	CHECK(src.line > 0);
	CHECK_STR_EQ(src.function, "live_spin");
	/* The same cached location as the process's address. */
	CHECK(hwc_symbols_resolve_in(syms, loc->sym, loc->dso_offset) == loc);
	/* No code for the kernel's functions, nor for an unknown one. */
	struct hwc_symbol kernel = *loc->sym, unknown = *loc->sym;
	kernel.kernel = true;
	unknown.known = false;
	CHECK_INT(hwc_symbols_code(syms, &kernel, &code), ==, -ENOTSUP);
	CHECK_STR_CONTAINS(hwc_errdetail(), "kernel");
	CHECK_INT(hwc_symbols_code(syms, &unknown, &code), ==, -ENOENT);
	CHECK_INT(hwc_symbols_srcline(syms, &unknown, 0, &src), ==, -ENOENT);
	CHECK(hwc_symbols_resolve_in(syms, &unknown, loc->dso_offset) == NULL);
	CHECK(src.file == NULL);
}

/* A live sampler symbolized without a recording: hwc_symbols_add_sampler()
 * describes this process from /proc, so its samples name live_spin; a
 * symbolizer that was not given the description knows nothing of them. */
static void test_live_symbols(void)
{
	hwc_evlist *l = check_evlist("cpu-clock");
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	struct hwc_sampler_opts o = {.period = 200000};
	hwc_sampler *s = open_or_die(l, &t, &o);
	hwc_symbols *syms, *blind;
	CHECK_INT(hwc_symbols_new(&syms, 0), ==, 0);
	CHECK_INT(hwc_symbols_new(&blind, 0), ==, 0);
	CHECK_INT(hwc_sampler_start(s), ==, 0);
	CHECK_INT(hwc_symbols_add_sampler(syms, s), ==, 0);
	live_spin(300000000);
	CHECK_INT(hwc_sampler_stop(s), ==, 0);
	struct hwc_record r;
	uint64_t user = 0, named = 0, blind_named = 0;
	const char *comm = NULL;
	while (hwc_sampler_next(s, &r) > 0) {
		if (r.hdr->type != PERF_RECORD_SAMPLE) {
			CHECK_INT(hwc_symbols_record(syms, r.hdr, r.attr), ==, 0);
			continue;
		}
		struct hwc_sample smp;
		CHECK_INT(hwc_sample_parse(r.hdr, r.attr, &smp), ==, 0);
		if ((smp.misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER)
			continue;
		user++;
		const struct hwc_location *loc = hwc_symbols_resolve(syms, smp.pid, smp.time, smp.ip, false);
		bool spin = loc->sym->known && strcmp(loc->sym->name, "live_spin") == 0;
		if (spin && !named)
			check_code(syms, loc, smp.ip);
		named += spin;
		loc = hwc_symbols_resolve(blind, smp.pid, smp.time, smp.ip, false);
		blind_named += loc->sym->known;
		comm = hwc_symbols_comm(syms, smp.tid, smp.time);
	}
	CHECK_U64(user, >, 10);
	CHECK_U64(named * 2, >, user); /* most of the time goes to live_spin */
	CHECK_U64(blind_named, ==, 0);
	CHECK(comm && strcmp(comm, "sampler") == 0);
	if (comm && strcmp(comm, "sampler") != 0)
		fprintf(stderr, "comm: %s\n", comm);
	hwc_symbols_free(blind);
	hwc_symbols_free(syms);
	hwc_sampler_close(s);
	hwc_evlist_free(l);
}

/* --------------------------------------------------------------- command */

struct procs {
	uint64_t samples, forks, exits, comm_exec;
	pid_t pids[64];
	size_t npids;
};

static void on_command_record(const struct hwc_record *r, void *arg)
{
	struct procs *p = arg;
	const uint32_t *w = (const uint32_t *)(const void *)(r->hdr + 1);
	switch (r->hdr->type) {
	case PERF_RECORD_SAMPLE: {
		struct hwc_sample smp;
		CHECK_INT(hwc_sample_parse(r->hdr, r->attr, &smp), ==, 0);
		p->samples++;
		break;
	}
	case PERF_RECORD_FORK:
		p->forks++;
		if (p->npids < 64)
			p->pids[p->npids++] = (pid_t)w[0];
		break;
	case PERF_RECORD_EXIT:
		p->exits++;
		break;
	case PERF_RECORD_COMM:
		p->comm_exec += !!(r->hdr->misc & PERF_RECORD_MISC_COMM_EXEC);
		break;
	}
}

static void test_command_children(void)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/hotspots", workloads);
	char *argv[] = {path, "3", NULL};
	hwc_evlist *l = check_evlist("cpu-clock");
	struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	int saved = quiet();
	hwc_sampler *s = open_or_die(l, &t, NULL);
	loud(saved);
	CHECK_INT(hwc_sampler_pid(s), >, 0);
	struct procs p = {0};
	int status;
	run_command(s, on_command_record, &p, &status);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_U64(p.samples, >, 10);
	CHECK_U64(p.comm_exec, ==, 1); /* the exec of hotspots */
	CHECK_U64(p.forks, ==, 3);     /* one child per round, inherited */
	CHECK_U64(p.exits, >=, 3);
	hwc_sampler_close(s);
	hwc_evlist_free(l);
}

static void test_exec_failure(void)
{
	char *argv[] = {"/nonexistent/hwc-no-such-command", NULL};
	hwc_evlist *l = check_evlist("cpu-clock");
	struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	hwc_sampler *s = open_or_die(l, &t, NULL);
	CHECK_INT(hwc_sampler_start(s), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "cannot execute");
	CHECK(hwc_sampler_ended(s, NULL));
	hwc_sampler_close(s);
	hwc_evlist_free(l);
}

/* ---------------------------------------------------------- group values */

static void test_group_values(void)
{
	hwc_evlist *l = check_evlist("{cpu-clock,page-faults}");
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	struct hwc_sampler_opts o = {.period = 500000, .flags = HWC_GROUP_VALUES};
	hwc_sampler *s = open_or_die(l, &t, &o);
	CHECK_INT(hwc_sampler_nevents(s), ==, 2);
	CHECK_U64(hwc_sampler_event(s, 1, NULL)->sample_period, ==, 0); /* counted only */
	CHECK_INT(hwc_sampler_start(s), ==, 0);
	for (int i = 0; i < 20; i++) {
		char *p = malloc(1 << 20);
		for (int k = 0; p && k < (1 << 20); k += 4096)
			p[k] = 1;
		free(p);
		spin(20000000);
	}
	CHECK_INT(hwc_sampler_stop(s), ==, 0);
	struct hwc_record r;
	/* The thread is counted by one group per CPU: each group's values grow,
	 * and the thread's total is the sum of each group's last value.  A
	 * group is told by its leader's ID (values[1], after its value), not by the sample's
	 * CPU, which the samples need not carry. */
	enum { MAX_GROUPS = 1024 };
	uint64_t samples = 0, ids[MAX_GROUPS], last[MAX_GROUPS] = {0}, total = 0;
	size_t ngroups = 0;
	while (hwc_sampler_next(s, &r) > 0) {
		if (r.hdr->type != PERF_RECORD_SAMPLE)
			continue;
		struct hwc_sample smp;
		CHECK_INT(hwc_sample_parse(r.hdr, r.attr, &smp), ==, 0);
		CHECK_STR_CONTAINS(r.event, "cpu-clock"); /* only the leader samples */
		CHECK_INT(smp.nr_values, ==, 2);
		CHECK_INT(smp.value_stride, ==, 3); /* value, ID, lost */
		if (smp.nr_values == 2 && smp.value_stride == 3) {
			uint64_t id = smp.values[1], faults = smp.values[smp.value_stride];
			size_t g = 0;
			while (g < ngroups && ids[g] != id)
				g++;
			if (g == ngroups && ngroups < MAX_GROUPS)
				ids[ngroups++] = id;
			if (g < ngroups) {
				CHECK_U64(faults, >=, last[g]);
				last[g] = faults;
			}
		}
		samples++;
	}
	for (size_t g = 0; g < ngroups; g++)
		total += last[g];
	CHECK_U64(samples, >, 5);
	CHECK_U64(total, >=, 100);
	hwc_sampler_close(s);
	hwc_evlist_free(l);
}

/* ------------------------------------------------------ exit and switches */

struct logs {
	uint64_t reads, switch_samples, switch_out, profile_samples;
	uint64_t read_value_sum;
};

static void on_log_record(const struct hwc_record *r, void *arg)
{
	struct logs *g = arg;
	if (r->hdr->type == PERF_RECORD_READ) {
		const uint64_t *body = (const uint64_t *)(const void *)(r->hdr + 1);
		CHECK(r->attr->inherit_stat);
		CHECK_STR_CONTAINS(r->event, "context-switches");
		g->reads++;
		g->read_value_sum += body[1]; /* after pid/tid: the value */
	} else if (r->hdr->type == PERF_RECORD_SAMPLE) {
		struct hwc_sample smp;
		CHECK_INT(hwc_sample_parse(r->hdr, r->attr, &smp), ==, 0);
		if (strcmp(r->event, "context-switches") == 0 && (r->attr->sample_type & PERF_SAMPLE_READ)) {
			g->switch_samples++;
			CHECK_INT(smp.nr_values, ==, 2); /* the leader and the logged event */
		} else {
			g->profile_samples++;
		}
	} else if (r->hdr->type == PERF_RECORD_SWITCH) {
		g->switch_out += !!(r->hdr->misc & PERF_RECORD_MISC_SWITCH_OUT);
	}
}

static void test_logs(void)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/procs", workloads);
	char *argv[] = {path, "3", "4", NULL};
	hwc_evlist *l = check_evlist("cpu-clock"), *counted = check_evlist("context-switches");
	struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	struct hwc_sampler_opts o = {.flags = HWC_LOG_PROCEXIT | HWC_LOG_PROCCSW, .counted = counted};
	hwc_sampler *s;
	int saved = quiet();
	int err = hwc_sampler_open(&s, l, &t, &o);
	loud(saved);
	if (err == -EINVAL && strstr(hwc_errdetail(), "Linux 6.12")) {
		SKIP_SUB("%s", hwc_errdetail());
		hwc_evlist_free(l);
		hwc_evlist_free(counted);
		return;
	}
	CHECK_INT(err, ==, 0);
	if (err)
		return;
	/* cpu-clock, then the log group: context-switches leading, the counted event. */
	CHECK_INT(hwc_sampler_nevents(s), ==, 3);
	struct logs g = {0};
	int status;
	run_command(s, on_log_record, &g, &status);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	/* Each of the 3 children ends with one READ per CPU buffer; the main
	 * process with one of its own counts, made at stop. */
	CHECK_U64(g.reads, ==, 3 * (uint64_t)ncpu + 1);
	/* Every switch out is a sample of the context-switches group. */
	CHECK_U64(g.switch_samples, ==, g.switch_out);
	/* 4 naps per process at least: the exit counts add up to no fewer. */
	CHECK_U64(g.switch_samples, >=, 4 * 4);
	CHECK_U64(g.read_value_sum, >=, 4 * 4);
	hwc_sampler_close(s);
	hwc_evlist_free(l);
	hwc_evlist_free(counted);
}

/* ----------------------------------------------------------------- lost */

static void test_lost(void)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/pagetouch", workloads);
	char *argv[] = {path, "50000", NULL};
	hwc_evlist *l = check_evlist("page-faults");
	struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	struct hwc_sampler_opts o = {.period = 1, .mmap_pages = 1};
	hwc_sampler *s = open_or_die(l, &t, &o);
	CHECK_INT(hwc_sampler_start(s), ==, 0);
	int status;
	/* Wait for the end without reading: one page of buffer must overflow
	 * with 50000 samples.  The kernel reports its drops at its next write,
	 * which never comes here: the sampler reads them from the events. */
	while (!hwc_sampler_ended(s, &status))
		hwc_sampler_poll(s, 100);
	CHECK_INT(hwc_sampler_stop(s), ==, 0);
	struct hwc_record r;
	uint64_t lost = 0, samples = 0;
	while (hwc_sampler_next(s, &r) > 0) {
		const uint64_t *body = (const uint64_t *)(const void *)(r.hdr + 1);
		if (r.hdr->type == PERF_RECORD_LOST) /* id, lost */
			lost += body[1];
		if (r.hdr->type == PERF_RECORD_LOST_SAMPLES) /* lost */
			lost += body[0];
		samples += r.hdr->type == PERF_RECORD_SAMPLE;
	}
	struct hwc_sampler_stats st;
	hwc_sampler_stats(s, &st);
	CHECK_U64(lost, >, 0);
	CHECK_U64(st.lost, ==, lost);
	CHECK_U64(st.samples, ==, samples);
	CHECK_U64(samples + lost, >=, 50000); /* every fault: kept or counted as lost */
	hwc_sampler_close(s);
	hwc_evlist_free(l);
}

/* ------------------------------------------------------------- recording */

static bool have_perf(void)
{
	return system("perf version >/dev/null 2>&1") == 0;
}

/* Output of CMD; stderr goes to ERR (a file name). */
static char *run(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	if (!f)
		return NULL;
	static char out[1 << 20];
	size_t n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	pclose(f);
	return out;
}

static void test_recording_user_records(void)
{
	char file[256];
	snprintf(file, sizeof(file), "%s/user.data", tmpdir);
	hwc_evlist *l = check_evlist("cpu-clock");
	struct hwc_target t = {.kind = HWC_TARGET_SELF};
	/* Without ids the user records could not be told apart: refused. */
	struct hwc_sampler_opts o = {.period = 200000};
	hwc_sampler *s = open_or_die(l, &t, &o);
	hwc_recording *rec;
	CHECK_INT(hwc_recording_create(&rec, file), ==, 0);
	CHECK_INT(hwc_recording_add_sampler(rec, s), ==, 0);
	CHECK_INT(hwc_recording_write_user(rec, "x", 1), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "HWC_SAMPLE_ID");
	hwc_recording_discard(rec);
	hwc_sampler_close(s);
	o.flags = HWC_SAMPLE_ID;
	s = open_or_die(l, &t, &o);
	CHECK(hwc_sampler_event(s, 0, NULL)->sample_type & PERF_SAMPLE_IDENTIFIER);
	CHECK(!(hwc_sampler_event(s, 0, NULL)->sample_type & PERF_SAMPLE_CPU));
	CHECK_INT(hwc_recording_create(&rec, file), ==, 0);
	CHECK_U64(hwc_recording_nevents(rec), ==, 0);
	CHECK_INT(hwc_recording_add_sampler(rec, s), ==, 0);
	CHECK_U64(hwc_recording_nevents(rec), ==, hwc_sampler_nevents(s));
	char *argv[] = {"sampler-test", "user-records"};
	CHECK_INT(hwc_recording_set_cmdline(rec, 2, argv), ==, 0);
	CHECK_INT(hwc_sampler_start(s), ==, 0);
	spin(100000000);
	CHECK_INT(hwc_recording_write_user(rec, "hwc user record", 15), ==, 0);
	CHECK_U64(hwc_recording_nevents(rec), ==, hwc_sampler_nevents(s) + 1); /* hwc-user */
	uint32_t word = 0x01020304;
	CHECK_INT(hwc_recording_write_user(rec, &word, sizeof(word)), ==, 0);
	CHECK_U64(hwc_recording_nevents(rec), ==, hwc_sampler_nevents(s) + 1);
	char big[70000] = {0};
	CHECK_INT(hwc_recording_write_user(rec, big, sizeof(big)), ==, -E2BIG);
	/* A flush makes the file valid at once; more records extend it. */
	CHECK_INT(hwc_sampler_write(s, rec) >= 0, ==, 1);
	CHECK_INT(hwc_recording_flush(rec), ==, 0);
	spin(100000000);
	CHECK_INT(hwc_sampler_stop(s), ==, 0);
	CHECK_INT(hwc_sampler_write(s, rec) >= 0, ==, 1);
	struct hwc_sampler_stats ss;
	hwc_sampler_stats(s, &ss);
	hwc_sampler_close(s);
	struct hwc_recording_stats rs;
	CHECK_INT(hwc_recording_close(rec, &rs), ==, 0);
	CHECK_U64(rs.samples, ==, ss.samples + 2); /* the kernel's and the two user records */
	struct stat st;
	CHECK_INT(stat(file, &st), ==, 0);
	CHECK_U64(rs.bytes, ==, (uint64_t)st.st_size);
	/* The file's attribute table is in the order hwc_recording_nevents() counted. */
	hwc_perfdata *f;
	CHECK_INT(hwc_perfdata_open(&f, file), ==, 0);
	if (f) {
		CHECK_U64(hwc_perfdata_nattrs(f), ==, 2);
		CHECK_STR_EQ(hwc_perfdata_attr(f, 0)->name, "cpu-clock");
		CHECK_STR_EQ(hwc_perfdata_attr(f, 1)->name, "hwc-user");
		hwc_perfdata_close(f);
	}
	if (!have_perf()) {
		SKIP_SUB("the perf checks: perf is not installed");
		hwc_evlist_free(l);
		return;
	}
	char cmd[512], errfile[300];
	snprintf(errfile, sizeof(errfile), "%s/perf.err", tmpdir);
	snprintf(cmd, sizeof(cmd), "perf script -i %s -F comm,event 2>%s | grep -c hwc-user", file,
		 errfile);
	CHECK_STR_CONTAINS(run(cmd), "2\n");
	snprintf(cmd, sizeof(cmd), "perf script -i %s 2>%s | grep -a -A1 hwc-user", file, errfile);
	const char *out = run(cmd);
	CHECK_STR_CONTAINS(out, "68 77 63 20 75 73 65 72"); /* "hwc user" */
	CHECK_STR_CONTAINS(out, "04 03 02 01");
	snprintf(cmd, sizeof(cmd), "cat %s", errfile);
	CHECK_STR_EQ(run(cmd), ""); /* perf had nothing to complain about */
	snprintf(cmd, sizeof(cmd), "perf report --header-only -i %s 2>&1", file);
	out = run(cmd);
	CHECK_STR_CONTAINS(out, "cmdline : sampler-test user-records");
	CHECK_STR_CONTAINS(out, "name = hwc-user");
	hwc_evlist_free(l);
}

static void test_recording_errors(void)
{
	hwc_recording *rec;
	CHECK_INT(hwc_recording_create(&rec, "/nonexistent-dir/x.data"), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "/nonexistent-dir/x.data");
	char file[256];
	snprintf(file, sizeof(file), "%s/fd.data", tmpdir);
	int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK_INT(hwc_recording_fdopen(&rec, fd), ==, 0);
	struct perf_event_header bad = {PERF_RECORD_SAMPLE, 0, 12};
	CHECK_INT(hwc_recording_write(rec, &bad), ==, -EINVAL);
	CHECK_INT(hwc_recording_close(rec, NULL), ==, 0);
	CHECK(fcntl(fd, F_GETFD) >= 0); /* the caller's descriptor stays open */
	close(fd);
}

/* On a pipe the records are streamed (perf's pipe mode) and read back. */
static void test_recording_pipe(void)
{
	int p[2];
	CHECK_INT(pipe(p), ==, 0);
	hwc_recording *rec;
	CHECK_OK(hwc_recording_fdopen(&rec, p[1]));
	CHECK_OK(hwc_recording_write_user(rec, "streamed", 9));
	CHECK_OK(hwc_recording_flush(rec));
	CHECK_OK(hwc_recording_write_user(rec, "again", 6));
	CHECK_OK(hwc_recording_close(rec, NULL));
	close(p[1]);
	static uint8_t buf[1 << 16];
	size_t len = 0;
	for (ssize_t n; (n = read(p[0], buf + len, sizeof(buf) - len)) > 0;)
		len += (size_t)n;
	close(p[0]);
	CHECK_U64(len, >, 16);
	uint64_t hsize;
	memcpy(&hsize, buf + 8, 8);
	CHECK_U64(hsize, ==, 16);
	hwc_perfdata *f;
	CHECK_OK(hwc_perfdata_open_mem(&f, buf, len));
	CHECK_U64(hwc_perfdata_nattrs(f), ==, 1);
	CHECK(hwc_perfdata_string(f, HWC_FEAT_CPUID) != NULL);
	struct hwc_perfdata_record r;
	int users = 0;
	while (hwc_perfdata_next(f, &r) > 0) {
		struct hwc_sample s;
		if (r.hdr->type != PERF_RECORD_SAMPLE || !r.attr ||
		    hwc_sample_parse(r.hdr, &r.attr->attr, &s))
			continue;
		CHECK_STR_EQ((const char *)s.raw, users ? "again" : "streamed");
		users++;
	}
	CHECK_INT(users, ==, 2);
	hwc_perfdata_close(f);
	/* Cut inside its last record, a stream is read up to the record before. */
	CHECK_OK(hwc_perfdata_open_mem(&f, buf, len - 3));
	users = 0;
	while (hwc_perfdata_next(f, &r) > 0)
		users += r.hdr->type == PERF_RECORD_SAMPLE;
	CHECK_INT(users, ==, 1);
	hwc_perfdata_close(f);
}

/* ---------------------------------------------------------------- errors */

static void expect_open_error(const char *spec, const struct hwc_target *t,
			      const struct hwc_sampler_opts *o, int err, const char *detail)
{
	hwc_evlist *l = spec ? check_evlist(spec) : NULL;
	hwc_sampler *s = (hwc_sampler *)1;
	CHECK_INT(hwc_sampler_open(&s, l, t, o), ==, err);
	CHECK(s == NULL);
	CHECK_STR_CONTAINS(hwc_errdetail(), detail);
	hwc_evlist_free(l);
}

static void test_errors(void)
{
	struct hwc_target self = {.kind = HWC_TARGET_SELF}, cpus = {.kind = HWC_TARGET_CPUS};
	struct hwc_target gone = {.kind = HWC_TARGET_PROCESS, .pid = 0x3ffffff0};
	int bad_cpu = 4095;
	struct hwc_target cpu = {.kind = HWC_TARGET_CPUS, .cpus = &bad_cpu, .ncpus = 1};
	expect_open_error("cpu-clock", &self, &(struct hwc_sampler_opts){.period = 1, .freq = 1},
			  -EINVAL, "not both");
	expect_open_error("cpu-clock", &self,
			  &(struct hwc_sampler_opts){.callgraph = HWC_CALLGRAPH_DWARF, .stack_size = 12},
			  -EINVAL, "multiple of 8");
	expect_open_error("cpu-clock", &self, &(struct hwc_sampler_opts){.mmap_pages = 3}, -EINVAL,
			  "power of 2");
	expect_open_error("cpu-clock", &self, &(struct hwc_sampler_opts){.freq = 1ULL << 40},
			  -EINVAL, "perf_event_max_sample_rate");
	expect_open_error("cpu-clock", &cpus, &(struct hwc_sampler_opts){.flags = HWC_LOG_PROCEXIT},
			  -EINVAL, "process target");
	expect_open_error(NULL, &self, NULL, -EINVAL, "no events to sample");
	expect_open_error("cpu-clock", &gone, NULL, -ESRCH, "no process");
	expect_open_error("cpu-clock", &cpu, NULL, -EINVAL, "CPU 4095 is out of range");
	if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0)
		expect_open_error("cycles", &self, NULL, -ENOENT, "no hardware PMU");
	else
		SKIP_SUB("the no-PMU case: this machine has a PMU");
}

/* A child process as nobody: kernel sampling is denied at paranoid 2, so
 * the sampler falls back to user space and says so. */
static void test_unprivileged(void)
{
	int paranoid;
	if (geteuid() != 0 || hwc_paranoid(&paranoid) || paranoid < 2) {
		SKIP_SUB("needs root and perf_event_paranoid >= 2");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(3);
		hwc_evlist *l = check_evlist("cpu-clock");
		struct hwc_target t = {.kind = HWC_TARGET_SELF};
		hwc_sampler *s;
		if (hwc_sampler_open(&s, l, &t, &(struct hwc_sampler_opts){.period = 100000}))
			_exit(4);
		if (!hwc_sampler_user_only(s) || !hwc_sampler_event(s, 0, NULL)->exclude_kernel)
			_exit(5);
		hwc_sampler_start(s);
		spin(50000000);
		hwc_sampler_stop(s);
		struct hwc_record r;
		int kernel = 0, user = 0;
		while (hwc_sampler_next(s, &r) > 0)
			if (r.hdr->type == PERF_RECORD_SAMPLE) {
				kernel += (r.hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
					  PERF_RECORD_MISC_KERNEL;
				user++;
			}
		hwc_sampler_close(s);
		_exit(kernel ? 6 : user ? 0 : 7);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), ==, 0);
}

int main(void)
{
	const char *build = getenv("HWC_BUILD");
	snprintf(workloads, sizeof(workloads), "%s/workloads", build ? build : "build");
	if (access(workloads, F_OK) != 0)
		SKIP("no workloads in %s (set HWC_BUILD)", workloads);
	if (!mkdtemp(tmpdir))
		SKIP("cannot make a temporary directory");
	RUN(test_self_iterator);
	RUN(test_live_symbols);
	RUN(test_command_children);
	RUN(test_exec_failure);
	RUN(test_group_values);
	RUN(test_logs);
	RUN(test_lost);
	RUN(test_recording_user_records);
	RUN(test_recording_errors);
	RUN(test_recording_pipe);
	RUN(test_errors);
	RUN(test_unprivileged);
	remove_tree(tmpdir);
	return check_exit();
}
