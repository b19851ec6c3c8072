/* The profile a recording holds: read a perf.data file (hwc's or perf's),
 * symbolize, and aggregate the samples of one event (or those a caller
 * selects) once: functions, rows, call edges, both call trees, threads and
 * user records.  hwc report prints and exports it; pmcstat -G and -T show
 * it FreeBSD's way.  Each distinct address resolves once (libhwc caches);
 * each sample costs a few hash look-ups per frame. */
#include "profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 512

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


static uint64_t hash_ptr(const void *p)
{
	uint64_t k = (uint64_t)(uintptr_t)p;
	k ^= k >> 29;
	k *= 0xbf58476d1ce4e5b9ULL;
	return k ^ (k >> 32);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return p;
}

/* Grow a chained hash table (array of list heads) when it gets full. */
#define GROW(buckets, cap, len, type, hashfn)                                            \
	do {                                                                             \
		if ((len) + 1 > (cap)) {                                                 \
			size_t ncap_ = (cap) ? (cap) * 4 : 1024;                         \
			type **nb_ = xcalloc(ncap_, sizeof(*nb_));                       \
			for (size_t i_ = 0; i_ < (cap); i_++)                            \
				for (type *e_ = (buckets)[i_], *n_; e_; e_ = n_) {       \
					n_ = e_->next;                                   \
					size_t h_ = hashfn(e_) & (ncap_ - 1);            \
					e_->next = nb_[h_];                              \
					nb_[h_] = e_;                                    \
				}                                                        \
			free(buckets);                                                   \
			(buckets) = nb_;                                                 \
			(cap) = ncap_;                                                   \
		}                                                                        \
	} while (0)

static uint64_t func_hash3(const struct hwc_symbol *sym, const char *file, unsigned line)
{
	return hash_ptr(sym) ^ hash_ptr(file) * 31 ^ line * 0x9e3779b97f4a7c15ULL;
}
static uint64_t func_hash(const struct rp_func *f)
{
	return func_hash3(f->sym, f->file, f->line);
}

static struct rp_func *intern_func(struct rp_report *r, const struct hwc_location *l)
{
	const char *file = r->o.srcline ? l->file : NULL;
	unsigned line = r->o.srcline ? l->line : 0;
	if (r->fcap) {
		for (struct rp_func *f = r->fbuckets[func_hash3(l->sym, file, line) & (r->fcap - 1)]; f;
		     f = f->next)
			if (f->sym == l->sym && f->file == file && f->line == line)
				return f;
	}
	GROW(r->fbuckets, r->fcap, r->nfuncs, struct rp_func, func_hash);
	struct rp_func *f = xcalloc(1, sizeof(*f));
	f->sym = l->sym;
	f->file = file;
	f->line = line;
	f->id = (unsigned)++r->nfuncs;
	size_t h = func_hash(f) & (r->fcap - 1);
	f->next = r->fbuckets[h];
	r->fbuckets[h] = f;
	return f;
}

static uint64_t row_hash(const struct rp_row *w)
{
	return hash_ptr(w->key_func) ^ hash_ptr(w->key_dso) * 5 ^ hash_ptr(w->comm) * 7 ^
	       ((uint64_t)w->pid << 32 | w->tid) * 31;
}

/* The row of FUNC for a sample of (COMM, PID, TID) under the --sort keys. */
static struct rp_row *intern_row(struct rp_report *r, struct rp_func *func, const char *comm,
				 uint32_t pid, uint32_t tid)
{
	unsigned k = r->o.keys;
	struct rp_row key = {
		.func = func,
		.key_func = k & K_SYM ? func : NULL,
		.key_dso = k & K_DSO ? func->sym->dso : NULL,
		.comm = k & K_COMM ? comm : NULL,
		.pid = k & (K_PID | K_TID) ? pid : 0,
		.tid = k & K_TID ? tid : 0,
	};
	if (r->rcap)
		for (struct rp_row *w = r->rbuckets[row_hash(&key) & (r->rcap - 1)]; w; w = w->next)
			if (w->key_func == key.key_func && w->key_dso == key.key_dso &&
			    w->comm == key.comm && w->pid == key.pid && w->tid == key.tid)
				return w;
	GROW(r->rbuckets, r->rcap, r->nrows, struct rp_row, row_hash);
	struct rp_row *w = xcalloc(1, sizeof(*w));
	*w = key;
	size_t h = row_hash(w) & (r->rcap - 1);
	w->next = r->rbuckets[h];
	r->rbuckets[h] = w;
	r->nrows++;
	return w;
}

