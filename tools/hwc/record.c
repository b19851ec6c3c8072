/* hwc record: sample a command, a process or the whole system into a
 * perf.data file that perf report and hwc report read.  Whatever ends the
 * recording (the command's exit or death, Ctrl-C, a full disk), the file
 * is finished and valid, and the summary says what it holds, lost and
 * throttled samples included. */
#include "cli.h"
#include "hwc.h"
#include "num.h"

#include <hwc/sample.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { EXIT_ERROR = 1, EXIT_NOEXEC = 127 };

struct options {
	const char **specs;
	size_t nspecs;
	const char *log_events; /* --log-events */
	uint64_t period, freq;
	enum hwc_callgraph callgraph;
	uint32_t stack_size;
	struct cli_target t; /* -p, -t, -a, -C, -i, the command */
	bool group_values, log_exit, log_switch;
	bool sample_cpu; /* --sample-cpu */
	size_t pages;
	int compression; /* -z: the zstd level, 0 none */
	const char *output;
};

static const char usage_text[] =
	"usage: hwc record [options] [--] command [args...]\n"
	"       hwc record [options] -p pid | -t tid | -a | -C cpus [command]\n"
	"\n"
	"Sample events while a command runs, or in a running process or thread, or on\n"
	"every CPU (until Ctrl-C or the end of the command), into a perf.data file.\n"
	"\n"
	"  -e, --event SPEC          events to sample: comma lists and {groups}, repeatable;\n"
	"                            default: cycles, or cpu-clock without a hardware PMU\n"
	"  -c, --count PERIOD        a sample every PERIOD events\n"
	"  -F, --freq HZ             HZ samples a second per event (default 4000)\n"
	"  -g                        call graphs from frame pointers (--call-graph fp)\n"
	"      --call-graph MODE     fp, or dwarf[,SIZE]: user registers and SIZE bytes of\n"
	"                            user stack per sample (default 8192), unwound later\n"
	"  -p, --pid PID             sample an existing process, all its threads\n"
	"  -t, --tid TID             sample one existing thread\n"
	"  -a, --all-cpus            sample every online CPU\n"
	"  -C, --cpu LIST            sample these CPUs only (e.g. 0-3,6)\n"
	"  -G, --cgroup CG           sample only the tasks of cgroup CG (a cgroup v2 path\n"
	"                            relative to the hierarchy's root), on every CPU or\n"
	"                            -C's; samples carry their cgroup (perf report --sort\n"
	"                            cgroup)\n"
	"  -i, --no-inherit          do not sample child processes and new threads\n"
	"  -o, --output FILE         the recording (default hwc.data); a previous FILE\n"
	"                            is kept as FILE.old; - streams it to standard\n"
	"                            output in perf's pipe format (hwc report -i -)\n"
	"  -m, --mmap-pages N        ring buffer pages per CPU, a power of 2 (default 128)\n"
	"  -z, --compression-level[=N]  compress the records with zstd at level N, from 1\n"
	"                            (fastest, the default) to 22 (smallest), as perf\n"
	"                            record -z; the level goes right after -z (-z3)\n"
	"      --group-values        in each {group} only the leader samples; the others\n"
	"                            are counted and their values stored with every sample\n"
	"      --log-exit            store each thread's counts of the --log-events when it\n"
	"                            exits (hwpmc's PMC_F_LOG_PROCEXIT)\n"
	"      --log-switch          store a thread's counts at each of its context switches,\n"
	"                            and the switches themselves (PMC_F_LOG_PROCCSW)\n"
	"      --log-events SPEC     the events --log-exit and --log-switch count\n"
	"                            (default task-clock)\n"
	"      --sample-cpu          every sample names its CPU (always with -a and -C)\n"
	"  -h, --help                show this help\n"
	"\n"
	"At the end a summary on stderr: samples written, records lost, times throttled,\n"
	"file size.  Exit status: the command's (128+N if a signal N killed it), 127 if\n"
	"it cannot be executed, 1 on errors (a full disk included: the file then holds\n"
	"what fit and stays valid), 2 on bad usage, 130 when interrupted.\n"
	"See hwc-record(1) and hwc-data(5).\n";

static int usage_error(const char *fmt, const char *arg)
{
	return cli_usage_error("record", fmt, arg);
}

static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	if (num_ullong(s, 10, min, max, &v) != NUM_OK)
		return false;
	*out = v;
	return true;
}

