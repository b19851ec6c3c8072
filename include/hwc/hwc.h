/*
 * libhwc: CPU performance counters for Linux, on top of perf_event_open(2).
 *
 * Conventions (see libhwc(3)):
 *  - Functions that can fail return 0 (or a count) on success and -errno on
 *    failure.  hwc_errdetail() then describes the failure for a human, with
 *    the hint needed to fix it.  The library never prints and never exits.
 *  - Objects are opaque and not thread-safe; use one per thread or lock.
 */
#ifndef HWC_HWC_H
#define HWC_HWC_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWC_VERSION_MAJOR 0
#define HWC_VERSION_MINOR 1
#define HWC_VERSION_STRING "0.1"

/* ------------------------------------------------------------------ errors */

/* Message for a -errno value returned by libhwc (never NULL). */
const char *hwc_strerror(int err);

/* What went wrong in the calling thread's last failing libhwc call, with the
 * hint a user needs ("" when nothing failed yet).  Valid until the next
 * libhwc call in this thread. */
const char *hwc_errdetail(void);

/* ------------------------------------------------------------------ events */

/* Where a resolved event came from. */
enum hwc_source {
	HWC_SRC_GENERIC,    /* perf generic hardware event: cycles, instructions, ... */
	HWC_SRC_CACHE,      /* perf generic cache event: L1-dcache-load-misses, ... */
	HWC_SRC_SOFTWARE,   /* Linux software event: task-clock, page-faults, ... */
	HWC_SRC_PRESET,     /* PAPI / illumos generic name mapped to a platform event */
	HWC_SRC_PFM,        /* libpfm4 native name, possibly model:: qualified */
	HWC_SRC_RAW,        /* rNNNN, or cpu/.../ in the x86 PERFEVTSEL layout */
	HWC_SRC_PMU,        /* pmu/term=value,.../ through sysfs, or a sysfs alias */
	HWC_SRC_TRACEPOINT, /* subsystem:name from tracefs */
};

/* One resolved event: everything needed to open it, and how it was found. */
struct hwc_event {
	const char *name;   /* the event as written, e.g. "cycles:u" */
	const char *pmu;    /* "cpu", "software", "msr", "tracepoint", a libpfm4 model ... */
	const char *origin; /* how it resolved, e.g. "PAPI_TOT_INS = instructions" */
	const char *unit;   /* unit of the scaled value ("msec", "MiB"), or "" */
	double scale;       /* multiply counts by this to express them in unit */
	enum hwc_source source;
	struct perf_event_attr attr;
	int group;          /* events with the same group number are scheduled together */
	bool leader;        /* first event of its group */
	bool explicit_priv; /* the spec chose user/kernel/hv itself (:u, :k, u=, usr=) */
};

typedef struct hwc_evlist hwc_evlist;

int hwc_evlist_new(hwc_evlist **out);
void hwc_evlist_free(hwc_evlist *list);

/* Resolve SPEC and append its events.  SPEC is a comma-separated list of
 * events and {groups}; nothing is opened.  On error nothing is appended and
 * hwc_errdetail() names the offending part and the closest known names. */
int hwc_evlist_add(hwc_evlist *list, const char *spec);

size_t hwc_evlist_size(const hwc_evlist *list);
const struct hwc_event *hwc_evlist_event(const hwc_evlist *list, size_t idx);

/* The attribute of event IDX, for callers that adjust it before opening
 * (sample period, exclude bits).  Type and config must not be changed. */
struct perf_event_attr *hwc_evlist_attr(hwc_evlist *list, size_t idx);

/* Append the event an x86 PERFEVTSEL word selects, as the classic
 * interfaces write it (OpenBSD pctr function words, FreeBSD perfmon struct
 * pmc): event select bits 0-7 (and 32-35), unit mask 8-15, USR 16, OS 17,
 * edge 18, any-thread 21, invert 23, counter mask 24-31.  It resolves exactly
 * as cpu/event=..,umask=..,edge=1,any=1,inv=1,cmask=..,usr=..,os=../ does
 * (a raw event; usr and os choose exclude_user and exclude_kernel).  EN (bit
 * 22) is ignored: counting starts with hwc_counters_start().  -EINVAL for PC
 * (bit 19), INT (bit 20), bits above 35, neither USR nor OS, or a term the
 * cpu PMU does not have (any= on AMD). */
