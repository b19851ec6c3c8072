/* Shared by cputrack and cpustat: -c event specifications, groups of sets
 * cycled per sample, the -h listing, and timestamps.  libcpc only. */
#ifndef CPUCMDS_H
#define CPUCMDS_H

#include <libcpc.h>
#include <stdbool.h>
#include <stdio.h>

/* The most requests (columns) one -c specification may name. */
#define CPUCMDS_MAX_REQS 32

/* The title of the -t column: cpc_buf_tick() counts TSC cycles on x86. */
#define CPUCMDS_TICK_NAME "tsc"

/* Error reporting of the tools: "PROGRAM: message", "PROGRAM: FN: message"
 * in debug mode (-D).  cpucmds_errfn is a cpc_errhndlr_t. */
extern const char *cpucmds_program;
extern int cpucmds_debug;
void cpucmds_errfn(const char *fn, int subcode, const char *fmt, va_list ap);
void cpucmds_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A tool's start: its name for messages (from ARGV0) and a libcpc handle
 * that reports through cpucmds_errfn.  NULL after "PROGRAM: CANNOT - why",
 * CANNOT in the tool's own words. */
cpc_t *cpucmds_open(const char *argv0, const char *cannot);

/* One -c specification: its set and the buffers a tool samples into. */
struct cmdset {
	cpc_set_t *set;
	char *name;   /* the specification as written */
	char *header; /* column titles: "     pic0      pic1 " */
	int nreqs;
	bool sysonly; /* no request counts user mode */
	cpc_buf_t *data1, *data2, *scratch;
};

/* The sets of all -c options, cycled through one per sample. */
struct setgrp {
	cpc_t *cpc;
	struct cmdset *sets;
	int nsets;
	int current;
};

struct setgrp *setgrp_new(cpc_t *cpc);
/* Parse SPEC ([picn=]event[,attr[n][=val]][,...]) into a new set.  0, or -1
 * after printing why. */
int setgrp_add(struct setgrp *g, const char *spec);
/* The same specifications in new sets, with copies of the buffers. */
struct setgrp *setgrp_clone(const struct setgrp *g);
void setgrp_free(struct setgrp *g);
struct cmdset *setgrp_current(struct setgrp *g);
struct cmdset *setgrp_next(struct setgrp *g); /* advance, cyclically */
void setgrp_reset(struct setgrp *g);          /* back to the first set */
/* Sample G's current set into its scratch buffer: the counts since the
 * previous sample with one set (data1 is the sample, data2 the previous
 * one), since the bind when sets are cycled (data1 adds them up to the
 * set's total).  0, or -1 with errno from cpc_set_sample(). */
int setgrp_sample(struct setgrp *g);
/* ACC's data1 += G's data1, set by set. */
void setgrp_accum(struct setgrp *acc, const struct setgrp *g);
bool setgrp_has_sysonly(const struct setgrp *g);

/* The -h listing: interface, syntax, events, attributes, reference. */
void cpucmds_capabilities(cpc_t *cpc, FILE *fp);
/* -h: the tool's USAGE, then the listing, on stdout. */
void cpucmds_help(cpc_t *cpc, void (*usage)(FILE *fp));

/* Seconds since cpucmds_zerotime() for an hrtime (0: now). */
void cpucmds_zerotime(void);
double cpucmds_timestamp(hrtime_t hrt);
hrtime_t cpucmds_hrtime(void);

/* Parse a decimal number of seconds from 0 to CPUCMDS_MAX_SECONDS ("1",
 * "0.25") into milliseconds; -1 when S is not one. */
#define CPUCMDS_MAX_SECONDS 1000000
long cpucmds_parse_seconds(const char *s);

#endif
