/* Command-line pieces the hwc subcommands share: parsing numbers, CPU
 * lists and repeated -e options, usage errors, exit statuses. */
#include "cli.h"
#include "num.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int cli_usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "hwc %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n`hwc %s --help` lists the options.\n", cmd);
	return 2;
}

bool cli_parse_long(const char *s, long min, long max, long *out)
{
	long long v;
	if (num_llong(s, 10, min, max, &v) != NUM_OK)
		return false;
	*out = (long)v;
	return true;
}

bool cli_parse_double(const char *s, double min, double max, double *out)
{
	return num_double(s, min, max, out) == NUM_OK;
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
			return cli_usage_error(cmd, opt == 'p' ? "invalid pid '%s' for -p (expected 1 to "
								 "2147483647)"
							: "invalid thread id '%s' for -t (expected 1 to "
							  "2147483647)",
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
			return cli_usage_error(cmd, "malformed CPU list '%s' for -C (expected CPUs from 0 "
						    "to 65535, e.g. 0-3,6)",
					       arg);
		return -1;
	case 'i':
		t->no_inherit = true;
		return -1;
	case 'G':
		if (t->cgroup)
			return cli_usage_error(cmd, "%s", "--cgroup given twice: give one cgroup (the "
							  "cgroups below it are included)");
		t->cgroup = arg;
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
	bool system = t->all_cpus || t->cpus || t->cgroup;
	if (t->pid && t->tid)
		return cli_usage_error(cmd, "%s", "give either -p or -t, not both");
	if ((t->pid || t->tid) && t->cgroup) {
		snprintf(msg, sizeof(msg), "--cgroup %ss a cgroup on every CPU; it cannot be combined "
					   "with -p or -t", verb);
		return cli_usage_error(cmd, "%s", msg);
	}
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
	if (t->all_cpus || t->cpus || t->cgroup) {
		out->kind = t->cgroup ? HWC_TARGET_CGROUP : HWC_TARGET_CPUS;
		out->cgroup = t->cgroup;
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

int cli_resolve(const char *cmd, hwc_evlist **out, const char *const *specs, size_t n)
{
	if (hwc_evlist_new(out)) {
		fprintf(stderr, "hwc %s: out of memory\n", cmd);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int err = hwc_evlist_add(*out, specs[i]);
		if (err) {
			fprintf(stderr, "hwc %s: %s\n", cmd, hwc_errdetail());
			return err;
		}
	}
	return 0;
}

static bool missing_hardware(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV;
}

int cli_open_sampler(const char *cmd, const char *const *specs, size_t n, const struct hwc_target *t,
		     const struct hwc_sampler_opts *opts, hwc_sampler **s, char *note, size_t size)
{
	static const char *const cycles[] = {"cycles"}, *const clock[] = {"cpu-clock"};
	bool defaulted = n == 0;
	hwc_evlist *list = NULL;
	note[0] = '\0';
	int err = cli_resolve(cmd, &list, defaulted ? cycles : specs, defaulted ? 1 : n);
	if (!err) {
		err = hwc_sampler_open(s, list, t, opts);
		if (err && defaulted && missing_hardware(err)) {
			snprintf(note, size, "sampling cpu-clock instead of cycles: %s", hwc_errdetail());
			hwc_evlist_free(list);
			err = cli_resolve(cmd, &list, clock, 1);
			if (!err)
				err = hwc_sampler_open(s, list, t, opts);
		}
		if (err)
			fprintf(stderr, "hwc %s: %s\n", cmd, hwc_errdetail());
	}
	hwc_evlist_free(list);
	return err;
}

void cli_raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

volatile sig_atomic_t cli_stop_signal;

static void on_stop_signal(int sig)
{
	cli_stop_signal = sig;
}

void cli_catch_stop_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa = {0}, old;
		sigaction(sigs[i], NULL, &old);
		if (sigs[i] == SIGHUP && old.sa_handler == SIG_IGN)
			continue;
		sa.sa_handler = on_stop_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

const char *cli_default_recording(const char *cmd, bool say_which)
{
	struct stat st;
	/* In a pipeline (perf record -o - | hwc report), the stream, as perf. */
	if (fstat(STDIN_FILENO, &st) == 0 && S_ISFIFO(st.st_mode))
		return "-";
	bool hwc = lstat("hwc.data", &st) == 0, perf = lstat("perf.data", &st) == 0;
	if (!hwc && !perf) {
		fprintf(stderr, "%s: no hwc.data or perf.data here: record one with "
				"`hwc record -- CMD` or name a file\n",
			cmd);
		return NULL;
	}
	const char *input = hwc ? "hwc.data" : "perf.data";
	if (hwc && perf)
		fprintf(stderr, "%s: reading hwc.data (perf.data is here too: name it to read it)\n", cmd);
	else if (say_which)
		fprintf(stderr, "%s: reading %s\n", cmd, input);
	return input;
}
