/* hwc script --firefox: the samples of a recording as a Firefox Profiler
 * "processed" profile (the format profiler.firefox.com loads directly,
 * src/types/profile.ts of github.com/firefox-devtools/profiler), version
 * FIREFOX_PROFILE_VERSION.  The tables are shared by all threads
 * (profile.shared): strings, resources and libs (one per DSO), native
 * symbols and functions (one per symbol), frames (one per resolved
 * address), stacks (frame + parent, parents first); each thread (one per
 * tid and event) has its samples' stacks and times.  Written with the
 * tool's streaming JSON writer: a million samples are columns of ints, not
 * a tree of objects. */
#include "json.h"
#include "profile.h"
#include "script.h"

#include <hwc/output.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The processed format version written (the profiler upgrades older ones,
 * never reads newer ones), and the Gecko format version of its time. */
#define FIREFOX_PROFILE_VERSION 70
#define FIREFOX_GECKO_VERSION 36

enum { CAT_OTHER, CAT_USER, CAT_KERNEL };

struct ff_str {
	struct rp_link link;
	char *s;
	uint32_t idx;
};

struct ff_dso { /* a resource and a lib, same index */
	struct rp_link link;
	uint32_t name; /* string index of its path */
	int32_t idx;
};

struct ff_func {
	struct rp_link link;
	const struct hwc_symbol *sym;
	int32_t idx, nsym; /* nsym: its native symbol, -1 for none */
};

struct ff_frame {
	struct rp_link link;
	const struct hwc_location *loc;
	bool caller, kernel;
	int32_t idx;
};

struct ff_stack {
	struct rp_link link;
	int32_t frame, prefix, idx;
};

struct ff_thread {
	struct rp_link link;
	uint32_t tid, pid;
	const struct hwc_perfdata_attr *attr;
	uint64_t last;
	size_t n, cap;
	int32_t *stack;
	uint64_t *time;
	size_t order; /* of first sample: threads keep that order */
};

/* Growable column of T. */
#define COLUMN(T) struct { T *v; size_t n, cap; }
#define PUSH(col, x)                                                                 \
	do {                                                                         \
		if ((col).n == (col).cap) {                                          \
			(col).cap = (col).cap ? 2 * (col).cap : 256;                 \
			(col).v = script_xrealloc((col).v, (col).cap * sizeof(*(col).v));  \
		}                                                                    \
		(col).v[(col).n++] = (x);                                            \
	} while (0)

struct firefox {
	hwc_perfdata *file;
	hwc_symbols *syms;
	struct rp_table strs, dsos, funcs, frames, stacks, threads;
	COLUMN(const char *) strings;
	COLUMN(uint32_t) dso_name;             /* resources and libs */
	COLUMN(int32_t) func_name, func_res;
	COLUMN(int32_t) sym_lib, sym_name;     /* native symbols */
	COLUMN(uint64_t) sym_addr, sym_size;
	COLUMN(int64_t) frame_addr;
	COLUMN(int32_t) frame_func, frame_lib, frame_sym;
	COLUMN(uint8_t) frame_cat;
	COLUMN(int32_t) stack_frame, stack_prefix;
	size_t nthreads;
	uint64_t first, last, samples;
	const struct hwc_perfdata_attr *first_attr;
	bool chains;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	return x ^ (x >> 33);
}

static uint64_t str_hash(const void *e) { return rp_str_hash(((const struct ff_str *)e)->s); }
static bool str_same(const void *e, const void *k) { return strcmp(((const struct ff_str *)e)->s, k) == 0; }

static int32_t string_index(struct firefox *ff, const char *s)
{
	uint64_t h = rp_str_hash(s);
	struct ff_str *e = rp_table_find(&ff->strs, h, str_same, s);
	if (!e) {
		e = rp_table_new(&ff->strs, sizeof(*e), h, str_hash);
		if (!(e->s = strdup(s))) {
			fprintf(stderr, "hwc script: out of memory\n");
			exit(1);
		}
		e->idx = (uint32_t)ff->strings.n;
		PUSH(ff->strings, e->s);
	}
	return (int32_t)e->idx;
}

