/* Shared between libhwc's source files; never installed. */
#ifndef HWC_INTERNAL_H
#define HWC_INTERNAL_H

#include "hwc/hwc.h"

#include <pthread.h>
#include <stdarg.h>

#define HWC_EXPORT __attribute__((visibility("default")))
#define HWC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* error.c: set the thread's detail text and return ERR (a -errno). */
int hwc__fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with fixed TEXT and no formatting: safe in a signal handler. */
int hwc__fail_text(int err, const char *text);
/* Append more text to the detail of the current failure. */
void hwc__fail_append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hwc__clear_error(void);

/* sys.c */
int hwc__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			 unsigned long flags);
/* Root of sysfs, "/sys" unless HWC_SYSFS_ROOT is set (tests use a fake tree). */
const char *hwc__sysfs_root(void);
/* Read a small text file into BUF (NUL-terminated, trailing newline removed). */
int hwc__read_file(const char *path, char *buf, size_t size);
int hwc__read_int_file(const char *path, long long *out);
/* Is CPU in LIST, a kernel CPU list such as "0-3,8,10-11"? */
bool hwc__cpu_in_list(const char *list, int cpu);
/* Is the caller allowed what CAP_PERFMON/CAP_SYS_ADMIN allow? */
bool hwc__privileged(void);
/* Explain an -errno from perf_event_open of EV into the detail text. */
int hwc__explain_open_error(int err, const struct hwc_event *ev, pid_t pid, int cpu);
/* pmu.c: the kernel's core hardware PMU ("cpu", a hybrid's "cpu_core", or
 * another architecture's, e.g. "armv8_pmuv3") and its type, or NULL when it
 * exposes none.  The name is the calling thread's until its next call. */
const char *hwc__core_pmu(uint32_t *type);
/* The core PMUs, sorted by name as perf sorts them, when there are two or
 * more (Intel hybrids' cpu_atom and cpu_core, big.LITTLE arm64's armv8_*):
 * a generic hardware or cache event opens once on each, with the PMU's
 * type in config[63:32] (perf's extended type).  Returns how many (0 or
 * 2 and more: one core PMU is not hybrid) with *OUT to free, or -errno. */
struct hwc__core_pmu {
	char name[64];
	uint32_t type;
	char cpus[1024]; /* its cpus file */
};
int hwc__hybrid_pmus(struct hwc__core_pmu **out);
/* An event of PMU, which sysfs lacks under that name, opens on each of its
 * numbered instances (uncore_imc_0, uncore_imc_1, ...), matched as perf
 * matches them: PMU as a user writes it ("uncore_" optional), or (JSON) as
 * a JSON table's Unit names it ("socket,pmuname" too); with COMPAT (a JSON
 * table's Compat, a regular expression) only those whose identifier file
 * it matches whole.  Returns how many there are, in perf's order, and the
 * Ith into OUT (when there is one); 0 for none. */
int hwc__pmu_instance(const char *pmu, bool json, const char *compat, int i, char *out,
		      size_t size);
/* Forget the PMUs the last hwc__pmu_instance() or hwc__pmus_with_alias()
 * query found (they answer again from it, for the copies of one event). */
void hwc__pmu_memo_forget(void);
/* The PMUs whose events/ directory has an alias NAME (perf's
 * perf_pmu__have_event: the file in lower or in upper case), in perf's
 * order (core PMUs first, then uncore_imc_2 before uncore_imc_10).
 * Returns how many, and the Ith's name into PMU and its file's into ALIAS
 * (when there is one); 0 for none. */
int hwc__pmus_with_alias(const char *name, int i, char *pmu, size_t psize, char *alias,
			 size_t asize);
/* Is sysfs PMU NAME the PMU of an event, or one of its instances?  As a
 * user writes it (perf_pmu__match): "uncore_" is optional on both sides,
 * imc/.../ is uncore_imc_0's, and a glob matches (uncore_imc_[01]/.../).  As a JSON table's Unit names it
 * (pmu_uncore_alias_match): "socket,pmuname" is socketX_pmunameY. */