static uint64_t edge_hash(const struct rp_edge *e)
{
	return hash_ptr(e->caller) * 3 ^ hash_ptr(e->callee);
}

static struct rp_edge *intern_edge(struct rp_report *r, struct rp_func *caller, struct rp_func *callee)
{
	struct rp_edge key = {.caller = caller, .callee = callee};
	if (r->ecap)
		for (struct rp_edge *e = r->ebuckets[edge_hash(&key) & (r->ecap - 1)]; e; e = e->next)
			if (e->caller == caller && e->callee == callee)
				return e;
	GROW(r->ebuckets, r->ecap, r->nedges, struct rp_edge, edge_hash);
	struct rp_edge *e = xcalloc(1, sizeof(*e));
	*e = key;
	size_t h = edge_hash(e) & (r->ecap - 1);
	e->next = r->ebuckets[h];
	r->ebuckets[h] = e;
	r->nedges++;
	return e;
}

static uint64_t node_hash(const struct rp_node *n)
{
	return hash_ptr(n->parent) * 3 ^ hash_ptr(n->func);
}

/* The child of PARENT for F, found through one hash of all tree nodes
 * (a sibling list can hold thousands of leaf functions). */
static struct rp_node *child_of(struct rp_report *r, struct rp_node *parent, struct rp_func *f)
{
	struct rp_node key = {.func = f, .parent = parent};
	if (r->ncap)
		for (struct rp_node *c = r->nbuckets[node_hash(&key) & (r->ncap - 1)]; c; c = c->next)
			if (c->parent == parent && c->func == f)
				return c;
	GROW(r->nbuckets, r->ncap, r->nnodes, struct rp_node, node_hash);
	struct rp_node *c = xcalloc(1, sizeof(*c));
	c->func = f;
	c->parent = parent;
	c->sibling = parent->child;
	parent->child = c;
	size_t h = node_hash(c) & (r->ncap - 1);
	c->next = r->nbuckets[h];
	r->nbuckets[h] = c;
	r->nnodes++;
	return c;
}

void rp_free_tree(struct rp_node *n)
{
	for (struct rp_node *c = n->child, *next; c; c = next) {
		next = c->sibling;
		rp_free_tree(c);
		free(c);
	}
	n->child = NULL;
}

static uint64_t thread_hash(const struct rp_thread *t)
{
	return (uint64_t)t->tid * 0x9e3779b97f4a7c15ULL;
}

static struct rp_thread *get_thread(struct rp_report *r, uint32_t pid, uint32_t tid)
{
	struct rp_thread key = {.tid = tid};
	if (r->tcap)
		for (struct rp_thread *t = r->tbuckets[thread_hash(&key) & (r->tcap - 1)]; t; t = t->next)
			if (t->tid == tid)
				return t;
	GROW(r->tbuckets, r->tcap, r->nthreads, struct rp_thread, thread_hash);
	struct rp_thread *t = xcalloc(1, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	size_t h = thread_hash(t) & (r->tcap - 1);
	t->next = r->tbuckets[h];
	r->tbuckets[h] = t;
	r->nthreads++;
	return t;
}

/* ------------------------------------------------------------ selection */

static bool in_list(const char *list, const char *s)
{
	if (!list)
		return true;
	size_t n = strlen(s);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, s, n) == 0)
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

bool rp_pid_selected(const char *list, uint32_t pid, uint32_t tid)
{
	if (!list)
		return true;
	char a[16], b[16];
	snprintf(a, sizeof(a), "%u", pid);
	snprintf(b, sizeof(b), "%u", tid);
	return in_list(list, a) || in_list(list, b);
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
	struct rp_thread *t = get_thread(r, pid, tid);
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
	r->urecs[r->nurecs++] = (struct rp_urec){s->time, offset, s->pid, s->tid, s->raw_size, s->raw};
}

