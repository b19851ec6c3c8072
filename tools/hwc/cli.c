/* Command-line pieces the hwc subcommands share: parsing numbers, CPU
 * lists and repeated -e options, usage errors, exit statuses. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

int cli_usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "hwc %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n`hwc %s --help` lists the options.\n", cmd);
	return 2;
}

bool cli_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool cli_parse_cpus(const char *s, int **cpus, size_t *ncpus)
{
	const char *p = s;
	while (*p) {
		char *end;
		if (*p < '0' || *p > '9')
			return false;
		long a = strtol(p, &end, 10), b = a;
		p = end;
		if (*p == '-') {
			if (p[1] < '0' || p[1] > '9')
				return false;
			b = strtol(p + 1, &end, 10);
			p = end;
		}
		if (a > b || b >= 65536)
			return false;
		for (long c = a; c <= b; c++) {
			bool dup = false;
			for (size_t i = 0; i < *ncpus; i++)
				dup |= (*cpus)[i] == c;
			if (dup)
				continue;
			int *n = realloc(*cpus, (*ncpus + 1) * sizeof(*n));
			if (!n)
				return false;
			*cpus = n;
			(*cpus)[(*ncpus)++] = (int)c;
		}
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return false;
	}
	return *ncpus > 0;
}

bool cli_add_spec(const char ***specs, size_t *n, const char *spec)
{
	const char **s = realloc(*specs, (*n + 1) * sizeof(*s));
	if (!s)
		return false;
	*specs = s;
	s[(*n)++] = spec;
	return true;
}

int cli_other_option(const char *cmd, int opt, char **argv, struct cli_target *t)
{
	const char *arg = optarg;
	long v;
	switch (opt) {
	case 'p':
	case 't':
		if (!cli_parse_long(arg, 1, INT_MAX, &v))
			return cli_usage_error(cmd, opt == 'p' ? "invalid pid '%s' (expected a positive number)"
							: "invalid thread id '%s' (expected a positive number)",
					       arg);
		*(opt == 'p' ? &t->pid : &t->tid) = (pid_t)v;
		return -1;
	case 'a':
		t->all_cpus = true;
		return -1;
	case 'C':
		if (t->cpus)
			return cli_usage_error(cmd, "%s", "-C given twice; give one list, e.g. -C 0-3,6");
		if (!cli_parse_cpus(arg, &t->cpus, &t->ncpus))
			return cli_usage_error(cmd, "malformed CPU list '%s' (expected e.g. 0-3,6)", arg);
		return -1;
	case 'i':
		t->no_inherit = true;
		return -1;
	case ':':
		return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
	}
	return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

int cli_target_check(const char *cmd, const struct cli_target *t, const char *verb,
		     const char *nothing, const char *noun)
{
	char msg[256];
	bool system = t->all_cpus || t->cpus;
	if (t->pid && t->tid)
		return cli_usage_error(cmd, "%s", "give either -p or -t, not both");
	if ((t->pid || t->tid) && system) {
		snprintf(msg, sizeof(msg), "-p and -t %s tasks; they cannot be combined with -a or -C",
			 verb);
		return cli_usage_error(cmd, "%s", msg);
	}
	if ((t->pid || t->tid) && t->argv) {
		snprintf(msg, sizeof(msg), "unexpected command '%%s': -p and -t %s a running task", verb);
		return cli_usage_error(cmd, msg, t->argv[0]);
	}
	if (!t->argv && !t->pid && !t->tid && !system) {
		snprintf(msg, sizeof(msg), "nothing to %s: give a command, -p PID, -t TID, -a or -C",
			 nothing);
		return cli_usage_error(cmd, "%s", msg);
	}
	if (t->no_inherit && system) {
		snprintf(msg, sizeof(msg), "--no-inherit applies to tasks, not to system-wide %s", noun);
		return cli_usage_error(cmd, "%s", msg);
	}
	return -1;
}

void cli_target_of(const struct cli_target *t, struct hwc_target *out)
{
	*out = (struct hwc_target){.flags = t->no_inherit ? HWC_NO_INHERIT : 0};
	if (t->all_cpus || t->cpus) {
		out->kind = HWC_TARGET_CPUS;
		out->cpus = t->cpus;
		out->ncpus = t->ncpus;
		out->argv = t->argv;
	} else if (t->pid) {
		out->kind = HWC_TARGET_PROCESS;
		out->pid = t->pid;
	} else if (t->tid) {
		out->kind = HWC_TARGET_THREAD;
		out->pid = t->tid;
	} else {
		out->kind = HWC_TARGET_COMMAND;
		out->argv = t->argv;
	}
}

int cli_exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
