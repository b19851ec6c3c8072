/* hwc top: a live view of the hottest functions of the whole system or of
 * a process (sampling), or of each process's counter rates (--count),
 * refreshed every -d seconds.  The view is an ncurses screen, or plain
 * text with --batch.  This file holds the options, the refresh loop, keys
 * and signals, and the screen; top_sample.c and top_count.c make the
 * frames. */
#include "hwc.h"
#include "top.h"
#include "out.h"

#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCH_ROWS 30
#define MAX_WAIT_MS 100 /* keys, signals and the target's end are noticed this often */
#define MAX_GRACE_NS 100000000 /* a refresh waits at most this for the samples just taken */

static const char usage_text[] =
	"usage: hwc top [options]                      every CPU (needs privilege)\n"
	"       hwc top [options] -p pid | -t tid      one process (all its threads) or thread\n"
	"       hwc top [options] [--] command [args]  a command started here, until it ends\n"
	"\n"
	"A live view, refreshed every second, of the functions where the most samples\n"
	"fall; with --count, of each process's counter rates.  q quits.\n"
	"\n"
	"  -e, --event SPEC      the event to sample; default: cycles, or cpu-clock\n"
	"                        without a hardware PMU.  With --count: the events to\n"
	"                        count (comma list, repeatable), rows sorted by the\n"
	"                        first; default: task-clock, context-switches,\n"
	"                        page-faults, and cycles, instructions with a PMU\n"
	"  -F, --freq HZ         samples a second per CPU (default 4000)\n"
	"  -g                    call chains (frame pointers): a Children column with\n"
	"                        the share of samples under each function\n"
	"      --count           counting mode: rates per process (per thread with\n"
	"                        -p, -t or a command) instead of samples\n"
	"      --by KEY          --count's rows: process (the default) or cgroup: one\n"
	"                        per cgroup of the hierarchy (or of --cgroup's tree),\n"
	"                        each counting its tasks and those of cgroups below\n"
	"  -d, --delay SECS      seconds between refreshes (default 1, 0.1 to 86400)\n"
	"  -n, --iterations N    exit after N refreshes\n"
	"      --batch           plain text on stdout instead of the screen: no\n"
	"                        terminal needed (for scripts: --batch -n N)\n"
	"      --rows N          show at most N rows (default: what fits the screen;\n"
	"                        30 with --batch; 0: all)\n"
	"      --no-demangle     C++ and Rust functions by their mangled names\n"
	"  -p, --pid PID         one process, all its threads (and what it creates)\n"
	"  -t, --tid TID         one thread\n"
	"  -a, --all-cpus        every CPU (the default without a task or command)\n"
	"  -C, --cpu LIST        these CPUs only (e.g. 0-3,6); not with --count\n"
	"  -G, --cgroup CG       only the tasks of cgroup CG (a cgroup v2 path relative\n"
	"                        to the hierarchy's root), on every CPU or -C's\n"
	"  -i, --no-inherit      leave out the processes and threads the task creates\n"
	"  -h, --help            show this help\n"
	"\n"
	"The header shows the samples of each refresh and, since the start, the\n"
	"records the kernel lost and the times it throttled sampling.  Exit status:\n"
	"0, or a command's own (128+N if a signal N killed it); 1 on errors, 2 on bad\n"
	"usage, 127 if the command cannot be executed, 128+N when signal N (SIGINT,\n"
	"SIGTERM, SIGHUP) stopped it.  See hwc-top(1).\n";

static int usage_error(const char *fmt, const char *arg)
{
	return cli_usage_error("top", fmt, arg);
}

