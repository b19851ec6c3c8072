/* hwc record: sample a command, a process or the whole system into a
 * perf.data file that perf report and hwc report read.  Whatever ends the
 * recording (the command's exit or death, Ctrl-C, a full disk), the file
 * is finished and valid, and the summary says what it holds, lost and
 * throttled samples included. */
#include "cli.h"
#include "hwc.h"
#include "num.h"

#include <hwc/sample.h>
#include <hwc/symbol.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_ERROR = 1, EXIT_NOEXEC = 127 };

/* --switch-output: what starts the next file. */
enum switch_mode { SWITCH_NONE, SWITCH_SIGNAL, SWITCH_SIZE, SWITCH_TIME };

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
	enum switch_mode switch_mode;
	uint64_t switch_size;    /* bytes */
	uint64_t switch_ns;      /* nanoseconds */
	uint64_t switch_max;     /* --switch-max-files, 0: no limit */
	bool have_clock;         /* -k */
	bool no_buildid_cache;   /* -N */
	clockid_t clock;
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
	"      --switch-output[=signal|SIZE|TIME]  a new file at each SIGUSR2 (signal, the\n"
	"                            default), or when the file reaches SIZE (e.g. 100M;\n"
	"                            units B, K, M, G), or every TIME (e.g. 30s; units s,\n"
	"                            m, h, d); each file is FILE.<timestamp>, as perf's\n"
	"      --switch-max-files N  keep only the newest N of those files\n"
	"  -k, --clockid CLOCK       time samples on CLOCK: monotonic (the default),\n"
	"                            monotonic_raw, realtime, boottime, tai, or a number\n"
	"      --buildid-all         build ids of every mapped file (what hwc always stores)\n"
	"  -N, --no-buildid-cache    copy neither the vDSO nor /proc/kallsyms into perf's\n"
	"                            build-id cache ~/.debug\n"
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

/* NUMBER then one unit of UNITS with its multiplier. */
static bool parse_scaled(const char *s, const char *units, const uint64_t *mult, uint64_t *out)
{
	size_t n = strlen(s);
	const char *u = n > 1 ? strchr(units, s[n - 1]) : NULL; /* perf's units, case and all */
	char num[32];
	uint64_t v;
	if (!u || !*u || n - 1 >= sizeof(num))
		return false;
	memcpy(num, s, n - 1);
	num[n - 1] = '\0';
	uint64_t m = mult[u - units];
	if (!parse_u64(num, 1, UINT64_MAX / m, &v))
		return false;
	*out = v * m;
	return true;
}

static int parse_switch_output(const char *s, struct options *o)
{
	static const uint64_t sizes[] = {1, 1ULL << 10, 1ULL << 20, 1ULL << 30};
	static const uint64_t times[] = {1000000000ULL, 60000000000ULL, 3600000000000ULL,
					 86400000000000ULL};
	if (!s || strcmp(s, "signal") == 0)
		o->switch_mode = SWITCH_SIGNAL;
	else if (parse_scaled(s, "BKMG", sizes, &o->switch_size))
		o->switch_mode = SWITCH_SIZE;
	else if (parse_scaled(s, "smhd", times, &o->switch_ns))
		o->switch_mode = SWITCH_TIME;
	else
		return usage_error("invalid --switch-output '%s' (expected signal, a size as 100M "
				   "with a unit B, K, M or G, or a time as 30s with a unit s, m, h "
				   "or d)",
				   s);
	return -1;
}

/* perf record -k: a name (CLOCK_ prefix and case ignored) or a number. */
static int parse_clockid(const char *s, struct options *o)
{
	static const struct {
		const char *name;
		clockid_t id;
	} clocks[] = {
		{"monotonic", CLOCK_MONOTONIC}, {"monotonic_raw", CLOCK_MONOTONIC_RAW},
		{"realtime", CLOCK_REALTIME},   {"boottime", CLOCK_BOOTTIME},
		{"tai", CLOCK_TAI},             {"mono", CLOCK_MONOTONIC},
		{"raw", CLOCK_MONOTONIC_RAW},   {"real", CLOCK_REALTIME},
		{"boot", CLOCK_BOOTTIME},
	};
	const char *name = strncasecmp(s, "CLOCK_", 6) == 0 ? s + 6 : s;
	uint64_t v;
	o->have_clock = true;
	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		if (strcasecmp(name, clocks[i].name) == 0) {
			o->clock = clocks[i].id;
			return -1;
		}
	if (!parse_u64(s, 0, INT32_MAX, &v))
		return usage_error("unknown clock '%s' for -k (expected monotonic, monotonic_raw, "
				   "realtime, boottime, tai or a clock number)",
				   s);
	o->clock = (clockid_t)v;
	return -1;
}

