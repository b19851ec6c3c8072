/* hwc top's counting view (--count): the rates of counted events per
 * process, which sampling cannot give.  System-wide, every process in
 * /proc gets counters of its own, opened at the refresh after it appears
 * and inherited by the threads it creates but not by its child processes,
 * which are rows of their own; a process that exits is shown once more
 * with its last counts.  With -p, -t or a command the rows are the
 * target's threads as hwc_counters opened them, each with what it
 * created since. */
#include "top.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct crow {
	pid_t pid;                /* the process (system-wide) or thread */
	unsigned long long start; /* system-wide: its start time, to tell a reused pid */
	char comm[32];
	char *cgroup;             /* --by cgroup: its path from the hierarchy's root */
	hwc_counters *c;          /* system-wide: its own counters; else NULL */
	size_t inst;              /* else: its instance of the view's counters */
	uint64_t since;           /* when this interval began for it */
	bool seen, gone;
	bool mux;                 /* some value is an estimate (multiplexed) */
	double *rate;             /* per event, per second; NAN: not counted */
};

struct cview {
	const struct top_opts *o;
	hwc_evlist *list;
	size_t nev;
	char missing[256];     /* default events this machine cannot count */
	hwc_counters *c;       /* a task or command target's counters */
	pid_t pid;             /* its pid */
	struct crow *rows;     /* system-wide: sorted by pid */
	size_t n, cap;
	size_t denied, failed; /* processes the last scan could not count */
	char why[256];         /* the first failure that is not a denial */
	bool ended;
	int status;
};

/* ------------------------------------------------------------ events */

static bool is_clock(const struct hwc_event *ev)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE && (ev->attr.config == PERF_COUNT_SW_TASK_CLOCK ||
						       ev->attr.config == PERF_COUNT_SW_CPU_CLOCK);
}

/* The events: -e as given, each opened once here first so that one the
 * machine lacks is an error now rather than a hole in every row; or the
 * defaults this machine can count, naming the ones it cannot. */
static int resolve_events(struct cview *v)
{
	static const char *const defaults[] = {"task-clock", "context-switches", "page-faults", "cycles",
					       "instructions"};
	const struct top_opts *o = v->o;
	const char *specs[sizeof(defaults) / sizeof(defaults[0])];
	size_t n = 0;
	if (o->nspecs) {
		for (size_t i = 0; i < o->nspecs; i++)
			if (hwc_event_probe(o->specs[i], NULL)) {
				fprintf(stderr, "hwc top: %s\n", hwc_errdetail());
				return -1;
			}
	} else {
		size_t len = 0;
		for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
			if (hwc_event_probe(defaults[i], NULL) == 0)
				specs[n++] = defaults[i];
			else if (len < sizeof(v->missing))
				len += (size_t)snprintf(v->missing + len, sizeof(v->missing) - len, "%s%s",
							len ? ", " : "", defaults[i]);
		}
	}
	if (cli_resolve("top", &v->list, o->nspecs ? o->specs : specs, o->nspecs ? o->nspecs : n))
		return -1;
	v->nev = hwc_evlist_size(v->list);
	return 0;
}

/* ------------------------------------------------------------ rows */

static struct crow *add_row(struct cview *v, pid_t pid)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		struct crow *r = realloc(v->rows, cap * sizeof(*r));
		if (!r)
			return NULL;
		v->rows = r;
		v->cap = cap;
	}
	double *rate = calloc(v->nev, sizeof(*rate));
	if (!rate)
		return NULL;
	struct crow *r = &v->rows[v->n++];
	*r = (struct crow){.pid = pid, .rate = rate, .since = top_now(), .inst = HWC_ALL};
	for (size_t e = 0; e < v->nev; e++)
		r->rate[e] = NAN;
	return r;
}

static void drop_row(struct crow *r)
{
	hwc_counters_close(r->c);
	free(r->cgroup);
	free(r->rate);
}

/* Name and start time of process PID from /proc/PID/stat; false when it
 * is gone or a zombie (nothing left to count). */
