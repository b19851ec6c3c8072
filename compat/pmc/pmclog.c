/* pmclog(3): FreeBSD's records for what a perf.data log holds.  The file
 * is read whole (it must be complete: its header comes last) in two
 * passes (a stream from a pipe, perf's pipe mode, is read as it comes: the
 * first pass is made again over all of it each time more arrived, the
 * second goes on where it stopped): the first learns libpmc's records (which events are which PMC's)
 * and each process's counts at exit; the second turns each perf record
 * into the pmclog records it stands for, in file order:
 *
 *   SAMPLE with a call chain   CALLCHAIN      without one     PCSAMPLE
 *   SAMPLE of a context-switches group leader                 PROCCSW per member
 *   SAMPLE of hwc-user         USERDATA, or libpmc's PMCALLOCATE, PMCATTACH,
 *                              PMCDETACH, CLOSELOG
 *   COMM at exec               PROCEXEC once the executable's map (and, when
 *                              it names one, the program interpreter's) came:
 *                              those maps are the PROCEXEC's, as FreeBSD's
 *                              kernel maps them with no MAP_IN
 *   MMAP, MMAP2 (executable)   MAP_IN
 *   FORK of a process          PROCFORK
 *   EXIT of a process          PROCEXIT per PMC with counts (the sum of its
 *                              threads' READ records), then SYSEXIT
 *   LOST, LOST_SAMPLES         DROPNOTIFY
 *
 * INITIALIZE comes first.  Events of files libpmc did not write get PMC
 * ids of their own (row index 0x80 + the event's index).
 *
 * Addresses are FreeBSD 14's: PROCEXEC's pl_dynaddr is the executable's
 * load bias (0 for ET_EXEC), pl_baseaddr the interpreter's (or pl_dynaddr
 * without one); MAP_IN's pl_start is the load bias plus the page-aligned
 * address of the executable segment that starts in the file's first page
 * (what FreeBSD's kernel reports, and what pmcstat subtracts its pi_vaddr
 * from), or the bias alone when no executable segment does.  They are
 * computed from the program headers of the files the maps name. */
#include "pmc_impl.h"

#include <elf.h>
#include <fcntl.h>
#include <hwc/perfdata.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ small tables */

/* A hash table of (a, b) -> value; keys are never removed. */
struct kv {
	uint64_t a, b, v;
	bool used;
};
struct table {
	struct kv *e;
	size_t n, cap;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL + (a << 6));
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

