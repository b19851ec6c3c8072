/* The profile a recording (or a live sampler) holds, aggregated once:
 * what hwc report, hwc top and pmcstat show of it. */
#ifndef HWC_PROFILE_H
#define HWC_PROFILE_H

#include <hwc/symbol.h>
#include <regex.h>
#include <stdio.h>

/* table.c: the chained hash table every aggregate lives in.  An entry
 * starts with its link; the table owns the entries.  Entries do not keep
 * their hash (there are millions of tree nodes): the table calls the
 * function rp_table_new() was given to grow and to iterate. */
struct rp_link {
	struct rp_link *next;
};

struct rp_table {
	struct rp_link **buckets;
	size_t cap, len;
	uint64_t (*hash)(const void *entry);
	struct rp_link *chunks; /* the entries' memory, newest first */
	char *chunk_next;       /* free in the newest chunk */
	size_t chunk_left;
};
#define RP_CHUNK (256 * 1024)

/* The entry under HASH that SAME(entry, KEY) accepts, or NULL. */
void *rp_table_find(const struct rp_table *t, uint64_t hash,
		    bool (*same)(const void *entry, const void *key), const void *key);
/* A new zeroed entry of SIZE bytes (its struct first) under HASH, which
 * HASHFN(entry) must give back once the caller has filled in the key. */
void *rp_table_new(struct rp_table *t, size_t size, uint64_t hash,
		   uint64_t (*hashfn)(const void *entry));
/* The entry after PREV (NULL: the first), or NULL after the last, in
 * bucket order:
 *     for (struct rp_row *w = NULL; (w = rp_table_next(&r->rows, w));) */
void *rp_table_next(const struct rp_table *t, const void *prev);
/* The entries KEEP(entry, ARG) accepts (every one when KEEP is NULL) in an
 * array sorted by CMP (qsort's, given pointers to the entries' pointers;
 * NULL: in bucket order),
 * NULL-terminated; *N gets their number.  NULL (and *N 0) without memory;
 * the caller frees the array. */
void *rp_table_sorted(const struct rp_table *t, bool (*keep)(const void *entry, const void *arg),
		      const void *arg, int (*cmp)(const void *, const void *), size_t *n);
/* Free every entry (FINI, when not NULL, first frees what it holds) and
 * the table's own memory; the table is then empty. */
void rp_table_free(struct rp_table *t, void (*fini)(void *entry));
/* The hash of a string key (FNV-1a), for every table keyed by names. */
uint64_t rp_str_hash(const char *s);

/* A frame as the views see it: a function, or with --srcline a function at
 * one source line (interned: one pointer per distinct frame). */
struct rp_func {
	struct rp_link link; /* first */
	const struct hwc_symbol *sym;
	const char *file; /* --srcline only */
	unsigned line;
	bool at_addr;     /* rp_opts.leaf_addr: the sampled frame at one address */
	uint64_t addr;    /* then that address, DSO-relative */
	uint64_t self, total;           /* period */
	uint64_t self_samples, total_samples;
	unsigned id;                    /* 1-based, for pprof */
	unsigned seen;                  /* sample stamp: count once per sample */
};

/* A node of the call tree, root to leaf (callers above callees). */
struct rp_node {
	struct rp_link link; /* first */
	struct rp_func *func;
	uint64_t total, self;
	uint64_t total_samples, self_samples;
	struct rp_node *parent, *child, *sibling;
};

/* A row of the flat view: the --sort keys of a sample's leaf. */
struct rp_row {
	struct rp_link link; /* first */
	struct rp_func *func;       /* a function of the row, for display */
	struct rp_func *key_func;   /* with the symbol key: the function */
	const char *key_dso;        /* with the dso key: the DSO */
	const char *comm;
	uint32_t pid, tid;
	uint32_t cpu;                 /* with the cpu key */
	struct rp_func *parent;       /* with the parent key: NULL is [other] */
	/* With the srcline key: the leaf's source line, or without one its
	 * symbol (or DSO) and DSO-relative address, as perf keys them. */
	const char *src_file;
	unsigned src_line;
	const struct hwc_symbol *src_sym;
	uint64_t src_addr;
	uint64_t self, children;
	uint64_t samples;
	unsigned seen;
};

