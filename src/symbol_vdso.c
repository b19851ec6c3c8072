/* perf's build-id cache, $HOME/.debug/DSO/BUILDID/FILE with perf's link
 * $HOME/.debug/.build-id/XX/REST to its directory: where hwc record keeps
 * the vDSO's image ([vdso]/BUILDID/vdso), so that "[vdso]" addresses
 * resolve on another boot too, and a copy of /proc/kallsyms
 * ([kernel.kallsyms]/BUILDID/kallsyms), which reports read faster than
 * /proc/kallsyms itself. */
#include "internal.h"
#include "symbol_internal.h"

#include "hwc/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hwc__cache_path(char *path, size_t size, const char *dso, const uint8_t *id, size_t len,
		    const char *file)
{
	const char *home = getenv("HOME");
	if (!home || !*home)
		return hwc__fail(-ENOENT, "HOME is not set: no build-id cache for %s", dso);
	char h[41];
	hwc__hex(h, id, len < 20 ? len : 20);
	if ((size_t)snprintf(path, size, "%s/.debug/%s/%s/%s", home, dso, h, file) >= size)
		return hwc__fail(-ENAMETOOLONG, "the build-id cache path of %s under %s is too long",
				 dso, home);
	return 0;
}

/* Directory NAME in DIR (SHOWN for the messages), made when missing: its
 * descriptor or -errno.  It is opened by its name in DIR's descriptor and
 * never through a symbolic link, so that nobody can redirect the walk
 * meanwhile; and it must be this user's: root under sudo -E must not fill
 * another user's cache with files that user cannot remove.  Made 0700: the
 * kallsyms copy in it is secret, and only its owner reads the cache. */
