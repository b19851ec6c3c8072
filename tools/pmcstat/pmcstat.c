/* pmcstat(8): measurement with performance monitoring counters, FreeBSD's
 * tool on libpmc.  Counting PMCs print their counts at intervals and when
 * the measured processes end; sampling PMCs (and -E, -W) write the log,
 * which -R reads back as text, gprof(1) profiles (-g) or call graphs (-G),
 * and -T shows live. */
#include "pmcstat.h"
#include "pmc_err.h"

#include <hwc/output.h>

#include "num.h"
#include "out.h"

#include <ctype.h>
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SAMPLE_COUNT 65536
#define DEFAULT_WAIT_INTERVAL 5.0
#define DEFAULT_DISPLAY_HEIGHT 256
#define PRINT_HEADER_PREFIX "# "

struct ev {
	char *spec;
	char name[PMC_NAME_MAX];
	enum pmc_mode mode;
	uint64_t count;
	int cpu;
	uint32_t flags;
	bool cumulative;
	int fieldwidth, fieldskip;
	pmc_value_t saved;
	pmc_id_t id;
};

static struct {
	struct ev *ev;
	size_t nev;
	pid_t *targets;
	size_t ntargets;
	FILE *printfile;
	const char *outputpath, *inputpath, *graphfile, *samplesdir, *mapfile;
	bool calltree;          /* -F: the graph file is a calltree, not a -G call graph */
	const char *annotate;   /* -m or -a: the file */
	bool annotate_cg;       /* -a */
	double interval, duration;
	int verbosity, graphdepth;
	bool gprof, top, wait_interval;
	char **argv;
} args;

static volatile sig_atomic_t interrupted;

/* The files pmcstat writes (-o, -O, -G or -F, -M, -a or -m) go to temporary files renamed
 * over them when complete; those not committed when pmcstat exits (an
 * error, a usage error) are removed, leaving earlier files as they were. */
static hwc_output *outputs[5];

static void discard_outputs(void)
{
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		hwc_output_discard(outputs[i]);
		outputs[i] = NULL;
	}
}

static hwc_output **output_slot(hwc_output *o)
{
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++)
		if (outputs[i] == o)
			return &outputs[i];
	errx(EX_SOFTWARE, "ERROR: too many output files");
}

/* Start writing PATH, or exit after saying why. */
static hwc_output *start_output(const char *path)
{
	hwc_output **slot = output_slot(NULL), *o;
	if (hwc_output_create(&o, path, 0))
		errx(EX_OSERR, "ERROR: %s", hwc_errdetail()); /* it names PATH */
	return *slot = o;
}

static FILE *start_file(const char *path, hwc_output **o)
{
	*o = start_output(path);
	FILE *f = hwc_output_stream(*o);
	if (!f)
		errx(EX_OSERR, "ERROR: %s", hwc_errdetail());
	return f;
}

/* Replace the file with what O holds, or exit after saying why. */
static void end_output(hwc_output *o)
{
	*output_slot(o) = NULL;
	if (hwc_output_commit(o))
		errx(EX_IOERR, "ERROR: %s", hwc_errdetail());
}

static void drop_output(hwc_output *o)
{
	*output_slot(o) = NULL;
	hwc_output_discard(o);
}

/* SIGINT and SIGTERM end the measurement; SIGCHLD only wakes the loop. */
static void on_signal(int sig)
{
	if (sig != SIGCHLD)
		interrupted = 1;
}

/* ------------------------------------------------------------ options */

static struct ev *add_ev(void)
{
	args.ev = realloc(args.ev, (args.nev + 1) * sizeof(*args.ev));
	if (!args.ev)
		errx(EX_SOFTWARE, "ERROR: Out of memory.");
	struct ev *ev = &args.ev[args.nev++];
	memset(ev, 0, sizeof(*ev));
	ev->id = PMC_ID_INVALID;
	return ev;
}

static void add_target(pid_t pid)
{
	args.targets = realloc(args.targets, (args.ntargets + 1) * sizeof(*args.targets));
	if (!args.targets)
		errx(EX_SOFTWARE, "ERROR: Out of memory.");
	args.targets[args.ntargets++] = pid;
}