/* The entry of (A, B), added with value 0 when missing; NULL without memory. */
static struct kv *lookup(struct table *t, uint64_t a, uint64_t b, bool add, bool *fresh)
{
	if (add && (t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct kv *e = calloc(cap, sizeof(*e));
		if (!e)
			return NULL;
		for (size_t i = 0; i < t->cap; i++)
			if (t->e[i].used) {
				size_t j = mix(t->e[i].a, t->e[i].b) & (cap - 1);
				while (e[j].used)
					j = (j + 1) & (cap - 1);
				e[j] = t->e[i];
			}
		free(t->e);
		t->e = e;
		t->cap = cap;
	}
	if (!t->cap)
		return NULL;
	size_t j = mix(a, b) & (t->cap - 1);
	while (t->e[j].used) {
		if (t->e[j].a == a && t->e[j].b == b) {
			if (fresh)
				*fresh = false;
			return &t->e[j];
		}
		j = (j + 1) & (t->cap - 1);
	}
	if (!add)
		return NULL;
	t->e[j] = (struct kv){a, b, 0, true};
	t->n++;
	if (fresh)
		*fresh = true;
	return &t->e[j];
}

/* Add (A, B) once: true the first time. */
static bool first_time(struct table *t, uint64_t a, uint64_t b)
{
	bool fresh = false;
	lookup(t, a, b, true, &fresh);
	return fresh;
}

static void table_free(struct table *t)
{
	free(t->e);
	*t = (struct table){0};
}

/* ------------------------------------------------------------ the parser */

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

static bool is_user_event(const struct hwc_perfdata_attr *a)
{
	return a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config == PERF_COUNT_SW_BPF_OUTPUT &&
	       (a->attr.sample_type & PERF_SAMPLE_RAW);
}

static bool is_switch_leader(const struct hwc_perfdata_attr *a)
{
	return a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config == PERF_COUNT_SW_CONTEXT_SWITCHES &&
	       (a->attr.sample_type & PERF_SAMPLE_READ);
}

static size_t attr_index(struct parser *p, const struct hwc_perfdata_attr *a)
{
	if (p->last_attr < p->nattrs && p->attrs[p->last_attr] == a)
		return p->last_attr;
	for (size_t i = 0; i < p->nattrs; i++)
		if (p->attrs[i] == a)
			return p->last_attr = i;
	return SIZE_MAX;
}

static struct pmcinfo *pmc_of(struct parser *p, const struct hwc_perfdata_attr *a)
{
	size_t i = a ? attr_index(p, a) : SIZE_MAX;
	return i < p->nattrs ? p->of_attr[i] : NULL;
}

static struct pmcinfo *find_pmc(struct parser *p, pmc_id_t id)
{
	for (size_t i = 0; i < p->npmcs; i++)
		if (p->pmcs[i].id == id)
			return &p->pmcs[i];
	return NULL;
}

/* libpmc's record in a user record's data, or NULL. */
static const struct pmc__ctl *control_of(const struct hwc_sample *s, const char **text)
{
	if (!s->raw || s->raw_size < sizeof(struct pmc__ctl) + 1 ||
	    memcmp(s->raw, PMC__CTL_MAGIC, 8) != 0)
		return NULL;
	static __thread struct pmc__ctl c;
	memcpy(&c, s->raw, sizeof(c));
	*text = (const char *)s->raw + sizeof(c);
	if (!memchr(*text, '\0', s->raw_size - sizeof(c)))
		return NULL;
	return &c;
}

static uint64_t record_time(const struct hwc_perfdata_record *r)
{
	if (!r->attr)
		return 0;
	if (r->hdr->type == PERF_RECORD_SAMPLE) {
		struct hwc_sample s;
		return hwc_sample_parse(r->hdr, &r->attr->attr, &s) == 0 ? s.time : 0;
	}
	struct hwc_sample_id id;
	return hwc_sample_id_parse(r->hdr, &r->attr->attr, &id) == 0 ? id.time : 0;
}

static struct timespec to_timespec(const struct parser *p, uint64_t mono)
{
	uint64_t ns = mono;
	if (p->have_clock && mono)
		ns = mono - p->mono_ref + p->tod_ref;
	return (struct timespec){(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};
}

/* ------------------------------------------------------------ the first pass */

static int add_pmc(struct parser *p, const struct pmcinfo *pi)
{
	struct pmcinfo *have = find_pmc(p, pi->id);
	if (have) {
		*have = *pi;
		return 0;
	}
	struct pmcinfo *v = realloc(p->pmcs, (p->npmcs + 1) * sizeof(*v));
	if (!v)
		return -1;
	/* of_attr points into the array: move the pointers along. */
	for (size_t i = 0; i < p->nattrs; i++)
		if (p->of_attr[i])
			p->of_attr[i] = v + (p->of_attr[i] - p->pmcs);
	p->pmcs = v;
	p->pmcs[p->npmcs++] = *pi;
	return 0;
}

/* Call FN for every record of the file, from the start: 0, or -1 when FN
 * or the file fails. */
static int each_record(struct parser *p,
		       int (*fn)(struct parser *p, const struct hwc_perfdata_record *r))
{
	struct hwc_perfdata_record r;
	int rc;
	hwc_perfdata_rewind(p->f);
	while ((rc = hwc_perfdata_next(p->f, &r)) > 0)
		if (fn(p, &r))
			return -1;
	return rc < 0 ? -1 : 0;
}

/* libpmc's records: the machine, the PMCs, which events are whose. */
static int learn_control(struct parser *p, const struct hwc_perfdata_record *r)
{
	if (r->hdr->type != PERF_RECORD_SAMPLE || !r->attr || !is_user_event(r->attr))
		return 0;
	struct hwc_sample s;
	const char *text;
	const struct pmc__ctl *c;
	if (hwc_sample_parse(r->hdr, &r->attr->attr, &s) || !(c = control_of(&s, &text)))
		return 0;
	if (c->kind == PMCLOG_TYPE_INITIALIZE) {
		p->cputype = c->event;
		p->tsc_hz = c->rate;
	} else if (c->kind == PMCLOG_TYPE_PMCALLOCATE) {
		struct pmcinfo pi = {c->pmcid, c->event, c->flags, c->mode,
				     c->rate, c->divisor ? c->divisor : 1, "", false};
		snprintf(pi.name, sizeof(pi.name), "%s", text);
		return add_pmc(p, &pi);
	} else if (c->kind == PMC__CTL_EVENTS) {
		struct pmcinfo *pi = find_pmc(p, c->pmcid);
		for (uint32_t i = 0; pi && i < c->count && c->first + i < p->nattrs; i++)
			p->of_attr[c->first + i] = pi;
	}
	return 0;
}

/* Events no libpmc record claims get PMCs of their own. */
static int synthesize_pmcs(struct parser *p)
{
	for (size_t i = 0; i < p->nattrs; i++) {
		const struct hwc_perfdata_attr *a = p->attrs[i];
		if (p->of_attr[i] || is_user_event(a) || is_switch_leader(a))
			continue;
		bool sampling = a->attr.sample_period || a->attr.freq;
		enum pmc_class cls = a->attr.type == PERF_TYPE_HARDWARE ||
						     a->attr.type == PERF_TYPE_HW_CACHE ||
						     a->attr.type == PERF_TYPE_RAW
					     ? PMC_CLASS_IAP
					     : PMC_CLASS_SOFT;
		struct pmcinfo pi = {
			.id = PMC_ID_MAKE_ID(PMC_CPU_ANY, sampling ? PMC_MODE_TS : PMC_MODE_TC, cls,
					     0x80 | (i & 0x7F)),
			.flags = a->attr.sample_type & PERF_SAMPLE_CALLCHAIN ? PMC_F_CALLCHAIN : 0,
			.mode = sampling ? PMC_MODE_TS : PMC_MODE_TC,
			.rate = a->attr.freq ? 0 : a->attr.sample_period,
			.divisor = 1,
			.synthesized = true,
		};
		snprintf(pi.name, sizeof(pi.name), "%s", a->name);
		pi.event = PMC_EV_LINUX_FIRST;
		if (add_pmc(p, &pi))
			return -1;
		p->of_attr[i] = find_pmc(p, pi.id);
	}
	return 0;
}

/* Each process's counts at exit: the sum of its threads' READ records. */
static int learn_exit_count(struct parser *p, const struct hwc_perfdata_record *r)
{
	struct pmcinfo *pi = r->hdr->type == PERF_RECORD_READ && r->hdr->size >= 24
				     ? pmc_of(p, r->attr)
				     : NULL;
	if (!pi)
		return 0;
	uint32_t pid;
	uint64_t value;
	memcpy(&pid, (const uint8_t *)r->hdr + 8, 4);
	memcpy(&value, (const uint8_t *)r->hdr + 16, 8);
	struct kv *e = lookup(&p->exit_sums, pid, pi->id, true, NULL);
	if (!e)
		return -1;
	e->v += value;
	return 0;
}

/* Forget the data and what the first pass learned from it. */
static void unload_data(struct parser *p)
{
	hwc_perfdata_close(p->f);
	p->f = NULL;
	if (p->map)
		munmap(p->map, p->map_len);
	p->map = NULL;
	free(p->attrs);
	free(p->of_attr);
	free(p->pmcs);
	p->attrs = NULL;
	p->of_attr = NULL;
	p->pmcs = NULL;
	p->npmcs = p->nattrs = 0;
	p->last_attr = 0;
	table_free(&p->exit_sums);
}

static void unload(struct parser *p)
{
	unload_data(p);
	table_free(&p->exited);
	table_free(&p->exit_done);
	p->resume = 0;
	table_free(&p->seen);
	table_free(&p->csw);
	p->nexecs = 0;
	for (size_t i = 0; i < p->nelfs; i++)
		free(p->elfs[i].path);
	p->nelfs = 0;
	p->qhead = p->qlen = 0;
	p->made = 0;
	p->started = p->ended = p->closed = false;
	p->cputype = PMC_CPU_GENERIC;
	p->tsc_hz = 0;
	p->have_clock = false;
}

/* What a log read from a pipe or device (not a regular file, which is
 * mapped) may hold in memory. */
#define PIPE_LOG_MAX ((size_t)1 << 30)

/* Is the data a stream (perf's pipe mode: what libpmc writes into a pipe),
 * readable record by record as it comes? */
static bool is_stream(const struct parser *p)
{
	uint64_t hsize;
	if (p->len < 16)
		return false;
	memcpy(&hsize, p->buf + 8, 8);
	return hsize == 16;
}

/* Read what a pipe has until its end, or, for a stream, what one read
 * gives (a blocking descriptor waits for it).  What is no perf.data file
 * (say /dev/zero) or would not fit is refused as soon as that shows.  0,
 * 1 when a non-blocking descriptor has nothing now, -1 with errno. */
static int slurp(struct parser *p)
{
	for (size_t start = p->len;;) {
		if (p->len >= 16 && p->len > start && is_stream(p))
			return 0; /* a stream is read as it comes */
		if (p->len >= 8 && memcmp(p->buf, "PERFILE2", 8) != 0) {
			errno = EINVAL; /* not a log: no need to read it to its end */
			return -1;
		}
		if (p->len >= PIPE_LOG_MAX) {
			errno = EFBIG;
			return -1;
		}
		if (!pmc__room(&p->buf, p->len, &p->cap, 1, 1 << 16))
			return -1;
		ssize_t n = read(p->fd, p->buf + p->len, p->cap - p->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 1 : -1;
		if (n == 0) {
			p->fd_eof = true;
			return 0;
		}
		p->len += (size_t)n;
	}
}

static int open_data(struct parser *p);

/* Open the data and make the first pass: 0, 1 when the data is not a
 * whole file yet, -1 with errno. */
static int load(struct parser *p)
{
	unload(p);
	return open_data(p);
}

/* Open the data and make the first pass: 0, 1 when the data is not a
 * whole file yet, -1 with errno. */
static int open_data(struct parser *p)
{
	int err;
	struct stat st;
	if (p->fd >= 0 && fstat(p->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		p->fd_eof = true; /* a file holds what it holds: no more comes by waiting */
		if (st.st_size == 0)
			return 1;
		p->map_len = (size_t)st.st_size;
		p->map = mmap(NULL, p->map_len, PROT_READ, MAP_SHARED, p->fd, 0);
		if (p->map == MAP_FAILED) {
			p->map = NULL;
			return -1;
		}
		err = hwc_perfdata_open_mem(&p->f, p->map, p->map_len);
	} else {
		if (p->fd >= 0 && !p->fd_eof && !is_stream(p)) {
			int r = slurp(p);
			if (r < 0)
				return -1;
			if (!p->fd_eof && !is_stream(p))
				return 1;
		}
		if (p->len < 8)
			return 1;
		err = hwc_perfdata_open_mem(&p->f, p->buf, p->len);
	}
	if (err) {
		p->f = NULL;
		/* Fed data that begins as a perf.data file, or a stream not at
		 * its end, may just be incomplete. */
		if ((p->fd == PMCLOG_FD_NONE || !p->fd_eof) && p->len >= 8 &&
		    memcmp(p->buf, "PERFILE2", 8) == 0)
			return 1;
		errno = -err == ENOTSUP ? EOPNOTSUPP : EINVAL;
		return -1;
	}
	p->nattrs = hwc_perfdata_nattrs(p->f);
	p->attrs = calloc(p->nattrs + 1, sizeof(*p->attrs));
	p->of_attr = calloc(p->nattrs + 1, sizeof(*p->of_attr));
	if (!p->attrs || !p->of_attr)
		return -1;
	for (size_t i = 0; i < p->nattrs; i++)
		p->attrs[i] = hwc_perfdata_attr(p->f, i);
	const void *clock;
	size_t clock_size;
	if (hwc_perfdata_feature(p->f, HWC_FEAT_CLOCK_DATA, &clock, &clock_size) == 0 &&
	    clock_size >= 24) {
		memcpy(&p->tod_ref, (const uint8_t *)clock + 8, 8);
		memcpy(&p->mono_ref, (const uint8_t *)clock + 16, 8);
		p->have_clock = true;
	}
	if (each_record(p, learn_control) || synthesize_pmcs(p) || each_record(p, learn_exit_count))
		return -1;
	hwc_perfdata_rewind(p->f);
	return 0;
}

/* ------------------------------------------------------------ the second pass */

static struct pmclog_ev *emit(struct parser *p, enum pmclog_type type, uint64_t offset,
			      uint64_t time, const struct perf_event_header *h)
{
	if (p->qhead + p->qlen == p->qcap && p->qhead) {
		memmove(p->q, p->q + p->qhead, p->qlen * sizeof(*p->q));
		p->qhead = 0;
	}
	if (!pmc__room(&p->q, p->qhead + p->qlen, &p->qcap, sizeof(*p->q), 8))
		return NULL;
	struct pmclog_ev *ev = &p->q[p->qhead + p->qlen++];
	memset(ev, 0, offsetof(struct pmclog_ev, pl_u));
	ev->pl_state = PMCLOG_OK;
	ev->pl_offset = (off_t)offset;
	ev->pl_ts = to_timespec(p, time);
	ev->pl_type = type;
	ev->pl_data = (void *)(uintptr_t)h;
	ev->pl_len = h ? h->size : 0;
	p->made++;
	return ev;
}

static void emit_allocate(struct parser *p, const struct pmcinfo *pi, uint64_t off, uint64_t t,
			  const struct perf_event_header *h)
{
	struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_PMCALLOCATE, off, t, h);
	if (ev)
		ev->pl_u.pl_a = (struct pmclog_ev_pmcallocate){pi->name, pi->rate, pi->event,
								pi->flags, pi->id};
}

static void emit_initialize(struct parser *p)
{
	struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_INITIALIZE, 0, 0, NULL);
	if (!ev)
		return;
	ev->pl_ts = p->have_clock ? to_timespec(p, p->mono_ref) : (struct timespec){0, 0};
	ev->pl_u.pl_i.pl_version = PMC_VERSION;
	ev->pl_u.pl_i.pl_arch = p->cputype;
	ev->pl_u.pl_i.pl_tsc_freq = p->tsc_hz;
	ev->pl_u.pl_i.pl_ts = ev->pl_ts;
	const char *cpuid = hwc_perfdata_string(p->f, HWC_FEAT_CPUID);
	snprintf(ev->pl_u.pl_i.pl_cpuid, sizeof(ev->pl_u.pl_i.pl_cpuid), "%s", cpuid ? cpuid : "");
	for (size_t i = 0; i < p->npmcs; i++)
		if (p->pmcs[i].synthesized)
			emit_allocate(p, &p->pmcs[i], 0, 0, NULL);
}

/* PROCEXIT of every PMC that counted process PID (ALL: of every process
 * not reported yet). */
static void emit_exits(struct parser *p, uint32_t pid, bool all, uint64_t off, uint64_t t,
		       const struct perf_event_header *h)
{
	for (size_t i = 0; i < p->exit_sums.cap; i++) {
		struct kv *e = &p->exit_sums.e[i];
		if (!e->used || (!all && e->a != pid) || !first_time(&p->exit_done, e->a, e->b))
			continue;
		const struct pmcinfo *pi = find_pmc(p, (pmc_id_t)e->b);
		struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_PROCEXIT, off, t, h);
		if (ev)
			ev->pl_u.pl_e = (struct pmclog_ev_procexit){(uint32_t)e->a, (pmc_id_t)e->b,
								    e->v / (pi ? pi->divisor : 1)};
	}
}

static void sample(struct parser *p, const struct hwc_perfdata_record *r)
{
	struct hwc_sample s;
	if (!r->attr || hwc_sample_parse(r->hdr, &r->attr->attr, &s))
		return;
	const struct perf_event_header *h = r->hdr;
	if (is_user_event(r->attr)) {
		const char *text;
		const struct pmc__ctl *c = control_of(&s, &text);
		if (!c) {
			struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_USERDATA, r->offset, s.time, h);
			if (ev) {
				memcpy(&ev->pl_u.pl_u.pl_userdata, s.raw,
				       s.raw_size < 4 ? s.raw_size : 4);
			}
			return;
		}
		struct pmcinfo *pi = find_pmc(p, c->pmcid);
		struct pmclog_ev *ev;
		switch (c->kind) {
		case PMCLOG_TYPE_PMCALLOCATE:
			if (pi)
				emit_allocate(p, pi, r->offset, s.time, h);
			break;
		case PMCLOG_TYPE_PMCATTACH:
			if ((ev = emit(p, PMCLOG_TYPE_PMCATTACH, r->offset, s.time, h))) {
				ev->pl_u.pl_t.pl_pmcid = c->pmcid;
				ev->pl_u.pl_t.pl_pid = c->pid;
				snprintf(ev->pl_u.pl_t.pl_pathname, sizeof(ev->pl_u.pl_t.pl_pathname),
					 "%s", text);
			}
			break;
		case PMCLOG_TYPE_PMCDETACH:
			if ((ev = emit(p, PMCLOG_TYPE_PMCDETACH, r->offset, s.time, h)))
				ev->pl_u.pl_d = (struct pmclog_ev_pmcdetach){c->pmcid, c->pid};
			break;
		case PMCLOG_TYPE_CLOSELOG:
			emit_exits(p, 0, true, r->offset, s.time, h);
			emit(p, PMCLOG_TYPE_CLOSELOG, r->offset, s.time, h);
			p->closed = true;
			break;
		default:
			break; /* INITIALIZE and EVENTS were the first pass's */
		}
		return;
	}
	if (is_switch_leader(r->attr)) {
		/* Values are the thread's own on this CPU, cumulative: the slice
		 * that ended is the difference from the last one. */
		for (uint32_t i = 0; s.values && i < s.nr_values; i++) {
			if (!(r->attr->attr.read_format & PERF_FORMAT_ID) || s.value_stride < 2)
				break;
			uint64_t id = s.values[i * s.value_stride + 1];
			const struct hwc_perfdata_attr *a = hwc_perfdata_attr_by_id(p->f, id);
			struct pmcinfo *pi = pmc_of(p, a);
			if (!pi || a == r->attr || is_switch_leader(a))
				continue;
			uint64_t v = s.values[i * s.value_stride];
			struct kv *last = lookup(&p->csw, (uint64_t)s.tid << 16 | (s.cpu & 0xFFFF), id,
						 true, NULL);
			uint64_t delta = last && v >= last->v ? v - last->v : v;
			if (last)
				last->v = v;
			struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_PROCCSW, r->offset, s.time, h);
			if (ev)
				ev->pl_u.pl_c = (struct pmclog_ev_proccsw){(pid_t)s.pid, (pid_t)s.tid,
									   pi->id, delta / pi->divisor};
		}
		return;
	}
	struct pmcinfo *pi = pmc_of(p, r->attr);
	if (!pi)
		return;
	bool user = (s.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
	if (!(s.sample_type & PERF_SAMPLE_CALLCHAIN)) {
		struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_PCSAMPLE, r->offset, s.time, h);
		if (ev)
			ev->pl_u.pl_s = (struct pmclog_ev_pcsample){(uintfptr_t)s.ip, (pid_t)s.pid,
								    (pid_t)s.tid, pi->id, 0, user};
		return;
	}
	struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_CALLCHAIN, r->offset, s.time, h);
	if (!ev)
		return;
	struct pmclog_ev_callchain *cc = &ev->pl_u.pl_cc;
	cc->pl_pid = s.pid;
	cc->pl_tid = s.tid;
	cc->pl_pmcid = pi->id;
	cc->pl_cpuflags = PMC_CALLCHAIN_TO_CPUFLAGS(s.cpu, user ? PMC_CC_F_USERSPACE : 0);
	cc->pl_cpuflags2 = 0;
	cc->pl_npc = 0;
	for (uint64_t i = 0; i < s.nr_callchain && cc->pl_npc < PMC_CALLCHAIN_DEPTH_MAX; i++)
		if (s.callchain[i] < PERF_CONTEXT_MAX)
			cc->pl_pc[cc->pl_npc++] = (uintfptr_t)s.callchain[i];
	if (cc->pl_npc == 0)
		cc->pl_pc[cc->pl_npc++] = (uintfptr_t)s.ip;
}

