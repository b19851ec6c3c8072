/* hwc serve: an HTTP agent that Prometheus scrapes for counters (/metrics)
 * and profilers scrape for CPU profiles (/debug/pprof/profile), on
 * libmicrohttpd: one thread per connection, so a slow client stalls no
 * other scrape.
 *
 * What is counted is a list of sources, each one hwc_counters opened on
 * every CPU: the first counts all tasks (series per CPU), the others one
 * cgroup each (--cgroups; series summed over CPUs), found again by
 * scan_cgroups() at most once a second as a scrape comes. */
#include "cli.h"
#include "report.h"
#include "serve.h"
#include "stat.h"
#include "top.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_ERROR = 1, EXIT_USAGE = 2 };
enum { PROFILE_MAX_SECONDS = 300, PROFILE_DEFAULT_SECONDS = 30, PROFILE_HZ = 997 };
enum { MAX_CGROUPS_DEFAULT = 256 };

static const char usage_text[] =
	"usage: hwc serve [options]\n"
	"\n"
	"Count events on every CPU and serve them over HTTP to Prometheus (/metrics),\n"
	"and CPU profiles to pprof, Parca or Pyroscope (/debug/pprof/profile).\n"
	"\n"
	"  -l, --listen ADDR:PORT    where to listen (default 127.0.0.1:9871; [::1]:PORT\n"
	"                            for IPv6; port 0 picks a free one, named on stderr)\n"
	"  -e, --events SPEC         events to count: comma lists and {groups},\n"
	"                            repeatable; default: hwc stat's default set\n"
	"      --cgroups GLOB        also count each cgroup whose path from the cgroup2\n"
	"                            root matches GLOB (e.g. 'system.slice/*'), summed\n"
	"                            over CPUs; comma lists, repeatable; new and removed\n"
	"                            cgroups are picked up as scrapes come\n"
	"      --max-cgroups N       count at most N cgroups (default 256); the others\n"
	"                            are reported in hwc_cgroups_skipped\n"
	"      --web.config.file FILE  TLS and basic auth, in the format of Prometheus\n"
	"                            exporters (tls_server_config, basic_auth_users);\n"
	"                            SIGHUP reads it again\n"
	"  -h, --help                show this help\n"
	"\n"
	"Endpoints: /metrics, /debug/pprof/, /debug/pprof/profile?seconds=N (1 to 300,\n"
	"default 30; &cgroup=PATH: only that cgroup's tasks, PATH from the cgroup2\n"
	"root), /healthz.  SIGTERM or SIGINT ends it.  See hwc-serve(1).\n";

/* Events counted on every CPU, for one cgroup or (NULL) all tasks. */
struct source {
	char *cgroup;  /* its path from the hierarchy's root, "/a/b" */
	hwc_counters *c;
	char **labels; /* per event: 'event="E"' (and ',cgroup="/a/b"'), escaped once */
	bool seen;     /* found by the scan under way */
};

/* A /metrics page, shared by the replies that send it (no copy of
 * hundreds of KB per scrape); freed with its last reference. */
struct page_text {
	atomic_int refs;
	size_t len;
	char body[];
};

/* The last /metrics page built, per format: scrapes that waited for it
 * while it was built take it as it is. */
struct page {
	struct page_text *text;
	double read; /* CLOCK_MONOTONIC s when its counters were read */
};

struct serve {
	const char **specs;
	size_t nspecs;
	const char *listen, *web_path;
	const char **globs; /* --cgroups, each without a leading '/' */
	size_t nglobs;
	long max_cgroups;
	hwc_evlist *list;
	struct hwc_target target; /* of the per-CPU source */
	struct source *src;
	size_t nsrc, cap;
	double scanned;         /* CLOCK_MONOTONIC s of the last scan of the cgroups */
	size_t skipped;         /* matching cgroups the last scan did not count */
	long fds_free;          /* descriptors the scan under way may still take */
	bool said_skipped;      /* logged since skipped was last 0 */
	/* One scrape at a time reads the counters and builds a page (the
	 * builder); the others wait on page_done for a page read after they
	 * came.  The sources are the builder's alone. */
	pthread_mutex_t page_lock;
	pthread_cond_t page_done;
	bool building;
	struct page pages[2]; /* [OpenMetrics?] */
	pthread_mutex_t profile_lock; /* one profile at a time */
	atomic_uint_fast64_t profile_end; /* CLOCK_MONOTONIC s when the running profile ends */
	atomic_uint_fast64_t scrape_errors;
	atomic_bool stopping;
	atomic_int retiring; /* servers a SIGHUP replaced, still finishing */
	int listen_fd;
	bool ipv6;
};

