/* hwc report's views: flat, call trees, gprof, threads, user records, and
 * the JSON document (schema hwc-report/1, see hwc-report(1)). */
#include "hwc.h"
#include "report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* What the rows are ordered by first, gathered beside each row: sorting
 * tens of thousands of rows (a system-wide recording) would otherwise chase
 * three pointers per comparison. */
struct row_order {
	uint64_t value, children;
	const char *name;
	struct rp_row *row;
};

static int cmp_rows(const void *a, const void *b)
{
	const struct row_order *ox = a, *oy = b;
	if (ox->value != oy->value)
		return ox->value > oy->value ? -1 : 1;
	if (ox->children != oy->children)
		return ox->children > oy->children ? -1 : 1;
	int c = strcmp(ox->name, oy->name);
	if (c)
		return c;
	const struct rp_row *x = ox->row, *y = oy->row;
	c = strcmp(x->comm ? x->comm : "", y->comm ? y->comm : "");
	if (c)
		return c;
	/* Last, what is stable from run to run (not the hash tables' order):
	 * the thread, the other keys, then the function's first appearance in
	 * the recording. */
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->src_line != y->src_line)
		return x->src_line < y->src_line ? -1 : 1;
	if (x->src_addr != y->src_addr)
		return x->src_addr < y->src_addr ? -1 : 1;
	return x->func->id < y->func->id ? -1 : x->func->id > y->func->id;
}

/* Without the children column a row is a place samples landed, as in
 * perf: the callers on their chains, with no self time, have none. */
static bool has_self(const void *entry, const void *arg)
{
	(void)arg;
	const struct rp_row *w = entry;
	return w->self || w->samples;
}

