/* hwc report: read a perf.data recording (hwc's or perf's), aggregate it
 * once (tools/profile), then print a view or write exports. */
#include "cli.h"
#include "hwc.h"
#include "num.h"
#include "out.h"
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: hwc report [options] [FILE]\n"
	"Summarize a recording made by `hwc record` or `perf record` (default: a pipe on\n"
	"standard input, else ./hwc.data, else ./perf.data).\n"
	"\n"
	"views (one):\n"
	"  --view=flat        functions by self share (default)\n"
	"  --view=caller      call tree from the outermost callers down\n"
	"  --view=callee      each hot function with its callers below it\n"
	"  --view=gprof       gprof-style: each function with its callers and callees\n"
	"  --view=threads     per-process/thread totals, exits and context switches\n"
	"  --view=records     the user records of the recording\n"
	"selection (samples that do not match are left out, totals included):\n"
	"  -i, --input=FILE   the recording (or give FILE as the argument); - reads a\n"
	"                     stream on standard input (perf record -o -, hwc record\n"
	"                     -o -), as does no FILE when standard input is a pipe\n"
	"  --event=NAME       report this event of a multi-event recording\n"
	"  --comm=A,B         only these command names\n"
	"  --pid=N,M          only these process (or thread) ids\n"
	"  --dso=A,B          only samples whose own frame is in these DSOs (base names)\n"
	"  --symbol=A,B       only samples whose own frame is one of these functions\n"
	"  --tid=N,M          only these thread ids\n"
	"  --cpu=LIST         only samples taken on these CPUs (e.g. 0-2,5)\n"
	"  --time=START,END   only samples from START to END, in seconds as `hwc script`\n"
	"                     shows them (either may be left out: START, or ,END);\n"
	"                     A%-B% or P%/N: a share of the recording's span (perf's)\n"
	"  --max-stack=N      only the N innermost frames of each call chain\n"
	"presentation:\n"
	"  --sort=KEYS        row keys: comm,pid,tid,dso,symbol,cpu,srcline,parent\n"
	"                     (default comm,dso,symbol);\n"
	"                     may include one order: self,children,samples,period\n"
	"                     (default children with call chains, else self)\n"
	"  --percent-limit=P  hide rows and tree branches under P percent (0 to 100)\n"
	"  --srcline          frames are function at file:line (DWARF line tables)\n"
	"  --inline           inlined functions are frames of their own\n"
	"  --no-demangle      C++ and Rust functions by their mangled (symbol table) names\n"
	"  -p, --parent=REGEX the parent key is the innermost caller matching REGEX\n"
	"                     (default ^sys_|^do_page_fault, else [other]); sorts by it\n"
	"  --children         a children (inclusive) column (default with call chains)\n"
	"  --no-children      no children (inclusive) column, no rows without self time\n"
	"  --stdio            text, as perf report --stdio (the default)\n"
	"  --json             one JSON document (schema hwc-report/1) instead of text\n"
	"exports (may be combined with a view):\n"
	"  --folded=FILE      `a;b;c count` lines, root first (- for stdout)\n"
	"  --pprof=FILE       gzipped profile.proto for `go tool pprof`\n"
	"  --flamegraph=FILE  interactive SVG flame graph\n"
	"See hwc-report(1).\n";

/* ------------------------------------------------------------ options */

static int parse_sort(struct rp_opts *o, const char *spec)
{
	o->keys = 0;
	o->nkey_order = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", spec);
	bool ordered = false;
	for (char *save, *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		static const struct {
			const char *name;
			unsigned key;
			int order;
		} names[] = {
			{"comm", K_COMM, -1}, {"pid", K_PID, -1}, {"tid", K_TID, -1},
			{"dso", K_DSO, -1}, {"symbol", K_SYM, -1}, {"sym", K_SYM, -1},
			{"cpu", K_CPU, -1}, {"srcline", K_SRCLINE, -1}, {"parent", K_PARENT, -1},
			{"self", 0, O_SELF}, {"overhead", 0, O_SELF}, {"children", 0, O_CHILDREN},
			{"samples", 0, O_SAMPLES}, {"period", 0, O_PERIOD},
		};
		size_t i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strcmp(k, names[i].name) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0])) {
			fprintf(stderr, "hwc report: --sort: unknown key '%s' (keys: comm, pid, tid, dso, "
					"symbol, cpu, srcline, parent; orders: self, children, samples, period)\n",
				k);
			return -1;
		}
		if (names[i].order >= 0) {
			if (ordered) {
				fprintf(stderr, "hwc report: --sort: give at most one of self, children, "
						"samples, period\n");
				return -1;
			}
			ordered = true;
			o->order = (enum rp_order)names[i].order;
		}
		if (names[i].key && !(o->keys & names[i].key))
			o->key_order[o->nkey_order++] = names[i].key;
		o->keys |= names[i].key;
	}
	if (!o->keys)
		o->keys = K_COMM | K_DSO | K_SYM;
	return 0;
}