/* A daemon and the web configuration it was started with: SIGHUP starts a
 * new one on the same socket and retires the old. */
struct server {
	struct serve *s;
	struct web_config *web; /* NULL: plain HTTP, no auth */
	struct MHD_Daemon *d;
	atomic_bool retired; /* replaced: no new connections, none kept alive */
};

/* The connection this thread serves is on a retired server: its replies
 * close it, so that its client comes back to the new one. */
static __thread bool close_after_reply;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_msg(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "hwc serve: %s\n", line);
}

/* ------------------------------------------------------------ replies */

/* Queue R (destroyed here; NULL: out of memory). */
static enum MHD_Result queue(struct MHD_Connection *conn, unsigned code, const char *type, struct MHD_Response *r,
			     const char *hname, const char *hvalue)
{
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (hname)
		MHD_add_response_header(r, hname, hvalue);
	if (close_after_reply)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ok = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, const char *type, char *body,
			     size_t len, const char *hname, const char *hvalue)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r)
		free(body);
	return queue(conn, code, type, r, hname, hvalue);
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned code, const char *fmt, ...)
{
	char *body = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return reply(conn, code, "text/plain; charset=utf-8", body, (size_t)n, NULL, NULL);
}

/* ------------------------------------------------------------ query strings */

struct args {
	const char *const *known; /* the parameters the endpoint takes */
	const char *unknown;      /* the first other one */
	char unknown_copy[64];
};

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	(void)value;
	struct args *a = cls;
	for (const char *const *k = a->known; *k; k++)
		if (strcmp(key, *k) == 0)
			return MHD_YES;
	snprintf(a->unknown_copy, sizeof(a->unknown_copy), "%s", key);
	a->unknown = a->unknown_copy;
	return MHD_NO;
}

/* The name of a query parameter that KNOWN (NULL-terminated) lacks, or NULL. */
static const char *unknown_arg(struct MHD_Connection *conn, const char *const *known, char *buf, size_t size)
{
	struct args a = {.known = known};
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, check_arg, &a);
	if (!a.unknown)
		return NULL;
	snprintf(buf, size, "%s", a.unknown);
	return buf;
}

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
static bool make_labels(struct serve *s, struct source *src)
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

static void source_close(struct serve *s, struct source *src)
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
			log_msg("not counting cgroup %s: %s (hwc_cgroups_skipped counts those left out)", path,
				why);
		s->said_skipped = true;
		return;
	}
	struct source src = {.cgroup = name, .c = c, .seen = true};
	if (!make_labels(s, &src)) {
		source_close(s, &src);
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
static void scan_cgroups(struct serve *s)
{
	char root[4096];
	if (!s->nglobs || hwc_cgroup_path("", root, sizeof(root)))
		return;
	s->scanned = now_s();
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
		source_close(s, &s->src[k]);
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

static void page_text_unref(void *cls)
{
	struct page_text *text = cls;
	if (text && atomic_fetch_sub(&text->refs, 1) == 1)
		free(text);
}

/* Read the counters and write the page of format OM into P; under
 * page_lock, by the builder.  0, or -1 with the reason in DETAIL. */
static int build_page(struct serve *s, bool om, struct page *p, char *detail, size_t size)
{
	double t0 = now_s();
	if (t0 - s->scanned >= 1)
		scan_cgroups(s);
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
	fprintf(f, "hwc_scrape_duration_seconds %.6f\n", now_s() - t0);
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
	page_text_unref(p->text);
	*p = (struct page){.text = text, .read = t0};
	pthread_mutex_unlock(&s->page_lock);
	return 0;
}

/* A page whose counters were read after this scrape came is as good as a
 * new one: scrapes that came while another read them (parallel scrapers)
 * take its page, and the counters are read once for all of them.  A
 * scrape waits for at most the build under way and the next one. */
static enum MHD_Result serve_metrics(struct serve *s, struct MHD_Connection *conn)
{
	const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	bool om = accept && strstr(accept, "application/openmetrics-text");
	double came = now_s();
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
			log_msg("%s", detail);
			return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s\n", detail);
		}
	}
	struct page_text *text = p->text;
	atomic_fetch_add(&text->refs, 1); /* the reply's, until it is sent */
	pthread_mutex_unlock(&s->page_lock);
	struct MHD_Response *r =
		MHD_create_response_from_buffer_with_free_callback_cls(text->len, text->body, page_text_unref, text);
	if (!r)
		page_text_unref(text);
	return queue(conn, MHD_HTTP_OK,
		     om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
			: "text/plain; version=0.0.4; charset=utf-8",
		     r, NULL, NULL);
}