bool hwc__pmu_name_matches(const char *name, const char *pmu, bool json);
/* Does all of PMU's identifier file match COMPAT (a regular expression)? */
bool hwc__pmu_identifier_matches(const char *pmu, const char *compat);
/* Does PMU count on CPU?  False for a PMU whose cpus file (a core PMU's)
 * leaves CPU out and, when the target is EVERY_CPU online (-a, not -C),
 * for one whose cpumask (an uncore PMU's: the CPUs that read it) does, as
 * perf opens such a PMU's events on its cpumask alone. */
bool hwc__pmu_covers_cpu(const char *pmu, int cpu, bool every_cpu);
/* An Arm PMUv3 common event (0x00-0x3f) that this CPU does not count:
 * the core PMU's name when its events/ directory, which the kernel fills
 * from PMCEID, leaves ATTR's event out; NULL otherwise (a count of such an
 * event would be a silent 0). */
const char *hwc__pmu_lacks_arm_event(const struct perf_event_attr *attr);
/* The core PMU's name, "cpu" without one: the PMU of generic and raw events. */
const char *hwc__core_pmu_label(void);
/* Event types that use the core PMU's counters. */
bool hwc__is_core_hw(const struct perf_event_attr *attr);
/* General-purpose core counters usable by one group (less the one the NMI
 * watchdog holds), or 0 when unknown; *NFIXED gets the fixed counters. */
int hwc__core_counters(const char **model, int *nfixed, bool *watchdog);
/* The fixed counter (0 instructions, 1 cycles, 2 ref-cycles) that can count
 * ATTR, or -1 when it needs a general-purpose counter. */
int hwc__fixed_counter_of(const struct perf_event_attr *attr);

/* Internal results, positive so that no syscall's -errno is ever one. */
#define HWC__NOT_MINE 1        /* a resolver: the name is not this source's */
#define HWC__RETRY_USER_ONLY 2 /* opening: switched to user-only, open again */
#define HWC__RETRY_UNGROUPED 3 /* opening: a weak group was split, open again */

/* An event: one of an evlist, or the private copy counting or sampling
 * opened.  Allocated once on the heap (hwc__ev_new, hwc__ev_dup) and never
 * moved, so pub's strings point into its own arrays for its whole life. */
struct hwc__ev {
	struct hwc_event pub;
	char name[256];
	char pmu[64];
	char origin[512];
	char unit[32];
	char filter[256]; /* a tracepoint's filter, "" for none */
	char *cgroup;     /* counted only in this cgroup (hwc_evlist_set_cgroup()), NULL for
			   * none: on the heap, a path can be 4 KB and a scrape of many
			   * cgroups copies events per cgroup */
	bool explicit_gh; /* a G or H modifier chose guest/host counting */
	char copy_of[256]; /* pub.copy_of */
	int instance;      /* in: the instance of a PMU named without its number
			    * (hwc__pmu_instance) to resolve on, 0 the first */
	int ninstances;    /* out: how many instances that PMU has; 0 when named whole */
};
/* Point pub's strings at EV's own arrays, scale 1: for a zeroed event on
 * the stack, which the resolver fills and never moves. */
void hwc__ev_init(struct hwc__ev *ev);
/* A zeroed event on the heap, initialised as above; NULL without memory. */
struct hwc__ev *hwc__ev_new(void);
/* A private copy of PUB on the heap; NULL without memory. */
struct hwc__ev *hwc__ev_dup(const struct hwc_event *pub);
/* Free an event of hwc__ev_new or hwc__ev_dup (NULL: nothing). */
void hwc__ev_free(struct hwc__ev *ev);
/* Apply EV's tracepoint filter to FD, just opened: 0, or -errno with detail
 * (the caller closes FD). */
int hwc__apply_filter(int fd, const struct hwc__ev *ev);
/* Events in the group led by event E of LIST, 0 when E leads none. */
size_t hwc__group_size(const hwc_evlist *list, size_t e);

