/* pmcstat -G and -F: the call graph of each PMC in FreeBSD's text form,
 * and the call tree of every PMC in the calltree format KCachegrind reads. */
#include "log.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "out.h"

/* ------------------------------------------------------------ call graphs */

static int by_samples(const void *a, const void *b)
{
	const struct rp_node *x = *(const struct rp_node *const *)a;
	const struct rp_node *y = *(const struct rp_node *const *)b;
	return x->total_samples < y->total_samples ? 1 : x->total_samples > y->total_samples ? -1 : 0;
}

/* The children of N, most samples first (malloc'ed). */
struct rp_node **pmcstat_sorted_children(const struct rp_node *n, size_t *count)
{
	size_t k = 0;
	for (const struct rp_node *c = n->child; c; c = c->sibling)
		k++;
	struct rp_node **v = pmcstat_xrealloc(NULL, (k ? k : 1) * sizeof(*v));
	k = 0;
	for (struct rp_node *c = n->child; c; c = c->sibling)
		v[k++] = c;
	qsort(v, k, sizeof(*v), by_samples);
	*count = k;
	return v;
}

/* One node as FreeBSD prints it: indentation, share of the parent's
 * samples, [samples] in a 12-character field, the function, and its object
 * when it differs from the line before's. */
static void cg_node(FILE *out, const struct rp_node *n, int depth, uint64_t parent, int maxdepth,
		    const char **last_dso)
{
	if (depth > 0)
		fprintf(out, "%*s", depth, " ");
	if (n->total_samples == parent)
		fprintf(out, "100.0%% ");
	else
		fprintf(out, "%05.2f%% ", 100.0 * (double)n->total_samples / (double)parent);
	int w = fprintf(out, " [%" PRIu64 "] ", n->total_samples);
	if (w < 12)
		fprintf(out, "%*s", 12 - w, " ");
	if (depth > 0)
		fprintf(out, "%*s", depth, " ");
	char name[512];
	rp_func_name(n->func, name, sizeof(name));
	fputs(name, out);
	if (*last_dso != n->func->sym->dso) {
		*last_dso = n->func->sym->dso;
		fprintf(out, " @ %s\n", *last_dso);
	} else {
		fputc('\n', out);
	}
	if (depth + 1 >= maxdepth)
		return;
	size_t k;
	struct rp_node **v = pmcstat_sorted_children(n, &k);
	for (size_t i = 0; i < k; i++)
		cg_node(out, v[i], depth + 1, n->total_samples, maxdepth, last_dso);
	free(v);
}

int pmcstat_callgraph(const char *log, FILE *out, int depth)
{
	struct scan s = {0};
	int rc = pmcstat_scan_log(log, &s);
	for (size_t i = 0; i < s.n && !rc; i++) {
		if (s.p[i].n == 0)
			continue;
		struct rp_report r = {0};
		r.o = (struct rp_opts){.prog = "pmcstat", .input = log, .want = pmcstat_of_pmc,
				       .want_arg = &s.p[i], .root = pmcstat_opts.fsroot,
				       .leaf_addr = pmcstat_opts.leaf_addr || pmcstat_opts.leaf_offset};
		if (rp_load(&r)) {
			rp_free(&r);
			rc = EX_DATAERR;
			break;
		}
		fprintf(out, "@ %s [%" PRIu64 " samples]\n\n", s.p[i].name, r.croot.total_samples);
		size_t k;
		struct rp_node **v = pmcstat_sorted_children(&r.croot, &k);
		for (size_t j = 0; j < k; j++) {
			const char *last = NULL;
			cg_node(out, v[j], 0, r.croot.total_samples, depth, &last);
			fputc('\n', out);
		}
		free(v);
		rp_free(&r);
	}
	pmcstat_scan_free(&s);
	/* Whoever closes OUT says why (out_close()). */
	if (!rc && out_flush(out))
		rc = EX_IOERR;
	return rc;
}

/* ------------------------------------------------------------ calltree */

/* A function of the calltree, over every PMC's report: by object and name
 * (each report has symbols of its own), with its samples per PMC. */
