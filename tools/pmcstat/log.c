/* pmcstat's log side: the log as text, gprof(1) profiles, call graphs and
 * the top display.  The log's PMCs and which samples are whose come from
 * pmclog(3) (each record carries the file offset of the sample it stands
 * for); symbols and the aggregated profile from libhwc and tools/profile,
 * which hwc report shares. */
#include "pmcstat.h"
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <hwc/output.h>
#include <hwc/perfdata.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/gmon_out.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#include "out.h"

struct pmcstat_opts pmcstat_opts = {.threshold = DEFAULT_TOP_THRESHOLD};

static _Noreturn void oom(void)
{
	fprintf(stderr, "pmcstat: ERROR: out of memory\n");
	exit(EX_SOFTWARE);
}

static void *xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size);
	if (!q)
		oom();
	return q;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xrealloc(NULL, n), s, n);
}

/* Append X to the array *V of *N (room for *CAP). */
static void push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = x;
}

/* Call FN on each record of the log; 0 when the whole log was read, else
 * an exit status (after saying why). */
static int each_event(const char *log, void (*fn)(void *arg, const struct pmclog_ev *ev), void *arg)
{
	/* A FIFO without a writer must not hang the open; a pipe is then read
	 * as it comes, a device until pmclog(3) sees it is no log. */
	int fd = open(log, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
	if (fd < 0 || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		fprintf(stderr, "pmcstat: ERROR: Cannot open \"%s\" for reading: %s\n", log,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return EX_OSERR;
	}
	void *p = pmclog_open(fd);
	if (!p) {
		fprintf(stderr, "pmcstat: ERROR: Cannot create parser: %s\n", strerror(errno));
		close(fd);
		return EX_OSERR;
	}
	struct pmclog_ev ev;
	while (pmclog_read(p, &ev) == 0)
		fn(arg, &ev);
	int rc = 0;
	if (ev.pl_state != PMCLOG_EOF) {
		fprintf(stderr, "pmcstat: ERROR: event parsing failed (record %zu, offset 0x%jx): "
				"\"%s\" is not a complete log (a perf.data file)\n",
			ev.pl_count + 1, (uintmax_t)ev.pl_offset, log);
		rc = EX_DATAERR;
	}
	pmclog_close(p);
	close(fd);
	return rc;
}

/* ------------------------------------------------------------ text */

#define ENTRY(out, type, ...)                                                             \
	do {                                                                              \
		fprintf(out, "%-9s", type);                                               \
		fprintf(out, " " __VA_ARGS__);                                            \
		fputc('\n', out);                                                         \
	} while (0)

static void print_event(void *arg, const struct pmclog_ev *ev)
{
	FILE *out = arg;
	switch (ev->pl_type) {
	case PMCLOG_TYPE_CALLCHAIN: {
		const struct pmclog_ev_callchain *cc = &ev->pl_u.pl_cc;
		ENTRY(out, "callchain", "%d 0x%x %d %d %c", cc->pl_pid, cc->pl_pmcid,
		      PMC_CALLCHAIN_CPUFLAGS_TO_CPU(cc->pl_cpuflags), cc->pl_npc,
		      PMC_CALLCHAIN_CPUFLAGS_TO_USERMODE(cc->pl_cpuflags) ? 'u' : 's');
		for (uint32_t i = 0; i < cc->pl_npc; i++)
			ENTRY(out, "...", "0x%jx", (uintmax_t)cc->pl_pc[i]);
		break;
	}
	case PMCLOG_TYPE_PCSAMPLE:
		ENTRY(out, "sample", "0x%x %d 0x%jx %c", ev->pl_u.pl_s.pl_pmcid,
		      ev->pl_u.pl_s.pl_pid, (uintmax_t)ev->pl_u.pl_s.pl_pc,
		      ev->pl_u.pl_s.pl_usermode ? 'u' : 's');
		break;
	case PMCLOG_TYPE_CLOSELOG:
		ENTRY(out, "closelog", "");
		break;
	case PMCLOG_TYPE_DROPNOTIFY:
		ENTRY(out, "drop", "");
		break;
	case PMCLOG_TYPE_INITIALIZE: {
		const char *cpu = pmc_name_of_cputype((enum pmc_cputype)ev->pl_u.pl_i.pl_arch);
		ENTRY(out, "initlog", "0x%x \"%s\"", ev->pl_u.pl_i.pl_version,
		      cpu ? cpu : "UNKNOWN");
		if ((ev->pl_u.pl_i.pl_version & 0xFF000000) != PMC_VERSION_MAJOR << 24)
			fprintf(stderr, "pmcstat: WARNING: Log version 0x%x != expected version "
					"0x%x.\n",
				ev->pl_u.pl_i.pl_version, PMC_VERSION);
		break;
	}
	case PMCLOG_TYPE_MAP_IN:
		ENTRY(out, "map-in", "%d 0x%jx \"%s\"", ev->pl_u.pl_mi.pl_pid,
		      (uintmax_t)ev->pl_u.pl_mi.pl_start, ev->pl_u.pl_mi.pl_pathname);
		break;
	case PMCLOG_TYPE_MAP_OUT:
		ENTRY(out, "map-out", "%d 0x%jx 0x%jx", ev->pl_u.pl_mo.pl_pid,
		      (uintmax_t)ev->pl_u.pl_mo.pl_start, (uintmax_t)ev->pl_u.pl_mo.pl_end);
		break;
	case PMCLOG_TYPE_PMCALLOCATE:
		ENTRY(out, "allocate", "0x%x \"%s\" 0x%x", ev->pl_u.pl_a.pl_pmcid,
		      ev->pl_u.pl_a.pl_evname, ev->pl_u.pl_a.pl_flags);
		break;
	case PMCLOG_TYPE_PMCATTACH:
		ENTRY(out, "attach", "0x%x %d \"%s\"", ev->pl_u.pl_t.pl_pmcid, ev->pl_u.pl_t.pl_pid,
		      ev->pl_u.pl_t.pl_pathname);
		break;
	case PMCLOG_TYPE_PMCDETACH:
		ENTRY(out, "detach", "0x%x %d", ev->pl_u.pl_d.pl_pmcid, ev->pl_u.pl_d.pl_pid);
		break;
	case PMCLOG_TYPE_PROCCSW:
		ENTRY(out, "cswval", "0x%x %d %jd", ev->pl_u.pl_c.pl_pmcid, ev->pl_u.pl_c.pl_pid,
		      (intmax_t)ev->pl_u.pl_c.pl_value);
		break;
	case PMCLOG_TYPE_PROCEXEC:
		ENTRY(out, "exec", "0x%x %d 0x%jx 0x%jx \"%s\"", ev->pl_u.pl_x.pl_pmcid,
		      ev->pl_u.pl_x.pl_pid, (uintmax_t)ev->pl_u.pl_x.pl_baseaddr,
		      (uintmax_t)ev->pl_u.pl_x.pl_dynaddr, ev->pl_u.pl_x.pl_pathname);
		break;
	case PMCLOG_TYPE_PROCEXIT:
		ENTRY(out, "exitval", "0x%x %d %jd", ev->pl_u.pl_e.pl_pmcid, ev->pl_u.pl_e.pl_pid,
		      (intmax_t)ev->pl_u.pl_e.pl_value);
		break;
	case PMCLOG_TYPE_PROCFORK:
		ENTRY(out, "fork", "%d %d", ev->pl_u.pl_f.pl_oldpid, ev->pl_u.pl_f.pl_newpid);
		break;
	case PMCLOG_TYPE_USERDATA:
		ENTRY(out, "userdata", "0x%x", ev->pl_u.pl_u.pl_userdata);
		break;
	case PMCLOG_TYPE_SYSEXIT:
		ENTRY(out, "exit", "%d", ev->pl_u.pl_se.pl_pid);
		break;
	default:
		fprintf(out, "unknown event (type %d).\n", ev->pl_type);
	}
}

int pmcstat_print_log(const char *log, FILE *out)
{
	return each_event(log, print_event, out);
}

/* ------------------------------------------------------------ the log's PMCs */

struct pmcrec {
	pmc_id_t id;
	char name[PMC_NAME_MAX];
	uint64_t rate;
	uint64_t *offs; /* file offsets of its samples, ascending */
	size_t n, cap;
};

struct scan {
	struct pmcrec *p;
	size_t n;
};

static struct pmcrec *pmc_by_id(struct scan *s, pmc_id_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].id == id)
			return &s->p[i];
	return NULL;
}