/* target.c: what counting and sampling share about their targets. */
struct hwc__child {          /* a COMMAND target's process */
	pid_t pid;           /* -1: none */
	int pidfd;           /* the child's, from clone3, until taken; or -1 */
	bool started;        /* released to exec */
	char name[256];      /* argv[0], for the exec error */
	void *stack;         /* the child's until it exec'd (it shares our memory) */
};
void hwc__child_init(struct hwc__child *ch);
/* Start a child that waits for hwc__child_release() before it execs ARGV. */
int hwc__child_spawn(struct hwc__child *ch, char *const *argv);
/* Let the child exec: 0, or the exec's -errno (the child is then reaped). */
int hwc__child_release(struct hwc__child *ch);
/* The child's pidfd, now the caller's to close, or -1 (made by clone(),
 * or taken before): then hwc__pidfd_open() it. */
int hwc__child_take_pidfd(struct hwc__child *ch);
/* Wait for the child; STATUS (may be NULL) gets its wait status. */
int hwc__child_reap(struct hwc__child *ch, int *status);
/* A child never released quits and is reaped. */
void hwc__child_discard(struct hwc__child *ch);
/* A pidfd that polls readable once PID (THREAD: the thread PID) ends, or
 * -errno: -ESRCH when it is gone, -EOPNOTSUPP for a thread this kernel
 * cannot watch (before Linux 6.9, one that does not lead its process).
 * The one place that knows the PIDFD_THREAD fallback; sets no detail. */
int hwc__pidfd_open(pid_t pid, bool thread);
/* The CPUs of target T (all online ones when T lists none), validated;
 * *CPUS is malloc'ed. */
int hwc__target_cpus(const struct hwc_target *t, int **cpus, size_t *n);
/* Call OPEN_TID for every thread of PID, rescanning /proc/PID/task until no
 * new thread shows up.  OPEN_TID returns 0, -ESRCH (thread gone: skipped) or
 * an -errno that stops the scan.  -ESRCH when no thread could be opened. */
int hwc__each_thread(pid_t pid, int (*open_tid)(void *arg, pid_t tid), void *arg);

/* One event as counting or sampling opens it on every instance (thread,
 * CPU) of its target.  A descriptor array is laid out [instance][event]. */
struct hwc__opened {
	struct hwc__ev *ev;   /* a private copy: the attr as opened */
	size_t leader;        /* index of its group's leader; a leader's own */
	size_t group_size;    /* a leader: events in its group (1 alone); a member: 0 */
	/* A group is opened and read in one order: its leader, then its members
	 * by index.  Its members follow the leader, but after a refused weak
	 * group (hwc__split_weak_group) those kept together need not be next to
	 * each other, nor after their leader: walk NEXT, read at 3 + POS. */
	size_t next;          /* the group's next event in that order, HWC__NO_EVENT after
			       * its last */
	size_t pos;           /* its place in that order: 0 the leader */
	bool user_only;       /* kernel counting was denied: switched to user space */
	bool ungrouped;       /* its weak group was refused: opened on its own */
	bool refused;         /* its weak group was refused once: what is left of it
			       * (events that must be in a group) is not split again */
	int cgroup_fd;        /* its cgroup's directory (PERF_FLAG_PID_CGROUP), or -1 */
	/* counting: an event HWC_SKIP_UNSUPPORTED left out */
	int status;           /* 0, or the -errno that left it out */
	char error[256];      /* its detail */
	/* sampling */
	uint64_t *ids;        /* the kernel's ids of its descriptors */
	size_t nids, cap_ids;
};
/* The events of one counting or sampling handle. */
struct hwc__events {
	struct hwc__opened *e;
	size_t n, cap;
};
#define HWC__NO_EVENT SIZE_MAX
/* The largest group counting and sampling open: its values are read into
 * buffers on the stack (a signal handler may read them). */
#define HWC__MAX_GROUP 64
/* Append a private copy of PUB in a group of GROUP_SIZE events (0 for a
 * member) led by event LEADER: 0 or -errno with detail. */
int hwc__events_add(struct hwc__events *s, const struct hwc_event *pub, size_t leader,
		    size_t group_size);