struct ct_fn {
	struct rp_link link; /* first */
	char *dso, *name;
	uint64_t start;
	uint64_t *self; /* per PMC */
};

/* A call arc: the samples per PMC whose chain holds CALLER calling CALLEE
 * (CALLER NULL: the fake root calling the outermost frame). */
struct ct_arc {
	struct rp_link link; /* first */
	struct ct_fn *caller, *callee;
	uint64_t *samples;
};

struct calltree {
	struct rp_table fns, arcs;
	size_t npmc;
};

static uint64_t ct_fn_hash(const void *e)
{
	const struct ct_fn *f = e;
	return rp_str_hash(f->dso) * 31 ^ rp_str_hash(f->name) ^ f->start;
}

static bool ct_fn_same(const void *e, const void *k)
{
	const struct ct_fn *a = e, *b = k;
	return a->start == b->start && strcmp(a->dso, b->dso) == 0 && strcmp(a->name, b->name) == 0;
}

static uint64_t ct_arc_hash(const void *e)
{
	const struct ct_arc *a = e;
	return (uint64_t)(uintptr_t)a->caller * 31 ^ (uint64_t)(uintptr_t)a->callee;
}

static bool ct_arc_same(const void *e, const void *k)
{
	const struct ct_arc *a = e, *b = k;
	return a->caller == b->caller && a->callee == b->callee;
}

static struct ct_fn *ct_fn_get(struct calltree *t, const struct rp_func *f)
{
	char name[512];
	rp_func_name(f, name, sizeof(name));
	struct ct_fn key = {.dso = (char *)f->sym->dso, .name = name, .start = f->sym->start};
	uint64_t h = ct_fn_hash(&key);
	struct ct_fn *c = rp_table_find(&t->fns, h, ct_fn_same, &key);
	if (c)
		return c;
	c = rp_table_new(&t->fns, sizeof(*c), h, ct_fn_hash);
	if (!c)
		pmcstat_oom();
	c->dso = pmcstat_xstrdup(key.dso);
	c->name = pmcstat_xstrdup(name);
	c->start = key.start;
	c->self = pmcstat_xrealloc(NULL, t->npmc * sizeof(*c->self));
	memset(c->self, 0, t->npmc * sizeof(*c->self));
	return c;
}

static struct ct_arc *ct_arc_get(struct calltree *t, struct ct_fn *caller, struct ct_fn *callee)
{
	struct ct_arc key = {.caller = caller, .callee = callee};
	uint64_t h = ct_arc_hash(&key);
	struct ct_arc *a = rp_table_find(&t->arcs, h, ct_arc_same, &key);
	if (a)
		return a;
	a = rp_table_new(&t->arcs, sizeof(*a), h, ct_arc_hash);
	if (!a)
		pmcstat_oom();
	a->caller = caller;
	a->callee = callee;
	a->samples = pmcstat_xrealloc(NULL, t->npmc * sizeof(*a->samples));
	memset(a->samples, 0, t->npmc * sizeof(*a->samples));
	return a;
}

static void ct_fn_free(void *e)
{
	struct ct_fn *f = e;
	free(f->dso);
	free(f->name);
	free(f->self);
}

static void ct_arc_free(void *e)
{
	free(((struct ct_arc *)e)->samples);
}

/* A cost line's columns: the N PMCs' costs. */
static void ct_costs(FILE *out, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, " %" PRIu64, v[i]);
	fputc('\n', out);
}

static int ct_fn_cmp(const struct ct_fn *a, const struct ct_fn *b)
{
	int c = strcmp(a->dso, b->dso);
	if (!c)
		c = strcmp(a->name, b->name);
	return c ? c : a->start < b->start ? -1 : a->start > b->start;
}

/* Functions by object, name and address; arcs by their callee. */
static int by_fn(const void *a, const void *b)
{
	return ct_fn_cmp(*(const struct ct_fn *const *)a, *(const struct ct_fn *const *)b);
}

static int by_callee(const void *a, const void *b)
{
	return ct_fn_cmp((*(const struct ct_arc *const *)a)->callee,
			 (*(const struct ct_arc *const *)b)->callee);
}

