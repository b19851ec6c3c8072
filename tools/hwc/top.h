/* hwc top: what the refresh loop and screen (top.c) share with the two
 * ways of watching, sampling (top_sample.c) and counting (top_count.c). */
#ifndef HWC_TOP_H
#define HWC_TOP_H

#include "cli.h"

struct rp_report;

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct top_opts {
	const char *prog;   /* the subcommand, for messages: "top", or "serve" */
	const char **specs; /* -e */
	size_t nspecs;
	uint64_t freq;      /* -F */
	bool callgraph;     /* -g */
	bool count;         /* --count */
	bool by_cgroup;     /* --by cgroup: a row per cgroup (of t.cgroup's tree) */
	bool batch;         /* --batch */
	bool no_demangle;   /* --no-demangle */
	long iterations;    /* -n: refreshes before exiting, 0 for no limit */
	double delay;       /* -d: seconds between refreshes */
	long rows;          /* --rows: at most this many rows, 0 for all, -1 unset */
	struct cli_target t;
	bool system;        /* every CPU (or -C): no task, perhaps a command */
};

/* What one refresh shows: header lines, the line of column titles, rows. */
struct top_frame {
	char **lines;
	size_t n, cap;
	size_t titles; /* index of the column titles */
};

void top_frame_add(struct top_frame *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Mark the line added next as the column titles. */
void top_frame_titles(struct top_frame *f);
void top_frame_clear(struct top_frame *f);

/* The refresh being made. */
struct top_tick {
	long n;         /* 1 for the first */
	double seconds; /* since the previous refresh (or hwc top's start) */
	bool last;      /* cut short: the target ended or a signal came */
	double startup; /* the first: seconds of it spent starting up */
	double late;    /* seconds after the refresh was due */
	double busy;    /* seconds of the view's work after the refresh was due */
};

/* A way of watching.  Each function gets the STATE its open function set. */
struct top_view {
	void *state;
	/* One line saying what is watched: "cpu-clock at 4000 Hz, every CPU (2)". */
	char what[512];
	/* Wait up to MS milliseconds (0: not at all) for data, then take it in,
	 * starting no work after UNTIL (top_now()) that can wait for the next
	 * refresh.  Returns the seconds of work done after UNTIL. */
	double (*wait)(void *state, int ms, uint64_t until);
	/* Describe the interval that just ended into F (after the header line
	 * the loop adds), then start the next. */
	void (*fill)(void *state, const struct top_tick *tick, struct top_frame *f);
	/* True once the target is gone, with what happened in MSG; *STATUS is
	 * the wait(2) status of a command that ended, else -1. */
	bool (*ended)(void *state, int *status, char *msg, size_t size);
	void (*close)(void *state);
};

/* Open a view for O into V.  Returns 0, or the exit status after telling
 * why on stderr (1: an error, 127: the command cannot be executed). */
int top_sample_open(const struct top_opts *o, struct top_view *v);
int top_count_open(const struct top_opts *o, struct top_view *v);
/* The samples a sampling view (top_sample_open) took in since its last
 * fill, aggregated; *NOTE: the event fallback, or "".  hwc serve's
 * profiles read them whole. */
struct rp_report *top_sample_profile(void *state, const char **note);

/* "every CPU (2)", "CPUs 0-1", "process 1234 (name)", "thread 1234",
 * "command ls": what T names, for the header. */
void top_describe_target(const struct top_opts *o, pid_t pid, char *buf, size_t size);

/* What the end of the target PID says on stderr: the command's exit
 * (STATUS from wait(2)), or the process or thread gone. */
/* The notes on TICK's timing that follow a view's refresh line: how much
 * of the first refresh was starting up, and why a refresh came late (WORK
 * names the view's work after the refresh was due: "symbolizing samples"). */
void top_tick_notes(const struct top_tick *tick, const char *work, struct top_frame *f);

void top_end_message(const struct top_opts *o, pid_t pid, int status, char *msg, size_t size);

/* The name of task TID of process PID (its comm); false and "?" when it
 * is gone. */
bool top_comm(pid_t pid, pid_t tid, char *buf, size_t size);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t top_now(void);

#endif