/* Append every event of LIST with its groups: 0 or -errno with detail. */
int hwc__events_add_list(struct hwc__events *s, const hwc_evlist *list);
void hwc__events_free(struct hwc__events *s);
/* Is the group led by G laid out as written: its members right after it? */
bool hwc__group_in_place(const struct hwc__events *s, size_t g);
/* Does this system have Intel's perf metrics (Ice Lake on): does its core
 * PMU, cpu or a hybrid's cpu_core, name a slots event in sysfs
 * (HWC_SYSFS_ROOT)?  Then the topdown-* events open only in a group led
 * by slots. */
bool hwc__perf_metrics(void);
/* perf's rule (x86's arch_evsel__must_be_in_group, perf 6.6 and later):
 * must EV stay in a group when its weak group is refused?  Only with perf
 * metrics (PERF_METRICS, hwc__perf_metrics()), for an event of the core
 * PMU (type PERF_TYPE_RAW) whose name holds "topdown" or "slots" in any
 * case, but not "uops_retired.slots". */
bool hwc__must_stay_grouped(const struct hwc_event *ev, bool perf_metrics);
/* The kernel refused a member into the weak group led by LEADER: make
 * each event of the group a group of its own (ungrouped), but for those
 * that must stay in a group (hwc__must_stay_grouped), which stay together,
 * in their order, led by the first of them named slots (perf sorts it
 * first), else by the first of them; all are marked refused.  No system
 * call: tests drive it with made-up events. */
void hwc__split_weak_group(struct hwc__events *s, size_t leader, bool perf_metrics);
/* Open event E of S with ATTR (a copy of its attr the caller adjusted):
 * 0 with *FD, -errno (no detail: the caller explains the open),
 * HWC__RETRY_USER_ONLY when kernel counting was denied, the event may fall
 * back (FLAGS: the target's) and every event that did not choose its
 * privilege levels was switched to user space only, or HWC__RETRY_UNGROUPED
 * when the kernel refused E into its weak group, which was split
 * (hwc__split_weak_group, as perf's evlist__reset_weak_group does). */
int hwc__open_event(struct hwc__events *s, size_t e, struct perf_event_attr *attr, pid_t pid,
		    int cpu, int group_fd, unsigned flags, int *fd);
/* Is ERR, of hwc__open_event, one that wants everything closed and opened again? */
static inline bool hwc__open_again(int err)
{
	return err == HWC__RETRY_USER_ONLY || err == HWC__RETRY_UNGROUPED;
}
/* Targets counted per CPU, every task on it (CPUS), or those of a cgroup. */
static inline bool hwc__cpu_wide(enum hwc_target_kind k)
{
	return k == HWC_TARGET_CPUS || k == HWC_TARGET_CGROUP;
}
/* cgroup.c: open the cgroup of every event of S that has one (its own, else
 * a CGROUP target's): 0 or -errno with detail. */
int hwc__events_open_cgroups(struct hwc__events *s, const struct hwc_target *t);
/* The directory of CGROUP (see hwc_cgroup_path()), opened: fd or -errno. */
int hwc__cgroup_open(const char *cgroup);
/* Call OPEN(ARG); while it returns HWC__RETRY_USER_ONLY (once) or
 * HWC__RETRY_UNGROUPED, CLOSE(ARG) and OPEN(ARG) again.  WHAT names the
 * activity for the error. */
int hwc__open_with_fallback(int (*open)(void *arg), void (*close)(void *arg), void *arg,
			    const char *what);
/* REQ (an ioctl without argument) on every open group leader of FD[NINST][S->n]. */
int hwc__ioctl_leaders(const struct hwc__events *s, const int *fd, size_t ninst,
		       unsigned long req);
/* Run CLEANUP(ARG) keeping the detail of failure ERR; returns ERR. */
int hwc__fail_cleanup(int err, void (*cleanup)(void *arg), void *arg);

/* Resolver pieces.  Each fills EV (zeroed, name set, scale 1) and returns 0,
 * HWC__NOT_MINE when the name is not theirs (the next source is asked), or
 * -errno with detail when it is theirs but wrong. */
