/* cputrack(1): count events of a process and its LWPs with libcpc and
 * libpctx, printing illumos's columns: time, [pid,] lwp, event, counts. */
#include "cpucmds.h"
#include "num.h"
#include "out.h"

#include <hwc/output.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
	bool verbose, title, tick, follow_fork, follow_exec;
	uint_t msec, nsamples;
	int nsets;
	pid_t pid;
	FILE *log;
	struct setgrp *master;
} opt = {.title = true, .msec = 1000};

static cpc_t *cpc;
/* -o FILE: a temporary file renamed over FILE at the end; removed if
 * cputrack exits before, leaving an earlier FILE as it was. */
static hwc_output *logout;

static void discard_logout(void)
{
	hwc_output_discard(logout);
	logout = NULL;
}
/* The handle a termination signal ends: the one this process runs. */
static pctx_t *volatile running_pctx;
static volatile sig_atomic_t stop_signal;

/* Per process: a group of sets per LWP, and the totals of finished LWPs. */
struct pstate {
	struct setgrp *accum;
	struct setgrp **lwp; /* [lwpid - 1] */
	int nlwp;
	bool stopped_at_exec; /* exec seen and not followed: not an error */
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage:\n"
		"\t%s [-T secs] [-N count] [-Defhntv] [-o file]\n"
		"\t\t-c events [command [args] | -p pid]\n\n"
		"\t-T secs\t  seconds between samples, default 1\n"
		"\t-N count  number of samples, default unlimited\n"
		"\t-D\t  enable debug mode\n"
		"\t-e\t  follow exec(2), and execve(2)\n"
		"\t-f\t  follow fork(2), clone(2) of processes, and vfork(2)\n"
		"\t-h\t  print extended usage information\n"
		"\t-n\t  suppress titles\n"
		"\t-t\t  include virtualized %s register\n"
		"\t-v\t  verbose mode\n"
		"\t-o file\t  write cpu statistics to this file\n"
		"\t-c events specify processor events to be monitored\n"
		"\t-p pid\t  pid of existing process to capture\n\n"
		"\tUse cpustat(8) to monitor system-wide statistics.\n",
		cpucmds_program, CPUCMDS_TICK_NAME);
}

/* ---------------------------------------------------------------- output */

static void print_title(struct setgrp *g)
{
	fprintf(opt.log, "%7s ", "time");
	if (opt.follow_fork)
		fprintf(opt.log, "%6s ", "pid");
	fprintf(opt.log, "%3s %10s ", "lwp", "event");
	if (opt.tick)
		fprintf(opt.log, "%9s ", CPUCMDS_TICK_NAME);
	fprintf(opt.log, "%s\n", setgrp_current(g)->header);
	out_flush(opt.log);
}

static void print_sample(pid_t pid, id_t lwpid, const char *what, cpc_buf_t *buf,
			 const struct cmdset *cs)
{
	fprintf(opt.log, "%7.3f ", cpucmds_timestamp(cpc_buf_hrtime(cpc, buf)));
	if (opt.follow_fork)
		fprintf(opt.log, "%6d ", (int)pid);
	fprintf(opt.log, "%3d %10s ", (int)lwpid, what);
	if (opt.tick)
		fprintf(opt.log, "%9" PRIu64 " ", cpc_buf_tick(cpc, buf));
	for (int i = 0; i < cs->nreqs; i++) {
		uint64_t v = 0;
		cpc_buf_get(cpc, buf, i, &v);
		fprintf(opt.log, "%9" PRIu64 " ", v);
	}
	if (opt.nsets > 1)
		fprintf(opt.log, " # %s\n", cs->name);
	else
		fputc('\n', opt.log);
}

/* A line without counts: "# note" in the place of the first columns. */
static void print_note(double when, pid_t pid, id_t lwpid, const char *what, const char *fmt,
		       ...) __attribute__((format(printf, 5, 6)));
static void print_note(double when, pid_t pid, id_t lwpid, const char *what, const char *fmt,
		       ...)
{
	fprintf(opt.log, "%7.3f ", when);
	if (opt.follow_fork)
		fprintf(opt.log, "%6d ", (int)pid);
	fprintf(opt.log, "%3d %10s ", (int)lwpid, what);
	if (opt.tick)
		fprintf(opt.log, "%9s ", "");
	fprintf(opt.log, "%9s %9s # ", "", "");
	va_list ap;
	va_start(ap, fmt);
	vfprintf(opt.log, fmt, ap);
	va_end(ap);
	fputc('\n', opt.log);
	out_flush(opt.log);
}

