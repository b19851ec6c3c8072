/* hwc script: every sample of a recording (hwc's or perf's), one line each
 * as perf script prints them by default (perf 6.1's layout), or the -F
 * fields, or JSON lines; and a Chrome trace-event export.  Samples come in
 * time order the way perf orders them: buffered, and at each
 * FINISHED_ROUND those up to the newest time of the round before are
 * sorted and printed (perf's ordered events). */
#include "cli.h"
#include "hwc.h"
#include "json.h"
#include "out.h"
#include "profile.h"
#include "script.h"

#include <hwc/output.h>
#include <hwc/perfdata.h>
#include <hwc/symbol.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PROG "hwc script"

static const char usage_text[] =
	"usage: hwc script [options] [FILE]\n"
	"Print every sample of a recording made by `hwc record` or `perf record` (default\n"
	"./hwc.data, else ./perf.data), one line each as `perf script` does, in time order;\n"
	"samples with call chains are followed by one line per frame.\n"
	"\n"
	"  -i, --input FILE   the recording (or give FILE as the argument)\n"
	"  -F, --fields LIST  the fields to print, in perf script's names: comm, pid, tid,\n"
	"                     cpu, time, period, event, addr, ip, sym, symoff, dso\n"
	"                     (default comm,tid,cpu,time,period,event,ip,sym,symoff,dso,\n"
	"                     less those the recording lacks); +FIELD adds to the default,\n"
	"                     -FIELD removes from it (e.g. -F +pid,-dso)\n"
	"      --json         one JSON object per sample and line instead of text\n"
	"      --chrome FILE  write a Chrome trace-event file (chrome://tracing,\n"
	"                     Perfetto): one complete event per run of a function\n"
	"      --firefox FILE write a Firefox Profiler profile (its processed format,\n"
	"                     profiler.firefox.com): every sample with its stack\n"
	"  -h, --help         show this help\n"
	"See hwc-script(1).\n";

/* ------------------------------------------------------------ fields */

enum {
	F_COMM = 1 << 0, F_PID = 1 << 1, F_TID = 1 << 2, F_CPU = 1 << 3, F_TIME = 1 << 4,
	F_PERIOD = 1 << 5, F_EVENT = 1 << 6, F_ADDR = 1 << 7, F_IP = 1 << 8, F_SYM = 1 << 9,
	F_SYMOFF = 1 << 10, F_DSO = 1 << 11,
};
#define F_DEFAULT (F_COMM | F_TID | F_CPU | F_TIME | F_PERIOD | F_EVENT | F_IP | F_SYM | F_SYMOFF | F_DSO)
#define F_WHERE (F_IP | F_SYM | F_DSO) /* the sample's location (and call chain) */

