/* The perf.data reader on real recordings (the fuzz seed corpus, made by
 * perf record): header, attrs and names, features, build-ids, records and
 * their attrs; every truncation of a file is refused with an offset, never
 * read past; the symbolizer fed from the same file. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <hwc/hwc.h>
#include <hwc/perfdata.h>
#include <hwc/sample.h>
#include <hwc/symbol.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void *slurp(const char *name, size_t *size)
{
	char path[4096];
	const char *src = getenv("HWC_SRC");
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/perfdata/%s", src ? src : ".", name);
	int fd = open(path, O_RDONLY);
	struct stat st;
	if ((fd < 0 || fstat(fd, &st) < 0) && src) { /* tests/run's tree lacks its own corpus */
		fprintf(stderr, "FAIL: cannot read %s: %s\n", path, strerror(errno));
		exit(1);
	}
	if (fd < 0 || fstat(fd, &st) < 0)
		SKIP("cannot read %s (run from the source tree or set HWC_SRC)", path);
	void *p = malloc((size_t)st.st_size);
	CHECK(read(fd, p, (size_t)st.st_size) == st.st_size);
	close(fd);
	*size = (size_t)st.st_size;
	return p;
}

#define CHECK_NO_DETAIL()                                                             \
	do {                                                                             \
		if (hwc_errdetail()[0]) {                                                \
			fprintf(stderr, "%s:%d: detail left after a success: \"%s\"\n",     \
				__FILE__, __LINE__, hwc_errdetail());                     \
			check_failures++;                                                \
		}                                                                        \
	} while (0)

/* Leave a detail that names no offset: a failure of another function. */
static void stale_detail(void)
{
	hwc_evlist *l;
	CHECK_INT(hwc_evlist_new(&l), ==, 0);
	CHECK_INT(hwc_evlist_add(l, "no-such-event-at-all"), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "unknown event");
	hwc_evlist_free(l);
}

