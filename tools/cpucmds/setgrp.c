/* -c event specifications and the groups of sets cputrack and cpustat
 * cycle through.  A specification is a comma-separated list of tokens:
 *   [picN=]EVENT   a request; without picN it takes the next column
 *   nouser[N]      do not count user mode (for every column, or column N)
 *   sys[N]         count system mode too
 *   ATTR[N][=VAL]  a platform attribute (cpc_walk_attrs), 1 without a value
 * Column numbers only order the output: on Linux the kernel picks the
 * physical counter. */
#include "cpucmds.h"
#include "num.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *cpucmds_program = "cpc";
int cpucmds_debug;

void cpucmds_errfn(const char *fn, int subcode, const char *fmt, va_list ap)
{
	(void)subcode;
	fprintf(stderr, "%s: ", cpucmds_program);
	if (cpucmds_debug)
		fprintf(stderr, "%s: ", fn);
	vfprintf(stderr, fmt, ap);
}

void cpucmds_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", cpucmds_program);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

cpc_t *cpucmds_open(const char *argv0, const char *cannot)
{
	const char *slash = strrchr(argv0, '/');
	cpucmds_program = slash ? slash + 1 : argv0;
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	if (!cpc) {
		cpucmds_error("%s - %s\n", cannot, strerror(errno));
		return NULL;
	}
	cpc_seterrhndlr(cpc, cpucmds_errfn);
	return cpc;
}

/* ---------------------------------------------------------------- parsing */

struct column {
	char *event;
	uint_t flags;
	int nattrs;
	cpc_attr_t attrs[16];
};

struct attr_names {
	char names[32][CPC_MAX_ATTR_LEN];
	int n;
};

static void collect_attr(void *arg, const char *name)
{
	struct attr_names *a = arg;
	if (a->n < 32 && strcmp(name, "picnum") != 0)
		snprintf(a->names[a->n++], CPC_MAX_ATTR_LEN, "%s", name);
}

/* TOKEN is WORD or WORDn: the column (or -1 for all), else -2. */
static int word_column(const char *token, size_t len, const char *word)
{
	size_t wlen = strlen(word);
	if (len < wlen || strncmp(token, word, wlen) != 0)
		return -2;
	if (len == wlen)
		return -1;
	int col = 0;
	for (size_t i = wlen; i < len; i++) {
		if (token[i] < '0' || token[i] > '9' || col > CPUCMDS_MAX_REQS)
			return -2;
		col = col * 10 + token[i] - '0';
	}
	return col < CPUCMDS_MAX_REQS ? col : -3;
}

static int add_attr(struct column *c, const char *name, uint64_t val)
{
	if (c->nattrs == (int)(sizeof(c->attrs) / sizeof(c->attrs[0])))
		return -1;
	c->attrs[c->nattrs].ca_name = (char *)name;
	c->attrs[c->nattrs++].ca_val = val;
	return 0;
}