static uint64_t dso_hash(const void *e) { return mix(((const struct ff_dso *)e)->name); }
static bool dso_same(const void *e, const void *k) { return ((const struct ff_dso *)e)->name == *(const uint32_t *)k; }

/* The resource (and lib) of DSO, -1 for "[unknown]". */
static int32_t dso_index(struct firefox *ff, const char *dso)
{
	if (strcmp(dso, "[unknown]") == 0)
		return -1;
	uint32_t name = (uint32_t)string_index(ff, dso);
	struct ff_dso *e = rp_table_find(&ff->dsos, mix(name), dso_same, &name);
	if (!e) {
		e = rp_table_new(&ff->dsos, sizeof(*e), mix(name), dso_hash);
		e->name = name;
		e->idx = (int32_t)ff->dso_name.n;
		PUSH(ff->dso_name, name);
	}
	return e->idx;
}

static uint64_t func_hash(const void *e) { return mix((uintptr_t)((const struct ff_func *)e)->sym); }
static bool func_same(const void *e, const void *k) { return ((const struct ff_func *)e)->sym == k; }

static int32_t func_index(struct firefox *ff, const struct hwc_location *l, int32_t lib)
{
	const struct hwc_symbol *sym = l->sym;
	struct ff_func *e = rp_table_find(&ff->funcs, mix((uintptr_t)sym), func_same, sym);
	if (e)
		return e->idx;
	e = rp_table_new(&ff->funcs, sizeof(*e), mix((uintptr_t)sym), func_hash);
	e->sym = sym;
	e->idx = (int32_t)ff->func_name.n;
	char name[1024];
	script_frame_name(l, name, sizeof(name));
	int32_t s = string_index(ff, name);
	PUSH(ff->func_name, s);
	PUSH(ff->func_res, lib);
	return e->idx;
}

/* The native symbol of a known function of a DSO, else -1. */
static int32_t native_symbol(struct firefox *ff, const struct hwc_symbol *sym, int32_t func, int32_t lib)
{
	struct ff_func *e = rp_table_find(&ff->funcs, mix((uintptr_t)sym), func_same, sym);
	if (!sym->known || lib < 0)
		return -1;
	if (e->nsym == 0) { /* 0: not yet; else index + 1 */
		PUSH(ff->sym_lib, lib);
		PUSH(ff->sym_name, ff->func_name.v[func]);
		PUSH(ff->sym_addr, sym->start);
		PUSH(ff->sym_size, sym->size);
		e->nsym = (int32_t)ff->sym_lib.n;
	}
	return e->nsym - 1;
}

static uint64_t frame_hash(const void *e)
{
	const struct ff_frame *f = e;
	return mix((uintptr_t)f->loc * 4 + f->caller * 2 + f->kernel);
}
static bool frame_same(const void *e, const void *k)
{
	const struct ff_frame *a = e, *b = k;
	return a->loc == b->loc && a->caller == b->caller && a->kernel == b->kernel;
}