/* ------------------------------------------------------------ /debug/pprof */

/* Sample every CPU for SECONDS with hwc top's sampler into a pprof profile:
 * of every task, or (CGROUP, checked by cgroup_arg()) of that cgroup's. */
static enum MHD_Result serve_profile(struct serve *s, struct MHD_Connection *conn, long seconds,
				     const char *cgroup)
{
	if (pthread_mutex_trylock(&s->profile_lock)) {
		double left = (double)s->profile_end - now_s();
		char retry[32];
		snprintf(retry, sizeof(retry), "%ld", left > 1 ? (long)left + 1 : 1L);
		char *body = NULL;
		int n = asprintf(&body, "a profile is being taken: one at a time; retry in %s s\n", retry);
		if (n < 0)
			return MHD_NO;
		return reply(conn, MHD_HTTP_TOO_MANY_REQUESTS, "text/plain; charset=utf-8", body, (size_t)n,
			     MHD_HTTP_HEADER_RETRY_AFTER, retry);
	}
	double end = now_s() + (double)seconds;
	s->profile_end = (uint_fast64_t)end + 1;
	struct top_opts o = {
		.prog = "serve", .freq = PROFILE_HZ, .callgraph = true, .system = true,
		.t = {.all_cpus = true, .cgroup = cgroup},
	};
	struct top_view v = {0};
	if (top_sample_open(&o, &v)) {
		pthread_mutex_unlock(&s->profile_lock);
		/* The detail of this thread's failure, said in the log too; a
		 * cgroup removed since cgroup_arg() looked is not found. */
		char detail[1024], dir[4096];
		snprintf(detail, sizeof(detail), "%s", hwc_errdetail());
		bool gone = cgroup && hwc_cgroup_path(cgroup, dir, sizeof(dir)) == -ENOENT;
		return reply_text(conn, gone ? MHD_HTTP_NOT_FOUND : MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "cannot sample the CPUs: %s\n", detail);
	}
	for (double t; (t = now_s()) < end && !s->stopping;) {
		int ms = (int)((end - t) * 1000) + 1;
		v.wait(v.state, ms > 100 ? 100 : ms, UINT64_MAX);
	}
	if (!s->stopping)
		v.wait(v.state, 0, UINT64_MAX); /* what the buffers still hold */
	const char *note;
	struct rp_report *r = top_sample_profile(v.state, &note);
	if (note[0])
		log_msg("%s", note);
	uint8_t *buf = NULL;
	size_t len = 0;
	int err = s->stopping ? 0 : rp_pprof_encode(r, &buf, &len);
	v.close(v.state);
	pthread_mutex_unlock(&s->profile_lock);
	if (s->stopping)
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "hwc serve is ending\n");
	if (err)
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory building the profile\n");
	return reply(conn, MHD_HTTP_OK, "application/octet-stream", (char *)buf, len,
		     "Content-Disposition", "attachment; filename=\"profile\"");
}

