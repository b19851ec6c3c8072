/* pmclog(3): FreeBSD's records for what a perf.data log holds.  The file
 * is read whole (it must be complete: its header comes last) in two
 * passes (a stream from a pipe, perf's pipe mode, is read as it comes: the
 * first pass is made again over all of it each time more arrived, the
 * second goes on where it stopped): the first (here) learns libpmc's
 * records (which events are which PMC's) and each process's counts at
 * exit; the second (pmclog_records.c) turns each perf record into the
 * pmclog records it stands for, in file order. */
#include "pmclog_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ small tables */

uint64_t pmclog__mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL + (a << 6));
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

/* The entry of (A, B), added with value 0 when missing; NULL without memory. */
struct kv *pmclog__lookup(struct table *t, uint64_t a, uint64_t b, bool add, bool *fresh)
{
	if (add && (t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct kv *e = calloc(cap, sizeof(*e));
		if (!e)
			return NULL;
		for (size_t i = 0; i < t->cap; i++)
			if (t->e[i].used) {
				size_t j = pmclog__mix(t->e[i].a, t->e[i].b) & (cap - 1);
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
	size_t j = pmclog__mix(a, b) & (t->cap - 1);
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
bool pmclog__first_time(struct table *t, uint64_t a, uint64_t b)
{
	bool fresh = false;
	pmclog__lookup(t, a, b, true, &fresh);
	return fresh;
}

static void table_free(struct table *t)
{
	free(t->e);
	*t = (struct table){0};
}

/* ------------------------------------------------------------ the parser */

bool pmclog__is_user_event(const struct hwc_perfdata_attr *a)
{
	return a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config == PERF_COUNT_SW_BPF_OUTPUT &&
	       (a->attr.sample_type & PERF_SAMPLE_RAW);
}

bool pmclog__is_switch_leader(const struct hwc_perfdata_attr *a)
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

struct pmcinfo *pmclog__pmc_of(struct parser *p, const struct hwc_perfdata_attr *a)
{
	size_t i = a ? attr_index(p, a) : SIZE_MAX;
	return i < p->nattrs ? p->of_attr[i] : NULL;
}

struct pmcinfo *pmclog__find_pmc(struct parser *p, pmc_id_t id)
{
	for (size_t i = 0; i < p->npmcs; i++)
		if (p->pmcs[i].id == id)
			return &p->pmcs[i];
	return NULL;
}

/* libpmc's record in a user record's data, or NULL. */
const struct pmc__ctl *pmclog__control_of(const struct hwc_sample *s, const char **text)
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

/* ------------------------------------------------------------ the first pass */

static int add_pmc(struct parser *p, const struct pmcinfo *pi)
{
	struct pmcinfo *have = pmclog__find_pmc(p, pi->id);
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
	if (r->hdr->type != PERF_RECORD_SAMPLE || !r->attr || !pmclog__is_user_event(r->attr))
		return 0;
	struct hwc_sample s;
	const char *text;
	const struct pmc__ctl *c;
	if (hwc_sample_parse(r->hdr, &r->attr->attr, &s) || !(c = pmclog__control_of(&s, &text)))
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
		struct pmcinfo *pi = pmclog__find_pmc(p, c->pmcid);
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
		if (p->of_attr[i] || pmclog__is_user_event(a) || pmclog__is_switch_leader(a))
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
		p->of_attr[i] = pmclog__find_pmc(p, pi.id);
	}
	return 0;
}

/* Each process's counts at exit: the sum of its threads' READ records. */
static int learn_exit_count(struct parser *p, const struct hwc_perfdata_record *r)
{
	struct pmcinfo *pi = r->hdr->type == PERF_RECORD_READ && r->hdr->size >= 24
				     ? pmclog__pmc_of(p, r->attr)
				     : NULL;
	if (!pi)
		return 0;
	uint32_t pid;
	uint64_t value;
	memcpy(&pid, (const uint8_t *)r->hdr + 8, 4);
	memcpy(&value, (const uint8_t *)r->hdr + 16, 8);
	struct kv *e = pmclog__lookup(&p->exit_sums, pid, pi->id, true, NULL);
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
			if (!pmclog__step(p))
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

