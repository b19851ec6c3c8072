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

static void *xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size);
	if (!q) {
		fprintf(stderr, "pmcstat: ERROR: out of memory\n");
		exit(EX_SOFTWARE);
	}
	return q;
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
	if (ev->pl_type == PMCLOG_TYPE_CALLCHAIN)
		id = ev->pl_u.pl_cc.pl_pmcid;
	else if (ev->pl_type == PMCLOG_TYPE_PCSAMPLE)
		id = ev->pl_u.pl_s.pl_pmcid;
	else
		return;
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

/* ------------------------------------------------------------ gprof */

struct hist {
	const struct pmcrec *pmc;
	const char *dso;
	uint64_t *offs;
	size_t n, cap;
};

static bool time_event(const char *name)
{
	return strcmp(name, "cpu-clock") == 0 || strcmp(name, "task-clock") == 0;
}

/* Write a gmon.out in the GNU format gprof(1) reads on Linux: one
 * histogram of the sampled addresses (ELF virtual addresses of the
 * object), no call arcs, as FreeBSD's pmcstat writes. */
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
	uint16_t *counts = calloc(nbins, sizeof(*counts));
	if (!counts)
		return -1;
	for (size_t i = 0; i < h->n; i++) {
		uint16_t *c = &counts[(h->offs[i] - lo) / bin];
		if (*c < UINT16_MAX)
			(*c)++;
	}
	hwc_output *o;
	FILE *f = NULL;
	if (hwc_output_create(&o, path, 0) || !(f = hwc_output_stream(o))) {
		fprintf(stderr, "pmcstat: ERROR: %s\n", hwc_errdetail());
		hwc_output_discard(o);
		free(counts);
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
	unsigned char tag = GMON_TAG_TIME_HIST;
	fwrite(&gh, sizeof(gh), 1, f);
	fwrite(&tag, 1, 1, f);
	fwrite(&hh, sizeof(hh), 1, f);
	fwrite(counts, sizeof(*counts), nbins, f);
	free(counts);
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

int pmcstat_gprof(const char *log, const char *dir, int verbosity, FILE *out, FILE *map)
{
	struct scan s = {0};
	int rc = scan_log(log, &s);
	if (rc)
		return rc;
	hwc_perfdata *f = NULL;
	hwc_symbols *syms = NULL;
	if (hwc_perfdata_open(&f, log) || hwc_symbols_new(&syms, 0) || hwc_symbols_load(syms, f)) {
		fprintf(stderr, "pmcstat: ERROR: %s: %s\n", log, hwc_errdetail());
		rc = EX_DATAERR;
		goto out;
	}
	struct hist *hs = NULL;
	size_t nh = 0;
	uint64_t total = 0, unclaimed = 0;
	struct hwc_perfdata_record rec;
	while (hwc_perfdata_next(f, &rec) > 0) {
		if (rec.hdr->type != PERF_RECORD_SAMPLE || !rec.attr)
			continue;
		const struct pmcrec *pmc = NULL;
		for (size_t i = 0; i < s.n && !pmc; i++)
			if (of_pmc(&s.p[i], &rec))
				pmc = &s.p[i];
		struct hwc_sample smp;
		if (!pmc || hwc_sample_parse(rec.hdr, &rec.attr->attr, &smp))
			continue;
		total++;
		bool kernel = (smp.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
		const struct hwc_location *l = hwc_symbols_resolve(syms, smp.pid, smp.time, smp.ip, kernel);
		if (kernel || l->sym->dso[0] != '/' || strstr(l->sym->dso, " (deleted)")) {
			unclaimed++; /* no executable object gprof could read */
			continue;
		}
		/* PMCs of one event (one per CPU with -S) make one profile. */
		size_t k = 0;
		while (k < nh && !(strcmp(hs[k].pmc->name, pmc->name) == 0 &&
				   strcmp(hs[k].dso, l->sym->dso) == 0))
			k++;
		if (k == nh) {
			hs = xrealloc(hs, (nh + 1) * sizeof(*hs));
			hs[nh++] = (struct hist){pmc, l->sym->dso, NULL, 0, 0};
		}
		push_u64(&hs[k].offs, &hs[k].n, &hs[k].cap, l->dso_offset);
	}
	for (size_t k = 0; k < nh; k++) {
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
	if (verbosity > 1)
		fprintf(out, "CONVERSION STATISTICS:\n #samples/total %" PRIu64 "\n"
			     " #samples/unclaimed %" PRIu64 "\n",
			total, unclaimed);
	for (size_t k = 0; k < nh; k++)
		free(hs[k].offs);
	free(hs);
out:
	hwc_symbols_free(syms);
	hwc_perfdata_close(f);
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
				       .want_arg = &s.p[i]};
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

/* ------------------------------------------------------------ top */

struct top_sel {
	uint64_t since;
};

static bool top_want(void *arg, const struct hwc_perfdata_record *rec)
{
	const struct top_sel *t = arg;
	return rec->offset >= t->since && (rec->attr->attr.sample_period || rec->attr->attr.freq);
}

int pmcstat_top(const char *log, FILE *out, uint64_t *since, bool clear, int width)
{
	struct top_sel sel = {*since};
	struct rp_report r = {0};
	r.o = (struct rp_opts){.prog = "pmcstat", .input = log, .quiet = true, .want = top_want,
			       .want_arg = &sel};
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
		if (pct < DEFAULT_TOP_THRESHOLD)
			break;
		char name[512];
		rp_func_name(v[i]->func, name, sizeof(name));
		fprintf(out, "%5.1f %-10.10s %-30.30s", pct, rp_dso_base(v[i]->func->sym->dso), name);
		size_t kc;
		struct rp_node **c = sorted_children(v[i], &kc);
		int room = width - 48;
		for (size_t j = 0; j < kc; j++) {
			char caller[512], item[600];
			rp_func_name(c[j]->func, caller, sizeof(caller));
			double cp = 100.0 * (double)c[j]->total_samples / (double)v[i]->total_samples;
			if (cp < DEFAULT_TOP_THRESHOLD)
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