/* Returns -1 to go on, else the exit status (help, usage error). */
static int parse_options(int argc, char **argv, struct top_opts *o)
{
	enum { OPT_COUNT = 256, OPT_BATCH, OPT_ROWS, OPT_NO_DEMANGLE, OPT_BY };
	static const struct option longopts[] = {
		{"event", required_argument, NULL, 'e'},
		{"freq", required_argument, NULL, 'F'},
		{"count", no_argument, NULL, OPT_COUNT},
		{"by", required_argument, NULL, OPT_BY},
		{"delay", required_argument, NULL, 'd'},
		{"iterations", required_argument, NULL, 'n'},
		{"batch", no_argument, NULL, OPT_BATCH},
		{"rows", required_argument, NULL, OPT_ROWS},
		{"no-demangle", no_argument, NULL, OPT_NO_DEMANGLE},
		CLI_TARGET_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long v;
	int c, r;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:e:F:gd:n:h" CLI_TARGET_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (!cli_add_spec(&o->specs, &o->nspecs, optarg))
				return usage_error("%s", "out of memory");
			break;
		case 'F':
			if (!cli_parse_long(optarg, 1, INT_MAX, &v))
				return usage_error("invalid frequency '%s' for -F (expected samples a "
						   "second, from 1 to 2147483647)",
						   optarg);
			o->freq = (uint64_t)v;
			break;
		case 'g': o->callgraph = true; break;
		case OPT_COUNT: o->count = true; break;
		case OPT_BY:
			if (strcmp(optarg, "cgroup") != 0 && strcmp(optarg, "process") != 0)
				return usage_error("unknown --by '%s' (expected process or cgroup)", optarg);
			o->by_cgroup = strcmp(optarg, "cgroup") == 0;
			break;
		case 'd':
			if (!cli_parse_double(optarg, 0.1, 86400, &o->delay))
				return usage_error("invalid delay '%s' for -d (expected seconds, from 0.1 "
						   "to 86400)",
						   optarg);
			break;
		case 'n':
			if (!cli_parse_long(optarg, 1, LONG_MAX, &o->iterations))
				return usage_error("invalid number of refreshes '%s' for -n (expected 1 "
						   "to 9223372036854775807)",
						   optarg);
			break;
		case OPT_BATCH: o->batch = true; break;
		case OPT_NO_DEMANGLE: o->no_demangle = true; break;
		case OPT_ROWS:
			if (!cli_parse_long(optarg, 0, INT_MAX, &o->rows))
				return usage_error("invalid number of rows '%s' for --rows (expected 0 for "
						   "all, up to 2147483647)",
						   optarg);
			break;
		case 'h': fputs(usage_text, stdout); return 0;
		default:
			if ((r = cli_other_option("top", c, argv, &o->t)) >= 0)
				return r;
		}
	}
	o->t.argv = optind < argc ? argv + optind : NULL;
	struct cli_target *t = &o->t;
	if (!t->pid && !t->tid && !t->argv && !t->cpus && !t->cgroup)
		t->all_cpus = true;
	if ((r = cli_target_check("top", t, "watch", "watch", "profiling")) >= 0)
		return r;
	bool cpus = t->all_cpus || t->cpus || t->cgroup;
	if (o->by_cgroup && !o->count)
		return usage_error("%s", "--by cgroup chooses --count's rows; give --count");
	if (o->by_cgroup && (t->argv || t->cpus))
		return usage_error("%s", "--count --by cgroup counts every CPU until q: no command, "
					 "no -C");
	if (o->count && t->cgroup && !o->by_cgroup)
		return usage_error("%s", "--count counts per process; with --cgroup, give --by "
					 "cgroup for a row per cgroup of its tree");
	if (o->count && cpus && t->argv)
		return usage_error("%s", "--count with a command counts the command: give no -a or -C");
	if (o->count && t->cpus)
		return usage_error("%s", "--count counts per process, not per CPU: -C does not apply");
	if (o->count && (o->freq || o->callgraph || o->no_demangle))
		return usage_error("%s", "-F, -g and --no-demangle are for sampling; --count counts");
	if (!o->count && o->nspecs > 1)
		return usage_error("%s", "hwc top samples one event: give one -e (several events "
					 "are for --count)");
	o->system = cpus;
	return -1;
}

/* ------------------------------------------------------------ shared */

uint64_t top_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

bool top_comm(pid_t pid, pid_t tid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	bool ok = f && fgets(buf, (int)size, f);
	if (!ok)
		snprintf(buf, size, "?");
	buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
	return ok;
}