static const struct {
	const char *name;
	unsigned field;
	uint64_t needs;    /* the PERF_SAMPLE_* bit the samples must carry */
	const char *what;  /* its name in messages */
} fields[] = {
	{"comm", F_COMM, PERF_SAMPLE_TID, "TID"},  {"pid", F_PID, PERF_SAMPLE_TID, "TID"},
	{"tid", F_TID, PERF_SAMPLE_TID, "TID"},    {"cpu", F_CPU, PERF_SAMPLE_CPU, "CPU"},
	{"time", F_TIME, PERF_SAMPLE_TIME, "TIME"}, {"period", F_PERIOD, PERF_SAMPLE_PERIOD, "PERIOD"},
	{"event", F_EVENT, 0, NULL},                {"addr", F_ADDR, PERF_SAMPLE_ADDR, "ADDR"},
	{"ip", F_IP, PERF_SAMPLE_IP, "IP"},         {"sym", F_SYM, PERF_SAMPLE_IP, "IP"},
	{"symoff", F_SYMOFF, PERF_SAMPLE_IP, "IP"}, {"dso", F_DSO, PERF_SAMPLE_IP, "IP"},
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* -F LIST: the fields, or +FIELD and -FIELD items that add to and take
 * from the default (as perf script's), into *WANT; *NAMED gets those named
 * to be printed, which the samples must have (the default's are left out
 * where they are not, as perf script does).  0, or -1 after saying why. */
static int parse_fields(const char *spec, unsigned *want, unsigned *named)
{
	char buf[512];
	if (snprintf(buf, sizeof(buf), "%s", spec) >= (int)sizeof(buf)) {
		fprintf(stderr, PROG ": -F: field list too long\n");
		return -1;
	}
	unsigned set = 0, add = 0, del = 0;
	for (char *save, *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		char sign = *k == '+' || *k == '-' ? *k++ : 0;
		size_t i = 0;
		while (i < NFIELDS && strcmp(k, fields[i].name) != 0)
			i++;
		if (i == NFIELDS) {
			fprintf(stderr, PROG ": -F: unknown field '%s' (fields: comm, pid, tid, cpu, time, "
					"period, event, addr, ip, sym, symoff, dso)\n",
				k);
			return -1;
		}
		*(sign == '+' ? &add : sign == '-' ? &del : &set) |= fields[i].field;
	}
	if (set && (add || del)) {
		fprintf(stderr, PROG ": -F: '%s' mixes fields with +field or -field items: give a "
				"list, or changes to the default\n",
			spec);
		return -1;
	}
	if (!set && !add && !del) {
		fprintf(stderr, PROG ": -F: no fields in '%s'\n", spec);
		return -1;
	}
	*want = set ? set : (F_DEFAULT | add) & ~del;
	*named = set | add;
	return 0;
}

/* ------------------------------------------------------------ samples */

/* A sample copied out of the file until its turn comes. */
struct pending {
	uint64_t time, seq;
	size_t off; /* into the arena */
	const struct hwc_perfdata_attr *attr;
};

struct thread_run; /* chrome export: a thread's open frames */

struct script {
	const char *input;
	bool no_demangle;
	unsigned want;     /* F_* asked for */
	unsigned named;    /* of those, named by -F (must be present) */
	bool json;
	const char *chrome;
	const char *firefox;
	struct firefox *ff;
	hwc_perfdata *file;
	hwc_symbols *syms;
	int name_width;
	uint64_t samples, unknown_id, unwind_failures;
	/* ordering */
	struct pending *pend;
	size_t npend, cappend;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	uint64_t seq, max_time, flush_limit;
	/* chrome */
	hwc_output *trace_out;
	FILE *trace;
	struct json tj;
	struct rp_table threads; /* struct thread_run */
	struct rp_table procs;   /* struct thread_run keyed by pid: named once */
};

void *script_xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size);
	if (!q) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	return q;
}

static size_t frames_of(struct script *sc, const struct hwc_sample *s, const struct perf_event_attr *a,
			struct frame *out)
{
	uint64_t ips[RP_MAX_FRAMES];
	bool kern[RP_MAX_FRAMES], failed;
	size_t n = rp_sample_ips(sc->syms, s, a, ips, kern, RP_MAX_FRAMES, &failed);
	sc->unwind_failures += failed;
	for (size_t i = 0; i < n; i++)
		out[i] = (struct frame){ips[i], hwc_symbols_resolve(sc->syms, s->pid, s->time, ips[i], kern[i]),
					kern[i]};
	return n;
}

static bool has_chain(const struct hwc_sample *s)
{
	return s->sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER);
}

static uint64_t symoff(const struct hwc_location *l)
{
	return l->dso_offset - l->sym->start;
}

/* ip, sym+off and (dso) of one frame, as perf script prints them. */
static void print_where(unsigned f, uint64_t ip, const struct hwc_location *l)
{
	if (f & F_IP)
		printf("%16" PRIx64, ip);
	if (f & F_SYM) {
		printf(" %s", l->sym->name);
		if ((f & F_SYMOFF) && l->sym->known)
			printf("+0x%" PRIx64, symoff(l));
	}
	if (f & F_DSO)
		printf(" (%s)", l->sym->dso);
}

/* The name of thread TID at TIME; perf script says ":TID" for a thread
 * that was never named (NULL in JSON). */