static int open_dir(int dir, const char *name, const char *shown)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(dir, name, 0700) < 0 && errno != EEXIST)
			return hwc__fail(-errno, "cannot create %s: %s", shown, strerror(errno));
		fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 && (errno == ENOTDIR || errno == ELOOP))
		return hwc__fail(-ENOTDIR, "%s is not a directory (a symbolic link is not followed)",
				 shown);
	if (fd < 0)
		return hwc__fail(-errno, "%s: %s", shown, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		int err = hwc__fail(-EPERM, "%s belongs to uid %u, not to this user (uid %u): the "
					    "build-id cache there is left alone",
				    shown, (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return err;
	}
	return fd;
}

/* Open the directories of PATH after its first SKIP bytes (which end
 * with a '/' and name FROM, a directory's descriptor, left open), one by
 * one, made when missing: the last one's descriptor or -errno. */
static int open_dirs(int from, const char *path, size_t skip)
{
	char shown[4096];
	int dir = fcntl(from, F_DUPFD_CLOEXEC, 0);
	if (dir < 0)
		return hwc__fail(-errno, "%.*s: %s", (int)skip - 1, path, strerror(errno));
	for (const char *name = path + skip, *slash; dir >= 0 && (slash = strchr(name, '/'));
	     name = slash + 1) {
		snprintf(shown, sizeof(shown), "%.*s", (int)(slash - path), path);
		int next = open_dir(dir, shown + (name - path), shown);
		close(dir);
		dir = next;
	}
	return dir;
}

/* perf looks the cache up through $HOME/.debug/.build-id/XX/REST, a link
 * to ../../DSO/XXREST: make it unless something is there.  DEBUG is
 * $HOME/.debug's descriptor, FILE the cached file's path (for the names). */
static int link_build_id(int debug, const char *file, const char *dso)
{
	const char *end = strrchr(file, '/'), *bid = end;
	while (bid > file && bid[-1] != '/')
		bid--;
	size_t bidlen = (size_t)(end - bid);
	size_t home = (size_t)(bid - file) - strlen(dso) - 1; /* through "/.debug/" */
	char path[4200], target[4200];
	snprintf(path, sizeof(path), "%.*s.build-id/%.2s/%.*s", (int)home, file, bid,
		 (int)bidlen - 2, bid + 2);
	int dir = open_dirs(debug, path, home);
	if (dir < 0)
		return dir;
	snprintf(target, sizeof(target), "../../%s/%.*s", dso, (int)bidlen, bid);
	int err = 0;
	if (symlinkat(target, dir, strrchr(path, '/') + 1) < 0 && errno != EEXIST)
		err = hwc__fail(-errno, "cannot create %s: %s", path, strerror(errno));
	close(dir);
	return err;
}

int hwc__cache_save(const char *dso, const uint8_t *id, size_t len, const char *name,
		    unsigned flags, int (*same)(int fd, void *arg),
		    int (*write_to)(FILE *f, void *arg), void *arg, char *path, size_t size)
{
	char file[4096];
	int err = hwc__cache_path(file, sizeof(file), dso, id, len, name);
	if (err)
		return err;
	if (path && size && (size_t)snprintf(path, size, "%s", file) >= size)
		return hwc__fail(-ENAMETOOLONG, "%s does not fit %zu bytes", file, size);
	/* HOME itself may be reached through links; below it, nothing is. */
	const char *home = getenv("HOME");
	size_t debug_end = strlen(home) + strlen("/.debug");
	char shown[4096];
	snprintf(shown, sizeof(shown), "%.*s", (int)debug_end, file);
	int dir = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return hwc__fail(-errno, "%s: %s", home, strerror(errno));
	struct stat st;
	if (fstat(dir, &st) < 0 || st.st_uid != geteuid()) {
		err = hwc__fail(-EPERM, "HOME (%s) belongs to uid %u, not to this user (uid %u): "
					"no build-id cache is written there",
				home, (unsigned)st.st_uid, (unsigned)geteuid());
		close(dir);
		return err;
	}
	int debug = open_dir(dir, ".debug", shown);
	close(dir);
	if (debug < 0)
		return debug;
	dir = open_dirs(debug, file, debug_end + 1);
	if (dir < 0) {
		close(debug);
		return dir;
	}
	/* A file there is kept as it is, whoever made it. */
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && same(fd, arg) == 1;
		close(fd);
		err = ok ? 0
			 : hwc__fail(-EEXIST, "%s exists and is not %s's: left as it is", file, dso);
	} else if (errno != ENOENT) {
		err = hwc__fail(-errno, "%s: %s (left as it is)", file, strerror(errno));
	} else {
		/* Written under a temporary name and published only as a new
		 * name: a file that appears meanwhile is kept too. */
		hwc_output *o;
		err = hwc__output_createat(&o, dir, name, flags | HWC__OUTPUT_NOREPLACE);
		FILE *f = err ? NULL : hwc_output_stream(o);
		if (!err && (!f || (err = write_to(f, arg)))) {
			hwc_output_discard(o);
			err = f ? err : -errno;
		} else if (!err) {
			err = hwc__output_commit(o);
		}
		if (err) { /* the output names the file only: say where */
			char why[1024];
			snprintf(why, sizeof(why), "%s", hwc_errdetail());
			hwc__fail(err, "%s: %s", file, why);
		}
	}
	close(dir);
	if (!err)
		err = link_build_id(debug, file, dso);
	close(debug);
	return err;
}

struct vdso_image {
	const uint8_t *p;
	size_t len;
};

/* Does FD (a regular file) hold exactly this image? */
static int same_image(int fd, void *arg)
{
	const struct vdso_image *im = arg;
	struct stat st;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size != im->len)
		return 0;
	uint8_t buf[4096];
	for (size_t off = 0; off < im->len;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0 || memcmp(buf, im->p + off, (size_t)n))
			return 0;
		off += (size_t)n;
	}
	return 1;
}

static int write_image(FILE *f, void *arg)
{
	const struct vdso_image *im = arg;
	fwrite(im->p, 1, im->len, f); /* an error is the commit's */
	return 0;
}

HWC_EXPORT int hwc_symbols_save_vdso(char *path, size_t size)
{
	hwc__clear_error();
	struct vdso_image im;
	uint8_t id[20];
	int err = hwc__vdso_image(&im.p, &im.len);
	if (err)
		return hwc__fail(err, "this process maps no vDSO image that can be read");
	int n = hwc__vdso_build_id(id, sizeof(id));
	if (n <= 0)
		return hwc__fail(-ENOENT, "the vDSO has no build-id");
	return hwc__cache_save("[vdso]", id, (size_t)n, "vdso", 0, same_image, write_image, &im,
			       path, size);
}