/* ------------------------------------------------------------ maps */

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr Ehdr;
typedef Elf64_Phdr Phdr;
#define ELF_CLASS ELFCLASS64
#else
typedef Elf32_Ehdr Ehdr;
typedef Elf32_Phdr Phdr;
#define ELF_CLASS ELFCLASS32
#endif

static void read_elf(struct elf *e)
{
	/* What the file is now may be a FIFO or a device: no waiting on it. */
	int fd = open(e->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;
	struct stat st;
	Ehdr eh;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELF_CLASS ||
	    eh.e_phentsize != sizeof(Phdr)) {
		close(fd);
		return;
	}
	e->dyn = eh.e_type == ET_DYN;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			e->interp = true;
		if (ph.p_type != PT_LOAD)
			continue;
		uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
		if ((ph.p_flags & PF_X) && (ph.p_offset & -align) == 0)
			e->xvaddr = ph.p_vaddr & -align;
		if (e->nload < PMC_ARRAY_SIZE(e->load))
			e->load[e->nload++] = (typeof(e->load[0])){ph.p_vaddr, ph.p_offset, ph.p_filesz};
	}
	e->ok = true;
	close(fd);
}

/* The program headers of PATH, read once; NULL without memory. */
static const struct elf *elf_of(struct parser *p, const char *path)
{
	for (size_t i = 0; i < p->nelfs; i++)
		if (strcmp(p->elfs[i].path, path) == 0)
			return &p->elfs[i];
	if (!pmc__room(&p->elfs, p->nelfs, &p->cap_elfs, sizeof(*p->elfs), 16))
		return NULL;
	struct elf *e = &p->elfs[p->nelfs];
	memset(e, 0, sizeof(*e));
	if (!(e->path = strdup(path)))
		return NULL;
	if (path[0] == '/')
		read_elf(e);
	p->nelfs++;
	return e;
}