static int parse_call_graph(const char *s, struct options *o)
{
	if (strcmp(s, "fp") == 0) {
		o->callgraph = HWC_CALLGRAPH_FP;
		return -1;
	}
	if (strncmp(s, "dwarf", 5) != 0 || (s[5] && s[5] != ','))
		return usage_error("unknown call graph mode '%s' (expected fp or dwarf[,SIZE])", s);
	o->callgraph = HWC_CALLGRAPH_DWARF;
	uint64_t size;
	if (s[5] == ',' && (!parse_u64(s + 6, 8, 65528, &size) || size % 8))
		return usage_error("invalid stack size in '%s' for --call-graph: give bytes, a "
				   "multiple of 8 from 8 to 65528",
				   s);
	if (s[5] == ',')
		o->stack_size = (uint32_t)size;
	return -1;
}

/* Returns -1 to go on, else the exit status (help, usage error). */
static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_CALL_GRAPH = 256, OPT_GROUP_VALUES, OPT_LOG_EXIT, OPT_LOG_SWITCH, OPT_LOG_EVENTS,
	       OPT_SAMPLE_CPU };
	static const struct option longopts[] = {
		{"event", required_argument, NULL, 'e'},
		{"count", required_argument, NULL, 'c'},
		{"freq", required_argument, NULL, 'F'},
		{"call-graph", required_argument, NULL, OPT_CALL_GRAPH},
		CLI_TARGET_LONGOPTS,
		{"output", required_argument, NULL, 'o'},
		{"mmap-pages", required_argument, NULL, 'm'},
		{"compression-level", optional_argument, NULL, 'z'},
		{"group-values", no_argument, NULL, OPT_GROUP_VALUES},
		{"log-exit", no_argument, NULL, OPT_LOG_EXIT},
		{"log-switch", no_argument, NULL, OPT_LOG_SWITCH},
		{"log-events", required_argument, NULL, OPT_LOG_EVENTS},
		{"sample-cpu", no_argument, NULL, OPT_SAMPLE_CPU},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c, r;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:e:c:F:go:m:z::h" CLI_TARGET_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (!cli_add_spec(&o->specs, &o->nspecs, optarg))
				return usage_error("%s", "out of memory");
			break;
		case 'c':
			if (!parse_u64(optarg, 1, UINT64_MAX >> 1, &o->period))
				return usage_error("invalid period '%s' for -c (expected events, from 1 to "
						   "9223372036854775807)",
						   optarg);
			break;
		case 'F':
			if (!parse_u64(optarg, 1, UINT32_MAX, &o->freq))
				return usage_error("invalid frequency '%s' for -F (expected samples a "
						   "second, from 1 to 4294967295)",
						   optarg);
			break;
		case 'g': o->callgraph = HWC_CALLGRAPH_FP; break;
		case OPT_CALL_GRAPH:
			if ((r = parse_call_graph(optarg, o)) >= 0)
				return r;
			break;
		case 'o':
			if (!*optarg)
				return usage_error("%s", "the output file name of -o cannot be empty");
			o->output = optarg;
			break;
		case 'm':
			if (!parse_u64(optarg, 1, 1u << 20, &v) || (v & (v - 1)))
				return usage_error("invalid ring buffer size '%s' for -m (expected a power "
						   "of 2 of pages from 1 to 1048576, e.g. 128)",
						   optarg);
			o->pages = (size_t)v;
			break;
		case 'z':
			if (!optarg)
				v = 1;
			else if (!parse_u64(optarg, 1, 22, &v))
				return usage_error("invalid compression level '%s' for -z (expected 1, "
						   "fastest, to 22, smallest, right after -z or "
						   "--compression-level=)",
						   optarg);
			o->compression = (int)v;
			break;
		case OPT_GROUP_VALUES: o->group_values = true; break;
		case OPT_LOG_EXIT: o->log_exit = true; break;
		case OPT_LOG_SWITCH: o->log_switch = true; break;
		case OPT_LOG_EVENTS: o->log_events = optarg; break;
		case OPT_SAMPLE_CPU: o->sample_cpu = true; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default:
			if ((r = cli_other_option("record", c, argv, &o->t)) >= 0)
				return r;
		}
	}
	o->t.argv = optind < argc ? argv + optind : NULL;

	if (o->period && o->freq)
		return usage_error("%s", "give -c (a period) or -F (a frequency), not both");
	if ((r = cli_target_check("record", &o->t, "sample", "record", "sampling")) >= 0)
		return r;
	bool system = o->t.all_cpus || o->t.cpus || o->t.cgroup;
	if ((o->log_exit || o->log_switch) && system)
		return usage_error("%s", "--log-exit and --log-switch count per thread: give a "
					 "command, -p or -t, not -a or -C");
	if (o->log_events && !o->log_exit && !o->log_switch)
		return usage_error("%s", "--log-events needs --log-exit or --log-switch");
	if (o->output && strcmp(o->output, "-") == 0 && isatty(STDOUT_FILENO))
		return usage_error("%s", "-o -: standard output is a terminal; pipe it into a "
					 "reader (hwc record -o - CMD | hwc report -i -) or give a "
					 "file name");
	return -1;
}