void top_describe_target(const struct top_opts *o, pid_t pid, char *buf, size_t size)
{
	const struct cli_target *t = &o->t;
	char comm[32];
	if (t->cgroup)
		snprintf(buf, size, "cgroup %s%s%s", t->cgroup, t->argv ? " while command runs: " : "",
			 t->argv ? t->argv[0] : "");
	else if (t->argv && (t->all_cpus || t->cpus))
		snprintf(buf, size, "every CPU while command %s (pid %d) runs", t->argv[0], (int)pid);
	else if (t->argv)
		snprintf(buf, size, "command %s (pid %d)%s", t->argv[0], (int)pid,
			 t->no_inherit ? "" : " and what it creates");
	else if (t->pid) {
		top_comm(t->pid, t->pid, comm, sizeof(comm));
		snprintf(buf, size, "process %d (%s)%s", (int)t->pid, comm,
			 t->no_inherit ? ", its threads" : " and what it creates");
	} else if (t->tid) {
		top_comm(t->tid, t->tid, comm, sizeof(comm));
		snprintf(buf, size, "thread %d (%s)", (int)t->tid, comm);
	} else if (t->cpus) {
		size_t len = (size_t)snprintf(buf, size, "CPU%s", t->ncpus > 1 ? "s" : "");
		for (size_t i = 0; i < t->ncpus && len < size; i++)
			len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? "," : " ", t->cpus[i]);
	} else {
		int n = hwc_online_cpus(NULL, 0);
		snprintf(buf, size, "every CPU (%d online)", n);
	}
}

void top_tick_notes(const struct top_tick *tick, const char *work, struct top_frame *f)
{
	if (tick->n == 1)
		top_frame_add(f, "note: counted from hwc top's start: %.2f s starting up, then %.2f s "
				 "watching",
			      tick->startup, tick->seconds - tick->startup);
	if (tick->last || tick->late < 0.01)
		return;
	/* What made it late: starting up (the first), the view's work, and
	 * the rest, which is waiting for a CPU. */
	char why[256] = "";
	size_t len = 0;
	double rest = tick->late;
	double startup = tick->n == 1 ? tick->startup - (tick->seconds - tick->late) : 0;
	if (startup > rest)
		startup = rest;
	if (startup >= 0.01) {
		len += (size_t)snprintf(why + len, sizeof(why) - len, ": %.2f s starting up", startup);
		rest -= startup;
	}
	double busy = tick->busy < rest ? tick->busy : rest;
	if (busy >= 0.01 && work && len < sizeof(why)) {
		len += (size_t)snprintf(why + len, sizeof(why) - len, "%s%.2f s %s", len ? ", " : ": ",
					busy, work);
		rest -= busy;
	}
	if (rest >= 0.01 && len < sizeof(why))
		snprintf(why + len, sizeof(why) - len, "%s%.2f s waiting to run", len ? ", " : ": ", rest);
	top_frame_add(f, "note: %.2f s late%s", tick->late, why);
}

void top_end_message(const struct top_opts *o, pid_t pid, int status, char *msg, size_t size)
{
	const struct cli_target *t = &o->t;
	if (t->argv && status != -1)
		snprintf(msg, size, "command %s exited (%s %d)", t->argv[0],
			 WIFSIGNALED(status) ? "signal" : "status",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	else
		snprintf(msg, size, "%s %d exited; nothing left to watch", t->tid ? "thread" : "process",
			 (int)pid);
}

/* ------------------------------------------------------------ frames */

void top_frame_add(struct top_frame *f, const char *fmt, ...)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		char **l = realloc(f->lines, cap * sizeof(*l));
		if (!l)
			return; /* out of memory: the frame is short, never wrong */
		f->lines = l;
		f->cap = cap;
	}
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&f->lines[f->n], fmt, ap) >= 0)
		f->n++;
	va_end(ap);
}

void top_frame_titles(struct top_frame *f)
{
	f->titles = f->n;
}

void top_frame_clear(struct top_frame *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->lines[i]);
	f->n = 0;
	f->titles = SIZE_MAX;
}

/* ------------------------------------------------------------ screen */

struct screen {
	SCREEN *scr;
	bool curses;
	long rows; /* --rows, -1: unset */
};