const char *script_comm(hwc_symbols *syms, uint32_t tid, uint64_t time, char *buf, size_t size)
{
	const char *comm = hwc_symbols_comm(syms, tid, time);
	if (strcmp(comm, "[unknown]") == 0)
		snprintf(buf, size, ":%d", (int)tid); /* signed, as perf: ":-1" */
	else
		snprintf(buf, size, "%s", comm);
	return buf;
}

static const char *comm_of(struct script *sc, const struct hwc_sample *s, char *buf, size_t size)
{
	return script_comm(sc->syms, s->tid, s->time, buf, size);
}

static void print_text(struct script *sc, const struct hwc_sample *s, const char *event, unsigned f,
		       const struct frame *fr, size_t n)
{
	bool chain = (f & F_WHERE) && has_chain(s);
	if (f & F_COMM) {
		char buf[64];
		const char *comm = comm_of(sc, s, buf, sizeof(buf));
		if (chain)
			printf("%s ", comm);
		else
			printf("%16s ", comm);
	}
	if ((f & F_PID) && (f & F_TID))
		printf("%5d/%-5d ", (int)s->pid, (int)s->tid); /* -1 as perf prints it */
	else if (f & F_PID)
		printf("%5d ", (int)s->pid);
	else if (f & F_TID)
		printf("%5d ", (int)s->tid);
	if (f & F_CPU)
		printf("[%03d] ", (int)s->cpu);
	if (f & F_TIME)
		printf("%5" PRIu64 ".%06" PRIu64 ": ", s->time / 1000000000, s->time % 1000000000 / 1000);
	if (f & F_PERIOD)
		printf("%10" PRIu64 " ", s->period);
	if (f & F_EVENT)
		printf("%*s: ", sc->name_width, event);
	if (f & F_ADDR)
		printf("%16" PRIx64, s->addr);
	if (f & F_WHERE) {
		if (chain) {
			/* User frames show their DSO-relative address, as perf does. */
			putchar('\n');
			for (size_t i = 0; i < n; i++) {
				const struct hwc_location *l = fr[i].loc;
				bool mapped = strcmp(l->sym->dso, "[unknown]") != 0;
				putchar('\t');
				print_where(f, !fr[i].kernel && mapped ? l->dso_offset : fr[i].ip, l);
				putchar('\n');
			}
		} else {
			putchar(' ');
			const struct hwc_location *l =
				n ? fr[0].loc : hwc_symbols_resolve(sc->syms, s->pid, s->time, s->ip, false);
			print_where(f, s->ip, l);
		}
	}
	putchar('\n');
}

static void json_where(struct json *j, unsigned f, uint64_t ip, const struct hwc_location *l)
{
	if (f & F_IP)
		json_hex(j, "ip", ip);
	if (f & F_SYM)
		json_string(j, "sym", l->sym->known ? l->sym->name : NULL);
	if ((f & F_SYMOFF) && l->sym->known)
		json_uint(j, "symoff", symoff(l));
	if (f & F_DSO)
		json_string(j, "dso", strcmp(l->sym->dso, "[unknown]") ? l->sym->dso : NULL);
}

static void print_json(struct script *sc, const struct hwc_sample *s, const char *event, unsigned f,
		       const struct frame *fr, size_t n)
{
	struct json j;
	json_init(&j, stdout);
	j.compact = true;
	json_object(&j, NULL);
	if (f & F_COMM) {
		const char *comm = hwc_symbols_comm(sc->syms, s->tid, s->time);
		json_string(&j, "comm", strcmp(comm, "[unknown]") ? comm : NULL);
	}
	if (f & F_PID)
		json_uint(&j, "pid", s->pid);
	if (f & F_TID)
		json_uint(&j, "tid", s->tid);
	if (f & F_CPU)
		json_uint(&j, "cpu", s->cpu);
	if (f & F_TIME)
		json_uint(&j, "time", s->time);
	if (f & F_PERIOD)
		json_uint(&j, "period", s->period);
	if (f & F_EVENT)
		json_string(&j, "event", event);
	if (f & F_ADDR)
		json_hex(&j, "addr", s->addr);
	if (f & F_WHERE) {
		const struct hwc_location *l =
			n ? fr[0].loc : hwc_symbols_resolve(sc->syms, s->pid, s->time, s->ip, false);
		json_where(&j, f, s->ip, l);
		if (has_chain(s)) {
			json_array(&j, "callchain");
			for (size_t i = 0; i < n; i++) {
				json_object(&j, NULL);
				json_where(&j, f | F_IP, fr[i].ip, fr[i].loc);
				json_object_end(&j);
			}
			json_array_end(&j);
		}
	}
	json_object_end(&j);
	json_end(&j);
}

