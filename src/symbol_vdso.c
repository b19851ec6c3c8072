/* The vDSO's image kept where perf keeps it, in the build-id cache
 * ($HOME/.debug/[vdso]/BUILDID/vdso): written when recording, read when
 * reporting, so that "[vdso]" addresses resolve on another boot too. */
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

int hwc__vdso_cache_path(char *path, size_t size, const uint8_t *id, size_t len)
{
	const char *home = getenv("HOME");
	if (!home || !*home)
		return hwc__fail(-ENOENT, "HOME is not set: no build-id cache for the vDSO");
	char h[41];
	for (size_t i = 0; i < len && i < 20; i++)
		sprintf(h + 2 * i, "%02x", id[i]);
	h[2 * (len < 20 ? len : 20)] = '\0';
	if ((size_t)snprintf(path, size, "%s/.debug/[vdso]/%s/vdso", home, h) >= size)
		return hwc__fail(-ENAMETOOLONG, "the vDSO's cache path under %s is too long", home);
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

/* Does the regular file PATH hold exactly SIZE bytes equal to IMAGE? */
static int same_file(const char *path, const uint8_t *image, size_t size)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != size) {
		close(fd);
		return 0;
	}
	uint8_t buf[4096];
	for (size_t off = 0; off < size;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0 || memcmp(buf, image + off, (size_t)n)) {
			close(fd);
			return 0;
		}
		off += (size_t)n;
	}
	close(fd);
	return 1;
}

/* perf looks the cache up through $HOME/.debug/.build-id/XX/REST, a link
 * to ../../[vdso]/XXREST: make it unless something is there. */
static int link_build_id(const char *file, size_t dirlen)
{
	const char *bid = file + dirlen;
	while (bid > file && bid[-1] != '/')
		bid--;
	size_t bidlen = (size_t)(file + dirlen - bid);
	size_t debug = (size_t)(bid - file) - strlen("[vdso]/");
	char dir[4096], link[4200], target[128];
	snprintf(dir, sizeof(dir), "%.*s.build-id", (int)debug, file);
	int err = make_dir(dir);
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%.2s", bid);
	if (!err)
		err = make_dir(dir);
	if (err)
		return err;
	snprintf(link, sizeof(link), "%s/%.*s", dir, (int)bidlen - 2, bid + 2);
	snprintf(target, sizeof(target), "../../[vdso]/%.*s", (int)bidlen, bid);
	if (symlink(target, link) < 0 && errno != EEXIST)
		return hwc__fail(-errno, "cannot create %s: %s", link, strerror(errno));
	return 0;
}

HWC_EXPORT int hwc_symbols_save_vdso(char *path, size_t size)
{
	hwc__clear_error();
	const uint8_t *image;
	size_t len;
	uint8_t id[20];
	int err = hwc__vdso_image(&image, &len);
	if (err)
		return hwc__fail(err, "this process maps no vDSO image that can be read");
	int n = hwc__vdso_build_id(id, sizeof(id));
	if (n <= 0)
		return hwc__fail(-ENOENT, "the vDSO has no build-id");
	char file[4096];
	if ((err = hwc__vdso_cache_path(file, sizeof(file), id, (size_t)n)))
		return err;
	if (path && size && (size_t)snprintf(path, size, "%s", file) >= size)
		return hwc__fail(-ENAMETOOLONG, "%s does not fit %zu bytes", file, size);
	/* Each directory of $HOME/.debug/[vdso]/BUILDID, made when missing. */
	char dir[4096];
	size_t home = strlen(getenv("HOME"));
	for (char *slash = file + home + 1; (slash = strchr(slash, '/')); slash++) {
		memcpy(dir, file, (size_t)(slash - file));
		dir[slash - file] = '\0';
		if ((err = make_dir(dir)))
			return err;
	}
	if ((err = link_build_id(file, (size_t)(strrchr(file, '/') - file))))
		return err;
	int same = same_file(file, image, len);
	if (same == 1)
		return 0;
	if (same == 0)
		return hwc__fail(-EEXIST, "%s exists and is not this vDSO's image: left as it is",
				 file);
	if (same != -ENOENT)
		return hwc__fail(same, "%s: %s", file, strerror(-same));
	hwc_output *o;
	if ((err = hwc_output_create(&o, file, 0)))
		return err;
	const uint8_t *p = image;
	for (size_t left = len; left;) {
		ssize_t w = write(hwc_output_fd(o), p, left);
		if (w < 0) {
			err = -errno;
			hwc_output_discard(o);
			return hwc__fail(err, "writing %s: %s", file, strerror(-err));
		}
		p += w;
		left -= (size_t)w;
	}
	return hwc_output_commit(o);
}
