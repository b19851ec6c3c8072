/* hwc stat: count events for a command, a process, a thread or the whole
 * system, like perf stat, and say exactly what was measured: every value
 * keeps its raw count and times, events the machine lacks are named, and a
 * user-space-only fallback is announced.  Output is in stat_print.c. */
#include "cli.h"
#include "stat.h"
#include "stat_regions.h"

#include <hwc/output.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_NOEXEC = 127 };

/* -G CGROUPS, applied to the events of the first NSPECS -e specs. */
struct cgroup_opt {
	const char *list;
	size_t nspecs;
};

struct options {
	const char **specs;
	size_t nspecs;
	struct cgroup_opt *cgroups; /* -G, in order */
	size_t ncgroups;
	struct cli_target t; /* -p, -t, -a, -C, -i, the command */
	bool per_cpu, per_thread, json, hybrid_merge, no_merge;
	bool regions; /* --regions */
	enum stat_aggr topology;  /* --per-core ... --per-node, or STAT_TOTAL */
	const char *topology_opt; /* its name, for messages */
	int cache_level;          /* --per-cache: 0 for the last level */
	int big_num;              /* -B 1, --no-big-num 0, -1 unsaid */
	const char *metrics;          /* -M */
	bool topdown, metric_only, metric_no_group;
	long interval_ms, repeat, interval_count, delay_ms, timeout_ms;
	const char *sep, *output;
};

static const char usage_text[] =
	"usage: hwc stat [options] [--] command [args...]\n"
	"       hwc stat [options] -p pid | -t tid | -a | -C cpus\n"
	"\n"
	"Count events while a command runs, or in a running process or thread, or on\n"
	"the whole system (until Ctrl-C, or until the process or thread exits).\n"
	"\n"
	"  -e, --event SPEC          events to count: comma lists and {groups}, repeatable\n"
	"                            (`hwc list` shows them; {...}:W, a weak group, is\n"
	"                            counted apart when the kernel refuses it); default:\n"
	"                            task-clock, context-switches, cpu-migrations,\n"
	"                            page-faults, cycles, instructions, branches,\n"
	"                            branch-misses\n"
	"  -M, --metrics LIST        metrics or metric groups of perf's JSON tables for this\n"
	"                            CPU (`hwc list --metrics`), comma-separated; NAME:MOD\n"
	"                            puts event modifiers on their events (ipc:u)\n"
	"      --topdown             the top-down level 1 metrics (TopdownL1; PipelineL1 on AMD)\n"
	"      --metric-only         print the metrics, not the events they use\n"
	"      --metric-no-group     never group the events of a metric\n"
	"  -p, --pid PID             count an existing process, all its threads\n"
	"  -t, --tid TID             count one existing thread\n"
	"  -a, --all-cpus            count system-wide, on every online CPU\n"
	"  -C, --cpu LIST            count system-wide on these CPUs only (e.g. 0-3,6)\n"
	"  -G, --cgroup CG[,CG...]   count only in these cgroups (v2 paths relative to the\n"
	"                            hierarchy's root): as perf stat -G, the Nth cgroup\n"
	"                            given goes to the Nth event given before it with -e,\n"
	"                            one cgroup alone to all of them; per CPU, as -a\n"
	"  -A, --no-aggr             one row per CPU (with -a or -C)\n"
	"      --per-thread          one row per thread (with -p or -t)\n"
	"      --per-core            one row per core, summed over its CPUs (with -a or\n"
	"                            -C; as perf, S0-D0-C1 and the number of CPUs)\n"
	"      --per-cache[=L2|L3]   one row per cache instance, of the last level or L1 to\n"
	"                            L4 (S0-D0-L3-ID0: ID is the cache's first CPU)\n"
	"      --per-die, --per-socket, --per-node\n"
	"                            one row per die, socket or NUMA node\n"
	"  -I, --interval-print MS   print the counts of every MS milliseconds (10 to\n"
	"                            86400000)\n"
	"      --interval-count N    with -I: stop counting after N intervals\n"
	"      --hybrid-merge        on a machine with several core PMUs (hybrid), one row\n"
	"                            for a generic event, the sum of its core PMUs' counts\n"
	"                            (by default each is a row: cpu_core/cycles/, as perf)\n"
	"      --no-merge            one row per instance of an uncore PMU (uncore_imc_0/...),\n"
	"                            not their sum (so does -A)\n"
	"  -r, --repeat N            run the command N times: means and relative stddev\n"
	"  -D, --delay MS            count only from MS milliseconds after the command\n"
	"                            starts (or after hwc stat starts, without one)\n"
	"      --timeout MS          stop counting after MS milliseconds (10 or more);\n"
	"                            a command still running is sent SIGTERM\n"
	"  -B, --big-num             group digits in thousands (the default; the locale's\n"
	"                            LC_NUMERIC says how)\n"
	"      --no-big-num          no digit grouping\n"
	"  -x, --field-separator SEP CSV output, fields separated by SEP\n"
	"  -j, --json                one JSON document (schema hwc-stat/1)\n"
	"  -o, --output FILE         write the report to FILE instead of stderr\n"
	"                            (- : stderr, as perf stat -o -)\n"
	"  -i, --no-inherit          do not count child processes and new threads\n"
	"      --regions             also print the command's code regions, per thread\n"
	"                            (hwc_region_begin/_end: hwc-regions(3)), counting\n"
	"                            the -e events (default: the regions' own)\n"
	"  -h, --help                show this help\n"
	"\n"
	"Exit status: the command's (128+N if a signal N killed it), 127 if it cannot\n"
	"be executed, 1 on errors, 2 on bad usage, 130 (143) when SIGINT (SIGTERM)\n"
	"ended the counting while the command ran.  See hwc-stat(1).\n";

static int usage_error(const char *fmt, const char *arg)
{
	return cli_usage_error("stat", fmt, arg);
}