/* The load bias of the object E mapped at START from file offset PGOFF:
 * what its addresses are moved by.  Without its headers, where its file
 * offset 0 would be. */
static uint64_t load_bias(const struct elf *e, uint64_t start, uint64_t pgoff)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	for (size_t i = 0; e && e->ok && i < e->nload; i++) {
		uint64_t off = e->load[i].off & ~(page - 1);
		if (pgoff >= off && pgoff < e->load[i].off + e->load[i].filesz)
			return start - ((e->load[i].vaddr & ~(page - 1)) + (pgoff - off));
	}
	return start - pgoff;
}

static struct exec *exec_of(struct parser *p, uint32_t pid)
{
	for (size_t i = 0; i < p->nexecs; i++)
		if (p->execs[i].pid == pid)
			return &p->execs[i];
	return NULL;
}

static void exec_done(struct parser *p, struct exec *x)
{
	*x = p->execs[--p->nexecs];
}

/* An exec: its PROCEXEC waits for its maps (another sampler's copy of an
 * exec already waiting changes nothing). */
static void exec_begin(struct parser *p, uint32_t pid)
{
	if (exec_of(p, pid) || !pmc__room(&p->execs, p->nexecs, &p->cap_execs, sizeof(*p->execs), 4))
		return;
	p->execs[p->nexecs++] = (struct exec){.pid = pid};
}

