/* perf's JSON event and metric tables (tools/perf/pmu-events/arch), read
 * at run time.  Internal to libhwc; never installed.
 *
 * The tree is found in this order: hwc_set_events_dir() (hwc --events-dir),
 * $HWC_EVENTS_DIR, $XDG_DATA_HOME/hwc/events (~/.local/share/hwc/events),
 * PREFIX/share/hwc/events.  It holds one directory per architecture (x86,
 * arm64, ...), each with perf's mapfile.csv and one directory per model.
 *
 * hwc__pe_table() returns one model's records: every record of every *.json
 * file of the model's directory (and of its sys/ directory), events (EventName) and metrics
 * (MetricName) alike, in file order (files sorted by name).  An arm64
 * record {"ArchStdEvent": "X", ...} comes back already merged with the
 * architecture-standard event X (the arch directory's top-level *.json:
 * common-and-microarch.json, recommended.json, ...): its own fields first,
 * the standard event's for the fields it lacks, as perf's jevents.py does.
 * Every field is kept as text (numbers as json-c prints them), so callers
 * read whatever key they need with hwc__pe_get().
 *
 * Tables are loaded once per process (on first use: json-c is loaded then,
 * with dlopen) and never freed (but by hwc__pe_forget(), for tests): the
 * pointers stay valid for the process's life.  Thread-safe. */
#ifndef HWC_PMU_EVENTS_H
#define HWC_PMU_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

struct hwc__pe_field {
	const char *key, *value;
};

struct hwc__pe_record {
	const char *name;   /* its EventName, or its MetricName for a metric */
	bool metric;        /* a metric (has MetricName) */
	const char *file;   /* the JSON file it is in, "pipeline.json" */
	size_t nfields;
	const struct hwc__pe_field *fields;
};

struct hwc__pe_table {
	const char *arch;   /* "x86", "arm64" */
	const char *model;  /* the model directory, "skylake", "arm/cortex-a76" */
	const char *dir;    /* its full path */
	size_t n;
	const struct hwc__pe_record *rec;
};

/* The tree's root directory, or NULL when none is found (no detail set). */
const char *hwc__pe_root(void);

/* The table of MODEL (a model directory: "skylake", "amdzen5",
 * "arm/cortex-a76"; looked for in every architecture, this host's first),
 * or of this host's CPU when MODEL is NULL (x86: CPUID as perf formats it,
 * "GenuineIntel-6-55-4", matched against mapfile.csv's regular expressions
 * as perf matches them; arm64: the MIDR of CPU 0, variant and revision as
 * perf compares them).  0 with *OUT, or -errno with detail: -ENOENT when
 * there is no tree, no such model or no model for this CPU. */
int hwc__pe_table(const char *model, const struct hwc__pe_table **out);

/* Drop every table loaded so far: the next call reads the tree again.
 * For tests and the fuzzer, which rewrite a tree between loads; no pointer
 * into a table may be held (nor another thread be using one). */
void hwc__pe_forget(void);

/* The records of ARCH's own top-level *.json files ("arm64": the
 * standard events of common-and-microarch.json and recommended.json, and
 * sbsa.json's metrics, Arm's top-down level 1); its model is "".  0 with
 * *OUT, or -errno with detail. */
int hwc__pe_arch_table(const char *arch, const struct hwc__pe_table **out);

/* Is MODEL a model directory of the tree?  Quietly: no detail. */
bool hwc__pe_model_known(const char *model);

/* The value of field KEY of R ("EventCode", "MetricExpr"), or NULL. */
const char *hwc__pe_get(const struct hwc__pe_record *r, const char *key);

/* The event (METRIC false) or metric named NAME in T, case-insensitive,
 * or NULL. */
const struct hwc__pe_record *hwc__pe_find(const struct hwc__pe_table *t, const char *name,
					  bool metric);

/* Call FN with the table of every model directory of this host's
 * architecture that has a sys/ directory (a system's PMUs, found by their
 * Compat rather than by CPU: arm/cmn, hisilicon/hip09, ...); stops at FN's
 * non-zero result. */
int hwc__pe_sys_walk(int (*fn)(const struct hwc__pe_table *t, void *arg), void *arg);

/* event_json.c: is R a system event or metric (it has a Compat) whose PMU
 * this machine has, with an identifier file that Compat matches whole? */
bool hwc__json_sys_present(const struct hwc__pe_record *r);

/* Call FN(model directory, arch, the first CPU ID mapfile.csv gives it, ARG)
 * for every model of the tree, as mapfile.csv lists them (each once); stops
 * at FN's non-zero result. */
int hwc__pe_models_walk(int (*fn)(const char *model, const char *arch, const char *cpuid,
				  void *arg),
			void *arg);

/* The CPU identifier this host is matched with ("GenuineIntel-6-55-4",
 * "0x00000000410fd0c1") into BUF; false when it has none. */
bool hwc__pe_host_cpuid(char *buf, size_t size);

/* The model directory mapfile.csv of ARCH gives CPUID ("GenuineIntel-6-55-4",
 * "0x00000000410fd0c0") into MODEL; false when none. */
bool hwc__pe_model_for(const char *arch, const char *cpuid, char *model, size_t size);

#endif
