/* hwc_output, the one way hwc writes a file: the target is replaced only at
 * the commit, a previous file kept as NAME.old on request; symbolic links,
 * FIFOs, devices and directories at the name are refused and left alone;
 * a write error or a discard removes only the temporary file.  And
 * recordings made through it: a discarded one leaves the previous file.
 * And the internal way the build-id cache (src/symbol_vdso.c) writes
 * through it, hwc__output_createat(): relative to a directory descriptor,
 * and with HWC__OUTPUT_NOREPLACE never over a file that appeared; reached
 * through src/ and libhwc.a, as tests/symtab.c does. */
#include "check.h"
#include "internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <hwc/output.h>
#include <hwc/sample.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static char tmpdir[] = "/tmp/hwc-output-XXXXXX";

static const char *at(const char *name)
{
	static char path[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", tmpdir, name);
	return path[k];
}

static const char *get(const char *path)
{
	static char buf[256];
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return "(missing)";
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Files in the directory whose names contain ".tmp-": none may be left. */
static int temporaries(void)
{
	DIR *d = opendir(tmpdir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strstr(e->d_name, ".tmp-") != NULL;
	if (d)
		closedir(d);
	return n;
}

static void test_new_file(void)
{
	const char *path = at("new.txt");
	hwc_output *o;
	CHECK_INT(hwc_output_create(&o, path, 0), ==, 0);
	if (!o)
		return;
	CHECK(hwc_output_fd(o) >= 0);
	CHECK(fcntl(hwc_output_fd(o), F_GETFD) & FD_CLOEXEC);
	CHECK_STR_CONTAINS(hwc_output_tmpname(o), "new.txt.tmp-");
	CHECK_INT(access(hwc_output_tmpname(o), F_OK), ==, 0);
	FILE *f = hwc_output_stream(o);
	CHECK(f != NULL);
	CHECK(hwc_output_stream(o) == f); /* made once */
	fputs("hello\n", f);
	CHECK_INT(access(path, F_OK), ==, -1); /* not there before the commit */
	CHECK_INT(hwc_output_commit(o), ==, 0);
	CHECK_STR_CONTAINS(get(path), "hello\n");
	CHECK_INT(temporaries(), ==, 0);
	/* 0666 less the umask, as fopen() would make it. */
	mode_t mask = umask(022);
	umask(mask);
	struct stat st;
	CHECK_INT(stat(path, &st), ==, 0);
	CHECK_INT(st.st_mode & 0777, ==, 0666 & ~mask);
}

static void test_private_and_descriptor(void)
{
	const char *path = at("private.bin");
	hwc_output *o;
	CHECK_INT(hwc_output_create(&o, path, HWC_OUTPUT_PRIVATE), ==, 0);
	if (!o)
		return;
	CHECK_INT(write(hwc_output_fd(o), "abc", 3), ==, 3);
	CHECK_INT(hwc_output_commit(o), ==, 0);
	struct stat st;
	CHECK_INT(stat(path, &st), ==, 0);
	CHECK_INT(st.st_mode & 0777, ==, 0600);
	CHECK_STR_CONTAINS(get(path), "abc");
}

static void test_replace_and_keep_old(void)
{
	const char *path = at("r.txt"), *old = at("r.txt.old");
	check_write_file(path, "first", 0644);
	hwc_output *o;
	/* Without the flag, the previous file is replaced, not kept. */
	CHECK_INT(hwc_output_create(&o, path, 0), ==, 0);
	fputs("second", hwc_output_stream(o));
	CHECK_INT(hwc_output_commit(o), ==, 0);
	CHECK_STR_CONTAINS(get(path), "second");
	CHECK_INT(access(old, F_OK), ==, -1);
	CHECK_INT(hwc_output_create(&o, path, HWC_OUTPUT_KEEP_OLD), ==, 0);
	fputs("third", hwc_output_stream(o));
	CHECK_STR_CONTAINS(get(path), "second"); /* untouched until the commit */
	CHECK_INT(hwc_output_commit(o), ==, 0);
	CHECK_STR_CONTAINS(get(path), "third");
	CHECK_STR_CONTAINS(get(old), "second");
	CHECK_INT(temporaries(), ==, 0);
}

static void test_discard(void)
{
	const char *path = at("d.txt");
	check_write_file(path, "kept", 0644);
	hwc_output *o;
	CHECK_INT(hwc_output_create(&o, path, HWC_OUTPUT_KEEP_OLD), ==, 0);
	fputs("lost", hwc_output_stream(o));
	hwc_output_discard(o);
	hwc_output_discard(NULL);
	CHECK_STR_CONTAINS(get(path), "kept");
	CHECK_INT(access(at("d.txt.old"), F_OK), ==, -1);
	CHECK_INT(temporaries(), ==, 0);
}

/* Each kind of non-regular file is refused at the create, left as it was. */
static void test_refused(void)
{
	hwc_output *o = (hwc_output *)1;
	check_write_file(at("victim"), "victim", 0644);
	CHECK_INT(symlink(at("victim"), at("link")), ==, 0);
	CHECK_INT(hwc_output_create(&o, at("link"), 0), ==, -ELOOP);
	CHECK(o == NULL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "it is a symbolic link");
	CHECK_STR_CONTAINS(get(at("victim")), "victim");
	/* A dangling link too: creating through it would make its target. */
	CHECK_INT(symlink(at("nowhere"), at("dangling")), ==, 0);
	CHECK_INT(hwc_output_create(&o, at("dangling"), 0), ==, -ELOOP);
	CHECK_INT(access(at("nowhere"), F_OK), ==, -1);

	CHECK_INT(mkfifo(at("fifo"), 0600), ==, 0);
	CHECK_INT(hwc_output_create(&o, at("fifo"), 0), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "a FIFO");
	CHECK_INT(mkdir(at("dir"), 0700), ==, 0);
	CHECK_INT(hwc_output_create(&o, at("dir"), 0), ==, -EISDIR);
	CHECK_STR_CONTAINS(hwc_errdetail(), "it is a directory");
	CHECK_INT(hwc_output_create(&o, at("dir/"), 0), ==, -EISDIR);
	CHECK_INT(hwc_output_create(&o, "", 0), ==, -EINVAL);
	if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
		CHECK_INT(hwc_output_create(&o, at("null"), 0), ==, -EINVAL);
		CHECK_STR_CONTAINS(hwc_errdetail(), "a character device");
		struct stat st;
		CHECK_INT(lstat(at("null"), &st), ==, 0);
		CHECK(S_ISCHR(st.st_mode));
	} else {
		fprintf(stderr, "test_refused: device node case skipped: mknod: %s\n",
			strerror(errno));
	}
	/* NAME.old must be a regular file too when the previous file is kept. */
	CHECK_INT(mkdir(at("k.txt.old"), 0700), ==, 0);
	CHECK_INT(hwc_output_create(&o, at("k.txt"), HWC_OUTPUT_KEEP_OLD), ==, -EISDIR);
	CHECK_STR_CONTAINS(hwc_errdetail(), "k.txt.old is a directory");
	CHECK_INT(hwc_output_create(&o, at("k.txt"), 0), ==, 0); /* not asked to keep it */
	hwc_output_discard(o);
	CHECK_INT(hwc_output_create(&o, at("no/such/dir"), 0), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "cannot create");
	CHECK_STR_CONTAINS(hwc_errdetail(), "no/such/dir: No such file or directory");
	CHECK_INT(temporaries(), ==, 0);
}

/* Something that takes the name while the output is written is left alone;
 * the data stays in the temporary file, which the detail names. */
static void test_name_taken_meanwhile(void)
{
	const char *path = at("m.txt");
	hwc_output *o;
	CHECK_INT(hwc_output_create(&o, path, 0), ==, 0);
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s", hwc_output_tmpname(o));
	fputs("data", hwc_output_stream(o));
	CHECK_INT(symlink(at("victim"), path), ==, 0);
	CHECK_INT(hwc_output_commit(o), ==, -ELOOP);
	CHECK_STR_CONTAINS(hwc_errdetail(), "the output is left in");
	CHECK_STR_CONTAINS(hwc_errdetail(), tmp);
	CHECK_STR_CONTAINS(get(tmp), "data");
	CHECK_STR_CONTAINS(get(at("victim")), "victim");
	unlink(tmp);
	unlink(path);
}

/* A write error at the commit (a file size limit here) removes the
 * temporary file and leaves the previous file. */
static void test_write_error(void)
{
	const char *path = at("w.txt");
	check_write_file(path, "previous", 0644);
	struct rlimit saved, small = {4096, 0};
	getrlimit(RLIMIT_FSIZE, &saved);
	small.rlim_max = saved.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	hwc_output *o;
	CHECK_INT(hwc_output_create(&o, path, 0), ==, 0);
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &small), ==, 0);
	FILE *f = hwc_output_stream(o);
	for (int i = 0; i < 10000; i++)
		fputs("0123456789", f);
	CHECK_INT(hwc_output_commit(o), ==, -EFBIG);
	setrlimit(RLIMIT_FSIZE, &saved);
	CHECK_STR_CONTAINS(hwc_errdetail(), "cannot write");
	CHECK_STR_CONTAINS(get(path), "previous");
	CHECK_INT(temporaries(), ==, 0);
}

