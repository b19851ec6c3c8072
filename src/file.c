/* Files hwc writes and reads.  Outputs go to a temporary file created next
 * to the target (O_CREAT|O_EXCL|O_NOFOLLOW) and renamed over it when
 * complete, so that nothing at the target's name is ever followed,
 * truncated or removed: not a link another user planted, not a device, not
 * a previous recording a failed command would have destroyed.  Inputs that
 * are read whole (symbol files, recordings) must be regular files, opened
 * without blocking: a FIFO at their name must not hang a reader. */
#include "internal.h"
#include "hwc/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct hwc_output {
	int fd;
	FILE *stream;
	int write_err; /* the first errno of a write through STREAM */
	unsigned flags;
	int dir;    /* the directory PATH, OLD and TMP are relative to (its own
		     * descriptor), or AT_FDCWD */
	char *path; /* the target */
	char *old;  /* PATH.old, with HWC_OUTPUT_KEEP_OLD */
	char tmp[]; /* the temporary file */
};

static const char *kind_of(mode_t m)
{
	return S_ISLNK(m)    ? "a symbolic link"
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO (named pipe)"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

static int kind_errno(mode_t m)
{
	return S_ISLNK(m) ? -ELOOP : S_ISDIR(m) ? -EISDIR : -EINVAL;
}

/* 0 when NAME does not exist or is a regular file, else -errno with the
 * detail; RULE says what NAME may be. */
static int check_name(int dir, const char *name, const char *path, const char *rule)
{
	struct stat st;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return hwc__fail(-errno, "cannot write %s: %s", path, strerror(errno));
	}
	if (S_ISREG(st.st_mode))
		return 0;
	if (strcmp(name, path) == 0)
		return hwc__fail(kind_errno(st.st_mode), "refusing to write %s: it is %s; %s", path,
				 kind_of(st.st_mode), rule);
	return hwc__fail(kind_errno(st.st_mode), "refusing to write %s: %s is %s; %s", path, name,
			 kind_of(st.st_mode), rule);
}

static const char target_rule[] =
	"only a new name or a regular file is written, and nothing else is followed, truncated "
	"or removed";
static const char old_rule[] =
	"the previous file is kept under that name, which may only be a regular file";

static void random_suffix(char *out, size_t n)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[16];
	if (getrandom(r, n, GRND_NONBLOCK) != (ssize_t)n) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		unsigned long long x = (unsigned long long)ts.tv_nsec ^
				       ((unsigned long long)getpid() << 20) ^ (uintptr_t)out;
		for (size_t i = 0; i < n; i++, x = x * 6364136223846793005ULL + 1442695040888963407ULL)
			r[i] = (unsigned char)(x >> 33);
	}
	for (size_t i = 0; i < n; i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[n] = '\0';
}

HWC_EXPORT int hwc_output_create(hwc_output **out, const char *path, unsigned flags)
{
	hwc__clear_error();
	return hwc__output_createat(out, AT_FDCWD, path, flags);
}