/* Returns -1 to go on, else the exit status (help, usage error). */
static int parse_options(int argc, char **argv, struct options *o)
{
	enum {
		OPT_PER_THREAD = 256, OPT_PER_CORE, OPT_PER_CACHE, OPT_PER_DIE, OPT_PER_SOCKET,
		OPT_PER_NODE, OPT_INTERVAL_COUNT, OPT_TIMEOUT, OPT_NO_BIG_NUM, OPT_HYBRID_MERGE, OPT_REGIONS,
		OPT_NO_MERGE,
		OPT_TOPDOWN, OPT_METRIC_ONLY, OPT_METRIC_NO_GROUP,
	};
	static const struct option longopts[] = {
		{"event", required_argument, NULL, 'e'},
		{"metrics", required_argument, NULL, 'M'},
		{"topdown", no_argument, NULL, OPT_TOPDOWN},
		{"metric-only", no_argument, NULL, OPT_METRIC_ONLY},
		{"metric-no-group", no_argument, NULL, OPT_METRIC_NO_GROUP},
		CLI_TARGET_LONGOPTS,
		{"no-aggr", no_argument, NULL, 'A'},
		{"per-thread", no_argument, NULL, OPT_PER_THREAD},
		{"regions", no_argument, NULL, OPT_REGIONS},
		{"per-core", no_argument, NULL, OPT_PER_CORE},
		{"per-cache", optional_argument, NULL, OPT_PER_CACHE},
		{"per-die", no_argument, NULL, OPT_PER_DIE},
		{"per-socket", no_argument, NULL, OPT_PER_SOCKET},
		{"per-node", no_argument, NULL, OPT_PER_NODE},
		{"interval-count", required_argument, NULL, OPT_INTERVAL_COUNT},
		{"delay", required_argument, NULL, 'D'},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"big-num", no_argument, NULL, 'B'},
		{"no-big-num", no_argument, NULL, OPT_NO_BIG_NUM},
		{"hybrid-merge", no_argument, NULL, OPT_HYBRID_MERGE},
		{"no-merge", no_argument, NULL, OPT_NO_MERGE},
		{"interval-print", required_argument, NULL, 'I'},
		{"repeat", required_argument, NULL, 'r'},
		{"field-separator", required_argument, NULL, 'x'},
		{"json", no_argument, NULL, 'j'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c, rc;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:e:M:AI:r:x:jo:hD:B" CLI_TARGET_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (!cli_add_spec(&o->specs, &o->nspecs, optarg))
				return usage_error("%s", "out of memory");
			break;
		case 'G': {
			if (!o->nspecs)
				return usage_error("%s", "-G needs events before it: it applies to the "
							 "events of the -e options given before it");
			struct cgroup_opt *g = realloc(o->cgroups, (o->ncgroups + 1) * sizeof(*g));
			if (!g)
				return usage_error("%s", "out of memory");
			o->cgroups = g;
			g[o->ncgroups++] = (struct cgroup_opt){optarg, o->nspecs};
			break;
		}
		case 'M':
			if (o->metrics)
				return usage_error("%s", "give -M once, with a comma list");
			o->metrics = optarg;
			break;
		case OPT_TOPDOWN: o->topdown = true; break;
		case OPT_METRIC_ONLY: o->metric_only = true; break;
		case OPT_METRIC_NO_GROUP: o->metric_no_group = true; break;
		case 'A': o->per_cpu = true; break;
		case OPT_PER_THREAD: o->per_thread = true; break;
		case OPT_REGIONS: o->regions = true; break;
		case OPT_PER_CACHE:
			/* perf's form: L or l and the level; none: the last level */
			o->cache_level = 0;
			if (optarg && ((optarg[0] != 'L' && optarg[0] != 'l') || optarg[1] < '1' ||
				       optarg[1] > '4' || optarg[2]))
				return usage_error("invalid cache level '%s' for --per-cache: give L1 to L4 "
						   "(L2, L3...), or nothing for the last level",
						   optarg);
			if (optarg)
				o->cache_level = optarg[1] - '0';
			/* fall through */
		case OPT_PER_CORE:
		case OPT_PER_DIE:
		case OPT_PER_SOCKET:
		case OPT_PER_NODE: {
			static const enum stat_aggr modes[] = {
				[OPT_PER_CORE - OPT_PER_CORE] = STAT_PER_CORE,
				[OPT_PER_CACHE - OPT_PER_CORE] = STAT_PER_CACHE,
				[OPT_PER_DIE - OPT_PER_CORE] = STAT_PER_DIE,
				[OPT_PER_SOCKET - OPT_PER_CORE] = STAT_PER_SOCKET,
				[OPT_PER_NODE - OPT_PER_CORE] = STAT_PER_NODE,
			};
			if (o->topology && o->topology != modes[c - OPT_PER_CORE])
				return usage_error("%s", "give one of --per-core, --per-cache, --per-die, "
							 "--per-socket and --per-node");
			o->topology = modes[c - OPT_PER_CORE];
			o->topology_opt = argv[optind - 1];
			break;
		}
		case OPT_INTERVAL_COUNT:
			if (!cli_parse_long(optarg, 1, LONG_MAX, &o->interval_count))
				return usage_error("invalid interval count '%s' for --interval-count "
						   "(expected 1 or more)",
						   optarg);
			break;
		case 'D':
			if (!cli_parse_long(optarg, 0, 86400000, &o->delay_ms))
				return usage_error("invalid delay '%s' for -D: give milliseconds, from 0 to "
						   "86400000 (perf's -1, start disabled until --control "
						   "enables, has no use here: hwc stat has no --control)",
						   optarg);
			break;
		case OPT_TIMEOUT:
			if (!cli_parse_long(optarg, 10, 86400000, &o->timeout_ms))
				return usage_error("invalid timeout '%s' for --timeout: give milliseconds, "
						   "from 10 to 86400000",
						   optarg);
			break;
		case 'B': o->big_num = 1; break;
		case OPT_NO_BIG_NUM: o->big_num = 0; break;
		case OPT_HYBRID_MERGE: o->hybrid_merge = true; break;
		case OPT_NO_MERGE: o->no_merge = true; break;
		case 'I':
			if (!cli_parse_long(optarg, 10, 86400000, &o->interval_ms))
				return usage_error("invalid interval '%s' for -I: give milliseconds, from 10 "
						   "to 86400000",
						   optarg);
			break;
		case 'r':
			if (!cli_parse_long(optarg, 1, 1000000, &o->repeat))
				return usage_error("invalid repeat count '%s' for -r (expected 1 to 1000000)",
						   optarg);
			break;
		case 'x':
			if (!*optarg)
				return usage_error("%s", "the field separator of -x cannot be empty");
			o->sep = optarg;
			break;
		case 'j': o->json = true; break;
		case 'o':
			if (!*optarg)
				return usage_error("%s", "the output file name of -o cannot be empty");
			/* -: the default, standard error, as perf stat -o - */
			o->output = strcmp(optarg, "-") == 0 ? NULL : optarg;
			break;
		case 'h': fputs(usage_text, stdout); return 0;
		default:
			if ((rc = cli_other_option("stat", c, argv, &o->t)) >= 0)
				return rc;
		}
	}
	o->t.argv = optind < argc ? argv + optind : NULL;
	if (o->ncgroups && (o->t.pid || o->t.tid))
		return usage_error("%s", "-G counts cgroups on every CPU: it cannot be combined "
					 "with -p or -t");
	if (o->ncgroups && !o->t.cpus)
		o->t.all_cpus = true; /* perf stat -G needs -a; hwc stat implies it */

	if ((rc = cli_target_check("stat", &o->t, "count", "count", "counting")) >= 0)
		return rc;
	bool system = o->t.all_cpus || o->t.cpus;
	if (o->per_cpu && !system)
		return usage_error("%s", "-A (one row per CPU) needs -a or -C");
	if (o->per_thread && !o->t.pid && !o->t.tid)
		return usage_error("%s", "--per-thread needs -p or -t");
	if (o->topology && !system)
		return usage_error("%s needs -a or -C: it sums the counts of CPUs", o->topology_opt);
	if (o->topology && (o->per_cpu || o->per_thread))
		return usage_error("%s cannot be combined with -A or --per-thread", o->topology_opt);
	if (o->interval_count && !o->interval_ms)
		return usage_error("%s", "--interval-count needs -I");
	if (o->timeout_ms && o->interval_ms)
		return usage_error("%s", "--timeout and -I cannot be combined (as in perf stat): use "
					 "-I with --interval-count");
	if (o->big_num == 1 && (o->sep || o->json))
		return usage_error("%s", "-B groups digits of the table: CSV (-x) and JSON never do");
	if (o->repeat && !o->t.argv)
		return usage_error("%s", "-r repeats a command; give one");
	if (o->repeat && o->interval_ms)
		return usage_error("%s", "-r and -I cannot be combined");
	if (o->metrics && o->topdown)
		return usage_error("%s", "-M and --topdown cannot be combined");
	if ((o->metric_only || o->metric_no_group) && !o->metrics && !o->topdown)
		return usage_error("%s", "--metric-only and --metric-no-group need -M or --topdown");
	if (o->sep && o->json)
		return usage_error("%s", "-x (CSV) and --json cannot be combined");
	if (o->regions && (!o->t.argv || system || o->repeat || o->interval_ms))
		return usage_error("%s", "--regions reports the regions of one run of a command: "
					 "give one, without -a, -C, -r or -I");
	return -1;
}