static void test_fp_recording(void)
{
	size_t size;
	void *data = slurp("fp-small.data", &size);
	hwc_perfdata *f;
	CHECK_INT(hwc_perfdata_open_mem(&f, data, size), ==, 0);
	if (!f)
		return;
	CHECK_INT(hwc_perfdata_nattrs(f), ==, 1);
	const struct hwc_perfdata_attr *a = hwc_perfdata_attr(f, 0);
	CHECK_STR_EQ(a->name, "cpu-clock");
	CHECK_INT(a->attr.type, ==, PERF_TYPE_SOFTWARE);
	CHECK(a->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
	CHECK(a->nids >= 1);
	CHECK(hwc_perfdata_attr_by_id(f, a->ids[0]) == a);
	CHECK(hwc_perfdata_attr_by_id(f, 0xdeadbeef) == NULL);
	CHECK(hwc_perfdata_string(f, HWC_FEAT_HOSTNAME) != NULL);
	CHECK_STR_CONTAINS(hwc_perfdata_string(f, HWC_FEAT_CMDLINE), "perf record");
	CHECK_STR_CONTAINS(hwc_perfdata_string(f, HWC_FEAT_ARCH), "x86_64");
	bool kernel_bid = false;
	for (size_t i = 0; i < hwc_perfdata_nbuildids(f); i++) {
		const struct hwc_perfdata_buildid *b = hwc_perfdata_buildid(f, i);
		CHECK_INT(b->size, ==, 20);
		kernel_bid |= strcmp(b->filename, "[kernel.kallsyms]") == 0;
	}
	CHECK(kernel_bid);
	const void *raw;
	size_t rawsize;
	CHECK_INT(hwc_perfdata_feature(f, HWC_FEAT_HOSTNAME, &raw, &rawsize), ==, 0);
	CHECK(rawsize >= 8);
	CHECK_INT(hwc_perfdata_feature(f, HWC_FEAT_COMPRESSED, &raw, &rawsize), ==, -ENOENT);
	struct hwc_perfdata_record r;
	int samples = 0, mmaps = 0, forks = 0, rc, records = 0;
	uint64_t off, dsize, last = 0;
	hwc_perfdata_data_section(f, &off, &dsize);
	while ((rc = hwc_perfdata_next(f, &r)) > 0) {
		CHECK((uintptr_t)r.hdr % 8 == 0);
		CHECK(r.offset >= off && r.offset + r.hdr->size <= off + dsize);
		CHECK(r.offset >= last);
		last = r.offset;
		records++;
		if (r.hdr->type == PERF_RECORD_SAMPLE) {
			struct hwc_sample s;
			CHECK(r.attr == a);
			CHECK_INT(hwc_sample_parse(r.hdr, &a->attr, &s), ==, 0);
			CHECK(s.nr_callchain >= 1);
			samples++;
		}
		mmaps += r.hdr->type == PERF_RECORD_MMAP2;
		forks += r.hdr->type == PERF_RECORD_FORK;
		if (r.hdr->type >= 64)
			CHECK(r.attr == NULL);
	}
	CHECK_INT(rc, ==, 0);
	CHECK(samples > 10);
	CHECK(mmaps >= 2);
	CHECK(forks >= 1);
	CHECK_STR_EQ(hwc_record_type_name(PERF_RECORD_MMAP2), "MMAP2");
	CHECK_STR_EQ(hwc_record_type_name(68), "FINISHED_ROUND");
	/* Rewind gives the same records again. */
	hwc_perfdata_rewind(f);
	int again = 0;
	while (hwc_perfdata_next(f, &r) > 0)
		again++;
	CHECK_INT(again, ==, records);

	/* The symbolizer: kernel addresses by kallsyms (root) or [unknown];
	 * addresses of no process are [unknown] with their address. */
	hwc_symbols *s;
	CHECK_INT(hwc_symbols_new(&s, HWC_SYM_SRCLINE), ==, 0);
	CHECK_INT(hwc_symbols_load(s, f), ==, 0);
	const struct hwc_location *l = hwc_symbols_resolve(s, 4242424, 0, 0x1234, false);
	CHECK(!l->sym->known);
	CHECK_STR_EQ(l->sym->name, "[unknown]");
	CHECK_U64(l->dso_offset, ==, 0x1234);
	CHECK(hwc_symbols_resolve(s, 4242424, 0, 0x1234, false) == l); /* cached */
	const struct hwc_location *k = hwc_symbols_resolve(s, 0, 0, 0xffffffff81000000ULL, true);
	CHECK(k->sym->kernel);
	CHECK_STR_EQ(hwc_symbols_comm(s, 4242424, 0), "[unknown]");
	hwc_symbols_free(s);
	hwc_perfdata_close(f);

	/* Every truncation: refused with an offset in the detail, or (cut on a
	 * record boundary inside the data, sizes patched) fewer records.  Each
	 * call starts after another function's failure, so a detail left from
	 * before cannot pass for this one's. */
	uint8_t *copy = malloc(size);
	for (size_t cut = 0; cut < size; cut += cut < 1024 ? 1 : 97) {
		memcpy(copy, data, cut);
		hwc_perfdata *t;
		stale_detail();
		int err = hwc_perfdata_open_mem(&t, copy, cut);
		if (err) {
			CHECK(err == -EINVAL || err == -ENOTSUP);
			CHECK_STR_CONTAINS(hwc_errdetail(), "offset");
			continue;
		}
		CHECK_NO_DETAIL();
		stale_detail();
		while ((err = hwc_perfdata_next(t, &r)) > 0)
			;
		if (err)
			CHECK_STR_CONTAINS(hwc_errdetail(), "offset");
		else
			CHECK_NO_DETAIL();
		hwc_perfdata_close(t);
	}
	free(copy);
	free(data);
}

static void test_two_events(void)
{
	size_t size;
	void *data = slurp("two-events.data", &size);
	hwc_perfdata *f;
	CHECK_INT(hwc_perfdata_open_mem(&f, data, size), ==, 0);
	if (!f)
		return;
	CHECK_INT(hwc_perfdata_nattrs(f), ==, 2);
	CHECK_STR_EQ(hwc_perfdata_attr(f, 0)->name, "cpu-clock");
	CHECK_STR_EQ(hwc_perfdata_attr(f, 1)->name, "page-faults");
	struct hwc_perfdata_record r;
	int per[2] = {0, 0};
	while (hwc_perfdata_next(f, &r) > 0)
		if (r.hdr->type == PERF_RECORD_SAMPLE) {
			CHECK(r.attr != NULL);
			if (r.attr)
				per[r.attr - hwc_perfdata_attr(f, 0)]++;
		}
	CHECK(per[0] > 0);
	hwc_perfdata_close(f);
	free(data);
}

/* perf record -z's file: its samples come out of the compressed records,
 * each with the offset of the one it came from. */
static void test_perf_compressed(void)
{
	size_t size;
	uint8_t *data = slurp("perf-z-small.data", &size);
	hwc_perfdata *f;
	CHECK_INT(hwc_perfdata_open_mem(&f, data, size), ==, 0);
	if (!f)
		return;
	CHECK(hwc_perfdata_has_feature(f, HWC_FEAT_COMPRESSED));
	struct hwc_perfdata_record r;
	int samples = 0, n;
	while ((n = hwc_perfdata_next(f, &r)) > 0) {
		CHECK(r.hdr->type != HWC_RECORD_COMPRESSED);
		if (r.hdr->type != PERF_RECORD_SAMPLE)
			continue;
		samples++;
		CHECK(r.attr == hwc_perfdata_attr(f, 0));
		struct perf_event_header h;
		memcpy(&h, data + r.offset, sizeof(h));
		CHECK_INT(h.type, ==, HWC_RECORD_COMPRESSED);
	}
	CHECK_INT(n, ==, 0);
	CHECK(samples > 50);
	hwc_perfdata_close(f);
	free(data);
}

/* hwc's writer: user records of incompressible bytes, more than one
 * compressed record holds, so that records straddle two; read back whole. */
static void test_compressed_round_trip(void)
{
	char dir[] = "/tmp/hwc-zstd-XXXXXX", path[64];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/z.data", dir);
	hwc_recording *rec;
	CHECK_INT(hwc_recording_create(&rec, path), ==, 0);
	if (!rec)
		return;
	CHECK_INT(hwc_recording_set_compression(rec, 23), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "compression level 23");
	CHECK_INT(hwc_recording_set_compression(rec, 3), ==, 0);
	enum { N = 600, LEN = 4000 };
	static uint8_t payload[N][LEN];
	uint64_t x = 88172645463325252ULL;
	for (int i = 0; i < N; i++)
		for (int k = 0; k < LEN; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			payload[i][k] = (uint8_t)(k < LEN / 2 ? x : (uint64_t)i); /* half compresses */
		}
	for (int i = 0; i < N; i++)
		CHECK_INT(hwc_recording_write_user(rec, payload[i], LEN), ==, 0);
	CHECK_INT(hwc_recording_set_compression(rec, 1), ==, -EBUSY);
	CHECK_INT(hwc_recording_close(rec, NULL), ==, 0);
	hwc_perfdata *f;
	CHECK_INT(hwc_perfdata_open(&f, path), ==, 0);
	if (f) {
		const void *feat;
		size_t fsize;
		CHECK_INT(hwc_perfdata_feature(f, HWC_FEAT_COMPRESSED, &feat, &fsize), ==, 0);
		uint32_t comp[5] = {0};
		memcpy(comp, feat, fsize < sizeof(comp) ? fsize : sizeof(comp));
		CHECK_INT(fsize, ==, 20);
		CHECK_INT(comp[1], ==, 1); /* zstd */
		CHECK_INT(comp[2], ==, 3);
		struct hwc_perfdata_record r;
		int got = 0, n;
		uint64_t first = UINT64_MAX, last = 0;
		while ((n = hwc_perfdata_next(f, &r)) > 0) {
			if (r.hdr->type != PERF_RECORD_SAMPLE || got >= N)
				continue;
			/* header, 6 u64s, the raw size, the bytes */
			const uint8_t *raw = (const uint8_t *)r.hdr + 8 + 6 * 8 + 4;
			if (memcmp(raw, payload[got], LEN))
				CHECK_INT(got, ==, -1); /* record GOT came back changed */
			got++;
			first = r.offset < first ? r.offset : first;
			last = r.offset > last ? r.offset : last;
		}
		CHECK_INT(n, ==, 0);
		CHECK_INT(got, ==, N);
		CHECK(last > first); /* more than one compressed record */
		hwc_perfdata_close(f);
	}
	unlink(path);
	rmdir(dir);
}

/* The same into a pipe: perf's pipe mode, the COMPRESSED feature as a
 * HEADER_FEATURE record before the compressed records. */
static void test_compressed_pipe(void)
{
	int fds[2];
	CHECK_INT(pipe(fds), ==, 0);
	fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	hwc_recording *rec;
	CHECK_INT(hwc_recording_fdopen(&rec, fds[1]), ==, 0);
	if (!rec)
		return;
	CHECK_INT(hwc_recording_set_compression(rec, 1), ==, 0);
	static char text[40][1000];
	for (int i = 0; i < 40; i++) {
		snprintf(text[i], sizeof(text[i]), "user record %d", i);
		CHECK_INT(hwc_recording_write_user(rec, text[i], sizeof(text[i])), ==, 0);
	}
	CHECK_INT(hwc_recording_close(rec, NULL), ==, 0);
	close(fds[1]);
	static uint8_t stream[1 << 20];
	size_t len = 0;
	ssize_t n;
	while ((n = read(fds[0], stream + len, sizeof(stream) - len)) > 0)
		len += (size_t)n;
	close(fds[0]);
	CHECK(len < 40 * 1000 / 4); /* compressed */
	hwc_perfdata *f;
	CHECK_INT(hwc_perfdata_open_mem(&f, stream, len), ==, 0);
	if (!f)
		return;
	CHECK(hwc_perfdata_has_feature(f, HWC_FEAT_COMPRESSED));
	struct hwc_perfdata_record r;
	int got = 0;
	while (hwc_perfdata_next(f, &r) > 0)
		if (r.hdr->type == PERF_RECORD_SAMPLE && got < 40)
			CHECK_STR_EQ((const char *)r.hdr + 8 + 6 * 8 + 4, text[got++]);
	CHECK_INT(got, ==, 40);
	hwc_perfdata_close(f);
}

static void test_open_errors(void)
{
	hwc_perfdata *f;
	CHECK_INT(hwc_perfdata_open(&f, "/nonexistent/perf.data"), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "/nonexistent/perf.data");
	CHECK(f == NULL);
	CHECK_INT(hwc_perfdata_open(&f, "/dev/null"), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "not a regular file");
	static const char junk[64] = "PERFILE2";
	CHECK_INT(hwc_perfdata_open_mem(&f, junk, sizeof(junk)), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "offset 8");
}

/* A pipe-mode stream of N user records, written by a child into a pipe
 * (hwc_recording_fdopen), as `hwc record -o - | ...` does; the read end. */
static int user_stream(int n)
{
	int p[2];
	CHECK_INT(pipe(p), ==, 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		hwc_recording *rec;
		if (hwc_recording_fdopen(&rec, p[1]))
			_exit(1);
		for (int i = 0; i < n; i++)
			if (hwc_recording_write_user(rec, "pipe-mode", 9))
				_exit(1);
		_exit(hwc_recording_close(rec, NULL) ? 1 : 0);
	}
	close(p[1]);
	return p[0];
}

static int count_samples(hwc_perfdata *f)
{
	struct hwc_perfdata_record r;
	int n = 0;
	while (hwc_perfdata_next(f, &r) > 0)
		n += r.hdr->type == PERF_RECORD_SAMPLE;
	return n;
}

/* hwc_perfdata_open_fd: a regular file is read as hwc_perfdata_open reads
 * it; a stream on a pipe to its end (through a temporary file); other
 * kinds and an unusable TMPDIR are refused with what to do. */
static void test_open_fd(void)
{
	hwc_perfdata *f, *g;
	char path[4096];
	const char *src = getenv("HWC_SRC");
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/perfdata/fp-small.data", src ? src : ".");
	int fd = open(path, O_RDONLY);
	if (fd < 0 && src) {
		fprintf(stderr, "  cannot read %s: %s\n", path, strerror(errno));
		check_failures++;
		return;
	}
	if (fd < 0)
		SKIP_SUB("cannot read the corpus (run from the source tree or set HWC_SRC)");
	stale_detail();
	CHECK_OK(hwc_perfdata_open_fd(&f, fd));
	CHECK_NO_DETAIL();
	close(fd);
	CHECK_OK(hwc_perfdata_open(&g, path));
	if (f && g) {
		CHECK_INT(hwc_perfdata_nattrs(f), ==, 1);
		CHECK_INT(count_samples(f), ==, count_samples(g));
	}
	hwc_perfdata_close(f);
	hwc_perfdata_close(g);

	/* 3000 records: more than a pipe holds, so the writer needs the reader. */
	fd = user_stream(3000);
	CHECK_OK(hwc_perfdata_open_fd(&f, fd));
	close(fd);
	int status;
	wait(&status);
	CHECK_INT(status, ==, 0);
	if (f) {
		CHECK_INT(count_samples(f), ==, 3000);
		uint64_t off, size;
		hwc_perfdata_data_section(f, &off, &size);
		CHECK_U64(off, ==, 16); /* pipe mode */
	}
	hwc_perfdata_close(f);

	fd = open("/dev/null", O_RDONLY);
	CHECK_INT(hwc_perfdata_open_fd(&f, fd), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "neither a regular file nor a pipe");
	close(fd);

	const char *tmpdir = getenv("TMPDIR");
	char *saved = tmpdir ? strdup(tmpdir) : NULL;
	setenv("TMPDIR", "/nonexistent/tmp", 1);
	fd = user_stream(1);
	CHECK_INT(hwc_perfdata_open_fd(&f, fd), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "set TMPDIR");
	close(fd);
	wait(&status);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
}

/* After another function's failure, a success leaves no detail and a
 * failure's detail is its own: never text left from before. */
static void test_detail_is_fresh(void)
{
	size_t size;
	void *data = slurp("fp-small.data", &size);
	hwc_perfdata *f;
	stale_detail();
	CHECK_INT(hwc_perfdata_open_mem(&f, data, size), ==, 0);
	CHECK_NO_DETAIL();
	struct hwc_perfdata_record r;
	stale_detail();
	CHECK_INT(hwc_perfdata_next(f, &r), ==, 1);
	CHECK_NO_DETAIL();
	stale_detail();
	CHECK_INT(hwc_perfdata_feature(f, 9999, &(const void *){NULL}, &(size_t){0}), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "no header feature 9999");
	hwc_perfdata_close(f);

	/* Counting: a skipped event's value names its own reason. */
	hwc_evlist *l;
	CHECK_INT(hwc_evlist_new(&l), ==, 0);
	CHECK_INT(hwc_evlist_add(l, "task-clock,instructions"), ==, 0);
	struct hwc_target self = {.kind = HWC_TARGET_SELF, .flags = HWC_SKIP_UNSUPPORTED};
	hwc_counters *c = NULL;
	CHECK_INT(hwc_counters_open(&c, l, &self), ==, 0);
	if (c && hwc_counters_event_status(c, 1) == 0) {
		fprintf(stderr, "test_detail_is_fresh: instructions opens here: skipped event not "
				"checked\n");
	} else if (c) {
		struct hwc_value v;
		stale_detail();
		CHECK_INT(hwc_counters_value(c, HWC_ALL, 1, &v), ==, hwc_counters_event_status(c, 1));
		CHECK_STR_CONTAINS(hwc_errdetail(), "instructions");
	}
	stale_detail();
	CHECK_INT(hwc_counters_read(c), ==, 0);
	CHECK_NO_DETAIL();
	hwc_counters_close(c);
	hwc_evlist_free(l);
	int cpus[1];
	stale_detail();
	CHECK(hwc_online_cpus(cpus, 1) > 0);
	CHECK_NO_DETAIL();
	free(data);
}

/* hwc_symbols_set_root() takes a directory (tests/pmcstat.py reads a
 * program moved under one through it, with pmcstat -r). */
static void test_set_root(void)
{
	hwc_symbols *s;
	CHECK_INT(hwc_symbols_new(&s, 0), ==, 0);
	CHECK_INT(hwc_symbols_set_root(s, "/nonexistent-root"), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "\"/nonexistent-root\": No such file or directory");
	CHECK_INT(hwc_symbols_set_root(s, "/etc/passwd"), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "is not a directory");
	CHECK_INT(hwc_symbols_set_root(s, "/"), ==, 0);
	CHECK_STR_EQ(hwc_errdetail(), "");
	CHECK_INT(hwc_symbols_set_root(s, NULL), ==, 0);
	hwc_symbols_free(s);
}

/* perf.data is not time-ordered across CPUs: a child's FORK can come
 * before its parent's exec COMM in the file (perf record's workload is
 * "perf-exec" until it execs).  The child must still be named after what
 * its parent was called when it forked.  Records built by hand, in the
 * order a two-CPU recording can have them, since the kernel cannot be
 * made to interleave its buffers on demand. */
static void test_comm_out_of_order(void)
{
	hwc_symbols *s;
	CHECK_INT(hwc_symbols_new(&s, 0), ==, 0);
	struct perf_event_attr attr = {.size = sizeof(attr)}; /* no sample_id_all: times in bodies */
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[16];
	} pre = {{PERF_RECORD_COMM, 0, sizeof(pre)}, 100, 100, "perf-exec"},
	  exec = {{PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(exec)}, 100, 100, "hotspots"};
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} fork1 = {{PERF_RECORD_FORK, 0, sizeof(fork1)}, 200, 100, 200, 100, 50};
	/* File order: the pre-exec name, the child's fork, then the exec. */
	CHECK_INT(hwc_symbols_record(s, &pre.h, &attr), ==, 0);
	CHECK_INT(hwc_symbols_record(s, &fork1.h, &attr), ==, 0);
	CHECK_INT(hwc_symbols_record(s, &exec.h, &attr), ==, 0);
	CHECK_STR_EQ(hwc_symbols_comm(s, 200, 60), "hotspots");
	CHECK_STR_EQ(hwc_symbols_comm(s, 100, 60), "hotspots");
	/* A grandchild follows the chain. */
	fork1.pid = fork1.tid = 300;
	fork1.ppid = fork1.ptid = 200;
	fork1.time = 70;
	CHECK_INT(hwc_symbols_record(s, &fork1.h, &attr), ==, 0);
	CHECK_STR_EQ(hwc_symbols_comm(s, 300, 80), "hotspots");
	/* A child that execs something else has its own name from then on. */
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[16];
	} own = {{PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(own)}, 300, 300, "sh"};
	CHECK_INT(hwc_symbols_record(s, &own.h, &attr), ==, 0);
	CHECK_STR_EQ(hwc_symbols_comm(s, 300, 90), "sh");
	/* The idle task (thread 0) has no COMM record: perf calls it swapper.
	 * A name recorded for it wins. */
	CHECK_STR_EQ(hwc_symbols_comm(s, 0, 90), "swapper");
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[16];
	} idle = {{PERF_RECORD_COMM, 0, sizeof(idle)}, 0, 0, "idle0"};
	CHECK_OK(hwc_symbols_record(s, &idle.h, &attr));
	CHECK_STR_EQ(hwc_symbols_comm(s, 0, 90), "idle0");

	/* One process exec'ing twice, the second exec's COMM first in the
	 * file (its CPU's buffer written first): each name from its exec on. */
	struct perf_event_attr timed = {.size = sizeof(timed), .sample_type = PERF_SAMPLE_TIME,
					.sample_id_all = 1};
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[16];
		uint64_t time; /* sample_id_all's */
	} second = {{PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(second)}, 400, 400, "two", 2000},
	  first = {{PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(first)}, 400, 400, "one", 1000};
	CHECK_OK(hwc_symbols_record(s, &second.h, &timed));
	CHECK_OK(hwc_symbols_record(s, &first.h, &timed));
	CHECK_STR_EQ(hwc_symbols_comm(s, 400, 1500), "one");
	CHECK_STR_EQ(hwc_symbols_comm(s, 400, 2500), "two");
	hwc_symbols_free(s);
}