static void emit_exec(struct parser *p, const struct hwc_perfdata_record *r, uint64_t t,
		      const struct exec *x, uint64_t baseaddr)
{
	struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_PROCEXEC, r->offset, t, r->hdr);
	if (!ev)
		return;
	struct pmcinfo *pi = pmc_of(p, r->attr);
	ev->pl_u.pl_x.pl_pid = (pid_t)x->pid;
	ev->pl_u.pl_x.pl_pmcid = pi ? pi->id : 0;
	ev->pl_u.pl_x.pl_baseaddr = (uintfptr_t)baseaddr;
	ev->pl_u.pl_x.pl_dynaddr = (uintfptr_t)x->dynaddr;
	snprintf(ev->pl_u.pl_x.pl_pathname, sizeof(ev->pl_u.pl_x.pl_pathname), "%s", x->exe);
}

static void mapping(struct parser *p, const struct hwc_perfdata_record *r)
{
	const struct perf_event_header *h = r->hdr;
	const uint8_t *b = (const uint8_t *)(h + 1);
	size_t blen = h->size - sizeof(*h);
	size_t name_off = h->type == PERF_RECORD_MMAP ? 32 : 64;
	if (blen <= name_off)
		return;
	if (h->type == PERF_RECORD_MMAP2) {
		uint32_t prot;
		memcpy(&prot, b + 56, 4);
		if (!(prot & PROT_EXEC))
			return;
	}
	if (h->misc & PERF_RECORD_MISC_MMAP_DATA)
		return;
	const char *name = (const char *)b + name_off;
	if (!memchr(name, '\0', blen - name_off))
		return;
	int32_t pid;
	uint64_t start, len, pgoff;
	memcpy(&pid, b, 4);
	memcpy(&start, b + 8, 8);
	memcpy(&len, b + 16, 8);
	memcpy(&pgoff, b + 24, 8);
	uint64_t t = record_time(r);
	/* Every sampler of the log sees the same maps: report one. */
	uint64_t key = mix((uint64_t)(uint32_t)pid << 32 ^ len, start);
	for (const char *c = name; *c; c++)
		key = mix(key, (unsigned char)*c);
	bool fresh = first_time(&p->seen, PERF_RECORD_MMAP, key);
	struct exec *x = exec_of(p, (uint32_t)pid);
	if (x && !x->have_exe && !fresh) {
		exec_done(p, x); /* another sampler's copy of an exec already reported */
		return;
	}
	if (!fresh)
		return;
	const struct elf *e = elf_of(p, name);
	uint64_t bias = load_bias(e, start, pgoff);
	if (x && !x->have_exe) {
		/* The executable, mapped by exec: PROCEXEC's, no MAP_IN. */
		x->have_exe = true;
		x->dynaddr = e && e->ok && !e->dyn ? 0 : bias;
		snprintf(x->exe, sizeof(x->exe), "%s", name);
		if (!e || !e->ok || !e->interp) {
			emit_exec(p, r, t, x, x->dynaddr);
			exec_done(p, x);
		}
		return;
	}
	if (x && strcmp(name, x->exe) != 0) {
		/* The program interpreter, mapped by exec. */
		emit_exec(p, r, t, x, bias);
		exec_done(p, x);
		return;
	}
	if (x)
		return; /* another executable segment of the program */
	struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_MAP_IN, r->offset, t, h);
	if (ev) {
		ev->pl_u.pl_mi.pl_pid = pid;
		ev->pl_u.pl_mi.pl_start = (uintfptr_t)(bias + (e && e->ok ? e->xvaddr : 0));
		snprintf(ev->pl_u.pl_mi.pl_pathname, sizeof(ev->pl_u.pl_mi.pl_pathname), "%s", name);
	}
}