/* A call edge for the gprof view. */
struct rp_edge {
	struct rp_link link; /* first */
	struct rp_func *caller, *callee;
	uint64_t period, samples;
	unsigned seen;
};

/* Per-thread totals: samples plus the exit and context-switch records. */
/* The values of a thread's latest context-switch sample on one CPU: they
 * count the thread on that CPU, cumulatively (see hwc-data(5)). */
struct rp_cpu_values {
	uint32_t cpu;
	uint32_t n;
	const char *names[8];
	uint64_t v[8];
};

struct rp_thread {
	struct rp_link link; /* first */
	uint32_t pid, tid;
	const char *comm;
	uint64_t samples, period;
	uint64_t switches;         /* switches out: SWITCH records, else samples of a
				    * context-switches leader */
	uint64_t switch_records, switch_samples;
	bool exited;
	uint64_t exit_time;
	size_t ncounts;            /* counts of the recorded events at exit / last switch */
	const char *count_names[8];
	uint64_t counts[8];
	bool exit_counts;          /* the counts are the sums of its PERF_RECORD_READs */
	struct rp_cpu_values *last; /* each CPU's latest context-switch sample values */
	size_t nlast;
};

/* A user record: a sample of the user-record event with raw data. */
struct rp_urec {
	uint64_t time, offset;
	uint32_t pid, tid;
	uint32_t size;
	const uint8_t *data;
};

enum rp_key { K_COMM = 1, K_PID = 2, K_TID = 4, K_DSO = 8, K_SYM = 16, K_CPU = 32, K_SRCLINE = 64,
	      K_PARENT = 128 };
#define RP_NKEYS 8
/* O_DEFAULT: children when they are shown (as perf report), else self. */
enum rp_order { O_DEFAULT, O_SELF, O_CHILDREN, O_SAMPLES, O_PERIOD };
enum rp_view { V_FLAT, V_CALLER, V_CALLEE, V_GPROF, V_THREADS, V_RECORDS };

struct rp_opts {
	const char *prog;  /* the tool, for messages */
	const char *input;
	enum rp_view view;
	unsigned keys;
	unsigned key_order[RP_NKEYS]; /* the keys' columns, as --sort listed them */
	unsigned nkey_order;          /* (keys not listed follow in K_ order) */
	enum rp_order order;
	const char *comms, *pids, *dsos, *symbols, *event;
	const char *tids;  /* only these thread ids */
	const char *cpus;  /* only these CPUs: a checked list like 0-2,5 */
	bool time_set;     /* only samples at times from time_start to time_end (ns) */
	uint64_t time_start, time_end;
	bool time_pct;     /* the span is time_pct_start to _end (fractions of the
			    * recording's first to last sample time), as perf */
	double time_pct_start, time_pct_end;
	unsigned max_stack; /* at most this many frames of each chain (0: all) */
	bool own_frame_only; /* each sample's own frame is all that is shown */
	const char *parent; /* the parent key's pattern (NULL: perf's default) */
	double percent_limit;
	bool srcline, inl, json, no_children;
	bool no_demangle;  /* mangled names, as the symbol tables have them */
	const char *pprof, *folded, *flamegraph;
	bool quiet;        /* no warnings about symbols */
	const char *root;  /* the recorded files under this directory (NULL: none) */
	bool leaf_addr;    /* sampled frames per address, not per function */
	bool rows_only;    /* only functions and rows are read: no call trees, no edges */
	bool one_pass;     /* the maps are read with the samples (rp_fold_record()) */
	/* Select the samples to aggregate (when not NULL). */
	bool (*want)(void *arg, const struct hwc_perfdata_record *rec);
	void *want_arg;
	/* Hand each selected sample record to SAMPLE, undecoded, instead of
	 * aggregating it (when not NULL): hwc annotate counts addresses only,
	 * read from the records itself.  It returns 0, or -1 after saying why
	 * (the reading stops). */
	int (*sample)(void *arg, const struct hwc_perfdata_record *rec);
	void *sample_arg;
};