static enum MHD_Result serve_pprof_index(struct MHD_Connection *conn)
{
	static const char page[] =
		"<html><head><title>/debug/pprof/</title></head><body>\n"
		"<p>hwc serve: profiles of every CPU (cycles, or cpu-clock where the PMU has none)</p>\n"
		"<p><a href=\"profile?seconds=30\">profile</a>: a CPU profile, "
		"?seconds=N (1 to 300, default 30), &amp;cgroup=PATH (one cgroup's tasks, "
		"PATH from the cgroup2 root)</p>\n"
		"</body></html>\n";
	char *body = strdup(page);
	if (!body)
		return MHD_NO;
	return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", body, strlen(page), NULL, NULL);
}

/* The cgroup= of a profile, ARG, as a path from the cgroup2 root (the
 * cgroup label of /metrics; a leading '/' is that root, never the file
 * system's), into BUF: 0, or the HTTP status of the error said in WHY. */
static unsigned cgroup_arg(const char *arg, char *buf, size_t size, char *why, size_t wsize)
{
	while (*arg == '/')
		arg++;
	if (snprintf(buf, size, "%s", arg) >= (int)size) {
		snprintf(why, wsize, "cgroup=: the path is too long\n");
		return MHD_HTTP_BAD_REQUEST;
	}
	char dir[4096];
	int err = hwc_cgroup_path(buf, dir, sizeof(dir));
	if (!err)
		return 0;
	snprintf(why, wsize, "cgroup=%s: %s\n", arg, hwc_errdetail());
	return err == -ENOENT || err == -ENOTDIR ? MHD_HTTP_NOT_FOUND
	       : err == -EINVAL || err == -ENAMETOOLONG ? MHD_HTTP_BAD_REQUEST
						       : MHD_HTTP_INTERNAL_SERVER_ERROR;
}

/* ------------------------------------------------------------ routing */

static bool authorized(const struct server *sv, struct MHD_Connection *conn)
{
	if (!sv->web || !sv->web->nusers)
		return true;
	char *pass = NULL;
	char *user = MHD_basic_auth_get_username_password(conn, &pass);
	bool ok = web_config_check(sv->web, user, pass);
	if (user)
		MHD_free(user);
	if (pass)
		MHD_free(pass);
	return ok;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size,
			      void **con_cls)
{
	(void)version;
	(void)upload_data;
	struct server *sv = cls;
	/* The first call has the headers only: replying to a GET then makes
	 * libmicrohttpd close the connection after the reply (it cannot know
	 * yet that the request has no body), so a scraper would connect (and
	 * we would start a thread) for every scrape. */
	static int first_call_seen;
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	if (!*con_cls && get) {
		*con_cls = &first_call_seen;
		return MHD_YES;
	}
	struct serve *s = sv->s;
	close_after_reply = sv->retired;
	if (*upload_data_size)
		return reply_text(conn, MHD_HTTP_BAD_REQUEST, "no request body expected\n");
	if (!get) {
		char *body = strdup("only GET and HEAD\n");
		return body ? reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", body,
				    strlen(body), MHD_HTTP_HEADER_ALLOW, "GET, HEAD")
			    : MHD_NO;
	}
	if (!authorized(sv, conn)) {
		char *body = strdup("unauthorized\n");
		struct MHD_Response *r = body ? MHD_create_response_from_buffer(strlen(body), body,
										   MHD_RESPMEM_MUST_FREE)
					      : NULL;
		if (!r) {
			free(body);
			return MHD_NO;
		}
		enum MHD_Result ok = MHD_queue_basic_auth_fail_response(conn, "hwc serve", r);
		MHD_destroy_response(r);
		return ok;
	}
	static const char *const none[] = {NULL}, *const profile_args[] = {"seconds", "cgroup", NULL};
	bool profile = strcmp(url, "/debug/pprof/profile") == 0;
	char bad[64];
	if ((strcmp(url, "/metrics") == 0 || strcmp(url, "/healthz") == 0 || strcmp(url, "/debug/pprof/") == 0 ||
	     profile) &&
	    unknown_arg(conn, profile ? profile_args : none, bad, sizeof(bad)))
		return reply_text(conn, MHD_HTTP_BAD_REQUEST, "%s takes no parameter '%s'\n", url, bad);
	if (strcmp(url, "/metrics") == 0)
		return serve_metrics(s, conn);
	if (strcmp(url, "/healthz") == 0)
		return reply_text(conn, MHD_HTTP_OK, "ok\n");
	if (strcmp(url, "/debug/pprof/") == 0 || strcmp(url, "/debug/pprof") == 0)
		return serve_pprof_index(conn);
	if (profile) {
		const char *arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds");
		long seconds = PROFILE_DEFAULT_SECONDS;
		if (arg && !cli_parse_long(arg, 1, PROFILE_MAX_SECONDS, &seconds))
			return reply_text(conn, MHD_HTTP_BAD_REQUEST,
					  "seconds=%s: give a whole number of seconds from 1 to %d\n", arg,
					  PROFILE_MAX_SECONDS);
		arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "cgroup");
		char cgroup[4096], why[4096 + 512];
		unsigned code = arg ? cgroup_arg(arg, cgroup, sizeof(cgroup), why, sizeof(why)) : 0;
		if (code)
			return reply_text(conn, code, "%s", why);
		return serve_profile(s, conn, seconds, arg ? cgroup : NULL);
	}
	return reply_text(conn, MHD_HTTP_NOT_FOUND,
			  "%s: not found (there are /metrics, /debug/pprof/, /debug/pprof/profile and "
			  "/healthz)\n",
			  url);
}

