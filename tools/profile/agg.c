/* The aggregation hwc report, hwc top and pmcstat share: samples resolved
 * into frames, then summed into functions, rows (the --sort keys of the
 * leaf), caller/callee edges, the two call trees and per-thread totals.
 * Each distinct address resolves once (libhwc caches); each sample costs a
 * few hash look-ups per frame. */
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 512

/* ------------------------------------------------------------ interning */

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
		fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
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

static void free_tree(struct rp_node *n)
{
	for (struct rp_node *c = n->child, *next; c; c = next) {
		next = c->sibling;
		free_tree(c);
		free(c);
	}
	n->child = NULL;
}

static uint64_t thread_hash(const struct rp_thread *t)
{
	return (uint64_t)t->tid * 0x9e3779b97f4a7c15ULL;
}

struct rp_thread *rp_thread_get(struct rp_report *r, uint32_t pid, uint32_t tid)
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

void rp_add_sample(struct rp_report *r, const struct hwc_sample *s, const struct perf_event_attr *a)
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
	struct rp_thread *t = rp_thread_get(r, s->pid, s->tid);
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

void rp_clear(struct rp_report *r)
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
	free_tree(&r->root);
	free_tree(&r->croot);
	r->fbuckets = NULL, r->rbuckets = NULL, r->ebuckets = NULL, r->tbuckets = NULL;
	r->nbuckets = NULL, r->urecs = NULL;
	r->fcap = r->rcap = r->ecap = r->tcap = r->ncap = 0;
	r->nfuncs = r->nrows = r->nedges = r->nthreads = r->nnodes = 0;
	r->nurecs = r->capurecs = 0;
	r->samples = r->period = r->lost = r->skipped = r->unwind_failures = 0;
	r->root = (struct rp_node){0};
	r->croot = (struct rp_node){0};
}
