/* The profile a recording holds: read a perf.data file (hwc's or perf's),
 * symbolize, and aggregate (agg.c) the samples of one event, or those a
 * caller selects, with the threads' switches, exits and counts and the user
 * records.  hwc report prints and exports it; pmcstat -G, -g and -T show
 * it FreeBSD's way. */
#include "profile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *prog = "hwc report"; /* for messages: the tool's name */

const char *rp_dso_base(const char *dso)
{
	const char *slash = strrchr(dso, '/');
	return slash && dso[0] != '[' ? slash + 1 : dso;
}

void rp_func_name(const struct rp_func *f, char *buf, size_t size)
{
	int n;
	if (f->sym->known)
		n = snprintf(buf, size, "%s", f->sym->name);
	else
		n = snprintf(buf, size, "[unknown] %s+%#" PRIx64, rp_dso_base(f->sym->dso), f->sym->start);
	if (f->file && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " %s:%u", f->file, f->line);
}

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
			fprintf(stderr, "%s: out of memory\n", prog);
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
			fprintf(stderr, "%s: out of memory\n", prog);
			exit(1);
		}
	}
	/* A copy: the record is gone after the next one is read. */
	uint8_t *data = malloc(s->raw_size ? s->raw_size : 1);
	if (!data) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	memcpy(data, s->raw, s->raw_size);
	r->urecs[r->nurecs++] = (struct rp_urec){s->time, offset, s->pid, s->tid, s->raw_size, data};
}

/* Is this sample one of those reported: the caller's choice, else of the
 * event named (every event of that name), else of the event picked. */
static bool wanted(struct rp_report *r, const struct hwc_perfdata_record *rec)
{
	if (r->o.want)
		return r->o.want(r->o.want_arg, rec);
	if (r->o.event)
		return strcmp(rec->attr->name, r->o.event) == 0;
	return rec->attr == r->attr;
}

/* Which event to report: --event, else the first with samples that is
 * neither a context-switch group leader nor the user-record event. */