struct rp_row **rp_sorted_rows(struct rp_report *r, size_t *n)
{
	enum rp_order order = r->o.order == O_PERIOD ? O_SELF : r->o.order;
	struct rp_row **rows = rp_table_sorted(&r->rows, r->o.no_children ? has_self : NULL, NULL,
					       NULL, n);
	struct row_order *v = rows ? malloc((*n + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(rows);
		*n = 0;
		return NULL;
	}
	for (size_t i = 0; i < *n; i++) {
		struct rp_row *w = rows[i];
		v[i] = (struct row_order){
			.value = order == O_CHILDREN ? w->children : order == O_SAMPLES ? w->samples : w->self,
			/* Without the column, ties do not look at the callers
			 * (the flat view then sums no callers). */
			.children = r->o.no_children ? 0 : w->children,
			.name = w->func->sym->name,
			.row = w,
		};
	}
	qsort(v, *n, sizeof(*v), cmp_rows);
	for (size_t i = 0; i < *n; i++)
		rows[i] = v[i].row;
	free(v);
	return rows;
}

static int cmp_funcs(const void *a, const void *b)
{
	const struct rp_func *x = *(struct rp_func *const *)a, *y = *(struct rp_func *const *)b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return x->id < y->id ? -1 : 1;
}

static bool has_total(const void *entry, const void *arg)
{
	(void)arg;
	return ((const struct rp_func *)entry)->total != 0;
}

struct rp_func **rp_sorted_funcs(struct rp_report *r, size_t *n)
{
	return rp_table_sorted(&r->funcs, has_total, NULL, cmp_funcs, n);
}

bool rp_row_shown(const struct rp_report *r, const struct rp_row *w)
{
	uint64_t v = r->o.order == O_CHILDREN ? w->children : w->self;
	return pct(v, r->period) >= r->o.percent_limit && (w->self || !r->o.percent_limit ||
							     r->o.order == O_CHILDREN);
}

static void print_header(struct rp_report *r, FILE *out)
{
	fprintf(out, "# hwc report of %s: event %s, %" PRIu64 " samples, period %" PRIu64, r->o.input,
		r->attr ? r->attr->name : "?", r->samples, r->period);
	if (r->lost)
		fprintf(out, ", %" PRIu64 " LOST", r->lost);
	if (r->skipped)
		fprintf(out, " (%" PRIu64 " samples not selected)", r->skipped);
	fprintf(out, "\n");
	const char *cmd = hwc_perfdata_string(r->file, HWC_FEAT_CMDLINE);
	if (cmd)
		fprintf(out, "# recorded with: %s\n", cmd);
	if (!r->samples)
		fprintf(out, "# no samples%s\n", r->skipped ? " selected" : "");
}

/* Append to BUF[SIZE] at *LEN, never past the end. */
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	if (*len >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

/* The columns of the keys: in --sort's order, then the others it implies
 * (the parent of -p) in K_ order.  Their number. */
static size_t key_columns(const struct rp_opts *o, unsigned cols[RP_NKEYS])
{
	size_t n = 0;
	for (unsigned i = 0; i < o->nkey_order; i++)
		if (o->keys & o->key_order[i])
			cols[n++] = o->key_order[i];
	for (unsigned bit = 1; bit < 1u << RP_NKEYS; bit <<= 1) {
		bool listed = false;
		for (size_t i = 0; i < n; i++)
			listed |= cols[i] == bit;
		if ((o->keys & bit) && !listed)
			cols[n++] = bit;
	}
	return n;
}

void rp_table_header(const struct rp_report *r, char *buf, size_t size)
{
	unsigned cols[RP_NKEYS];
	size_t n = key_columns(&r->o, cols), len = 0;
	buf[0] = '\0';
	add(buf, size, &len, "%s    Self  Samples        Period", r->o.no_children ? "" : " Children");
	for (size_t i = 0; i < n; i++) {
		switch (cols[i]) {
		case K_COMM: add(buf, size, &len, "  %-16s", "Command"); break;
		case K_PID: add(buf, size, &len, "  %7s", "Pid"); break;
		case K_TID: add(buf, size, &len, "  %7s", "Tid"); break;
		case K_DSO: add(buf, size, &len, "  %-20s", "Shared Object"); break;
		case K_CPU: add(buf, size, &len, "  CPU"); break;
		case K_SRCLINE: add(buf, size, &len, "  %-24s", "Source:Line"); break;
		case K_PARENT: add(buf, size, &len, "  %-16s", "Parent symbol"); break;
		case K_SYM: add(buf, size, &len, i + 1 < n ? "  %-32s" : "  %s", "Symbol"); break;
		}
	}
}

/* The parent key's name: perf's [other] when no frame matched. */
static const char *parent_name(const struct rp_row *w)
{
	return w->parent ? w->parent->sym->name : "[other]";
}

void rp_table_row(const struct rp_report *r, const struct rp_row *w, char *buf, size_t size)
{
	unsigned cols[RP_NKEYS];
	size_t n = key_columns(&r->o, cols), len = 0;
	char text[1024];
	buf[0] = '\0';
	if (!r->o.no_children)
		add(buf, size, &len, " %7.2f%%", pct(w->children, r->period));
	add(buf, size, &len, " %7.2f%% %8" PRIu64 " %13" PRIu64, pct(w->self, r->period), w->samples,
	    w->self);
	for (size_t i = 0; i < n; i++) {
		switch (cols[i]) {
		case K_COMM: add(buf, size, &len, "  %-16s", w->comm); break;
		case K_PID: add(buf, size, &len, "  %7u", w->pid); break;
		case K_TID: add(buf, size, &len, "  %7u", w->tid); break;
		case K_DSO: add(buf, size, &len, "  %-20s", rp_dso_base(w->func->sym->dso)); break;
		case K_CPU: add(buf, size, &len, "  %03u", w->cpu); break;
		case K_SRCLINE:
			rp_row_srcline(w, text, sizeof(text));
			add(buf, size, &len, "  %-24s", text);
			break;
		case K_PARENT: add(buf, size, &len, "  %-16s", parent_name(w)); break;
		case K_SYM: {
			char name[1024];
			rp_func_name(w->func, name, sizeof(name));
			snprintf(text, sizeof(text), "%s%s", w->func->sym->kernel ? "[k] " : "", name);
			add(buf, size, &len, i + 1 < n ? "  %-32s" : "  %s", text);
			break;
		}
		}
	}
}

void rp_print_flat(struct rp_report *r, FILE *out)
{
	print_header(r, out);
	size_t n;
	struct rp_row **rows = rp_sorted_rows(r, &n);
	char line[2048];
	rp_table_header(r, line, sizeof(line));
	fprintf(out, "#\n#%s\n", line);
	for (size_t i = 0; i < n; i++) {
		if (!rp_row_shown(r, rows[i]))
			continue;
		rp_table_row(r, rows[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	free(rows);
}

static int cmp_nodes(const void *a, const void *b)
{
	const struct rp_node *x = *(struct rp_node *const *)a, *y = *(struct rp_node *const *)b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->func->id < y->func->id ? -1 : 1;
}

/* The children of N, biggest first (caller frees). */
static struct rp_node **sorted_children(const struct rp_node *n, size_t *count)
{
	size_t k = 0;
	for (struct rp_node *c = n->child; c; c = c->sibling)
		k++;
	struct rp_node **v = calloc(k + 1, sizeof(*v));
	if (!v) {
		*count = 0;
		return NULL;
	}
	k = 0;
	for (struct rp_node *c = n->child; c; c = c->sibling)
		v[k++] = c;
	qsort(v, k, sizeof(*v), cmp_nodes);
	*count = k;
	return v;
}

static double tree_limit(const struct rp_report *r)
{
	return r->o.percent_limit > 0 ? r->o.percent_limit : 0.5;
}

static void print_node(struct rp_report *r, FILE *out, const struct rp_node *n, int depth,
		       bool callers_first)
{
	size_t k;
	struct rp_node **kids = sorted_children(n, &k);
	for (size_t i = 0; i < k; i++) {
		const struct rp_node *c = kids[i];
		if (pct(c->total, r->period) < tree_limit(r))
			continue;
		char name[1024];
		rp_func_name(c->func, name, sizeof(name));
		/* In the callee tree a node's "self" would mean "outermost frame": omit it. */
		if (callers_first)
			fprintf(out, " %7.2f%% %7.2f%%", pct(c->total, r->period), pct(c->self, r->period));
		else
			fprintf(out, " %7.2f%%", pct(c->total, r->period));
		fprintf(out, "  %*s%s  (%s)\n", 2 * depth, "", name, rp_dso_base(c->func->sym->dso));
		print_node(r, out, c, depth + 1, callers_first);
	}
	free(kids);
}

void rp_print_tree(struct rp_report *r, FILE *out, bool callers_first)
{
	print_header(r, out);
	fprintf(out, "#\n# %s tree (branches under %.2f%% hidden)\n#   Total%s  Function  (DSO)\n",
		callers_first ? "caller" : "callee", tree_limit(r), callers_first ? "    Self" : "");
	if (!r->have_callchains)
		fprintf(out, "# the recording has no call chains: each sample is its own frame\n");
	print_node(r, out, callers_first ? &r->root : &r->croot, 0, callers_first);
}

/* The gprof view's order of edges: grouped by one end's rank, biggest
 * first within a group, then by the other end's rank. */
static const unsigned *g_rank;
static bool g_by_callee;

static int cmp_edges(const void *a, const void *b)
{
	const struct rp_edge *x = *(struct rp_edge *const *)a, *y = *(struct rp_edge *const *)b;
	unsigned gx = g_rank[(g_by_callee ? x->callee : x->caller)->id];
	unsigned gy = g_rank[(g_by_callee ? y->callee : y->caller)->id];
	if (gx != gy)
		return gx < gy ? -1 : 1;
	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	unsigned ox = g_rank[(g_by_callee ? x->caller : x->callee)->id];
	unsigned oy = g_rank[(g_by_callee ? y->caller : y->callee)->id];
	return ox < oy ? -1 : ox > oy;
}

static bool ranked_call(const void *entry, const void *rank_)
{
	const struct rp_edge *e = entry;
	const unsigned *rank = rank_;
	return e->caller != e->callee && rank[e->caller->id] && rank[e->callee->id];
}

/* The edges other than self-calls, sorted by one end (caller frees). */
static struct rp_edge **sorted_edges(struct rp_report *r, const unsigned *rank, bool by_callee,
				     size_t *n)
{
	g_rank = rank;
	g_by_callee = by_callee;
	return rp_table_sorted(&r->edges, ranked_call, rank, cmp_edges, n);
}

/* Every edge, self-calls too, in an order that follows the recording, not
 * the heap: by period, then by the order the functions first appeared. */
static int cmp_json_edges(const void *a, const void *b)
{
	const struct rp_edge *x = *(struct rp_edge *const *)a, *y = *(struct rp_edge *const *)b;
	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	if (x->caller->id != y->caller->id)
		return x->caller->id < y->caller->id ? -1 : 1;
	return x->callee->id < y->callee->id ? -1 : x->callee->id > y->callee->id;
}

static void print_edge(const struct rp_report *r, FILE *out, const struct rp_func *other,
		       const struct rp_edge *e, const unsigned *rank)
{
	char name[1024];
	rp_func_name(other, name, sizeof(name));
	fprintf(out, "              %7.2f%%  %8" PRIu64 "      %s [%u]\n", pct(e->period, r->period),
		e->samples, name, rank[other->id]);
}

void rp_print_gprof(struct rp_report *r, FILE *out)
{
	print_header(r, out);
	size_t n, nin = 0, nout = 0;
	struct rp_func **fs = rp_sorted_funcs(r, &n);
	unsigned *rank = calloc(r->funcs.len + 2, sizeof(*rank));
	for (size_t i = 0; i < n && rank; i++)
		rank[fs[i]->id] = (unsigned)i + 1;
	/* Both lists follow the functions' order: one pass over each. */
	struct rp_edge **in = rank ? sorted_edges(r, rank, true, &nin) : NULL;
	struct rp_edge **outs = rank ? sorted_edges(r, rank, false, &nout) : NULL;
	fprintf(out, "#\n# call graph: each function's callers above it, its callees below it\n"
		     "#\n# index  %%total   %%self  samples  name\n");
	size_t ii = 0, oi = 0;
	for (size_t i = 0; i < n && in && outs; i++) {
		const struct rp_func *f = fs[i];
		bool shown = pct(f->total, r->period) >= r->o.percent_limit;
		for (; ii < nin && in[ii]->callee == f; ii++)
			if (shown)
				print_edge(r, out, in[ii]->caller, in[ii], rank);
		if (shown) {
			char name[1024];
			rp_func_name(f, name, sizeof(name));
			unsigned ix = rank[f->id];
			fprintf(out, "[%u]%*s %7.2f%% %7.2f%% %8" PRIu64 "  %s (%s)\n", ix,
				(int)(5 - (ix > 9) - (ix > 99) - (ix > 999)), "", pct(f->total, r->period),
				pct(f->self, r->period), f->total_samples, name, rp_dso_base(f->sym->dso));
		}
		for (; oi < nout && outs[oi]->caller == f; oi++)
			if (shown)
				print_edge(r, out, outs[oi]->callee, outs[oi], rank);
		if (shown)
			fprintf(out, "-----------------------------------------------\n");
	}
	free(in);
	free(outs);
	free(rank);
	free(fs);
}

static int cmp_threads(const void *a, const void *b)
{
	const struct rp_thread *x = *(struct rp_thread *const *)a, *y = *(struct rp_thread *const *)b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static struct rp_thread **sorted_threads(struct rp_report *r)
{
	size_t n;
	return rp_table_sorted(&r->threads, NULL, NULL, cmp_threads, &n);
}

void rp_print_threads(struct rp_report *r, FILE *out)
{
	print_header(r, out);
	struct rp_thread **ts = sorted_threads(r);
	fprintf(out, "#\n#     Pid      Tid  %-16s  Samples        Period  Share  Switches  Exited  "
		     "Counts\n",
		"Command");
	for (size_t i = 0; ts && i < r->threads.len; i++) {
		const struct rp_thread *t = ts[i];
		if (!rp_pid_selected(r->o.pids, t->pid, t->tid))
			continue;
		fprintf(out, " %8u %8u  %-16s %8" PRIu64 " %13" PRIu64 " %5.1f%% %9" PRIu64 "  %-6s", t->pid,
			t->tid, t->comm, t->samples, t->period, pct(t->period, r->period), t->switches,
			t->exited ? "yes" : "no");
		for (size_t c = 0; c < t->ncounts; c++)
			fprintf(out, "  %s=%" PRIu64, t->count_names[c], t->counts[c]);
		fprintf(out, "\n");
	}
	free(ts);
}

static void print_bytes(FILE *out, const uint8_t *p, uint32_t n)
{
	bool text = n > 0;
	for (uint32_t i = 0; i < n; i++)
		if ((p[i] < 32 || p[i] > 126) && !(p[i] == 0 && i + 1 >= n - 3))
			text = false;
	if (text) {
		fputc('"', out);
		for (uint32_t i = 0; i < n && p[i]; i++)
			fputc(p[i], out);
		fputc('"', out);
	} else {
		for (uint32_t i = 0; i < n; i++)
			fprintf(out, "%02x", p[i]);
	}
}

void rp_print_records(struct rp_report *r, FILE *out)
{
	fprintf(out, "# %zu user records in %s\n#             Time      Pid      Tid  Size  Data\n",
		r->nurecs, r->o.input);
	for (size_t i = 0; i < r->nurecs; i++) {
		const struct rp_urec *u = &r->urecs[i];
		if (!rp_pid_selected(r->o.pids, u->pid, u->tid))
			continue;
		fprintf(out, " %16" PRIu64 " %8u %8u %5u  ", u->time, u->pid, u->tid, u->size);
		print_bytes(out, u->data, u->size);
		fprintf(out, "\n");
	}
}

/* ------------------------------------------------------------ JSON */

void rp_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void json_func(FILE *out, const struct rp_func *f)
{
	fprintf(out, "\"symbol\": ");
	rp_json_string(out, f->sym->name);
	fprintf(out, ", \"known\": %s, \"kernel\": %s, \"dso\": ", f->sym->known ? "true" : "false",
		f->sym->kernel ? "true" : "false");
	rp_json_string(out, rp_dso_base(f->sym->dso));
	fprintf(out, ", \"dso_path\": ");
	rp_json_string(out, f->sym->dso);
	if (!f->sym->known)
		fprintf(out, ", \"offset\": %" PRIu64, f->sym->start);
	if (f->file) {
		fprintf(out, ", \"file\": ");
		rp_json_string(out, f->file);
		fprintf(out, ", \"line\": %u", f->line);
	}
}

static void json_tree(struct rp_report *r, FILE *out, const struct rp_node *n, int depth)
{
	size_t k;
	struct rp_node **kids = sorted_children(n, &k);
	fprintf(out, "[");
	bool first = true;
	for (size_t i = 0; i < k; i++) {
		const struct rp_node *c = kids[i];
		if (pct(c->total, r->period) < r->o.percent_limit)
			continue;
		fprintf(out, "%s{", first ? "" : ", ");
		first = false;
		json_func(out, c->func);
		fprintf(out, ", \"total\": %" PRIu64 ", \"self\": %" PRIu64 ", \"total_samples\": %" PRIu64
			     ", \"self_samples\": %" PRIu64 ", \"children\": ",
			c->total, c->self, c->total_samples, c->self_samples);
		json_tree(r, out, c, depth + 1);
		fprintf(out, "}");
	}
	fprintf(out, "]");
	free(kids);
}

static void json_header(struct rp_report *r, FILE *out)
{
	static const struct {
		int feat;
		const char *key;
	} strs[] = {
		{HWC_FEAT_HOSTNAME, "hostname"}, {HWC_FEAT_OSRELEASE, "osrelease"},
		{HWC_FEAT_ARCH, "arch"}, {HWC_FEAT_VERSION, "recorder_version"},
		{HWC_FEAT_CMDLINE, "cmdline"}, {HWC_FEAT_CPUDESC, "cpu"},
	};
	fprintf(out, "\"header\": {");
	bool first = true;
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		const char *v = hwc_perfdata_string(r->file, strs[i].feat);
		if (!v)
			continue;
		fprintf(out, "%s\"%s\": ", first ? "" : ", ", strs[i].key);
		rp_json_string(out, v);
		first = false;
	}
	fprintf(out, "}");
}

void rp_print_json(struct rp_report *r, FILE *out)
{
	fprintf(out, "{\"schema\": \"hwc-report/1\", \"file\": ");
	rp_json_string(out, r->o.input);
	fprintf(out, ", ");
	json_header(r, out);
	fprintf(out, ", \"event\": ");
	rp_json_string(out, r->attr ? r->attr->name : "");
	fprintf(out, ", \"samples\": %" PRIu64 ", \"period\": %" PRIu64 ", \"lost\": %" PRIu64
		     ", \"not_selected\": %" PRIu64 ", \"callchains\": %s",
		r->samples, r->period, r->lost, r->skipped, r->have_callchains ? "true" : "false");
	fprintf(out, ", \"sort\": [");
	static const char *const keynames[RP_NKEYS] = {"comm", "pid",     "tid",    "dso",
							"symbol", "cpu", "srcline", "parent"};
	bool first = true;
	for (int i = 0; i < RP_NKEYS; i++)
		if (r->o.keys & (1u << i)) {
			fprintf(out, "%s\"%s\"", first ? "" : ", ", keynames[i]);
			first = false;
		}
	fprintf(out, "],\n \"entries\": [");
	size_t n;
	struct rp_row **rows = rp_sorted_rows(r, &n);
	first = true;
	for (size_t i = 0; i < n; i++) {
		const struct rp_row *w = rows[i];
		if (!rp_row_shown(r, w))
			continue;
		fprintf(out, "%s\n  {\"self\": %.4f, \"children\": %.4f, \"samples\": %" PRIu64
			     ", \"self_period\": %" PRIu64 ", \"children_period\": %" PRIu64 ", ",
			first ? "" : ",", pct(w->self, r->period), pct(w->children, r->period), w->samples,
			w->self, w->children);
		first = false;
		if (r->o.keys & K_COMM) {
			fprintf(out, "\"comm\": ");
			rp_json_string(out, w->comm);
			fprintf(out, ", ");
		}
		if (r->o.keys & (K_PID | K_TID))
			fprintf(out, "\"pid\": %u, ", w->pid);
		if (r->o.keys & K_TID)
			fprintf(out, "\"tid\": %u, ", w->tid);
		if (r->o.keys & K_CPU)
			fprintf(out, "\"cpu\": %u, ", w->cpu);
		if (r->o.keys & K_SRCLINE) {
			char src[1024];
			rp_row_srcline(w, src, sizeof(src));
			fprintf(out, "\"srcline\": ");
			rp_json_string(out, src);
			fprintf(out, ", ");
		}
		if (r->o.keys & K_PARENT) {
			fprintf(out, "\"parent\": ");
			rp_json_string(out, parent_name(w));
			fprintf(out, ", ");
		}
		json_func(out, w->func);
		fprintf(out, "}");
	}
	free(rows);
	fprintf(out, "\n ]");
	if (r->o.view == V_CALLER || r->o.view == V_CALLEE) {
		fprintf(out, ",\n \"tree\": {\"order\": \"%s\", \"roots\": ",
			r->o.view == V_CALLER ? "caller" : "callee");
		json_tree(r, out, r->o.view == V_CALLER ? &r->root : &r->croot, 0);
		fprintf(out, "}");
	}
	if (r->o.view == V_GPROF) {
		fprintf(out, ",\n \"edges\": [");
		first = true;
		size_t ne = 0;
		struct rp_edge **es = rp_table_sorted(&r->edges, NULL, NULL, cmp_json_edges, &ne);
		for (size_t i = 0; i < ne; i++) {
			const struct rp_edge *e = es[i];
			fprintf(out, "%s\n  {\"caller\": {", first ? "" : ",");
			json_func(out, e->caller);
			fprintf(out, "}, \"callee\": {");
			json_func(out, e->callee);
			fprintf(out, "}, \"period\": %" PRIu64 ", \"samples\": %" PRIu64 "}", e->period,
				e->samples);
			first = false;
		}
		free(es);
		fprintf(out, "\n ]");
	}
	fprintf(out, ",\n \"threads\": [");
	struct rp_thread **ts = sorted_threads(r);
	first = true;
	for (size_t i = 0; ts && i < r->threads.len; i++) {
		const struct rp_thread *t = ts[i];
		fprintf(out, "%s\n  {\"pid\": %u, \"tid\": %u, \"comm\": ", first ? "" : ",", t->pid, t->tid);
		rp_json_string(out, t->comm);
		fprintf(out, ", \"samples\": %" PRIu64 ", \"period\": %" PRIu64 ", \"switches\": %" PRIu64
			     ", \"exited\": %s, \"counts\": {",
			t->samples, t->period, t->switches, t->exited ? "true" : "false");
		for (size_t c = 0; c < t->ncounts; c++) {
			fprintf(out, "%s", c ? ", " : "");
			rp_json_string(out, t->count_names[c]);
			fprintf(out, ": %" PRIu64, t->counts[c]);
		}
		fprintf(out, "}}");
		first = false;
	}
	free(ts);
	fprintf(out, "\n ],\n \"user_records\": [");
	for (size_t i = 0; i < r->nurecs; i++) {
		const struct rp_urec *u = &r->urecs[i];
		fprintf(out, "%s\n  {\"time\": %" PRIu64 ", \"pid\": %u, \"tid\": %u, \"size\": %u, "
			     "\"hex\": \"",
			i ? "," : "", u->time, u->pid, u->tid, u->size);
		for (uint32_t b = 0; b < u->size; b++)
			fprintf(out, "%02x", u->data[b]);
		fprintf(out, "\"}");
	}
	fprintf(out, "\n ]}\n");
}