static int32_t frame_index(struct firefox *ff, const struct frame *fr, bool caller)
{
	struct ff_frame k = {.loc = fr->loc, .caller = caller, .kernel = fr->kernel};
	struct ff_frame *e = rp_table_find(&ff->frames, frame_hash(&k), frame_same, &k);
	if (e)
		return e->idx;
	e = rp_table_new(&ff->frames, sizeof(*e), frame_hash(&k), frame_hash);
	/* (the link, first, is the table's) */
	e->loc = k.loc;
	e->caller = caller;
	e->kernel = k.kernel;
	e->idx = (int32_t)ff->frame_addr.n;
	const struct hwc_location *l = fr->loc;
	int32_t lib = dso_index(ff, l->sym->dso);
	int32_t func = func_index(ff, l, lib);
	/* A caller's frame is its return address less one, inside the call
	 * (the format's "nudged" address); the column is Int32 in the
	 * profiler, so a larger offset is left out (-1). */
	uint64_t addr = l->dso_offset - (caller && l->dso_offset);
	PUSH(ff->frame_addr, lib >= 0 && addr <= INT32_MAX ? (int64_t)addr : -1);
	PUSH(ff->frame_func, func);
	PUSH(ff->frame_lib, lib);
	PUSH(ff->frame_sym, native_symbol(ff, l->sym, func, lib));
	uint8_t cat = fr->kernel ? CAT_KERNEL : l->sym->known || lib >= 0 ? CAT_USER : CAT_OTHER;
	PUSH(ff->frame_cat, cat);
	return e->idx;
}

static uint64_t stack_hash(const void *e)
{
	const struct ff_stack *s = e;
	return mix(((uint64_t)(uint32_t)s->frame << 32) | (uint32_t)s->prefix);
}
static bool stack_same(const void *e, const void *k)
{
	const struct ff_stack *a = e, *b = k;
	return a->frame == b->frame && a->prefix == b->prefix;
}

static int32_t stack_index(struct firefox *ff, int32_t frame, int32_t prefix)
{
	struct ff_stack k = {.frame = frame, .prefix = prefix};
	struct ff_stack *e = rp_table_find(&ff->stacks, stack_hash(&k), stack_same, &k);
	if (!e) {
		e = rp_table_new(&ff->stacks, sizeof(*e), stack_hash(&k), stack_hash);
		e->frame = frame;
		e->prefix = prefix;
		e->idx = (int32_t)ff->stack_frame.n;
		PUSH(ff->stack_frame, frame);
		PUSH(ff->stack_prefix, prefix);
	}
	return e->idx;
}

static uint64_t thread_hash(const void *e)
{
	const struct ff_thread *t = e;
	return mix(((uint64_t)t->tid << 20) ^ (uintptr_t)t->attr);
}
static bool thread_same(const void *e, const void *k)
{
	const struct ff_thread *a = e, *b = k;
	return a->tid == b->tid && a->attr == b->attr;
}

struct firefox *firefox_new(hwc_perfdata *file, hwc_symbols *syms)
{
	struct firefox *ff = calloc(1, sizeof(*ff));
	if (!ff) {
		fprintf(stderr, "hwc script: out of memory\n");
		exit(1);
	}
	ff->file = file;
	ff->syms = syms;
	return ff;
}

void firefox_sample(struct firefox *ff, const struct hwc_sample *s, const struct hwc_perfdata_attr *attr,
		    const struct frame *fr, size_t n)
{
	struct ff_thread k = {.tid = s->tid, .attr = attr};
	struct ff_thread *t = rp_table_find(&ff->threads, thread_hash(&k), thread_same, &k);
	if (!t) {
		t = rp_table_new(&ff->threads, sizeof(*t), thread_hash(&k), thread_hash);
		t->tid = s->tid;
		t->pid = s->pid;
		t->attr = attr;
		t->order = ff->nthreads++;
	}
	/* Root first: each frame's stack has the one of its caller as prefix. */
	int32_t stack = -1;
	for (size_t i = n; i-- > 0;)
		stack = stack_index(ff, frame_index(ff, &fr[i], i > 0), stack);
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->stack = script_xrealloc(t->stack, t->cap * sizeof(*t->stack));
		t->time = script_xrealloc(t->time, t->cap * sizeof(*t->time));
	}
	/* Samples come in time order; a misordered file's are kept in order. */
	uint64_t time = s->sample_type & PERF_SAMPLE_TIME ? s->time : 0;
	if (time < t->last)
		time = t->last;
	t->stack[t->n] = stack;
	t->time[t->n++] = time;
	t->last = time;
	if (!ff->samples++) {
		ff->first = time;
		ff->first_attr = attr;
	}
	if (time < ff->first)
		ff->first = time;
	if (time > ff->last)
		ff->last = time;
	ff->chains |= n > 1;
}