static void scan_event(void *arg, const struct pmclog_ev *ev)
{
	struct scan *s = arg;
	if (ev->pl_type == PMCLOG_TYPE_PMCALLOCATE && !pmc_by_id(s, ev->pl_u.pl_a.pl_pmcid)) {
		s->p = xrealloc(s->p, (s->n + 1) * sizeof(*s->p));
		struct pmcrec *r = &s->p[s->n++];
		memset(r, 0, sizeof(*r));
		r->id = ev->pl_u.pl_a.pl_pmcid;
		r->rate = ev->pl_u.pl_a.pl_rate;
		snprintf(r->name, sizeof(r->name), "%s", ev->pl_u.pl_a.pl_evname);
		return;
	}
	pmc_id_t id;
	int tid;
	if (ev->pl_type == PMCLOG_TYPE_CALLCHAIN) {
		id = ev->pl_u.pl_cc.pl_pmcid;
		tid = (int)ev->pl_u.pl_cc.pl_tid;
	} else if (ev->pl_type == PMCLOG_TYPE_PCSAMPLE) {
		id = ev->pl_u.pl_s.pl_pmcid;
		tid = (int)ev->pl_u.pl_s.pl_tid;
	} else {
		return;
	}
	if (pmcstat_opts.has_tid && tid != pmcstat_opts.tid)
		return; /* -i: another thread's */
	struct pmcrec *r = pmc_by_id(s, id);
	if (!r)
		return;
	push_u64(&r->offs, &r->n, &r->cap, (uint64_t)ev->pl_offset);
}

