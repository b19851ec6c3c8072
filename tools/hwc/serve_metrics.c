/* hwc serve's /metrics: the sources (counters on every CPU, of all tasks
 * or of one cgroup each), the cgroups found again as scrapes come, and the
 * page in Prometheus' text format or OpenMetrics, built once for the
 * scrapes that wait for it. */
#include "serve.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

static long open_fds(void)
{
	/* Since Linux 6.2 the directory's size is the count: listing
	 * thousands of descriptors of cgroups at every scrape is not free. */
	struct stat st;
	if (stat("/proc/self/fd", &st) == 0 && st.st_size > 0)
		return (long)st.st_size;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	long n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* not the directory's own */
}

/* ------------------------------------------------------------ sources */

/* A label value as the text formats want it, appended to F: \, " and
 * newline escaped. */
static void put_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

/* SRC's labels of each event; false when out of memory. */
bool serve_make_labels(struct serve *s, struct source *src)
{
	size_t nev = hwc_evlist_size(s->list);
	if (!(src->labels = calloc(nev, sizeof(*src->labels))))
		return false;
	for (size_t e = 0; e < nev; e++) {
		size_t len;
		FILE *f = open_memstream(&src->labels[e], &len);
		if (!f)
			return false;
		fputs("event=\"", f);
		put_label(f, hwc_evlist_event(s->list, e)->name);
		if (src->cgroup) {
			fputs("\",cgroup=\"", f);
			put_label(f, src->cgroup);
		}
		fputc('"', f);
		if (fclose(f))
			return false;
	}
	return true;
}

void serve_source_close(struct serve *s, struct source *src)
{
	hwc_counters_close(src->c);
	for (size_t e = 0; src->labels && e < hwc_evlist_size(s->list); e++)
		free(src->labels[e]);
	free(src->labels);
	free(src->cgroup);
}

/* ------------------------------------------------------------ cgroups */

/* Counters on every CPU for cgroup PATH ("/a/b") as a new source, unless
 * --max-cgroups or the descriptors run out: then it is counted in skipped. */
static void add_cgroup(struct serve *s, const char *path)
{
	const char *why = NULL;
	int err = 0;
	char *name = NULL;
	hwc_counters *c = NULL;
	struct hwc_target t = s->target;
	t.kind = HWC_TARGET_CGROUP;
	t.cgroup = path + 1;
	/* At most this many descriptors: each event on each CPU, and the
	 * cgroup's directory per event. */
	long need = (long)(hwc_evlist_size(s->list) * (hwc_counters_ninstances(s->src[0].c) + 1));
	if (s->nsrc - 1 >= (size_t)s->max_cgroups) {
		why = "--max-cgroups is reached";
	} else if (need > s->fds_free) {
		why = "the descriptor limit (RLIMIT_NOFILE) is near; raise it (LimitNOFILE=) or lower "
		      "--max-cgroups";
	} else if (s->nsrc == s->cap) {
		struct source *src = realloc(s->src, 2 * s->cap * sizeof(*src));
		if (src) {
			s->src = src;
			s->cap *= 2;
		}
	}
	if (!why && (s->nsrc == s->cap || !(name = strdup(path))))
		why = "out of memory";
	else if (!why && ((err = hwc_counters_open(&c, s->list, &t)) || (err = hwc_counters_start(c)))) {
		why = hwc_errdetail();
		if (c)
			hwc_counters_close(c);
		if (err == -ENOENT) { /* removed while we looked */
			free(name);
			return;
		}
	}
	if (why) {
		free(name);
		s->skipped++;
		if (!s->said_skipped)
			serve_log("not counting cgroup %s: %s (hwc_cgroups_skipped counts those left out)", path,
				why);
		s->said_skipped = true;
		return;
	}
	struct source src = {.cgroup = name, .c = c, .seen = true};
	if (!serve_make_labels(s, &src)) {
		serve_source_close(s, &src);
		s->skipped++;
		return;
	}
	s->fds_free -= need;
	s->src[s->nsrc++] = src;
}

static bool cgroup_wanted(const struct serve *s, const char *path)
{
	for (size_t i = 0; i < s->nglobs; i++)
		if (fnmatch(s->globs[i], path + 1, FNM_PATHNAME) == 0)
			return true;
	return false;
}

/* The cgroups below directory DIR (PATH from the root: "" for the root). */
static void walk_cgroups(struct serve *s, const char *dir, const char *path)
{
	DIR *d = opendir(dir);
	if (!d)
		return; /* removed while we looked */
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		char subdir[4096], sub[4096];
		if (snprintf(subdir, sizeof(subdir), "%s/%s", dir, de->d_name) >= (int)sizeof(subdir) ||
		    snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= (int)sizeof(sub))
			continue;
		if (cgroup_wanted(s, sub)) {
			size_t k;
			for (k = 1; k < s->nsrc && strcmp(s->src[k].cgroup, sub) != 0; k++)
				;
			if (k < s->nsrc)
				s->src[k].seen = true;
			else
				add_cgroup(s, sub);
		}
		walk_cgroups(s, subdir, sub);
	}
	closedir(d);
}