static int pick_event(struct rp_report *r)
{
	size_t n = hwc_perfdata_nattrs(r->file);
	if (r->o.event && !r->o.want) {
		for (size_t i = 0; i < n; i++)
			if (strcmp(hwc_perfdata_attr(r->file, i)->name, r->o.event) == 0) {
				r->attr = hwc_perfdata_attr(r->file, i);
				return 0;
			}
		fprintf(stderr, "%s: %s has no event '%s'; it has:", prog, r->o.input, r->o.event);
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

/* A sample's frames located by the reader thread (rp_sample_locations()). */
struct located {
	bool in_time;  /* in the --time span: then located */
	bool unwind_failed;
	const char *comm;
	size_t first, n; /* its locations in the batch's */
};

/* Is REC a sample take_record() sums: of the event reported, neither a
 * context-switch leader's nor a user record? */
static bool summed(struct rp_report *r, const struct hwc_perfdata_record *rec)
{
	if (rec->hdr->type != PERF_RECORD_SAMPLE || !rec->attr)
		return false;
	const struct perf_event_attr *a = &rec->attr->attr;
	return !is_switch_leader(a) && !is_user_record_event(a) && wanted(r, rec);
}

/* One record: a sample (S decoded when it is one of an event; LOC its
 * frames when the reader thread located them, LOCS their locations), a
 * thread's switch, exit or counts, a loss. */
static void take_record(struct rp_report *r, const struct hwc_perfdata_record *rec,
			const struct hwc_sample *s, const struct located *loc,
			const struct hwc_location *const *locs)
{
	const struct perf_event_header *h = rec->hdr;
	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		if (!rec->attr) {
			r->skipped++;
			break;
		}
		const struct perf_event_attr *a = &rec->attr->attr;
		if (is_switch_leader(a)) {
			struct rp_thread *t = rp_thread_get(r, s->pid, s->tid);
			t->switch_samples++;
			switch_values(r, t, a, s);
		} else if (is_user_record_event(a)) {
			add_urec(r, s, rec->offset);
		} else if (loc) { /* summed(), located by the reader thread */
			struct rp_samples g = {s->pid, s->tid, s->cpu, rp_sample_period(s, a), 1};
			if (loc->in_time)
				rp_add_located(r, &g, locs + loc->first, loc->n, loc->unwind_failed,
					       loc->comm);
			else
				r->skipped++;
		} else if (summed(r, rec) && !rp_fold_sample(r, s, a)) {
			rp_add_sample(r, s, a);
		}
		break;
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		struct hwc_sample_id id;
		if (rec->attr && !hwc_sample_id_parse(h, &rec->attr->attr, &id) &&
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
		read_record(r, rec);
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

/* Is this record one take_record() uses? */
static bool taken(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_READ:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		return true;
	default:
		return false;
	}
}

/* Decode a sample record of an event into S: 0, or -1 after saying why. */
static int decode(struct rp_report *r, const struct hwc_perfdata_record *rec, struct hwc_sample *s,
		  char *why, size_t size)
{
	if (rec->hdr->type != PERF_RECORD_SAMPLE || !rec->attr)
		return 0;
	if (!hwc_sample_parse(rec->hdr, &rec->attr->attr, s))
		return 0;
	snprintf(why, size, "%s: %s: perf.data offset %" PRIu64 ": %s", prog, r->o.input, rec->offset,
		 hwc_errdetail());
	return -1;
}

/* One thread: records read, decoded and taken in turn.  In one pass
 * (o.one_pass), the address-space records are fed to r->syms on the way. */
static int read_one_thread(struct rp_report *r)
{
	struct hwc_perfdata_record rec;
	struct hwc_sample s;
	char why[1024];
	int rc;
	while ((rc = hwc_perfdata_next(r->file, &rec)) > 0) {
		uint32_t type = rec.hdr->type;
		if (r->o.one_pass && (type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
				      type == PERF_RECORD_COMM || type == PERF_RECORD_FORK)) {
			if (hwc_symbols_record(r->syms, rec.hdr, rec.attr ? &rec.attr->attr : NULL)) {
				fprintf(stderr, "%s: %s: %s (record at perf.data offset %" PRIu64 ")\n",
					prog, r->o.input, hwc_errdetail(), rec.offset);
				return -1;
			}
			rp_fold_record(r, rec.hdr);
		}
		if (r->o.one_pass && r->fold_failed)
			continue; /* read again; the maps are all that count now */
		/* With the sample hook (hwc annotate), the samples it gets are
		 * all that is read: nothing is decoded or taken here. */
		if (r->o.sample) {
			if (summed(r, &rec) && r->o.sample(r->o.sample_arg, &rec))
				return -1;
			continue;
		}
		if (!taken(rec.hdr->type))
			continue;
		if (decode(r, &rec, &s, why, sizeof(why))) {
			fprintf(stderr, "%s\n", why);
			return -1;
		}
		take_record(r, &rec, &s, NULL, NULL);
	}
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", prog, hwc_errdetail());
		return -1;
	}
	return 0;
}

/* Two threads: a reader walks the records, copies those taken into a batch,
 * decodes its samples and locates their frames (hwc_symbols is the
 * reader's until it ends), while this thread sums the batch before (the
 * tables stay on this thread).  The batches go round a ring, in file
 * order.  hwc annotate's hook (o.sample) never comes here: read_samples()
 * reads its samples on one thread.  A batch is small: four of 1024
 * decoded samples (256 bytes each) and their copied records were 1.7 MB
 * of a system-wide report's peak, and handing one over costs little
 * beside locating its frames. */
#define BATCH_RECORDS 256
#define NBATCHES 4

struct batch {
	struct hwc_perfdata_record recs[BATCH_RECORDS]; /* hdr: into BYTES */
	struct hwc_sample samples[BATCH_RECORDS];
	struct located located[BATCH_RECORDS];
	bool is_located[BATCH_RECORDS];
	const struct hwc_location **locs; /* of the samples located */
	size_t nlocs, caplocs;
	size_t n;
	uint8_t *bytes;
	size_t len, cap;
	bool full;  /* handed to the taker */
	bool last;  /* the reader stopped after it: at the end, or on ERROR */
	char error[1024];
};

struct reader {
	struct rp_report *r;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool stop; /* the taker gave up */
	struct batch b[NBATCHES];
};

/* Copy REC into B (false without memory). */
static bool batch_add(struct batch *b, const struct hwc_perfdata_record *rec)
{
	size_t size = rec->hdr->size;
	if (b->len + size > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1 << 16;
		while (cap < b->len + size)
			cap *= 2;
		uint8_t *p = realloc(b->bytes, cap);
		if (!p)
			return false;
		b->bytes = p;
		b->cap = cap;
	}
	memcpy(b->bytes + b->len, rec->hdr, size);
	b->recs[b->n] = *rec;
	b->recs[b->n].hdr = (const void *)(uintptr_t)b->len; /* an offset until full */
	b->len += (size + 7) & ~(size_t)7;
	b->n++;
	return true;
}

/* Locate the frames of sample S of an event opened with A into B: false
 * without memory. */
static bool locate(struct rp_report *r, struct batch *b, const struct hwc_sample *s,
		   const struct perf_event_attr *a, struct located *l)
{
	*l = (struct located){.in_time = rp_time_selected(r, s), .first = b->nlocs};
	if (!l->in_time)
		return true;
	if (b->caplocs - b->nlocs < RP_MAX_FRAMES) {
		size_t cap = 2 * (b->nlocs + RP_MAX_FRAMES);
		const struct hwc_location **p = realloc(b->locs, cap * sizeof(*p));
		if (!p)
			return false;
		b->locs = p;
		b->caplocs = cap;
	}
	l->n = rp_sample_locations(r, s, a, b->locs + b->nlocs, &l->unwind_failed);
	b->nlocs += l->n;
	l->comm = l->n ? hwc_symbols_comm(r->syms, s->tid, s->time) : NULL;
	return true;
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct rp_report *r = rd->r;
	for (size_t k = 0;; k = (k + 1) % NBATCHES) {
		struct batch *b = &rd->b[k];
		pthread_mutex_lock(&rd->lock);
		while (b->full && !rd->stop)
			pthread_cond_wait(&rd->changed, &rd->lock);
		bool stop = rd->stop;
		pthread_mutex_unlock(&rd->lock);
		if (stop)
			return NULL;
		b->n = b->len = b->nlocs = 0;
		struct hwc_perfdata_record rec;
		int rc = 1;
		while (b->n < BATCH_RECORDS && (rc = hwc_perfdata_next(r->file, &rec)) > 0)
			if (taken(rec.hdr->type) && !batch_add(b, &rec)) {
				snprintf(b->error, sizeof(b->error), "%s: out of memory", prog);
				b->last = true;
				break;
			}
		if (rc < 0) {
			snprintf(b->error, sizeof(b->error), "%s: %s", prog, hwc_errdetail());
			b->last = true;
		}
		b->last |= rc == 0;
		for (size_t i = 0; i < b->n; i++) {
			b->recs[i].hdr = (const void *)(b->bytes + (uintptr_t)b->recs[i].hdr);
			if (decode(r, &b->recs[i], &b->samples[i], b->error, sizeof(b->error))) {
				b->n = i; /* the records before it are taken, then the error told */
				b->last = true;
				break;
			}
			b->is_located[i] = summed(r, &b->recs[i]);
			if (b->is_located[i] && !locate(r, b, &b->samples[i], &b->recs[i].attr->attr,
							&b->located[i])) {
				snprintf(b->error, sizeof(b->error), "%s: out of memory", prog);
				b->n = i;
				b->last = true;
				break;
			}
		}
		pthread_mutex_lock(&rd->lock);
		b->full = true;
		pthread_cond_broadcast(&rd->changed);
		pthread_mutex_unlock(&rd->lock);
		if (b->last)
			return NULL;
	}
}

/* The reader started: 0; -1 when no thread could be had (nothing said). */
static int read_two_threads(struct rp_report *r, int *rc)
{
	struct reader *rd = calloc(1, sizeof(*rd));
	if (!rd)
		return -1;
	rd->r = r;
	pthread_mutex_init(&rd->lock, NULL);
	pthread_cond_init(&rd->changed, NULL);
	pthread_t t;
	if (pthread_create(&t, NULL, reader_main, rd)) {
		free(rd);
		return -1;
	}
	*rc = 0;
	for (size_t k = 0;; k = (k + 1) % NBATCHES) {
		struct batch *b = &rd->b[k];
		pthread_mutex_lock(&rd->lock);
		while (!b->full)
			pthread_cond_wait(&rd->changed, &rd->lock);
		pthread_mutex_unlock(&rd->lock);
		for (size_t i = 0; i < b->n; i++)
			take_record(r, &b->recs[i], &b->samples[i],
				    b->is_located[i] ? &b->located[i] : NULL, b->locs);
		bool last = b->last;
		if (b->error[0]) {
			fprintf(stderr, "%s\n", b->error);
			*rc = -1;
		}
		pthread_mutex_lock(&rd->lock);
		b->full = false;
		pthread_cond_broadcast(&rd->changed);
		pthread_mutex_unlock(&rd->lock);
		if (last)
			break;
	}
	pthread_join(t, NULL);
	for (size_t k = 0; k < NBATCHES; k++) {
		free(rd->b[k].bytes);
		free(rd->b[k].locs);
	}
	pthread_cond_destroy(&rd->changed);
	pthread_mutex_destroy(&rd->lock);
	free(rd);
	return 0;
}

/* Two threads when there are two CPUs to run them (HWC_PROFILE_THREADS=1:
 * one; the tests compare the two). */
static bool use_two_threads(void)
{
	const char *env = getenv("HWC_PROFILE_THREADS");
	if (env && strcmp(env, "1") == 0)
		return false;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

/* Does a sampled event of the recording carry stacks to unwind (DWARF)? */
static bool unwinds(const struct rp_report *r)
{
	for (size_t i = 0; i < hwc_perfdata_nattrs(r->file); i++)
		if (hwc_perfdata_attr(r->file, i)->attr.sample_type & PERF_SAMPLE_STACK_USER)
			return true;
	return false;
}

/* The records, once r->syms has every map.  FOLD: summed per raw chain
 * on this thread (rp_fold_sample()), else a reader thread locates each
 * sample's frames (DWARF stacks to unwind, or too many distinct chains). */
static int read_records(struct rp_report *r, bool fold)
{
	int rc;
	hwc_perfdata_rewind(r->file);
	/* The hook's samples alone are read faster than handed to a thread. */
	if (r->o.sample || fold || !use_two_threads() || read_two_threads(r, &rc))
		rc = read_one_thread(r);
	return rc;
}

static int read_samples(struct rp_report *r)
{
	int rc;
	if (r->o.sample || unwinds(r)) {
		if (hwc_symbols_load(r->syms, r->file)) {
			fprintf(stderr, "%s: %s: %s\n", prog, r->o.input, hwc_errdetail());
			return -1;
		}
		rc = read_records(r, false);
	} else {
		/* Samples summed per raw chain are resolved at the end: the
		 * maps can be read with them, in one pass over the file. */
		hwc_symbols_load_header(r->syms, r->file);
		hwc_perfdata_rewind(r->file);
		r->o.one_pass = true;
		rc = read_one_thread(r);
		r->o.one_pass = false;
		if (!rc && !rp_fold_exact(r)) {
			/* A raw chain's samples span a map or name that came later
			 * in the file: again, with every map known.  Too many
			 * distinct chains (or a sample to resolve alone) gain
			 * nothing from the sums. */
			bool fold = !r->fold_failed;
			rp_clear(r);
			rc = read_records(r, fold);
		}
	}
	if (rc)
		return -1;
	/* Name the threads (at their last sample or exit). */
	for (struct rp_thread *t = NULL; (t = rp_table_next(&r->threads, t));) {
		t->comm = hwc_symbols_comm(r->syms, t->tid, t->exit_time ? t->exit_time : UINT64_MAX);
		finish_thread(t);
	}
	return 0;
}

/* ------------------------------------------------------------ options */

void rp_warn_problem(const char *dso, const char *why, void *prog_name)
{
	const char *tool = prog_name;
	if (dso[0] == '[' && strcmp(dso, "[kernel.kallsyms]") != 0) /* a kernel module's file */
		fprintf(stderr,
			"%s: warning: %s: %s; its functions are named from the kernel's symbol list "
			"instead\n",
			tool, dso, why);
	else
		fprintf(stderr, "%s: warning: no symbols for %s: %s; its addresses show as "
				"[unknown]\n",
			tool, dso, why);
}

void rp_free(struct rp_report *r)
{
	rp_clear(r);
	if (r->have_parent_re)
		regfree(&r->parent_re);
	r->have_parent_re = false;
	hwc_symbols_free(r->syms);
	hwc_perfdata_close(r->file);
}

bool rp_input_is_stdin(const char *input)
{
	if (strcmp(input, "-") == 0)
		return true;
	/* Another FIFO is not read: with no writer it would hang. */
	struct stat a, b;
	return stat(input, &a) == 0 && (S_ISFIFO(a.st_mode) || S_ISSOCK(a.st_mode)) &&
	       fstat(STDIN_FILENO, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int rp_open_input(const char **input, hwc_perfdata **file)
{
	if (!rp_input_is_stdin(*input))
		return hwc_perfdata_open(file, *input);
	*input = "standard input";
	return hwc_perfdata_open_fd(file, STDIN_FILENO);
}

/* What the sort keys and the selection need of the samples, said before
 * reading them (as perf does); the parent pattern compiled. */
static int check_selection(struct rp_report *r)
{
	uint64_t t = r->attr ? r->attr->attr.sample_type : 0;
	if (((r->o.keys & K_CPU) || r->o.cpus) && !(t & PERF_SAMPLE_CPU)) {
		fprintf(stderr, "%s: %s: the samples of %s do not carry their CPU (record with -a, -C "
				"or --sample-cpu) for %s\n",
			prog, r->o.input, r->attr ? r->attr->name : "the event",
			r->o.cpus ? "--cpu" : "--sort cpu");
		return -1;
	}
	if (r->o.time_pct) {
		/* perf's: first + round(share * span), the end one before the
		 * next slice's start (HEADER_SAMPLE_TIME: first, last).  (llround
		 * compiles to instructions in hwc, which does not link libm.) */
		const void *data;
		size_t size;
		uint64_t span[2];
		if (hwc_perfdata_feature(r->file, HWC_FEAT_SAMPLE_TIME, &data, &size) || size < 16) {
			fprintf(stderr, "%s: %s: no first and last sample times in the header "
					"(SAMPLE_TIME) for --time percentages: give times in seconds\n",
				prog, r->o.input);
			return -1;
		}
		memcpy(span, data, 16);
		double total = (double)(span[1] - span[0]);
		r->o.time_start = span[0] + (uint64_t)llround(r->o.time_pct_start * total);
		r->o.time_end = span[0] + (uint64_t)llround(r->o.time_pct_end * total);
		if (r->o.time_end > r->o.time_start && r->o.time_end != span[1])
			r->o.time_end--;
		r->o.time_set = true;
	}
	if (r->o.time_set && !(t & PERF_SAMPLE_TIME)) {
		fprintf(stderr, "%s: %s: the samples of %s carry no time for --time\n", prog,
			r->o.input, r->attr ? r->attr->name : "the event");
		return -1;
	}
	if (r->o.keys & K_PARENT) {
		if (!(t & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER))) {
			fprintf(stderr, "%s: %s: --sort parent needs call chains (record with -g or "
					"--call-graph)\n",
				prog, r->o.input);
			return -1;
		}
		/* perf's default: system calls and page faults. */
		const char *pattern = r->o.parent ? r->o.parent : "^sys_|^do_page_fault";
		int err = regcomp(&r->parent_re, pattern, REG_EXTENDED | REG_NOSUB);
		if (err) {
			char why[256];
			regerror(err, &r->parent_re, why, sizeof(why));
			fprintf(stderr, "%s: --parent: '%s' is not a regular expression: %s\n", prog,
				pattern, why);
			return -1;
		}
		r->have_parent_re = true;
	}
	return 0;
}

int rp_load(struct rp_report *r)
{
	if (r->o.prog)
		prog = r->o.prog;
	int err;
	if (rp_open_input(&r->o.input, &r->file)) {
		fprintf(stderr, "%s: %s\n", prog, hwc_errdetail());
		return -1;
	}
	/* Kallsyms on a thread of its own for report; annotate (o.sample)
	 * resolves no kernel address and reads on one thread. */
	unsigned flags = (r->o.srcline || (r->o.keys & K_SRCLINE) ? HWC_SYM_SRCLINE : 0) |
			 (r->o.inl ? HWC_SYM_INLINE : 0) | (r->o.no_demangle ? 0 : HWC_SYM_DEMANGLE) |
			 (use_two_threads() && !r->o.sample ? HWC_SYM_THREAD : 0);
	if ((err = hwc_symbols_new(&r->syms, flags)) ||
	    (err = hwc_symbols_set_root(r->syms, r->o.root))) {
		fprintf(stderr, "%s: %s: %s\n", prog, r->o.input, hwc_errdetail());
		return -1;
	}
	if (pick_event(r) || check_selection(r) || read_samples(r))
		return -1;
	rp_settle(r);
	r->have_callchains = r->attr && (r->attr->attr.sample_type & PERF_SAMPLE_CALLCHAIN ||
					 r->attr->attr.sample_type & PERF_SAMPLE_STACK_USER);
	if (!r->have_callchains)
		r->o.no_children = true;
	/* perf report sorts and limits by Children when it shows them: a
	 * caller like main, all children and no self, must not vanish. */
	if (r->o.order == O_DEFAULT)
		r->o.order = r->o.no_children ? O_SELF : O_CHILDREN;
	if (!r->o.quiet) {
		hwc_symbols_problems(r->syms, rp_warn_problem, (void *)prog);
		if (r->unwind_failures)
			fprintf(stderr, "%s: warning: %" PRIu64 " samples could not be unwound; "
					"they keep their sampled address only\n",
				prog, r->unwind_failures);
	}
	return 0;
}
