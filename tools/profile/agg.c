/* The aggregation hwc report, hwc top and pmcstat share: samples resolved
 * into frames, then summed into functions, rows (the --sort keys of the
 * leaf), caller/callee edges, the two call trees and per-thread totals.
 * Each distinct address resolves once (libhwc caches); each sample costs a
 * few hash look-ups per frame. */
#include "profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
	/* Most frames are at a location seen just before: the cache first. */
	struct rp_recent *c = NULL;
	if (!at_addr) {
		if (!r->recent && !(r->recent = calloc(RP_NRECENT, sizeof(*r->recent)))) {
			fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
			exit(1);
		}
		c = &r->recent[hash_ptr(l) & (RP_NRECENT - 1)];
		if (c->loc == l)
			return c->func;
	}
	struct rp_func key = {
		.sym = l->sym,
		.file = r->o.srcline ? l->file : NULL,
		.line = r->o.srcline ? l->line : 0,
		.at_addr = at_addr,
		.addr = at_addr ? l->dso_offset : 0,
	};
	uint64_t h = func_hash(&key);
	struct rp_func *f = rp_table_find(&r->funcs, h, same_func, &key);
	if (f) {
		if (c)
			*c = (struct rp_recent){l, f};
		return f;
	}
	f = rp_table_new(&r->funcs, sizeof(*f), h, func_hash);
	f->sym = key.sym;
	f->file = key.file;
	f->line = key.line;
	f->at_addr = key.at_addr;
	f->addr = key.addr;
	f->id = (unsigned)r->funcs.len;
	if (c)
		*c = (struct rp_recent){l, f};
	return f;
}

static uint64_t row_hash(const void *entry)
{
	const struct rp_row *w = entry;
	return hash_ptr(w->key_func) ^ hash_ptr(w->key_dso) * 5 ^ hash_ptr(w->comm) * 7 ^
	       ((uint64_t)w->pid << 32 | w->tid) * 31 ^ (uint64_t)w->cpu * 0x9e3779b97f4a7c15ULL ^
	       hash_ptr(w->parent) * 11 ^ hash_ptr(w->src_file) * 13 ^ hash_ptr(w->src_sym) * 17 ^
	       (w->src_line + w->src_addr) * 0xbf58476d1ce4e5b9ULL;
}

static bool same_row(const void *entry, const void *key)
{
	const struct rp_row *w = entry, *k = key;
	return w->key_func == k->key_func && w->key_dso == k->key_dso && w->comm == k->comm &&
	       w->pid == k->pid && w->tid == k->tid && w->cpu == k->cpu && w->parent == k->parent &&
	       w->src_file == k->src_file && w->src_line == k->src_line && w->src_sym == k->src_sym &&
	       w->src_addr == k->src_addr;
}

/* What a sample's rows share: its thread, CPU and parent (under the keys). */
struct sample_key {
	const char *comm;
	uint32_t pid, tid, cpu;
	struct rp_func *parent;
};

/* The row of FUNC, at location L, for a sample of K under the --sort keys. */
static struct rp_row *intern_row(struct rp_report *r, struct rp_func *func,
				 const struct hwc_location *l, const struct sample_key *sk)
{
	unsigned k = r->o.keys;
	struct rp_row key = {
		.func = func,
		.key_func = k & K_SYM ? func : NULL,
		.key_dso = k & K_DSO ? func->sym->dso : NULL,
		.comm = k & K_COMM ? sk->comm : NULL,
		.pid = k & (K_PID | K_TID) ? sk->pid : 0,
		.tid = k & K_TID ? sk->tid : 0,
		.cpu = k & K_CPU ? sk->cpu : 0,
		.parent = k & K_PARENT ? sk->parent : NULL,
	};
	if (k & K_SRCLINE) {
		key.src_file = l->file;
		key.src_line = l->file ? l->line : 0;
		/* No line: perf's symbol+offset (or dso[address]). */
		key.src_sym = l->file ? NULL : l->sym;
		key.src_addr = l->file ? 0 : l->dso_offset;
	}
	uint64_t h = row_hash(&key);
	struct rp_row *w = rp_table_find(&r->rows, h, same_row, &key);
	if (w)
		return w;
	w = rp_table_new(&r->rows, sizeof(*w), h, row_hash);
	key.link = w->link;
	*w = key;
	return w;
}