static int scan_log(const char *log, struct scan *s)
{
	return each_event(log, scan_event, s);
}

static void scan_free(struct scan *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->p[i].offs);
	free(s->p);
}

/* Is the sample at REC's offset one of the PMC's? */
static bool of_pmc(void *arg, const struct hwc_perfdata_record *rec)
{
	const struct pmcrec *r = arg;
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->offs[mid] < rec->offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->offs[lo] == rec->offset;
}

/* ------------------------------------------------------------ samples */

typedef void sample_fn(void *arg, hwc_symbols *syms, const struct hwc_sample *smp,
		       const struct pmcrec *pmc);

/* Call FN on each sample of the PMCs S found in the log (those of thread
 * -i only), with symbols made with FLAGS (HWC_SYM_*), their names
 * demangled as in every view.  0, or an exit status after saying why. */
static int each_sample(const char *log, const struct scan *sc, unsigned flags, sample_fn *fn,
		       void *arg)
{
	const struct scan s = *sc;
	int rc = 0;
	hwc_perfdata *f = NULL;
	hwc_symbols *syms = NULL;
	if (hwc_perfdata_open(&f, log) || hwc_symbols_new(&syms, flags | HWC_SYM_DEMANGLE) ||
	    hwc_symbols_set_root(syms, pmcstat_opts.fsroot) || hwc_symbols_load(syms, f)) {
		fprintf(stderr, "pmcstat: ERROR: %s: %s\n", log, hwc_errdetail());
		rc = EX_DATAERR;
		goto out;
	}
	struct hwc_perfdata_record rec;
	while (hwc_perfdata_next(f, &rec) > 0) {
		if (rec.hdr->type != PERF_RECORD_SAMPLE || !rec.attr)
			continue;
		const struct pmcrec *pmc = NULL;
		for (size_t i = 0; i < s.n && !pmc; i++)
			if (of_pmc(&s.p[i], &rec))
				pmc = &s.p[i];
		struct hwc_sample smp;
		if (pmc && hwc_sample_parse(rec.hdr, &rec.attr->attr, &smp) == 0)
			fn(arg, syms, &smp, pmc);
	}
out:
	hwc_symbols_free(syms);
	hwc_perfdata_close(f);
	return rc;
}

