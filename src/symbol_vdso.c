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
	for (size_t i = 0; i < len && i < 20; i++)
		sprintf(h + 2 * i, "%02x", id[i]);
	h[2 * (len < 20 ? len : 20)] = '\0';
	if ((size_t)snprintf(path, size, "%s/.debug/%s/%s/%s", home, dso, h, file) >= size)
		return hwc__fail(-ENAMETOOLONG, "the build-id cache path of %s under %s is too long",
				 dso, home);
	return 0;
}

/* Make directory PATH unless there: one that is there must be a directory,
 * not a symbolic link to one. */
static int make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return hwc__fail(-errno, "cannot create %s: %s", path, strerror(errno));
	struct stat st;
	if (lstat(path, &st) < 0)
		return hwc__fail(-errno, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return hwc__fail(-ENOTDIR, "%s is not a directory (a symbolic link is not followed)",
				 path);
	return 0;
}

/* perf looks the cache up through $HOME/.debug/.build-id/XX/REST, a link
 * to ../../DSO/XXREST: make it unless something is there.  FILE is the
 * cached file, $HOME/.debug/DSO/XXREST/NAME. */
static int link_build_id(const char *file, const char *dso)
{
	const char *end = strrchr(file, '/'), *bid = end;
	while (bid > file && bid[-1] != '/')
		bid--;
	size_t bidlen = (size_t)(end - bid);
	size_t debug = (size_t)(bid - file) - strlen(dso) - 1;
	char dir[4096], link[4200], target[4200];
	snprintf(dir, sizeof(dir), "%.*s.build-id", (int)debug, file);
	int err = make_dir(dir);
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%.2s", bid);
	if (!err)
		err = make_dir(dir);
	if (err)
		return err;
	snprintf(link, sizeof(link), "%s/%.*s", dir, (int)bidlen - 2, bid + 2);
	snprintf(target, sizeof(target), "../../%s/%.*s", dso, (int)bidlen, bid);
	if (symlink(target, link) < 0 && errno != EEXIST)
		return hwc__fail(-errno, "cannot create %s: %s", link, strerror(errno));
	return 0;
}

int hwc__cache_save(const char *dso, const uint8_t *id, size_t len, const char *name,
		    int (*same)(int fd, void *arg), int (*write_to)(FILE *f, void *arg), void *arg,
		    char *path, size_t size)
{
	char file[4096];
	int err = hwc__cache_path(file, sizeof(file), dso, id, len, name);
	if (err)
		return err;
	if (path && size && (size_t)snprintf(path, size, "%s", file) >= size)
		return hwc__fail(-ENAMETOOLONG, "%s does not fit %zu bytes", file, size);
	/* Each directory of $HOME/.debug/DSO/BUILDID, made when missing. */
	char dir[4096];
	size_t home = strlen(getenv("HOME"));
	for (char *slash = file + home + 1; (slash = strchr(slash, '/')); slash++) {
		memcpy(dir, file, (size_t)(slash - file));
		dir[slash - file] = '\0';
		if ((err = make_dir(dir)))
			return err;
	}
	/* A file there is kept as it is, whoever made it. */
	int fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		struct stat st;
		int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && same(fd, arg) == 1;
		close(fd);
		if (!ok)
			return hwc__fail(-EEXIST, "%s exists and is not %s's: left as it is", file,
					 dso);
		return link_build_id(file, dso);
	}
	if (errno != ENOENT)
		return hwc__fail(-errno, "%s: %s (left as it is)", file, strerror(errno));
	hwc_output *o;
	if ((err = hwc_output_create(&o, file, 0)))
		return err;
	FILE *f = hwc_output_stream(o);
	if (!f || (err = write_to(f, arg))) {
		hwc_output_discard(o);
		return f ? err : -errno;
	}
	if ((err = hwc_output_commit(o)))
		return err;
	return link_build_id(file, dso);
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
	return hwc__cache_save("[vdso]", id, (size_t)n, "vdso", same_image, write_image, &im, path,
			       size);
}
