/* hwc serve: an HTTP agent that Prometheus scrapes for counters (/metrics)
 * and profilers scrape for CPU profiles (/debug/pprof/profile), on
 * libmicrohttpd: one thread per connection, so a slow client stalls no
 * other scrape.
 *
 * What is counted is a list of sources, each one hwc_counters opened on
 * every CPU: the first counts all tasks (series per CPU), the others one
 * cgroup each (--cgroups; series summed over CPUs), found again by
 * serve_scan_cgroups() at most once a second as a scrape comes.
 *
 * This file: the options, the replies, the routing of requests and the
 * server's life (SIGHUP, the end); the exporter of /metrics is
 * serve_metrics.c, /debug/pprof serve_pprof.c, the web configuration
 * serve_web.c. */
#include "cli.h"
#include "serve.h"
#include "stat.h"

#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_ERROR = 1, EXIT_USAGE = 2 };
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

double serve_now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void serve_log(const char *fmt, ...)
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
enum MHD_Result serve_queue(struct MHD_Connection *conn, unsigned code, const char *type, struct MHD_Response *r,
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

enum MHD_Result serve_reply(struct MHD_Connection *conn, unsigned code, const char *type, char *body,
			     size_t len, const char *hname, const char *hvalue)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r)
		free(body);
	return serve_queue(conn, code, type, r, hname, hvalue);
}

enum MHD_Result serve_reply_text(struct MHD_Connection *conn, unsigned code, const char *fmt, ...)
{
	char *body = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return serve_reply(conn, code, "text/plain; charset=utf-8", body, (size_t)n, NULL, NULL);
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
		return serve_reply_text(conn, MHD_HTTP_BAD_REQUEST, "no request body expected\n");
	if (!get) {
		char *body = strdup("only GET and HEAD\n");
		return body ? serve_reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", body,
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
		return serve_reply_text(conn, MHD_HTTP_BAD_REQUEST, "%s takes no parameter '%s'\n", url, bad);
	if (strcmp(url, "/metrics") == 0)
		return serve_metrics(s, conn);
	if (strcmp(url, "/healthz") == 0)
		return serve_reply_text(conn, MHD_HTTP_OK, "ok\n");
	if (strcmp(url, "/debug/pprof/") == 0 || strcmp(url, "/debug/pprof") == 0)
		return serve_pprof_index(conn);
	if (profile) {
		const char *arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds");
		long seconds = PROFILE_DEFAULT_SECONDS;
		if (arg && !cli_parse_long(arg, 1, PROFILE_MAX_SECONDS, &seconds))
			return serve_reply_text(conn, MHD_HTTP_BAD_REQUEST,
					  "seconds=%s: give a whole number of seconds from 1 to %d\n", arg,
					  PROFILE_MAX_SECONDS);
		arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "cgroup");
		char cgroup[4096], why[4096 + 512];
		unsigned code = arg ? serve_cgroup_arg(arg, cgroup, sizeof(cgroup), why, sizeof(why)) : 0;
		if (code)
			return serve_reply_text(conn, code, "%s", why);
		return serve_profile(s, conn, seconds, arg ? cgroup : NULL);
	}
	return serve_reply_text(conn, MHD_HTTP_NOT_FOUND,
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
		serve_log("listening on %s%s%s:%s", s->ipv6 ? "[" : "", addr, s->ipv6 ? "]" : "", serv);
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
	if (!serve_make_labels(s, &s->src[0])) {
		fprintf(stderr, "hwc serve: out of memory\n");
		return -1;
	}
	size_t counted = 0;
	for (size_t e = 0; e < hwc_evlist_size(s->list); e++)
		if (hwc_counters_event_status(s->src[0].c, e))
			serve_log("not counting %s: %s", hwc_evlist_event(s->list, e)->name,
				hwc_counters_event_error(s->src[0].c, e));
		else
			counted++;
	serve_log("counting %zu events on %zu CPUs", counted, hwc_counters_ninstances(s->src[0].c));
	serve_scan_cgroups(s);
	if (s->nglobs)
		serve_log("counting %zu cgroups", s->nsrc - 1);
	return 0;
}

/* A daemon on the listening socket with the web configuration read now;
 * NULL after saying why. */
static struct server *start_server(struct serve *s)
{
	struct server *sv = calloc(1, sizeof(*sv));
	if (!sv) {
		serve_log("out of memory");
		return NULL;
	}
	sv->s = s;
	char err[1024];
	if (s->web_path && web_config_load(&sv->web, s->web_path, err, sizeof(err))) {
		serve_log("%s", err);
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
		serve_log("cannot start the HTTP%s server%s", tls ? "S" : "",
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
				serve_log("SIGHUP: keeping the configuration in use");
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
			serve_log("SIGHUP: configuration read again%s", s->web_path ? "" : " (there is none)");
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
		serve_log("ended");
		rc = 0;
	} else if (s.listen_fd >= 0) {
		close(s.listen_fd);
	}
	for (size_t i = 0; i < s.nsrc; i++)
		serve_source_close(&s, &s.src[i]);
	free(s.src);
	serve_page_text_unref(s.pages[0].text);
	serve_page_text_unref(s.pages[1].text);
	free(s.globs);
	hwc_evlist_free(s.list);
	free(s.specs);
	return rc;
}