/* ------------------------------------------------------------ setup */

static int parse_options(int argc, char **argv, struct serve *s)
{
	enum { OPT_WEB_CONFIG = 256, OPT_CGROUPS, OPT_MAX_CGROUPS };
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"events", required_argument, NULL, 'e'},
		{"web.config.file", required_argument, NULL, OPT_WEB_CONFIG},
		{"cgroups", required_argument, NULL, OPT_CGROUPS},
		{"max-cgroups", required_argument, NULL, OPT_MAX_CGROUPS},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:l:e:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': s->listen = optarg; break;
		case 'e':
			if (!cli_add_spec(&s->specs, &s->nspecs, optarg))
				return cli_usage_error("serve", "%s", "out of memory");
			break;
		case OPT_WEB_CONFIG: s->web_path = optarg; break;
		case OPT_CGROUPS: {
			size_t before = s->nglobs;
			for (char *g = strtok(optarg, ","); g; g = strtok(NULL, ",")) {
				while (*g == '/')
					g++;
				if (*g && !cli_add_spec(&s->globs, &s->nglobs, g))
					return cli_usage_error("serve", "%s", "out of memory");
			}
			if (s->nglobs == before)
				return cli_usage_error("serve", "%s",
						       "--cgroups: give globs of cgroup paths from the cgroup2 "
						       "root, e.g. 'system.slice/*'");
			break;
		}
		case OPT_MAX_CGROUPS:
			if (!cli_parse_long(optarg, 0, 1000000, &s->max_cgroups))
				return cli_usage_error("serve", "--max-cgroups '%s': give a number from 0 to 1000000",
						       optarg);
			break;
		case 'h': fputs(usage_text, stdout); return 0;
		case ':': return cli_usage_error("serve", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("serve", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("serve", "unexpected argument '%s'", argv[optind]);
	return -1;
}

/* Bind LISTEN ("ADDR:PORT", "[V6ADDR]:PORT"); says why on failure. */
static int open_listener(struct serve *s)
{
	const char *spec = s->listen;
	char host[256];
	const char *colon = strrchr(spec, ':');
	if (!colon || !colon[1] || colon == spec) {
		fprintf(stderr, "hwc serve: --listen '%s': give ADDR:PORT (e.g. 127.0.0.1:9871, [::1]:9871)\n",
			spec);
		return -1;
	}
	size_t n = (size_t)(colon - spec);
	if (spec[0] == '[' && n >= 2 && spec[n - 1] == ']') {
		spec++;
		n -= 2;
	}
	if (n >= sizeof(host)) {
		fprintf(stderr, "hwc serve: --listen '%s': the address is too long\n", s->listen);
		return -1;
	}
	memcpy(host, spec, n);
	host[n] = '\0';
	long port;
	if (!cli_parse_long(colon + 1, 0, 65535, &port)) {
		fprintf(stderr, "hwc serve: --listen '%s': the port must be a number from 0 to 65535\n", s->listen);
		return -1;
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *ai;
	int err = getaddrinfo(host, colon + 1, &hints, &ai);
	if (err) {
		fprintf(stderr, "hwc serve: --listen '%s': %s\n", s->listen, gai_strerror(err));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
		fprintf(stderr, "hwc serve: cannot listen on %s: %s\n", s->listen, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	s->ipv6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);
	/* The port the kernel gave for port 0. */
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char addr[NI_MAXHOST], serv[NI_MAXSERV];
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, len, addr, sizeof(addr), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		log_msg("listening on %s%s%s:%s", s->ipv6 ? "[" : "", addr, s->ipv6 ? "]" : "", serv);
	s->listen_fd = fd;
	return 0;
}

static int open_sources(struct serve *s)
{
	struct hwc_target t;
	struct cli_target ct = {.all_cpus = true};
	cli_target_of(&ct, &t);
	if (hwc_evlist_new(&s->list) ||
	    (!s->nspecs && (t.flags |= HWC_SKIP_UNSUPPORTED, hwc_evlist_add(s->list, STAT_DEFAULT_EVENTS)))) {
		fprintf(stderr, "hwc serve: %s\n", hwc_errdetail());
		return -1;
	}
	for (size_t i = 0; i < s->nspecs; i++)
		if (hwc_evlist_add(s->list, s->specs[i])) {
			fprintf(stderr, "hwc serve: %s\n", hwc_errdetail());
			return -1;
		}
	s->cap = 16;
	s->src = calloc(s->cap, sizeof(*s->src));
	if (!s->src) {
		fprintf(stderr, "hwc serve: out of memory\n");
		return -1;
	}
	char root[4096];
	if (s->nglobs && hwc_cgroup_path("", root, sizeof(root))) {
		fprintf(stderr, "hwc serve: --cgroups: %s\n", hwc_errdetail());
		return -1;
	}
	s->target = t;
	if (hwc_counters_open(&s->src[0].c, s->list, &t) || hwc_counters_start(s->src[0].c)) {
		fprintf(stderr, "hwc serve: %s\n", hwc_errdetail());
		if (s->src[0].c)
			hwc_counters_close(s->src[0].c);
		return -1;
	}
	s->nsrc = 1;
	if (!make_labels(s, &s->src[0])) {
		fprintf(stderr, "hwc serve: out of memory\n");
		return -1;
	}
	size_t counted = 0;
	for (size_t e = 0; e < hwc_evlist_size(s->list); e++)
		if (hwc_counters_event_status(s->src[0].c, e))
			log_msg("not counting %s: %s", hwc_evlist_event(s->list, e)->name,
				hwc_counters_event_error(s->src[0].c, e));
		else
			counted++;
	log_msg("counting %zu events on %zu CPUs", counted, hwc_counters_ninstances(s->src[0].c));
	scan_cgroups(s);
	if (s->nglobs)
		log_msg("counting %zu cgroups", s->nsrc - 1);
	return 0;
}

/* A daemon on the listening socket with the web configuration read now;
 * NULL after saying why. */
static struct server *start_server(struct serve *s)
{
	struct server *sv = calloc(1, sizeof(*sv));
	if (!sv) {
		log_msg("out of memory");
		return NULL;
	}
	sv->s = s;
	char err[1024];
	if (s->web_path && web_config_load(&sv->web, s->web_path, err, sizeof(err))) {
		log_msg("%s", err);
		free(sv);
		return NULL;
	}
	bool tls = sv->web && sv->web->cert;
	/* poll(), not select(): the counters of many cgroups take descriptors
	 * past FD_SETSIZE (1024), and select() cannot watch those. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
			 MHD_USE_ITC | MHD_USE_ERROR_LOG | (tls ? MHD_USE_TLS : 0) | (s->ipv6 ? MHD_USE_IPv6 : 0);
	/* Idle connections (slow clients) are dropped after 10 s; each has a
	 * thread of its own, so none holds up another. */
	if (tls)
		sv->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, sv, MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
					 MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_CONNECTION_LIMIT, 64u,
					 MHD_OPTION_HTTPS_MEM_CERT, sv->web->cert, MHD_OPTION_HTTPS_MEM_KEY,
					 sv->web->key, MHD_OPTION_END);
	else
		sv->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, sv, MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
					 MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_CONNECTION_LIMIT, 64u,
					 MHD_OPTION_END);
	if (!sv->d) {
		log_msg("cannot start the HTTP%s server%s", tls ? "S" : "",
			tls ? ": is the certificate and key in PEM, and do they match?" : "");
		web_config_free(sv->web);
		free(sv);
		return NULL;
	}
	return sv;
}

static void stop_server(struct server *sv)
{
	MHD_stop_daemon(sv->d);
	web_config_free(sv->web);
	free(sv);
}

/* A replaced server ends once its connections are done: requests under
 * way (a profile) finish, kept-alive ones close after their next reply or
 * their idle timeout; at once when hwc serve ends. */
static void *retire(void *arg)
{
	struct server *sv = arg;
	struct serve *s = sv->s;
	while (!s->stopping) {
		const union MHD_DaemonInfo *i = MHD_get_daemon_info(sv->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (!i || !i->num_connections)
			break;
		usleep(50000);
	}
	stop_server(sv);
	s->retiring--;
	return NULL;
}

/* Until SIGTERM or SIGINT; SIGHUP reads the web configuration again. */
static void run(struct serve *s, struct server *sv, const sigset_t *sigs)
{
	for (;;) {
		int sig = sigwaitinfo(sigs, NULL);
		if (sig == SIGHUP) {
			struct server *next = start_server(s);
			if (!next) {
				log_msg("SIGHUP: keeping the configuration in use");
				continue;
			}
			/* The old daemon finishes what it serves (a profile) on its own. */
			MHD_quiesce_daemon(sv->d);
			sv->retired = true;
			s->retiring++;
			pthread_t t;
			if (pthread_create(&t, NULL, retire, sv) == 0) {
				pthread_detach(t);
			} else {
				stop_server(sv);
				s->retiring--;
			}
			sv = next;
			log_msg("SIGHUP: configuration read again%s", s->web_path ? "" : " (there is none)");
		} else if (sig == SIGTERM || sig == SIGINT) {
			break;
		}
	}
	s->stopping = true;
	stop_server(sv);
	while (s->retiring) /* they stop at once now */
		usleep(10000);
}

int cmd_serve(int argc, char **argv)
{
	struct serve s = {.listen = "127.0.0.1:9871", .listen_fd = -1, .max_cgroups = MAX_CGROUPS_DEFAULT};
	pthread_mutex_init(&s.page_lock, NULL);
	pthread_cond_init(&s.page_done, NULL);
	pthread_mutex_init(&s.profile_lock, NULL);
	int rc = parse_options(argc, argv, &s);
	if (rc >= 0) {
		free(s.specs);
		free(s.globs);
		return rc;
	}
	rc = EXIT_ERROR;
	/* Every thread (libmicrohttpd's too) leaves these to sigwaitinfo. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	cli_raise_fd_limit();
	struct server *sv = NULL;
	if (open_sources(&s) == 0 && open_listener(&s) == 0 && (sv = start_server(&s))) {
		run(&s, sv, &sigs);
		log_msg("ended");
		rc = 0;
	} else if (s.listen_fd >= 0) {
		close(s.listen_fd);
	}
	for (size_t i = 0; i < s.nsrc; i++)
		source_close(&s, &s.src[i]);
	free(s.src);
	page_text_unref(s.pages[0].text);
	page_text_unref(s.pages[1].text);
	free(s.globs);
	hwc_evlist_free(s.list);
	free(s.specs);
	return rc;
}
