/* A device file in user space: the shim libraries (libpctr, libperfmon)
 * interpose open(2), ioctl(2) and close(2) for one path and hand its
 * descriptors to a driver; every other path and descriptor goes to the next
 * definition (libc's) untouched.  Never installed. */
#ifndef HWC_COMPAT_DEVSHIM_H
#define HWC_COMPAT_DEVSHIM_H

#include <fcntl.h>
#include <hwc/hwc.h>

/* The driver of the shim's device.  FLAGS are the open(2) flags of the
 * descriptor.  Each entry returns 0 or a positive errno, which the caller of
 * open(2) or ioctl(2) gets as -1 and errno. */
struct devshim_driver {
	const char *path;                                         /* e.g. "/dev/pctr" */
	int (*open)(int flags);                                   /* before the descriptor exists */
	int (*ioctl)(int flags, unsigned long request, void *arg);
	void (*close)(int flags);                                 /* last, for each successful open */
};

/* Defined by each shim library. */
extern const struct devshim_driver devshim_driver;

/* Is a descriptor open with FLAGS open for writing (FWRITE, in BSD terms)? */
static inline int devshim_writable(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY;
}

/* Append to LIST the event EVTSEL selects: hwc_evlist_add_evtsel(). */
int devshim_event(hwc_evlist *list, uint64_t evtsel);

/* Open a counter of the calling thread for the PERFEVTSEL word EVTSEL
 * (devshim_event()), stopped.  INHERIT also counts the threads and
 * processes the thread creates afterwards (no user-space reads then).
 * Returns 0 or the errno the BSD interfaces give: EINVAL for a function the
 * kernel or the encoder rejects, ENODEV when there is no hardware PMU (or
 * the event does not exist on it), EACCES when perf_event_paranoid forbids
 * what the function counts, or the kernel's errno otherwise. */
int devshim_counter_open(uint64_t evtsel, int inherit, hwc_counters **out);

/* The same on every online CPU, all tasks (one instance per CPU), pinned so
 * that the event never shares its counter; errnos as above. */
int devshim_cpus_counter_open(uint64_t evtsel, hwc_counters **out);

#endif
