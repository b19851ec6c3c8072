/* pmcstat's log side: what its views of the log share (the log read with
 * pmclog(3): its PMCs and which samples are whose, as each record carries
 * the file offset of the sample it stands for), the log as text (-R) and
 * the sampled addresses (-m, -a).  The other views: gprof.c (-g),
 * callgraph.c (-G, -F), top.c (-T).  Symbols and the aggregated profile
 * come from libhwc and tools/profile, which hwc report shares. */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <hwc/perfdata.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "out.h"

struct pmcstat_opts pmcstat_opts = {.threshold = DEFAULT_TOP_THRESHOLD};

_Noreturn void pmcstat_oom(void)
{
	fprintf(stderr, "pmcstat: ERROR: out of memory\n");
	exit(EX_SOFTWARE);
}

void *pmcstat_xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size);
	if (!q)
		pmcstat_oom();
	return q;
}

char *pmcstat_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(pmcstat_xrealloc(NULL, n), s, n);
}

/* Append X to the array *V of *N (room for *CAP). */
void pmcstat_push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		*v = pmcstat_xrealloc(*v, *cap * sizeof(**v));
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
		s->p = pmcstat_xrealloc(s->p, (s->n + 1) * sizeof(*s->p));
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
	pmcstat_push_u64(&r->offs, &r->n, &r->cap, (uint64_t)ev->pl_offset);
}

int pmcstat_scan_log(const char *log, struct scan *s)
{
	return each_event(log, scan_event, s);
}

void pmcstat_scan_free(struct scan *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->p[i].offs);
	free(s->p);
}

/* Is the sample at REC's offset one of the PMC's? */
bool pmcstat_of_pmc(void *arg, const struct hwc_perfdata_record *rec)
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

/* Call FN on each sample of the PMCs S found in the log (those of thread
 * -i only), with symbols made with FLAGS (HWC_SYM_*), their names
 * demangled as in every view.  0, or an exit status after saying why. */
int pmcstat_each_sample(const char *log, const struct scan *sc, unsigned flags, sample_fn *fn,
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
			if (pmcstat_of_pmc(&s.p[i], &rec))
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

bool pmcstat_kernel_sample(const struct hwc_sample *smp)
{
	return (smp->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
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
	bool kernel = pmcstat_kernel_sample(smp);
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
	int rc = pmcstat_scan_log(log, &s);
	struct annotate a = {out, callchains};
	if (!rc)
		rc = pmcstat_each_sample(log, &s, callchains ? HWC_SYM_SRCLINE : 0, annotate_sample, &a);
	pmcstat_scan_free(&s);
	if (!rc && out_flush(out))
		rc = EX_IOERR;
	return rc;
}