/* Returns -1 to go on, else the exit status (help, usage error). */
static int parse_options(int argc, char **argv, struct options *o)
{
	enum {
		OPT_CALL_GRAPH = 256, OPT_GROUP_VALUES, OPT_LOG_EXIT, OPT_LOG_SWITCH, OPT_LOG_EVENTS,
		OPT_SWITCH_OUTPUT, OPT_SWITCH_MAX_FILES, OPT_BUILDID_ALL, OPT_SAMPLE_CPU,
	};
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
		{"switch-output", optional_argument, NULL, OPT_SWITCH_OUTPUT},
		{"switch-max-files", required_argument, NULL, OPT_SWITCH_MAX_FILES},
		{"clockid", required_argument, NULL, 'k'},
		{"buildid-all", no_argument, NULL, OPT_BUILDID_ALL},
		{"no-buildid-cache", no_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c, r;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:e:c:F:go:m:z::k:Nh" CLI_TARGET_SHORTOPTS, longopts, NULL)) != -1) {
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
		case OPT_SWITCH_OUTPUT:
			if ((r = parse_switch_output(optarg, o)) >= 0)
				return r;
			break;
		case OPT_SWITCH_MAX_FILES:
			if (!parse_u64(optarg, 1, UINT32_MAX, &o->switch_max))
				return usage_error("invalid --switch-max-files '%s' (expected a number "
						   "of files from 1)",
						   optarg);
			break;
		case 'k':
			if ((r = parse_clockid(optarg, o)) >= 0)
				return r;
			break;
		case OPT_BUILDID_ALL: break; /* every mapped file's build id is stored anyway */
		case 'N': o->no_buildid_cache = true; break;
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
	bool to_stdout = o->output && strcmp(o->output, "-") == 0;
	if (o->switch_mode && to_stdout)
		return usage_error("%s", "--switch-output writes files: it cannot go with -o -");
	if (o->switch_max && !o->switch_mode)
		return usage_error("%s", "--switch-max-files needs --switch-output");
	if (to_stdout && isatty(STDOUT_FILENO))
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

/* ------------------------------------------------------- --switch-output */

static volatile sig_atomic_t switch_signal;

static void on_switch_signal(int sig)
{
	(void)sig;
	switch_signal = 1;
}

/* The files written so far, oldest first, with their device and inode:
 * --switch-max-files removes only files this run made. */
struct rotation {
	const char *base; /* each file is BASE.<timestamp> */
	char **names;
	dev_t *dev;
	ino_t *ino;
	size_t n;
	uint64_t samples, bytes;
	uint64_t deadline; /* SWITCH_TIME: CLOCK_MONOTONIC ns of the next switch */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* BASE.YYYYmmddHHMMSScc in local time, as perf names them: a name nothing
 * has yet (two switches in one hundredth of a second take the next). */
static bool free_name(const char *base, char *buf, size_t size)
{
	for (int tries = 0; tries < 1000; tries++) {
		struct timespec ts;
		struct tm tm;
		char date[32];
		clock_gettime(CLOCK_REALTIME, &ts);
		if (!localtime_r(&ts.tv_sec, &tm) || !strftime(date, sizeof(date), "%Y%m%d%H%M%S", &tm))
			return false;
		if (snprintf(buf, size, "%s.%s%02ld", base, date, ts.tv_nsec / 10000000) >= (int)size)
			return false;
		struct stat st;
		if (lstat(buf, &st) < 0 && errno == ENOENT)
			return true;
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	return false;
}

/* Finish REC as the next BASE.<timestamp>; false on errors (said). */
static bool close_file(struct rotation *r, hwc_recording *rec)
{
	char name[PATH_MAX + 32];
	if (!free_name(r->base, name, sizeof(name))) {
		fprintf(stderr, "hwc record: no free name %s.<timestamp> for the recording\n", r->base);
		hwc_recording_discard(rec);
		return false;
	}
	if (hwc_recording_set_path(rec, name)) {
		fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
		hwc_recording_discard(rec);
		return false;
	}
	struct hwc_recording_stats rs;
	bool ok = hwc_recording_close(rec, &rs) == 0;
	if (!ok)
		fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
	r->samples += rs.samples;
	r->bytes += rs.bytes;
	char size[64];
	human_size(rs.bytes, size, sizeof(size));
	fprintf(stderr, "hwc record: dumped %s: %" PRIu64 " samples (%s)\n", name, rs.samples, size);
	struct stat st;
	char *copy = strdup(name);
	char **names = realloc(r->names, (r->n + 1) * sizeof(*names));
	r->names = names ? names : r->names;
	dev_t *dev = realloc(r->dev, (r->n + 1) * sizeof(*dev));
	r->dev = dev ? dev : r->dev;
	ino_t *ino = realloc(r->ino, (r->n + 1) * sizeof(*ino));
	r->ino = ino ? ino : r->ino;
	if (!copy || !names || !dev || !ino || lstat(name, &st) < 0) {
		free(copy); /* not removed later, then */
		return ok;
	}
	r->names[r->n] = copy;
	r->dev[r->n] = st.st_dev;
	r->ino[r->n] = st.st_ino;
	r->n++;
	return ok;
}

/* --switch-max-files: remove the oldest files this run made beyond MAX. */
static void keep_newest(struct rotation *r, uint64_t max)
{
	while (max && r->n > max) {
		struct stat st;
		if (lstat(r->names[0], &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == r->dev[0] &&
		    st.st_ino == r->ino[0] && unlink(r->names[0]) == 0)
			fprintf(stderr, "hwc record: removed %s (--switch-max-files)\n", r->names[0]);
		free(r->names[0]);
		r->n--;
		memmove(r->names, r->names + 1, r->n * sizeof(*r->names));
		memmove(r->dev, r->dev + 1, r->n * sizeof(*r->dev));
		memmove(r->ino, r->ino + 1, r->n * sizeof(*r->ino));
	}
}

static void free_rotation(struct rotation *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->names[i]);
	free(r->names);
	free(r->dev);
	free(r->ino);
}

/* Is it time for the next file? */
static bool switch_due(const struct options *o, struct rotation *r, const hwc_recording *rec)
{
	bool signalled = switch_signal;
	switch_signal = 0; /* caught in every mode, as perf does, but only signal switches */
	struct hwc_recording_stats rs;
	switch (o->switch_mode) {
	case SWITCH_SIGNAL: return signalled;
	case SWITCH_SIZE: hwc_recording_stats(rec, &rs); return rs.bytes >= o->switch_size;
	case SWITCH_TIME:
		if (now_ns() < r->deadline)
			return false;
		r->deadline = now_ns() + o->switch_ns;
		return true;
	case SWITCH_NONE: break;
	}
	return false;
}

/* The poll timeout: 200 ms, or less until the next timed switch. */
static int poll_timeout(const struct options *o, const struct rotation *r)
{
	if (o->switch_mode != SWITCH_TIME)
		return 200;
	uint64_t now = now_ns();
	uint64_t left_ms = r->deadline > now ? (r->deadline - now + 999999) / 1000000 : 0;
	return left_ms < 200 ? (int)left_ms : 200;
}

/* ------------------------------------------------------------- recording */

/* What every file of the recording holds before the samples. */
static int describe(const struct options *o, hwc_recording *rec, int argc, char **cmdline,
		    const hwc_sampler *s)
{
	return hwc_recording_set_compression(rec, o->compression) ||
	       hwc_recording_set_cmdline(rec, argc, cmdline) || hwc_recording_add_sampler(rec, s);
}

/* Go on in a new file: everything taken so far is in REC, which is
 * finished once the new file describes the tasks as they are now. */
static bool switch_file(const struct options *o, struct rotation *r, hwc_recording **rec,
			int argc, char **cmdline, hwc_sampler *s)
{
	hwc_recording *next;
	if (hwc_recording_create_flags(&next, r->base, 0)) {
		fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
		return false;
	}
	if (describe(o, next, argc, cmdline, s)) {
		fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
		hwc_recording_discard(next);
		return false;
	}
	/* The command ended while the next file was described: its maps may
	 * be missing there, and its last samples belong with them. */
	if (hwc_sampler_ended(s, NULL)) {
		hwc_recording_discard(next);
		return true;
	}
	bool ok = close_file(r, *rec);
	*rec = next;
	keep_newest(r, o->switch_max);
	return ok;
}

/* Can an event of S sample the kernel? */
static bool can_sample_kernel(const hwc_sampler *s)
{
	for (size_t e = 0; e < hwc_sampler_nevents(s); e++)
		if (!hwc_sampler_event(s, e, NULL)->exclude_kernel)
			return true;
	return false;
}

/* Fill perf's build-id cache as perf record does, once the recording is
 * safe in its file: the vDSO's image for reports on another boot, and
 * with KERNEL samples possible a copy of /proc/kallsyms, which this boot's
 * reports read faster than the kernel formats /proc/kallsyms. */
static void save_caches(bool kernel)
{
	int err = hwc_symbols_save_vdso(NULL, 0);
	/* -EPERM: HOME or its cache is another user's (root under sudo -E):
	 * neither is written there, and one note says so. */
	if (err == -EPERM) {
		fprintf(stderr, "hwc record: note: %s\n", hwc_errdetail());
		return;
	}
	if (err)
		fprintf(stderr, "hwc record: warning: [vdso] symbols will not resolve: %s\n",
			hwc_errdetail());
	/* A copy of another boot's (perf's or ours) stays, as perf leaves it,
	 * and quietly: reports then read /proc/kallsyms, which is only slower. */
	err = kernel ? hwc_symbols_save_kallsyms(NULL, 0) : 0;
	if (err && err != -EEXIST)
		fprintf(stderr, "hwc record: warning: no copy of kallsyms for reports: %s\n",
			hwc_errdetail());
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
			 (o->sample_cpu ? HWC_SAMPLE_CPU : 0) | (o->have_clock ? HWC_CLOCKID : 0),
		.clockid = o->clock,
	};
	const char *path = o->output ? o->output : "hwc.data";
	bool to_stdout = strcmp(path, "-") == 0;
	bool rotating = o->switch_mode != SWITCH_NONE;
	struct rotation rot = {.base = path};
	cli_raise_fd_limit();
	cli_catch_stop_signals();
	if (rotating) {
		struct sigaction sa = {.sa_handler = on_switch_signal};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR2, &sa, NULL);
	}
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
	 * becomes PATH.old, as perf does.  A stream is written as it goes.
	 * --switch-output: each file is renamed PATH.<timestamp> instead. */
	if (to_stdout ? hwc_recording_fdopen(&rec, STDOUT_FILENO)
		      : hwc_recording_create_flags(&rec, path, rotating ? 0 : HWC_OUTPUT_KEEP_OLD)) {
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
	if (!cmdline || describe(o, rec, argc + 1, cmdline, s)) {
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
	rot.deadline = now_ns() + o->switch_ns;
	int wstatus = -1;
	bool ended = false;
	while (!failed && !cli_stop_signal && !(ended = hwc_sampler_ended(s, &wstatus))) {
		/* A signal between the check and the wait is seen at the next
		 * timeout at the latest. */
		int r = hwc_sampler_poll(s, poll_timeout(o, &rot));
		if (r < 0 && r != -EINTR) {
			fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
			failed = true;
		}
		if (hwc_sampler_write(s, rec) < 0) {
			fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
			failed = true;
		}
		/* Every record taken so far is in REC: the next file starts here,
		 * unless the command ended (its maps are gone from /proc). */
		if (!failed && rotating && switch_due(o, &rot, rec) &&
		    !hwc_sampler_ended(s, NULL) && !switch_file(o, &rot, &rec, argc + 1, cmdline, s))
			failed = true;
	}
	free(cmdline);
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
	bool kernel = can_sample_kernel(s);
	hwc_sampler_close(s);
	struct hwc_recording_stats rs;
	char files[PATH_MAX + 64];
	if (rotating) {
		if (!close_file(&rot, rec))
			failed = true;
		keep_newest(&rot, o->switch_max);
		rs = (struct hwc_recording_stats){.samples = rot.samples, .bytes = rot.bytes};
		snprintf(files, sizeof(files), "%s.<timestamp> files", path);
		free_rotation(&rot);
	} else if (hwc_recording_close(rec, &rs)) {
		fprintf(stderr, "hwc record: %s\n", hwc_errdetail());
		failed = true;
	}
	if (!o->no_buildid_cache)
		save_caches(kernel);
	summary(to_stdout ? "standard output" : rotating ? files : path, &rs, &ss);
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
