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

/* The version of everything hwc installs: the Makefile reads the string
 * for the .pc files and the libraries' file names. */
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
	HWC_SRC_JSON,       /* perf's JSON event tables (pmu-events), possibly model:: qualified */
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
	const char *filter; /* a tracepoint's filter (hwc_evlist_set_filter()), or "" */
	const char *cgroup; /* counted only in this cgroup (hwc_evlist_set_cgroup()), or "" */
	/* An event written once that opens on several PMUs becomes one event
	 * per PMU (each instance uncore_imc_0, uncore_imc_1, ... of an uncore
	 * PMU; each core PMU of a hybrid): each copy names the event as
	 * written here (its sum's name), "" for any other event.  MERGE: perf
	 * stat sums such copies by default (an uncore PMU's instances), else
	 * only when asked (a hybrid's core PMUs: --hybrid-merge). */
	const char *copy_of;
	bool merge;
	bool weak;          /* in a weak group ({...}:W): opened apart when the kernel
			     * refuses the group (hwc_counters_ungrouped()) */
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

/* Count or sample tracepoint IDX only when FILTER holds: an ftrace filter
 * expression over the tracepoint's fields ("error_code & 2",
 * "prev_pid == 1 && prev_state != 0"), applied to every descriptor the
 * event is opened as (PERF_EVENT_IOC_SET_FILTER).  NULL or "" removes it.
 * -EINVAL for an event that is not a tracepoint; a filter the kernel
 * rejects makes the open fail with -EINVAL and a detail that quotes it. */
int hwc_evlist_set_filter(hwc_evlist *list, size_t idx, const char *filter);

/* Count or sample event IDX only while a task of CGROUP runs (perf stat
 * -G): CGROUP names a cgroup as hwc_cgroup_path() takes it.  Such an event
 * needs a system-wide target (HWC_TARGET_CPUS or HWC_TARGET_CGROUP), where
 * it is opened on each CPU with PERF_FLAG_PID_CGROUP.  NULL or "" removes
 * it.  The cgroup is looked up when the list is opened. */
int hwc_evlist_set_cgroup(hwc_evlist *list, size_t idx, const char *cgroup);

/* The directory of CGROUP, into BUF (SIZE bytes).  CGROUP is a path in the
 * hierarchy perf_event counts cgroups of (the unified cgroup v2 one, or the
 * cgroup v1 perf_event controller's when one is mounted; found in
 * /proc/self/mountinfo): relative to its root ("system.slice/foo.service";
 * "" and "/" are the root), or absolute below its mount point
 * ("/sys/fs/cgroup/system.slice").  Errors: -ENOENT no such cgroup; -ENOTDIR
 * not a cgroup directory; -EBADF a cgroup of a hierarchy perf_event cannot
 * use (cgroup v1 without the perf_event controller); -ENODEV no usable
 * hierarchy is mounted; -ENAMETOOLONG. */
int hwc_cgroup_path(const char *cgroup, char *buf, size_t size);

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
	HWC_TARGET_CGROUP,  /* per CPU as CPUS, only while tasks of one cgroup run */
};