static void show_batch(const struct screen *sc, const struct top_frame *f)
{
	long rows = sc->rows < 0 ? BATCH_ROWS : sc->rows;
	for (size_t i = 0; i < f->n; i++) {
		if (f->titles != SIZE_MAX && i > f->titles && rows && (long)(i - f->titles) > rows)
			break;
		printf("%s\n", f->lines[i]);
	}
	printf("\n");
	out_flush(stdout);
}

static void show_curses(const struct screen *sc, const struct top_frame *f)
{
	erase();
	int y = 0;
	for (size_t i = 0; i < f->n && y < LINES; i++) {
		if (f->titles != SIZE_MAX && i > f->titles && sc->rows > 0 && (long)(i - f->titles) > sc->rows)
			break;
		bool titles = i == f->titles;
		if (titles)
			attron(A_REVERSE);
		mvaddnstr(y, 0, f->lines[i], COLS);
		if (titles) {
			int len = (int)strlen(f->lines[i]);
			for (int x = len; x < COLS; x++)
				mvaddch(y, x, ' ');
			attroff(A_REVERSE);
		}
		y++;
	}
	refresh();
}

static void show(const struct screen *sc, const struct top_frame *f)
{
	if (sc->curses)
		show_curses(sc, f);
	else
		show_batch(sc, f);
}

/* False when the terminal cannot be driven (TERM unknown); initscr()
 * would exit then, with the command still running. */
static bool screen_start(struct screen *sc)
{
	const char *term = getenv("TERM");
	sc->scr = newterm(NULL, stdout, stdin);
	if (!sc->scr) {
		fprintf(stderr, "hwc top: cannot drive this terminal (TERM=%s); give --batch for plain "
				"text\n",
			term ? term : "");
		return false;
	}
	cbreak(); /* keys one by one; Ctrl-C still raises SIGINT */
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	sc->curses = true;
	return true;
}

static void screen_end(struct screen *sc)
{
	if (!sc->curses)
		return;
	endwin();
	delscreen(sc->scr);
	sc->curses = false;
}

/* Keys waiting: true when one says quit.  A resize redraws FRAME. */
static bool keys(const struct screen *sc, const struct top_frame *frame)
{
	int ch;
	while ((ch = getch()) != ERR) {
		if (ch == 'q' || ch == 'Q')
			return true;
		if (ch == KEY_RESIZE)
			show(sc, frame);
	}
	return false;
}

/* ------------------------------------------------------------ the loop */

static void header(const struct top_opts *o, const struct top_view *v, const struct screen *sc,
		   struct top_frame *f)
{
	top_frame_clear(f);
	top_frame_add(f, "hwc top%s: %s; every %g s", sc->curses ? " (q quits)" : "", v->what, o->delay);
}

/* Refresh until the iterations are done, q, a stop signal or the target's
 * end.  The first refresh is due an interval after START, hwc top's own
 * start: starting up (opening events, reading /proc) is part of it, never
 * a delay before it.  Returns the exit status. */