static bool proc_stat(pid_t pid, char *comm, size_t size, unsigned long long *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* pid (comm) state ... : the name may hold spaces and parentheses. */
	char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	if (!open || !close || close < open || close[1] != ' ')
		return false;
	char state = close[2];
	if (state == 'Z' || state == 'X')
		return false;
	snprintf(comm, size, "%.*s", (int)(close - open - 1), open + 1);
	/* starttime is field 22; the state is field 3. */
	char *p = close + 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	*start = p ? strtoull(p, NULL, 10) : 0;
	return true;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gone - y->gone; /* a reused pid: the exited process first */
}

/* Open and start counters on T for a new row (seen, with PID): the row, or
 * NULL when T is gone (GONE: the error that says so), denied or failed. */
static struct crow *open_row(struct cview *v, const struct hwc_target *t, int gone, pid_t pid)
{
	hwc_counters *c;
	int err = hwc_counters_open(&c, v->list, t);
	if (!err && (err = hwc_counters_start(c)))
		hwc_counters_close(c);
	if (err == gone)
		return NULL; /* gone meanwhile */
	if (err == -EACCES || err == -EPERM) {
		v->denied++;
		return NULL;
	}
	if (err) {
		if (!v->failed++)
			snprintf(v->why, sizeof(v->why), "%s", hwc_errdetail());
		return NULL;
	}
	struct crow *r = add_row(v, pid);
	if (!r) {
		hwc_counters_close(c);
		if (!v->failed++)
			snprintf(v->why, sizeof(v->why), "out of memory");
		return NULL;
	}
	r->c = c;
	r->seen = true;
	return r;
}

static void open_process(struct cview *v, pid_t pid, const char *comm, unsigned long long start)
{
	struct hwc_target t = {.kind = HWC_TARGET_PROCESS, .pid = pid, .flags = HWC_THREADS_ONLY};
	struct crow *r = open_row(v, &t, -ESRCH, pid);
	if (!r)
		return;
	r->start = start;
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
}

/* Every process in /proc: the new ones get counters, the exited ones are
 * marked gone (their counters stay readable for their last counts). */
static void scan(struct cview *v)
{
	size_t old = v->n;
	for (size_t i = 0; i < old; i++)
		v->rows[i].seen = false;
	v->denied = v->failed = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t pid = (pid_t)atoi(de->d_name);
		char comm[32];
		unsigned long long start;
		if (!proc_stat(pid, comm, sizeof(comm), &start))
			continue;
		/* The old rows have one pid each: none is gone before the scan ends. */
		struct crow key = {.pid = pid};
		struct crow *r = old ? bsearch(&key, v->rows, old, sizeof(key), cmp_pid) : NULL;
		if (r && r->start == start) {
			r->seen = true;
			snprintf(r->comm, sizeof(r->comm), "%s", comm); /* it may have exec'd */
		} else {
			open_process(v, pid, comm, start);
		}
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < old; i++)
		if (!v->rows[i].seen)
			v->rows[i].gone = true;
	qsort(v->rows, v->n, sizeof(*v->rows), cmp_pid);
}

/* Open counters on cgroup PATH (from the hierarchy's root) for a new row. */
static void open_cgroup(struct cview *v, const char *path)
{
	struct hwc_target t = {.kind = HWC_TARGET_CGROUP, .cgroup = path};
	struct crow *r = open_row(v, &t, -ENOENT, 0);
	if (r && !(r->cgroup = strdup(path))) {
		drop_row(r);
		v->n--;
		if (!v->failed++)
			snprintf(v->why, sizeof(v->why), "out of memory");
	}
}

/* Cgroup PATH (from the root; its directory DIR) and those below it: the
 * new ones get a row, the known ones are marked seen. */
static void walk_cgroups(struct cview *v, size_t old, const char *dir, const char *path)
{
	size_t i;
	for (i = 0; i < old && strcmp(v->rows[i].cgroup, path) != 0; i++)
		;
	if (i < old)
		v->rows[i].seen = true;
	else
		open_cgroup(v, path);
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		char subdir[4096], sub[4096];
		if (snprintf(subdir, sizeof(subdir), "%s/%s", dir, de->d_name) >= (int)sizeof(subdir) ||
		    snprintf(sub, sizeof(sub), "%s%s%s", path, strcmp(path, "/") ? "/" : "",
			     de->d_name) >= (int)sizeof(sub))
			continue;
		walk_cgroups(v, old, subdir, sub);
	}
	if (d)
		closedir(d);
}