struct hwc__mods {
	bool u, k, h;      /* letters given */
	bool explicit_priv;
	bool guest, host;  /* G, H given */
	int precise;
	bool pinned, exclude_idle, exclusive;
	bool weak;         /* W: a weak group */
};
int hwc__parse_mods(const char *mods, const char *whole, struct hwc__mods *m);
/* Parse perf's modifier letters MODS and apply them to EV (WHOLE: the spec). */
int hwc__modify(struct hwc__ev *ev, const char *mods, const char *whole);

int hwc__resolve_table(const char *base, struct hwc__ev *ev);
/* The name perf gives a generic hardware or software event, or NULL. */
const char *hwc__table_name(uint32_t type, uint64_t config);
/* The candidates a PAPI/illumos preset maps to (N may be 0: known, unmapped),
 * or NULL when BASE is no preset.  LABEL gets the canonical name. */
const char *const *hwc__preset_candidates(const char *base, const char **label, size_t *n);
int hwc__resolve_pfm(const char *spec, struct hwc__ev *ev);
int hwc__resolve_pmu(const char *pmu, const char *terms, struct hwc__ev *ev);
int hwc__resolve_tracepoint(const char *spec, struct hwc__ev *ev);
/* event_json.c: SPEC (NAME[:MODS] or MODEL::NAME[:MODS]) in perf's JSON
 * table of MODEL, or of this CPU when MODEL is NULL (then HWC__NOT_MINE
 * also when there is no table for it). */
int hwc__resolve_json(const char *model, const char *spec, struct hwc__ev *ev);
/* Is NAME an event of PMU (or of the PMU it is a numbered instance of) in
 * this CPU's JSON table, as perf takes pmu/NAME/?  Its terms ("event=0x4,
 * umask=0x3") into BODY (may be NULL). */
bool hwc__json_alias(const char *pmu, const char *name, char *body, size_t size);

/* Candidate names for "did you mean": calls FN for every known name. */
typedef void (*hwc__name_fn)(const char *name, void *arg);
void hwc__table_names(hwc__name_fn fn, void *arg);
void hwc__pfm_names(hwc__name_fn fn, void *arg);
/* The events of one libpfm4 model, as "model::EVENT". */
void hwc__pfm_model_names(const char *model, hwc__name_fn fn, void *arg);
void hwc__pmu_alias_names(hwc__name_fn fn, void *arg);
/* The JSON events of MODEL as "model::EVENT", or of this CPU (NULL) bare. */
void hwc__json_names(const char *model, hwc__name_fn fn, void *arg);

/* libpfm4, initialised once; returns 0 or -ENOTSUP with detail. */
int hwc__pfm_init(void);
bool hwc__pfm_model_known(const char *model);
void hwc__pfm_models_with_event(const char *spec);
/* Name of the libpfm4 model of this CPU (or the forced one), or NULL. */
const char *hwc__pfm_host_model(int *ncounters, int *nfixed);

/* Listing (list.c puts these together for hwc_events_walk()).  Each calls FN
 * with probed == false and returns 0, FN's non-zero value, or -errno. */
int hwc__table_walk(enum hwc_source which, hwc_event_walk_fn fn, void *arg); /* GENERIC, CACHE, SOFTWARE */
int hwc__preset_walk(int (*fn)(const char *name, const char *desc, void *arg), void *arg);
int hwc__pfm_models_walk(int (*fn)(const struct hwc_model_info *m, void *arg), void *arg);
/* The libpfm4 model called MODEL (case-insensitive); -ENOENT without detail. */
int hwc__pfm_model(const char *model, struct hwc_model_info *out);
/* -ENOENT without detail when MODEL is no libpfm4 model. */
int hwc__pfm_events_walk(const char *model, hwc_event_walk_fn fn, void *arg);
/* The events of a JSON model (NULL: this CPU's); -errno with detail. */
int hwc__json_events_walk(const char *model, hwc_event_walk_fn fn, void *arg);
int hwc__pmus_walk(int (*fn)(const struct hwc_pmu_info *p, void *arg), void *arg);
bool hwc__pmu_exists(const char *name);
/* -ENOENT without detail when PMU is not in sysfs. */
int hwc__pmu_events_walk(const char *pmu, hwc_event_walk_fn fn, void *arg);
/* The tracepoints that match PATTERN (their ids are read only for those);
 * -ENOENT (tracefs not mounted) or -EACCES (not readable), with detail. */