/* The totals of finished LWPs, one line per set that ran. */
static double print_accum(struct pstate *st, pid_t pid, id_t lwpid, const char *what)
{
	double last = 0;
	for (int i = 0; st->accum && i < st->accum->nsets; i++) {
		struct cmdset *cs = &st->accum->sets[i];
		hrtime_t t = cpc_buf_hrtime(cpc, cs->data1);
		if (t == 0)
			continue;
		print_sample(pid, lwpid, what, cs->data1, cs);
		if (cpucmds_timestamp(t) > last)
			last = cpucmds_timestamp(t);
	}
	out_flush(opt.log);
	return last;
}

/* ---------------------------------------------------------------- handlers */

static struct setgrp *lwp_group(struct pstate *st, id_t lwpid)
{
	return lwpid >= 1 && (int)lwpid <= st->nlwp ? st->lwp[lwpid - 1] : NULL;
}

static int init_lwp(pctx_t *pctx, pid_t pid, id_t lwpid, void *arg)
{
	struct pstate *st = arg;
	if ((int)lwpid > st->nlwp) {
		struct setgrp **p = realloc(st->lwp, (size_t)lwpid * sizeof(*p));
		if (!p) {
			fprintf(stderr, "%6d: init_lwp: out of memory\n", (int)pid);
			return -1;
		}
		while (st->nlwp < (int)lwpid)
			p[st->nlwp++] = NULL;
		st->lwp = p;
	}
	struct setgrp *g = st->lwp[lwpid - 1];
	if (!g && !(g = st->lwp[lwpid - 1] = setgrp_clone(opt.master))) {
		fprintf(stderr, "%6d: init_lwp: out of memory\n", (int)pid);
		return -1;
	}
	setgrp_reset(g);
	struct cmdset *cs = setgrp_current(g);
	if (cpc_bind_pctx(cpc, pctx, lwpid, cs->set, 0) != 0 ||
	    cpc_set_sample(cpc, cs->set, cs->data2) != 0) {
		fprintf(stderr, "%6d: init_lwp: can't bind perf counters to lwp%d - %s\n", (int)pid,
			(int)lwpid, strerror(errno));
		return -1;
	}
	if (opt.verbose)
		print_sample(pid, lwpid, "init_lwp", cs->data2, cs);
	return 0;
}

static int fini_lwp(pctx_t *pctx, pid_t pid, id_t lwpid, void *arg)
{
	(void)pctx;
	struct pstate *st = arg;
	struct setgrp *g = lwp_group(st, lwpid);
	if (!g)
		return 0;
	struct cmdset *cs = setgrp_current(g);
	if (cpc_set_sample(cpc, cs->set, cs->scratch) != 0) {
		fprintf(stderr, "%6d: fini_lwp: lwp%d: can't access perf counters - %s\n", (int)pid,
			(int)lwpid, strerror(errno));
		return -1;
	}
	if (opt.nsets == 1) {
		/* One set: the sample is the LWP's total. */
		cpc_buf_t *t = cs->data1;
		cs->data1 = cs->scratch;
		cs->scratch = t;
	} else {
		/* Several: data1 holds the totals before this sample period. */
		cpc_buf_add(cpc, cs->data1, cs->data1, cs->scratch);
	}
	if (opt.verbose)
		print_sample(pid, lwpid, "fini_lwp", cs->data1, cs);
	setgrp_accum(st->accum, g);
	cpc_unbind(cpc, cs->set);
	return 0;
}

static int lwp_create(pctx_t *pctx, pid_t pid, id_t lwpid, void *arg)
{
	(void)pctx;
	struct setgrp *g = lwp_group(arg, lwpid);
	if (g) {
		struct cmdset *cs = setgrp_current(g);
		print_sample(pid, lwpid, "lwp_create", cs->data2, cs);
	}
	return 0;
}

static int lwp_exit(pctx_t *pctx, pid_t pid, id_t lwpid, void *arg)
{
	(void)pctx;
	struct setgrp *g = lwp_group(arg, lwpid);
	for (int i = 0; g && i < g->nsets; i++)
		if (cpc_buf_hrtime(cpc, g->sets[i].data1) != 0)
			print_sample(pid, lwpid, "lwp_exit", g->sets[i].data1, &g->sets[i]);
	return 0;
}

static void free_lwps(struct pstate *st)
{
	for (int i = 0; i < st->nlwp; i++)
		setgrp_free(st->lwp[i]);
	free(st->lwp);
	st->lwp = NULL;
	st->nlwp = 0;
}