/* Parse SPEC into COLS (attribute names point into AN); -1 after printing why. */
static int parse_spec(const struct attr_names *an, const char *spec, struct column *cols,
		      char **store)
{
	char *copy = strdup(spec);
	if (!copy) {
		cpucmds_error("out of memory\n");
		return -1;
	}
	*store = copy;
	for (int i = 0; i < CPUCMDS_MAX_REQS; i++)
		cols[i].flags = CPC_COUNT_USER;
	if (!*copy) {
		cpucmds_error("empty event specification\n");
		return -1;
	}
	for (char *tok = copy, *next; tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		if (!*tok) {
			cpucmds_error("empty token in '%s'\n", spec);
			return -1;
		}
		char *eq = strchr(tok, '=');
		size_t klen = eq ? (size_t)(eq - tok) : strlen(tok);
		int col;
		if ((col = word_column(tok, klen, "pic")) >= -1 && col != -1 && eq) {
			if (!eq[1]) {
				cpucmds_error("missing 'pic%d' value\n", col);
				return -1;
			}
			if (cols[col].event) {
				cpucmds_error("repeated 'pic%d' token\n", col);
				return -1;
			}
			cols[col].event = eq + 1;
			continue;
		}
		if (col == -3) {
			cpucmds_error("'%s': at most %d columns (pic0 to pic%d)\n", tok,
				      CPUCMDS_MAX_REQS, CPUCMDS_MAX_REQS - 1);
			return -1;
		}
		bool flag = false;
		for (int f = 0; f < 2 && !flag; f++) {
			const char *word = f ? "sys" : "nouser";
			if (eq || (col = word_column(tok, klen, word)) < -1)
				continue;
			for (int i = col < 0 ? 0 : col; i < (col < 0 ? CPUCMDS_MAX_REQS : col + 1); i++)
				cols[i].flags = f ? cols[i].flags | CPC_COUNT_SYSTEM
						  : cols[i].flags & ~(uint_t)CPC_COUNT_USER;
			flag = true;
		}
		if (flag)
			continue;
		bool attr = false;
		for (int a = 0; a < an->n && !attr; a++) {
			if ((col = word_column(tok, klen, an->names[a])) < -1)
				continue;
			uint64_t val = 1;
			unsigned long long v;
			if (eq && num_ullong(eq + 1, 0, 0, UINT64_MAX, &v) != NUM_OK) {
				cpucmds_error("invalid value '%s' for attribute '%s' (a number from 0 to "
					      "%" PRIu64 ")\n",
					      eq + 1, an->names[a], UINT64_MAX);
				return -1;
			}
			if (eq)
				val = v;
			for (int i = col < 0 ? 0 : col; i < (col < 0 ? CPUCMDS_MAX_REQS : col + 1); i++)
				if (add_attr(&cols[i], an->names[a], val)) {
					cpucmds_error("too many attributes in '%s'\n", spec);
					return -1;
				}
			attr = true;
		}
		if (attr)
			continue;
		if (eq) {
			cpucmds_error("bad token '%s'\n", tok);
			return -1;
		}
		/* An event without picN: the column after the last one taken. */
		int last = CPUCMDS_MAX_REQS - 1;
		while (last >= 0 && !cols[last].event)
			last--;
		if (last == CPUCMDS_MAX_REQS - 1) {
			cpucmds_error("no column left for '%s' (at most %d events)\n", tok,
				      CPUCMDS_MAX_REQS);
			return -1;
		}
		cols[last + 1].event = tok;
	}
	return 0;
}

static int make_set(cpc_t *cpc, const char *spec, struct cmdset *cs)
{
	struct column cols[CPUCMDS_MAX_REQS];
	memset(cols, 0, sizeof(cols));
	struct attr_names an = {.n = 0};
	cpc_walk_attrs(cpc, &an, collect_attr);
	char *store = NULL;
	int err = parse_spec(&an, spec, cols, &store);
	cs->set = err ? NULL : cpc_set_create(cpc);
	if (!err && !cs->set) {
		cpucmds_error("cannot create a set: %s\n", strerror(errno));
		err = -1;
	}
	size_t hdr_len = 0;
	cs->header = calloc(CPUCMDS_MAX_REQS * 11 + 1, 1);
	if (!cs->header)
		err = -1;
	cs->sysonly = true;
	for (int i = 0; !err && i < CPUCMDS_MAX_REQS; i++) {
		if (!cols[i].event)
			continue;
		if (cpc_set_add_request(cpc, cs->set, cols[i].event, 0, cols[i].flags,
					(uint_t)cols[i].nattrs, cols[i].attrs) < 0) {
			err = -1;
			break;
		}
		char col[16];
		snprintf(col, sizeof(col), "%8s%-2d", "pic", i);
		col[10] = '\0';
		hdr_len += (size_t)sprintf(cs->header + hdr_len, "%s", col);
		cs->nreqs++;
		if (cols[i].flags & CPC_COUNT_USER)
			cs->sysonly = false;
	}
	if (!err && cs->nreqs == 0) {
		cpucmds_error("no events in '%s'\n", spec);
		err = -1;
	}
	free(store);
	if (!err) {
		cs->name = strdup(spec);
		cs->data1 = cpc_buf_create(cpc, cs->set);
		cs->data2 = cpc_buf_create(cpc, cs->set);
		cs->scratch = cpc_buf_create(cpc, cs->set);
		if (!cs->name || !cs->data1 || !cs->data2 || !cs->scratch) {
			cpucmds_error("out of memory\n");
			err = -1;
		}
	}
	return err;
}

/* ---------------------------------------------------------------- groups */

struct setgrp *setgrp_new(cpc_t *cpc)
{
	struct setgrp *g = calloc(1, sizeof(*g));
	if (g)
		g->cpc = cpc;
	return g;
}

