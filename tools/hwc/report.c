/* hwc report: read a perf.data recording (hwc's or perf's), symbolize,
 * aggregate once (report_agg.c), then print a view or write exports. */
#include "hwc.h"
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: hwc report [options] [FILE]\n"
	"Summarize a recording made by `hwc record` or `perf record` (default ./perf.data).\n"
	"\n"
	"views (one):\n"
	"  --view=flat        functions by self share (default)\n"
	"  --view=caller      call tree from the outermost callers down\n"
	"  --view=callee      each hot function with its callers below it\n"
	"  --view=gprof       gprof-style: each function with its callers and callees\n"
	"  --view=threads     per-process/thread totals, exits and context switches\n"
	"  --view=records     the user records of the recording\n"
	"selection (samples that do not match are left out, totals included):\n"
	"  -i, --input=FILE   the recording (or give FILE as the argument)\n"
	"  --event=NAME       report this event of a multi-event recording\n"
	"  --comm=A,B         only these command names\n"
	"  --pid=N,M          only these process (or thread) ids\n"
	"  --dso=A,B          only samples whose own frame is in these DSOs (base names)\n"
	"  --symbol=A,B       only samples whose own frame is one of these functions\n"
	"presentation:\n"
	"  --sort=KEYS        row keys: comm,pid,tid,dso,symbol (default comm,dso,symbol);\n"
	"                     may include one order: self,children,samples,period\n"
	"  --percent-limit=P  hide rows and tree branches under P percent\n"
	"  --srcline          frames are function at file:line (DWARF line tables)\n"
	"  --inline           inlined functions are frames of their own\n"
	"  --no-children      no children (inclusive) column\n"
	"  --json             one JSON document (schema hwc-report/1) instead of text\n"
	"exports (may be combined with a view):\n"
	"  --folded=FILE      `a;b;c count` lines, root first (- for stdout)\n"
	"  --pprof=FILE       gzipped profile.proto for `go tool pprof`\n"
	"  --flamegraph=FILE  interactive SVG flame graph\n"
	"See hwc-report(1).\n";

/* ------------------------------------------------------------ samples */

static bool is_switch_leader(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_CONTEXT_SWITCHES &&
	       (a->sample_type & PERF_SAMPLE_READ);
}

static bool is_user_record_event(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_BPF_OUTPUT || a->config == PERF_COUNT_SW_DUMMY) &&
	       (a->sample_type & PERF_SAMPLE_RAW);
}

/* The event name of value I of a group read. */
static const char *value_name(struct rp_report *r, const struct perf_event_attr *a,
			      const uint64_t *values, uint32_t i, uint32_t stride)
{
	const struct hwc_perfdata_attr *m = (a->read_format & PERF_FORMAT_ID)
						    ? hwc_perfdata_attr_by_id(r->file, values[i * stride + 1])
						    : NULL;
	return m ? m->name : "?";
}

/* Add VALUE to the thread's count of NAME. */
static void add_count(struct rp_thread *t, const char *name, uint64_t value)
{
	size_t i = 0;
	while (i < t->ncounts && strcmp(t->count_names[i], name) != 0)
		i++;
	if (i == 8)
		return;
	if (i == t->ncounts) {
		t->count_names[t->ncounts] = name;
		t->counts[t->ncounts++] = 0;
	}
	t->counts[i] += value;
}

/* A context-switch sample's group values: the latest for its CPU. */
static void switch_values(struct rp_report *r, struct rp_thread *t, const struct perf_event_attr *a,
			  const struct hwc_sample *s)
{
	size_t k = 0;
	while (k < t->nlast && t->last[k].cpu != s->cpu)
		k++;
	if (k == t->nlast) {
		t->last = realloc(t->last, (t->nlast + 1) * sizeof(*t->last));
		if (!t->last) {
			fprintf(stderr, "hwc report: out of memory\n");
			exit(1);
		}
		t->nlast++;
	}
	struct rp_cpu_values *c = &t->last[k];
	c->cpu = s->cpu;
	c->n = s->nr_values < 8 ? s->nr_values : 8;
	for (uint32_t i = 0; i < c->n; i++) {
		c->names[i] = value_name(r, a, s->values, i, s->value_stride);
		c->v[i] = s->values[i * s->value_stride];
	}
}

/* Once all records are read: switches out, and counts at the last switch
 * (the sum over CPUs of each CPU's latest values) unless the thread's exit
 * gave them. */
static void finish_thread(struct rp_thread *t)
{
	t->switches = t->switch_records ? t->switch_records : t->switch_samples;
	if (t->exit_counts)
		return;
	for (size_t k = 0; k < t->nlast; k++)
		for (uint32_t i = 0; i < t->last[k].n; i++)
			add_count(t, t->last[k].names[i], t->last[k].v[i]);
}