/* ------------------------------------------------------------ writing */

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static void int_column(struct json *j, const char *key, const int32_t *v, size_t n, bool minus_is_null)
{
	json_array(j, key);
	for (size_t i = 0; i < n; i++) {
		if (minus_is_null && v[i] < 0)
			json_null(j, NULL);
		else
			json_int(j, NULL, v[i]);
	}
	json_array_end(j);
}

/* An array of N nulls, or of N copies of VALUE (>= 0). */
static void same_column(struct json *j, const char *key, size_t n, long long value)
{
	json_array(j, key);
	for (size_t i = 0; i < n; i++) {
		if (value < 0)
			json_null(j, NULL);
		else
			json_int(j, NULL, value);
	}
	json_array_end(j);
}

static void bool_column(struct json *j, const char *key, size_t n)
{
	json_array(j, key);
	for (size_t i = 0; i < n; i++)
		json_bool(j, NULL, false);
	json_array_end(j);
}

static void empty_table(struct json *j, const char *key, const char *const *columns)
{
	json_object(j, key);
	for (; *columns; columns++) {
		json_array(j, *columns);
		json_array_end(j);
	}
	json_uint(j, "length", 0);
	json_object_end(j);
}

/* Breakpad's id of a GNU build-id, as the profiler and its symbol servers
 * name ELF files: the first 16 bytes as a GUID (three little-endian
 * fields), upper-case, and age 0. */
static void breakpad_id(const struct hwc_perfdata_buildid *b, char *out)
{
	uint8_t g[16] = {0};
	memcpy(g, b->id, b->size < 16 ? b->size : 16);
	static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02X", g[order[i]]);
	strcpy(out + 32, "0");
}

static const struct hwc_perfdata_buildid *buildid_of(hwc_perfdata *f, const char *path)
{
	for (size_t i = 0; i < hwc_perfdata_nbuildids(f); i++) {
		const struct hwc_perfdata_buildid *b = hwc_perfdata_buildid(f, i);
		if (b->filename && strcmp(b->filename, path) == 0 && b->size)
			return b;
	}
	return NULL;
}

static void write_libs(struct firefox *ff, struct json *j)
{
	const char *arch = hwc_perfdata_string(ff->file, HWC_FEAT_ARCH);
	json_array(j, "libs");
	for (size_t i = 0; i < ff->dso_name.n; i++) {
		const char *path = ff->strings.v[ff->dso_name.v[i]];
		const struct hwc_perfdata_buildid *b = buildid_of(ff->file, path);
		char breakpad[40] = "", code[41] = "";
		if (b) {
			breakpad_id(b, breakpad);
			for (unsigned k = 0; k < b->size && k < 20; k++)
				sprintf(code + 2 * k, "%02x", b->id[k]);
		}
		json_object(j, NULL);
		json_string(j, "arch", arch ? arch : "");
		json_string(j, "name", rp_dso_base(path));
		json_string(j, "path", path);
		json_string(j, "debugName", rp_dso_base(path));
		json_string(j, "debugPath", path);
		json_string(j, "breakpadId", breakpad);
		json_string(j, "codeId", b ? code : NULL);
		json_object_end(j);
	}
	json_array_end(j);
}