/* hwc_symbols_span(): the times around a sample's over which its process's
 * addresses and its thread's name resolve the same, cut by every map
 * (one file replacing another at the same address), a name, and a fork
 * (before it the parent's maps count).  Records built by hand: timed
 * maps of files that need not exist (their addresses name the DSO). */
static void test_span(void)
{
	hwc_symbols *s;
	CHECK_INT(hwc_symbols_new(&s, 0), ==, 0);
	struct perf_event_attr attr = {.size = sizeof(attr), .sample_type = PERF_SAMPLE_TIME,
				       .sample_id_all = 1};
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		char name[16];
		uint64_t time;
	} a = {{PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, sizeof(a)}, 500, 500, 0x400000, 0x1000, 0,
	       "/nonexistent/a", 100},
	  b = {{PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, sizeof(b)}, 500, 500, 0x400000, 0x1000, 0,
	       "/nonexistent/b", 200};
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char comm[16];
		uint64_t time;
	} comm = {{PERF_RECORD_COMM, 0, sizeof(comm)}, 500, 501, "worker", 300};
	struct {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
		uint64_t trailer;
	} fork1 = {{PERF_RECORD_FORK, 0, sizeof(fork1)}, 600, 500, 600, 500, 150, 150};
	CHECK_OK(hwc_symbols_record(s, &b.h, &attr)); /* file order need not be time order */
	CHECK_OK(hwc_symbols_record(s, &a.h, &attr));
	CHECK_OK(hwc_symbols_record(s, &comm.h, &attr));
	CHECK_OK(hwc_symbols_record(s, &fork1.h, &attr));
	uint64_t from, to;
	hwc_symbols_span(s, 500, 500, 150, &from, &to);
	CHECK_U64(from, ==, 100);
	CHECK_U64(to, ==, 200);
	CHECK_STR_EQ(hwc_symbols_resolve(s, 500, 199, 0x400010, false)->sym->dso, "/nonexistent/a");
	CHECK_STR_EQ(hwc_symbols_resolve(s, 500, 200, 0x400010, false)->sym->dso, "/nonexistent/b");
	hwc_symbols_span(s, 500, 500, 50, &from, &to);
	CHECK_U64(from, ==, 0);
	CHECK_U64(to, ==, 100);
	hwc_symbols_span(s, 500, 500, 250, &from, &to);
	CHECK_U64(from, ==, 200);
	CHECK_U64(to, ==, UINT64_MAX);
	/* Thread 501 is renamed at 300. */
	hwc_symbols_span(s, 500, 501, 250, &from, &to);
	CHECK_U64(from, ==, 200);
	CHECK_U64(to, ==, 300);
	/* Process 600, forked at 150, sees its parent's maps as at the fork. */
	hwc_symbols_span(s, 600, 600, 120, &from, &to);
	CHECK_U64(from, ==, 100);
	CHECK_U64(to, ==, 151);
	hwc_symbols_span(s, 600, 600, 250, &from, &to);
	CHECK_U64(from, ==, 151);
	CHECK_U64(to, ==, UINT64_MAX);
	CHECK_STR_EQ(hwc_symbols_resolve(s, 600, 250, 0x400010, false)->sym->dso, "/nonexistent/a");
	/* A process no record named: one span. */
	hwc_symbols_span(s, 700, 700, 250, &from, &to);
	CHECK_U64(from, ==, 0);
	CHECK_U64(to, ==, UINT64_MAX);
	hwc_symbols_free(s);
}

