/* The aggregation hwc report, hwc top and pmcstat share: samples resolved
 * into frames, then summed into functions, rows (the --sort keys of the
 * leaf), caller/callee edges, the two call trees and per-thread totals.
 * Each distinct address resolves once (libhwc caches); each sample costs a
 * few hash look-ups per frame. */
#include "profile.h"

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

static uint64_t func_hash(const void *entry)
{
	const struct rp_func *f = entry;
	return hash_ptr(f->sym) ^ hash_ptr(f->file) * 31 ^ f->line * 0x9e3779b97f4a7c15ULL ^
	       f->addr * 0xbf58476d1ce4e5b9ULL;
}

static bool same_func(const void *entry, const void *key)
{
	const struct rp_func *f = entry, *k = key;
	return f->sym == k->sym && f->file == k->file && f->line == k->line &&
	       f->at_addr == k->at_addr && f->addr == k->addr;
}

/* The frame of L; AT_ADDR: at L's address, not the whole function. */
static struct rp_func *intern_func(struct rp_report *r, const struct hwc_location *l, bool at_addr)
{
	struct rp_func key = {
		.sym = l->sym,
		.file = r->o.srcline ? l->file : NULL,
		.line = r->o.srcline ? l->line : 0,
		.at_addr = at_addr,
		.addr = at_addr ? l->dso_offset : 0,
	};
	uint64_t h = func_hash(&key);
	struct rp_func *f = rp_table_find(&r->funcs, h, same_func, &key);
	if (f)
		return f;
	f = rp_table_new(&r->funcs, sizeof(*f), h, func_hash);
	f->sym = key.sym;
	f->file = key.file;
	f->line = key.line;
	f->at_addr = key.at_addr;
	f->addr = key.addr;
	f->id = (unsigned)r->funcs.len;
	return f;
}

static uint64_t row_hash(const void *entry)
{
	const struct rp_row *w = entry;
	return hash_ptr(w->key_func) ^ hash_ptr(w->key_dso) * 5 ^ hash_ptr(w->comm) * 7 ^
	       ((uint64_t)w->pid << 32 | w->tid) * 31;
}

static bool same_row(const void *entry, const void *key)
{
	const struct rp_row *w = entry, *k = key;
	return w->key_func == k->key_func && w->key_dso == k->key_dso && w->comm == k->comm &&
	       w->pid == k->pid && w->tid == k->tid;
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
	uint64_t h = row_hash(&key);
	struct rp_row *w = rp_table_find(&r->rows, h, same_row, &key);
	if (w)
		return w;
	w = rp_table_new(&r->rows, sizeof(*w), h, row_hash);
	key.link = w->link;
	*w = key;
	return w;
}

static uint64_t pair_hash(const void *a, const void *b)
{
	return hash_ptr(a) * 3 ^ hash_ptr(b);
}

static uint64_t edge_hash(const void *entry)
{
	const struct rp_edge *e = entry;
	return pair_hash(e->caller, e->callee);
}

static bool same_edge(const void *entry, const void *key)
{
	const struct rp_edge *e = entry, *k = key;
	return e->caller == k->caller && e->callee == k->callee;
}

static struct rp_edge *intern_edge(struct rp_report *r, struct rp_func *caller, struct rp_func *callee)
{
	struct rp_edge key = {.caller = caller, .callee = callee};
	uint64_t h = edge_hash(&key);
	struct rp_edge *e = rp_table_find(&r->edges, h, same_edge, &key);
	if (e)
		return e;
	e = rp_table_new(&r->edges, sizeof(*e), h, edge_hash);
	e->caller = caller;
	e->callee = callee;
	return e;
}

static uint64_t node_hash(const void *entry)
{
	const struct rp_node *n = entry;
	return pair_hash(n->parent, n->func);
}

static bool same_node(const void *entry, const void *key)
{
	const struct rp_node *n = entry, *k = key;
	return n->parent == k->parent && n->func == k->func;
}

/* The child of PARENT for F, found through one hash of all tree nodes
 * (a sibling list can hold thousands of leaf functions). */
static struct rp_node *child_of(struct rp_report *r, struct rp_node *parent, struct rp_func *f)
{
	struct rp_node key = {.func = f, .parent = parent};
	uint64_t h = node_hash(&key);
	struct rp_node *c = rp_table_find(&r->nodes, h, same_node, &key);
	if (c)
		return c;
	c = rp_table_new(&r->nodes, sizeof(*c), h, node_hash);
	c->func = f;
	c->parent = parent;
	c->sibling = parent->child;
	parent->child = c;
	return c;
}

static uint64_t thread_hash(const void *entry)
{
	return (uint64_t)((const struct rp_thread *)entry)->tid * 0x9e3779b97f4a7c15ULL;
}

static bool same_thread(const void *entry, const void *key)
{
	return ((const struct rp_thread *)entry)->tid == ((const struct rp_thread *)key)->tid;
}