struct rp_chain;

/* A location's function, as agg.c found it last (a direct-mapped cache). */
struct rp_recent {
	const struct hwc_location *loc;
	struct rp_func *func;
};
#define RP_NRECENT 4096

/* A thread's latest span of hwc_symbols_span() (one pass: its process's
 * and its own generations) and raw chain, for agg.c. */
struct rp_span {
	bool used;
	uint32_t pid, tid;
	uint64_t from, to;
	const uint32_t *process, *thread;
	struct rp_raw *last; /* the thread's latest raw chain */
};
#define RP_NSPANS 1024

struct rp_raw;

struct rp_report {
	struct rp_opts o;
	hwc_perfdata *file;
	hwc_symbols *syms;
	const struct hwc_perfdata_attr *attr; /* the event reported */
	uint64_t samples, period, lost, skipped;
	uint64_t unwind_failures;
	bool have_callchains;
	unsigned stamp;
	struct rp_table funcs;   /* struct rp_func */
	struct rp_recent *recent; /* RP_NRECENT, of funcs */
	struct rp_table rows;    /* struct rp_row */
	struct rp_table edges;   /* struct rp_edge */
	struct rp_node root;  /* callers first: main -> g -> f2 */
	struct rp_node croot; /* callees first: f2 -> g -> main */
	struct rp_table nodes;   /* struct rp_node of both trees, by (parent, func) */
	struct rp_table threads; /* struct rp_thread */
	struct rp_thread *last_thread; /* rp_thread_get()'s latest */
	struct rp_table chains;  /* agg.c's samples summed per chain, to settle */
	struct rp_chain *chains_first, *chains_last; /* in the order first seen */
	struct rp_table raws;    /* agg.c's samples summed per raw chain, to resolve */
	struct rp_raw *raws_first, *raws_last; /* in the order first seen */
	struct rp_span *spans;   /* RP_NSPANS, by thread */
	struct rp_table generations; /* one pass: each process's and thread's records */
	bool fold_failed;        /* one pass: a sample was not summed (rp_fold_exact()) */
	struct rp_urec *urecs;
	size_t nurecs, capurecs;
	regex_t parent_re;       /* with the parent key */
	bool have_parent_re;
};

/* profile.c */
/* Open O.input, symbolize and aggregate the samples of the event O.event
 * names (every event of that name), or those O.want selects, else of the
 * first sampled event; messages go to stderr prefixed by O.prog.  0, or -1
 * after saying why.  rp_free() in either case. */
int rp_load(struct rp_report *r);
/* Does INPUT name the standard input ("-", or /dev/stdin on a pipe or
 * socket)?  rp_load() then reads the stream there to its end. */
bool rp_input_is_stdin(const char *input);
/* Open INPUT, a file or the stream on standard input (INPUT then becomes
 * "standard input", for messages); 0 or hwc's -errno with its detail. */
int rp_open_input(const char **input, hwc_perfdata **file);
/* hwc_symbols_problems()'s callback for the tools that name symbols:
 * one warning on stderr for DSO, prefixed by PROG_NAME (a const char *).
 * A module's functions are then named from the kernel's symbol list
 * (/proc/kallsyms, or perf's copy of it in the build-id cache). */
void rp_warn_problem(const char *dso, const char *why, void *prog_name);
/* rp_clear(), and close the file and its symbols. */
void rp_free(struct rp_report *r);

/* The base name of a DSO path ("[kernel.kallsyms]" stays). */
const char *rp_dso_base(const char *dso);
/* A frame's name: the symbol, "[unknown] dso+offset", with --srcline its line. */
void rp_func_name(const struct rp_func *f, char *buf, size_t size);

/* agg.c */
/* The addresses of sample S of an event opened with A, innermost first:
 * its call chain (PERF_CONTEXT markers dropped), the user part unwound
 * with DWARF when it carries registers and stack, else its ip.  KERN[i]
 * says whether IPS[i] is a kernel address.  At most MAX; *UNWIND_FAILED
 * when the DWARF unwinding failed (the kernel part is kept). */