static bool kernel_sample(const struct hwc_sample *smp)
{
	return (smp->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
}

/* ------------------------------------------------------------ gprof */

struct hist {
	const struct pmcrec *pmc;
	const char *dso;
	uint64_t *offs;
	size_t n, cap;
};

struct gprof {
	struct hist *hs;
	size_t nh;
	uint64_t total, unclaimed;
};

static bool time_event(const char *name)
{
	return strcmp(name, "cpu-clock") == 0 || strcmp(name, "task-clock") == 0;
}

/* Write a gmon.out in the GNU format gprof(1) reads on Linux: histograms
 * of the sampled addresses (ELF virtual addresses of the object), no call
 * arcs, as FreeBSD's pmcstat writes.  GNU's buckets are 16 bits wide; gprof
 * adds up histograms of one range, so with -e a bucket past 65535 samples
 * continues in further histograms where FreeBSD writes 32-bit buckets. */
static int write_gmon(const struct hist *h, const char *path)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < h->n; i++) {
		lo = h->offs[i] < lo ? h->offs[i] : lo;
		hi = h->offs[i] > hi ? h->offs[i] : hi;
	}
	uint64_t bin = 4; /* bytes per bucket, as glibc's HISTFRACTION 2 */
	while ((hi - lo) / bin + 1 > (1u << 20))
		bin *= 2;
	lo -= lo % bin;
	size_t nbins = (size_t)((hi - lo) / bin + 1);
	uint64_t *counts = calloc(nbins, sizeof(*counts));
	uint16_t *part = calloc(nbins, sizeof(*part));
	if (!counts || !part) {
		free(counts);
		free(part);
		return -1;
	}
	uint64_t most = 0;
	for (size_t i = 0; i < h->n; i++) {
		uint64_t *c = &counts[(h->offs[i] - lo) / bin];
		most = ++*c > most ? *c : most;
	}
	hwc_output *o;
	FILE *f = NULL;
	if (hwc_output_create(&o, path, 0) || !(f = hwc_output_stream(o))) {
		fprintf(stderr, "pmcstat: ERROR: %s\n", hwc_errdetail());
		hwc_output_discard(o);
		free(counts);
		free(part);
		return -1;
	}
	struct gmon_hdr gh = {.cookie = {'g', 'm', 'o', 'n'}};
	int32_t version = GMON_VERSION;
	memcpy(gh.version, &version, sizeof(version));
	struct gmon_hist_hdr hh;
	memset(&hh, 0, sizeof(hh));
	uint64_t high = lo + nbins * bin;
	uint32_t size = (uint32_t)nbins;
	/* Each sample counts as the sampling period, in seconds for clocks. */
	bool t = time_event(h->pmc->name) && h->pmc->rate;
	uint32_t rate = t ? (uint32_t)(1000000000ULL / h->pmc->rate) : 1;
	memcpy(hh.low_pc, &lo, sizeof(hh.low_pc));
	memcpy(hh.high_pc, &high, sizeof(hh.high_pc));
	memcpy(hh.hist_size, &size, 4);
	memcpy(hh.prof_rate, &rate, 4);
	snprintf(hh.dimen, sizeof(hh.dimen), "%s", t ? "seconds" : "samples");
	hh.dimen_abbrev = 's';
	fwrite(&gh, sizeof(gh), 1, f);
	/* Without -e a bucket stops at 65535, as FreeBSD's 16-bit ones. */
	uint64_t parts = pmcstat_opts.wide ? (most + UINT16_MAX - 1) / UINT16_MAX : 1;
	for (uint64_t p = 0; p < parts; p++) {
		for (size_t i = 0; i < nbins; i++) {
			uint64_t left = counts[i] > p * UINT16_MAX ? counts[i] - p * UINT16_MAX : 0;
			part[i] = (uint16_t)(left < UINT16_MAX ? left : UINT16_MAX);
		}
		unsigned char tag = GMON_TAG_TIME_HIST;
		fwrite(&tag, 1, 1, f);
		fwrite(&hh, sizeof(hh), 1, f);
		fwrite(part, sizeof(*part), nbins, f);
	}
	free(counts);
	free(part);
	if (hwc_output_commit(o)) {
		fprintf(stderr, "pmcstat: ERROR: %s\n", hwc_errdetail());
		return -1;
	}
	return 0;
}