/* Whether the environment's locale writes numbers as C does (C.UTF-8 does:
 * no grouping, a point): then hwc stays in C, as loading the locale's files
 * costs each run ~0.1 ms (issue 13).  The variables as setlocale reads them. */
static bool numbers_are_c(void)
{
	static const char *const vars[] = {"LC_ALL", "LC_NUMERIC", "LANG"};
	const char *name = NULL;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]) && !(name && *name); i++)
		name = getenv(vars[i]);
	static const char *const c_names[] = {"", "C", "POSIX", "C.UTF-8", "C.utf8"};
	for (size_t i = 0; i < sizeof(c_names) / sizeof(c_names[0]); i++)
		if (strcmp(name ? name : "", c_names[i]) == 0)
			return true;
	return false;
}

/* ------------------------------------------------------------ signals */

/* The signal (SIGINT or SIGTERM) that ended the counting, or 0. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* SIGINT and SIGTERM end the counting and the counts so far are printed.
 * They stay blocked except while waiting, so one cannot slip in between
 * the check and the wait.  Installed before the command is forked; exec
 * resets caught handlers to the default, so the command still gets Ctrl-C.
 * Installed even when inherited as ignored (a background job): the report
 * must not be lost to `kill -INT` either.
 * Not cli_catch_stop_signals(): record and top wait in hwc_sampler_poll(),
 * which cannot take a signal mask, so they catch signals unblocked and may
 * miss one that lands between the check and the poll for a poll's length;
 * stat waits in its own ppoll() and can close that gap.  And stat has never
 * caught SIGHUP: a hangup ends it, and the command, as it ends perf stat. */