int hwc__tracepoints_walk(const char *pattern, hwc_event_walk_fn fn, void *arg);
/* hwc_events_walk()'s PATTERN rule: NULL, a glob, or a substring; no case. */
bool hwc__event_matches(const char *pattern, const char *name, const char *spec);

/* Place VALUE into CONFIG words following a sysfs format ("config:0-7,32-35"). */
int hwc__format_apply(const char *format, uint64_t value, struct perf_event_attr *attr,
		      const char *term);

/* unwind.c: the user registers the DWARF unwinder needs in a sample
 * (attr.sample_regs_user), 0 where it cannot unwind. */
uint64_t hwc__unwind_regs_mask(void);

/* A byte buffer, for file sections (features.c). */
struct hwc__bytes {
	uint8_t *p;
	size_t len, cap;
};
/* Append N bytes of DATA (NULL: zeros). */
int hwc__bytes_put(struct hwc__bytes *b, const void *data, size_t n);
int hwc__bytes_u32(struct hwc__bytes *b, uint32_t v);
int hwc__bytes_u64(struct hwc__bytes *b, uint64_t v);
/* A perf.data string: u32 length, then S NUL-padded to that length. */
int hwc__bytes_string(struct hwc__bytes *b, const char *s);
/* Append the perf.data header feature FEAT describing this machine (hostname,
 * CPUs, topology, ...); -ENOENT when the machine cannot describe it. */
int hwc__machine_feature(int feat, struct hwc__bytes *b);

/* file.c: open PATH for reading if it is a regular file, without blocking
 * (a FIFO or device is never opened): a descriptor, or -errno, -EINVAL when
 * PATH is not a regular file.  No detail is set. */
int hwc__open_regular(const char *path);
struct hwc_output;
/* hwc_output_create() of PATH relative to the directory descriptor DIR (or
 * AT_FDCWD; the output keeps its own copy), not clearing the detail.
 * FLAGS may add HWC__OUTPUT_NOREPLACE: the commit only ever makes a new
 * name (renameat2's RENAME_NOREPLACE): if PATH appeared meanwhile, it is
 * kept, the temporary file removed, and the commit fails with -EEXIST. */
#define HWC__OUTPUT_NOREPLACE 0x100u
int hwc__output_createat(struct hwc_output **out, int dir, const char *path, unsigned flags);
int hwc__output_commit(struct hwc_output *o);
int hwc__output_set_path(struct hwc_output *o, const char *path);

/* buildid.c: the GNU build-id of an ELF file, or of the running kernel, into
 * ID (MAX bytes); returns its length or -errno. */
int hwc__build_id(const char *path, uint8_t *id, size_t max);
int hwc__kernel_build_id(uint8_t *id, size_t max);
/* The loaded kernel module MODULE's, from its notes in /sys/module. */
int hwc__module_build_id(const char *module, uint8_t *id, size_t max);
/* The module a .ko file is, from its name FILE (no directory): "NAME.ko",
 * .ko.gz, .ko.xz or .ko.zst, '-' read as '_' as the kernel does; false for
 * any other name. */
bool hwc__module_name(const char *file, char *name, size_t size);
/* Calls FOUND(NAME, PATH, ARG) for each module file under
 * /lib/modules/RELEASE of the running kernel (hwc__module_name's names, as
 * perf finds them), until it returns true. */
void hwc__module_files(bool (*found)(const char *name, const char *path, void *arg), void *arg);
/* The running kernel's vDSO as this process maps it (AT_SYSINFO_EHDR): its
 * ELF image and size, from its program and section headers. */
int hwc__vdso_image(const uint8_t **image, size_t *size);
/* Its build-id: its length, or -errno. */
int hwc__vdso_build_id(uint8_t *id, size_t max);

/* recording.c: the perf.data writer's side the sampler uses. */
struct hwc_recording;
/* Add an event; LEADER is the index of its group's leader (its own index
 * for a leader, -1 outside groups).  Returns the new event's index. */