struct rp_thread *rp_thread_get(struct rp_report *r, uint32_t pid, uint32_t tid)
{
	struct rp_thread key = {.tid = tid};
	uint64_t h = thread_hash(&key);
	struct rp_thread *t = rp_table_find(&r->threads, h, same_thread, &key);
	if (t)
		return t;
	t = rp_table_new(&r->threads, sizeof(*t), h, thread_hash);
	t->pid = pid;
	t->tid = tid;
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

size_t rp_sample_ips(hwc_symbols *syms, const struct hwc_sample *s, const struct perf_event_attr *a,
		     uint64_t *ips, bool *kern, size_t max, bool *unwind_failed)
{
	size_t n = 0;
	bool kernel = (s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	bool dwarf = (s->sample_type & PERF_SAMPLE_REGS_USER) && (s->sample_type & PERF_SAMPLE_STACK_USER) &&
		     s->user_regs_abi;
	*unwind_failed = false;
	if (s->sample_type & PERF_SAMPLE_CALLCHAIN) {
		for (uint64_t i = 0; i < s->nr_callchain && n < max; i++) {
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
	} else if (!dwarf && max) {
		ips[n] = s->ip;
		kern[n++] = kernel;
	}
	if (dwarf) {
		int m = hwc_symbols_unwind(syms, s, a, ips + n, max - n);
		if (m < 0) {
			*unwind_failed = true;
		} else {
			for (int i = 0; i < m; i++)
				kern[n + (size_t)i] = false;
			n += (size_t)m;
		}
	}
	return n;
}

static size_t sample_frames(struct rp_report *r, const struct hwc_sample *s,
			    const struct perf_event_attr *a, struct rp_func **out)
{
	uint64_t ips[MAX_FRAMES];
	bool kern[MAX_FRAMES], failed;
	size_t n = rp_sample_ips(r->syms, s, a, ips, kern, MAX_FRAMES, &failed);
	r->unwind_failures += failed;
	size_t k = 0;
	for (size_t i = 0; i < n && k < MAX_FRAMES; i++) {
		const struct hwc_location *l = hwc_symbols_resolve(r->syms, s->pid, s->time, ips[i], kern[i]);
		for (; l && k < MAX_FRAMES; l = r->o.inl ? l->inlined_into : NULL) {
			out[k] = intern_func(r, l, r->o.leaf_addr && k == 0);
			k++;
		}
	}
	return k;
}

/* Flat: self to the leaf's row and function; children once per sample to
 * each distinct function and row of the chain. */
static void add_flat(struct rp_report *r, struct rp_func **chain, size_t n, const char *comm,
		     const struct hwc_sample *s, uint64_t period)
{
	unsigned stamp = r->stamp;
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
	}
}

/* Edges (gprof): each distinct caller -> callee pair once per sample. */
static void add_edges(struct rp_report *r, struct rp_func **chain, size_t n, uint64_t period)
{
	for (size_t i = 0; i + 1 < n; i++) {
		struct rp_edge *e = intern_edge(r, chain[i + 1], chain[i]);
		if (e->seen != r->stamp) {
			e->seen = r->stamp;
			e->period += period;
			e->samples++;
		}
	}
}

/* One path from ROOT through the N frames of CHAIN, each STEP apart
 * starting at FIRST: the sample's period to every node on it, its self
 * to the last. */
static void add_path(struct rp_report *r, struct rp_node *root, struct rp_func **first,
		     ptrdiff_t step, size_t n, uint64_t period)
{
	struct rp_node *node = root;
	node->total += period;
	node->total_samples++;
	for (size_t i = 0; i < n; i++) {
		node = child_of(r, node, first[(ptrdiff_t)i * step]);
		node->total += period;
		node->total_samples++;
	}
	node->self += period;
	node->self_samples++;
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
	++r->stamp;
	add_flat(r, chain, n, comm, s, period);
	add_edges(r, chain, n, period);
	add_path(r, &r->root, chain + n - 1, -1, n, period);  /* callers first */
	add_path(r, &r->croot, chain, 1, n, period);          /* callees first */
}

static void free_thread(void *entry)
{
	free(((struct rp_thread *)entry)->last);
}

void rp_clear(struct rp_report *r)
{
	/* The nodes table owns both trees' nodes. */
	rp_table_free(&r->funcs, NULL);
	rp_table_free(&r->rows, NULL);
	rp_table_free(&r->edges, NULL);
	rp_table_free(&r->threads, free_thread);
	rp_table_free(&r->nodes, NULL);
	free(r->urecs);
	r->urecs = NULL;
	r->nurecs = r->capurecs = 0;
	r->samples = r->period = r->lost = r->skipped = r->unwind_failures = 0;
	r->root = (struct rp_node){0};
	r->croot = (struct rp_node){0};
}