/* --by cgroup: every cgroup of the tree, as scan() does with processes. */
static int scan_cgroups(struct cview *v)
{
	char root[4096], dir[4096];
	const char *top = v->o->t.cgroup ? v->o->t.cgroup : "";
	if (hwc_cgroup_path("", root, sizeof(root)) || hwc_cgroup_path(top, dir, sizeof(dir))) {
		fprintf(stderr, "hwc top: %s\n", hwc_errdetail());
		return 1;
	}
	size_t old = v->n;
	for (size_t i = 0; i < old; i++)
		v->rows[i].seen = false;
	v->denied = v->failed = 0;
	walk_cgroups(v, old, dir, dir[strlen(root)] ? dir + strlen(root) : "/");
	for (size_t i = 0; i < old; i++)
		if (!v->rows[i].seen)
			v->rows[i].gone = true;
	return 0;
}

/* ------------------------------------------------------------ refresh */

/* Rates of row R over the time since its interval began, from C's last
 * snapshot at instance INST. */
static void rates(struct cview *v, struct crow *r, hwc_counters *c, size_t inst, uint64_t now,
		  double fallback)
{
	double secs = r->since < now ? (double)(now - r->since) / 1e9 : fallback;
	r->mux = false;
	for (size_t e = 0; e < v->nev; e++) {
		struct hwc_value val;
		const struct hwc_event *ev = hwc_evlist_event(v->list, e);
		if (hwc_counters_event_status(c, e) || hwc_counters_value(c, inst, e, &val)) {
			r->rate[e] = NAN;
			continue;
		}
		/* A cgroup none of whose tasks ran counted nothing: 0, not an estimate. */
		r->mux |= hwc_value_multiplexed(&val) && !(r->cgroup && val.running == 0);
		r->rate[e] = (is_clock(ev) ? (double)val.scaled / 1e9 : (double)val.scaled * ev->scale) /
			     secs;
	}
	r->since = now;
}

static void read_all(struct cview *v, double seconds)
{
	uint64_t now = top_now();
	if (v->c) {
		hwc_counters_read(v->c);
		for (size_t i = 0; i < v->n; i++) {
			struct crow *r = &v->rows[i];
			rates(v, r, v->c, r->inst, now, seconds);
			char comm[sizeof(r->comm)];
			if (top_comm(v->pid, r->pid, comm, sizeof(comm))) /* it may have exec'd */
				memcpy(r->comm, comm, sizeof(comm));
		}
		hwc_counters_rebase(v->c);
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		struct crow *r = &v->rows[i];
		if (hwc_counters_read(r->c)) {
			for (size_t e = 0; e < v->nev; e++)
				r->rate[e] = NAN;
			continue;
		}
		rates(v, r, r->c, HWC_ALL, now, seconds);
		hwc_counters_rebase(r->c);
	}
}

