/* hwc serve's /debug/pprof: CPU profiles of every CPU, taken with hwc
 * top's sampler and encoded for pprof. */
#include "report.h"
#include "serve.h"
#include "top.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ /debug/pprof */

/* Sample every CPU for SECONDS with hwc top's sampler into a pprof profile:
 * of every task, or (CGROUP, checked by serve_cgroup_arg()) of that cgroup's. */
enum MHD_Result serve_profile(struct serve *s, struct MHD_Connection *conn, long seconds,
				     const char *cgroup)
{
	if (pthread_mutex_trylock(&s->profile_lock)) {
		double left = (double)s->profile_end - serve_now_s();
		char retry[32];
		snprintf(retry, sizeof(retry), "%ld", left > 1 ? (long)left + 1 : 1L);
		char *body = NULL;
		int n = asprintf(&body, "a profile is being taken: one at a time; retry in %s s\n", retry);
		if (n < 0)
			return MHD_NO;
		return serve_reply(conn, MHD_HTTP_TOO_MANY_REQUESTS, "text/plain; charset=utf-8", body, (size_t)n,
			     MHD_HTTP_HEADER_RETRY_AFTER, retry);
	}
	double end = serve_now_s() + (double)seconds;
	s->profile_end = (uint_fast64_t)end + 1;
	struct top_opts o = {
		.prog = "serve", .freq = PROFILE_HZ, .callgraph = true, .system = true,
		.t = {.all_cpus = true, .cgroup = cgroup},
	};
	struct top_view v = {0};
	if (top_sample_open(&o, &v)) {
		pthread_mutex_unlock(&s->profile_lock);
		/* The detail of this thread's failure, said in the log too; a
		 * cgroup removed since serve_cgroup_arg() looked is not found. */
		char detail[1024], dir[4096];
		snprintf(detail, sizeof(detail), "%s", hwc_errdetail());
		bool gone = cgroup && hwc_cgroup_path(cgroup, dir, sizeof(dir)) == -ENOENT;
		return serve_reply_text(conn, gone ? MHD_HTTP_NOT_FOUND : MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "cannot sample the CPUs: %s\n", detail);
	}
	for (double t; (t = serve_now_s()) < end && !s->stopping;) {
		int ms = (int)((end - t) * 1000) + 1;
		v.wait(v.state, ms > 100 ? 100 : ms, UINT64_MAX);
	}
	if (!s->stopping)
		v.wait(v.state, 0, UINT64_MAX); /* what the buffers still hold */
	const char *note;
	struct rp_report *r = top_sample_profile(v.state, &note);
	if (note[0])
		serve_log("%s", note);
	uint8_t *buf = NULL;
	size_t len = 0;
	int err = s->stopping ? 0 : rp_pprof_encode(r, &buf, &len);
	v.close(v.state);
	pthread_mutex_unlock(&s->profile_lock);
	if (s->stopping)
		return serve_reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "hwc serve is ending\n");
	if (err)
		return serve_reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory building the profile\n");
	return serve_reply(conn, MHD_HTTP_OK, "application/octet-stream", (char *)buf, len,
		     "Content-Disposition", "attachment; filename=\"profile\"");
}

enum MHD_Result serve_pprof_index(struct MHD_Connection *conn)
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
	return serve_reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", body, strlen(page), NULL, NULL);
}

/* The cgroup= of a profile, ARG, as a path from the cgroup2 root (the
 * cgroup label of /metrics; a leading '/' is that root, never the file
 * system's), into BUF: 0, or the HTTP status of the error said in WHY. */
unsigned serve_cgroup_arg(const char *arg, char *buf, size_t size, char *why, size_t wsize)
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