static void free_cmdset(cpc_t *cpc, struct cmdset *cs)
{
	if (cs->data1)
		cpc_buf_destroy(cpc, cs->data1);
	if (cs->data2)
		cpc_buf_destroy(cpc, cs->data2);
	if (cs->scratch)
		cpc_buf_destroy(cpc, cs->scratch);
	if (cs->set)
		cpc_set_destroy(cpc, cs->set);
	free(cs->name);
	free(cs->header);
}

int setgrp_add(struct setgrp *g, const char *spec)
{
	struct cmdset *sets = realloc(g->sets, (size_t)(g->nsets + 1) * sizeof(*sets));
	if (!sets) {
		cpucmds_error("out of memory\n");
		return -1;
	}
	g->sets = sets;
	struct cmdset *cs = &g->sets[g->nsets];
	memset(cs, 0, sizeof(*cs));
	if (make_set(g->cpc, spec, cs)) {
		free_cmdset(g->cpc, cs);
		return -1;
	}
	g->nsets++;
	return 0;
}

struct setgrp *setgrp_clone(const struct setgrp *g)
{
	struct setgrp *n = setgrp_new(g->cpc);
	for (int i = 0; n && i < g->nsets; i++) {
		if (setgrp_add(n, g->sets[i].name)) {
			setgrp_free(n);
			return NULL;
		}
		cpc_buf_copy(g->cpc, n->sets[i].data1, g->sets[i].data1);
		cpc_buf_copy(g->cpc, n->sets[i].data2, g->sets[i].data2);
		cpc_buf_copy(g->cpc, n->sets[i].scratch, g->sets[i].scratch);
	}
	if (n)
		n->current = g->current;
	return n;
}

void setgrp_free(struct setgrp *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->nsets; i++)
		free_cmdset(g->cpc, &g->sets[i]);
	free(g->sets);
	free(g);
}

struct cmdset *setgrp_current(struct setgrp *g)
{
	return g->nsets ? &g->sets[g->current] : NULL;
}

struct cmdset *setgrp_next(struct setgrp *g)
{
	if (!g->nsets)
		return NULL;
	g->current = (g->current + 1) % g->nsets;
	return &g->sets[g->current];
}

void setgrp_reset(struct setgrp *g)
{
	g->current = 0;
}

int setgrp_sample(struct setgrp *g)
{
	struct cmdset *cs = setgrp_current(g);
	if (g->nsets == 1) {
		/* data1: this sample, data2: the previous one, scratch: the difference */
		cpc_buf_t *t = cs->data1;
		cs->data1 = cs->data2;
		cs->data2 = t;
		if (cpc_set_sample(g->cpc, cs->set, cs->data1) != 0)
			return -1;
		cpc_buf_sub(g->cpc, cs->scratch, cs->data1, cs->data2);
		return 0;
	}
	/* Each bind starts a set from zero: scratch is this period, data1 the
	 * set's total. */
	if (cpc_set_sample(g->cpc, cs->set, cs->scratch) != 0)
		return -1;
	cpc_buf_add(g->cpc, cs->data1, cs->data1, cs->scratch);
	return 0;
}

void setgrp_accum(struct setgrp *acc, const struct setgrp *g)
{
	if (acc->nsets != g->nsets)
		return;
	for (int i = 0; i < g->nsets; i++)
		cpc_buf_add(acc->cpc, acc->sets[i].data1, acc->sets[i].data1, g->sets[i].data1);
}

bool setgrp_has_sysonly(const struct setgrp *g)
{
	for (int i = 0; i < g->nsets; i++)
		if (g->sets[i].sysonly)
			return true;
	return false;
}

/* ---------------------------------------------------------------- time */

static hrtime_t timebase;

hrtime_t cpucmds_hrtime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* cpc_buf_hrtime()'s clock */
	return (hrtime_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void cpucmds_zerotime(void)
{
	timebase = cpucmds_hrtime();
}

double cpucmds_timestamp(hrtime_t hrt)
{
	if (hrt == 0)
		hrt = cpucmds_hrtime();
	return (double)(hrt - timebase) / 1e9;
}

long cpucmds_parse_seconds(const char *s)
{
	double v;
	if (num_double(s, 0, CPUCMDS_MAX_SECONDS, &v) != NUM_OK)
		return -1;
	return (long)(v * 1000.0 + 0.5);
}