/* -t: a pid, or a regular expression over command names. */
static void find_targets(const char *spec)
{
	long long pid;
	enum num_result r = num_llong(spec, 0, 1, INT_MAX, &pid);
	if (r == NUM_OK) {
		add_target((pid_t)pid);
		return;
	}
	/* A number out of range is a pid all the same, not a regex. */
	if (r != NUM_INVALID || spec[strspn(spec, "0123456789")] == '\0')
		errx(EX_USAGE, "ERROR: Illegal pid value \"%s\" (-t takes a pid from 1 to %d, or a "
			       "regular expression).",
		     spec, INT_MAX);
	regex_t re;
	int rc = regcomp(&re, spec, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char buf[256];
		regerror(rc, &re, buf, sizeof(buf));
		errx(EX_USAGE, "ERROR: Failed to compile regex \"%s\": %s", spec, buf);
	}
	DIR *d = opendir("/proc");
	if (!d)
		err(EX_OSERR, "ERROR: Cannot read /proc");
	size_t before = args.ntargets;
	for (struct dirent *e; (e = readdir(d));) {
		if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == getpid())
			continue;
		char path[64], comm[64] = "";
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		if (regexec(&re, comm, 0, NULL, 0) == 0)
			add_target((pid_t)atoi(e->d_name));
	}
	closedir(d);
	regfree(&re);
	if (args.ntargets == before)
		errx(EX_DATAERR, "ERROR: No matching target processes.");
}

/* ------------------------------------------------------------ counting output */