/* ------------------------------------------------------------ recording */

/* Open the sampler, with the --log-events the logs count. */
static int open_sampler(const struct options *o, const struct hwc_target *t,
			const struct hwc_sampler_opts *so, hwc_sampler **s)
{
	hwc_evlist *logged = NULL;
	struct hwc_sampler_opts opts = *so;
	char note[1024];
	int err = 0;
	if (o->log_events) {
		err = cli_resolve("record", &logged, (const char *const[]){o->log_events}, 1);
		opts.counted = logged;
	}
	if (!err)
		err = cli_open_sampler("record", o->specs, o->nspecs, t, &opts, s, note, sizeof(note));
	if (!err && note[0])
		fprintf(stderr, "hwc record: %s\n", note);
	hwc_evlist_free(logged);
	return err;
}

static void human_size(uint64_t bytes, char *buf, size_t size)
{
	if (bytes < 1024)
		snprintf(buf, size, "%" PRIu64 " bytes", bytes);
	else if (bytes < 1024 * 1024)
		snprintf(buf, size, "%.1f KiB", (double)bytes / 1024);
	else
		snprintf(buf, size, "%.1f MiB", (double)bytes / (1024 * 1024));
}

static void summary(const char *path, const struct hwc_recording_stats *rs,
		    const struct hwc_sampler_stats *ss)
{
	char size[64];
	human_size(rs->bytes, size, sizeof(size));
	fprintf(stderr,
		"hwc record: %" PRIu64 " samples written to %s (%s), %" PRIu64 " lost, %" PRIu64
		" throttled\n",
		rs->samples, path, size, ss->lost, ss->throttled);
	if (ss->lost)
		fprintf(stderr, "hwc record: the kernel lost %" PRIu64 " records on full ring buffers; "
				"give more pages (-m) or sample less often (-F, -c)\n",
			ss->lost);
	if (ss->throttled) {
		long long max = 0;
		FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
		if (f) {
			if (fscanf(f, "%lld", &max) != 1)
				max = 0;
			fclose(f);
		}
		fprintf(stderr, "hwc record: the kernel throttled sampling %" PRIu64 " times at its "
				"rate limit (kernel.perf_event_max_sample_rate = %lld); sample less "
				"often (-F, -c)\n",
			ss->throttled, max);
	}
}