/* The sample's frames, leaf first, resolved and interned. */
static size_t sample_frames(struct rp_report *r, const struct hwc_sample *s,
			    const struct perf_event_attr *a, struct rp_func **out)
{
	uint64_t ips[MAX_FRAMES];
	bool kern[MAX_FRAMES];
	size_t n = 0;
	bool kernel = (s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	bool dwarf = (s->sample_type & PERF_SAMPLE_REGS_USER) && (s->sample_type & PERF_SAMPLE_STACK_USER) &&
		     s->user_regs_abi;
	if (s->sample_type & PERF_SAMPLE_CALLCHAIN) {
		for (uint64_t i = 0; i < s->nr_callchain && n < MAX_FRAMES; i++) {
			uint64_t ip = s->callchain[i];
			if (ip >= PERF_CONTEXT_MAX) {
				kernel = ip == PERF_CONTEXT_KERNEL || ip == PERF_CONTEXT_GUEST_KERNEL;
				continue;
			}
			if (dwarf && !kernel)
				break; /* the user part comes from unwinding below */
			ips[n] = ip;
			kern[n++] = kernel;
		}
	} else if (!dwarf) {
		ips[n] = s->ip;
		kern[n++] = kernel;
	}
	if (dwarf) {
		int m = hwc_symbols_unwind(r->syms, s, a, ips + n, MAX_FRAMES - n);
		if (m < 0) {
			r->unwind_failures++;
		} else {
			for (int i = 0; i < m; i++)
				kern[n + (size_t)i] = false;
			n += (size_t)m;
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < n && k < MAX_FRAMES; i++) {
		const struct hwc_location *l = hwc_symbols_resolve(r->syms, s->pid, s->time, ips[i], kern[i]);
		for (; l && k < MAX_FRAMES; l = r->o.inl ? l->inlined_into : NULL)
			out[k++] = intern_func(r, l);
	}
	return k;
}

static void add_sample(struct rp_report *r, const struct hwc_sample *s, const struct perf_event_attr *a)
{
	struct rp_func *chain[MAX_FRAMES];
	size_t n = sample_frames(r, s, a, chain);
	if (n == 0)
		return;
	const char *comm = hwc_symbols_comm(r->syms, s->tid, s->time);
	if (!in_list(r->o.comms, comm) || !rp_pid_selected(r->o.pids, s->pid, s->tid) ||
	    !in_list(r->o.dsos, rp_dso_base(chain[0]->sym->dso)) ||
	    !in_list(r->o.symbols, chain[0]->sym->name)) {
		r->skipped++;
		return;
	}
	uint64_t period = s->sample_type & PERF_SAMPLE_PERIOD ? s->period : a->sample_period;
	if (!(s->sample_type & PERF_SAMPLE_PERIOD) && a->freq)
		period = 1;
	r->samples++;
	r->period += period;
	struct rp_thread *t = get_thread(r, s->pid, s->tid);
	t->samples++;
	t->period += period;
	unsigned stamp = ++r->stamp;
	/* Flat: self to the leaf, children once per distinct function/row. */
	struct rp_row *leaf = intern_row(r, chain[0], comm, s->pid, s->tid);
	leaf->self += period;
	leaf->samples++;
	chain[0]->self += period;
	chain[0]->self_samples++;
	for (size_t i = 0; i < n; i++) {
		struct rp_func *f = chain[i];
		if (f->seen != stamp) {
			f->seen = stamp;
			f->total += period;
			f->total_samples++;
		}
		struct rp_row *w = i ? intern_row(r, f, comm, s->pid, s->tid) : leaf;
		if (w->seen != stamp) {
			w->seen = stamp;
			w->children += period;
		}
		if (i + 1 < n) {
			struct rp_edge *e = intern_edge(r, chain[i + 1], f);
			if (e->seen != stamp) {
				e->seen = stamp;
				e->period += period;
				e->samples++;
			}
		}
	}
	/* Trees: callers first, and callees first. */
	struct rp_node *node = &r->root;
	node->total += period;
	node->total_samples++;
	for (size_t i = n; i-- > 0;) {
		node = child_of(r, node, chain[i]);
		node->total += period;
		node->total_samples++;
	}
	node->self += period;
	node->self_samples++;
	node = &r->croot;
	node->total += period;
	node->total_samples++;
	for (size_t i = 0; i < n; i++) {
		node = child_of(r, node, chain[i]);
		node->total += period;
		node->total_samples++;
	}
	node->self += period;
	node->self_samples++;
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
				fprintf(stderr, "%s: %s: perf.data offset %" PRIu64 ": %s\n", prog,
					r->o.input, rec.offset, hwc_errdetail());
				return -1;
			}
			const struct perf_event_attr *a = &rec.attr->attr;
			if (is_switch_leader(a)) {
				struct rp_thread *t = get_thread(r, s.pid, s.tid);
				t->switch_samples++;
				switch_values(r, t, a, &s);
			} else if (is_user_record_event(a) && s.raw) {
				add_urec(r, &s, rec.offset);
			} else if (wanted(r, &rec)) {
				add_sample(r, &s, a);
			}
			break;
		}
		case PERF_RECORD_SWITCH:
		case PERF_RECORD_SWITCH_CPU_WIDE: {
			struct hwc_sample_id id;
			if (rec.attr && !hwc_sample_id_parse(h, &rec.attr->attr, &id) &&
			    (h->misc & PERF_RECORD_MISC_SWITCH_OUT))
				get_thread(r, id.pid, id.tid)->switch_records++;
			break;
		}
		case PERF_RECORD_EXIT:
			if (h->size >= 32) {
				uint32_t pid, tid;
				uint64_t time;
				memcpy(&pid, (const uint8_t *)h + 8, 4);
				memcpy(&tid, (const uint8_t *)h + 16, 4);
				memcpy(&time, (const uint8_t *)h + 24, 8);
				struct rp_thread *t = get_thread(r, pid, tid);
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
		fprintf(stderr, "%s: %s\n", prog, hwc_errdetail());
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

static void warn_problem(const char *dso, const char *why, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s: warning: no symbols for %s: %s; its addresses show as "
			"[unknown] with their offsets\n",
		prog, dso, why);
}

void rp_free(struct rp_report *r)
{
	for (size_t i = 0; i < r->fcap; i++)
		for (struct rp_func *f = r->fbuckets[i], *n; f; f = n)
			n = f->next, free(f);
	for (size_t i = 0; i < r->rcap; i++)
		for (struct rp_row *w = r->rbuckets[i], *n; w; w = n)
			n = w->next, free(w);
	for (size_t i = 0; i < r->ecap; i++)
		for (struct rp_edge *e = r->ebuckets[i], *n; e; e = n)
			n = e->next, free(e);
	for (size_t i = 0; i < r->tcap; i++)
		for (struct rp_thread *t = r->tbuckets[i], *n; t; t = n)
			n = t->next, free(t->last), free(t);
	free(r->fbuckets);
	free(r->rbuckets);
	free(r->ebuckets);
	free(r->tbuckets);
	free(r->nbuckets);
	free(r->urecs);
	rp_free_tree(&r->root);
	rp_free_tree(&r->croot);
	hwc_symbols_free(r->syms);
	hwc_perfdata_close(r->file);
}


int rp_load(struct rp_report *r)
{
	if (r->o.prog)
		prog = r->o.prog;
	int err = hwc_perfdata_open(&r->file, r->o.input);
	if (err) {
		fprintf(stderr, "%s: %s\n", prog, hwc_errdetail());
		return -1;
	}
	unsigned flags = (r->o.srcline ? HWC_SYM_SRCLINE : 0) | (r->o.inl ? HWC_SYM_INLINE : 0);
	if ((err = hwc_symbols_new(&r->syms, flags)) || (err = hwc_symbols_load(r->syms, r->file))) {
		fprintf(stderr, "%s: %s: %s\n", prog, r->o.input, hwc_errdetail());
		return -1;
	}
	if (pick_event(r) || read_samples(r))
		return -1;
	r->have_callchains = r->attr && (r->attr->attr.sample_type & PERF_SAMPLE_CALLCHAIN ||
					 r->attr->attr.sample_type & PERF_SAMPLE_STACK_USER);
	if (!r->have_callchains)
		r->o.no_children = true;
	if (!r->o.quiet) {
		hwc_symbols_problems(r->syms, warn_problem, NULL);
		if (r->unwind_failures)
			fprintf(stderr, "%s: warning: %" PRIu64 " samples could not be unwound; "
					"they keep their sampled address only\n",
				prog, r->unwind_failures);
	}
	return 0;
}
