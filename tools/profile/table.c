/* The one hash table of the profile: chained, intrusive (an entry starts
 * with its struct rp_link), sized in powers of two. */
#include "profile.h"

#include <errno.h>
#include <stdlib.h>

/* calloc, or exit after saying so (the tools have nothing to fall back on). */
static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p) {
		fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
		exit(1);
	}
	return p;
}

void *rp_table_find(const struct rp_table *t, uint64_t hash,
		    bool (*same)(const void *entry, const void *key), const void *key)
{
	if (!t->cap)
		return NULL;
	for (struct rp_link *l = t->buckets[hash & (t->cap - 1)]; l; l = l->next)
		if (same(l, key))
			return l;
	return NULL;
}

void *rp_table_new(struct rp_table *t, size_t size, uint64_t hash,
		   uint64_t (*hashfn)(const void *entry))
{
	t->hash = hashfn;
	/* Grow before allocating the entry, so that the entries land where
	 * they always have: the unsorted listings follow pointer hashes. */
	if (t->len + 1 > t->cap) {
		size_t ncap = t->cap ? t->cap * 4 : 1024;
		struct rp_link **nb = xcalloc(ncap, sizeof(*nb));
		for (size_t i = 0; i < t->cap; i++)
			for (struct rp_link *l = t->buckets[i], *next; l; l = next) {
				size_t h = hashfn(l) & (ncap - 1);
				next = l->next;
				l->next = nb[h];
				nb[h] = l;
			}
		free(t->buckets);
		t->buckets = nb;
		t->cap = ncap;
	}
	/* Entries come from chunks: one allocation per thousands of them, and
	 * no per-entry free (a table only ever loses all of its entries). */
	size = (size + 7) & ~(size_t)7;
	if (size > t->chunk_left) {
		size_t csize = size > RP_CHUNK / 4 ? size + sizeof(struct rp_link) : RP_CHUNK;
		struct rp_link *c = xcalloc(1, csize);
		c->next = t->chunks;
		t->chunks = c;
		t->chunk_next = (char *)(c + 1);
		t->chunk_left = csize - sizeof(*c);
	}
	struct rp_link *l = (struct rp_link *)(void *)t->chunk_next;
	t->chunk_next += size;
	t->chunk_left -= size;
	l->next = t->buckets[hash & (t->cap - 1)];
	t->buckets[hash & (t->cap - 1)] = l;
	t->len++;
	return l;
}

void *rp_table_next(const struct rp_table *t, const void *prev)
{
	const struct rp_link *l = prev;
	size_t i = 0;
	if (l) {
		if (l->next)
			return l->next;
		i = (t->hash(l) & (t->cap - 1)) + 1;
	}
	for (; i < t->cap; i++)
		if (t->buckets[i])
			return t->buckets[i];
	return NULL;
}

void *rp_table_sorted(const struct rp_table *t, bool (*keep)(const void *entry, const void *arg),
		      const void *arg, int (*cmp)(const void *, const void *), size_t *n)
{
	*n = 0;
	const void **v = calloc(t->len + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (const void *e = NULL; (e = rp_table_next(t, e));)
		if (!keep || keep(e, arg))
			v[(*n)++] = e;
	if (cmp)
		qsort(v, *n, sizeof(*v), cmp);
	return v;
}

void rp_table_free(struct rp_table *t, void (*fini)(void *entry))
{
	for (size_t i = 0; fini && i < t->cap; i++)
		for (struct rp_link *l = t->buckets[i]; l; l = l->next)
			fini(l);
	for (struct rp_link *c = t->chunks, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(t->buckets);
	*t = (struct rp_table){0};
}

uint64_t rp_str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}