static int cmp_rate(const void *a, const void *b)
{
	const struct crow *x = *(const struct crow *const *)a, *y = *(const struct crow *const *)b;
	double rx = isnan(x->rate[0]) ? -1 : x->rate[0], ry = isnan(y->rate[0]) ? -1 : y->rate[0];
	if (rx != ry)
		return rx > ry ? -1 : 1;
	if (x->cgroup)
		return strcmp(x->cgroup, y->cgroup);
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* A rate in a few characters: CPUs with three decimals, counts with K, M, G. */
static void format_rate(char *buf, size_t size, double rate, bool clock)
{
	if (isnan(rate))
		snprintf(buf, size, "-");
	else if (clock)
		snprintf(buf, size, "%.3f", rate);
	else if (rate < 1e4)
		snprintf(buf, size, "%.1f", rate);
	else if (rate < 1e7)
		snprintf(buf, size, "%.1fK", rate / 1e3);
	else if (rate < 1e10)
		snprintf(buf, size, "%.1fM", rate / 1e6);
	else
		snprintf(buf, size, "%.1fG", rate / 1e9);
}

static void column_title(const struct hwc_event *ev, char *buf, size_t size)
{
	if (ev->unit[0] && !is_clock(ev))
		snprintf(buf, size, "%s(%s)", ev->name, ev->unit);
	else
		snprintf(buf, size, "%s", ev->name);
}

static int column_width(const struct hwc_event *ev)
{
	char title[256];
	column_title(ev, title, sizeof(title));
	int w = (int)strlen(title);
	return w < 10 ? 10 : w;
}

static void count_fill(void *state, const struct top_tick *tick, struct top_frame *f)
{
	struct cview *v = state;
	read_all(v, tick->seconds);
	size_t gone = 0;
	bool mux = false, user_only = false;
	for (size_t i = 0; i < v->n; i++) {
		gone += v->rows[i].gone;
		mux |= v->rows[i].mux;
	}
	for (size_t e = 0; e < v->nev; e++)
		for (size_t i = 0; i < v->n && !user_only; i++) {
			hwc_counters *c = v->rows[i].c ? v->rows[i].c : v->c;
			user_only = hwc_counters_user_only(c, e);
		}
	if (v->o->by_cgroup)
		top_frame_add(f, "refresh %ld%s: %.2f s, %zu cgroups (%zu removed), %zu not counted%s%s",
			      tick->n, tick->last ? " (cut short)" : "", tick->seconds, v->n, gone,
			      v->denied + v->failed, v->denied ? ": permission denied" : "",
			      v->failed ? (v->denied ? " or failed" : ": failed") : "");
	else if (v->o->system)
		top_frame_add(f, "refresh %ld%s: %.2f s, %zu processes (%zu exited), %zu not counted%s%s",
			      tick->n, tick->last ? " (cut short)" : "", tick->seconds, v->n, gone,
			      v->denied + v->failed, v->denied ? ": permission denied" : "",
			      v->failed ? (v->denied ? " or failed" : ": failed") : "");
	else
		top_frame_add(f, "refresh %ld%s: %.2f s, %zu thread%s", tick->n,
			      tick->last ? " (cut short)" : "", tick->seconds, v->n, v->n == 1 ? "" : "s");
	top_tick_notes(tick, NULL, f);
	if (v->failed)
		top_frame_add(f, "note: %s", v->why);
	top_frame_add(f, "rates per second%s%s%s", "; task-clock and cpu-clock in CPUs",
		      mux ? "; * estimated (the events shared counters)" : "",
		      user_only ? "; user space only (kernel counting is not allowed)" : "");
	if (v->missing[0])
		top_frame_add(f, "note: not countable here: %s", v->missing);

	char line[4096], title[256], val[64];
	size_t len = v->o->by_cgroup ? (size_t)snprintf(line, sizeof(line), "%-40s", "Cgroup")
				     : (size_t)snprintf(line, sizeof(line), "%7s  %-16s",
							v->o->system ? "PID" : "TID", "Command");
	for (size_t e = 0; e < v->nev && len < sizeof(line); e++) {
		const struct hwc_event *ev = hwc_evlist_event(v->list, e);
		column_title(ev, title, sizeof(title));
		len += (size_t)snprintf(line + len, sizeof(line) - len, "  %*s", column_width(ev), title);
	}
	top_frame_titles(f);
	top_frame_add(f, "%s", line);

	struct crow **order = calloc(v->n + 1, sizeof(*order));
	for (size_t i = 0; order && i < v->n; i++)
		order[i] = &v->rows[i];
	if (order)
		qsort(order, v->n, sizeof(*order), cmp_rate);
	for (size_t i = 0; order && i < v->n; i++) {
		const struct crow *r = order[i];
		if (r->cgroup)
			len = (size_t)snprintf(line, sizeof(line), "%-40s", r->cgroup);
		else
			len = (size_t)snprintf(line, sizeof(line), "%7d  %-16.16s", (int)r->pid, r->comm);
		for (size_t e = 0; e < v->nev && len < sizeof(line); e++) {
			const struct hwc_event *ev = hwc_evlist_event(v->list, e);
			format_rate(val, sizeof(val) - 1, r->rate[e], is_clock(ev));
			if (r->mux)
				strcat(val, "*");
			len += (size_t)snprintf(line + len, sizeof(line) - len, "  %*s", column_width(ev), val);
		}
		if (len < sizeof(line) && r->gone)
			snprintf(line + len, sizeof(line) - len, r->cgroup ? "  (removed)" : "  (exited)");
		top_frame_add(f, "%s", line);
	}
	free(order);
	if (!v->o->system)
		return;
	/* The exited processes have been shown with their last counts. */
	size_t k = 0;
	for (size_t i = 0; i < v->n; i++) {
		if (v->rows[i].gone)
			drop_row(&v->rows[i]);
		else
			v->rows[k++] = v->rows[i];
	}
	v->n = k;
	if (v->o->by_cgroup)
		scan_cgroups(v);
	else
		scan(v);
}

/* ------------------------------------------------------------ the target */

static double count_wait(void *state, int ms, uint64_t until)
{
	(void)state, (void)until;
	if (ms > 0)
		poll(NULL, 0, ms);
	return 0; /* counters are read at the refresh */
}

static bool count_ended(void *state, int *status, char *msg, size_t size)
{
	struct cview *v = state;
	const struct cli_target *t = &v->o->t;
	if (v->o->system)
		return false;
	if (!v->ended && t->argv) {
		int st;
		if (waitpid(v->pid, &st, WNOHANG) == v->pid) {
			v->ended = true;
			v->status = st;
		}
	} else if (!v->ended) {
		char comm[32];
		unsigned long long start;
		v->ended = !proc_stat(v->pid, comm, sizeof(comm), &start);
	}
	if (!v->ended)
		return false;
	*status = v->status;
	top_end_message(v->o, v->pid, v->status, msg, size);
	return true;
}

static void count_close(void *state)
{
	struct cview *v = state;
	/* A command started here does not outlive its view. */
	if (v->c && v->o->t.argv && !v->ended)
		kill(v->pid, SIGTERM);
	for (size_t i = 0; i < v->n; i++)
		drop_row(&v->rows[i]);
	free(v->rows);
	hwc_counters_close(v->c);
	hwc_evlist_free(v->list);
	free(v);
}

/* A task or command: one counters object, a row per instance. */
static int open_target(struct cview *v)
{
	struct hwc_target t;
	cli_target_of(&v->o->t, &t);
	if (hwc_counters_open(&v->c, v->list, &t)) {
		fprintf(stderr, "hwc top: %s\n", hwc_errdetail());
		return 1;
	}
	v->pid = hwc_counters_pid(v->c);
	if (hwc_counters_start(v->c)) {
		fprintf(stderr, "hwc top: %s\n", hwc_errdetail());
		v->ended = true; /* a command that could not exec is reaped */
		return v->o->t.argv ? 127 : 1;
	}
	for (size_t i = 0; i < hwc_counters_ninstances(v->c); i++) {
		pid_t tid = hwc_counters_instance_tid(v->c, i);
		struct crow *r = add_row(v, tid);
		if (!r) {
			fprintf(stderr, "hwc top: out of memory\n");
			return 1;
		}
		r->inst = i;
		top_comm(v->pid, tid, r->comm, sizeof(r->comm));
	}
	return 0;
}

int top_count_open(const struct top_opts *o, struct top_view *view)
{
	struct cview *v = calloc(1, sizeof(*v));
	if (!v) {
		fprintf(stderr, "hwc top: out of memory\n");
		return 1;
	}
	v->o = o;
	v->status = -1;
	v->pid = -1;
	int rc = 1;
	if (resolve_events(v) == 0)
		rc = o->by_cgroup ? scan_cgroups(v) : o->system ? (scan(v), 0) : open_target(v);
	if (rc) {
		count_close(v);
		return rc;
	}
	char target[256], events[512];
	top_describe_target(o, v->pid, target, sizeof(target));
	size_t len = 0;
	for (size_t e = 0; e < v->nev && len < sizeof(events); e++)
		len += (size_t)snprintf(events + len, sizeof(events) - len, "%s%s", e ? ", " : "",
					hwc_evlist_event(v->list, e)->name);
	if (o->by_cgroup)
		snprintf(view->what, sizeof(view->what), "counting %s per cgroup of %s", events,
			 o->t.cgroup ? o->t.cgroup : "the hierarchy");
	else if (o->system)
		snprintf(view->what, sizeof(view->what), "counting %s in every process", events);
	else
		snprintf(view->what, sizeof(view->what), "counting %s in %s, per thread", events, target);
	view->state = v;
	view->wait = count_wait;
	view->fill = count_fill;
	view->ended = count_ended;
	view->close = count_close;
	return 0;
}