int hwc_evlist_add_evtsel(hwc_evlist *list, uint64_t evtsel);

/* Human-readable name of a source ("generic", "cache", ...). */
const char *hwc_source_name(enum hwc_source src);

/* ------------------------------------------------------------------ counting */

enum hwc_target_kind {
	HWC_TARGET_SELF,    /* the calling thread */
	HWC_TARGET_COMMAND, /* a new process running argv; counting starts exactly at exec */
	HWC_TARGET_PROCESS, /* an existing pid, all its threads */
	HWC_TARGET_THREAD,  /* one existing thread */
	HWC_TARGET_CPUS,    /* system-wide, per CPU */
};

/* Flags for struct hwc_target.flags. */
#define HWC_NO_INHERIT       0x1u /* do not count children and threads created later */
#define HWC_NO_FALLBACK      0x2u /* never retry user-only when kernel counting is denied */
#define HWC_SKIP_UNSUPPORTED 0x4u /* events the machine lacks are marked, not fatal */

struct hwc_target {
	enum hwc_target_kind kind;
	pid_t pid;            /* PROCESS, THREAD */
	char *const *argv;    /* COMMAND: argv[0] is looked up in PATH */
	const int *cpus;      /* CPUS: the CPUs to count on; NULL means all online */
	size_t ncpus;
	unsigned flags;       /* HWC_NO_INHERIT | ... */
};

/* A value read from one event. */
struct hwc_value {
	uint64_t raw;     /* events counted while the event was on a counter */
	uint64_t enabled; /* ns the event was enabled */
	uint64_t running; /* ns it was actually counting (< enabled: multiplexed) */
	uint64_t scaled;  /* raw * enabled / running, saturating; 0 if it never ran */
};

/* The estimate RAW * ENABLED / RUNNING: RAW when never multiplexed, 0 when
 * the event never ran, UINT64_MAX rather than an overflowed product. */
uint64_t hwc_scale(uint64_t raw, uint64_t enabled, uint64_t running);

/* True when the event shared its counter with others (the estimate is scaled). */
static inline bool hwc_value_multiplexed(const struct hwc_value *v)
{
	return v->running < v->enabled;
}

typedef struct hwc_counters hwc_counters;

/* Open every event of LIST on TARGET, disabled.  For HWC_TARGET_COMMAND the
 * process is created here and waits; hwc_counters_start() lets it exec. */
int hwc_counters_open(hwc_counters **out, const hwc_evlist *list, const struct hwc_target *target);

/* Close all events.  A COMMAND child that was never started is reaped. */
void hwc_counters_close(hwc_counters *c);

/* Enable counting.  For a COMMAND target: release the child to exec (the
 * counters are enabled by the exec itself); if exec fails, the child is
 * reaped and the error (e.g. -ENOENT) returned. */
int hwc_counters_start(hwc_counters *c);
int hwc_counters_stop(hwc_counters *c);

/* Make the current counts the new zero, times included. */
int hwc_counters_reset(hwc_counters *c);

/* Take a snapshot of every event (one read(2) per group and instance). */
int hwc_counters_read(hwc_counters *c);

/* Value of event EV in the last snapshot, since the last reset.  INST is an
 * instance index (a CPU or a thread), or HWC_ALL for the sum over instances
 * (each instance scaled separately, then summed). */
#define HWC_ALL ((size_t)-1)
int hwc_counters_value(const hwc_counters *c, size_t inst, size_t ev, struct hwc_value *out);

/* Make the last snapshot the new zero without reading again (interval mode). */
void hwc_counters_rebase(hwc_counters *c);

/* The pid of a COMMAND target's process, else the target pid, else -1. */
pid_t hwc_counters_pid(const hwc_counters *c);