/* Turn the next perf record into pmclog records: 1, 0 at the end. */
static int step(struct parser *p)
{
	if (!p->started) {
		p->started = true;
		emit_initialize(p);
		return 1;
	}
	if (p->ended)
		return 0;
	struct hwc_perfdata_record r;
	int rc = hwc_perfdata_next(p->f, &r);
	if (rc > 0)
		p->resume = r.offset + r.hdr->size;
	if (rc <= 0) {
		p->ended = true;
		/* Exits the log does not hold are reported at its end, not where
		 * a stream only paused. */
		if (!p->closed && (p->fd < 0 || p->fd_eof))
			emit_exits(p, 0, true, 0, 0, NULL);
		return p->qlen > 0;
	}
	const struct perf_event_header *h = r.hdr;
	const uint8_t *b = (const uint8_t *)(h + 1);
	uint32_t pid, tid;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		sample(p, &r);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		mapping(p, &r);
		break;
	case PERF_RECORD_COMM:
		if ((h->misc & PERF_RECORD_MISC_COMM_EXEC) && h->size >= 16) {
			memcpy(&pid, b, 4);
			exec_begin(p, pid);
		}
		break;
	case PERF_RECORD_FORK:
		if (h->size >= 24) {
			uint32_t ppid;
			memcpy(&pid, b, 4);
			memcpy(&ppid, b + 4, 4);
			if (pid != ppid && first_time(&p->seen, PERF_RECORD_FORK, (uint64_t)ppid << 32 | pid)) {
				struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_PROCFORK, r.offset,
							    record_time(&r), h);
				if (ev)
					ev->pl_u.pl_f = (struct pmclog_ev_procfork){(pid_t)ppid, (pid_t)pid};
			}
		}
		break;
	case PERF_RECORD_EXIT:
		if (h->size >= 24) {
			memcpy(&pid, b, 4);
			memcpy(&tid, b + 8, 4);
			if (pid == tid && first_time(&p->exited, pid, 0)) {
				uint64_t t = record_time(&r);
				emit_exits(p, pid, false, r.offset, t, h);
				struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_SYSEXIT, r.offset, t, h);
				if (ev)
					ev->pl_u.pl_se.pl_pid = (pid_t)pid;
			}
		}
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		emit(p, PMCLOG_TYPE_DROPNOTIFY, r.offset, record_time(&r), h);
		break;
	default:
		break;
	}
	return 1;
}