int hwc__output_createat(hwc_output **out, int dir, const char *path, unsigned flags)
{
	*out = NULL;
	if (!path || !*path)
		return hwc__fail(-EINVAL, "no output file name given");
	size_t len = strlen(path);
	if (path[len - 1] == '/')
		return hwc__fail(-EISDIR, "cannot write %s: it names a directory, not a file", path);
	int err = check_name(dir, path, path, target_rule);
	if (err)
		return err;
	static const char tmp_sfx[] = ".tmp-XXXXXX";
	hwc_output *o = calloc(1, sizeof(*o) + len + sizeof(tmp_sfx));
	if (!o)
		return hwc__fail(-ENOMEM, "out of memory");
	o->fd = -1;
	o->dir = AT_FDCWD;
	o->flags = flags;
	if (dir != AT_FDCWD && (o->dir = fcntl(dir, F_DUPFD_CLOEXEC, 0)) < 0) {
		err = -errno;
		free(o);
		return hwc__fail(err, "cannot write %s: %s", path, strerror(-err));
	}
	o->path = strdup(path);
	if (o->path && (flags & HWC_OUTPUT_KEEP_OLD) && asprintf(&o->old, "%s.old", path) < 0)
		o->old = NULL;
	if (!o->path || ((flags & HWC_OUTPUT_KEEP_OLD) && !o->old)) {
		hwc_output_discard(o);
		return hwc__fail(-ENOMEM, "out of memory");
	}
	if (o->old && (err = check_name(o->dir, o->old, path, old_rule)) != 0) {
		hwc_output_discard(o);
		return err;
	}
	mode_t mode = flags & HWC_OUTPUT_PRIVATE ? 0600 : 0666;
	for (int tries = 0; tries < 100 && o->fd < 0; tries++) {
		memcpy(o->tmp, path, len);
		memcpy(o->tmp + len, tmp_sfx, sizeof(tmp_sfx));
		random_suffix(o->tmp + len + 5, 6);
		/* O_EXCL: a name someone else made (a link included) is never opened. */
		o->fd = openat(o->dir, o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (o->fd < 0 && errno != EEXIST)
			break;
	}
	if (o->fd < 0) {
		err = -errno;
		hwc__fail(err, "cannot create %s: %s", path, strerror(-err));
		if (err == -EACCES || err == -EPERM || err == -EROFS)
			hwc__fail_append(" (cannot create %s: the new file is made in the "
					 "directory, then renamed)",
					 o->tmp);
		o->tmp[0] = '\0';
		hwc_output_discard(o);
		return err;
	}
	*out = o;
	return 0;
}

HWC_EXPORT int hwc_output_fd(const hwc_output *o)
{
	return o->fd;
}

HWC_EXPORT const char *hwc_output_tmpname(const hwc_output *o)
{
	return o->tmp;
}

/* The stream writes through these so that the reason of its first failed
 * write is kept: stdio forgets it once a later flush succeeds, and the
 * commit must say "No space left on device", not "Input/output error". */
static ssize_t stream_write(void *cookie, const char *buf, size_t size)
{
	hwc_output *o = cookie;
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(o->fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!o->write_err)
				o->write_err = n < 0 ? errno : ENOSPC;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int stream_close(void *cookie)
{
	hwc_output *o = cookie;
	int r = close(o->fd);
	o->fd = -1;
	return r;
}

HWC_EXPORT FILE *hwc_output_stream(hwc_output *o)
{
	if (!o->stream) {
		o->stream = fopencookie(o, "w", (cookie_io_functions_t){.write = stream_write,
									  .close = stream_close});
		if (!o->stream) {
			int e = errno;
			hwc__fail(-e, "cannot write %s: %s", o->path, strerror(e));
			errno = e;
		}
	}
	return o->stream;
}

static void free_output(hwc_output *o)
{
	if (o->dir != AT_FDCWD)
		close(o->dir);
	free(o->path);
	free(o->old);
	free(o);
}

/* Commit O as PATH instead, a name in the same directory (the temporary
 * file is renamed, never copied). */
int hwc__output_set_path(struct hwc_output *o, const char *path)
{
	const char *slash = strrchr(path, '/'), *oslash = strrchr(o->path, '/');
	size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
	size_t odir = oslash ? (size_t)(oslash - o->path) + 1 : 0;
	if (dir != odir || strncmp(path, o->path, dir) != 0)
		return hwc__fail(-EXDEV, "cannot name %s %s: not in the same directory", o->path,
				 path);
	if (!path[dir])
		return hwc__fail(-EISDIR, "cannot write %s: it names a directory, not a file", path);
	int err = check_name(o->dir, path, path, target_rule);
	if (err)
		return err;
	char *copy = strdup(path), *old = NULL;
	if (!copy || (o->old && asprintf(&old, "%s.old", path) < 0)) {
		free(copy);
		return hwc__fail(-ENOMEM, "out of memory");
	}
	free(o->path);
	free(o->old);
	o->path = copy;
	o->old = old;
	return 0;
}

/* Leave the data where it is and say where. */
static int rename_failed(hwc_output *o, int err, const char *what)
{
	hwc__fail(err, "cannot %s: %s; the output is left in %s", what, strerror(-err), o->tmp);
	free_output(o);
	return err;
}

/* Give the complete temporary file its name only if nothing has that
 * name: whatever appeared there since the create is kept (-EEXIST). */
static int publish_new(hwc_output *o)
{
	int r = renameat2(o->dir, o->tmp, o->dir, o->path, RENAME_NOREPLACE);
	if (r < 0 && errno == EINVAL) { /* a file system without it: link, then unlink */
		r = linkat(o->dir, o->tmp, o->dir, o->path, 0);
		if (r == 0)
			unlinkat(o->dir, o->tmp, 0);
	}
	if (r == 0) {
		free_output(o);
		return 0;
	}
	int err = -errno;
	if (err != -EEXIST) {
		char what[4200];
		snprintf(what, sizeof(what), "create %s", o->path);
		return rename_failed(o, err, what);
	}
	hwc__fail(err, "%s appeared while it was written: left as it is", o->path);
	hwc_output_discard(o);
	return err;
}

/* The commit without clearing the detail first: a recording's close keeps
 * the detail of a write error that it still commits. */
int hwc__output_commit(hwc_output *o)
{
	int err = 0;
	if (o->stream) {
		if (fflush(o->stream) != 0 || ferror(o->stream))
			err = -(o->write_err ? o->write_err : errno ? errno : EIO);
		if (fclose(o->stream) != 0 && !err)
			err = -errno;
	} else if (close(o->fd) < 0) {
		err = -errno;
	}
	o->stream = NULL;
	o->fd = -1;
	if (err) {
		hwc__fail(err, "cannot write %s: %s", o->path, strerror(-err));
		hwc_output_discard(o);
		return err;
	}
	/* Whatever took the target's name since the create is left alone. */
	char what[4200];
	snprintf(what, sizeof(what), "replace %s", o->path);
	err = check_name(o->dir, o->path, o->path, target_rule);
	if (!err && o->old)
		err = check_name(o->dir, o->old, o->path, old_rule);
	if (err) {
		hwc__fail_append("; the output is left in %s", o->tmp);
		free_output(o);
		return err;
	}
	if (o->flags & HWC__OUTPUT_NOREPLACE)
		return publish_new(o);
	if (o->old && renameat(o->dir, o->path, o->dir, o->old) < 0 && errno != ENOENT) {
		snprintf(what, sizeof(what), "keep the previous %s as %s", o->path, o->old);
		return rename_failed(o, -errno, what);
	}
	if (renameat(o->dir, o->tmp, o->dir, o->path) < 0)
		return rename_failed(o, -errno, what);
	free_output(o);
	return 0;
}

HWC_EXPORT int hwc_output_commit(hwc_output *o)
{
	hwc__clear_error();
	return hwc__output_commit(o);
}

HWC_EXPORT void hwc_output_discard(hwc_output *o)
{
	if (!o)
		return;
	int saved = errno;
	if (o->stream)
		fclose(o->stream);
	else if (o->fd >= 0)
		close(o->fd);
	if (o->tmp[0])
		unlinkat(o->dir, o->tmp, 0);
	free_output(o);
	errno = saved;
}

int hwc__open_regular(const char *path)
{
	/* stat first: a device is not even opened (a tape would rewind). */
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* It may have been replaced between the two. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}
