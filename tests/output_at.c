/* hwc__output_createat(), the internal way the build-id cache writes its
 * files (src/symbol_vdso.c): relative to a directory descriptor, so that a
 * directory of the path swapped for a symbolic link after the walk cannot
 * send the file elsewhere; and with HWC__OUTPUT_NOREPLACE, published only
 * as a new name, so that a file that appears at the name before the commit
 * is kept.  An internal of libhwc, reached as tests/symtab.c does. */
#include "check.h"
#include "internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <hwc/output.h>
#include <sys/stat.h>

static char tmpdir[] = "/tmp/hwc-output-at-XXXXXX";

static const char *at(const char *name)
{
	static char path[4][512];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", tmpdir, name);
	return path[k];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
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
static void test_directory_swapped(void)
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
static void test_no_replace(void)
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
	put(at("c/kallsyms"), "theirs");
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
	RUN(test_directory_swapped);
	RUN(test_no_replace);
	remove_tree(tmpdir);
	return check_exit();
}
