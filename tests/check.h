/* Minimal test helpers: checks print both operands, skips print a reason.
 * Each test program exits 0 (pass), 1 (fail) or 77 (skip, reason printed). */
#ifndef HWC_TEST_CHECK_H
#define HWC_TEST_CHECK_H

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int check_failures;
static int check_skips; /* sub-tests that could not run here (SKIP_SUB) */

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			check_failures++;                                                \
		}                                                                        \
	} while (0)

#define CHECK_INT(a, op, b)                                                              \
	do {                                                                             \
		long long a_ = (long long)(a), b_ = (long long)(b);                      \
		if (!(a_ op b_)) {                                                       \
			fprintf(stderr, "%s:%d: %s %s %s failed: %lld vs %lld\n", __FILE__, \
				__LINE__, #a, #op, #b, a_, b_);                          \
			check_failures++;                                                \
		}                                                                        \
	} while (0)

#define CHECK_U64(a, op, b)                                                              \
	do {                                                                             \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                         \
		if (!(a_ op b_)) {                                                       \
			fprintf(stderr, "%s:%d: %s %s %s failed: %#" PRIx64 " vs %#" PRIx64 "\n", \
				__FILE__, __LINE__, #a, #op, #b, a_, b_);                \
			check_failures++;                                                \
		}                                                                        \
	} while (0)

#define CHECK_STR_EQ(a, b)                                                               \
	do {                                                                             \
		const char *a_ = (a), *b_ = (b);                                         \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                 \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" vs \"%s\"\n",        \
				__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",          \
				b_ ? b_ : "(null)");                                     \
			check_failures++;                                                \
		}                                                                        \
	} while (0)

/* EXPR (a libhwc call) returns 0; on failure print its value and the
 * library's detail, which says why (a macro: only tests of libhwc use it). */
#define CHECK_OK(expr)                                                                   \
	do {                                                                             \
		long long r_ = (long long)(expr);                                        \
		if (r_ != 0) {                                                           \
			fprintf(stderr, "%s:%d: %s returned %lld: %s\n", __FILE__, __LINE__, \
				#expr, r_, hwc_errdetail());                             \
			check_failures++;                                                \
		}                                                                        \
	} while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                  \
	do {                                                                             \
		const char *h_ = (hay), *n_ = (needle);                                  \
		if (!h_ || !strstr(h_, n_)) {                                            \
			fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, \
				__LINE__, h_ ? h_ : "(null)", n_);                       \
			check_failures++;                                                \
		}                                                                        \
	} while (0)

/* Call FN as a sub-test and say how it ended: "ok", "FAIL", or "skip" when it
 * called SKIP_SUB (tests/run counts those lines). */
#define RUN(fn)                                                                          \
	do {                                                                             \
		int before_ = check_failures, skips_ = check_skips;                      \
		fn();                                                                    \
		const char *how_ = check_failures != before_ ? "FAIL"                    \
				   : check_skips != skips_   ? "skip"                    \
							     : "ok  ";                   \
		fprintf(stderr, "%s %s\n", how_, #fn);                                   \
	} while (0)

/* Inside a sub-test: it, or a part of it, cannot run on this machine: print
 * why and count it.  The caller returns (or leaves the part out) itself. */
#define SKIP_SUB(...)                                                                    \
	do {                                                                             \
		fprintf(stderr, "%s: skipped: ", __func__);                              \
		fprintf(stderr, __VA_ARGS__);                                            \
		fprintf(stderr, "\n");                                                   \
		check_skips++;                                                           \
	} while (0)

#define SKIP(...)                                                                        \
	do {                                                                             \
		fprintf(stderr, "SKIP: " __VA_ARGS__);                                   \
		fprintf(stderr, "\n");                                                   \
		exit(77);                                                                \
	} while (0)

/* perf's JSON event tables, where scripts/deps extracts them. */
#define EVENTS_TREE "/usr/local/share/hwc-test/events"
/* Skip the test without them; else point HWC_EVENTS_DIR at them. */
#define USE_EVENTS_TREE()                                                                \
	do {                                                                             \
		if (access(EVENTS_TREE "/x86/mapfile.csv", F_OK) != 0)                   \
			SKIP("perf's JSON event tables are not at " EVENTS_TREE          \
			     " (scripts/deps extracts them from linux-source-6.12)");   \
		setenv("HWC_EVENTS_DIR", EVENTS_TREE, 1);                                \
	} while (0)

/* Why an unprivileged user can open no perf event here, or NULL: Debian's
 * kernels default to perf_event_paranoid 3, which forbids all use. */
static inline const char *nobody_cannot_count(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int level = 0;
	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 0;
		fclose(f);
	}
	return level > 2 ? "perf_event_paranoid is above 2: unprivileged users may open no perf event"
			 : NULL;
}

/* Run FN in a child process as the user nobody (uid and gid 65534); the
 * child's failed checks print there and fail the test here.  Needs root,
 * and a perf_event_paranoid that lets nobody count: otherwise says so and
 * runs nothing. */
static inline void run_as_nobody(void (*fn)(void), const char *name)
{
	if (geteuid() != 0) {
		fprintf(stderr, "%s: skipped: not root: cannot become nobody\n", name);
		check_skips++;
		return;
	}
	if (nobody_cannot_count()) {
		fprintf(stderr, "%s: skipped: %s\n", name, nobody_cannot_count());
		check_skips++;
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		check_failures = 0;
		if (setgid(65534) || setuid(65534))
			_exit(3);
		fn();
		_exit(check_failures ? 1 : 0);
	}
	int status = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s as nobody failed (wait status %#x)\n", name, (unsigned)status);
		check_failures++;
	}
}

/* N fresh pages written once each: N minor page faults, counted in user
 * mode (the workload of the tests that count software events). */
static inline void touch_pages(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		abort();
	/* Where transparent huge pages are "always" (Debian's arm64 kernel),
	 * one fault would map 512 pages. */
	madvise((void *)p, (size_t)(n * page), MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		p[i * page] = 1;
	munmap((void *)p, (size_t)(n * page));
}

static inline void *touch_pages_start(void *n)
{
	touch_pages((long)(intptr_t)n);
	return NULL;
}

/* touch_pages(N) in a new thread of this process, joined. */
static inline void touch_pages_in_thread(long n)
{
	pthread_t th;
	if (pthread_create(&th, NULL, touch_pages_start, (void *)(intptr_t)n))
		abort();
	pthread_join(th, NULL);
}

/* touch_pages(N) in a child process, waited for. */
static inline void touch_pages_in_child(long n)
{
	pid_t pid = fork();
	if (pid == 0) {
		touch_pages(n);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

#ifdef HWC_HWC_H
/* A new event list for SPEC, or exit(1) with the resolver's detail. */
static inline hwc_evlist *check_evlist(const char *spec)
{
	hwc_evlist *l;
	if (hwc_evlist_new(&l) || hwc_evlist_add(l, spec)) {
		fprintf(stderr, "cannot resolve '%s': %s\n", spec, hwc_errdetail());
		exit(1);
	}
	return l;
}

/* LIST opened on TARGET, or exit(1) with the detail. */
static inline hwc_counters *check_counters_open(hwc_evlist *l, const struct hwc_target *t)
{
	hwc_counters *c;
	if (hwc_counters_open(&c, l, t)) {
		fprintf(stderr, "open failed: %s\n", hwc_errdetail());
		exit(1);
	}
	return c;
}

/* Event EV's raw count, summed over the instances. */
static inline uint64_t check_value(hwc_counters *c, size_t ev)
{
	struct hwc_value v;
	CHECK_OK(hwc_counters_value(c, HWC_ALL, ev, &v));
	return v.raw;
}
#endif

/* Does the kernel expose a core hardware PMU?  x86's cpu (cpu_core on
 * hybrids), or another architecture's: the PMU with a cpus file
 * (armv8_pmuv3, ...). */
static inline bool kernel_has_core_pmu(void)
{
	if (access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	    access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0)
		return true;
	glob_t g;
	bool found = glob("/sys/bus/event_source/devices/*/cpus", 0, NULL, &g) == 0;
	if (found)
		globfree(&g);
	return found;
}

/* The most page faults touching N pages may take: sanitizer builds also
 * fault in their shadow memory. */
#define FAULTS_MAX(n) ((uint64_t)(n) + (uint64_t)(n) / 4 + 10)

/* A program of the build: $HWC_BUILD/workloads/NAME (four at a time). */
static inline char *workload(const char *name)
{
	static char path[4][512];
	static int k;
	const char *build = getenv("HWC_BUILD");
	snprintf(path[k & 3], sizeof(path[0]), "%s/workloads/%s", build ? build : "build", name);
	return path[k++ & 3];
}

/* Everything written to stderr between the two calls. */
static int stderr_saved = -1;
static FILE *stderr_file;

static inline void stderr_capture(void)
{
	fflush(stderr);
	stderr_file = tmpfile();
	stderr_saved = dup(2);
	dup2(fileno(stderr_file), 2);
}

static inline const char *stderr_captured(void)
{
	static char buf[8192];
	fflush(stderr);
	dup2(stderr_saved, 2);
	close(stderr_saved);
	rewind(stderr_file);
	size_t n = fread(buf, 1, sizeof(buf) - 1, stderr_file);
	buf[n] = '\0';
	fclose(stderr_file);
	fputs(buf, stderr); /* still shown in the test's log */
	return buf;
}

/* Write TEXT to PATH, made (with MODE) or emptied, never through a
 * symbolic link there.  A step that fails is a failed check; returns 0 or
 * -1. */
static inline int check_write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	size_t len = strlen(text);
	bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len && fchmod(fd, mode) == 0;
	int err = errno;
	if (fd >= 0 && close(fd) != 0 && ok)
		ok = false, err = errno;
	if (!ok) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(err));
		check_failures++;
	}
	return ok ? 0 : -1;
}

/* Write the line TEXT to ROOT/PATH, making ROOT and the directories of
 * PATH first (fake sysfs trees); as check_write_file(). */
static inline int check_put_line(const char *root, const char *path, const char *text)
{
	char full[8192], line[4096];
	snprintf(full, sizeof(full), "%s/%s", root, path);
	for (char *p = full + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(full, 0755); /* most are there already */
		*p = '/';
	}
	snprintf(line, sizeof(line), "%s\n", text);
	return check_write_file(full, line, 0644);
}

/* Remove DIR and what it holds (a test's temporary directory). */
static inline void remove_tree(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static inline int check_exit(void)
{
	if (check_skips)
		fprintf(stderr, "%d sub-test(s) skipped\n", check_skips);
	if (check_failures)
		fprintf(stderr, "%d check(s) failed\n", check_failures);
	return check_failures ? 1 : 0;
}

#endif