/* --pid's list: pids or tids, compared as text with the recording's. */
static bool pid_list(const char *list)
{
	char buf[32];
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");
		long long v;
		if (len >= sizeof(buf))
			return false;
		memcpy(buf, p, len);
		buf[len] = '\0';
		/* Canonical, so that the text comparison finds it: no "007". */
		if (num_llong(buf, 10, 0, UINT32_MAX, &v) != NUM_OK || (buf[0] == '0' && buf[1]))
			return false;
		p += len;
		if (!*p)
			return true;
	}
}

/* perf's time: seconds with up to 9 decimals, as perf script shows them. */
static bool parse_seconds(const char *s, size_t len, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, digits = 0;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (sec > (UINT64_MAX / 1000000000 - 9) / 10)
			return false;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < len && s[i] == '.') {
		unsigned places = 0;
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++, places++) {
			if (places == 9)
				return false;
			frac = frac * 10 + (uint64_t)(s[i] - '0');
		}
		for (; places < 9; places++)
			frac *= 10;
	}
	*ns = sec * 1000000000 + frac;
	return i == len && digits;
}

/* A percentage "P%" as a fraction from 0 to 1. */
static bool parse_pct(const char *s, size_t len, double *out)
{
	char buf[64];
	if (len < 2 || len >= sizeof(buf) || s[len - 1] != '%')
		return false;
	memcpy(buf, s, len - 1);
	buf[len - 1] = '\0';
	return cli_parse_double(buf, 0, 100, out) && ((*out /= 100), true);
}

/* perf's percent forms: A%-B% (from A to B percent of the recording's
 * span), P%/N (its Nth slice of P percent). */
static bool parse_time_pct(struct rp_opts *o, const char *arg)
{
	const char *dash = strchr(arg, '-'), *slash = strchr(arg, '/');
	double a, b;
	if (dash && !slash) {
		if (!parse_pct(arg, (size_t)(dash - arg), &a) || !parse_pct(dash + 1, strlen(dash + 1), &b) ||
		    a > b)
			return false;
	} else if (slash && !dash) {
		long long n;
		if (!parse_pct(arg, (size_t)(slash - arg), &a) || a <= 0 ||
		    num_llong(slash + 1, 10, 1, INT32_MAX, &n) != NUM_OK || a * (double)n > 1)
			return false;
		b = a * (double)n;
		a *= (double)(n - 1);
	} else {
		return false;
	}
	o->time_pct = true;
	o->time_pct_start = a;
	o->time_pct_end = b;
	return true;
}

/* --time START,END: either end may be left out. */
static bool parse_time(struct rp_opts *o, const char *arg)
{
	if (strchr(arg, '%'))
		return parse_time_pct(o, arg);
	const char *comma = strchr(arg, ',');
	if (!comma || strchr(comma + 1, ','))
		return false;
	size_t a = (size_t)(comma - arg), b = strlen(comma + 1);
	o->time_start = 0;
	o->time_end = UINT64_MAX;
	if ((a && !parse_seconds(arg, a, &o->time_start)) ||
	    (b && !parse_seconds(comma + 1, b, &o->time_end)) || o->time_start > o->time_end)
		return false;
	o->time_set = true;
	return a || b;
}