/* ------------------------------------------------------------ chrome */

/* A thread's frames open since some earlier sample, outermost first: each
 * becomes one complete ("X") event when a sample no longer has it. */
struct thread_run {
	struct rp_link link; /* first */
	uint32_t key;        /* tid (threads) or pid (procs) */
	uint32_t pid;
	uint64_t last, span; /* time of its latest sample, and what one sample covers */
	size_t n, cap;
	struct open_frame {
		const struct hwc_location *loc;
		uint64_t start;
	} *open;
};

static uint64_t run_hash(const void *e)
{
	return ((const struct thread_run *)e)->key * 0x9e3779b97f4a7c15ULL;
}

static bool same_run(const void *e, const void *k)
{
	return ((const struct thread_run *)e)->key == ((const struct thread_run *)k)->key;
}

static struct thread_run *run_get(struct rp_table *t, uint32_t key, bool *created)
{
	struct thread_run k = {.key = key};
	struct thread_run *r = rp_table_find(t, run_hash(&k), same_run, &k);
	*created = !r;
	if (!r) {
		r = rp_table_new(t, sizeof(*r), run_hash(&k), run_hash);
		r->key = key;
	}
	return r;
}

void script_frame_name(const struct hwc_location *l, char *buf, size_t size)
{
	if (l->sym->known)
		snprintf(buf, size, "%s", l->sym->name);
	else
		snprintf(buf, size, "[unknown] %s+%#" PRIx64, rp_dso_base(l->sym->dso), l->dso_offset);
}

static void chrome_meta(struct script *sc, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	json_object(&sc->tj, NULL);
	json_string(&sc->tj, "name", what);
	json_string(&sc->tj, "ph", "M");
	json_uint(&sc->tj, "pid", pid);
	json_uint(&sc->tj, "tid", tid);
	json_object(&sc->tj, "args");
	json_string(&sc->tj, "name", name);
	json_object_end(&sc->tj);
	json_object_end(&sc->tj);
	fputc('\n', sc->trace);
}

/* Close the frames of R from depth D on at time END, innermost first. */
static void chrome_close(struct script *sc, struct thread_run *r, size_t d, uint64_t end)
{
	while (r->n > d) {
		struct open_frame *o = &r->open[--r->n];
		char name[1024];
		script_frame_name(o->loc, name, sizeof(name));
		json_object(&sc->tj, NULL);
		json_string(&sc->tj, "name", name);
		json_string(&sc->tj, "cat", rp_dso_base(o->loc->sym->dso));
		json_string(&sc->tj, "ph", "X");
		json_double(&sc->tj, "ts", (double)o->start / 1000.0);
		json_double(&sc->tj, "dur", (double)(end - o->start) / 1000.0);
		json_uint(&sc->tj, "pid", r->pid);
		json_uint(&sc->tj, "tid", r->key);
		json_object_end(&sc->tj);
		fputc('\n', sc->trace);
	}
}

/* Is A's period a time in nanoseconds (cpu-clock, task-clock)? */
static bool clock_event(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);
}

