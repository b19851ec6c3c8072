/* Command-line pieces the hwc subcommands share. */
#ifndef HWC_CLI_H
#define HWC_CLI_H

#include <hwc/hwc.h>
#include <hwc/sample.h>

#include <signal.h>

#include <stdbool.h>
#include <stddef.h>

/* Print "hwc CMD: " FMT (with ARG) and where the options are listed, on
 * stderr; returns 2, the exit status of bad usage. */
int cli_usage_error(const char *cmd, const char *fmt, const char *arg);

/* A decimal number from MIN to MAX, the whole of S (tools/common/num.h). */
bool cli_parse_long(const char *s, long min, long max, long *out);
/* A finite decimal number from MIN to MAX: no NaN, no infinity. */
bool cli_parse_double(const char *s, double min, double max, double *out);

/* Append the CPUs of a list like "0-3,6" to *CPUS (each once, in the order
 * given); false when S is malformed or names none. */
bool cli_parse_cpus(const char *s, int **cpus, size_t *ncpus);

/* Append SPEC to the array *SPECS of *N strings; false when out of memory. */
bool cli_add_spec(const char ***specs, size_t *n, const char *spec);

/* The exit status a shell gives for wait(2) status STATUS: the code, or
 * 128 + the signal that killed it. */
int cli_exit_status(int status);

/* The options that choose what to measure: -p, -t, -a, -C, -i (no
 * inherit) and the command. */
struct cli_target {
	pid_t pid, tid;
	bool all_cpus, no_inherit;
	int *cpus; /* -C */
	size_t ncpus;
	char **argv; /* the command, or NULL */
	const char *cgroup; /* --cgroup: only its tasks, on every CPU (or -C's) */
};

/* Their getopt_long entries and letters. */
#define CLI_TARGET_LONGOPTS                                                                  \
	{"pid", required_argument, NULL, 'p'}, {"tid", required_argument, NULL, 't'},         \
	{"all-cpus", no_argument, NULL, 'a'}, {"cpu", required_argument, NULL, 'C'},          \
	{"no-inherit", no_argument, NULL, 'i'}, {"cgroup", required_argument, NULL, 'G'}
#define CLI_TARGET_SHORTOPTS "p:t:aC:iG:"

/* What getopt_long returned that the subcommand does not handle itself: a
 * target option (with optarg), a missing value (':') or an unknown option.
 * Returns -1 to go on, or the exit status of a usage error (reported). */
int cli_other_option(const char *cmd, int opt, char **argv, struct cli_target *t);

/* Check the target options together once all are parsed: -1, or the exit
 * status of a usage error.  The messages say what CMD does with tasks
 * (VERB: "count"), what it would have nothing to do (NOTHING: "count") and
 * what it does system-wide (NOUN: "counting"). */
int cli_target_check(const char *cmd, const struct cli_target *t, const char *verb,
		     const char *nothing, const char *noun);

/* The libhwc target they describe (a CPUS target keeps the command). */
void cli_target_of(const struct cli_target *t, struct hwc_target *out);

/* Resolve the event specs SPECS[N] into a new list *OUT (freed by the
 * caller, even on error).  Errors are reported as "hwc CMD: detail". */
int cli_resolve(const char *cmd, hwc_evlist **out, const char *const *specs, size_t n);

/* Open a sampler of SPECS[N] on T.  With no specs: cycles, or cpu-clock
 * when the machine cannot sample cycles; NOTE (SIZE bytes) then says so,
 * else it is "".  Errors are reported as "hwc CMD: detail". */
int cli_open_sampler(const char *cmd, const char *const *specs, size_t n, const struct hwc_target *t,
		     const struct hwc_sampler_opts *opts, hwc_sampler **s, char *note, size_t size);

/* The recording to read when none is named: hwc record's default output
 * hwc.data, else perf record's perf.data (NULL after saying neither is
 * here).  When both are here, or when SAY_WHICH, names it on stderr. */
const char *cli_default_recording(const char *cmd, bool say_which);

/* One descriptor per event, thread and CPU: take all the limit allows. */
void cli_raise_fd_limit(void);

/* SIGINT, SIGTERM and SIGHUP set cli_stop_signal, and interrupt waits (no
 * SA_RESTART).  SIGINT and SIGTERM are caught even when ignored, as a shell
 * ignores SIGINT for `hwc record -a &`, which is then stopped with kill
 * -INT; an ignored SIGHUP (nohup) stays ignored. */
extern volatile sig_atomic_t cli_stop_signal;
void cli_catch_stop_signals(void);

#endif
