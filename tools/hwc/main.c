/* hwc: the command-line front end.  Each subcommand lives in its own file
 * and uses only the public libhwc API. */
#include "hwc.h"
#include "out.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* hwc serve is the program hwc-serve beside hwc (tools/hwc/serve_main.c). */
static int run_serve(int argc, char **argv)
{
	(void)argc;
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - sizeof("hwc-serve"));
	char *slash = n > 0 ? memrchr(path, '/', (size_t)n) : NULL;
	if (!slash) {
		fprintf(stderr, "hwc serve: cannot find hwc's directory: %s\n",
			n < 0 ? strerror(errno) : "no /proc/self/exe");
		return 1;
	}
	strcpy(slash + 1, "hwc-serve");
	execv(path, argv);
	fprintf(stderr, "hwc serve: cannot run %s: %s\n", path, strerror(errno));
	return 1;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"stat", cmd_stat, "count events for a command, process, thread or the whole system"},
	{"list", cmd_list, "list the events this machine (or any libpfm4 or JSON model) knows"},
	{"report", cmd_report, "summarize a recording (hwc's or perf's): views, JSON, pprof, flame graphs"},
	{"info", cmd_info, "describe this machine's counters, PMUs and permissions"},
	{"record", cmd_record, "sample a command, process or the whole system into a perf.data file"},
	{"script", cmd_script, "print every sample of a recording as perf script does; JSON; Chrome trace"},
	{"top", cmd_top, "live view of the hottest functions, or of per-process counter rates"},
	{"annotate", cmd_annotate, "per-instruction samples of a function, with disassembly and source"},
	{"diff", cmd_diff, "compare two recordings per function, or two `hwc stat -r` results"},
	{"serve", run_serve, "serve counters to Prometheus and CPU profiles to pprof over HTTP"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hwc <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\noptions before the command:\n  --events-dir DIR  perf's JSON event "
		   "tables (x86/, arm64/, ...) from DIR\n");
	fprintf(f, "\n`hwc <command> --help` describes a command; see hwc(1).\n");
}

int main(int argc, char **argv)
{
	/* A write error on stdout, in any subcommand, fails as "hwc CMD: write error". */
	static char name[32] = "hwc";
	out_init(name, 1);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("hwc %s\n", HWC_VERSION_STRING);
		return 0;
	}
	/* hwc --events-dir DIR COMMAND: perf's JSON event tables from DIR. */
	if (strcmp(argv[1], "--events-dir") == 0 || strncmp(argv[1], "--events-dir=", 13) == 0) {
		bool joined = argv[1][12] == '=';
		const char *dir = joined ? argv[1] + 13 : argv[2];
		if (!dir || !*dir) {
			fprintf(stderr, "hwc: --events-dir needs a directory\n");
			return 2;
		}
		if (hwc_set_events_dir(dir)) {
			fprintf(stderr, "hwc: %s\n", hwc_errdetail());
			return 2;
		}
		argc -= joined ? 1 : 2;
		argv += joined ? 1 : 2;
		if (argc < 2) {
			usage(stderr);
			return 2;
		}
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			snprintf(name, sizeof(name), "hwc %s", commands[i].name);
			return commands[i].run(argc - 1, argv + 1);
		}
	fprintf(stderr, "hwc: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