/* Flags for struct hwc_target.flags. */
#define HWC_NO_INHERIT       0x1u /* do not count children and threads created later */
#define HWC_NO_FALLBACK      0x2u /* never retry user-only when kernel counting is denied */
#define HWC_SKIP_UNSUPPORTED 0x4u /* events the machine lacks are marked, not fatal */
#define HWC_THREADS_ONLY     0x8u /* inherit to threads created later, not to child
				     processes (perf's inherit_thread, Linux 5.13+) */

struct hwc_target {
	enum hwc_target_kind kind;
	pid_t pid;            /* PROCESS, THREAD */
	char *const *argv;    /* COMMAND: argv[0] is looked up in PATH, at the open that
			       * makes the process (as posix_spawnp); CPUS: also run this
			       * command, started once the CPUs count (perf stat -a -- CMD) */
	const int *cpus;      /* CPUS: the CPUs to count on; NULL means all online */
	size_t ncpus;
	unsigned flags;       /* HWC_NO_INHERIT | ... */
	const char *cgroup;   /* CGROUP: the cgroup (see hwc_cgroup_path()) of every event
			       * that has none of its own; argv, cpus and ncpus as for CPUS.
			       * Counting every CPU needs root, CAP_PERFMON or
			       * perf_event_paranoid <= 0 */
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

/* Open every event of LIST on TARGET, disabled.  For HWC_TARGET_COMMAND (or
 * HWC_TARGET_CPUS with argv) the process is created here and waits;
 * hwc_counters_start() lets it exec.  The caller reaps it (waitpid on
 * hwc_counters_pid()) once started. */
int hwc_counters_open(hwc_counters **out, const hwc_evlist *list, const struct hwc_target *target);

/* Close all events.  A COMMAND child that was never started is reaped. */
void hwc_counters_close(hwc_counters *c);

/* Enable counting.  For a COMMAND target: release the child to exec (the
 * counters are enabled by the exec itself); for a CPUS target with argv:
 * enable, then release the child.  If exec fails, the child is reaped and
 * the error (e.g. -ENOENT) returned, hwc_counters_pid() is then -1. */
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

/* All events' values in the last snapshot, as hwc_counters_value() gives
 * each: OUT[ev] for every event of the list, in one call (what a read of a
 * whole group wants).  A skipped event's value is all zeros (see
 * hwc_counters_event_status()).  Returns 0, or -EINVAL for a bad INST. */
int hwc_counters_values(const hwc_counters *c, size_t inst, struct hwc_value *out);

/* Make the last snapshot the new zero without reading again (interval mode). */
void hwc_counters_rebase(hwc_counters *c);

/* The pid of the command's process (COMMAND, or CPUS with argv), else the
 * target pid, else -1. */
pid_t hwc_counters_pid(const hwc_counters *c);

/* A descriptor that polls readable once the command, process or thread of
 * C ends (a pidfd, owned by C: the one a command was started with, else
 * opened on the first call).  -ESRCH: it ended and was reaped before a
 * first call had a descriptor to give; -EOPNOTSUPP: before Linux 6.9, a
 * thread that does not lead its process cannot be watched (look for it
 * now and then); -EINVAL: there is no process (SELF, CPUS without argv). */
int hwc_counters_wait_fd(hwc_counters *c);

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
/* True when EV's weak group ({...}:W) did not open as a group, as the kernel
 * refused it: EV counts on its own, multiplexed as the kernel schedules it.
 * False for the events of such a group that must be in a group (Intel's
 * slots and topdown-*, hwc-events(7)): they count in one, led by slots. */
bool hwc_counters_ungrouped(const hwc_counters *c, size_t ev);

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
 * descriptor.  Whether the page offers rdpmc is fixed when the kernel
 * creates the event, and noted when the page is mapped.  Returns 0 or
 * -errno (for a skipped event, its status). */
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

/* ------------------------------------------------------------------ overflow */

/* Overflow notification by signal while counting, as illumos cpc (SIGEMT)
 * and PAPI overflow work.  Event EV must have been opened with
 * attr.sample_period = N (set through hwc_evlist_attr() before opening) and
 * without inherit (HWC_NO_INHERIT).  Once armed, the Nth event counted on
 * instance INST sends signal SIG to thread TID (siginfo: si_code POLL_HUP,
 * si_fd = hwc_counters_fd(c, INST, EV)) and EV stops counting -- its whole
 * group when EV leads the group -- until hwc_counters_overflow_rearm().
 * The notification is armed now if the counters run, else at the next
 * hwc_counters_start().  Returns 0 or -errno (-EINVAL: no sample_period,
 * inherit set, or a COMMAND target not started yet). */
int hwc_counters_overflow_signal(hwc_counters *c, size_t inst, size_t ev, int sig, pid_t tid);

/* Let EV on INST count again and overflow once more after PERIOD further
 * events (0 keeps the current period); the next overflow is always a full
 * period away, whether or not the last one happened.  Uses only ioctl(2)
 * and read(2), so a signal handler may call it. */
int hwc_counters_overflow_rearm(hwc_counters *c, size_t inst, size_t ev, uint64_t period);

/* ------------------------------------------------------------------ listing */

/* What "can it be opened here?" means everywhere below: can the event count
 * the calling thread, as hwc_counters_open() with HWC_TARGET_SELF would open
 * it (falling back to user space when kernel counting is denied). */

/* Open SPEC (anything hwc_evlist_add() accepts) on the calling thread and
 * close it again.  Returns 0 when every event opens, else the -errno of the
 * first that does not, with hwc_errdetail() saying why.  *USER_ONLY (may be
 * NULL) is set when the events open only restricted to user space.  To see
 * what SPEC would open without opening it, use hwc_evlist_add(). */
int hwc_event_probe(const char *spec, bool *user_only);

/* Kinds of event attributes. */
enum hwc_attr_kind {
	HWC_ATTR_UMASK, /* a unit mask, selected as EVENT:NAME */
	HWC_ATTR_FLAG,  /* a boolean modifier: EVENT:NAME or EVENT:NAME=0|1 */
	HWC_ATTR_VALUE, /* an integer modifier: EVENT:NAME=N */
};

/* One unit mask or modifier of a listed event. */
struct hwc_event_attr_info {
	const char *name;
	const char *desc;        /* "" when there is none */
	enum hwc_attr_kind kind;
	bool is_default;         /* a unit mask used when the spec selects none */
	uint64_t code;           /* a unit mask's code in the model's tables; 0 otherwise */
};

/* One event of a listing.  Strings and ATTRS are valid during the callback only. */
struct hwc_event_info {
	const char *name;   /* "task-clock", "INST_RETIRED", "tsc", "sched:sched_switch" */
	const char *spec;   /* what hwc_evlist_add() takes: "skl::INST_RETIRED", "msr/tsc/" */
	const char *pmu;    /* "generic", "cache", "software", "preset", "tracepoint",
			       a libpfm4 model ("skl"), or a sysfs PMU ("msr") */
	enum hwc_source source;
	const char *desc;   /* "" when there is none */
	const char *equiv;  /* presets: the event it stands for here; NULL when
			       it has no mapping here (listed, never hidden) */
	uint64_t code;      /* libpfm4 event code, perf config, or tracepoint id */
	size_t nattrs;
	const struct hwc_event_attr_info *attrs;

	/* Filled with HWC_WALK_PROBE; otherwise status is 0 and probed false. */
	bool probed;
	int status;           /* 0: can be opened here; else -errno */
	bool user_only;       /* opens only restricted to user space */
	const char *why_not;  /* the reason when status != 0, else "" */
};

/* Flags of hwc_events_walk(). */
#define HWC_WALK_PROBE 0x1u /* say whether each event can be opened here */

typedef int (*hwc_event_walk_fn)(const struct hwc_event_info *ev, void *arg);

/* Call FN for every event of PMU whose name or spec matches PATTERN, in a
 * stable order.  PATTERN is NULL (every event), a glob (with *, ? or [...])
 * that must match whole, or else a substring; both ignore case.  PMU is:
 *   NULL          this machine: generic, cache, software, preset, the libpfm4
 *                 models detected here, the sysfs PMUs' events, tracepoints;
 *   "generic", "cache", "software", "preset", "tracepoint": one category;
 *   a libpfm4 model (see hwc_models_walk()), present here or not;
 *   a sysfs PMU (see hwc_pmus_walk()): its events/ aliases.
 * With HWC_WALK_PROBE each event shown says whether it can be opened here.  Events
 * that share a PMU whose answer is the same for all of them are probed once:
 * a libpfm4 model's events (one probe per model; a model that is not this
 * CPU's is reported as such without a probe) and tracepoints (one probe).
 * FN returns 0 to go on; a non-zero value stops the walk and is returned.
 * Returns 0, FN's value, -ENOENT (unknown PMU, with the closest name) or
 * -EINVAL (empty PMU name). */
int hwc_events_walk(const char *pmu, const char *pattern, unsigned flags, hwc_event_walk_fn fn,
		    void *arg);

/* A libpfm4 model: a table of events for one CPU (or uncore) PMU. */
struct hwc_model_info {
	const char *name;  /* what model::EVENT and hwc_events_walk() take: "skl" */
	const char *desc;  /* "Intel Skylake" */
	bool present;      /* detected on this machine's CPU (the kernel may still lack the PMU) */
	bool core;         /* a core PMU, as opposed to uncore or OS tables */
	bool os_tables;    /* libpfm4's copy of perf's generic events ("perf", "perf_raw") */
	int nevents;
	int ncounters;     /* general-purpose counters in libpfm4's table */
	int nfixed;        /* fixed counters in libpfm4's table */
};

/* The directory of perf's JSON event tables (pmu-events: x86/, arm64/, each
 * with mapfile.csv), before $HWC_EVENTS_DIR, $XDG_DATA_HOME/hwc/events and
 * PREFIX/share/hwc/events; NULL goes back to that search.  -ENOENT when DIR
 * is no directory. */
int hwc_set_events_dir(const char *dir);

/* Call FN for every libpfm4 model, in libpfm4's order; FN as for hwc_events_walk(). */
int hwc_models_walk(int (*fn)(const struct hwc_model_info *m, void *arg), void *arg);

/* Call FN for every model of perf's JSON event tables (see
 * hwc_set_events_dir()), as their mapfile.csv lists them: NAME is the model
 * directory ("skylake", "amdzen5", "arm/cortex-a76"; model::EVENT takes its
 * last component), DESC the architecture and the first CPU ID it maps
 * ("x86 GenuineIntel-6-55-[01234]"), PRESENT whether it is this CPU's,
 * CORE true, the counts 0.  No tree: nothing is called, 0 is returned. */
int hwc_json_models_walk(int (*fn)(const struct hwc_model_info *m, void *arg), void *arg);

/* A PMU the kernel exposes in /sys/bus/event_source/devices. */
struct hwc_pmu_info {
	const char *name;     /* "cpu", "software", "msr", "uncore_imc_0" */
	uint32_t type;        /* perf_event_attr.type */
	bool core;            /* the core PMU: "cpu", or a hybrid "cpu_core"/"cpu_atom" */
	const char *cpumask;  /* CPUs it counts on, "" when it follows tasks */
	size_t nevents;       /* aliases in events/ */
	const char *formats;  /* its terms, space-separated: "event=config:0-7,32-35 umask=config:8-15" */
	const char *caps;     /* its caps/ files, space-separated: "max_precise=3 pmu_name=skylake" */
	int rdpmc;            /* its rdpmc file: 0 off, 1 own events, 2 any; -1 none */
	/* Added in 0.1, at the end: */
	const char *cpus;     /* a core PMU's CPUs (its cpus file: hybrid and arm64 core
			       * PMUs have one), "" when it has none */
};

/* Call FN for every sysfs PMU, sorted by name; FN as for hwc_events_walk(). */
int hwc_pmus_walk(int (*fn)(const struct hwc_pmu_info *p, void *arg), void *arg);

/* ------------------------------------------------------------------ machine */

/* Read kernel.perf_event_paranoid into *LEVEL. */
int hwc_paranoid(int *level);

/* Online CPUs into CPUS (up to MAX); returns how many are online. */
int hwc_online_cpus(int *cpus, size_t max);

/* Where a CPU sits, from sysfs (HWC_SYSFS_ROOT/devices/system/...): what
 * perf stat --per-socket/--per-die/--per-cluster/--per-core/--per-cache/
 * --per-node aggregate by.  Added in 0.1. */
struct hwc_cpu_topology {
	int cpu;
	int socket;      /* topology/physical_package_id */
	int die;         /* topology/die_id; 0 where the kernel has none */
	int cluster;     /* topology/cluster_id; -1 where the kernel has none */
	int core;        /* topology/core_id (unique within its socket) */
	int node;        /* the NUMA node listing it (node/nodeN/cpuCPU); 0 without NUMA,
			  * -1 when no node lists it */
	int cache_level; /* the cache level asked for (the last level for 0); -1 not asked */
	int cache;       /* that cache's instance: the lowest CPU sharing it, as perf; -1 */
};

/* The topology of CPU.  CACHE_LEVEL: -1 looks at no cache, 0 at the last
 * level, 1 to 4 at that level.  Returns 0, -ENOENT (no such CPU in sysfs,
 * or no cache of that level) or another -errno, with detail. */
int hwc_cpu_topology(int cpu, int cache_level, struct hwc_cpu_topology *out);

/* The CPU and its core PMU. */
struct hwc_cpu_info {
	char vendor[16];       /* CPUID vendor: "GenuineIntel", "AuthenticAMD" */
	unsigned family, model, stepping; /* as displayed (extended fields folded in) */
	char brand[64];        /* "AMD EPYC 7B13", "" when the CPU has none */
	int cpus_online, cpus_configured;
	bool tsc_invariant;    /* the TSC ticks at a constant rate in all states */

	char pfm_model[32];    /* libpfm4 model detected from CPUID, "" for none */
	char pfm_desc[64];
	int pfm_counters, pfm_fixed; /* counters in that model's table */

	/* The core PMU as the kernel exposes it.  Without one, no hardware event
	 * can be opened and every count below is 0, whatever the CPU has. */
	bool core_pmu;
	char core_pmu_name[32];  /* "cpu", "cpu_core", "" */
	int counters;            /* general-purpose counters */
	int counter_width;       /* their width in bits */
	int fixed;               /* fixed-function counters */
	int fixed_width;
	char counters_source[64]; /* how they were obtained: "CPUID leaf 0xA", ... */

	int nmi_watchdog;        /* kernel.nmi_watchdog: 1 on, 0 off, -1 unknown */
	bool watchdog_counter;   /* the watchdog holds one general counter */
	/* Added in 0.1: an enum hwc_cpu_vendor in what was the struct's tail
	 * padding, so its size and every older field stay where they were. */
	uint8_t vendor_id;
};

/* Whose PMU the CPU has, from its CPUID vendor; more values may come. */
enum hwc_cpu_vendor {
	HWC_VENDOR_UNKNOWN = 0,
	HWC_VENDOR_INTEL,      /* GenuineIntel */
	HWC_VENDOR_AMD,        /* AuthenticAMD, and HygonGenuine (AMD's PMU) */
	HWC_VENDOR_ARM,        /* an Arm-architecture CPU (any implementer): see hwc_cpu_midr() */
};

/* Describe this machine's CPU and core PMU.  Returns 0 or -errno.  On
 * arm64, VENDOR is the MIDR implementer's name, FAMILY the implementer code,
 * MODEL the part number, STEPPING the revision and BRAND "Neoverse N1 r4p1". */
int hwc_cpu_info(struct hwc_cpu_info *out);

/* MIDR_EL1, the Arm main ID register, decoded. */
struct hwc_midr {
	uint64_t value;
	unsigned implementer;  /* bits 31:24: 0x41 Arm, 0x51 Qualcomm, 0x61 Apple, ... */
	unsigned variant;      /* bits 23:20: the major revision (the N of rNpM) */
	unsigned architecture; /* bits 19:16: 0xf, "described by the ID registers" */
	unsigned part;         /* bits 15:4: 0xd0c Neoverse N1, 0xd07 Cortex-A57, ... */
	unsigned revision;     /* bits 3:0: the minor revision (the M of rNpM) */
	const char *implementer_name; /* "Arm", ...; NULL when not known here */
	const char *part_name; /* "Neoverse N1", ...; NULL when not known here */
};
/* Decode VALUE (any host). */
void hwc_midr_decode(uint64_t value, struct hwc_midr *out);
/* MIDR_EL1 of online CPU CPU as Linux exposes it in
 * /sys/devices/system/cpu/cpuCPU/regs/identification/midr_el1.  Returns 0,
 * or -ENOENT (no such file: not an Arm CPU, or not that CPU) with detail. */
int hwc_cpu_midr(int cpu, struct hwc_midr *out);

/* What perf_event_paranoid and the caller's capabilities allow, each
 * established by opening a software event (so it is what the kernel says). */
struct hwc_permissions {
	int paranoid;          /* kernel.perf_event_paranoid */
	bool privileged;       /* CAP_PERFMON or CAP_SYS_ADMIN: the limits do not apply */
	bool user;             /* may count its own threads in user space */
	bool kernel;           /* ... and in the kernel */
	bool cpu_wide;         /* may count all tasks on a CPU */
	char summary[256];     /* one sentence saying the above */
};

int hwc_permissions(struct hwc_permissions *out);

/* ------------------------------------------------------------------ time */

/* The CPU's time-stamp counter: x86 rdtsc (not serializing), arm64 the
 * generic timer's virtual count CNTVCT_EL0; elsewhere CLOCK_MONOTONIC_RAW
 * in ns.  It is the counter the kernel's cap_user_time converts. */
uint64_t hwc_rdtsc(void);

/* How hwc_tsc_hz() obtained the rate. */
enum hwc_tsc_source {
	HWC_TSC_PERF_MMAP,     /* the kernel's conversion (perf mmap page, cap_user_time) */
	HWC_TSC_CPUID_15,      /* CPUID leaf 0x15: crystal clock x ratio */
	HWC_TSC_CPUID_16,      /* CPUID leaf 0x15 ratio, crystal from the 0x16 base MHz */
	HWC_TSC_HYPERVISOR,    /* CPUID leaf 0x40000010 (VMware/KVM timing leaf), kHz */
	HWC_TSC_CALIBRATED,    /* measured against CLOCK_MONOTONIC_RAW */
	HWC_TSC_CNTFRQ,        /* arm64: CNTFRQ_EL0, the generic timer's frequency (tried first) */
};

/* The exact rate of hwc_rdtsc() in Hz, from the first source that has it, in
 * the enum's order (arm64: CNTFRQ_EL0 first, which is exact by definition);
 * computed on the first call and cached.  SRC may be NULL. */
int hwc_tsc_hz(double *hz, enum hwc_tsc_source *src);

/* "perf mmap page (cap_user_time)", "calibrated against CLOCK_MONOTONIC_RAW", ... */
const char *hwc_tsc_source_name(enum hwc_tsc_source src);

/* Whether user space may read time and counters without a system call. */
struct hwc_user_reads {
	bool time;             /* cap_user_time: perf time from the TSC (time_mult, time_shift) */
	bool time_zero;        /* cap_user_time_zero: absolute perf timestamps from the TSC */
	uint32_t time_mult;    /* the kernel's TSC-to-ns conversion, when TIME */
	uint16_t time_shift;
	bool rdpmc;            /* cap_user_rdpmc on a core event of the calling thread */
	int rdpmc_sysfs;       /* the core PMU's rdpmc file: 0, 1, 2; -1 when absent */
	int pmc_width;         /* counter width from the mmap page, 0 when no core event opens */
	char time_why[512];    /* why not TIME, or "" */
	char rdpmc_why[512];   /* why not RDPMC, or "" */
};

/* Establish the above by opening a software event (time) and a core event
 * (rdpmc) on the calling thread and reading their mmap pages. */
int hwc_user_reads(struct hwc_user_reads *out);

/* ------------------------------------------------------------ metrics */

/* A metric of perf's JSON tables (see hwc_set_events_dir()): a formula in
 * perf's metric expression language over event counts. */
struct hwc_metric_info {
	const char *name;      /* MetricName: "tma_frontend_bound", "ipc"; asked for as
				* NAME:MOD (hwc_metrics_new()), "ipc:u", as perf shows it */
	const char *groups;    /* MetricGroup, ';'-separated: "TopdownL1;tma_L1_group"; "" */
	const char *desc;      /* BriefDescription; "" */
	const char *expr;      /* MetricExpr */
	const char *threshold; /* MetricThreshold; "" for none */
	const char *unit;      /* ScaleUnit's unit: "%", "percent of slots"; "" */
	double scale;          /* ScaleUnit's factor, 1 without one */
};

/* Call FN for every metric of MODEL's table (a JSON model directory as
 * hwc_json_models_walk() names it; NULL: this CPU's), in file order; stops
 * at FN's non-zero result.  -ENOENT with detail when there is no table. */
int hwc_metrics_walk(const char *model, int (*fn)(const struct hwc_metric_info *m, void *arg),
		     void *arg);

typedef struct hwc_metrics hwc_metrics;

enum {
	HWC_METRICS_NO_GROUP = 1 << 0,    /* never group a metric's events */
	HWC_METRICS_SYSTEM_WIDE = 1 << 1, /* every online CPU is counted (#core_wide) */
};

/* Select NAMES (a comma list of metric names and MetricGroup names, any
 * case, as perf stat -M takes them) from this CPU's table and append the
 * events they need to LIST: a metric's core and software events in one weak
 * group ({...}:W, as perf's -M writes it) unless its
 * MetricConstraint (NO_GROUP_EVENTS, _NMI with the NMI watchdog on, _SMT
 * with SMT on) or FLAGS say not; metrics it refers to resolved; tool events
 * (duration_time, user_time, system_time) come from hwc_metrics_compute().
 * A name the table lacks is looked up in the architecture's own tables
 * (arm64's sbsa.json).  -EINVAL with detail for an unknown name or an
 * expression that does not parse; -ENOENT when the metrics need events
 * or #literals this machine lacks (all named at once). */
int hwc_metrics_new(hwc_metrics **out, const char *names, unsigned flags, hwc_evlist *list);
void hwc_metrics_free(hwc_metrics *m);

size_t hwc_metrics_count(const hwc_metrics *m);
const struct hwc_metric_info *hwc_metrics_info(const hwc_metrics *m, size_t i);

/* Evaluate every metric from COUNTS[e], the scaled count of event e of the
 * list given to hwc_metrics_new() (NaN for one not counted; N its size),
 * over SECONDS of wall time, USER_S and SYS_S of CPU time (NaN: unknown). */
void hwc_metrics_compute(hwc_metrics *m, const double *counts, size_t n, double seconds,
			 double user_s, double sys_s);

/* Metric I as last computed, times its ScaleUnit factor; NaN when an input
 * was not counted or the formula divides by zero.  *OVER (may be NULL): 1 when its MetricThreshold holds
 * (perf shows it red), 0 when not, -1 without a threshold or its value. */
double hwc_metrics_value(const hwc_metrics *m, size_t i, int *over);

#ifdef __cplusplus
}
#endif
#endif