size_t rp_sample_ips(hwc_symbols *syms, const struct hwc_sample *s, const struct perf_event_attr *a,
		     uint64_t *ips, bool *kern, size_t max, bool *unwind_failed);
/* The most frames a sample is given. */
#define RP_MAX_FRAMES 512
/* Is sample S in the --time span (always without one)? */
bool rp_time_selected(const struct rp_report *r, const struct hwc_sample *s);
/* The locations of sample S's frames through r->syms, innermost first
 * (inlined scopes too with o.inl), into LOCS[RP_MAX_FRAMES]: their number.
 * *UNWIND_FAILED as rp_sample_ips() says.  Uses r->syms and r->o alone, so
 * that a reader thread may call it while the samples before are summed. */
size_t rp_sample_locations(struct rp_report *r, const struct hwc_sample *s,
			   const struct perf_event_attr *a, const struct hwc_location **locs,
			   bool *unwind_failed);
/* SAMPLES samples of thread TID of process PID on CPU, of PERIOD in all,
 * with the same frames. */
struct rp_samples {
	uint32_t pid, tid, cpu;
	uint64_t period, samples;
};
/* The period of sample S of an event opened with A. */
uint64_t rp_sample_period(const struct hwc_sample *s, const struct perf_event_attr *a);
/* rp_add_sample() of samples G in the --time span whose N frames
 * rp_sample_locations() gave (COMM: their thread's command then, when N). */
void rp_add_located(struct rp_report *r, const struct rp_samples *g,
		    const struct hwc_location *const *locs, size_t n, bool unwind_failed,
		    const char *comm);
/* Add sample S of an event opened with A: its frames resolved through
 * r->syms (call chain, or DWARF unwinding when it has the registers and
 * stack), summed under the --sort keys unless the selection leaves it out
 * (into the functions, rows and trees at the next rp_settle()). */
void rp_add_sample(struct rp_report *r, const struct hwc_sample *s, const struct perf_event_attr *a);
/* rp_add_sample() of a sample of a recording whose address-space records
 * r->syms holds all of (not a live one), deferred: summed with the samples
 * of the same raw chain, thread and span of hwc_symbols_span() (and CPU
 * when the keys or selection take it), to be resolved once by rp_settle().
 * False, with nothing done, for a sample that must be unwound (DWARF). */
bool rp_fold_sample(struct rp_report *r, const struct hwc_sample *s, const struct perf_event_attr *a);
/* In one pass (o.one_pass), address-space record H of the recording
 * (MMAP, MMAP2, COMM, FORK) has been fed to r->syms: the samples of its
 * process and thread after it are summed apart from those before. */
void rp_fold_record(struct rp_report *r, const struct perf_event_header *h);
/* In one pass, once every record is read: were all samples summed, and
 * each raw chain's in one span of hwc_symbols_span()?  If not, rp_clear()
 * and read the samples again (the maps are all known then). */
bool rp_fold_exact(struct rp_report *r);
/* Resolve the raw chains rp_fold_sample() has summed, and spread the
 * samples summed per chain into the functions, rows, edges and trees:
 * before these are read. */
void rp_settle(struct rp_report *r);
/* The totals of thread TID, created on first use. */
struct rp_thread *rp_thread_get(struct rp_report *r, uint32_t pid, uint32_t tid);
/* Forget everything aggregated (options, file, symbols and event stay). */
void rp_clear(struct rp_report *r);
/* Is PID or TID in the comma-separated LIST (NULL: all)? */
bool rp_pid_selected(const char *list, uint32_t pid, uint32_t tid);
/* Is CPU in LIST, ranges like 0-2,5 (NULL: all)?  CHECK instead says
 * whether LIST is such a list (CPU ignored). */
bool rp_cpu_selected(const char *list, uint32_t cpu, bool check);
/* The srcline key's text of row W: file:line, else symbol+offset. */
void rp_row_srcline(const struct rp_row *w, char *buf, size_t size);

#endif
