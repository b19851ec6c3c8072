/* pmcstat -T: the top display, hot functions first with their callers. */
#include "log.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "out.h"

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
	struct rp_node **v = pmcstat_sorted_children(&r.croot, &k);
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
		struct rp_node **c = pmcstat_sorted_children(v[i], &kc);
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