static int record(const struct options *o, int argc, char **argv)
{
	struct hwc_target t;
	cli_target_of(&o->t, &t);
	struct hwc_sampler_opts so = {
		.period = o->period,
		.freq = o->freq,
		.callgraph = o->callgraph,
		.stack_size = o->stack_size,
		.mmap_pages = o->pages,
		.flags = (o->group_values ? HWC_GROUP_VALUES : 0) |
			 (o->log_exit ? HWC_LOG_PROCEXIT : 0) | (o->log_switch ? HWC_LOG_PROCCSW : 0) |
			 (o->sample_cpu ? HWC_SAMPLE_CPU : 0),
	};
	const char *path = o->output ? o->output : "hwc.data";
	bool to_stdout = strcmp(path, "-") == 0;
	cli_raise_fd_limit();
	cli_catch_stop_signals();
	/* -o -: a command started here writes to stderr instead (as with perf),
	 * so that its output cannot corrupt the stream: standard output is
	 * stderr while the sampler forks it, then the stream's again. */
	int saved = -1;
	if (to_stdout && ((saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) < 0 ||
			  dup2(STDERR_FILENO, STDOUT_FILENO) < 0)) {
		fprintf(stderr, "hwc record: cannot redirect the command's output: %s\n",
			strerror(errno));
		return EXIT_ERROR;
	}

	/* The events first: a bad event must not clobber an earlier recording. */
	hwc_sampler *s;
	int opened = open_sampler(o, &t, &so, &s);
	if (saved >= 0 && (dup2(saved, STDOUT_FILENO) < 0 || close(saved) < 0)) {
		fprintf(stderr, "hwc record: cannot restore standard output: %s\n", strerror(errno));
		if (!opened)
			hwc_sampler_close(s);
		return EXIT_ERROR;
	}
	if (opened)
		return EXIT_ERROR;
	hwc_recording *rec;
	/* A temporary file, renamed over PATH at the end; the previous PATH
	 * becomes PATH.old, as perf does.  A stream is written as it goes. */
	if (to_stdout ? hwc_recording_fdopen(&rec, STDOUT_FILENO)
		      : hwc_recording_create_flags(&rec, path, HWC_OUTPUT_KEEP_OLD)) {
		fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
		hwc_sampler_close(s);
		return EXIT_ERROR;
	}
	if (hwc_sampler_user_only(s)) {
		int level = 2;
		hwc_paranoid(&level);
		fprintf(stderr, "hwc record: kernel sampling is not allowed for this user "
				"(perf_event_paranoid is %d): sampling user space only\n",
			level);
	}
	int status = EXIT_ERROR;
	bool failed = false;
	/* The CMDLINE feature: "hwc record ...", as perf stores "perf record ...". */
	char **cmdline = calloc((size_t)argc + 1, sizeof(*cmdline));
	if (cmdline) {
		cmdline[0] = "hwc";
		memcpy(cmdline + 1, argv, (size_t)argc * sizeof(*argv));
	}
	/* Nothing sampled yet: a failure here leaves an earlier PATH as it was. */
	if (!cmdline || hwc_recording_set_compression(rec, o->compression) ||
	    hwc_recording_set_cmdline(rec, argc + 1, cmdline) ||
	    hwc_recording_add_sampler(rec, s)) {
		fprintf(stderr, "hwc record: %s\n", cmdline ? hwc_errdetail() : "out of memory");
		hwc_sampler_close(s);
		hwc_recording_discard(rec);
		free(cmdline);
		return EXIT_ERROR;
	} else if (hwc_sampler_start(s)) {
		fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
		hwc_sampler_close(s);
		hwc_recording_discard(rec);
		free(cmdline);
		return EXIT_NOEXEC;
	}
	free(cmdline);
	int wstatus = -1;
	bool ended = false;
	while (!failed && !cli_stop_signal && !(ended = hwc_sampler_ended(s, &wstatus))) {
		/* A signal between the check and the wait is seen at the next
		 * timeout at the latest. */
		int r = hwc_sampler_poll(s, 200);
		if (r < 0 && r != -EINTR) {
			fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
			failed = true;
		}
		if (hwc_sampler_write(s, rec) < 0) {
			fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
			failed = true;
		}
	}
	/* Stop, then take what the buffers still hold and the exit counts. */
	if (hwc_sampler_stop(s)) {
		fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
		failed = true;
	}
	if (hwc_sampler_write(s, rec) < 0 && !failed) {
		fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
		failed = true;
	}
	/* A command we started does not outlive its recording. */
	if (!ended && (cli_stop_signal || failed) && hwc_sampler_pid(s) > 0 &&
	    t.kind != HWC_TARGET_PROCESS && t.kind != HWC_TARGET_THREAD)
		kill(hwc_sampler_pid(s), SIGTERM);
	struct hwc_sampler_stats ss;
	hwc_sampler_stats(s, &ss);
	hwc_sampler_close(s);
	struct hwc_recording_stats rs;
	if (hwc_recording_close(rec, &rs)) {
		fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
		failed = true;
	}
	summary(to_stdout ? "standard output" : path, &rs, &ss);
	if (failed)
		return EXIT_ERROR;
	if (cli_stop_signal)
		return 128 + cli_stop_signal;
	if (ended && wstatus != -1)
		status = cli_exit_status(wstatus);
	else
		status = 0;
	return status;
}

int cmd_record(int argc, char **argv)
{
	struct options o = {0};
	int r = parse_options(argc, argv, &o);
	if (r < 0)
		r = record(&o, argc, argv);
	free(o.specs);
	free(o.t.cpus);
	return r;
}