static void chrome_sample(struct script *sc, const struct hwc_sample *s, const struct perf_event_attr *a,
			  const struct frame *fr, size_t n)
{
	bool created;
	struct thread_run *r = run_get(&sc->threads, s->tid, &created);
	char buf[64];
	const char *comm = comm_of(sc, s, buf, sizeof(buf));
	if (created) {
		r->pid = s->pid;
		chrome_meta(sc, "thread_name", s->pid, s->tid, comm);
		run_get(&sc->procs, s->pid, &created);
		if (created)
			chrome_meta(sc, "process_name", s->pid, s->pid, comm);
	}
	/* A gap of more than two samples' time: the thread was off CPU. */
	if (r->n && r->span && s->time > r->last + 2 * r->span)
		chrome_close(sc, r, 0, r->last + r->span);
	r->span = clock_event(a) && (s->sample_type & PERF_SAMPLE_PERIOD) ? s->period : 0;
	/* A thread's time never goes back (a misordered file): no negative durations. */
	uint64_t now = s->time > r->last ? s->time : r->last;
	r->last = now;
	/* The frames outermost first; keep the open prefix they share. */
	size_t d = 0;
	while (d < r->n && d < n && r->open[d].loc->sym == fr[n - 1 - d].loc->sym)
		d++;
	chrome_close(sc, r, d, now);
	if (r->cap < n) {
		r->cap = n;
		r->open = script_xrealloc(r->open, n * sizeof(*r->open));
	}
	for (; d < n; d++)
		r->open[r->n++] = (struct open_frame){fr[n - 1 - d].loc, now};
}

static int chrome_start(struct script *sc)
{
	hwc_output *o = NULL;
	if (hwc_output_create(&o, sc->chrome, 0) || !(sc->trace = hwc_output_stream(o))) {
		fprintf(stderr, PROG ": %s\n", hwc_errdetail());
		if (o)
			hwc_output_discard(o);
		return -1;
	}
	sc->trace_out = o;
	json_init(&sc->tj, sc->trace);
	sc->tj.compact = true;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", sc->trace);
	sc->tj.depth = 1; /* inside the array: events get commas */
	sc->tj.need_comma[1] = false;
	return 0;
}

static void free_run(void *e)
{
	free(((struct thread_run *)e)->open);
}