static int parse_opts(int argc, char **argv, struct rp_opts *o)
{
	enum { O_VIEW = 256, O_EVENT, O_COMM, O_PID, O_DSO, O_SYMBOL, O_SORT, O_LIMIT, O_SRCLINE,
	       O_INLINE, O_JSON, O_FOLDED, O_PPROF, O_FLAME, O_NOCHILD, O_NODEMANGLE, O_CHILD,
	       O_TIME, O_CPU, O_TID, O_MAXSTACK, O_STDIO };
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'},  {"view", required_argument, NULL, O_VIEW},
		{"event", required_argument, NULL, O_EVENT}, {"comm", required_argument, NULL, O_COMM},
		{"pid", required_argument, NULL, O_PID},   {"dso", required_argument, NULL, O_DSO},
		{"symbol", required_argument, NULL, O_SYMBOL}, {"sort", required_argument, NULL, O_SORT},
		{"percent-limit", required_argument, NULL, O_LIMIT},
		{"srcline", no_argument, NULL, O_SRCLINE}, {"inline", no_argument, NULL, O_INLINE},
		{"json", no_argument, NULL, O_JSON},      {"stdio", no_argument, NULL, O_STDIO},
		{"folded", required_argument, NULL, O_FOLDED},
		{"pprof", required_argument, NULL, O_PPROF},
		{"flamegraph", required_argument, NULL, O_FLAME},
		{"no-children", no_argument, NULL, O_NOCHILD}, {"children", no_argument, NULL, O_CHILD},
		{"time", required_argument, NULL, O_TIME}, {"cpu", required_argument, NULL, O_CPU},
		{"tid", required_argument, NULL, O_TID},
		{"max-stack", required_argument, NULL, O_MAXSTACK},
		{"parent", required_argument, NULL, 'p'},
		{"no-demangle", no_argument, NULL, O_NODEMANGLE}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	o->keys = K_COMM | K_DSO | K_SYM;
	int c;
	bool stdio = false;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': o->input = optarg; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		case O_VIEW: {
			static const char *const views[] = {"flat", "caller", "callee", "gprof", "threads",
							    "records"};
			size_t i;
			for (i = 0; i < 6; i++)
				if (strcmp(optarg, views[i]) == 0)
					break;
			if (i == 6) {
				fprintf(stderr, "hwc report: --view: unknown view '%s' (flat, caller, "
						"callee, gprof, threads, records)\n",
					optarg);
				return -1;
			}
			o->view = (enum rp_view)i;
			break;
		}
		case O_EVENT: o->event = optarg; break;
		case O_COMM: o->comms = optarg; break;
		case O_PID:
			if (!pid_list(optarg)) {
				fprintf(stderr, "hwc report: --pid: '%s' is not a list of pids (numbers "
						"from 0 to 4294967295, e.g. 12,345)\n",
					optarg);
				return -1;
			}
			o->pids = optarg;
			break;
		case O_TID:
			if (!pid_list(optarg)) {
				fprintf(stderr, "hwc report: --tid: '%s' is not a list of thread ids "
						"(numbers from 0 to 4294967295, e.g. 12,345)\n",
					optarg);
				return -1;
			}
			o->tids = optarg;
			break;
		case O_CPU:
			if (!rp_cpu_selected(optarg, 0, true)) {
				fprintf(stderr, "hwc report: --cpu: '%s' is not a list of CPUs (e.g. "
						"0-2,5)\n",
					optarg);
				return -1;
			}
			o->cpus = optarg;
			break;
		case O_TIME:
			if (!parse_time(o, optarg)) {
				fprintf(stderr, "hwc report: --time: '%s' is not START,END in seconds "
						"(e.g. 1234.5,1240 or 1234.5, or ,1240), A%%-B%% or "
						"P%%/N\n",
					optarg);
				return -1;
			}
			break;
		case O_MAXSTACK: {
			long long v;
			if (num_llong(optarg, 10, 1, UINT32_MAX, &v) != NUM_OK) {
				fprintf(stderr, "hwc report: --max-stack: '%s' is not a number of "
						"frames (1 or more)\n",
					optarg);
				return -1;
			}
			o->max_stack = (unsigned)v;
			break;
		}
		case 'p': o->parent = optarg; break;
		case O_CHILD: o->no_children = false; break;
		case O_DSO: o->dsos = optarg; break;
		case O_SYMBOL: o->symbols = optarg; break;
		case O_SORT:
			if (parse_sort(o, optarg))
				return -1;
			break;
		case O_LIMIT:
			if (!cli_parse_double(optarg, 0, 100, &o->percent_limit)) {
				fprintf(stderr, "hwc report: --percent-limit: '%s' is not a percentage "
						"(a number from 0 to 100)\n",
					optarg);
				return -1;
			}
			break;
		case O_SRCLINE: o->srcline = true; break;
		case O_INLINE: o->inl = true; break;
		case O_JSON: o->json = true; break;
		case O_STDIO: stdio = true; break;
		case O_FOLDED: o->folded = optarg; break;
		case O_PPROF: o->pprof = optarg; break;
		case O_FLAME: o->flamegraph = optarg; break;
		case O_NOCHILD: o->no_children = true; break;
		case O_NODEMANGLE: o->no_demangle = true; break;
		default:
			fprintf(stderr, "Try `hwc report --help`.\n");
			return -1;
		}
	}
	if (stdio && o->json) {
		fprintf(stderr, "hwc report: --stdio and --json: choose one\n");
		return -1;
	}
	/* As perf: a parent pattern sorts by it. */
	if (o->parent)
		o->keys |= K_PARENT;
	if (optind < argc) {
		if (o->input || optind + 1 < argc) {
			fprintf(stderr, "hwc report: one recording at a time (got '%s')\n", argv[optind]);
			return -1;
		}
		o->input = argv[optind];
	}
	return 0;
}

