/* Shared between libhwc's source files; never installed. */
#ifndef HWC_INTERNAL_H
#define HWC_INTERNAL_H

#include "hwc/hwc.h"

#include <stdarg.h>

#define HWC_EXPORT __attribute__((visibility("default")))
#define HWC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* error.c: set the thread's detail text and return ERR (a -errno). */
int hwc__fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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
/* Is the caller allowed what CAP_PERFMON/CAP_SYS_ADMIN allow? */
bool hwc__privileged(void);
/* Explain an -errno from perf_event_open of EV into the detail text. */
int hwc__explain_open_error(int err, const struct hwc_event *ev, pid_t pid, int cpu);
/* True when the kernel exposes a core hardware PMU ("cpu" or a hybrid "cpu_*"). */
bool hwc__have_cpu_pmu(void);
/* Event types that use the core PMU's counters. */
bool hwc__is_core_hw(const struct perf_event_attr *attr);
/* General-purpose core counters usable by one group (less the one the NMI
 * watchdog holds), or 0 when unknown; *NFIXED gets the fixed counters. */
int hwc__core_counters(const char **model, int *nfixed, bool *watchdog);
/* The fixed counter (0 instructions, 1 cycles, 2 ref-cycles) that can count
 * ATTR, or -1 when it needs a general-purpose counter. */
int hwc__fixed_counter_of(const struct perf_event_attr *attr);

/* An event of an evlist with the storage its public strings point to. */
struct hwc__ev {
	struct hwc_event pub;
	char name[256];
	char pmu[64];
	char origin[512];
	char unit[32];
	bool explicit_gh; /* a G or H modifier chose guest/host counting */
};
/* Point pub's strings at the storage; call after filling the arrays. */
void hwc__ev_fix_strings(struct hwc__ev *ev);

/* Resolver pieces.  Each fills EV (zeroed, name set, scale 1) and returns 0,
 * -ENOENT without detail when the name is not theirs, or another -errno
 * (or -ENOENT with detail) when it is theirs but wrong. */
struct hwc__mods {
	bool u, k, h;      /* letters given */
	bool explicit_priv;
	bool guest, host;  /* G, H given */
	int precise;
	bool pinned, exclude_idle, exclusive;
};
int hwc__parse_mods(const char *mods, const char *whole, struct hwc__mods *m);

int hwc__resolve_table(const char *base, struct hwc__ev *ev);
/* The candidates a PAPI/illumos preset maps to (N may be 0: known, unmapped),
 * or NULL when BASE is no preset.  LABEL gets the canonical name. */
const char *const *hwc__preset_candidates(const char *base, const char **label, size_t *n);
int hwc__resolve_pfm(const char *spec, struct hwc__ev *ev);
int hwc__resolve_pmu(const char *pmu, const char *terms, struct hwc__ev *ev);
int hwc__resolve_tracepoint(const char *spec, struct hwc__ev *ev);

/* Candidate names for "did you mean": calls FN for every known name. */
typedef void (*hwc__name_fn)(const char *name, void *arg);
void hwc__table_names(hwc__name_fn fn, void *arg);
void hwc__pfm_names(hwc__name_fn fn, void *arg);
/* The events of one libpfm4 model, as "model::EVENT". */
void hwc__pfm_model_names(const char *model, hwc__name_fn fn, void *arg);
void hwc__pmu_alias_names(hwc__name_fn fn, void *arg);

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

/* A string builder, for names and details. */
struct hwc__buf {
	char *s;
	size_t len, cap;
};
int hwc__buf_printf(struct hwc__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Levenshtein distance, capped at LIMIT+1. */
size_t hwc__edit_distance(const char *a, const char *b, size_t limit);

#endif