/* PERF_RECORD_READ: pid, tid, then the read_format of the event. */
static void read_record(struct rp_report *r, const struct hwc_perfdata_record *rec)
{
	const struct perf_event_header *h = rec->hdr;
	if (!rec->attr || h->size < 16 + 8)
		return;
	const struct perf_event_attr *a = &rec->attr->attr;
	const uint64_t *w = (const uint64_t *)(const void *)((const uint8_t *)h + 16);
	size_t words = (h->size - 16 - hwc_sample_id_size(a)) / 8;
	uint32_t pid, tid;
	memcpy(&pid, (const uint8_t *)h + 8, 4);
	memcpy(&tid, (const uint8_t *)h + 12, 4);
	struct rp_thread *t = rp_thread_get(r, pid, tid);
	uint64_t fmt = a->read_format;
	size_t extra = !!(fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint32_t stride = 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
	/* A task's count is the sum of its READs: one per CPU buffer it had the
	 * event on (hwc-data(5)). */
	if (!t->exit_counts)
		t->ncounts = 0;
	t->exit_counts = true;
	if (fmt & PERF_FORMAT_GROUP) {
		if (words < 1 + extra || w[0] > (words - 1 - extra) / stride)
			return;
		const uint64_t *values = w + 1 + extra;
		for (uint32_t i = 0; i < w[0]; i++)
			add_count(t, value_name(r, a, values, i, stride), values[i * stride]);
	} else if (words >= 1) {
		/* value, [enabled], [running], [id], [lost]: under the record's event. */
		add_count(t, rec->attr->name, w[0]);
	}
}

static void add_urec(struct rp_report *r, const struct hwc_sample *s, uint64_t offset)
{
	if (r->nurecs == r->capurecs) {
		r->capurecs = r->capurecs ? r->capurecs * 2 : 64;
		r->urecs = realloc(r->urecs, r->capurecs * sizeof(*r->urecs));
		if (!r->urecs) {
			fprintf(stderr, "hwc report: out of memory\n");
			exit(1);
		}
	}
	r->urecs[r->nurecs++] = (struct rp_urec){s->time, offset, s->pid, s->tid, s->raw_size, s->raw};
}

/* The sample's frames, leaf first, resolved and interned. */
static int pick_event(struct rp_report *r)
{
	size_t n = hwc_perfdata_nattrs(r->file);
	if (r->o.event) {
		for (size_t i = 0; i < n; i++)
			if (strcmp(hwc_perfdata_attr(r->file, i)->name, r->o.event) == 0) {
				r->attr = hwc_perfdata_attr(r->file, i);
				return 0;
			}
		fprintf(stderr, "hwc report: %s has no event '%s'; it has:", r->o.input, r->o.event);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, " %s", hwc_perfdata_attr(r->file, i)->name);
		fprintf(stderr, "\n");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct hwc_perfdata_attr *a = hwc_perfdata_attr(r->file, i);
		if (!is_switch_leader(&a->attr) && !is_user_record_event(&a->attr) &&
		    (a->attr.sample_period || a->attr.freq)) {
			r->attr = a;
			return 0;
		}
	}
	r->attr = hwc_perfdata_attr(r->file, 0);
	return 0;
}