/* Recordings: a discarded one leaves the previous file as it was (hwc
 * record when the command cannot start), a closed one replaces it. */
static void test_recording(void)
{
	const char *path = at("rec.data"), *old = at("rec.data.old");
	check_write_file(path, "an earlier recording", 0644);
	hwc_recording *rec;
	CHECK_INT(hwc_recording_create_flags(&rec, path, HWC_OUTPUT_KEEP_OLD), ==, 0);
	if (!rec)
		return;
	hwc_recording_discard(rec);
	CHECK_STR_CONTAINS(get(path), "an earlier recording");
	CHECK_INT(access(old, F_OK), ==, -1);
	CHECK_INT(temporaries(), ==, 0);
	CHECK_INT(hwc_recording_create_flags(&rec, path, HWC_OUTPUT_KEEP_OLD), ==, 0);
	CHECK_INT(hwc_recording_close(rec, NULL), ==, 0);
	CHECK_STR_CONTAINS(get(old), "an earlier recording");
	CHECK_STR_CONTAINS(get(path), "PERFILE2");
	struct stat st;
	CHECK_INT(stat(path, &st), ==, 0);
	CHECK_INT(st.st_mode & 0777, ==, 0600);
	/* hwc_recording_create() replaces without keeping, as before. */
	CHECK_INT(hwc_recording_create(&rec, old), ==, 0);
	CHECK_INT(hwc_recording_close(rec, NULL), ==, 0);
	CHECK_STR_CONTAINS(get(old), "PERFILE2");
	CHECK_INT(access(at("rec.data.old.old"), F_OK), ==, -1);
	/* A device at the name is refused and stays. */
	if (mknod(at("dev"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
		CHECK_INT(hwc_recording_create(&rec, at("dev")), ==, -EINVAL);
		CHECK_INT(access(at("dev"), F_OK), ==, 0);
	}
	CHECK_INT(temporaries(), ==, 0);
}

/* Entries of DIR (".", ".." aside). */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

/* The directory is swapped for a link to another one between the create
 * and the commit: the file still lands in the directory that was opened. */
static void test_at_directory_swapped(void)
{
	CHECK_INT(mkdir(at("a"), 0700), ==, 0);
	CHECK_INT(mkdir(at("elsewhere"), 0700), ==, 0);
	int dir = open(at("a"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dir >= 0);
	struct hwc_output *o;
	CHECK_INT(hwc__output_createat(&o, dir, "f", HWC__OUTPUT_NOREPLACE), ==, 0);
	close(dir); /* the output keeps its own */
	if (!o)
		return;
	fputs("ours", hwc_output_stream(o));
	CHECK_INT(rename(at("a"), at("b")), ==, 0);
	CHECK_INT(symlink(at("elsewhere"), at("a")), ==, 0);
	CHECK_INT(hwc__output_commit(o), ==, 0);
	CHECK_STR_EQ(get(at("b/f")), "ours");
	CHECK_INT(entries(at("b")), ==, 1);
	CHECK_INT(entries(at("elsewhere")), ==, 0);
}

/* A regular file that appears at the name before the commit is kept (an
 * ordinary output would replace it), and the temporary file goes. */
static void test_at_no_replace(void)
{
	CHECK_INT(mkdir(at("c"), 0700), ==, 0);
	int dir = open(at("c"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dir >= 0);
	struct hwc_output *o;
	CHECK_INT(hwc__output_createat(&o, dir, "kallsyms", HWC__OUTPUT_NOREPLACE |
							       HWC_OUTPUT_PRIVATE),
		  ==, 0);
	if (!o) {
		close(dir);
		return;
	}
	fputs("ours", hwc_output_stream(o));
	check_write_file(at("c/kallsyms"), "theirs", 0644);
	CHECK_INT(hwc__output_commit(o), ==, -EEXIST);
	CHECK_STR_CONTAINS(hwc_errdetail(), "left as it is");
	CHECK_STR_EQ(get(at("c/kallsyms")), "theirs");
	CHECK_INT(entries(at("c")), ==, 1);
	/* With the name free, the same call publishes, private. */
	CHECK_INT(hwc__output_createat(&o, dir, "new", HWC__OUTPUT_NOREPLACE | HWC_OUTPUT_PRIVATE),
		  ==, 0);
	close(dir);
	if (!o)
		return;
	fputs("ours", hwc_output_stream(o));
	CHECK_INT(hwc__output_commit(o), ==, 0);
	CHECK_STR_EQ(get(at("c/new")), "ours");
	struct stat st;
	CHECK_INT(stat(at("c/new"), &st), ==, 0);
	CHECK_INT(st.st_mode & 0777, ==, 0600);
	CHECK_INT(entries(at("c")), ==, 2);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		SKIP("cannot make a temporary directory");
	RUN(test_new_file);
	RUN(test_private_and_descriptor);
	RUN(test_replace_and_keep_old);
	RUN(test_discard);
	RUN(test_refused);
	RUN(test_name_taken_meanwhile);
	RUN(test_write_error);
	RUN(test_recording);
	RUN(test_at_directory_swapped);
	RUN(test_at_no_replace);
	remove_tree(tmpdir);
	return check_exit();
}