static int run(const struct top_opts *o, struct top_view *v, uint64_t start)
{
	struct screen sc = {.rows = o->rows};
	struct top_frame f = {.titles = SIZE_MAX};
	if (!o->batch && !screen_start(&sc))
		return 1;
	uint64_t delay = (uint64_t)(o->delay * 1e9), last = start, next = start + delay;
	uint64_t opened = top_now();
	double startup = (double)(opened - start) / 1e9;
	header(o, v, &sc, &f);
	top_frame_add(&f, "first refresh in %.1f s", opened < next ? (double)(next - opened) / 1e9 : 0);
	if (sc.curses)
		show(&sc, &f);
	/* The interval's samples are taken in as they come; a refresh waits
	 * at most a tenth of the interval for the last of them, the last
	 * refresh (-n) for all. */
	uint64_t grace = delay / 10 < MAX_GRACE_NS ? delay / 10 : MAX_GRACE_NS;
	struct top_tick tick = {0};
	double busy = 0; /* the view's work after the refresh was due */
	int status = -1;
	char msg[512] = "";
	bool ended = false, quit = false;
	while (!cli_stop_signal && !quit) {
		uint64_t now = top_now();
		if (now >= next) {
			bool final = o->iterations && tick.n + 1 >= o->iterations;
			v->wait(v->state, 0, final ? UINT64_MAX : now + grace);
			uint64_t taken = top_now();
			busy += (double)(taken - now) / 1e9;
			tick = (struct top_tick){
				.n = tick.n + 1, .seconds = (double)(taken - last) / 1e9,
				.startup = tick.n ? 0 : startup, .late = (double)(taken - next) / 1e9,
				.busy = busy,
			};
			header(o, v, &sc, &f);
			v->fill(v->state, &tick, &f);
			show(&sc, &f);
			last = taken;
			busy = 0;
			if (o->iterations && tick.n >= o->iterations)
				break;
			/* A full interval from this one, even after a late one
			 * (a stopped terminal, a slow first look at symbols): no
			 * burst of refreshes, no sliver of an interval. */
			next = taken + delay;
			continue;
		}
		int ms = (int)((next - now + 999999) / 1000000);
		if (ms > MAX_WAIT_MS)
			ms = MAX_WAIT_MS;
		if (sc.curses) {
			struct pollfd in = {STDIN_FILENO, POLLIN, 0};
			poll(&in, 1, ms); /* a signal (SIGWINCH, SIGINT) ends it early */
			busy += v->wait(v->state, 0, next);
			/* A terminal gone without a SIGHUP ends the view too. */
			quit = keys(&sc, &f) || (in.revents & (POLLHUP | POLLERR | POLLNVAL));
		} else {
			busy += v->wait(v->state, ms, next);
		}
		if (v->ended(v->state, &status, msg, sizeof(msg))) {
			ended = true;
			break;
		}
	}
	/* In text, what came since the last refresh is shown, not lost: the
	 * target's end or a signal cut the interval short. */
	if (!sc.curses && (ended || cli_stop_signal) && top_now() > last) {
		v->wait(v->state, 0, UINT64_MAX);
		tick = (struct top_tick){.n = tick.n + 1, .seconds = (double)(top_now() - last) / 1e9,
					 .last = true, .startup = tick.n ? 0 : startup};
		header(o, v, &sc, &f);
		v->fill(v->state, &tick, &f);
		show(&sc, &f);
	}
	screen_end(&sc);
	top_frame_clear(&f);
	free(f.lines);
	if (ended)
		fprintf(stderr, "hwc top: %s\n", msg);
	if (out_close(stdout, NULL))
		return 1;
	if (cli_stop_signal)
		return 128 + cli_stop_signal;
	return ended && status != -1 ? cli_exit_status(status) : 0;
}

/* Watching every CPU needs privilege: say so before anything is opened. */
static int check_system_wide(const struct top_opts *o)
{
	struct hwc_permissions p;
	if (!o->system || hwc_permissions(&p) || p.cpu_wide)
		return 0;
	fprintf(stderr,
		"hwc top: watching every CPU needs root or CAP_PERFMON while "
		"kernel.perf_event_paranoid is %d; run as root or `sysctl kernel.perf_event_paranoid=0`, "
		"or give -p PID to watch a process of your own\n",
		p.paranoid);
	return 1;
}

int cmd_top(int argc, char **argv)
{
	struct top_opts o = {.prog = "top", .delay = 1, .rows = -1};
	int r = parse_options(argc, argv, &o);
	if (r >= 0)
		goto out;
	uint64_t start = top_now();
	if (!o.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		fprintf(stderr, "hwc top: the live view needs a terminal on stdin and stdout; "
				"give --batch for plain text\n");
		r = 1;
		goto out;
	}
	if ((r = check_system_wide(&o)))
		goto out;
	cli_raise_fd_limit();
	cli_catch_stop_signals();
	struct top_view v = {0};
	if ((r = o.count ? top_count_open(&o, &v) : top_sample_open(&o, &v)))
		goto out;
	r = run(&o, &v, start);
	v.close(v.state);
out:
	free(o.specs);
	free(o.t.cpus);
	return r;
}
