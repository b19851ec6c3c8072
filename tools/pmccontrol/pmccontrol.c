/* pmccontrol(8): list the PMC classes and their events (-L), the rows and
 * their state (-l), the statistics (-s), and enable or disable rows
 * (-c, -e, -d), as FreeBSD's pmccontrol does, on libpmc. */
#include "num.h"
#include "out.h"
#include "pmc_err.h"

#include <err.h>
#include <errno.h>
#include <pmc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

enum command { USAGE, LIST_EVENTS, LIST_STATE, ENABLE_DISABLE, STATISTICS };

#define ALL (-1)

struct op {
	int cpu, pmc;
	bool disable;
};

static const char usage_message[] = "Usage:\n"
				    "       pmccontrol -L\n"
				    "       pmccontrol -l\n"
				    "       pmccontrol -s\n"
				    "       pmccontrol [-e pmc | -d pmc | -c cpu] ...";

static int list_state(void)
{
	const struct pmc_cpuinfo *ci;
	if (pmc_cpuinfo(&ci) != 0)
		pmc_err(EX_OSERR, "Unable to determine CPU information");
	printf("%d %s CPUs present, with %d PMCs per CPU\n", ci->pm_ncpu,
	       pmc_name_of_cputype(ci->pm_cputype), ci->pm_npmc);
	for (uint32_t cpu = 0, c = 0; cpu < ci->pm_ncpu; cpu++) {
		struct pmc_pmcinfo *pi;
		if (pmc_pmcinfo((int)cpu, &pi) < 0) {
			if (errno == ENXIO)
				continue; /* offline */
			pmc_err(EX_OSERR, "Unable to get PMC status for CPU %u", cpu);
		}
		printf("#CPU %u:\n", c++);
		printf("#N  NAME             CLASS  STATE    ROW-DISP\n");
		for (uint32_t n = 0; n < ci->pm_npmc; n++) {
			const struct pmc_info *pd = &pi->pm_pmcs[n];
			printf(" %-2u %-16s %-6s %-8s %-10s", n, pd->pm_name,
			       pmc_name_of_class(pd->pm_class), pd->pm_enabled ? "ENABLED" : "DISABLED",
			       pmc_name_of_disposition(pd->pm_rowdisp));
			if (pd->pm_ownerpid != -1) {
				const char *ev = pmc_name_of_event(pd->pm_event);
				printf(" (pid %d)", (int)pd->pm_ownerpid);
				printf(" %-32s", ev ? ev : "?");
				if (PMC_IS_SAMPLING_MODE(pd->pm_mode))
					printf(" (reload count %ju)", (uintmax_t)pd->pm_reloadcount);
			}
			printf("\n");
		}
		free(pi);
	}
	return 0;
}

static int list_events(void)
{
	const struct pmc_cpuinfo *ci;
	if (pmc_cpuinfo(&ci) != 0)
		pmc_err(EX_OSERR, "Unable to determine CPU information");
	for (uint32_t i = 0; i < ci->pm_nclass; i++) {
		enum pmc_class c = ci->pm_classes[i].pm_class;
		const char **names;
		int n;
		printf("%s\n", pmc_name_of_class(c));
		if (pmc_event_names_of_class(c, &names, &n) < 0)
			pmc_err(EX_OSERR, "ERROR: Cannot find information for event class \"%s\"",
				pmc_name_of_class(c));
		for (int j = 0; j < n; j++)
			printf("\t%s\n", names[j]);
		free(names);
	}
	return 0;
}

static int statistics(void)
{
	struct pmc_driverstats gms;
	if (pmc_get_driver_stats(&gms) < 0)
		pmc_err(EX_OSERR, "ERROR: cannot retrieve driver statistics");
#define PRINT(N, V) printf("%-40s %u\n", (N), gms.pm_##V)
	PRINT("interrupts processed:", intr_processed);
	PRINT("non-PMC interrupts:", intr_ignored);
	PRINT("sampling stalls due to space shortages:", intr_bufferfull);
	PRINT("system calls:", syscalls);
	PRINT("system calls with errors:", syscall_errors);
	PRINT("buffer requests:", buffer_requests);
	PRINT("buffer requests failed:", buffer_requests_failed);
	PRINT("sampling log sweeps:", log_sweeps);
	return 0;
}