/* ------------------------------------------------------------ the interface */

PMC_EXPORT void *pmclog_open(int fd)
{
	struct parser *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->fd = fd;
	p->cputype = PMC_CPU_GENERIC;
	return p;
}

PMC_EXPORT int pmclog_feed(void *cookie, char *data, int len)
{
	struct parser *p = cookie;
	if (!p || p->fd != PMCLOG_FD_NONE || len < 0) {
		errno = EINVAL;
		return -1;
	}
	if (p->len + (size_t)len > p->cap) {
		size_t cap = p->cap ? p->cap : 1 << 16;
		while (cap < p->len + (size_t)len)
			cap *= 2;
		uint8_t *b = realloc(p->buf, cap);
		if (!b) {
			errno = ENOMEM;
			return -1;
		}
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, data, (size_t)len);
	p->len += (size_t)len;
	/* Read again from the start, past what was returned. */
	unload(p);
	return 0;
}

/* No record: only the state, the count and the offset reached mean anything. */
static int fail_state(const struct parser *p, struct pmclog_ev *ev, enum pmclog_state state)
{
	int e = errno;
	memset(ev, 0, sizeof(*ev));
	ev->pl_state = state;
	ev->pl_count = p->delivered;
	ev->pl_offset = (off_t)p->fail_offset;
	errno = e;
	return -1;
}

