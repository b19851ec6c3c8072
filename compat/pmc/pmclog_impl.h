/* pmclog(3)'s reader: what its first pass and interface (pmclog.c) and
 * its second pass (pmclog_records.c) share; never installed. */
#ifndef PMCLOG_IMPL_H
#define PMCLOG_IMPL_H

#include "pmc_impl.h"

#include <hwc/perfdata.h>
#include <limits.h>

/* A hash table of (a, b) -> value; keys are never removed. */
struct kv {
	uint64_t a, b, v;
	bool used;
};
struct table {
	struct kv *e;
	size_t n, cap;
};

struct pmcinfo {
	pmc_id_t id;
	uint32_t event, flags, mode;
	uint64_t rate, divisor;
	char name[PMC_NAME_MAX];
	bool synthesized; /* an event of a file libpmc did not write */
};

/* What the maps of a file need from its program headers. */
struct elf {
	char *path;
	bool ok;          /* read: an ELF file of this machine's class */
	bool dyn;         /* ET_DYN */
	bool interp;      /* PT_INTERP */
	uint64_t xvaddr;  /* pmcstat's pi_vaddr: see the header comment */
	size_t nload;
	struct {
		uint64_t vaddr, off, filesz;
	} load[16];
};

/* An exec whose PROCEXEC waits for the executable's map, then for the
 * interpreter's. */
struct exec {
	uint32_t pid;
	bool have_exe;
	uint64_t dynaddr;
	char exe[PATH_MAX];
};

struct parser {
	int fd;                   /* PMCLOG_FD_NONE: fed data */
	uint8_t *buf;             /* fed data, or what a pipe gave */
	size_t len, cap;
	bool fd_eof;
	void *map;                /* a regular file, mapped */
	size_t map_len;
	hwc_perfdata *f;
	size_t delivered;         /* records returned (pl_count) */
	uint64_t fail_offset;     /* pl_offset when no record is returned */
	size_t made;              /* records made in this pass */
	/* from the first pass */
	size_t nattrs;
	const struct hwc_perfdata_attr **attrs;
	struct pmcinfo **of_attr; /* [attr]: its PMC, or NULL */
	struct pmcinfo *pmcs;
	size_t npmcs;
	uint32_t cputype;
	uint64_t tsc_hz;
	bool have_clock;
	uint64_t mono_ref, tod_ref;
	struct table exit_sums;   /* (pid, pmcid) -> count */
	/* the second pass */
	bool started, ended, closed;
	struct table exited;      /* pid: its SYSEXIT came */
	struct table exit_done;   /* (pid, pmcid): its PROCEXIT came */
	uint64_t resume;          /* a stream: the offset of the next record to step */
	struct table seen;        /* dedupe keys of side-band records */
	struct table csw;         /* (tid << 16 | cpu, id) -> last value */
	struct exec *execs;       /* execs waiting for their maps */
	size_t nexecs, cap_execs;
	struct elf *elfs;         /* program headers of the mapped files */
	size_t nelfs, cap_elfs;
	size_t last_attr;
	struct pmclog_ev *q;      /* made, not yet returned */
	size_t qhead, qlen, qcap;
};


/* The entry of (A, B) in T, added with value 0 when missing (ADD; *FRESH:
 * was it); NULL without memory, or when missing and not ADD. */
struct kv *pmclog__lookup(struct table *t, uint64_t a, uint64_t b, bool add, bool *fresh);
/* Add (A, B) once: true the first time. */
bool pmclog__first_time(struct table *t, uint64_t a, uint64_t b);
/* A hash of A and B. */
uint64_t pmclog__mix(uint64_t a, uint64_t b);

/* libpmc's user records (pmc_writelog()'s and its own). */
bool pmclog__is_user_event(const struct hwc_perfdata_attr *a);
/* The leader of a PMC_F_LOG_PROCCSW group. */
bool pmclog__is_switch_leader(const struct hwc_perfdata_attr *a);
/* The PMC of event A, or NULL. */
struct pmcinfo *pmclog__pmc_of(struct parser *p, const struct hwc_perfdata_attr *a);
struct pmcinfo *pmclog__find_pmc(struct parser *p, pmc_id_t id);
/* libpmc's record in a user record's data (its text in *TEXT), or NULL. */
const struct pmc__ctl *pmclog__control_of(const struct hwc_sample *s, const char **text);

/* pmclog_records.c: turn the next perf record into pmclog records: 1, 0
 * at the end. */
int pmclog__step(struct parser *p);

#endif