static int chrome_finish(struct script *sc, bool ok)
{
	hwc_output *o = sc->trace_out;
	for (struct thread_run *r = NULL; (r = rp_table_next(&sc->threads, r));)
		chrome_close(sc, r, 0, r->last + r->span);
	rp_table_free(&sc->threads, free_run);
	rp_table_free(&sc->procs, free_run);
	fputs("]}\n", sc->trace);
	if (!ok) {
		hwc_output_discard(o);
		return -1;
	}
	if (hwc_output_commit(o)) {
		fprintf(stderr, PROG ": %s\n", hwc_errdetail());
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ order */

static int emit(struct script *sc, const struct pending *p)
{
	const struct perf_event_header *h = (const void *)(sc->arena + p->off);
	const struct perf_event_attr *a = &p->attr->attr;
	struct hwc_sample s;
	if (hwc_sample_parse(h, a, &s)) {
		fprintf(stderr, PROG ": %s: %s\n", sc->input, hwc_errdetail());
		return -1;
	}
	/* The default leaves out what this event's samples lack. */
	unsigned f = sc->want;
	for (size_t i = 0; i < NFIELDS; i++)
		if (fields[i].needs && !(a->sample_type & fields[i].needs) && !(sc->named & fields[i].field))
			f &= ~fields[i].field;
	static struct frame fr[RP_MAX_FRAMES];
	size_t n = (f & F_WHERE) || sc->chrome || sc->ff ? frames_of(sc, &s, a, fr) : 0;
	sc->samples++;
	if (sc->ff)
		firefox_sample(sc->ff, &s, p->attr, fr, n);
	else if (sc->chrome)
		chrome_sample(sc, &s, a, fr, n);
	else if (sc->json)
		print_json(sc, &s, p->attr->name, f, fr, n);
	else
		print_text(sc, &s, p->attr->name, f, fr, n);
	return 0;
}

static int by_time(const void *x, const void *y)
{
	const struct pending *a = x, *b = y;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static size_t record_size(const struct script *sc, const struct pending *p)
{
	return ((const struct perf_event_header *)(const void *)(sc->arena + p->off))->size;
}

/* Print the buffered samples up to time LIMIT (all: UINT64_MAX) in time
 * order, keep the others. */
static int flush(struct script *sc, uint64_t limit)
{
	if (sc->npend) /* pend is NULL before the first sample: qsort's pointer must not be */
		qsort(sc->pend, sc->npend, sizeof(*sc->pend), by_time);
	size_t k = 0;
	while (k < sc->npend && sc->pend[k].time <= limit) {
		if (emit(sc, &sc->pend[k]))
			return -1;
		k++;
	}
	/* Keep the rest in a new arena: in place, a record moved in time order
	 * could overwrite one not yet moved. */
	size_t len = 0, cap = 4096;
	for (size_t i = k; i < sc->npend; i++)
		cap += record_size(sc, &sc->pend[i]);
	uint8_t *arena = script_xrealloc(NULL, cap);
	for (size_t i = k; i < sc->npend; i++) {
		struct pending p = sc->pend[i];
		size_t size = record_size(sc, &p);
		memcpy(arena + len, sc->arena + p.off, size);
		p.off = len;
		len += size;
		sc->pend[i - k] = p;
	}
	free(sc->arena);
	sc->arena = arena;
	sc->arena_cap = cap;
	sc->npend -= k;
	sc->arena_len = len;
	return 0;
}

static int buffer(struct script *sc, const struct hwc_perfdata_record *rec)
{
	const struct perf_event_header *h = rec->hdr;
	struct hwc_sample s;
	if (hwc_sample_parse(h, &rec->attr->attr, &s)) {
		fprintf(stderr, PROG ": %s: perf.data offset %" PRIu64 ": %s\n", sc->input, rec->offset,
			hwc_errdetail());
		return -1;
	}
	uint64_t time = s.sample_type & PERF_SAMPLE_TIME ? s.time : 0;
	if (sc->npend == sc->cappend) {
		sc->cappend = sc->cappend ? 2 * sc->cappend : 1024;
		sc->pend = script_xrealloc(sc->pend, sc->cappend * sizeof(*sc->pend));
	}
	if (sc->arena_len + h->size > sc->arena_cap) {
		sc->arena_cap = (sc->arena_len + h->size) * 2;
		sc->arena = script_xrealloc(sc->arena, sc->arena_cap);
	}
	memcpy(sc->arena + sc->arena_len, h, h->size);
	sc->pend[sc->npend++] = (struct pending){time, sc->seq++, sc->arena_len, rec->attr};
	sc->arena_len += h->size;
	if (time > sc->max_time)
		sc->max_time = time;
	return 0;
}

static int read_all(struct script *sc)
{
	struct hwc_perfdata_record rec;
	int rc;
	while ((rc = hwc_perfdata_next(sc->file, &rec)) > 0) {
		if (rec.hdr->type == PERF_RECORD_SAMPLE) {
			if (!rec.attr)
				sc->unknown_id++;
			else if (buffer(sc, &rec))
				return -1;
		} else if (rec.hdr->type == HWC_RECORD_FINISHED_ROUND) {
			if (flush(sc, sc->flush_limit))
				return -1;
			sc->flush_limit = sc->max_time;
		}
	}
	if (rc < 0) {
		fprintf(stderr, PROG ": %s\n", hwc_errdetail());
		return -1;
	}
	return flush(sc, UINT64_MAX);
}

/* ------------------------------------------------------------ main */

/* Fields named with -F must be in every sampled event's samples. */
static int check_fields(struct script *sc)
{
	for (size_t k = 0; k < hwc_perfdata_nattrs(sc->file); k++) {
		const struct hwc_perfdata_attr *a = hwc_perfdata_attr(sc->file, k);
		int len = (int)strlen(a->name);
		if (len > sc->name_width)
			sc->name_width = len;
		for (size_t i = 0; i < NFIELDS; i++)
			if ((sc->named & fields[i].field) && fields[i].needs &&
			    !(a->attr.sample_type & fields[i].needs)) {
				fprintf(stderr, PROG ": -F %s: the samples of '%s' in %s have no %s\n",
					fields[i].name, a->name, sc->input, fields[i].what);
				return -1;
			}
	}
	return 0;
}

static int parse_opts(int argc, char **argv, struct script *sc)
{
	enum { O_JSON = 256, O_CHROME, O_FIREFOX, O_NODEMANGLE };
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'}, {"fields", required_argument, NULL, 'F'},
		{"json", no_argument, NULL, O_JSON},     {"chrome", required_argument, NULL, O_CHROME},
		{"firefox", required_argument, NULL, O_FIREFOX},
		{"no-demangle", no_argument, NULL, O_NODEMANGLE},
		{"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
	};
	sc->want = F_DEFAULT;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:F:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': sc->input = optarg; break;
		case 'F':
			if (parse_fields(optarg, &sc->want, &sc->named))
				return -1;
			break;
		case O_JSON: sc->json = true; break;
		case O_CHROME: sc->chrome = optarg; break;
		case O_FIREFOX: sc->firefox = optarg; break;
		case O_NODEMANGLE: sc->no_demangle = true; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		default: fprintf(stderr, "Try `hwc script --help`.\n"); return -1;
		}
	}
	if (optind < argc) {
		if (sc->input || optind + 1 < argc) {
			fprintf(stderr, PROG ": one recording at a time (got '%s')\n", argv[optind]);
			return -1;
		}
		sc->input = argv[optind];
	}
	if ((sc->chrome != NULL) + (sc->firefox != NULL) + sc->json > 1) {
		fprintf(stderr, PROG ": --chrome and --firefox write a file, --json prints the samples: "
				"give one of them\n");
		return -1;
	}
	return 0;
}

int cmd_script(int argc, char **argv)
{
	struct script sc = {0};
	if (parse_opts(argc, argv, &sc))
		return 2;
	const char *export = sc.chrome ? sc.chrome : sc.firefox;
	if (!sc.input && !(sc.input = cli_default_recording(PROG, export != NULL)))
		return 1;
	cli_raise_fd_limit(); /* libdw keeps each DSO's file open */
	int rc = 1;
	if (rp_open_input(&sc.input, &sc.file)) {
		fprintf(stderr, PROG ": %s\n", hwc_errdetail());
		goto out;
	}
	if (hwc_symbols_new(&sc.syms, sc.no_demangle ? 0 : HWC_SYM_DEMANGLE) || hwc_symbols_load(sc.syms, sc.file)) {
		fprintf(stderr, PROG ": %s: %s\n", sc.input, hwc_errdetail());
		goto out;
	}
	if (check_fields(&sc))
		goto out;
	if (sc.chrome && chrome_start(&sc))
		goto out;
	if (sc.firefox)
		sc.ff = firefox_new(sc.file, sc.syms);
	int err = read_all(&sc);
	if (sc.chrome && chrome_finish(&sc, !err))
		err = -1;
	if (sc.ff && !err && firefox_write(sc.ff, sc.firefox, PROG))
		err = -1;
	if (err)
		goto out;
	hwc_symbols_problems(sc.syms, rp_warn_problem, (void *)PROG);
	if (sc.unknown_id)
		fprintf(stderr, PROG ": warning: %" PRIu64 " samples name no event of %s; left out\n",
			sc.unknown_id, sc.input);
	if (sc.unwind_failures)
		fprintf(stderr, PROG ": warning: %" PRIu64 " samples could not be unwound; they show "
				"their sampled address only\n",
			sc.unwind_failures);
	if (export)
		fprintf(stderr, PROG ": %" PRIu64 " samples written to %s\n", sc.samples, export);
	if (out_close(stdout, NULL))
		goto out;
	rc = 0;
out:
	firefox_free(sc.ff);
	free(sc.pend);
	free(sc.arena);
	hwc_symbols_free(sc.syms);
	hwc_perfdata_close(sc.file);
	return rc;
}