void rp_row_srcline(const struct rp_row *w, char *buf, size_t size)
{
	if (w->src_file) {
		const char *slash = strrchr(w->src_file, '/');
		snprintf(buf, size, "%s:%u", slash ? slash + 1 : w->src_file, w->src_line);
	} else if (w->src_sym && w->src_sym->known) {
		snprintf(buf, size, "%s+%" PRIu64, w->src_sym->name, w->src_addr - w->src_sym->start);
	} else {
		snprintf(buf, size, "%s[%" PRIx64 "]", w->src_sym ? rp_dso_base(w->src_sym->dso) : "?",
			 w->src_addr);
	}
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
	/* Samples come in runs of one thread: the last one first. */
	if (r->last_thread && r->last_thread->tid == tid)
		return r->last_thread;
	struct rp_thread key = {.tid = tid};
	uint64_t h = thread_hash(&key);
	struct rp_thread *t = rp_table_find(&r->threads, h, same_thread, &key);
	if (!t) {
		t = rp_table_new(&r->threads, sizeof(*t), h, thread_hash);
		t->pid = pid;
		t->tid = tid;
	}
	r->last_thread = t;
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

bool rp_cpu_selected(const char *list, uint32_t cpu, bool check)
{
	if (!list)
		return true;
	const char *p = list;
	for (;;) {
		char *end;
		if (*p < '0' || *p > '9')
			return false;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return false;
			hi = strtoul(p, &end, 10);
		}
		if (lo > hi || hi > UINT32_MAX || (*end && *end != ','))
			return false;
		if (!check && cpu >= lo && cpu <= hi)
			return true;
		if (!*end)
			return check;
		p = end + 1;
	}
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

size_t rp_sample_locations(struct rp_report *r, const struct hwc_sample *s,
			   const struct perf_event_attr *a, const struct hwc_location **locs,
			   bool *unwind_failed)
{
	uint64_t ips[RP_MAX_FRAMES];
	bool kern[RP_MAX_FRAMES];
	size_t max = r->o.max_stack && r->o.max_stack < RP_MAX_FRAMES ? r->o.max_stack : RP_MAX_FRAMES;
	if (r->o.own_frame_only)
		max = 1;
	size_t n = rp_sample_ips(r->syms, s, a, ips, kern, max, unwind_failed);
	size_t k = 0;
	for (size_t i = 0; i < n && k < RP_MAX_FRAMES; i++) {
		const struct hwc_location *l = hwc_symbols_resolve(r->syms, s->pid, s->time, ips[i], kern[i]);
		for (; l && k < RP_MAX_FRAMES; l = r->o.inl ? l->inlined_into : NULL)
			locs[k++] = l;
	}
	return k;
}

/* Flat: self to the leaf's row and function; children once per sample to
 * each distinct function and row of the chain.  SAMPLES samples of the same
 * chain, PERIOD their sum. */
static void add_flat(struct rp_report *r, struct rp_func **chain, const struct hwc_location **locs,
		     size_t n, const struct sample_key *sk, uint64_t period, uint64_t samples)
{
	unsigned stamp = r->stamp;
	struct rp_row *leaf = intern_row(r, chain[0], locs[0], sk);
	leaf->self += period;
	leaf->samples += samples;
	chain[0]->self += period;
	chain[0]->self_samples += samples;
	for (size_t i = 0; i < n; i++) {
		struct rp_func *f = chain[i];
		if (f->seen != stamp) {
			f->seen = stamp;
			f->total += period;
			f->total_samples += samples;
		}
		struct rp_row *w = i ? intern_row(r, f, locs[i], sk) : leaf;
		if (w->seen != stamp) {
			w->seen = stamp;
			w->children += period;
		}
	}
}

/* Edges (gprof): each distinct caller -> callee pair once per sample. */
static void add_edges(struct rp_report *r, struct rp_func **chain, size_t n, uint64_t period,
		      uint64_t samples)
{
	for (size_t i = 0; i + 1 < n; i++) {
		struct rp_edge *e = intern_edge(r, chain[i + 1], chain[i]);
		if (e->seen != r->stamp) {
			e->seen = r->stamp;
			e->period += period;
			e->samples += samples;
		}
	}
}

/* One path from ROOT through the N frames of CHAIN, each STEP apart
 * starting at FIRST: the samples' period to every node on it, their self
 * to the last. */
static void add_path(struct rp_report *r, struct rp_node *root, struct rp_func **first,
		     ptrdiff_t step, size_t n, uint64_t period, uint64_t samples)
{
	struct rp_node *node = root;
	node->total += period;
	node->total_samples += samples;
	for (size_t i = 0; i < n; i++) {
		node = child_of(r, node, first[(ptrdiff_t)i * step]);
		node->total += period;
		node->total_samples += samples;
	}
	node->self += period;
	node->self_samples += samples;
}

/* The parent key: the first frame, from the leaf, whose function the
 * parent pattern matches (NULL: perf's [other]). */
static struct rp_func *parent_of(struct rp_report *r, struct rp_func **chain, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (chain[i]->sym->known && regexec(&r->parent_re, chain[i]->sym->name, 0, NULL, 0) == 0)
			return chain[i];
	return NULL;
}

/* ------------------------------------------------------------ chains
 * Samples are summed per distinct chain of frames (with what the --sort
 * keys take of their thread and CPU) first: all the aggregates are sums
 * over samples, so a chain seen a million times is spread into rows, edges
 * and trees once, by rp_settle(). */

struct rp_chain {
	struct rp_link link; /* first */
	struct rp_chain *later; /* the next chain seen first after this one */
	struct sample_key sk;
	uint64_t period, samples;
	uint32_t n, words;
	/* N functions, then (with the srcline key) their N locations. */
	const void *frames[];
};

/* At most this many chains are held before they are spread: a recording
 * of many programs has tens of thousands, each of many frames (memory). */
#define MAX_CHAINS (1u << 13)

static uint64_t chain_hash_of(const struct sample_key *sk, const void *const *frames, size_t words)
{
	uint64_t h = hash_ptr(sk->comm) ^ ((uint64_t)sk->pid << 32 | sk->tid) * 31 ^
		     (uint64_t)sk->cpu * 0x9e3779b97f4a7c15ULL;
	for (size_t i = 0; i < words; i++)
		h = (h ^ hash_ptr(frames[i])) * 0x100000001b3ULL;
	return h;
}

static uint64_t chain_hash(const void *entry)
{
	const struct rp_chain *c = entry;
	return chain_hash_of(&c->sk, c->frames, c->words);
}

static bool same_chain(const void *entry, const void *key)
{
	const struct rp_chain *c = entry, *k = key;
	return c->words == k->words && c->n == k->n && c->sk.comm == k->sk.comm &&
	       c->sk.pid == k->sk.pid && c->sk.tid == k->sk.tid && c->sk.cpu == k->sk.cpu &&
	       memcmp(c->frames, k->frames, c->words * sizeof(*c->frames)) == 0;
}

bool rp_time_selected(const struct rp_report *r, const struct hwc_sample *s)
{
	return !r->o.time_set || (s->time >= r->o.time_start && s->time <= r->o.time_end);
}

static void settle_chains(struct rp_report *r);

uint64_t rp_sample_period(const struct hwc_sample *s, const struct perf_event_attr *a)
{
	if (s->sample_type & PERF_SAMPLE_PERIOD)
		return s->period;
	return a->freq ? 1 : a->sample_period;
}

void rp_add_sample(struct rp_report *r, const struct hwc_sample *s, const struct perf_event_attr *a)
{
	const struct hwc_location *locs[RP_MAX_FRAMES];
	if (!rp_time_selected(r, s)) {
		r->skipped++;
		return;
	}
	bool failed;
	size_t n = rp_sample_locations(r, s, a, locs, &failed);
	struct rp_samples g = {s->pid, s->tid, s->cpu, rp_sample_period(s, a), 1};
	rp_add_located(r, &g, locs, n, failed, n ? hwc_symbols_comm(r->syms, s->tid, s->time) : NULL);
}

void rp_add_located(struct rp_report *r, const struct rp_samples *g,
		    const struct hwc_location *const *locs, size_t n, bool unwind_failed,
		    const char *comm)
{
	struct rp_func *chain[RP_MAX_FRAMES];
	r->unwind_failures += unwind_failed ? g->samples : 0;
	if (n == 0)
		return;
	for (size_t k = 0; k < n; k++)
		chain[k] = intern_func(r, locs[k], r->o.leaf_addr && k == 0);
	if (!in_list(r->o.comms, comm) || !rp_pid_selected(r->o.pids, g->pid, g->tid) ||
	    !rp_pid_selected(r->o.tids, g->tid, g->tid) || !rp_cpu_selected(r->o.cpus, g->cpu, false) ||
	    (r->o.dsos && !in_list(r->o.dsos, rp_dso_base(chain[0]->sym->dso))) ||
	    !in_list(r->o.symbols, chain[0]->sym->name)) {
		r->skipped += g->samples;
		return;
	}
	uint64_t period = g->period;
	r->samples += g->samples;
	r->period += period;
	struct rp_thread *t = rp_thread_get(r, g->pid, g->tid);
	t->samples += g->samples;
	t->period += period;
	unsigned k = r->o.keys;
	struct sample_key sk = {k & K_COMM ? comm : NULL, k & (K_PID | K_TID) ? g->pid : 0,
				k & K_TID ? g->tid : 0, k & K_CPU ? g->cpu : 0, NULL};
	/* The key: a chain on the stack, its frames after it. */
	union {
		struct rp_chain c;
		char bytes[sizeof(struct rp_chain) + 2 * RP_MAX_FRAMES * sizeof(void *)];
	} key;
	key.c.sk = sk;
	key.c.period = key.c.samples = 0;
	key.c.n = (uint32_t)n;
	key.c.words = (uint32_t)(k & K_SRCLINE ? 2 * n : n);
	memcpy(key.c.frames, chain, n * sizeof(*chain));
	if (k & K_SRCLINE)
		memcpy(key.c.frames + n, locs, n * sizeof(*locs));
	size_t size = sizeof(key.c) + key.c.words * sizeof(*key.c.frames);
	uint64_t h = chain_hash(&key.c);
	struct rp_chain *c = rp_table_find(&r->chains, h, same_chain, &key.c);
	if (!c) {
		/* Bounded: a recording of ever new chains is spread as it goes. */
		if (r->chains.len >= MAX_CHAINS)
			settle_chains(r);
		c = rp_table_new(&r->chains, size, h, chain_hash);
		key.c.later = NULL;
		memcpy((char *)c + sizeof(c->link), (char *)&key.c + sizeof(c->link),
		       size - sizeof(c->link));
		*(r->chains_first ? &r->chains_last->later : &r->chains_first) = c;
		r->chains_last = c;
	}
	c->period += period;
	c->samples += g->samples;
}

static void settle_chain(struct rp_report *r, struct rp_chain *c)
{
	struct rp_func **chain = (struct rp_func **)(void *)c->frames;
	const struct hwc_location *flocs[RP_MAX_FRAMES];
	const struct hwc_location **locs = flocs;
	if (r->o.keys & K_SRCLINE)
		locs = (const struct hwc_location **)(void *)(c->frames + c->n);
	else
		for (size_t i = 0; i < c->n; i++)
			flocs[i] = NULL;
	size_t n = c->n;
	++r->stamp;
	c->sk.parent = r->have_parent_re ? parent_of(r, chain, n) : NULL;
	add_flat(r, chain, locs, n, &c->sk, c->period, c->samples);
	if (r->o.rows_only)
		return;
	add_edges(r, chain, n, c->period, c->samples);
	add_path(r, &r->root, chain + n - 1, -1, n, c->period, c->samples);  /* callers first */
	add_path(r, &r->croot, chain, 1, n, c->period, c->samples);          /* callees first */
}

static void settle_chains(struct rp_report *r)
{
	/* In the order the chains were first seen: the nodes and rows are
	 * then made in the order the samples made them (folded follows it). */
	for (struct rp_chain *c = r->chains_first; c; c = c->later)
		settle_chain(r, c);
	rp_table_free(&r->chains, NULL);
	r->chains_first = r->chains_last = NULL;
}

/* ------------------------------------------------------------ raw chains
 * A recording's samples repeat a few thousand call chains: rp_fold_sample()
 * sums them per raw chain (the addresses as recorded, with what the keys
 * and selection take of the sample and what resolving them depends on),
 * and each raw chain is resolved and summed as one by rp_settle().
 * In one pass (rp_opts.one_pass: the maps are fed as they come), which
 * span a sample is in is not known yet: the raw chains are cut where the
 * thread's records come in the file instead, and rp_fold_exact() checks
 * at the end that the samples of each are in one span. */

struct rp_raw {
	struct rp_link link; /* first */
	struct rp_raw *later; /* the next raw chain seen first after this one */
	const struct perf_event_attr *attr;
	uint64_t span;        /* hwc_symbols_span()'s start: its addresses and name
			       * (one pass: its process's and thread's generations) */
	uint64_t time, last;  /* its samples' first and last times */
	uint32_t pid, tid, cpu;
	bool kernel;          /* a kernel sample (its ip, or the chain's first part) */
	uint32_t n;
	uint64_t period, samples;
	uint64_t words[];     /* the call chain as recorded, else the ip */
};

/* At most this many are held before they are resolved (memory). */
#define MAX_RAWS (1u << 14)

static uint64_t raw_hash_of(const struct rp_raw *w)
{
	uint64_t h = ((uint64_t)w->pid << 32 | w->tid) * 0x9e3779b97f4a7c15ULL ^
		     (w->span + w->cpu + w->kernel) * 0xbf58476d1ce4e5b9ULL ^ hash_ptr(w->attr);
	for (uint32_t i = 0; i < w->n; i++)
		h = (h ^ w->words[i]) * 0x100000001b3ULL;
	return h ^ h >> 29;
}

static uint64_t raw_hash(const void *entry)
{
	return raw_hash_of(entry);
}

static bool same_raw(const void *entry, const void *key)
{
	const struct rp_raw *w = entry, *k = key;
	return w->n == k->n && w->pid == k->pid && w->tid == k->tid && w->span == k->span &&
	       w->cpu == k->cpu && w->kernel == k->kernel && w->attr == k->attr &&
	       memcmp(w->words, k->words, w->n * sizeof(*w->words)) == 0;
}

struct rp_generation {
	struct rp_link link; /* first */
	uint32_t id;         /* a process or thread */
	uint32_t n;          /* its address-space records so far */
};

static uint64_t generation_hash(const void *entry)
{
	return (uint64_t)((const struct rp_generation *)entry)->id * 0x9e3779b97f4a7c15ULL;
}

static bool same_generation(const void *entry, const void *key)
{
	return ((const struct rp_generation *)entry)->id == ((const struct rp_generation *)key)->id;
}

static struct rp_generation *generation(struct rp_report *r, uint32_t id)
{
	struct rp_generation key = {.id = id};
	uint64_t h = generation_hash(&key);
	struct rp_generation *g = rp_table_find(&r->generations, h, same_generation, &key);
	if (!g) {
		g = rp_table_new(&r->generations, sizeof(*g), h, generation_hash);
		g->id = id;
	}
	return g;
}

void rp_fold_record(struct rp_report *r, const struct perf_event_header *h)
{
	uint32_t pid, tid;
	if (h->size < 24)
		return;
	memcpy(&pid, (const uint8_t *)h + 8, 4);
	memcpy(&tid, (const uint8_t *)h + (h->type == PERF_RECORD_FORK ? 16 : 12), 4);
	generation(r, pid)->n++;
	if (tid != pid)
		generation(r, tid)->n++;
}

/* The span of S's thread that S is in, hwc_symbols_span()'s start (one
 * pass: the generations of its process and thread): the last one asked
 * for the thread first (its samples come in runs), *C its cache entry. */
static uint64_t span_of(struct rp_report *r, const struct hwc_sample *s, struct rp_span **cached)
{
	if (!r->spans && !(r->spans = calloc(RP_NSPANS, sizeof(*r->spans)))) {
		fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
		exit(1);
	}
	struct rp_span *c = *cached = &r->spans[s->tid & (RP_NSPANS - 1)];
	if (r->o.one_pass) {
		if (!c->used || c->pid != s->pid || c->tid != s->tid)
			*c = (struct rp_span){true, s->pid, s->tid, 0, 0, &generation(r, s->pid)->n,
					      &generation(r, s->tid)->n, NULL};
		return (uint64_t)*c->process << 32 | *c->thread;
	}
	if (!c->used || c->pid != s->pid || c->tid != s->tid || s->time < c->from || s->time >= c->to) {
		*c = (struct rp_span){true, s->pid, s->tid, 0, 0, NULL, NULL, NULL};
		hwc_symbols_span(r->syms, s->pid, s->tid, s->time, &c->from, &c->to);
	}
	return c->from;
}

static void settle_raws(struct rp_report *r);

bool rp_fold_sample(struct rp_report *r, const struct hwc_sample *s, const struct perf_event_attr *a)
{
	/* DWARF samples are unwound each from its own stack. */
	if ((s->sample_type & PERF_SAMPLE_STACK_USER) ||
	    ((s->sample_type & PERF_SAMPLE_CALLCHAIN) && s->nr_callchain > 2 * RP_MAX_FRAMES)) {
		/* One pass resolves nothing before the last map. */
		r->fold_failed |= r->o.one_pass;
		return r->o.one_pass;
	}
	if (!rp_time_selected(r, s)) {
		r->skipped++;
		return true;
	}
	struct rp_span *thread;
	uint64_t span = span_of(r, s, &thread);
	uint32_t cpu = (r->o.keys & K_CPU) || r->o.cpus ? s->cpu : 0;
	bool kernel = (s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	bool chain = s->sample_type & PERF_SAMPLE_CALLCHAIN;
	const uint64_t *words = chain ? s->callchain : &s->ip;
	uint32_t n = chain ? (uint32_t)s->nr_callchain : 1;
	/* Most often the thread's chain before (hashing costs more). */
	struct rp_raw *w = thread->last;
	if (w && w->span == span && w->n == n && w->cpu == cpu && w->kernel == kernel && w->attr == a &&
	    memcmp(w->words, words, n * sizeof(*words)) == 0)
		goto sum;
	union {
		struct rp_raw w;
		char bytes[sizeof(struct rp_raw) + 2 * RP_MAX_FRAMES * sizeof(uint64_t)];
	} key;
	key.w.attr = a;
	key.w.pid = s->pid;
	key.w.tid = s->tid;
	key.w.cpu = cpu;
	key.w.kernel = kernel;
	key.w.span = span;
	key.w.n = n;
	memcpy(key.w.words, words, n * sizeof(*words));
	uint64_t h = raw_hash_of(&key.w);
	w = rp_table_find(&r->raws, h, same_raw, &key.w);
	if (!w) {
		if (r->raws.len >= MAX_RAWS && r->o.one_pass) {
			r->fold_failed = true;
			return true;
		}
		if (r->raws.len >= MAX_RAWS)
			settle_raws(r);
		size_t size = sizeof(key.w) + key.w.n * sizeof(*key.w.words);
		w = rp_table_new(&r->raws, size, h, raw_hash);
		key.w.later = NULL;
		key.w.time = key.w.last = s->time;
		key.w.period = key.w.samples = 0;
		memcpy((char *)w + sizeof(w->link), (char *)&key.w + sizeof(w->link),
		       size - sizeof(w->link));
		*(r->raws_first ? &r->raws_last->later : &r->raws_first) = w;
		r->raws_last = w;
	}
	thread->last = w;
sum:
	w->period += rp_sample_period(s, a);
	w->samples++;
	if (s->time < w->time)
		w->time = s->time;
	if (s->time > w->last)
		w->last = s->time;
	return true;
}

bool rp_fold_exact(struct rp_report *r)
{
	if (r->fold_failed)
		return false;
	for (const struct rp_raw *w = r->raws_first; w; w = w->later) {
		uint64_t from, to;
		hwc_symbols_span(r->syms, w->pid, w->tid, w->time, &from, &to);
		if (w->last >= to)
			return false;
	}
	return true;
}

/* Resolve raw chain W as its first sample and add all of its samples. */
static void settle_raw(struct rp_report *r, const struct rp_raw *w)
{
	const struct hwc_location *locs[RP_MAX_FRAMES];
	struct hwc_sample s = {
		.sample_type = w->attr->sample_type,
		.misc = w->kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
		.pid = w->pid,
		.tid = w->tid,
		.time = w->time,
		.cpu = w->cpu,
		.ip = w->words[0],
		.nr_callchain = w->n,
		.callchain = w->words,
	};
	bool failed;
	size_t n = rp_sample_locations(r, &s, w->attr, locs, &failed);
	struct rp_samples g = {w->pid, w->tid, w->cpu, w->period, w->samples};
	rp_add_located(r, &g, locs, n, failed, n ? hwc_symbols_comm(r->syms, w->tid, w->time) : NULL);
}

static void settle_raws(struct rp_report *r)
{
	/* In the order they were first seen, as the samples came. */
	for (const struct rp_raw *w = r->raws_first; w; w = w->later)
		settle_raw(r, w);
	rp_table_free(&r->raws, NULL);
	r->raws_first = r->raws_last = NULL;
	for (size_t i = 0; r->spans && i < RP_NSPANS; i++)
		r->spans[i].last = NULL;
}

void rp_settle(struct rp_report *r)
{
	settle_raws(r);
	settle_chains(r);
}

static void free_thread(void *entry)
{
	free(((struct rp_thread *)entry)->last);
}

void rp_clear(struct rp_report *r)
{
	/* The nodes table owns both trees' nodes. */
	rp_table_free(&r->funcs, NULL);
	free(r->recent);
	r->recent = NULL;
	rp_table_free(&r->rows, NULL);
	rp_table_free(&r->edges, NULL);
	rp_table_free(&r->threads, free_thread);
	r->last_thread = NULL;
	rp_table_free(&r->nodes, NULL);
	rp_table_free(&r->chains, NULL);
	r->chains_first = r->chains_last = NULL;
	rp_table_free(&r->raws, NULL);
	r->raws_first = r->raws_last = NULL;
	free(r->spans);
	r->spans = NULL;
	rp_table_free(&r->generations, NULL);
	r->fold_failed = false;
	for (size_t i = 0; i < r->nurecs; i++)
		free((void *)(uintptr_t)r->urecs[i].data);
	free(r->urecs);
	r->urecs = NULL;
	r->nurecs = r->capurecs = 0;
	r->samples = r->period = r->lost = r->skipped = r->unwind_failures = 0;
	r->root = (struct rp_node){0};
	r->croot = (struct rp_node){0};
}