static int exec_event(pctx_t *pctx, pid_t pid, id_t lwpid, char *cmd, void *arg)
{
	(void)pctx;
	struct pstate *st = arg;
	/* The totals of the program image that is gone, then the new image. */
	double now = print_accum(st, pid, lwpid, "exec");
	print_note(now, pid, 1, "exec", "'%s'", cmd ? cmd : "(unknown)");
	setgrp_free(st->accum);
	st->accum = NULL;
	free_lwps(st);
	if (!opt.follow_exec) {
		st->stopped_at_exec = true;
		return -1;
	}
	st->accum = setgrp_clone(opt.master);
	return st->accum ? 0 : -1;
}

static void exit_event(pctx_t *pctx, pid_t pid, id_t lwpid, int status, void *arg)
{
	(void)pctx, (void)status;
	struct pstate *st = arg;
	print_accum(st, pid, lwpid, "exit");
	setgrp_free(st->accum);
	st->accum = NULL;
	free_lwps(st);
}

static int tick(pctx_t *pctx, pid_t pid, id_t lwpid, void *arg)
{
	struct setgrp *g = lwp_group(arg, lwpid);
	if (!g)
		return 0;
	struct cmdset *cs = setgrp_current(g);
	if (setgrp_sample(g) != 0)
		goto broken;
	if (opt.nsets > 1) {
		/* Binding the next set replaces this one. */
		struct cmdset *next = setgrp_next(g);
		if (cpc_bind_pctx(cpc, pctx, lwpid, next->set, 0) != 0)
			goto broken;
	}
	print_sample(pid, lwpid, "tick", cs->scratch, cs);
	out_flush(opt.log);
	return 0;
broken:
	fprintf(stderr, "%6d: tick: lwp%d: can't access perf counter - %s\n", (int)pid,
		(int)lwpid, strerror(errno));
	cpc_unbind(cpc, setgrp_current(g)->set);
	return -1;
}

/* After a termination signal: one last tick for each LWP still counted,
 * so that the counts since the last tick are not lost. */
static void final_ticks(pctx_t *pctx, pid_t pid, struct pstate *st)
{
	for (int i = 0; i < st->nlwp; i++)
		if (st->lwp[i] && pctx_lwp_tid(pctx, (id_t)(i + 1)) > 0)
			tick(pctx, pid, (id_t)(i + 1), st);
}

static int run(pctx_t *pctx, struct pstate *st);

/* The arguments in the order illumos's libpctx passes them (the child's
 * pid before the LWP id), not the order its typedef names them. */
static void fork_event(pctx_t *pctx, pid_t pid, pid_t child, id_t lwpid, void *arg)
{
	/* In a new controller process that holds CHILD; ARG is this process's
	 * copy of the parent's state, which the child's handlers get too. */
	struct pstate *st = arg;
	print_note(cpucmds_timestamp(0), pid, lwpid, "fork", "%d", (int)child);
	if (!opt.follow_fork)
		return;
	setgrp_free(st->accum);
	st->accum = NULL;
	free_lwps(st);
	st->stopped_at_exec = false;
	running_pctx = pctx;
	run(pctx, st);
}

static int run(pctx_t *pctx, struct pstate *st)
{
	pid_t pid = pctx_lwp_tid(pctx, 1);
	if (pctx_set_events(pctx, PCTX_SYSC_EXEC_EVENT, exec_event, PCTX_SYSC_FORK_EVENT,
			    fork_event, PCTX_SYSC_EXIT_EVENT, exit_event,
			    PCTX_SYSC_LWP_CREATE_EVENT, lwp_create, PCTX_INIT_LWP_EVENT, init_lwp,
			    PCTX_FINI_LWP_EVENT, fini_lwp, PCTX_SYSC_LWP_EXIT_EVENT, lwp_exit,
			    PCTX_NULL_EVENT) != 0) {
		cpucmds_error("can't bind process context ops to process\n");
		return 1;
	}
	st->accum = setgrp_clone(opt.master);
	if (!st->accum) {
		cpucmds_error("out of memory\n");
		return 1;
	}
	int err = pctx_run(pctx, opt.msec, opt.nsamples, tick);
	if (stop_signal)
		final_ticks(pctx, pid, st);
	setgrp_free(st->accum);
	st->accum = NULL;
	free_lwps(st);
	return err != 0 && !st->stopped_at_exec ? 1 : 0;
}

/* libpctx's reports, as the tool's own: "cputrack: message". */
static void pctx_errfn(const char *fn, const char *fmt, va_list ap)
{
	cpucmds_errfn(fn, -1, fmt, ap);
}