/* Instances: one per CPU for HWC_TARGET_CPUS, one per thread otherwise. */
size_t hwc_counters_ninstances(const hwc_counters *c);
int hwc_counters_instance_cpu(const hwc_counters *c, size_t inst);   /* -1: any CPU */
pid_t hwc_counters_instance_tid(const hwc_counters *c, size_t inst); /* -1: all tasks */

/* Per-event status: 0, or the -errno that made HWC_SKIP_UNSUPPORTED skip it. */
int hwc_counters_event_status(const hwc_counters *c, size_t ev);
/* Detail text for a skipped event, "" otherwise. */
const char *hwc_counters_event_error(const hwc_counters *c, size_t ev);
/* True when kernel counting was denied and the event counts user space only. */
bool hwc_counters_user_only(const hwc_counters *c, size_t ev);

/* The perf_event file descriptor of event EV on instance INST (-1 if skipped). */
int hwc_counters_fd(const hwc_counters *c, size_t inst, size_t ev);

/* ------------------------------------------------------------------ user-space reads */

/* Counters opened on HWC_TARGET_SELF with HWC_NO_INHERIT map the first page
 * of each event's perf mmap, pre-faulted, so that the thread they count can
 * read them without a system call when the kernel allows it: on x86 with a
 * hardware PMU, and /sys/bus/event_source/devices/cpu/rdpmc not 0.
 * (The kernel refuses the mapping for inherited events.) */

/* Read event EV of instance INST now, into OUT as hwc_counters_value() would
 * report it (since the last reset); the snapshot is left alone.  Uses the
 * kernel's self-monitoring protocol on the event's page (rdpmc, with the
 * times extrapolated through the TSC) when the caller is the thread that
 * opened the counters and the page offers it; otherwise, and whenever the
 * page says the event is not on a hardware counter now (index 0: software
 * events, an event switched out), one read(2) of the event's file
 * descriptor.  Returns 0 or -errno; the event of a skipped event's status. */
int hwc_counters_read_fast(hwc_counters *c, size_t inst, size_t ev, struct hwc_value *out);

/* The mapped page of event EV, or NULL when there is none (targets other
 * than SELF + HWC_NO_INHERIT, a skipped event, or a mapping the kernel
 * refused, e.g. when perf_event_mlock_kb is exhausted).  Read only. */
const struct perf_event_mmap_page *hwc_counters_userpage(const hwc_counters *c, size_t ev);

/* How hwc_userpage_read() reads a hardware counter and the time stamp
 * counter.  NULL members (or a NULL struct) mean the CPU's own rdpmc and
 * rdtsc instructions; others exist for tests and emulators. */
struct hwc_userpage_readers {
	uint64_t (*read_pmc)(unsigned counter); /* counter = the page's index - 1 */
	uint64_t (*read_tsc)(void);
};

/* Apply the self-monitoring protocol of include/uapi/linux/perf_event.h to
 * PAGE: the lock/sequence loop; offset plus the counter, sign-extended from
 * pmc_width bits; time_enabled/time_running extrapolated with time_offset,
 * time_mult and time_shift (and time_cycles/time_mask when
 * cap_user_time_short) when cap_user_time is set.  OUT gets the absolute
 * count since the event was opened.  Returns 0, or -ENODATA when the value
 * must be read with read(2): index is 0 or cap_user_rdpmc is clear.  Only
 * meaningful, with the CPU's instructions, for the calling thread's own
 * events (see hwc_counters_userpage()). */
int hwc_userpage_read(const struct perf_event_mmap_page *page,
		      const struct hwc_userpage_readers *readers, struct hwc_value *out);

/* ------------------------------------------------------------------ machine */

/* Read kernel.perf_event_paranoid into *LEVEL. */
int hwc_paranoid(int *level);

/* Online CPUs into CPUS (up to MAX); returns how many are online. */
int hwc_online_cpus(int *cpus, size_t max);

#ifdef __cplusplus
}
#endif
#endif