static void setup_signals(sigset_t *wait_mask)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, wait_mask);
	sigdelset(wait_mask, SIGINT);
	sigdelset(wait_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* ------------------------------------------------------------ counting */

struct stat_run {
	const struct options *o;
	hwc_evlist *list;
	struct hwc_target target;
	struct stat_report rep;
	size_t *map;       /* evlist index -> report event, SIZE_MAX for a skipped one */
	sigset_t wait_mask;
	pid_t child;       /* the command, or -1 */
	int wait_fd;       /* the counters' pidfd of the command, process or thread, or -1 */
	bool poll_tid;     /* no pidfd for the thread: look for it now and then */
	bool gone;         /* the process was gone before the wait began */
	bool ended;        /* the command, process or thread ended */
	bool timed_out;    /* --timeout ended the counting */
	bool counted_all;  /* --interval-count intervals were printed */
	long intervals;    /* intervals printed in this run */
	double stopped_at; /* seconds from t0 to the counting's end, when hwc stat ended it; else 0 */
	struct timespec t0; /* the start of the run */
	double last;       /* seconds from t0 to the last interval printed */
	int status;        /* wait status of the command */
	bool child_done;
	struct rusage ru;
	hwc_output *outfile; /* -o: replaces FILE only once the report is written */
	bool reported;       /* the report was written whole */
};

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Values of the last snapshot, [row][report event]. */
static void gather(struct stat_run *s, hwc_counters *c, struct hwc_value *v)
{
	struct stat_report *r = &s->rep;
	size_t nlist = hwc_evlist_size(s->list);
	memset(v, 0, r->nrows * r->nev * sizeof(*v));
	for (size_t row = 0; row < r->nrows; row++)
		for (size_t e = 0; e < nlist; e++) {
			struct hwc_value one;
			if (s->map[e] == SIZE_MAX ||
			    hwc_counters_value(c, r->aggr == STAT_TOTAL ? HWC_ALL : row, e, &one))
				continue;
			stat_add_values(&v[row * r->nev + s->map[e]], &one, 1); /* --hybrid-merge sums */
		}
}

/* What to wait for: the command, process or thread, through the counters'
 * pidfd.  A thread this kernel cannot watch (before Linux 6.9, one that
 * does not lead its process) is looked for every 100 ms instead. */
static int setup_wait(struct stat_run *s, hwc_counters *c)
{
	s->wait_fd = -1;
	s->gone = s->poll_tid = false;
	if (!s->o->t.argv && !s->o->t.pid && !s->o->t.tid)
		return 0; /* -a/-C alone: until a signal */
	int fd = hwc_counters_wait_fd(c);
	if (fd >= 0)
		s->wait_fd = fd;
	else if (fd == -EOPNOTSUPP)
		s->poll_tid = true;
	else if (fd == -ESRCH && s->child <= 0)
		s->gone = true; /* ended before we looked */
	else {
		fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
		return EXIT_ERROR;
	}
	return 0;
}

/* Start the counters, and with them the command if there is one. */
static int start(struct stat_run *s, hwc_counters *c)
{
	s->child = -1;
	s->child_done = false;
	s->status = 0;
	memset(&s->ru, 0, sizeof(s->ru));
	clock_gettime(CLOCK_MONOTONIC, &s->t0);
	int err = hwc_counters_start(c);
	/* The command's pid is -1 after an exec failure (it was reaped). */
	pid_t pid = s->o->t.argv ? hwc_counters_pid(c) : -1;
	if (err) {
		fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
		return s->o->t.argv && pid < 0 ? EXIT_NOEXEC : EXIT_ERROR;
	}
	s->child = pid;
	return 0;
}

/* -D: count from MS after the start.  The command was released (its exec
 * enabled the counters): stop them, wait, forget what they counted and
 * count again.  A command that ends meanwhile was counted for nothing. */
static int delay_counting(struct stat_run *s, hwc_counters *c)
{
	if (!s->o->delay_ms)
		return 0;
	/* Said as perf stat says it, but not into a JSON report on stderr. */
	bool say = s->rep.format != STAT_JSON || s->rep.out != stderr;
	int err = hwc_counters_stop(c);
	if (say)
		fprintf(stderr, "hwc stat: events disabled for %ld ms (-D)\n", s->o->delay_ms);
	double delay = (double)s->o->delay_ms / 1000;
	for (double left; !err && !s->gone && !interrupted && (left = delay - seconds_since(&s->t0)) > 0;) {
		struct timespec timeout = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
		struct pollfd pfd = {.fd = s->wait_fd, .events = POLLIN};
		int ready = ppoll(&pfd, s->wait_fd >= 0, &timeout, &s->wait_mask);
		if (ready < 0 && errno != EINTR) {
			fprintf(stderr, "hwc stat: ppoll: %s\n", strerror(errno));
			return EXIT_ERROR;
		}
		s->gone = ready > 0 && pfd.revents;
	}
	if (!err)
		err = hwc_counters_reset(c);
	if (!err && !s->gone && !interrupted && !(err = hwc_counters_start(c)) && say)
		fprintf(stderr, "hwc stat: events enabled\n");
	if (err) {
		fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
		return EXIT_ERROR;
	}
	clock_gettime(CLOCK_MONOTONIC, &s->t0); /* the time counted starts now, as perf's */
	return 0;
}

/* Print one interval's counts (V is scratch), adding them to TOTAL. */
static void print_interval(struct stat_run *s, hwc_counters *c, double now, struct hwc_value *v,
			   struct hwc_value *total)
{
	struct stat_report *r = &s->rep;
	if (hwc_counters_read(c) == 0) {
		gather(s, c, v);
		stat_report_interval(r, now, now - s->last, v);
		stat_add_values(total, v, r->nrows * r->nev);
		hwc_counters_rebase(c);
	}
	s->last = now;
}

/* Sleep until the target ends or a signal comes, printing every interval.
 * Sets s->ended when the target ended. */
static int wait_for_end(struct stat_run *s, hwc_counters *c, struct hwc_value *v,
			struct hwc_value *total)
{
	double interval = (double)s->o->interval_ms / 1000, next = interval;
	double deadline = (double)s->o->timeout_ms / 1000;
	s->last = 0;
	s->ended = s->gone;
	s->timed_out = s->counted_all = false;
	s->intervals = 0;
	while (!s->ended && !interrupted && !s->timed_out && !s->counted_all) {
		struct timespec timeout, *tp = NULL;
		if (interval > 0 || deadline > 0 || s->poll_tid) {
			double left = interval > 0   ? next - seconds_since(&s->t0)
				      : deadline > 0 ? deadline - seconds_since(&s->t0)
						     : 0.1;
			if (left < 0)
				left = 0;
			if (s->poll_tid && left > 0.1)
				left = 0.1;
			timeout.tv_sec = (time_t)left;
			timeout.tv_nsec = (long)((left - (double)timeout.tv_sec) * 1e9);
			tp = &timeout;
		}
		struct pollfd pfd = {.fd = s->wait_fd, .events = POLLIN};
		int ready = ppoll(&pfd, s->wait_fd >= 0, tp, &s->wait_mask);
		if (ready < 0 && errno != EINTR) {
			fprintf(stderr, "hwc stat: ppoll: %s\n", strerror(errno));
			return EXIT_ERROR;
		}
		s->ended = (ready > 0 && pfd.revents) ||
			   (s->poll_tid && kill(s->o->t.tid, 0) < 0 && errno == ESRCH);
		double now = seconds_since(&s->t0);
		if (interval > 0 && now >= next && !s->ended && !interrupted) {
			print_interval(s, c, now, v, total);
			while (next <= now)
				next += interval;
			s->counted_all = ++s->intervals == s->o->interval_count;
		}
		s->timed_out = deadline > 0 && now >= deadline && !s->ended;
	}
	return 0;
}

/* A SIGINT that came with the command's end (Ctrl-C reaches both) is still
 * pending: the run was interrupted all the same. */
static void note_pending_signal(void)
{
	sigset_t pending;
	if (!interrupted && sigpending(&pending) == 0)
		interrupted = sigismember(&pending, SIGINT) ? SIGINT : sigismember(&pending, SIGTERM) ? SIGTERM : 0;
}

/* Collect the command (waiting only if it ended), with its rusage. */
static void reap(struct stat_run *s)
{
	if (s->child <= 0 || s->child_done)
		return;
	pid_t r;
	do
		r = wait4(s->child, &s->status, s->ended ? 0 : WNOHANG, &s->ru);
	while (r < 0 && errno == EINTR);
	if (r == s->child)
		s->child_done = true;
}

/* The last read: the final interval and the run's total. */
static int final_read(struct stat_run *s, hwc_counters *c, struct hwc_value *v,
		      struct hwc_value *total)
{
	struct stat_report *r = &s->rep;
	double elapsed = s->stopped_at > 0 ? s->stopped_at : seconds_since(&s->t0);
	if (s->target.kind != HWC_TARGET_COMMAND)
		hwc_counters_stop(c);
	if (hwc_counters_read(c)) {
		fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
		return EXIT_ERROR;
	}
	gather(s, c, v);
	if (s->o->interval_ms > 0 && !s->counted_all)
		stat_report_interval(r, elapsed, elapsed - s->last, v);
	if (!s->counted_all) /* else the total is the intervals' */
		stat_add_values(total, v, r->nrows * r->nev);
	if (stat_report_add_run(r, total, elapsed)) {
		fprintf(stderr, "hwc stat: out of memory\n");
		return EXIT_ERROR;
	}
	return 0;
}

/* The command's user and system time, when it was reaped. */
static void add_rusage(struct stat_run *s)
{
	struct stat_report *r = &s->rep;
	if (!s->child_done)
		return;
	r->rusage_runs++;
	r->user_s += (double)s->ru.ru_utime.tv_sec + (double)s->ru.ru_utime.tv_usec / 1e6;
	r->sys_s += (double)s->ru.ru_stime.tv_sec + (double)s->ru.ru_stime.tv_usec / 1e6;
}

/* Count one run: start, wait for the end (printing intervals), read. */
static int count_run(struct stat_run *s, hwc_counters *c, struct hwc_value *total)
{
	struct stat_report *r = &s->rep;
	struct hwc_value *v = calloc(r->nrows * r->nev, sizeof(*v));
	if (!v) {
		fprintf(stderr, "hwc stat: out of memory\n");
		return EXIT_ERROR;
	}
	memset(total, 0, r->nrows * r->nev * sizeof(*total));
	s->stopped_at = 0;
	int rc = start(s, c);
	if (!rc)
		rc = setup_wait(s, c);
	if (!rc)
		rc = delay_counting(s, c);
	if (!rc) {
		rc = wait_for_end(s, c, v, total);
		note_pending_signal();
		if (s->counted_all || s->timed_out) {
			/* Stopped by hwc stat: the command is not counted any more.
			 * As perf stat, --timeout ends it, --interval-count waits. */
			s->stopped_at = seconds_since(&s->t0);
			hwc_counters_stop(c);
			if (s->timed_out && s->child > 0)
				kill(s->child, SIGTERM);
			s->ended = s->child > 0;
			reap(s);
		} else {
			reap(s);
		}
	}
	if (!rc && !(rc = final_read(s, c, v, total)))
		add_rusage(s);
	free(v);
	return rc;
}

/* ------------------------------------------------------------ setup */

static const char *add_note(struct stat_run *s, const char *text)
{
	struct stat_report *r = &s->rep;
	char *copy = strdup(text);
	const char **n = realloc(r->notes, (r->nnotes + 1) * sizeof(*n));
	if (!copy || !n) {
		free(copy);
		if (n)
			r->notes = n;
		return NULL;
	}
	r->notes = n;
	r->notes[r->nnotes++] = copy;
	/* A JSON report on stderr carries its notes: keep stderr one document. */
	if (r->format != STAT_JSON || r->out != stderr)
		fprintf(stderr, "hwc stat: %s\n", copy);
	return copy;
}

/* What a topology aggregation tells CPUs apart by, in perf's sort order. */
struct topo_key {
	int node, socket, die, cache_level, cache, core;
	size_t row;
};

static int topo_place_cmp(const struct topo_key *a, const struct topo_key *b)
{
	const int ka[] = {a->node, a->socket, a->die, a->cache_level, a->cache, a->core};
	const int kb[] = {b->node, b->socket, b->die, b->cache_level, b->cache, b->core};
	for (size_t i = 0; i < sizeof(ka) / sizeof(ka[0]); i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

static int topo_key_cmp(const void *pa, const void *pb)
{
	const struct topo_key *a = pa, *b = pb;
	int d = topo_place_cmp(a, b);
	return d ? d : a->row < b->row ? -1 : a->row > b->row;
}

/* The rows (CPUs) of a topology aggregation, grouped as perf groups them,
 * with perf's names: S0-D0-C1, S0-D0-L3-ID0, S0-D1, S1, N0. */
static int group_by_topology(struct stat_run *s)
{
	struct stat_report *r = &s->rep;
	enum stat_aggr a = r->aggr;
	struct topo_key *key = calloc(r->nrows ? r->nrows : 1, sizeof(*key));
	if (!key)
		return -ENOMEM;
	for (size_t i = 0; i < r->nrows; i++) {
		struct hwc_cpu_topology t;
		int err = hwc_cpu_topology(r->rows[i].cpu, a == STAT_PER_CACHE ? s->o->cache_level : -1, &t);
		if (err) {
			free(key);
			return err;
		}
		key[i] = (struct topo_key){.row = i, .node = a == STAT_PER_NODE ? t.node : 0};
		if (a != STAT_PER_NODE)
			key[i].socket = t.socket;
		if (a == STAT_PER_CORE || a == STAT_PER_CACHE || a == STAT_PER_DIE)
			key[i].die = t.die;
		if (a == STAT_PER_CORE)
			key[i].core = t.core;
		if (a == STAT_PER_CACHE) {
			key[i].cache_level = t.cache_level;
			key[i].cache = t.cache;
		}
	}
	qsort(key, r->nrows, sizeof(*key), topo_key_cmp);
	r->groups = calloc(r->nrows ? r->nrows : 1, sizeof(*r->groups));
	if (!r->groups) {
		free(key);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->nrows; i++) {
		struct topo_key k = key[i];
		if (!i || topo_place_cmp(&k, &key[i - 1]) != 0) {
			struct stat_group *g = &r->groups[r->ngroups++];
			if (!(g->row = calloc(r->nrows, sizeof(*g->row)))) {
				free(key);
				return -ENOMEM;
			}
			if (a == STAT_PER_CORE)
				snprintf(g->id, sizeof(g->id), "S%d-D%d-C%d", k.socket, k.die, k.core);
			else if (a == STAT_PER_CACHE)
				snprintf(g->id, sizeof(g->id), "S%d-D%d-L%d-ID%d", k.socket, k.die,
					 k.cache_level, k.cache);
			else if (a == STAT_PER_DIE)
				snprintf(g->id, sizeof(g->id), "S%d-D%d", k.socket, k.die);
			else if (a == STAT_PER_SOCKET)
				snprintf(g->id, sizeof(g->id), "S%d", k.socket);
			else
				snprintf(g->id, sizeof(g->id), "N%d", k.node);
		}
		struct stat_group *g = &r->groups[r->ngroups - 1];
		g->row[g->nrows++] = k.row;
	}
	free(key);
	return 0;
}

/* Is EV another PMU's copy of report event OUT, which sums them?  perf's
 * evsel__is_alias: the same name as written, scale, unit and cgroup. */
static bool same_copy(const struct stat_event *out, const struct hwc_event *ev)
{
	const struct perf_event_attr *a = &out->attr, *b = &ev->attr;
	return strcmp(out->name, ev->copy_of) == 0 && out->scale == ev->scale &&
	       strcmp(out->unit, ev->unit) == 0 && a->exclude_user == b->exclude_user &&
	       a->exclude_kernel == b->exclude_kernel && a->exclude_hv == b->exclude_hv &&
	       strcmp(out->cgroup ? out->cgroup : "", ev->cgroup ? ev->cgroup : "") == 0;
}

/* Does row ROW already count a copy on PMU, among events FROM to TO? */
static bool pmu_in_row(const struct stat_run *s, size_t from, size_t to, size_t row, const char *pmu)
{
	for (size_t k = from; k < to; k++)
		if (s->map[k] == row && strcmp(hwc_evlist_event(s->list, k)->pmu, pmu) == 0)
			return true;
	return false;
}

static int add_uncore(const struct hwc_pmu_info *p, void *arg)
{
	/* perf's is_uncore: a cpumask file (the CPUs that read it) */
	if (!p->core && p->cpumask[0])
		fprintf(arg, "%s ", p->name);
	return 0;
}

/* -A: the rows perf's should_skip_zero_counter leaves out, CPUs an uncore
 * PMU's event was not opened on (outside its cpumask); a hybrid's core
 * PMUs keep theirs (perf prints them, not counted). */
static int mark_absent(struct stat_run *s, hwc_counters *c)
{
	struct stat_report *r = &s->rep;
	char *uncore = NULL, name[80];
	size_t len = 0;
	FILE *f = open_memstream(&uncore, &len);
	if (!f)
		return -ENOMEM;
	fputc(' ', f);
	hwc_pmus_walk(add_uncore, f);
	bool *absent = fclose(f) ? NULL : calloc(r->nrows * r->nev + 1, sizeof(*absent));
	for (size_t e = 0; absent && e < r->nlist; e++) {
		snprintf(name, sizeof(name), " %s ", hwc_evlist_event(s->list, e)->pmu);
		if (s->map[e] == SIZE_MAX || !strstr(uncore, name))
			continue;
		for (size_t i = 0; i < r->nrows; i++)
			absent[i * r->nev + s->map[e]] = hwc_counters_fd(c, i, e) < 0;
	}
	free(uncore);
	r->absent = absent;
	return absent ? 0 : -ENOMEM;
}

/* After the first open: which events made it, the rows, and the notes. */
static int describe(struct stat_run *s, hwc_counters *c)
{
	struct stat_report *r = &s->rep;
	size_t nlist = hwc_evlist_size(s->list);
	s->map = calloc(nlist, sizeof(*s->map));
	r->evlist_of = s->map;
	r->nlist = nlist;
	r->ev = calloc(nlist, sizeof(*r->ev));
	r->skipped = calloc(nlist, sizeof(*r->skipped));
	r->skip_reason = calloc(nlist, sizeof(*r->skip_reason));
	size_t ninst = hwc_counters_ninstances(c);
	r->nrows = r->aggr == STAT_TOTAL ? 1 : ninst;
	r->rows = calloc(r->nrows, sizeof(*r->rows));
	if (!s->map || !r->ev || !r->skipped || !r->skip_reason || !r->rows)
		return -ENOMEM;
	bool user_only = false;
	size_t open_row = SIZE_MAX, open_from = 0; /* the row copies may still join */
	for (size_t e = 0; e < nlist; e++) {
		const struct hwc_event *ev = hwc_evlist_event(s->list, e);
		s->map[e] = SIZE_MAX;
		if (hwc_counters_event_status(c, e)) {
			/* Copied: the text lives in C, which each run closes. */
			if (!(r->skip_reason[r->nskipped] = strdup(hwc_counters_event_error(c, e))))
				return -ENOMEM;
			r->skipped[r->nskipped++] = ev->name;
			continue;
		}
		/* The copies of an event on several PMUs: an uncore PMU's instances
		 * summed unless --no-merge, a hybrid's core PMUs with --hybrid-merge.
		 * Only the copies of one occurrence: they follow each other in the
		 * list, each on a PMU of its own (-e X,X, or two metrics that both
		 * need X, are two rows, as perf's first_wildcard_match keeps them). */
		bool merge = ev->copy_of[0] && !s->o->per_cpu &&
			     (ev->merge ? !s->o->no_merge : s->o->hybrid_merge);
		if (merge && open_row != SIZE_MAX && same_copy(&r->ev[open_row], ev) &&
		    !pmu_in_row(s, open_from, e, open_row, ev->pmu)) {
			s->map[e] = open_row; /* counted into the row of the first copy */
			continue;
		}
		open_row = merge ? r->nev : SIZE_MAX;
		open_from = e;
		struct stat_event *out = &r->ev[r->nev];
		s->map[e] = r->nev++;
		out->name = merge ? ev->copy_of : ev->name;
		out->cgroup = ev->cgroup;
		out->unit = ev->unit;
		out->scale = ev->scale;
		out->group = ev->group;
		out->attr = ev->attr;
		out->user_only = hwc_counters_user_only(c, e);
		user_only |= out->user_only;
	}
	for (size_t i = 0; i < r->nrows && r->aggr != STAT_TOTAL; i++) {
		r->rows[i].cpu = hwc_counters_instance_cpu(c, i);
		r->rows[i].tid = hwc_counters_instance_tid(c, i);
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)r->rows[i].tid);
		FILE *f = r->aggr == STAT_PER_THREAD ? fopen(path, "re") : NULL;
		if (f) {
			if (fgets(r->rows[i].comm, sizeof(r->rows[i].comm), f))
				r->rows[i].comm[strcspn(r->rows[i].comm, "\n")] = '\0';
			fclose(f);
		}
		if (r->aggr == STAT_PER_THREAD && !r->rows[i].comm[0])
			snprintf(r->rows[i].comm, sizeof(r->rows[i].comm), "?");
	}
	if (s->target.kind == HWC_TARGET_CPUS) {
		int *cpus = calloc(ninst ? ninst : 1, sizeof(*cpus));
		if (!cpus)
			return -ENOMEM;
		for (size_t i = 0; i < ninst; i++)
			cpus[i] = hwc_counters_instance_cpu(c, i);
		r->cpus = cpus;
		r->ncpus = ninst;
	}
	if (r->aggr == STAT_PER_CPU && mark_absent(s, c))
		return -ENOMEM;

	char note[1400];
	if (r->nskipped) {
		size_t len = (size_t)snprintf(note, sizeof(note), "not counting");
		for (size_t i = 0; i < r->nskipped && len < sizeof(note); i++)
			len += (size_t)snprintf(note + len, sizeof(note) - len, "%s %s", i ? "," : "",
						r->skipped[i]);
		if (len < sizeof(note))
			snprintf(note + len, sizeof(note) - len, ": %s", r->skip_reason[0]);
		add_note(s, note);
	}
	for (size_t e = 0; e < nlist; e++) {
		const struct hwc_event *ev = hwc_evlist_event(s->list, e);
		size_t n = 1, apart = 0;
		while (e + n < nlist && !hwc_evlist_event(s->list, e + n)->leader)
			n++;
		for (size_t k = e; ev->leader && k < e + n; k++)
			apart += hwc_counters_ungrouped(c, k);
		if (!apart)
			continue;
		size_t len = (size_t)snprintf(
			note, sizeof(note),
			"the kernel refused the weak group led by '%s' (%zu events) as one group: "
			"its events count apart (multiplexed when the PMU cannot hold them all at "
			"once)",
			ev->name, n);
		/* but those that must be in a group (Intel's slots and topdown-*) */
		for (size_t k = e, first = 1; apart < n && k < e + n && len < sizeof(note); k++)
			if (!hwc_counters_ungrouped(c, k)) {
				len += (size_t)snprintf(note + len, sizeof(note) - len, "%s%s",
							first ? ", but for " : ", ",
							hwc_evlist_event(s->list, k)->name);
				first = 0;
			}
		if (apart < n && len < sizeof(note))
			snprintf(note + len, sizeof(note) - len, ", which must count in a group "
								 "and count in one");
		add_note(s, note);
	}
	if (user_only) {
		int paranoid = -1;
		hwc_paranoid(&paranoid);
		snprintf(note, sizeof(note),
			 "counting user space only: perf_event_paranoid is %d and this user may not "
			 "count the kernel; run as root or `sysctl kernel.perf_event_paranoid=1` to "
			 "include it",
			 paranoid);
		add_note(s, note);
	}
	if (stat_aggr_topology(r->aggr)) {
		int err = group_by_topology(s);
		if (err)
			return err;
	}
	return stat_report_init(r);
}

/* A pinned event that found no free counter stays off the PMU, in error,
 * for the whole run (it never shares one): its 0 is not a count. */
static void note_unscheduled_pinned(struct stat_run *s)
{
	struct stat_report *r = &s->rep;
	for (size_t e = 0; e < r->nev; e++) {
		uint64_t enabled = 0;
		for (size_t row = 0; row < r->nrows; row++)
			enabled += r->cells[row * r->nev + e].sum.enabled;
		if (!r->ev[e].attr.pinned || enabled || !r->runs)
			continue;
		char text[512];
		snprintf(text, sizeof(text),
			 "'%s' was not counted: pinned (D), it found no free counter on the PMU "
			 "and a pinned event never shares one; pin fewer events", r->ev[e].name);
		add_note(s, text);
	}
}

static int run_all(struct stat_run *s)
{
	const struct options *o = s->o;
	struct stat_report *r = &s->rep;
	long runs = o->repeat ? o->repeat : 1;
	int rc = 0;
	struct hwc_value *total = NULL;
	for (long i = 0; i < runs && !interrupted; i++) {
		hwc_counters *c;
		if (hwc_counters_open(&c, s->list, &s->target)) {
			fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
			return EXIT_ERROR;
		}
		if (i == 0) {
			int err = describe(s, c);
			if (err) {
				hwc_counters_close(c);
				fprintf(stderr, "hwc stat: %s\n", err == -ENOMEM ? "out of memory" : hwc_errdetail());
				return EXIT_ERROR;
			}
			total = calloc(r->nrows * r->nev + 1, sizeof(*total));
			if (!total) {
				hwc_counters_close(c);
				fprintf(stderr, "hwc stat: out of memory\n");
				return EXIT_ERROR;
			}
			stat_report_begin(r);
		} else if (hwc_counters_ninstances(c) != r->nrows && r->aggr != STAT_TOTAL) {
			hwc_counters_close(c);
			fprintf(stderr, "hwc stat: the CPUs changed between runs\n");
			rc = EXIT_ERROR;
			break;
		}
		rc = count_run(s, c, total);
		hwc_counters_close(c);
		if (rc)
			break;
		if (s->child > 0) {
			if (s->child_done && s->timed_out && WIFSIGNALED(s->status) &&
			    WTERMSIG(s->status) == SIGTERM) {
				r->exit_status = 0; /* as perf stat: the end asked for */
			} else if (s->child_done) {
				r->exit_status = cli_exit_status(s->status);
			} else {
				/* Interrupted while the command ran on, deaf to SIGINT:
				 * it will not be counted any more, so end it as perf does. */
				kill(s->child, SIGTERM);
				r->exit_status = -1;
			}
		}
	}
	free(total);
	if (rc)
		return rc;
	r->interrupted = interrupted;
	if (o->regions)
		stat_regions_load(r);
	note_unscheduled_pinned(s);
	stat_report_end(r);
	if (ferror(r->out) || (r->out != stderr && fflush(r->out) != 0)) {
		if (!s->outfile) {
			fprintf(stderr, "hwc stat: cannot write the report: %s\n", strerror(errno));
		} else if (hwc_output_commit(s->outfile)) {
			/* It fails on the stream's error, says why, and removes the file. */
			fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
		}
		s->outfile = NULL;
		r->out = stderr;
		return EXIT_ERROR;
	}
	s->reported = true;
	if (o->t.argv)
		return r->exit_status >= 0 ? r->exit_status : 128 + (int)interrupted;
	return 0;
}

static void free_run(struct stat_run *s)
{
	struct stat_report *r = &s->rep;
	stat_report_free(r);
	for (size_t i = 0; i < r->nnotes; i++)
		free((char *)r->notes[i]);
	free(r->notes);
	free(r->skipped);
	for (size_t i = 0; i < r->nskipped; i++)
		free((char *)r->skip_reason[i]);
	free(r->skip_reason);
	free(r->ev);
	free(r->rows);
	free((int *)r->cpus);
	free((bool *)r->absent);
	free(s->map);
	hwc_metrics_free(r->metrics);
	hwc_evlist_free(s->list);
}

/* -G LIST, perf stat's way: the Nth cgroup given (counting those of earlier
 * -G options, and empty ones, which leave their event counting everything)
 * goes to the Nth event of the list; a single cgroup, to every event so
 * far.  *GIVEN counts the cgroups given so far.  Returns 0, or -1 after
 * saying why not. */
static int apply_cgroups(hwc_evlist *list, const char *arg, size_t *given)
{
	size_t nev = hwc_evlist_size(list);
	for (const char *p = arg;; p++) {
		size_t len = strcspn(p, ",");
		if (len && *given >= nev) {
			fprintf(stderr, "hwc stat: -G %s: cgroup '%.*s' has no event: each cgroup goes "
					"to one event given before it, in order, and there are %zu\n",
				arg, (int)len, p, nev);
			return -1;
		}
		if (len) {
			char *name = strndup(p, len);
			int err = name ? hwc_evlist_set_cgroup(list, *given, name) : -ENOMEM;
			free(name);
			if (err) {
				fprintf(stderr, "hwc stat: %s\n", err == -ENOMEM ? "out of memory" : hwc_errdetail());
				return -1;
			}
		}
		(*given)++;
		p += len;
		if (!*p)
			break;
	}
	if (*given == 1) {
		const char *cg = hwc_evlist_event(list, 0)->cgroup;
		for (size_t e = 1; e < nev; e++)
			if (hwc_evlist_set_cgroup(list, e, cg))
				return -1;
	}
	return 0;
}

/* -M LIST or --topdown: the metrics, and the events they need appended. */
static int add_metrics(struct stat_run *s, const struct options *o)
{
	unsigned flags = (o->metric_no_group ? HWC_METRICS_NO_GROUP : 0) |
			 (o->t.all_cpus && !o->t.cpus ? HWC_METRICS_SYSTEM_WIDE : 0);
	int err;
	s->rep.metric_only = o->metric_only;
	if (o->metrics) {
		err = hwc_metrics_new(&s->rep.metrics, o->metrics, flags, s->list);
	} else {
		/* Intel's TMA level 1, else AMD's pipeline utilization */
		static const char *const groups[] = { "TopdownL1", "PipelineL1" };
		err = -EINVAL;
		for (size_t i = 0; i < 2 && err == -EINVAL; i++)
			err = hwc_metrics_new(&s->rep.metrics, groups[i], flags, s->list);
		if (err == -EINVAL && strstr(hwc_errdetail(), "no metric or metric group")) {
			fprintf(stderr, "hwc stat: --topdown: this CPU's metrics have no top-down group "
					"(TopdownL1 or PipelineL1); `hwc list --metrics` lists its metrics\n");
			return -1;
		}
	}
	if (err)
		fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
	return err ? -1 : 0;
}

int cmd_stat(int argc, char **argv)
{
	struct options o = {.big_num = -1};
	int rc = parse_options(argc, argv, &o);
	if (rc >= 0) {
		free(o.specs);
		free(o.cgroups);
		free(o.t.cpus);
		return rc;
	}

	struct stat_run s = {.o = &o, .child = -1, .wait_fd = -1};
	struct stat_report *r = &s.rep;
	r->exit_status = -1;
	r->format = o.json ? STAT_JSON : o.sep ? STAT_CSV : STAT_HUMAN;
	r->sep = o.sep;
	r->aggr = o.topology ? o.topology : o.per_cpu ? STAT_PER_CPU : o.per_thread ? STAT_PER_THREAD : STAT_TOTAL;
	r->interval = o.interval_ms > 0;
	r->repeat = o.repeat > 0;
	r->argv = o.t.argv;
	r->out = stderr;
	/* Digit grouping is for people (-B, the default); CSV and JSON stay in
	 * the C locale. */
	if (r->format == STAT_HUMAN && !numbers_are_c())
		setlocale(LC_NUMERIC, "");
	r->no_big_num = o.big_num == 0; /* the locale's decimal point stays, as in perf */

	struct hwc_target *t = &s.target;
	cli_target_of(&o.t, t);
	static const char *const kinds[] = {
		[HWC_TARGET_CPUS] = "system", [HWC_TARGET_PROCESS] = "process",
		[HWC_TARGET_THREAD] = "thread", [HWC_TARGET_COMMAND] = "command", [HWC_TARGET_SELF] = "self",
	};
	r->target_kind = kinds[t->kind];
	r->all_cpus = o.t.all_cpus && !o.t.cpus;
	r->pid = t->pid;

	rc = EXIT_ERROR;
	if (hwc_evlist_new(&s.list)) {
		fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
		goto out;
	}
	if (o.metrics || o.topdown) {
		if (add_metrics(&s, &o))
			goto out;
		/* Metrics alone show what they could not count as not counted. */
		if (!o.nspecs)
			t->flags |= HWC_SKIP_UNSUPPORTED;
	} else if (!o.nspecs) {
		/* Only the default set may leave out what this machine lacks. */
		t->flags |= HWC_SKIP_UNSUPPORTED;
		if (hwc_evlist_add(s.list, STAT_DEFAULT_EVENTS)) {
			fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
			goto out;
		}
	}
	size_t given = 0, g = 0; /* cgroups given so far; -G options applied */
	for (size_t i = 0; i < o.nspecs; i++) {
		if (hwc_evlist_add(s.list, o.specs[i])) {
			fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
			goto out;
		}
		for (; g < o.ncgroups && o.cgroups[g].nspecs == i + 1; g++)
			if (apply_cgroups(s.list, o.cgroups[g].list, &given)) {
				rc = EXIT_USAGE;
				goto out;
			}
	}
	r->cgroups = o.ncgroups > 0;
	if (o.output && (hwc_output_create(&s.outfile, o.output, 0) ||
			 !(r->out = hwc_output_stream(s.outfile)))) {
		fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
		r->out = stderr;
		goto out;
	}
	if (o.regions && stat_regions_setup(o.specs, o.nspecs))
		goto out;
	setup_signals(&s.wait_mask);
	rc = run_all(&s);
out:
	/* A report that failed leaves an earlier FILE as it was. */
	if (s.outfile && !s.reported) {
		hwc_output_discard(s.outfile);
	} else if (s.outfile && hwc_output_commit(s.outfile)) {
		fprintf(stderr, "hwc stat: %s\n", hwc_errdetail());
		rc = rc ? rc : EXIT_ERROR;
	}
	if (o.regions)
		stat_regions_cleanup();
	free_run(&s);
	free(o.specs);
	free(o.cgroups);
	free(o.t.cpus);
	return rc;
}