static int read_samples(struct rp_report *r)
{
	struct hwc_perfdata_record rec;
	int rc;
	while ((rc = hwc_perfdata_next(r->file, &rec)) > 0) {
		const struct perf_event_header *h = rec.hdr;
		switch (h->type) {
		case PERF_RECORD_SAMPLE: {
			if (!rec.attr) {
				r->skipped++;
				continue;
			}
			struct hwc_sample s;
			if (hwc_sample_parse(h, &rec.attr->attr, &s)) {
				fprintf(stderr, "hwc report: %s: perf.data offset %" PRIu64 ": %s\n",
					r->o.input, rec.offset, hwc_errdetail());
				return -1;
			}
			const struct perf_event_attr *a = &rec.attr->attr;
			if (is_switch_leader(a)) {
				struct rp_thread *t = rp_thread_get(r, s.pid, s.tid);
				t->switch_samples++;
				switch_values(r, t, a, &s);
			} else if (is_user_record_event(a) && s.raw) {
				add_urec(r, &s, rec.offset);
			} else if (rec.attr == r->attr) {
				rp_add_sample(r, &s, a);
			}
			break;
		}
		case PERF_RECORD_SWITCH:
		case PERF_RECORD_SWITCH_CPU_WIDE: {
			struct hwc_sample_id id;
			if (rec.attr && !hwc_sample_id_parse(h, &rec.attr->attr, &id) &&
			    (h->misc & PERF_RECORD_MISC_SWITCH_OUT))
				rp_thread_get(r, id.pid, id.tid)->switch_records++;
			break;
		}
		case PERF_RECORD_EXIT:
			if (h->size >= 32) {
				uint32_t pid, tid;
				uint64_t time;
				memcpy(&pid, (const uint8_t *)h + 8, 4);
				memcpy(&tid, (const uint8_t *)h + 16, 4);
				memcpy(&time, (const uint8_t *)h + 24, 8);
				struct rp_thread *t = rp_thread_get(r, pid, tid);
				t->exited = true;
				t->exit_time = time;
			}
			break;
		case PERF_RECORD_READ:
			read_record(r, &rec);
			break;
		case PERF_RECORD_LOST:
			if (h->size >= 24) {
				uint64_t lost;
				memcpy(&lost, (const uint8_t *)h + 16, 8);
				r->lost += lost;
			}
			break;
		case PERF_RECORD_LOST_SAMPLES:
			if (h->size >= 16) {
				uint64_t lost;
				memcpy(&lost, (const uint8_t *)h + 8, 8);
				r->lost += lost;
			}
			break;
		default:
			break;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "hwc report: %s\n", hwc_errdetail());
		return -1;
	}
	/* Name the threads (at their last sample or exit). */
	for (size_t i = 0; i < r->tcap; i++)
		for (struct rp_thread *t = r->tbuckets[i]; t; t = t->next) {
			t->comm = hwc_symbols_comm(r->syms, t->tid, t->exit_time ? t->exit_time : UINT64_MAX);
			finish_thread(t);
		}
	return 0;
}

/* ------------------------------------------------------------ options */

static int parse_sort(struct rp_opts *o, const char *spec)
{
	o->keys = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", spec);
	bool ordered = false;
	for (char *save, *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		static const struct {
			const char *name;
			unsigned key;
			int order;
		} names[] = {
			{"comm", K_COMM, -1}, {"pid", K_PID, -1}, {"tid", K_TID, -1},
			{"dso", K_DSO, -1}, {"symbol", K_SYM, -1}, {"sym", K_SYM, -1},
			{"self", 0, O_SELF}, {"overhead", 0, O_SELF}, {"children", 0, O_CHILDREN},
			{"samples", 0, O_SAMPLES}, {"period", 0, O_PERIOD},
		};
		size_t i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strcmp(k, names[i].name) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0])) {
			fprintf(stderr, "hwc report: --sort: unknown key '%s' (keys: comm, pid, tid, dso, "
					"symbol; orders: self, children, samples, period)\n",
				k);
			return -1;
		}
		if (names[i].order >= 0) {
			if (ordered) {
				fprintf(stderr, "hwc report: --sort: give at most one of self, children, "
						"samples, period\n");
				return -1;
			}
			ordered = true;
			o->order = (enum rp_order)names[i].order;
		}
		o->keys |= names[i].key;
	}
	if (!o->keys)
		o->keys = K_COMM | K_DSO | K_SYM;
	return 0;
}

