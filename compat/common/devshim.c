/* open(2)/ioctl(2)/close(2) interposition for one device path.  A client
 * links the shim (pkg-config --libs pctr), so the dynamic linker finds these
 * definitions before libc's; calls for other paths and descriptors go to the
 * next definition through dlsym(RTLD_NEXT), so two shims (or a sanitizer's
 * interceptors) chain.  glibc's fortified entry points (__open_2 ...) and the
 * 64-bit names are covered, so -D_FORTIFY_SOURCE and -D_FILE_OFFSET_BITS=64
 * clients work too. */
#undef _FORTIFY_SOURCE
#include "devshim.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SHIM_EXPORT __attribute__((visibility("default")))

/* The device's descriptors: modes[fd] is its access mode + 1, else 0.  A
 * byte per descriptor keeps the check on every ioctl(2) and close(2) one
 * load; the device refuses descriptors beyond (EMFILE). */
#define MAX_FD 65536
static unsigned char modes[MAX_FD];

static unsigned char mode_of(int fd)
{
	return fd >= 0 && fd < MAX_FD ? __atomic_load_n(&modes[fd], __ATOMIC_ACQUIRE) : 0;
}

/* FD no longer is (or never was) the device's: let the driver know. */
static void forget(int fd)
{
	if (mode_of(fd)) {
		unsigned char m = __atomic_exchange_n(&modes[fd], 0, __ATOMIC_ACQ_REL);
		if (m)
			devshim_driver.close(m - 1);
	}
}

static void *next_symbol(const char *name, void **cache)
{
	void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, p, __ATOMIC_RELEASE);
	}
	return p;
}

/* The next definition of NAME, or fail the call with ENOSYS. */
#define NEXT(name, type)                                                                 \
	static void *next_##name;                                                        \
	type fn = (type)next_symbol(#name, &next_##name);                                \
	if (!fn) {                                                                       \
		errno = ENOSYS;                                                          \
		return -1;                                                               \
	}

static int device_open(int flags)
{
	int err = devshim_driver.open(flags & O_ACCMODE);
	if (err) {
		errno = err;
		return -1;
	}
	/* A real descriptor, so that close(2), fcntl(2), dup(2) and poll(2) on
	 * it behave, and its number is never handed out twice. */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", flags & (O_ACCMODE | O_CLOEXEC));
	if (fd < 0 || fd >= MAX_FD) {
		err = fd < 0 ? errno : EMFILE;
		if (fd >= 0)
			syscall(SYS_close, fd);
		devshim_driver.close(flags & O_ACCMODE);
		errno = err;
		return -1;
	}
	__atomic_store_n(&modes[fd], (unsigned char)((flags & O_ACCMODE) + 1), __ATOMIC_RELEASE);
	return fd;
}

static int is_device(const char *path)
{
	return path && strcmp(path, devshim_driver.path) == 0;
}

/* A descriptor the kernel just handed out cannot be the device's: an entry
 * left for it was closed behind our back (close_range(2), a raw syscall). */
static int fresh(int fd)
{
	if (fd >= 0)
		forget(fd);
	return fd;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);

#define COMMA , /* a comma inside a macro argument */

/* open and open64; openat and openat64 (an absolute path ignores DIRFD). */
#define SHIM_OPEN(name, fn_type, dir_param, dir_arg)                                     \
	SHIM_EXPORT int name(dir_param const char *path, int flags, ...)                 \
	{                                                                                \
		if (is_device(path))                                                     \
			return device_open(flags);                                       \
		va_list ap;                                                              \
		va_start(ap, flags);                                                     \
		mode_t mode = mode_arg(flags, ap);                                       \
		va_end(ap);                                                              \
		NEXT(name, fn_type);                                                     \
		return fresh(fn(dir_arg path, flags, mode));                             \
	}
SHIM_OPEN(open, open_fn, , )
SHIM_OPEN(open64, open_fn, , )
SHIM_OPEN(openat, openat_fn, int dirfd COMMA, dirfd COMMA)
SHIM_OPEN(openat64, openat_fn, int dirfd COMMA, dirfd COMMA)

/* glibc's -D_FORTIFY_SOURCE entry points for open without a mode. */
#define SHIM_OPEN2(name, fn_type, dir_param, dir_arg)                                    \
	SHIM_EXPORT int name(dir_param const char *path, int flags);                     \
	SHIM_EXPORT int name(dir_param const char *path, int flags)                      \
	{                                                                                \
		if (is_device(path))                                                     \
			return device_open(flags);                                       \
		NEXT(name, fn_type);                                                     \
		return fresh(fn(dir_arg path, flags));                                   \
	}
SHIM_OPEN2(__open_2, open2_fn, , )
SHIM_OPEN2(__open64_2, open2_fn, , )
SHIM_OPEN2(__openat_2, openat2_fn, int dirfd COMMA, dirfd COMMA)
SHIM_OPEN2(__openat64_2, openat2_fn, int dirfd COMMA, dirfd COMMA)

typedef int (*ioctl_fn)(int, unsigned long, ...);

SHIM_EXPORT int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	unsigned char m = mode_of(fd);
	if (m) {
		int err = devshim_driver.ioctl(m - 1, request, arg);
		if (err) {
			errno = err;
			return -1;
		}
		return 0;
	}
	NEXT(ioctl, ioctl_fn);
	return fn(fd, request, arg);
}

typedef int (*close_fn)(int);

SHIM_EXPORT int close(int fd)
{
	forget(fd);
	NEXT(close, close_fn);
	return fn(fd);
}
