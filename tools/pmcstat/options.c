/* pmcstat's options: its usage, and the parsers of the option arguments
 * that take more than a number (-c, -l and -w, -f). */
#include "pmcstat.h"

#include "num.h"

#include <err.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

static const char usage_text[] =
	"usage: pmcstat [options] [commandline]\n"
	"\t Measure process and/or system performance using hardware\n"
	"\t performance monitoring counters.\n"
	"\t Options include:\n"
	"\t -A\t\t show the sampled address, not its function (-T)\n"
	"\t -C\t\t (toggle) show cumulative counts\n"
	"\t -D path\t create profiles in directory \"path\"\n"
	"\t -E\t\t (toggle) show counts at process exit\n"
	"\t -F file\t write a system-wide callgraph (Kcachegrind format) to \"file\"\n"
	"\t -G file\t write a system-wide callgraph to \"file\"\n"
	"\t -I\t\t show the sampled function+offset (-T)\n"
	"\t -L\t\t list all counters available on this host\n"
	"\t -M file\t print executable/gmon file map to \"file\"\n"
	"\t -N\t\t (toggle) capture callchains\n"
	"\t -O file\t send log output to \"file\"\n"
	"\t -P spec\t allocate a process-private sampling PMC\n"
	"\t -R file\t read events from \"file\"\n"
	"\t -S spec\t allocate a system-wide sampling PMC\n"
	"\t -T\t\t start in top mode\n"
	"\t -U\t\t (toggle) merged user kernel stack capture\n"
	"\t -W\t\t (toggle) show counts per context switch\n"
	"\t -a file\t print sampled PCs and callgraph to \"file\"\n"
	"\t -c cpu-list\t set cpus for subsequent system-wide PMCs\n"
	"\t -d\t\t (toggle) track descendants\n"
	"\t -e\t\t use wide history counter for gprof(1) output\n"
	"\t -f spec\t pass \"spec\" as plugin option\n"
	"\t -g\t\t produce gprof(1) compatible profiles\n"
	"\t -i lwp\t\t filter on thread id \"lwp\" in post-processing\n"
	"\t -k dir\t\t no effect (kernel symbols come from /proc/kallsyms)\n"
	"\t -l secs\t set duration time\n"
	"\t -m file\t print sampled PCs to \"file\"\n"
	"\t -n rate\t set sampling rate\n"
	"\t -o file\t send print output to \"file\"\n"
	"\t -p spec\t allocate a process-private counting PMC\n"
	"\t -q\t\t suppress verbosity\n"
	"\t -r fsroot\t specify FS root directory\n"
	"\t -s spec\t allocate a system-wide counting PMC\n"
	"\t -t process-spec attach to running processes matching \"process-spec\"\n"
	"\t -u spec \t provide short description of counters matching spec\n"
	"\t -v\t\t increase verbosity\n"
	"\t -w secs\t set printing time interval\n"
	"\t -z depth\t limit callchain display depth\n"
	"See pmcstat(8).\n";

void pmcstat_usage(void)
{
	fputs(usage_text, stderr);
	exit(EX_USAGE);
}

/* -c: "*" or a comma-separated list of CPU numbers. */
void pmcstat_parse_cpus(const char *spec, bool *mask, int ncpu)
{
	memset(mask, 0, MAX_CPUS * sizeof(*mask));
	if (strcmp(spec, "*") == 0) {
		for (int c = 0; c < ncpu; c++)
			mask[c] = true;
		return;
	}
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", spec);
	int max = (ncpu < MAX_CPUS ? ncpu : MAX_CPUS) - 1;
	bool any = false;
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		long long c;
		if (num_llong(t, 0, 0, max, &c) != NUM_OK)
			errx(EX_USAGE, "ERROR: Illegal CPU \"%s\": -c takes CPUs from 0 to %d, or *.", t,
			     max);
		mask[c] = any = true;
	}
	if (!any)
		errx(EX_USAGE, "ERROR: Illegal CPU list \"%s\": -c takes CPUs from 0 to %d, or *.",
		     spec, max);
}

/* The longest -l or -w: a year. */
#define MAX_SECONDS 31536000.0

double pmcstat_parse_secs(const char *s, const char *what, char opt)
{
	double v;
	if (num_double(s, 0, MAX_SECONDS, &v) != NUM_OK || !(v > 0))
		errx(EX_USAGE, "ERROR: Illegal %s value \"%s\" (-%c takes seconds, above 0 and up "
			       "to %.0f).",
		     what, s, opt, MAX_SECONDS);
	return v;
}

/* -f: a plugin option, as FreeBSD's: threshold=PERCENT (top mode's cut)
 * for every plugin, skiplink=0|1 for the calltree (-F). */
void pmcstat_plugin_option(const char *opt, bool calltree)
{
	if (strncmp(opt, "threshold=", 10) == 0) {
		double t;
		if (num_double(opt + 10, 0, 100, &t) != NUM_OK)
			errx(EX_USAGE, "ERROR: Illegal threshold \"%s\" (-f threshold= takes a "
				       "percentage from 0 to 100).",
			     opt + 10);
		pmcstat_opts.threshold = t;
	} else if (calltree && (strcmp(opt, "skiplink=0") == 0 || strcmp(opt, "skiplink=1") == 0)) {
		warnx("WARNING: -f %s has no effect: it sets the calltree's view of top mode, which "
		      "this pmcstat does not have (pmcstat(8), LINUX).",
		      opt);
	} else {
		errx(EX_USAGE, "ERROR: Unknown plugin option \"%s\" (-f takes threshold=PERCENT, and "
			       "skiplink=0|1 after -F).",
		     opt);
	}
}