static void write_meta(struct firefox *ff, struct json *j, size_t nevents)
{
	/* CLOCK_DATA: one instant on the wall clock and on the samples' clock,
	 * so the samples' times (ms after startTime) are the recording clock's. */
	double start = 0;
	const void *data;
	size_t size;
	if (!hwc_perfdata_feature(ff->file, HWC_FEAT_CLOCK_DATA, &data, &size) && size >= 24) {
		uint64_t wall, clock;
		memcpy(&wall, (const char *)data + 8, 8);
		memcpy(&clock, (const char *)data + 16, 8);
		start = ms(wall) - ms(clock);
	}
	/* The interval: what one sample of the first event stands for. */
	double interval = 1;
	if (ff->first_attr) {
		const struct perf_event_attr *a = &ff->first_attr->attr;
		bool clock_ev = a->type == PERF_TYPE_SOFTWARE && (a->config == PERF_COUNT_SW_CPU_CLOCK ||
								  a->config == PERF_COUNT_SW_TASK_CLOCK);
		if (a->freq && a->sample_freq)
			interval = 1000.0 / (double)a->sample_freq;
		else if (clock_ev && a->sample_period)
			interval = ms(a->sample_period);
	}
	json_object(j, "meta");
	json_double(j, "interval", interval);
	json_double(j, "startTime", start);
	if (ff->samples) {
		json_double(j, "profilingStartTime", ms(ff->first));
		json_double(j, "profilingEndTime", ms(ff->last));
	}
	json_uint(j, "processType", 0);
	json_string(j, "product", "hwc");
	json_string(j, "importedFrom", "hwc script");
	json_uint(j, "stackwalk", ff->chains);
	json_uint(j, "version", FIREFOX_GECKO_VERSION);
	json_uint(j, "preprocessedProfileVersion", FIREFOX_PROFILE_VERSION);
	json_string(j, "platform", "Linux");
	const char *os = hwc_perfdata_string(ff->file, HWC_FEAT_OSRELEASE);
	if (os)
		json_string(j, "oscpu", os);
	const char *cpu = hwc_perfdata_string(ff->file, HWC_FEAT_CPUDESC);
	if (cpu)
		json_string(j, "CPUName", cpu);
	json_bool(j, "symbolicated", true);
	json_bool(j, "usesOnlyOneStackType", true);
	json_bool(j, "sourceCodeIsNotOnSearchfox", true);
	json_array(j, "categories");
	static const char *const cats[][2] = {{"Other", "grey"}, {"User", "yellow"}, {"Kernel", "orange"}};
	for (size_t i = 0; i < 3; i++) {
		json_object(j, NULL);
		json_string(j, "name", cats[i][0]);
		json_string(j, "color", cats[i][1]);
		json_array(j, "subcategories");
		json_string(j, NULL, "Other");
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	json_array(j, "markerSchema");
	json_array_end(j);
	/* What hwc report would say the profile is of. */
	json_array(j, "extra");
	json_object(j, NULL);
	json_string(j, "label", "Recording");
	json_array(j, "entries");
	json_object(j, NULL);
	json_string(j, "label", "Samples");
	json_string(j, "format", "integer");
	json_uint(j, "value", ff->samples);
	json_object_end(j);
	json_object(j, NULL);
	json_string(j, "label", "Sampled events");
	json_string(j, "format", "integer");
	json_uint(j, "value", nevents);
	json_object_end(j);
	json_array_end(j);
	json_object_end(j);
	json_array_end(j);
	json_object_end(j);
}

static void write_shared(struct firefox *ff, struct json *j)
{
	json_object(j, "shared");

	json_object(j, "stackTable");
	int_column(j, "frame", ff->stack_frame.v, ff->stack_frame.n, false);
	json_array(j, "prefixOffset"); /* 0: a root; else how far back its prefix is */
	for (size_t i = 0; i < ff->stack_prefix.n; i++)
		json_int(j, NULL, ff->stack_prefix.v[i] < 0 ? 0 : (long long)i - ff->stack_prefix.v[i]);
	json_array_end(j);
	json_uint(j, "length", ff->stack_frame.n);
	json_object_end(j);

	size_t nf = ff->frame_addr.n;
	json_object(j, "frameTable");
	json_array(j, "address");
	for (size_t i = 0; i < nf; i++)
		json_int(j, NULL, ff->frame_addr.v[i]);
	json_array_end(j);
	int_column(j, "lib", ff->frame_lib.v, nf, false);
	same_column(j, "inlineDepth", nf, 0);
	json_array(j, "category");
	for (size_t i = 0; i < nf; i++)
		json_int(j, NULL, ff->frame_cat.v[i]);
	json_array_end(j);
	same_column(j, "subcategory", nf, 0);
	int_column(j, "func", ff->frame_func.v, nf, false);
	int_column(j, "nativeSymbol", ff->frame_sym.v, nf, true);
	same_column(j, "innerWindowID", nf, 0);
	same_column(j, "line", nf, -1);
	same_column(j, "column", nf, -1);
	same_column(j, "originalLocation", nf, -1);
	json_uint(j, "length", nf);
	json_object_end(j);

	size_t nfn = ff->func_name.n;
	json_object(j, "funcTable");
	int_column(j, "name", ff->func_name.v, nfn, false);
	bool_column(j, "isJS", nfn);
	bool_column(j, "relevantForJS", nfn);
	int_column(j, "resource", ff->func_res.v, nfn, false);
	same_column(j, "source", nfn, -1);
	same_column(j, "lineNumber", nfn, -1);
	same_column(j, "columnNumber", nfn, -1);
	same_column(j, "originalLocation", nfn, -1);
	json_uint(j, "length", nfn);
	json_object_end(j);

	size_t nr = ff->dso_name.n;
	json_object(j, "resourceTable");
	json_uint(j, "length", nr);
	json_array(j, "name");
	for (size_t i = 0; i < nr; i++)
		json_int(j, NULL, string_index(ff, rp_dso_base(ff->strings.v[ff->dso_name.v[i]])));
	json_array_end(j);
	same_column(j, "host", nr, -1);
	same_column(j, "type", nr, 1); /* ResourceType.Library */
	json_object_end(j);

	size_t ns = ff->sym_lib.n;
	json_object(j, "nativeSymbols");
	int_column(j, "libIndex", ff->sym_lib.v, ns, false);
	json_array(j, "address");
	for (size_t i = 0; i < ns; i++)
		json_uint(j, NULL, ff->sym_addr.v[i]);
	json_array_end(j);
	int_column(j, "name", ff->sym_name.v, ns, false);
	json_array(j, "functionSize");
	for (size_t i = 0; i < ns; i++) {
		if (ff->sym_size.v[i])
			json_uint(j, NULL, ff->sym_size.v[i]);
		else
			json_null(j, NULL);
	}
	json_array_end(j);
	json_uint(j, "length", ns);
	json_object_end(j);

	static const char *const sources[] = {"id", "filename", "startLine", "startColumn",
					      "sourceMapURL", "content", NULL};
	empty_table(j, "sources", sources);
	static const char *const locations[] = {"source", "line", "column", NULL};
	empty_table(j, "sourceLocationTable", locations);

	/* Last: the resource names above may add strings. */
	json_array(j, "stringArray");
	for (size_t i = 0; i < ff->strings.n; i++)
		json_string(j, NULL, ff->strings.v[i]);
	json_array_end(j);
	json_object_end(j);
}

static int by_order(const void *x, const void *y)
{
	const struct ff_thread *a = *(const struct ff_thread *const *)x, *b = *(const struct ff_thread *const *)y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static void write_thread(struct firefox *ff, struct json *j, const struct ff_thread *t, size_t nevents)
{
	char comm[64], name[512];
	script_comm(ff->syms, t->tid, t->last, comm, sizeof(comm));
	if (nevents > 1)
		snprintf(name, sizeof(name), "%s (%s)", comm, t->attr->name);
	else
		snprintf(name, sizeof(name), "%s", comm);
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)t->pid);
	script_comm(ff->syms, t->pid, t->last, comm, sizeof(comm));
	json_object(j, NULL);
	json_string(j, "processType", "default");
	json_uint(j, "processStartupTime", 0);
	json_null(j, "processShutdownTime");
	json_uint(j, "registerTime", 0);
	json_null(j, "unregisterTime");
	json_array(j, "pausedRanges");
	json_array_end(j);
	json_string(j, "name", name);
	json_string(j, "processName", comm);
	json_bool(j, "isMainThread", t->tid == t->pid);
	json_string(j, "pid", pid);
	json_int(j, "tid", (int)t->tid);
	json_object(j, "samples");
	int_column(j, "stack", t->stack, t->n, true);
	json_array(j, "time");
	for (size_t i = 0; i < t->n; i++)
		json_double(j, NULL, ms(t->time[i]));
	json_array_end(j);
	json_null(j, "weight");
	json_string(j, "weightType", "samples");
	json_uint(j, "length", t->n);
	json_object_end(j);
	static const char *const markers[] = {"data", "name", "startTime", "endTime", "phase", "category", NULL};
	empty_table(j, "markers", markers);
	json_object_end(j);
}