static int mkdir_p(const char *path)
{
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

static void gprof_sample(void *arg, hwc_symbols *syms, const struct hwc_sample *smp,
			 const struct pmcrec *pmc)
{
	struct gprof *g = arg;
	g->total++;
	bool kernel = kernel_sample(smp);
	const struct hwc_location *l = hwc_symbols_resolve(syms, smp->pid, smp->time, smp->ip, kernel);
	if (kernel || l->sym->dso[0] != '/' || strstr(l->sym->dso, " (deleted)")) {
		g->unclaimed++; /* no executable object gprof could read */
		return;
	}
	/* PMCs of one event (one per CPU with -S) make one profile.  The DSO
	 * names outlive the symbols. */
	size_t k = 0;
	while (k < g->nh && !(strcmp(g->hs[k].pmc->name, pmc->name) == 0 &&
			      strcmp(g->hs[k].dso, l->sym->dso) == 0))
		k++;
	if (k == g->nh) {
		g->hs = xrealloc(g->hs, (g->nh + 1) * sizeof(*g->hs));
		g->hs[g->nh++] = (struct hist){pmc, xstrdup(l->sym->dso), NULL, 0, 0};
	}
	push_u64(&g->hs[k].offs, &g->hs[k].n, &g->hs[k].cap, l->dso_offset);
}

int pmcstat_gprof(const char *log, const char *dir, int verbosity, FILE *out, FILE *map)
{
	struct scan s = {0};
	int rc = scan_log(log, &s);
	struct gprof g = {0};
	if (!rc)
		rc = each_sample(log, &s, 0, gprof_sample, &g);
	for (size_t k = 0; k < g.nh && !rc; k++) {
		struct hist *hs = g.hs;
		char path[4096];
		const char *base = rp_dso_base(hs[k].dso);
		/* Objects of one name in different places: base.gmon, base.1.gmon, ... */
		int same = 0;
		for (size_t j = 0; j < k; j++)
			same += strcmp(hs[j].pmc->name, hs[k].pmc->name) == 0 &&
				strcmp(rp_dso_base(hs[j].dso), base) == 0;
		snprintf(path, sizeof(path), "%s/%s", dir, hs[k].pmc->name);
		if (mkdir_p(path) != 0) {
			fprintf(stderr, "pmcstat: ERROR: cannot create \"%s\": %s\n", path,
				strerror(errno));
			rc = EX_CANTCREAT;
			continue;
		}
		if (same)
			snprintf(path, sizeof(path), "%s/%s/%s.%d.gmon", dir, hs[k].pmc->name, base, same);
		else
			snprintf(path, sizeof(path), "%s/%s/%s.gmon", dir, hs[k].pmc->name, base);
		if (write_gmon(&hs[k], path) != 0) { /* it said why */
			rc = EX_CANTCREAT;
			continue;
		}
		if (map)
			fprintf(map, "%s %s\n", path, hs[k].dso);
		if (verbosity > 2)
			fprintf(out, "%s -> %s (%zu samples)\n", hs[k].dso, path, hs[k].n);
	}
	if (!rc && verbosity > 1)
		fprintf(out, "CONVERSION STATISTICS:\n #samples/total %" PRIu64 "\n"
			     " #samples/unclaimed %" PRIu64 "\n",
			g.total, g.unclaimed);
	for (size_t k = 0; k < g.nh; k++) {
		free(g.hs[k].offs);
		free((char *)g.hs[k].dso);
	}
	free(g.hs);
	scan_free(&s);
	return rc;
}

/* ------------------------------------------------------------ call graphs */

static int by_samples(const void *a, const void *b)
{
	const struct rp_node *x = *(const struct rp_node *const *)a;
	const struct rp_node *y = *(const struct rp_node *const *)b;
	return x->total_samples < y->total_samples ? 1 : x->total_samples > y->total_samples ? -1 : 0;
}

/* The children of N, most samples first (malloc'ed). */
static struct rp_node **sorted_children(const struct rp_node *n, size_t *count)
{
	size_t k = 0;
	for (const struct rp_node *c = n->child; c; c = c->sibling)
		k++;
	struct rp_node **v = xrealloc(NULL, (k ? k : 1) * sizeof(*v));
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
	struct rp_node **v = sorted_children(n, &k);
	for (size_t i = 0; i < k; i++)
		cg_node(out, v[i], depth + 1, n->total_samples, maxdepth, last_dso);
	free(v);
}

int pmcstat_callgraph(const char *log, FILE *out, int depth)
{
	struct scan s = {0};
	int rc = scan_log(log, &s);
	for (size_t i = 0; i < s.n && !rc; i++) {
		if (s.p[i].n == 0)
			continue;
		struct rp_report r = {0};
		r.o = (struct rp_opts){.prog = "pmcstat", .input = log, .want = of_pmc,
				       .want_arg = &s.p[i], .root = pmcstat_opts.fsroot,
				       .leaf_addr = pmcstat_opts.leaf_addr || pmcstat_opts.leaf_offset};
		if (rp_load(&r)) {
			rp_free(&r);
			rc = EX_DATAERR;
			break;
		}
		fprintf(out, "@ %s [%" PRIu64 " samples]\n\n", s.p[i].name, r.croot.total_samples);
		size_t k;
		struct rp_node **v = sorted_children(&r.croot, &k);
		for (size_t j = 0; j < k; j++) {
			const char *last = NULL;
			cg_node(out, v[j], 0, r.croot.total_samples, depth, &last);
			fputc('\n', out);
		}
		free(v);
		rp_free(&r);
	}
	scan_free(&s);
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

static uint64_t str_hash(const char *p)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

static uint64_t ct_fn_hash(const void *e)
{
	const struct ct_fn *f = e;
	return str_hash(f->dso) * 31 ^ str_hash(f->name) ^ f->start;
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
		oom();
	c->dso = xstrdup(key.dso);
	c->name = xstrdup(name);
	c->start = key.start;
	c->self = xrealloc(NULL, t->npmc * sizeof(*c->self));
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
		oom();
	a->caller = caller;
	a->callee = callee;
	a->samples = xrealloc(NULL, t->npmc * sizeof(*a->samples));
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
		oom();
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
	int rc = scan_log(log, &s);
	struct calltree t = {.npmc = s.n};
	uint64_t *summary = xrealloc(NULL, (s.n ? s.n : 1) * sizeof(*summary));
	for (size_t i = 0; i < s.n && !rc; i++) {
		summary[i] = 0;
		if (s.p[i].n == 0)
			continue;
		struct rp_report r = {0};
		r.o = (struct rp_opts){.prog = "pmcstat", .input = log, .want = of_pmc,
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
			oom();
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
	scan_free(&s);
	if (!rc && out_flush(out))
		rc = EX_IOERR;
	return rc;
}

/* ------------------------------------------------------------ annotate */

struct annotate {
	FILE *out;
	bool callchains;
};

static void annotate_sample(void *arg, hwc_symbols *syms, const struct hwc_sample *smp,
			    const struct pmcrec *pmc)
{
	(void)pmc;
	const struct annotate *a = arg;
	bool kernel = kernel_sample(smp);
	uint64_t one = smp->ip;
	const uint64_t *ips = &one;
	size_t n = 1;
	if (a->callchains && (smp->sample_type & PERF_SAMPLE_CALLCHAIN)) {
		ips = smp->callchain;
		n = smp->nr_callchain;
	}
	size_t frame = 0;
	for (size_t i = 0; i < n; i++) {
		if (ips[i] >= PERF_CONTEXT_MAX) {
			kernel = ips[i] == PERF_CONTEXT_KERNEL || ips[i] == PERF_CONTEXT_GUEST_KERNEL;
			continue;
		}
		/* A return address: its call is the byte before. */
		uint64_t at = frame++ ? ips[i] - 1 : ips[i];
		const struct hwc_location *l = hwc_symbols_resolve(syms, smp->pid, smp->time, at, kernel);
		uint64_t addr = l->dso_offset + (ips[i] - at);
		if (!a->callchains) {
			if (l->sym->known) /* FreeBSD leaves out what no function covers */
				fprintf(a->out, "%#" PRIx64 " %s %#" PRIx64 " %#" PRIx64 "\n", addr,
					l->sym->name, l->sym->start, l->sym->start + l->sym->size);
			return;
		}
		if (l->sym->known)
			fprintf(a->out, "%#" PRIx64 " %s %s:%u\n", addr, l->sym->name,
				l->file ? l->file : "??", l->file ? l->line : 0);
		else
			fprintf(a->out, "%#" PRIx64 " <unknown> ??:0\n", addr);
	}
	if (a->callchains)
		fputs("--\n", a->out);
}

int pmcstat_annotate(const char *log, FILE *out, bool callchains)
{
	struct scan s = {0};
	int rc = scan_log(log, &s);
	struct annotate a = {out, callchains};
	if (!rc)
		rc = each_sample(log, &s, callchains ? HWC_SYM_SRCLINE : 0, annotate_sample, &a);
	scan_free(&s);
	if (!rc && out_flush(out))
		rc = EX_IOERR;
	return rc;
}

/* ------------------------------------------------------------ top */

struct top_sel {
	uint64_t since;
};

static bool top_want(void *arg, const struct hwc_perfdata_record *rec)
{
	const struct top_sel *t = arg;
	if (rec->offset < t->since || !(rec->attr->attr.sample_period || rec->attr->attr.freq))
		return false;
	struct hwc_sample smp;
	return !pmcstat_opts.has_tid || (hwc_sample_parse(rec->hdr, &rec->attr->attr, &smp) == 0 &&
					 (int)smp.tid == pmcstat_opts.tid);
}

/* A sampled function as top mode names it: -A its address, -I the
 * function plus the offset of the address, else the function. */
static void top_name(const struct rp_func *f, char *buf, size_t size)
{
	if (f->at_addr && (pmcstat_opts.leaf_addr || !f->sym->known))
		snprintf(buf, size, "%#" PRIx64, f->addr);
	else if (f->at_addr)
		snprintf(buf, size, "%s+%#" PRIx64, f->sym->name, f->addr - f->sym->start);
	else
		rp_func_name(f, buf, size);
}

int pmcstat_top(const char *log, FILE *out, uint64_t *since, bool clear, int width)
{
	struct top_sel sel = {*since};
	struct rp_report r = {0};
	r.o = (struct rp_opts){.prog = "pmcstat", .input = log, .quiet = true, .want = top_want,
			       .want_arg = &sel, .root = pmcstat_opts.fsroot,
			       .leaf_addr = pmcstat_opts.leaf_addr || pmcstat_opts.leaf_offset};
	if (rp_load(&r)) {
		rp_free(&r);
		return EX_DATAERR;
	}
	uint64_t off, size;
	hwc_perfdata_data_section(r.file, &off, &size);
	*since = off + size;
	/* The sampled events, merged as FreeBSD's top mode merges PMCs. */
	char names[256] = "";
	for (size_t i = 0; i < hwc_perfdata_nattrs(r.file); i++) {
		const struct hwc_perfdata_attr *a = hwc_perfdata_attr(r.file, i);
		if (!(a->attr.sample_period || a->attr.freq) || strstr(names, a->name) ||
		    (a->attr.type == PERF_TYPE_SOFTWARE &&
		     (a->attr.config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
		      a->attr.config == PERF_COUNT_SW_BPF_OUTPUT)))
			continue;
		size_t len = strlen(names);
		snprintf(names + len, sizeof(names) - len, "%s%s", len ? "," : "", a->name);
	}
	uint64_t n = r.croot.total_samples, unresolved = 0;
	size_t k;
	struct rp_node **v = sorted_children(&r.croot, &k);
	for (size_t i = 0; i < k; i++)
		unresolved += v[i]->func->sym->known ? 0 : v[i]->total_samples;
	if (clear)
		fputs("\033[H\033[2J", out);
	fprintf(out, "PMC: [%s] Samples: %" PRIu64 " (100.0%%) , %" PRIu64 " unresolved\n\n", names,
		n, unresolved);
	fprintf(out, "%5.5s %-10.10s %-30.30s %s\n", "%SAMP", "IMAGE", "FUNCTION", "CALLERS");
	for (size_t i = 0; i < k; i++) {
		double pct = n ? 100.0 * (double)v[i]->total_samples / (double)n : 0;
		if (pct < pmcstat_opts.threshold)
			break;
		char name[512];
		top_name(v[i]->func, name, sizeof(name));
		fprintf(out, "%5.1f %-10.10s %-30.30s", pct, rp_dso_base(v[i]->func->sym->dso), name);
		size_t kc;
		struct rp_node **c = sorted_children(v[i], &kc);
		int room = width - 48;
		for (size_t j = 0; j < kc; j++) {
			char caller[512], item[600];
			rp_func_name(c[j]->func, caller, sizeof(caller));
			double cp = 100.0 * (double)c[j]->total_samples / (double)v[i]->total_samples;
			if (cp < pmcstat_opts.threshold)
				break;
			int len = kc > 1 ? snprintf(item, sizeof(item), " %s:%.1f", caller, cp)
					 : snprintf(item, sizeof(item), " %s", caller);
			if (len > room) {
				fputs(" ...", out);
				break;
			}
			fputs(item, out);
			room -= len;
		}
		free(c);
		fputc('\n', out);
	}
	free(v);
	rp_free(&r);
	out_flush(out);
	return 0;
}