int hwc__recording_add_event(struct hwc_recording *rec, const struct perf_event_attr *attr,
			     const char *name, int leader);
int hwc__recording_add_ids(struct hwc_recording *rec, int event, const uint64_t *ids, size_t n);
/* True the first time WHAT is asked for a recording: what existed before
 * sampling is described once, however many samplers are added. */
#define HWC__SYNTH_KERNEL 0x1u
#define HWC__SYNTH_ALL 0x2u
bool hwc__recording_once(struct hwc_recording *rec, unsigned what);
/* The first event's attr: its sample_id layout is the synthesized records'. */
const struct perf_event_attr *hwc__recording_first_attr(const struct hwc_recording *rec);

/* ids.c: sample ids to events. */
struct hwc__idmap {
	uint64_t id;
	size_t ev; /* the event's index */
};
/* The PERF_SAMPLE_IDENTIFIER of record H: the first word of a sample, the
 * last of any other record (with sample_id_all); 0 when H is too short. */
uint64_t hwc__record_id(const struct perf_event_header *h);
/* Look ID up in MAP[N], sorted by id: true and *EV, or false. */
bool hwc__idmap_find(const struct hwc__idmap *map, size_t n, uint64_t id, size_t *ev);
/* Tgid of thread TID from /proc, or -1. */
pid_t hwc__tgid_of(pid_t tid);

/* synth.c: records describing what existed before sampling started,
 * handed to a sink: a recording, or a symbolizer watching live. */
struct hwc__sink {
	int (*write)(void *arg, const struct perf_event_header *h);
	void *arg;
	const struct perf_event_attr *attr; /* the records' sample_id layout, or NULL */
};
int hwc__synth_kernel_map(const struct hwc__sink *k);
/* COMM, MMAP2 and FORK records of process PID and its threads. */
int hwc__synth_process(const struct hwc__sink *k, pid_t pid);
/* The same for every process in /proc. */
int hwc__synth_all(const struct hwc__sink *k);
/* A CGROUP record (id and path) for the cgroup directory DIRFD and each
 * one below it, so that readers name the cgroups of samples. */
int hwc__synth_cgroups(const struct hwc__sink *k, int dirfd);

/* Make room for N elements of SIZE bytes in the array *PP of capacity *CAP,
 * doubling it: 0 or -ENOMEM (with detail).  PP is the address of the
 * array's pointer. */
int hwc__reserve(void *pp, size_t *cap, size_t n, size_t size);

/* A string builder, for names and details. */
struct hwc__buf {
	char *s;
	size_t len, cap;
};
int hwc__buf_printf(struct hwc__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Levenshtein distance, capped at LIMIT+1. */
size_t hwc__edit_distance(const char *a, const char *b, size_t limit);

/* Raw counts of every event of instance 0 (counter.c), for the regions. */
int hwc__counters_read_raw(hwc_counters *c, uint64_t *raw);

/* dl.c: libraries loaded on first use.  Open SONAME and store the address
 * of each of the N functions SYMS names at its offset in TABLE: 0, or
 * -ENOTSUP with WHY (SIZE bytes) saying what failed, for the caller's
 * detail.  libpfm4 and json-c load through it; so do elfutils and libzstd
 * (dl.h lists their functions), each once, with these two: 0, or -ENOTSUP
 * with a detail that names the library and its package. */
struct hwc__dl_sym {
	const char *name;
	size_t offset;
};
int hwc__dl_open(const char *soname, const struct hwc__dl_sym *syms, size_t n, void *table,
		 char *why, size_t size);
/* Run LOAD once (through ONCE); 0 when it succeeded, else -ENOTSUP with a
 * detail naming WHAT (and its soname), the loader's reason WHY (LOAD's own
 * buffer, empty on success) and the PACKAGES to install. */
int hwc__dl_load_once(pthread_once_t *once, void (*load)(void), const char *why,
		      const char *what, const char *packages);
int hwc__load_elfutils(void); /* symbols, DWARF, build-ids */
int hwc__load_zstd(void);     /* compressed recordings */

#endif