static void on_signal(int sig)
{
	stop_signal = sig;
	if (running_pctx)
		pctx_terminate(running_pctx);
}

int main(int argc, char **argv)
{
	out_init(NULL, 1);
	if (!(cpc = cpucmds_open(argv[0], "cannot access performance counter library")))
		return 1;
	opt.log = stdout;
	atexit(discard_logout);
	opt.master = setgrp_new(cpc);
	if (!opt.master) {
		cpucmds_error("no memory available\n");
		return 1;
	}
	int c, errors = 0;
	bool help = false;
	long n;
	long long v;
	enum num_result r;
	while ((c = getopt(argc, argv, "+T:N:Defhntvo:c:p:")) != -1) {
		switch (c) {
		case 'T':
			if ((n = cpucmds_parse_seconds(optarg)) < 0 || n > UINT_MAX) {
				cpucmds_error("invalid interval '%s' for -T: seconds from 0 to %d, such "
					      "as 1 or 0.25\n",
					      optarg, CPUCMDS_MAX_SECONDS);
				errors++;
			} else {
				opt.msec = (uint_t)n;
			}
			break;
		case 'N':
			if ((r = num_llong(optarg, 10, 0, UINT_MAX, &v)) != NUM_OK) {
				cpucmds_error("invalid count '%s' for -N: %s (0 to %u)\n", optarg,
					      num_problem(r), UINT_MAX);
				errors++;
			} else {
				opt.nsamples = (uint_t)v;
			}
			break;
		case 'D': cpucmds_debug++; break;
		case 'e': opt.follow_exec = true; break;
		case 'f': opt.follow_fork = true; break;
		case 'h': help = true; break;
		case 'n': opt.title = false; break;
		case 't': opt.tick = true; break;
		case 'v': opt.verbose = true; break;
		case 'o':
			discard_logout();
			if (hwc_output_create(&logout, optarg, 0) ||
			    !(opt.log = hwc_output_stream(logout))) {
				cpucmds_error("%s\n", hwc_errdetail()); /* it names the file */
				return 1;
			}
			break;
		case 'c':
			if (setgrp_add(opt.master, optarg))
				errors++;
			break;
		case 'p':
			if ((r = num_llong(optarg, 10, 1, INT_MAX, &v)) != NUM_OK) {
				cpucmds_error("invalid pid '%s' for -p: %s (1 to %d)\n", optarg,
					      num_problem(r), INT_MAX);
				errors++;
			} else {
				opt.pid = (pid_t)v;
			}
			break;
		default:
			errors++;
			break;
		}
	}
	opt.nsets = opt.master->nsets;
	bool has_cmd = optind < argc;
	if (help) {
		cpucmds_help(cpc, usage);
		return 0;
	}
	if (!errors && opt.nsets == 0)
		cpucmds_error("no events: -c events is required\n");
	else if (!errors && !has_cmd && !opt.pid)
		cpucmds_error("no command to run and no -p pid\n");
	else if (!errors && has_cmd && opt.pid)
		cpucmds_error("give a command or -p pid, not both\n");
	if (errors || opt.nsets == 0 || has_cmd == (opt.pid != 0)) {
		usage(stderr);
		return 2;
	}
	setvbuf(opt.log, NULL, _IOLBF, 0);

	struct pstate st = {.accum = NULL};
	pctx_t *pctx;
	if (opt.pid) {
		pctx = pctx_capture(opt.pid, &st, 1, pctx_errfn);
		if (!pctx) {
			cpucmds_error("failed to capture pid %d\n", (int)opt.pid);
			return 1;
		}
	} else {
		pctx = pctx_create(argv[optind], &argv[optind], &st, 1, pctx_errfn);
		if (!pctx) {
			cpucmds_error("failed to start program '%s'\n", argv[optind]);
			return 1;
		}
	}
	/* A termination signal ends the loop cleanly: the last counts are
	 * printed and the process is let go (it is never killed). */
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	running_pctx = pctx;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (opt.title)
		print_title(opt.master);
	cpucmds_zerotime();
	int ret = run(pctx, &st);
	pctx_release(pctx);
	fflush(opt.log);
	if (logout) {
		hwc_output *o = logout;
		logout = NULL;
		opt.log = stdout;
		if (hwc_output_commit(o)) { /* a write error, e.g. a full disk */
			cpucmds_error("%s\n", hwc_errdetail());
			ret = 1;
		}
	}
	cpc_close(cpc);
	if (stop_signal) {
		signal(stop_signal, SIG_DFL);
		raise(stop_signal);
	}
	return ret;
}