static int display_height(void)
{
	struct winsize ws;
	if (isatty(fileno(args.printfile)) && ioctl(fileno(args.printfile), TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_row > 1)
		return ws.ws_row - 1;
	return DEFAULT_DISPLAY_HEIGHT;
}

static void print_headers(void)
{
	fputs(PRINT_HEADER_PREFIX, args.printfile);
	for (size_t i = 0; i < args.nev; i++) {
		struct ev *ev = &args.ev[i];
		if (PMC_IS_SAMPLING_MODE(ev->mode))
			continue;
		if (ev->fieldskip)
			fprintf(args.printfile, "%*s", ev->fieldskip, "");
		int w = ev->fieldwidth - ev->fieldskip - 2;
		if (PMC_IS_SYSTEM_MODE(ev->mode))
			fprintf(args.printfile, "s/%02d/%-*s ", ev->cpu, w - 3, ev->name);
		else
			fprintf(args.printfile, "p/%*s ", w, ev->name);
	}
	out_flush(args.printfile);
}

static void print_counters(void)
{
	int extra = sizeof(PRINT_HEADER_PREFIX) - 1;
	for (size_t i = 0; i < args.nev; i++) {
		struct ev *ev = &args.ev[i];
		if (PMC_IS_SAMPLING_MODE(ev->mode))
			continue;
		pmc_value_t v;
		if (pmc_read(ev->id, &v) < 0)
			die_pmc(EX_OSERR, "Cannot read pmc \"%s\"", ev->name);
		fprintf(args.printfile, "%*ju ", ev->fieldwidth + extra,
			(uintmax_t)(ev->cumulative ? v : v - ev->saved));
		if (!ev->cumulative)
			ev->saved = v;
		extra = 0;
	}
	out_flush(args.printfile);
}

static void print_pmcs(void)
{
	static int lines;
	if (++lines > display_height()) {
		fputc('\n', args.printfile);
		lines = 1;
	}
	if (lines == 1)
		print_headers();
	fputc('\n', args.printfile);
	print_counters();
}

/* ------------------------------------------------------------ the command */

struct child {
	pid_t pid;
	int go, status; /* release pipe; exec status pipe */
};

/* Fork the command; it waits until the PMCs are attached and started.
 * As FreeBSD's pmcstat, wait for the child to say it is waiting: what it
 * does before (copy-on-write faults, say) must not be counted by the PMCs
 * started while it still runs and missed by those started after. */
static struct child create_process(void)
{
	int go[2], st[2];
	if (pipe(go) || pipe2(st, O_CLOEXEC))
		err(EX_OSERR, "ERROR: cannot create pipe");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		err(EX_OSERR, "ERROR: cannot fork");
	if (pid == 0) {
		char token;
		close(go[1]);
		close(st[0]);
		signal(SIGINT, SIG_DFL);
		if (write(st[1], "+", 1) != 1 || read(go[0], &token, 1) != 1)
			_exit(EX_OSERR);
		close(go[0]);
		execvp(args.argv[0], args.argv);
		int e = errno;
		if (write(st[1], &e, sizeof(e)) != sizeof(e))
			_exit(EX_OSERR);
		_exit(127);
	}
	close(go[0]);
	close(st[1]);
	char ready;
	ssize_t n;
	while ((n = read(st[0], &ready, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		errx(EX_OSERR, "ERROR: cannot start \"%s\": its process ended", args.argv[0]);
	return (struct child){pid, go[1], st[0]};
}

static void start_process(struct child *c)
{
	if (write(c->go, "+", 1) != 1)
		err(EX_OSERR, "ERROR: write failed");
	close(c->go);
	int e = 0;
	ssize_t n = read(c->status, &e, sizeof(e));
	close(c->status);
	if (n == sizeof(e)) {
		waitpid(c->pid, NULL, 0);
		errno = e;
		err(EX_OSERR, "ERROR: cannot run \"%s\"", args.argv[0]);
	}
}

/* ------------------------------------------------------------ main */

/* Running: it exists and is not a zombie its parent has yet to reap. */
static bool alive(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return kill(pid, 0) == 0 || errno != ESRCH;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *state = strrchr(buf, ')');
	return !state || (state[1] && state[2] != 'Z' && state[2] != 'X');
}

static void raw_stdin(bool on)
{
	static struct termios saved;
	static bool set;
	if (on && isatty(0) && tcgetattr(0, &saved) == 0) {
		struct termios t = saved;
		t.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		set = tcsetattr(0, TCSANOW, &t) == 0;
	} else if (!on && set) {
		tcsetattr(0, TCSANOW, &saved);
		set = false;
	}
}

static void restore_stdin(void)
{
	raw_stdin(false);
}

static int analyze(void)
{
	if (!args.gprof && !args.graphfile && !args.annotate)
		return pmcstat_print_log(args.inputpath, args.printfile);
	if (args.annotate) {
		/* A file even when named "-", as FreeBSD's pmcstat opens it. */
		hwc_output *ao;
		FILE *a = start_file(args.annotate, &ao);
		int rc = pmcstat_annotate(args.inputpath, a, args.annotate_cg);
		if (!rc || rc == EX_IOERR) /* the commit says why a write failed */
			end_output(ao);
		else
			drop_output(ao);
		return rc;
	}
	int rc = 0;
	if (args.gprof) {
		FILE *map = NULL;
		hwc_output *mo = NULL;
		if (args.mapfile && strcmp(args.mapfile, "-") == 0)
			map = args.printfile;
		else if (args.mapfile)
			map = start_file(args.mapfile, &mo);
		rc = pmcstat_gprof(args.inputpath, args.samplesdir, args.verbosity, args.printfile, map);
		if (mo && (!rc || rc == EX_IOERR)) /* the commit says why a write failed */
			end_output(mo);
		else if (mo)
			drop_output(mo);
	}
	if (!rc && args.graphfile) {
		hwc_output *go = NULL;
		FILE *g = strcmp(args.graphfile, "-") == 0 ? args.printfile
							   : start_file(args.graphfile, &go);
		rc = args.calltree ? pmcstat_calltree(args.inputpath, g)
				   : pmcstat_callgraph(args.inputpath, g, args.graphdepth);
		if (go && (!rc || rc == EX_IOERR)) /* the commit says why a write failed */
			end_output(go);
		else if (go)
			drop_output(go);
	}
	return rc;
}

/* The print output written: RC, or EX_IOERR after saying why it was not. */
static int close_printfile(int rc)
{
	if (args.printfile == stderr)
		return fflush(stderr) != 0 ? EX_IOERR : rc;
	return out_close(args.printfile, NULL) != 0 ? EX_IOERR : rc;
}

int main(int argc, char **argv)
{
	bool cumulative = false, descendants = false, callchain = true, logexit = false,
	     logcsw = false, mask[MAX_CPUS], have_mask = false, needs_log = false;
	bool counting = false, sampling = false, process = false, system_pmcs = false;
	bool opt_c = false, opt_n = false, opt_N = false, opt_dEW = false, opt_C = false;
	bool trailing_d = false, trailing_E = false, trailing_W = false, trailing_C = false;
	bool trailing_N = false, trailing_n = false, trailing_U = false;
	bool samplesdir_given = false, userspace = false, opt_U = false, opt_i = false;
	bool do_list = false;
	const char *describe = NULL; /* -u */
	int plugin = 0;              /* the last of -F, -G, -T, -a, -g, -m, for -f */
	uint64_t rate = DEFAULT_SAMPLE_COUNT;
	out_init(NULL, EX_IOERR);
	args.printfile = stderr;
	args.interval = DEFAULT_WAIT_INTERVAL;
	args.verbosity = 1;
	args.graphdepth = DEFAULT_CALLGRAPH_DEPTH;
	args.samplesdir = ".";
	hwc_output *printout = NULL; /* -o */
	atexit(discard_outputs);
	if (pmc_init() < 0)
		die_pmc(EX_UNAVAILABLE, "Initialization of the pmc(3) library failed");
	int ncpu = pmc_ncpu();
	int opt;
	while ((opt = getopt(argc, argv, "+ACD:EF:G:ILM:NO:P:R:S:TUWZa:c:def:gi:k:l:m:n:o:p:qr:s:t:u:vw:z:")) !=
	       -1) {
		switch (opt) {
		case 'A': pmcstat_opts.leaf_addr = true; break;
		case 'I': pmcstat_opts.leaf_offset = true; break;
		case 'L': do_list = true; break;
		case 'u': describe = optarg; break;
		case 'e': pmcstat_opts.wide = true; break;
		case 'U': userspace = !userspace; opt_U = trailing_U = true; break;
		case 'F':
		case 'G':
			args.graphfile = optarg;
			args.calltree = opt == 'F';
			plugin = opt;
			break;
		case 'a':
		case 'm':
			args.annotate = optarg;
			args.annotate_cg = opt == 'a';
			plugin = opt;
			break;
		case 'f':
			if (!plugin)
				errx(EX_USAGE, "ERROR: option -f needs -F, -G, -T, -a, -g or -m before it.");
			pmcstat_plugin_option(optarg, plugin == 'F');
			break;
		case 'i': {
			long long tid;
			if (num_llong(optarg, 0, 0, INT_MAX, &tid) != NUM_OK)
				errx(EX_USAGE, "ERROR: Illegal thread id \"%s\" (-i takes 0 to %d).",
				     optarg, INT_MAX);
			pmcstat_opts.has_tid = opt_i = true;
			pmcstat_opts.tid = (int)tid;
			break;
		}
		case 'k':
			warnx("WARNING: -k has no effect: the kernel's symbols come from "
			      "/proc/kallsyms (FreeBSD's pmcstat has made -k obsolete too).");
			break;
		case 'r': {
			struct stat st;
			if (stat(optarg, &st) < 0)
				err(EX_OSERR, "ERROR: Cannot stat \"%s\"", optarg);
			if (!S_ISDIR(st.st_mode))
				errx(EX_USAGE, "ERROR: \"%s\" is not a directory.", optarg);
			pmcstat_opts.fsroot = optarg;
			break;
		}
		case 'Z':
			/* In FreeBSD's option string with no case of its own: it prints
			 * the usage there.  Say so rather than "invalid option". */
			errx(EX_USAGE, "ERROR: option -Z means nothing: FreeBSD's pmcstat accepts the "
				       "letter but has no -Z either (it prints its usage); see pmcstat(8).");
		case 'C': cumulative = !cumulative; opt_C = trailing_C = true; break;
		case 'D': {
			struct stat st;
			if (stat(optarg, &st) < 0)
				err(EX_OSERR, "ERROR: Cannot stat \"%s\"", optarg);
			if (!S_ISDIR(st.st_mode))
				errx(EX_USAGE, "ERROR: \"%s\" is not a directory.", optarg);
			args.samplesdir = optarg;
			samplesdir_given = true;
			break;
		}
		case 'E': logexit = !logexit; opt_dEW = trailing_E = true; break;
		case 'M': args.mapfile = optarg; break;
		case 'N': callchain = !callchain; opt_N = trailing_N = true; break;
		case 'O':
			if (args.outputpath)
				errx(EX_USAGE, "ERROR: option -O may only be specified once.");
			args.outputpath = optarg;
			break;
		case 'R':
			if (args.inputpath)
				errx(EX_USAGE, "ERROR: option -R may only be specified once.");
			args.inputpath = optarg;
			if (args.printfile == stderr)
				args.printfile = stdout;
			break;
		case 'T':
			args.top = true;
			plugin = 'T';
			if (args.printfile == stderr)
				args.printfile = stdout;
			break;
		case 'W': logcsw = !logcsw; opt_dEW = trailing_W = true; break;
		case 'c':
			pmcstat_parse_cpus(optarg, mask, ncpu);
			have_mask = opt_c = true;
			break;
		case 'd': descendants = !descendants; opt_dEW = trailing_d = true; break;
		case 'g': args.gprof = true; plugin = 'g'; break;
		case 'l': args.duration = pmcstat_parse_secs(optarg, "duration time", 'l'); break;
		case 'n': {
			/* perf_event_open(2) takes periods below 2^63. */
			unsigned long long n;
			if (num_ullong(optarg, 0, 1, INT64_MAX, &n) != NUM_OK)
				errx(EX_USAGE, "ERROR: Illegal count value \"%s\" (-n takes 1 to %jd).",
				     optarg, (intmax_t)INT64_MAX);
			rate = n;
			opt_n = trailing_n = true;
			break;
		}
		case 'o':
			if (printout)
				drop_output(printout);
			args.printfile = start_file(optarg, &printout);
			break;
		case 'p':
		case 's':
		case 'P':
		case 'S': {
			enum pmc_mode mode = opt == 'p'	  ? PMC_MODE_TC
					     : opt == 's' ? PMC_MODE_SC
					     : opt == 'P' ? PMC_MODE_TS
							  : PMC_MODE_SS;
			uint32_t flags = 0;
			if (PMC_IS_SAMPLING_MODE(mode) && callchain)
				flags |= PMC_F_CALLCHAIN | (userspace ? PMC_F_USERCALLCHAIN : 0);
			if (PMC_IS_VIRTUAL_MODE(mode)) {
				process = true;
				flags |= descendants ? PMC_F_DESCENDANTS : 0;
				if (mode == PMC_MODE_TC)
					flags |= (logexit ? PMC_F_LOG_PROCEXIT : 0) |
						 (logcsw ? PMC_F_LOG_PROCCSW : 0);
			} else {
				system_pmcs = true;
			}
			if (PMC_IS_SAMPLING_MODE(mode))
				sampling = true;
			else
				counting = true;
			if (PMC_IS_VIRTUAL_MODE(mode))
				trailing_d = false;
			if (mode == PMC_MODE_TC)
				trailing_E = trailing_W = false;
			if (PMC_IS_COUNTING_MODE(mode))
				trailing_C = false;
			else
				trailing_N = trailing_n = trailing_U = false;
			for (int c = 0; c < (PMC_IS_SYSTEM_MODE(mode) ? ncpu : 1); c++) {
				if (PMC_IS_SYSTEM_MODE(mode) && have_mask && !mask[c])
					continue;
				struct ev *ev = add_ev();
				ev->spec = optarg;
				ev->mode = mode;
				ev->flags = flags;
				ev->count = PMC_IS_SAMPLING_MODE(mode) ? rate : 0;
				ev->cpu = PMC_IS_SYSTEM_MODE(mode) ? c : PMC_CPU_ANY;
				ev->cumulative = cumulative;
				snprintf(ev->name, sizeof(ev->name), "%.*s",
					 (int)strcspn(optarg, ", \t"), optarg);
			}
			break;
		}
		case 'q': args.verbosity = 0; break;
		case 't': find_targets(optarg); break;
		case 'v': args.verbosity++; break;
		case 'w':
			args.interval = pmcstat_parse_secs(optarg, "wait interval", 'w');
			args.wait_interval = true;
			break;
		case 'z': {
			long long d;
			if (num_llong(optarg, 0, 1, PMC_CALLCHAIN_DEPTH_MAX, &d) != NUM_OK)
				errx(EX_USAGE, "ERROR: Illegal callchain depth \"%s\" (-z takes 1 to %d).",
				     optarg, PMC_CALLCHAIN_DEPTH_MAX);
			args.graphdepth = (int)d;
			break;
		}
		default:
			pmcstat_usage();
		}
	}
	if (do_list || describe)
		return pmcstat_list_events(describe, describe != NULL);
	args.argv = argv + optind;
	bool command = argc > optind;
	/* A toggle after the last PMC it could apply to would apply to none:
	 * it applies to the PMCs before it instead (pmcstat(8), LINUX). */
	for (size_t i = 0; i < args.nev; i++) {
		struct ev *ev = &args.ev[i];
		if (PMC_IS_VIRTUAL_MODE(ev->mode) && trailing_d && descendants)
			ev->flags |= PMC_F_DESCENDANTS;
		if (ev->mode == PMC_MODE_TC && trailing_E && logexit)
			ev->flags |= PMC_F_LOG_PROCEXIT;
		if (ev->mode == PMC_MODE_TC && trailing_W && logcsw)
			ev->flags |= PMC_F_LOG_PROCCSW;
		if (PMC_IS_COUNTING_MODE(ev->mode) && trailing_C)
			ev->cumulative = cumulative;
		if (PMC_IS_SAMPLING_MODE(ev->mode) && trailing_N)
			ev->flags = callchain ? ev->flags | PMC_F_CALLCHAIN : ev->flags & ~PMC_F_CALLCHAIN;
		if (PMC_IS_SAMPLING_MODE(ev->mode) && trailing_n)
			ev->count = rate;
		if (PMC_IS_SAMPLING_MODE(ev->mode) && trailing_U)
			ev->flags = userspace ? ev->flags | PMC_F_USERCALLCHAIN
					      : ev->flags & ~PMC_F_USERCALLCHAIN;
		if (!(ev->flags & PMC_F_CALLCHAIN))
			ev->flags &= ~PMC_F_USERCALLCHAIN;
		if (ev->flags & (PMC_F_LOG_PROCEXIT | PMC_F_LOG_PROCCSW))
			needs_log = true;
	}
	if (sampling)
		needs_log = true;

	/* Check the invocation as FreeBSD's pmcstat does. */
	if (args.outputpath && args.inputpath)
		errx(EX_USAGE, "ERROR: options -O and -R are mutually exclusive.");
	if (args.duration > 0 && args.top)
		errx(EX_USAGE, "ERROR: options -T and -l are mutually exclusive.");
	if (args.mapfile && !args.gprof)
		errx(EX_USAGE, "ERROR: option -M is only used with -g.");
	if (args.annotate && !args.inputpath)
		errx(EX_USAGE, "ERROR: option %s requires an input file", args.annotate_cg ? "-a" : "-m");
	if (args.annotate && (args.gprof || args.graphfile))
		errx(EX_USAGE, "ERROR: option -m and -g | -G are mutually exclusive");
	if (pmcstat_opts.wide && !args.gprof)
		errx(EX_USAGE, "ERROR: option -e requires gprof mode to be specified.");
	if (opt_i && !args.gprof && !args.graphfile && !args.annotate && !args.top)
		errx(EX_USAGE, "ERROR: option -i filters what -F, -G, -T, -a, -g and -m show: give "
			       "one of them.");
	if (pmcstat_opts.fsroot && !args.gprof && !args.graphfile && !args.annotate && !args.top)
		errx(EX_USAGE, "ERROR: option -r is used by -F, -G, -T, -a, -g and -m: give one of "
			       "them.");
	if ((pmcstat_opts.leaf_addr || pmcstat_opts.leaf_offset) &&
	    (!args.graphfile || args.calltree) && !args.top)
		errx(EX_USAGE, "ERROR: options -A and -I change what -G and -T show: give one of "
			       "them.");
	if (samplesdir_given && !args.gprof)
		errx(EX_USAGE, "ERROR: option -D is only used with -g.");
	if (args.inputpath) {
		const char *what = command ? "a command line specification"
				   : args.ntargets ? "option -t"
				   : args.nev	    ? "a PMC event specification"
						    : NULL;
		if (what)
			errx(EX_USAGE, "ERROR: option -R may not be used with %s.", what);
		if (args.top)
			errx(EX_USAGE, "ERROR: option -T shows live samples; use -G or -g with -R.");
		int rc = analyze();
		if (printout) { /* not committed: discarded at exit */
			if (rc == 0)
				end_output(printout);
			return rc;
		}
		return close_printfile(rc);
	}
	if (args.nev == 0)
		pmcstat_usage();
	if (args.ntargets && !process)
		errx(EX_USAGE, "ERROR: option -t requires a process mode PMC to be specified.");
	if (process && !command && !args.ntargets)
		errx(EX_USAGE, "ERROR: options -P and -p require a target process or a command line.");
	if (opt_dEW && !process)
		errx(EX_USAGE, "ERROR: options -d, -E, and -W require a process mode PMC to be "
			       "specified.");
	if (command && args.ntargets)
		errx(EX_USAGE, "ERROR: option -t cannot be specified with a command name.");
	if (opt_c && !system_pmcs)
		errx(EX_USAGE, "ERROR: option -c requires at least one system mode PMC to be "
			       "specified.");
	if ((opt_n || opt_N || opt_U) && !sampling)
		errx(EX_USAGE, "ERROR: options -N, -U, -n and -O require at least one sampling mode "
			       "PMC to be specified.");
	if (args.outputpath && !needs_log)
		errx(EX_USAGE, "ERROR: option -O is used only with options -E, -P, -S and -W.");
	if ((args.gprof || args.graphfile) && !args.inputpath)
		errx(EX_USAGE, "ERROR: options -g, -G and -F read a log: give it with -R (record one "
			       "with -O first).");
	if (args.top && !sampling)
		errx(EX_USAGE, "ERROR: option -T requires sampling PMCs to be specified.");
	if (counting && sampling && !args.outputpath)
		errx(EX_USAGE, "ERROR: option -O is required if counting and sampling PMCs are "
			       "specified together.");
	if ((opt_C || logcsw) && !counting)
		errx(EX_USAGE, "ERROR: options -C, -W and -o require at least one counting mode PMC "
			       "to be specified.");

	/* The log: the -O file, or a file of our own to print or show from. */
	int logfd = -1;
	char tmplog[] = "/tmp/pmcstat-XXXXXX";
	const char *logpath = args.outputpath;
	hwc_output *logout = NULL;
	if (needs_log) {
		if (args.outputpath) {
			logout = start_output(args.outputpath);
			logfd = hwc_output_fd(logout);
			logpath = hwc_output_tmpname(logout); /* -T reads it as it grows */
		} else {
			if ((logfd = mkstemp(tmplog)) < 0)
				err(EX_OSERR, "ERROR: Cannot create a log in /tmp");
			logpath = tmplog;
		}
		if (pmc_configure_logfile(logfd) < 0)
			die_pmc(EX_OSERR, "Cannot configure log file");
	}
	for (size_t i = 0; i < args.nev; i++) {
		struct ev *ev = &args.ev[i];
		if (pmc_allocate(ev->spec, ev->mode, ev->flags, ev->cpu, &ev->id, ev->count) < 0)
			die_pmc(EX_OSERR, "Cannot allocate %s-mode pmc with specification \"%s\"",
				PMC_IS_SYSTEM_MODE(ev->mode) ? "system" : "process", ev->spec);
		uint32_t width = 64;
		pmc_width(ev->id, &width);
		int header = (int)strlen(ev->name) + 2 + (PMC_IS_SYSTEM_MODE(ev->mode) ? 3 : 0);
		int display = (int)floor(width / 3.32193) + 1;
		ev->fieldskip = header > display ? 0 : display - header;
		ev->fieldwidth = header > display ? header : display;
	}
	struct child child = {-1, -1, -1};
	if (command) {
		child = create_process();
		add_target(child.pid);
	}
	struct pmc_driverstats ds_start = {0}, ds_end = {0};
	bool check_stats = needs_log;
	if (check_stats && pmc_get_driver_stats(&ds_start) < 0)
		die_pmc(EX_OSERR, "Cannot retrieve driver statistics");
	for (size_t t = 0; t < args.ntargets; t++)
		for (size_t i = 0; i < args.nev; i++)
			if (PMC_IS_VIRTUAL_MODE(args.ev[i].mode) &&
			    pmc_attach(args.ev[i].id, args.targets[t]) < 0)
				die_pmc(EX_OSERR, "cannot attach pmc \"%s\" to process %d",
					args.ev[i].name, (int)args.targets[t]);
	for (size_t i = 0; i < args.nev; i++)
		if (pmc_start(args.ev[i].id) < 0)
			die_pmc(EX_OSERR, "Cannot start pmc 0x%x \"%s\"", args.ev[i].id,
				args.ev[i].name);
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	if (command)
		start_process(&child);
	if (args.top) {
		raw_stdin(true);
		atexit(restore_stdin);
	}

	/* Until the command or every target ends, SIGINT, or -l's time. */
	bool print_counts = counting && !needs_log;
	bool periodic = print_counts || args.top;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double next = args.interval, last_top = 0;
	uint64_t top_since = 0;
	int child_status = 0;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		double elapsed = (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9;
		if (interrupted) {
			if (child.pid > 0)
				kill(child.pid, SIGINT);
			break;
		}
		if (child.pid > 0) {
			if (waitpid(child.pid, &child_status, WNOHANG) == child.pid) {
				child.pid = -1;
				break;
			}
		} else if (args.ntargets) {
			size_t n = 0;
			for (size_t t = 0; t < args.ntargets; t++)
				n += alive(args.targets[t]);
			if (n == 0)
				break;
		}
		if (args.duration > 0 && elapsed >= args.duration)
			break;
		if (periodic && elapsed >= next) {
			if (print_counts)
				print_pmcs();
			if (args.top && pmc_flush_logfile() == 0) {
				pmcstat_top(logpath, args.printfile, &top_since, isatty(fileno(args.printfile)),
					    120);
				last_top = elapsed;
			}
			while (next <= elapsed)
				next += args.interval;
		}
		double wait = 0.2;
		if (periodic && next - elapsed < wait)
			wait = next - elapsed;
		if (args.duration > 0 && args.duration - elapsed < wait)
			wait = args.duration - elapsed;
		struct pollfd pfd = {0, POLLIN, 0};
		int r = poll(&pfd, args.top && isatty(0) ? 1 : 0, (int)(wait * 1000) + 1);
		if (r > 0 && (pfd.revents & POLLIN)) {
			char key;
			if (read(0, &key, 1) == 1 && key == 'q')
				break;
		}
	}
	(void)last_top;
	if (print_counts) {
		print_pmcs();
		fputc('\n', args.printfile);
	}
	for (size_t i = 0; i < args.nev; i++)
		pmc_stop(args.ev[i].id);
	if (needs_log && pmc_close_logfile() < 0) {
		/* A full disk: the log holds what fit and is valid; keep it. */
		int e = errno;
		if (logout) {
			*output_slot(logout) = NULL;
			hwc_output_commit(logout);
		}
		errno = e;
		die_pmc(EX_IOERR, "writing the log \"%s\" failed",
			args.outputpath ? args.outputpath : logpath);
	}
	if (args.top)
		pmcstat_top(logpath, args.printfile, &top_since, isatty(fileno(args.printfile)), 120);
	else if (needs_log && !args.outputpath)
		pmcstat_print_log(logpath, args.printfile);
	if (check_stats) {
		pmc_get_driver_stats(&ds_end);
		unsigned lost = ds_end.pm_intr_bufferfull - ds_start.pm_intr_bufferfull;
		unsigned failed = ds_end.pm_buffer_requests_failed - ds_start.pm_buffer_requests_failed;
		if (lost && args.verbosity > 0)
			warnx("WARNING: sampling was paused at least %u time%s.\nPlease consider "
			      "tuning the \"kern.hwpmc.nsamples\" tunable (HWPMC_NSAMPLES).",
			      lost, lost != 1 ? "s" : "");
		if (failed && args.verbosity > 0)
			warnx("WARNING: at least %u event%s were discarded while running.\nPlease "
			      "consider tuning the \"kern.hwpmc.nbuffers\" tunable (HWPMC_NBUFFERS).",
			      failed, failed != 1 ? "s" : "");
	}
	for (size_t i = 0; i < args.nev; i++)
		pmc_release(args.ev[i].id);
	if (logout)
		end_output(logout);
	else if (logfd >= 0)
		close(logfd);
	if (needs_log && !args.outputpath)
		unlink(tmplog);
	if (printout) {
		end_output(printout);
		return EX_OK;
	}
	return close_printfile(EX_OK);
}