static bool called_by(const void *entry, const void *caller)
{
	return ((const struct ct_arc *)entry)->caller == caller;
}

static void ct_arcs_of(FILE *out, const struct calltree *t, const struct ct_fn *caller)
{
	size_t n;
	struct ct_arc **v = rp_table_sorted(&t->arcs, called_by, caller, by_callee, &n);
	if (!v && t->arcs.len)
		pmcstat_oom();
	for (size_t k = 0; k < n; k++) {
		const struct ct_arc *a = v[k];
		uint64_t calls = 0;
		for (size_t i = 0; i < t->npmc; i++)
			calls += a->samples[i];
		fprintf(out, "cob=%s\ncfn=%s\ncalls=%" PRIu64 " %#" PRIx64 " 0\n* *", a->callee->dso,
			a->callee->name, calls, a->callee->start);
		ct_costs(out, a->samples, t->npmc);
	}
	free(v);
}

int pmcstat_calltree(const char *log, FILE *out)
{
	struct scan s = {0};
	int rc = pmcstat_scan_log(log, &s);
	struct calltree t = {.npmc = s.n};
	uint64_t *summary = pmcstat_xrealloc(NULL, (s.n ? s.n : 1) * sizeof(*summary));
	for (size_t i = 0; i < s.n && !rc; i++) {
		summary[i] = 0;
		if (s.p[i].n == 0)
			continue;
		struct rp_report r = {0};
		r.o = (struct rp_opts){.prog = "pmcstat", .input = log, .want = pmcstat_of_pmc,
				       .want_arg = &s.p[i], .root = pmcstat_opts.fsroot};
		if (rp_load(&r)) {
			rp_free(&r);
			rc = EX_DATAERR;
			break;
		}
		summary[i] = r.root.total_samples;
		for (const struct rp_func *f = NULL; (f = rp_table_next(&r.funcs, f));)
			ct_fn_get(&t, f)->self[i] += f->self_samples;
		for (const struct rp_edge *e = NULL; (e = rp_table_next(&r.edges, e));)
			ct_arc_get(&t, ct_fn_get(&t, e->caller), ct_fn_get(&t, e->callee))->samples[i] +=
				e->samples;
		for (const struct rp_node *c = r.root.child; c; c = c->sibling)
			ct_arc_get(&t, NULL, ct_fn_get(&t, c->func))->samples[i] += c->total_samples;
		rp_free(&r);
	}
	if (!rc) {
		fprintf(out, "version: 1\ncreator: pmcstat\npositions: instr line\nevents:");
		for (size_t i = 0; i < s.n; i++) {
			/* KCachegrind's event names: letters, digits and _. */
			char name[PMC_NAME_MAX + 16];
			snprintf(name, sizeof(name), "%s_%zu", s.p[i].name, i);
			for (char *p = name; *p; p++)
				if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
				    !(*p >= '0' && *p <= '9'))
					*p = '_';
			fprintf(out, " %s", name);
		}
		fprintf(out, "\nsummary:");
		ct_costs(out, summary, s.n);
		/* FreeBSD's fake root calls the outermost frames. */
		fprintf(out, "\nob=Linux\nfn=ROOT\n* *");
		for (size_t i = 0; i < s.n; i++)
			fprintf(out, " 0");
		fputc('\n', out);
		ct_arcs_of(out, &t, NULL);
		size_t n;
		struct ct_fn **v = rp_table_sorted(&t.fns, NULL, NULL, by_fn, &n);
		if (!v && t.fns.len)
			pmcstat_oom();
		for (size_t k = 0; k < n; k++) {
			fprintf(out, "ob=%s\nfn=%s\n* *", v[k]->dso, v[k]->name);
			ct_costs(out, v[k]->self, s.n);
			ct_arcs_of(out, &t, v[k]);
		}
		free(v);
	}
	rp_table_free(&t.arcs, ct_arc_free);
	rp_table_free(&t.fns, ct_fn_free);
	free(summary);
	pmcstat_scan_free(&s);
	if (!rc && out_flush(out))
		rc = EX_IOERR;
	return rc;
}