static int parse_opts(int argc, char **argv, struct rp_opts *o)
{
	enum { O_VIEW = 256, O_EVENT, O_COMM, O_PID, O_DSO, O_SYMBOL, O_SORT, O_LIMIT, O_SRCLINE,
	       O_INLINE, O_JSON, O_FOLDED, O_PPROF, O_FLAME, O_NOCHILD };
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'},  {"view", required_argument, NULL, O_VIEW},
		{"event", required_argument, NULL, O_EVENT}, {"comm", required_argument, NULL, O_COMM},
		{"pid", required_argument, NULL, O_PID},   {"dso", required_argument, NULL, O_DSO},
		{"symbol", required_argument, NULL, O_SYMBOL}, {"sort", required_argument, NULL, O_SORT},
		{"percent-limit", required_argument, NULL, O_LIMIT},
		{"srcline", no_argument, NULL, O_SRCLINE}, {"inline", no_argument, NULL, O_INLINE},
		{"json", no_argument, NULL, O_JSON},      {"folded", required_argument, NULL, O_FOLDED},
		{"pprof", required_argument, NULL, O_PPROF},
		{"flamegraph", required_argument, NULL, O_FLAME},
		{"no-children", no_argument, NULL, O_NOCHILD}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	o->keys = K_COMM | K_DSO | K_SYM;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'i': o->input = optarg; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		case O_VIEW: {
			static const char *const views[] = {"flat", "caller", "callee", "gprof", "threads",
							    "records"};
			size_t i;
			for (i = 0; i < 6; i++)
				if (strcmp(optarg, views[i]) == 0)
					break;
			if (i == 6) {
				fprintf(stderr, "hwc report: --view: unknown view '%s' (flat, caller, "
						"callee, gprof, threads, records)\n",
					optarg);
				return -1;
			}
			o->view = (enum rp_view)i;
			break;
		}
		case O_EVENT: o->event = optarg; break;
		case O_COMM: o->comms = optarg; break;
		case O_PID: o->pids = optarg; break;
		case O_DSO: o->dsos = optarg; break;
		case O_SYMBOL: o->symbols = optarg; break;
		case O_SORT:
			if (parse_sort(o, optarg))
				return -1;
			break;
		case O_LIMIT:
			errno = 0;
			o->percent_limit = strtod(optarg, &end);
			if (errno || end == optarg || *end || o->percent_limit < 0 || o->percent_limit > 100) {
				fprintf(stderr, "hwc report: --percent-limit: '%s' is not a percentage "
						"(0..100)\n",
					optarg);
				return -1;
			}
			break;
		case O_SRCLINE: o->srcline = true; break;
		case O_INLINE: o->inl = true; break;
		case O_JSON: o->json = true; break;
		case O_FOLDED: o->folded = optarg; break;
		case O_PPROF: o->pprof = optarg; break;
		case O_FLAME: o->flamegraph = optarg; break;
		case O_NOCHILD: o->no_children = true; break;
		default:
			fprintf(stderr, "Try `hwc report --help`.\n");
			return -1;
		}
	}
	if (optind < argc) {
		if (o->input || optind + 1 < argc) {
			fprintf(stderr, "hwc report: one recording at a time (got '%s')\n", argv[optind]);
			return -1;
		}
		o->input = argv[optind];
	}
	if (!o->input)
		o->input = "perf.data";
	return 0;
}

static void warn_problem(const char *dso, const char *why, void *arg)
{
	(void)arg;
	fprintf(stderr, "hwc report: warning: no symbols for %s: %s; its addresses show as "
			"[unknown] with their offsets\n",
		dso, why);
}

static void free_report(struct rp_report *r)
{
	rp_clear(r);
	hwc_symbols_free(r->syms);
	hwc_perfdata_close(r->file);
}

int cmd_report(int argc, char **argv)
{
	struct rp_report r = {0};
	if (parse_opts(argc, argv, &r.o))
		return 2;
	int err = hwc_perfdata_open(&r.file, r.o.input);
	if (err) {
		fprintf(stderr, "hwc report: %s\n", hwc_errdetail());
		return 1;
	}
	unsigned flags = (r.o.srcline ? HWC_SYM_SRCLINE : 0) | (r.o.inl ? HWC_SYM_INLINE : 0);
	int rc = 1;
	if ((err = hwc_symbols_new(&r.syms, flags)) || (err = hwc_symbols_load(r.syms, r.file))) {
		fprintf(stderr, "hwc report: %s: %s\n", r.o.input, hwc_errdetail());
		goto out;
	}
	if (pick_event(&r) || read_samples(&r))
		goto out;
	r.have_callchains = r.attr && (r.attr->attr.sample_type & PERF_SAMPLE_CALLCHAIN ||
				       r.attr->attr.sample_type & PERF_SAMPLE_STACK_USER);
	if (!r.have_callchains)
		r.o.no_children = true;
	hwc_symbols_problems(r.syms, warn_problem, NULL);
	if (r.unwind_failures)
		fprintf(stderr, "hwc report: warning: %" PRIu64 " samples could not be unwound; "
				"they keep their sampled address only\n",
			r.unwind_failures);
	if (r.o.folded && rp_write_folded(&r, r.o.folded))
		goto out;
	if (r.o.pprof && rp_write_pprof(&r, r.o.pprof))
		goto out;
	if (r.o.flamegraph && rp_write_flamegraph(&r, r.o.flamegraph))
		goto out;
	bool exported = r.o.pprof || r.o.flamegraph || (r.o.folded && strcmp(r.o.folded, "-") == 0);
	if (r.o.json) {
		rp_print_json(&r, stdout);
	} else if (!exported || r.o.view != V_FLAT) {
		switch (r.o.view) {
		case V_FLAT: rp_print_flat(&r, stdout); break;
		case V_CALLER: rp_print_tree(&r, stdout, true); break;
		case V_CALLEE: rp_print_tree(&r, stdout, false); break;
		case V_GPROF: rp_print_gprof(&r, stdout); break;
		case V_THREADS: rp_print_threads(&r, stdout); break;
		case V_RECORDS: rp_print_records(&r, stdout); break;
		}
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "hwc report: writing the report failed: %s\n", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free_report(&r);
	return rc;
}