/* Open counters for the matching cgroups not yet counted, close those of
 * the cgroups gone: their series go with them.  By the builder. */
void serve_scan_cgroups(struct serve *s)
{
	char root[4096];
	if (!s->nglobs || hwc_cgroup_path("", root, sizeof(root)))
		return;
	s->scanned = serve_now_s();
	s->skipped = 0;
	/* Descriptors are left for connections (64) and a profile (one per CPU). */
	struct rlimit rl;
	long reserve = 100 + 2 * (long)hwc_counters_ninstances(s->src[0].c);
	s->fds_free = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
			      ? (long)rl.rlim_cur - open_fds() - reserve
			      : LONG_MAX;
	for (size_t k = 1; k < s->nsrc; k++)
		s->src[k].seen = false;
	walk_cgroups(s, root, "");
	size_t kept = 1;
	for (size_t k = 1; k < s->nsrc; k++) {
		if (s->src[k].seen) {
			s->src[kept++] = s->src[k];
			continue;
		}
		serve_source_close(s, &s->src[k]);
	}
	s->nsrc = kept;
	if (!s->skipped) /* the next one left out is said again */
		s->said_skipped = false;
}

/* ------------------------------------------------------------ /metrics */

/* Prometheus 0.0.4 names a counter's family NAME_total; OpenMetrics NAME,
 * its samples NAME_total. */