/* Kernel addresses are named from /proc/kallsyms: a core kernel function
 * and, when modules are loaded, a module's, each with its DSO.  The test
 * reads the file with sscanf, the oracle of the symbolizer's own parser,
 * and picks functions alone at their address (a neighbour sharing it could
 * be named instead). */
struct kpick {
	unsigned long long addr;
	char name[256], dso[160];
};

static void test_kallsyms_names(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f) {
		SKIP_SUB("no /proc/kallsyms: not checked");
		return;
	}
	char line[512], name[256], module[128];
	unsigned long long addr, prev = 0;
	char type;
	struct kpick core = {0}, mod = {0}, cand = {0};
	bool have_cand = false;
	while (fgets(line, sizeof(line), f)) {
		module[0] = '\0';
		if (sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, module) < 3)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		/* The candidate stands if the next function starts elsewhere. */
		if (have_cand && addr != cand.addr) {
			/* The last of the core kernel's (a table read in part
			 * misses it), the first module's. */
			struct kpick *dst = strcmp(cand.dso, "[kernel.kallsyms]") == 0 ? &core : &mod;
			if (!dst->addr || dst == &core)
				*dst = cand;
		}
		have_cand = addr && addr != prev && (type == 't' || type == 'T');
		if (have_cand) {
			cand.addr = addr;
			snprintf(cand.name, sizeof(cand.name), "%s", name);
			snprintf(cand.dso, sizeof(cand.dso), "[%s]", module[0] ? module : "kernel.kallsyms");
		}
		prev = addr;
	}
	fclose(f);
	if (!core.addr) {
		SKIP_SUB("kallsyms hides addresses (not root): not checked");
		return;
	}
	/* Read on first use, and with HWC_SYM_THREAD on a thread of its own
	 * from hwc_symbols_load() on (a recording of the kernel too). */
	size_t size;
	void *data = slurp("fp-small.data", &size);
	for (int threaded = 0; threaded < 2; threaded++) {
		hwc_symbols *s;
		hwc_perfdata *pd = NULL;
		CHECK_INT(hwc_symbols_new(&s, threaded ? HWC_SYM_THREAD : 0), ==, 0);
		if (threaded) {
			CHECK_INT(hwc_perfdata_open_mem(&pd, data, size), ==, 0);
			CHECK(!hwc_perfdata_attr(pd, 0)->attr.exclude_kernel);
			CHECK_INT(hwc_symbols_load(s, pd), ==, 0);
		}
		struct kpick *picks[] = {&core, &mod};
		for (size_t i = 0; i < 2; i++) {
			const struct kpick *k = picks[i];
			if (!k->addr) {
				if (!threaded)
					SKIP_SUB("no module loaded: module names not checked");
				continue;
			}
			const struct hwc_location *l = hwc_symbols_resolve(s, 0, 0, k->addr, true);
			CHECK(l->sym->known && l->sym->kernel);
			CHECK_U64(l->sym->start, ==, k->addr);
			CHECK_STR_EQ(l->sym->name, k->name);
			CHECK_STR_EQ(l->sym->dso, k->dso);
			if (strcmp(l->sym->name, k->name) || strcmp(l->sym->dso, k->dso))
				fprintf(stderr, "at %#llx: %s in %s, expected %s in %s\n", k->addr,
					l->sym->name, l->sym->dso, k->name, k->dso);
		}
		hwc_symbols_free(s);
		hwc_perfdata_close(pd);
	}
	/* A read never taken is waited for and freed (the sanitizer build
	 * checks the leak). */
	hwc_symbols *s;
	hwc_perfdata *pd;
	CHECK_INT(hwc_symbols_new(&s, HWC_SYM_THREAD), ==, 0);
	CHECK_INT(hwc_perfdata_open_mem(&pd, data, size), ==, 0);
	CHECK_INT(hwc_symbols_load(s, pd), ==, 0);
	hwc_symbols_free(s);
	hwc_perfdata_close(pd);
	free(data);
}

int main(void)
{
	RUN(test_comm_out_of_order);
	RUN(test_span);
	RUN(test_fp_recording);
	RUN(test_two_events);
	RUN(test_perf_compressed);
	RUN(test_compressed_round_trip);
	RUN(test_compressed_pipe);
	RUN(test_open_errors);
	RUN(test_open_fd);
	RUN(test_detail_is_fresh);
	RUN(test_kallsyms_names);
	RUN(test_set_root);
	return check_exit();
}