/* Apply the operations in order: later ones override earlier ones. */
static int enable_disable(const struct op *ops, size_t nops)
{
	int ncpu = pmc_ncpu();
	if (ncpu < 0)
		pmc_err(EX_OSERR, "Unable to determine the number of cpus");
	int npmc = 0;
	for (int c = 0; c < ncpu; c++) {
		int t = pmc_npmc(c);
		if (t < 0)
			pmc_err(EX_OSERR, "Unable to determine the number of PMCs in CPU %d", c);
		npmc = t > npmc ? t : npmc;
	}
	if (npmc == 0)
		errx(EX_CONFIG, "No PMCs found");
	for (size_t i = 0; i < nops; i++) {
		if (ops[i].cpu >= ncpu)
			errx(EX_DATAERR, "CPU id too large: \"%d\"", ops[i].cpu);
		if (ops[i].pmc >= npmc)
			errx(EX_DATAERR, "PMC id too large: \"%d\"", ops[i].pmc);
	}
	signed char *map = calloc((size_t)ncpu * (size_t)npmc, 1);
	if (!map)
		err(EX_SOFTWARE, "Out of memory");
	for (size_t i = 0; i < nops; i++)
		for (int c = 0; c < ncpu; c++)
			for (int p = 0; p < npmc; p++)
				if ((ops[i].cpu == ALL || ops[i].cpu == c) &&
				    (ops[i].pmc == ALL || ops[i].pmc == p))
					map[c * npmc + p] = ops[i].disable ? -1 : 1;
	for (int c = 0; c < ncpu; c++)
		for (int p = 0; p < npmc; p++) {
			signed char b = map[c * npmc + p];
			if ((b > 0 && pmc_enable(c, p) < 0) || (b < 0 && pmc_disable(c, p) < 0)) {
				int e = errno;
				free(map); /* else LeakSanitizer changes the exit status */
				errno = e;
				pmc_err(EX_OSERR, "%s of PMC %d on CPU %d failed",
					b > 0 ? "Enable" : "Disable", p, c);
			}
		}
	free(map);
	return 0;
}

/* The most CPUs and PMCs a row may name. */
#define MAX_ID (1 << 20)

static int number(const char *arg, const char *what, char opt)
{
	if (strcmp(arg, "*") == 0)
		return ALL;
	long long v;
	if (num_llong(arg, 0, 0, MAX_ID, &v) != NUM_OK)
		errx(EX_DATAERR, "\"%s\" is not a valid %s id (-%c takes 0 to %d, or *)", arg, what,
		     opt, MAX_ID);
	return (int)v;
}

int main(int argc, char **argv)
{
	enum command command = USAGE;
	bool error = false;
	int cpu = ALL, opt;
	struct op *ops = NULL;
	size_t nops = 0;
	out_init(NULL, EX_IOERR);
	/* As BSD getopt(3): options end at the first operand. */
	while ((opt = getopt(argc, argv, "+:c:d:e:lLs")) != -1) {
		switch (opt) {
		case 'L':
		case 'l':
		case 's':
			if (command != USAGE)
				error = true;
			command = opt == 'L' ? LIST_EVENTS : opt == 'l' ? LIST_STATE : STATISTICS;
			break;
		case 'c':
		case 'd':
		case 'e':
			if (command != USAGE && command != ENABLE_DISABLE) {
				error = true;
				break;
			}
			command = ENABLE_DISABLE;
			if (opt == 'c') {
				cpu = number(optarg, "CPU", 'c');
				break;
			}
			ops = realloc(ops, (nops + 1) * sizeof(*ops));
			if (!ops)
				err(EX_SOFTWARE, "Out of memory");
			ops[nops++] = (struct op){cpu, number(optarg, "PMC", (char)opt), opt == 'd'};
			break;
		case ':':
			errx(EX_USAGE, "Missing argument to option '-%c'", optopt);
		default:
			warnx("Unrecognized option \"-%c\"", optopt);
			errx(EX_USAGE, "%s", usage_message);
		}
	}
	if (command == USAGE || optind < argc)
		errx(EX_USAGE, "%s", usage_message);
	if (error)
		errx(EX_USAGE, "options -L, -l, -s and -c/-d/-e are used one kind at a time\n%s",
		     usage_message);
	if (pmc_init() < 0)
		pmc_err(EX_OSERR, "Initialization of the pmc(3) library failed");
	int rc = 0;
	switch (command) {
	case LIST_STATE: rc = list_state(); break;
	case LIST_EVENTS: rc = list_events(); break;
	case STATISTICS: rc = statistics(); break;
	case ENABLE_DISABLE:
		if (nops == 0)
			errx(EX_USAGE, "No PMCs specified to enable or disable");
		rc = enable_disable(ops, nops);
		break;
	case USAGE: break;
	}
	free(ops);
	if (out_close(stdout, NULL))
		return EX_IOERR;
	return rc;
}