static void family(FILE *f, bool om, const char *name, const char *type, const char *help)
{
	const char *suffix = strcmp(type, "counter") == 0 && !om ? "_total" : "";
	fprintf(f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
}

/* Which value of a struct hwc_value a family shows. */
enum column { RAW, ENABLED, RUNNING };

/* V in decimal at P; returns the end. */
static char *put_u64(char *p, uint64_t v)
{
	char digits[20];
	int n = 0;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = digits[--n];
	return p;
}

/* A series of LABELS (and cpu="CPU" when CPU >= 0).  Written without
 * printf, whose parsing was a fifth of a scrape of many cgroups; seconds
 * from whole nanoseconds, exactly. */
static void write_sample(FILE *f, const char *name, const char *labels, int cpu, enum column col,
			 const struct hwc_value *v)
{
	char tail[64], *p = tail;
	fputs_unlocked(name, f);
	fputs_unlocked("_total{", f);
	fputs_unlocked(labels, f);
	if (cpu >= 0) {
		p = stpcpy(p, ",cpu=\"");
		p = put_u64(p, (uint64_t)cpu);
		*p++ = '"';
	}
	p = stpcpy(p, "} ");
	if (col == RAW) {
		p = put_u64(p, v->raw);
	} else {
		uint64_t ns = col == ENABLED ? v->enabled : v->running;
		p = put_u64(p, ns / 1000000000);
		*p++ = '.';
		char frac[20], *e = put_u64(frac, ns % 1000000000 + 1000000000); /* "1" and 9 digits */
		p = mempcpy(p, frac + 1, (size_t)(e - frac - 1));
	}
	*p++ = '\n';
	fwrite_unlocked(tail, 1, (size_t)(p - tail), f);
}

/* A series per CPU for all tasks; per cgroup, the sum over CPUs (the
 * seconds too: CPU-seconds). */
static void write_counters(struct serve *s, FILE *f, bool om, enum column col, const char *name,
			   const char *help)
{
	family(f, om, name, "counter", help);
	size_t nev = hwc_evlist_size(s->list);
	for (size_t k = 0; k < s->nsrc; k++) {
		hwc_counters *c = s->src[k].c;
		for (size_t e = 0; e < nev; e++) {
			if (hwc_counters_event_status(c, e))
				continue;
			const char *labels = s->src[k].labels[e];
			struct hwc_value sum = {0}, v;
			for (size_t i = 0; i < hwc_counters_ninstances(c); i++) {
				if (hwc_counters_value(c, i, e, &v))
					continue;
				if (!s->src[k].cgroup) {
					write_sample(f, name, labels, hwc_counters_instance_cpu(c, i), col, &v);
					continue;
				}
				sum.raw += v.raw;
				sum.enabled += v.enabled;
				sum.running += v.running;
			}
			if (s->src[k].cgroup)
				write_sample(f, name, labels, -1, col, &sum);
		}
	}
}

void serve_page_text_unref(void *cls)
{
	struct page_text *text = cls;
	if (text && atomic_fetch_sub(&text->refs, 1) == 1)
		free(text);
}

/* Read the counters and write the page of format OM into P; under
 * page_lock, by the builder.  0, or -1 with the reason in DETAIL. */
static int build_page(struct serve *s, bool om, struct page *p, char *detail, size_t size)
{
	double t0 = serve_now_s();
	if (t0 - s->scanned >= 1)
		serve_scan_cgroups(s);
	for (size_t k = 0; k < s->nsrc; k++)
		if (hwc_counters_read(s->src[k].c)) {
			snprintf(detail, size, "reading the counters: %s", hwc_errdetail());
			return -1;
		}
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	if (!f) {
		snprintf(detail, size, "out of memory");
		return -1;
	}
	write_counters(s, f, om, RAW, "hwc_events",
		       "Events counted since hwc serve started, per event and CPU or cgroup (raw: "
		       "not scaled for multiplexing).");
	write_counters(s, f, om, ENABLED, "hwc_event_enabled_seconds",
		       "Seconds each event was enabled (running/enabled corrects for multiplexing).");
	write_counters(s, f, om, RUNNING, "hwc_event_running_seconds",
		       "Seconds each event was on a hardware counter.");
	if (s->nglobs) {
		family(f, om, "hwc_cgroups", "gauge", "Cgroups matching --cgroups that are counted.");
		fprintf(f, "hwc_cgroups %zu\n", s->nsrc - 1);
		family(f, om, "hwc_cgroups_skipped", "gauge",
		       "Cgroups matching --cgroups left out (--max-cgroups, descriptors, memory).");
		fprintf(f, "hwc_cgroups_skipped %zu\n", s->skipped);
	}
	family(f, om, "hwc_scrape_errors", "counter", "Scrapes that failed to read the counters.");
	fprintf(f, "hwc_scrape_errors_total %" PRIuFAST64 "\n", (uint_fast64_t)s->scrape_errors);
	struct rlimit rl;
	family(f, om, "process_open_fds", "gauge", "Number of open file descriptors.");
	fprintf(f, "process_open_fds %ld\n", open_fds());
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		family(f, om, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
		fprintf(f, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
	}
	family(f, om, "hwc_scrape_duration_seconds", "gauge",
	       "Seconds the last scrape took to read the counters and write the page.");
	fprintf(f, "hwc_scrape_duration_seconds %.6f\n", serve_now_s() - t0);
	if (om)
		fputs("# EOF\n", f);
	if (fclose(f) != 0) {
		free(body);
		snprintf(detail, size, "out of memory");
		return -1;
	}
	struct page_text *text = malloc(sizeof(*text) + len);
	if (!text) {
		free(body);
		snprintf(detail, size, "out of memory");
		return -1;
	}
	atomic_init(&text->refs, 1); /* the page's */
	text->len = len;
	memcpy(text->body, body, len);
	free(body);
	pthread_mutex_lock(&s->page_lock);
	serve_page_text_unref(p->text);
	*p = (struct page){.text = text, .read = t0};
	pthread_mutex_unlock(&s->page_lock);
	return 0;
}

/* A page whose counters were read after this scrape came is as good as a
 * new one: scrapes that came while another read them (parallel scrapers)
 * take its page, and the counters are read once for all of them.  A
 * scrape waits for at most the build under way and the next one. */
enum MHD_Result serve_metrics(struct serve *s, struct MHD_Connection *conn)
{
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	bool om = accept && strstr(accept, "application/openmetrics-text");
	double came = serve_now_s();
	char detail[1024];
	struct page *p = &s->pages[om];
	pthread_mutex_lock(&s->page_lock);
	while (!p->text || p->read < came) {
		if (s->building) {
			pthread_cond_wait(&s->page_done, &s->page_lock);
			continue;
		}
		s->building = true;
		pthread_mutex_unlock(&s->page_lock);
		int err = build_page(s, om, p, detail, sizeof(detail));
		pthread_mutex_lock(&s->page_lock);
		s->building = false;
		pthread_cond_broadcast(&s->page_done);
		if (err) {
			s->scrape_errors++;
			pthread_mutex_unlock(&s->page_lock);
			serve_log("%s", detail);
			return serve_reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s\n", detail);
		}
	}
	struct page_text *text = p->text;
	atomic_fetch_add(&text->refs, 1); /* the reply's, until it is sent */
	pthread_mutex_unlock(&s->page_lock);
	struct MHD_Response *r =
		MHD_create_response_from_buffer_with_free_callback_cls(text->len, text->body, serve_page_text_unref, text);
	if (!r)
		serve_page_text_unref(text);
	return serve_queue(conn, MHD_HTTP_OK,
		     om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
			: "text/plain; version=0.0.4; charset=utf-8",
		     r, NULL, NULL);
}

