/* pmcstat -g: gprof(1) profiles of the log's samples, one per event and
 * executable object. */
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <hwc/output.h>
#include <sys/gmon_out.h>
#include <sys/stat.h>

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
	bool kernel = pmcstat_kernel_sample(smp);
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
		g->hs = pmcstat_xrealloc(g->hs, (g->nh + 1) * sizeof(*g->hs));
		g->hs[g->nh++] = (struct hist){pmc, pmcstat_xstrdup(l->sym->dso), NULL, 0, 0};
	}
	pmcstat_push_u64(&g->hs[k].offs, &g->hs[k].n, &g->hs[k].cap, l->dso_offset);
}

int pmcstat_gprof(const char *log, const char *dir, int verbosity, FILE *out, FILE *map)
{
	struct scan s = {0};
	int rc = pmcstat_scan_log(log, &s);
	struct gprof g = {0};
	if (!rc)
		rc = pmcstat_each_sample(log, &s, 0, gprof_sample, &g);
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
	pmcstat_scan_free(&s);
	return rc;
}