/* Has a regular file grown since it was mapped? */
static bool grown(const struct parser *p)
{
	struct stat st;
	return p->fd >= 0 && p->map && fstat(p->fd, &st) == 0 && (size_t)st.st_size != p->map_len;
}

/* A stream that grew: its data again, past the records already made. */
static int resume_stream(struct parser *p)
{
	int r = open_data(p);
	if (r != 0)
		return r; /* 1: still no whole record more; the next read waits again */
	struct hwc_perfdata_record rec;
	while (p->resume && hwc_perfdata_next(p->f, &rec) > 0)
		if (rec.offset + rec.hdr->size >= p->resume)
			break;
	p->ended = false;
	return 0;
}

PMC_EXPORT int pmclog_read(void *cookie, struct pmclog_ev *ev)
{
	struct parser *p = cookie;
	if (!p || !ev) {
		errno = EINVAL;
		return -1;
	}
	for (int pass = 0;; pass++) {
		if (!p->f) {
			int r = p->started && is_stream(p) ? resume_stream(p) : load(p);
			if (r < 0)
				return fail_state(p, ev, PMCLOG_ERROR);
			if (r > 0 && p->fd >= 0 && !p->fd_eof && is_stream(p)) {
				/* A stream too short for a record yet: wait for more. */
				int m = slurp(p);
				if (m < 0)
					return fail_state(p, ev, PMCLOG_ERROR);
				if (m > 0)
					return fail_state(p, ev, PMCLOG_REQUIRE_DATA);
				continue;
			}
			if (r > 0)
				return fail_state(p, ev, p->fd == PMCLOG_FD_NONE || !p->fd_eof
							      ? PMCLOG_REQUIRE_DATA
							      : PMCLOG_EOF);
		}
		/* Make records until one is new (a reload makes them again). */
		while (p->qlen == 0 || p->made - p->qlen < p->delivered) {
			if (p->qlen && p->made - p->qlen < p->delivered) {
				p->qhead++;
				p->qlen--;
				continue;
			}
			if (!step(p))
				break;
		}
		if (p->qlen) {
			*ev = p->q[p->qhead++];
			p->qlen--;
			ev->pl_count = ++p->delivered;
			p->fail_offset = (uint64_t)ev->pl_offset;
			return 0;
		}
		if (p->fd >= 0 && !p->fd_eof && is_stream(p) && p->started) {
			/* The records so far are out: wait for more of the stream,
			 * learn from all of it again, and go on where it stopped. */
			unload_data(p);
			int m = slurp(p);
			if (m < 0)
				return fail_state(p, ev, PMCLOG_ERROR);
			if (m > 0)
				return fail_state(p, ev, PMCLOG_REQUIRE_DATA);
			if (resume_stream(p) < 0)
				return fail_state(p, ev, PMCLOG_ERROR);
			continue;
		}
		if (pass > 0 || !grown(p))
			break;
		unload(p); /* the file grew: read it again */
	}
	return fail_state(p, ev, p->fd == PMCLOG_FD_NONE ? PMCLOG_REQUIRE_DATA : PMCLOG_EOF);
}

PMC_EXPORT void pmclog_close(void *cookie)
{
	struct parser *p = cookie;
	if (!p)
		return;
	unload(p);
	free(p->q);
	free(p->execs);
	free(p->elfs);
	free(p->buf);
	free(p);
}