int firefox_write(struct firefox *ff, const char *path, const char *prog)
{
	size_t nthreads;
	struct ff_thread **threads = rp_table_sorted(&ff->threads, NULL, NULL, by_order, &nthreads);
	if (!threads && ff->nthreads) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	size_t nevents = 0;
	const struct hwc_perfdata_attr *seen[64];
	for (size_t i = 0; i < nthreads; i++) {
		size_t k = 0;
		while (k < nevents && seen[k] != threads[i]->attr)
			k++;
		if (k == nevents && nevents < 64)
			seen[nevents++] = threads[i]->attr;
	}
	hwc_output *o = NULL;
	FILE *out;
	if (hwc_output_create(&o, path, 0) || !(out = hwc_output_stream(o))) {
		fprintf(stderr, "%s: %s\n", prog, hwc_errdetail());
		if (o)
			hwc_output_discard(o);
		free(threads);
		return -1;
	}
	struct json j;
	json_init(&j, out);
	j.compact = true;
	json_object(&j, NULL);
	write_meta(ff, &j, nevents);
	write_libs(ff, &j);
	json_array(&j, "pages");
	json_array_end(&j);
	json_array(&j, "threads");
	for (size_t i = 0; i < nthreads; i++)
		write_thread(ff, &j, threads[i], nevents);
	json_array_end(&j);
	write_shared(ff, &j);
	json_object_end(&j);
	json_end(&j);
	free(threads);
	if (hwc_output_commit(o)) {
		fprintf(stderr, "%s: %s\n", prog, hwc_errdetail());
		return -1;
	}
	return 0;
}

static void free_str(void *e) { free(((struct ff_str *)e)->s); }
static void free_thread(void *e)
{
	free(((struct ff_thread *)e)->stack);
	free(((struct ff_thread *)e)->time);
}

void firefox_free(struct firefox *ff)
{
	if (!ff)
		return;
	rp_table_free(&ff->strs, free_str);
	rp_table_free(&ff->dsos, NULL);
	rp_table_free(&ff->funcs, NULL);
	rp_table_free(&ff->frames, NULL);
	rp_table_free(&ff->stacks, NULL);
	rp_table_free(&ff->threads, free_thread);
	free(ff->strings.v);
	free(ff->dso_name.v);
	free(ff->func_name.v);
	free(ff->func_res.v);
	free(ff->sym_lib.v);
	free(ff->sym_name.v);
	free(ff->sym_addr.v);
	free(ff->sym_size.v);
	free(ff->frame_addr.v);
	free(ff->frame_func.v);
	free(ff->frame_lib.v);
	free(ff->frame_sym.v);
	free(ff->frame_cat.v);
	free(ff->stack_frame.v);
	free(ff->stack_prefix.v);
	free(ff);
}
