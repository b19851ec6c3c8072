/* hwc serve: what its files share: the HTTP agent (serve.c), its
 * /metrics exporter (serve_metrics.c), its profiles (serve_pprof.c) and its
 * web configuration (serve_web.c). */
#ifndef HWC_SERVE_H
#define HWC_SERVE_H

#include <stdbool.h>
#include <stddef.h>

#include <hwc/hwc.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>

/* ------------------------------------------------------------ serve.c */

enum { PROFILE_MAX_SECONDS = 300, PROFILE_DEFAULT_SECONDS = 30, PROFILE_HZ = 997 };

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


/* CLOCK_MONOTONIC in seconds. */
double serve_now_s(void);
/* A line "hwc serve: ..." on stderr. */
void serve_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Queue R (destroyed here; NULL: out of memory). */
enum MHD_Result serve_queue(struct MHD_Connection *conn, unsigned code, const char *type,
			    struct MHD_Response *r, const char *hname, const char *hvalue);
/* Queue BODY (malloc'ed, freed with the reply) of LEN bytes. */
enum MHD_Result serve_reply(struct MHD_Connection *conn, unsigned code, const char *type, char *body,
			    size_t len, const char *hname, const char *hvalue);
enum MHD_Result serve_reply_text(struct MHD_Connection *conn, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------ serve_metrics.c */

/* SRC's labels of each event; false when out of memory. */
bool serve_make_labels(struct serve *s, struct source *src);
void serve_source_close(struct serve *s, struct source *src);
/* Open counters for the matching cgroups not yet counted, close those of
 * the cgroups gone.  By the builder (or before the server starts). */
void serve_scan_cgroups(struct serve *s);
/* Drop a reference to a page's text (a reply's, or the page's own). */
void serve_page_text_unref(void *cls);
/* GET /metrics. */
enum MHD_Result serve_metrics(struct serve *s, struct MHD_Connection *conn);

/* ------------------------------------------------------------ serve_pprof.c */

/* GET /debug/pprof/profile?seconds=SECONDS[&cgroup=CGROUP]. */
enum MHD_Result serve_profile(struct serve *s, struct MHD_Connection *conn, long seconds,
			      const char *cgroup);
/* GET /debug/pprof/. */
enum MHD_Result serve_pprof_index(struct MHD_Connection *conn);
/* The cgroup= of a profile, ARG, into BUF: 0, or the HTTP status of the
 * error said in WHY. */
unsigned serve_cgroup_arg(const char *arg, char *buf, size_t size, char *why, size_t wsize);

/* ------------------------------------------------------------ serve_web.c */

struct web_user {
	char *name, *hash; /* hash: bcrypt, $2b$... */
	char *verified;    /* the last password that matched, hashed with quick_salt */
};

/* A --web.config.file: TLS when CERT and KEY (PEM text) are set, basic
 * auth when there are users.  A bcrypt check costs ~0.1 s of CPU: a
 * password that matched is remembered as a quick salted hash (SHA-256
 * crypt, a random salt of this process), so a scraper's every request
 * does not pay it again. */
struct web_config {
	char *cert, *key;
	struct web_user *users;
	size_t nusers;
	char quick_salt[192];
	pthread_mutex_t lock; /* the users' verified hashes */
};

/* Read PATH into a new *OUT: 0, or -1 with the reason in ERR. */
int web_config_load(struct web_config **out, const char *path, char *err, size_t size);
void web_config_free(struct web_config *w);
/* Is PASSWORD the password of USER (either may be NULL: no)? */
bool web_config_check(struct web_config *w, const char *user, const char *password);

#endif