static void ignore_once(int sig)
{
	(void)sig;
}

int cmd_report(int argc, char **argv)
{
	struct rp_report r = {0};
	if (parse_opts(argc, argv, &r.o))
		return 2;
	/* Which file is read is named when the output will not say it (exports only). */
	if (!r.o.input &&
	    !(r.o.input = cli_default_recording("hwc report", (r.o.pprof || r.o.flamegraph || r.o.folded) &&
								   r.o.view == V_FLAT && !r.o.json)))
		return 1;
	r.o.prog = "hwc report";
	/* The flat, threads and records views read neither tree nor the edges. */
	r.o.rows_only = (r.o.view == V_FLAT || r.o.view == V_THREADS || r.o.view == V_RECORDS) &&
			!r.o.json && !r.o.pprof && !r.o.flamegraph && !r.o.folded;
	/* Rows of self time alone need each sample's own frame only: its
	 * callers are neither shown nor keys, so they are not resolved. */
	r.o.own_frame_only = r.o.rows_only && r.o.view == V_FLAT && r.o.no_children &&
			     !(r.o.keys & K_PARENT);
	int rc = 1;
	/* Ctrl-C in `hwc record -o - | hwc report` reaches both: the writer
	 * then ends the stream, which is read to its end.  A second one ends
	 * the report. */
	if (rp_input_is_stdin(r.o.input))
		sigaction(SIGINT, &(struct sigaction){.sa_handler = ignore_once,
						      .sa_flags = SA_RESETHAND}, NULL);
	cli_raise_fd_limit(); /* libdw keeps each DSO's file open */
	if (rp_load(&r))
		goto out;
	if (r.o.folded && rp_write_folded(&r, r.o.folded))
		goto out;
	if (r.o.pprof && rp_write_pprof(&r, r.o.pprof))
		goto out;
	if (r.o.flamegraph && rp_write_flamegraph(&r, r.o.flamegraph))
		goto out;
	/* An export replaces the flat view, as pprof and the flame graph always did. */
	bool exported = r.o.pprof || r.o.flamegraph || r.o.folded;
	if (r.o.json) {
		rp_print_json(&r, stdout);
	} else if (!exported || r.o.view != V_FLAT) {
		switch (r.o.view) {
		case V_FLAT: rp_print_flat(&r, stdout); break;
		case V_CALLER: rp_print_tree(&r, stdout, true); break;
		case V_CALLEE: rp_print_tree(&r, stdout, false); break;
		case V_GPROF: rp_print_gprof(&r, stdout); break;
		case V_THREADS: rp_print_threads(&r, stdout); break;
		case V_RECORDS: rp_print_records(&r, stdout); break;
		}
	}
	if (out_close(stdout, NULL))
		goto out;
	rc = 0;
out:
	rp_free(&r);
	return rc;
}
