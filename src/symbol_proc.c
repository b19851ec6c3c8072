/* Processes and threads from the recording's records: each process's maps
 * over time (MMAP, MMAP2), where it came from (FORK), each thread's names
 * (COMM), and the build-ids recorded for files. */
#include "internal.h"
#include "symbol_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct hwc__proc *hwc__proc_get(hwc_symbols *s, uint32_t pid, bool create)
{
	struct hwc__proc *p = hwc__map_get(&s->procs, pid);
	if (p || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->exec_time = UINT64_MAX;
	p->next = s->proc_list;
	s->proc_list = p;
	hwc__map_put(&s->procs, pid, p);
	return p;
}

/* The map covering ADDR at TIME: the latest one made at or before TIME, else
 * the earliest (records of different CPUs arrive slightly out of order). */
const struct hwc__mapping *hwc__find_map(const struct hwc__proc *p, uint64_t addr, uint64_t time)
{
	for (int depth = 0; p && depth < 64; depth++) {
		const struct hwc__mapping *best = NULL, *early = NULL;
		for (size_t i = 0; i < p->nmaps; i++) {
			const struct hwc__mapping *m = &p->maps[i];
			if (addr < m->start || addr >= m->end)
				continue;
			if (m->time <= time && (!best || m->time >= best->time))
				best = m;
			if (!early || m->time < early->time)
				early = m;
		}
		if (best || early)
			return best ? best : early;
		if (time >= p->exec_time)
			return NULL;
		if (time > p->fork_time)
			time = p->fork_time;
		p = p->parent;
	}
	return NULL;
}

static int add_map(hwc_symbols *s, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *name, uint64_t time)
{
	struct hwc__proc *p = hwc__proc_get(s, pid, true);
	if (!p)
		return hwc__fail(-ENOMEM, "out of memory");
	if (p->nmaps == p->capmaps) {
		size_t cap = p->capmaps ? p->capmaps * 2 : 16;
		void *m = realloc(p->maps, cap * sizeof(*p->maps));
		if (!m)
			return hwc__fail(-ENOMEM, "out of memory");
		p->maps = m;
		p->capmaps = cap;
	}
	struct hwc__dso *d = hwc__dso_get(s, name);
	if (!d)
		return hwc__fail(-ENOMEM, "out of memory");
	p->maps[p->nmaps++] = (struct hwc__mapping){start, start + len, pgoff, time, d};
	p->generation++;
	return 0;
}

struct thread_comm {
	uint64_t time;
	const char *comm;
	bool exec; /* from an exec's COMM */
};

/* A thread's names over time, and where it came from: until it names
 * itself, a forked thread bears its parent's name as of the fork.  That is
 * looked up when asked, not copied at the FORK record, because perf.data is
 * not time-ordered across CPUs: the parent's exec COMM can come later in
 * the file than its child's FORK. */
struct hwc__thread {
	struct thread_comm *v;
	size_t n, cap;
	bool forked;
	uint32_t parent_tid;
	uint64_t fork_time;
};

static struct hwc__thread *thread_get(hwc_symbols *s, uint32_t tid)
{
	struct hwc__thread *t = hwc__map_get(&s->threads, tid);
	if (!t) {
		t = hwc__arena_alloc(&s->arena, sizeof(*t));
		if (!t || hwc__map_put(&s->threads, tid, t))
			return NULL;
	}
	return t;
}

static int set_comm(hwc_symbols *s, uint32_t tid, const char *comm, uint64_t time, bool exec)
{
	struct hwc__thread *t = thread_get(s, tid);
	if (!t)
		return hwc__fail(-ENOMEM, "out of memory");
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 2;
		void *v = realloc(t->v, cap * sizeof(*t->v));
		if (!v)
			return hwc__fail(-ENOMEM, "out of memory");
		t->v = v;
		t->cap = cap;
	}
	/* A name read earlier in the file but stamped after this exec (perf
	 * synthesizes the workload's pre-exec name) only applies before it;
	 * not a later exec's, which the file can hold first (its CPU's buffer
	 * written before this one's). */
	for (size_t i = 0; exec && i < t->n; i++)
		if (t->v[i].time > time && !t->v[i].exec)
			t->v[i].time = 0;
	t->v[t->n++] = (struct thread_comm){time, hwc__intern(s, comm), exec};
	return 0;
}

HWC_EXPORT const char *hwc_symbols_comm(hwc_symbols *s, uint32_t tid, uint64_t time)
{
	/* Walk up the fork chain while the thread had no name of its own yet;
	 * bounded, in case a corrupt file makes the chain a cycle. */
	for (int depth = 0; depth < 64; depth++) {
		struct hwc__thread *t = hwc__map_get(&s->threads, tid);
		if (!t)
			/* Thread 0 is the idle task, named as perf names it. */
			return tid == 0 ? hwc__intern(s, "swapper") : s->unknown;
		const char *best = NULL;
		uint64_t bt = 0;
		for (size_t i = 0; i < t->n; i++)
			if (t->v[i].time <= time && (!best || t->v[i].time >= bt))
				best = t->v[i].comm, bt = t->v[i].time;
		if (best)
			return best;
		if (!t->forked)
			return t->n ? t->v[0].comm : s->unknown;
		tid = t->parent_tid;
		time = t->fork_time;
	}
	return s->unknown;
}

/* ------------------------------------------------------------ records */

static uint64_t record_time(const struct perf_event_header *hdr, const struct perf_event_attr *attr)
{
	struct hwc_sample_id id;
	if (!attr || !(attr->sample_type & PERF_SAMPLE_TIME) || !attr->sample_id_all ||
	    hwc_sample_id_parse(hdr, attr, &id))
		return 0;
	return id.time;
}

/* A NUL-terminated string at BODY+OFF within the record minus its trailer. */
static int record_string(const struct perf_event_header *hdr, const struct perf_event_attr *attr,
			 size_t off, char *out, size_t size)
{
	size_t tail = attr ? hwc_sample_id_size(attr) : 0;
	size_t end = hdr->size > tail ? hdr->size - tail : 0;
	if (off >= end)
		return hwc__fail(-EINVAL, "%s record of %u bytes has no room for its name",
				 hwc_record_type_name(hdr->type), hdr->size);
	size_t n = strnlen((const char *)hdr + off, end - off);
	if (n >= size)
		n = size - 1;
	memcpy(out, (const char *)hdr + off, n);
	out[n] = '\0';
	return 0;
}

HWC_EXPORT int hwc_symbols_record(hwc_symbols *s, const struct perf_event_header *hdr,
				  const struct perf_event_attr *attr)
{
	hwc__clear_error();
	const uint8_t *b = (const uint8_t *)hdr;
	char name[4096];
	uint32_t pid, ppid, tid, ptid;
	uint64_t start, len, pgoff, time;
	int err;
	switch (hdr->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		size_t name_off = hdr->type == PERF_RECORD_MMAP ? 40 : 72;
		if (hdr->size < name_off)
			return hwc__fail(-EINVAL, "%s record of %u bytes is shorter than its %zu-byte "
						  "fixed part",
					 hwc_record_type_name(hdr->type), hdr->size, name_off);
		memcpy(&pid, b + 8, 4);
		memcpy(&start, b + 16, 8);
		memcpy(&len, b + 24, 8);
		memcpy(&pgoff, b + 32, 8);
		if ((err = record_string(hdr, attr, name_off, name, sizeof(name))))
			return err;
		if (hdr->type == PERF_RECORD_MMAP2) {
			uint32_t prot;
			memcpy(&prot, b + 64, 4);
			if (!(prot & PROT_EXEC))
				return 0;
			if (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID && b[40] <= 20)
				hwc_symbols_add_buildid(s, name, b + 44, b[40]);
		} else if (hdr->misc & PERF_RECORD_MISC_MMAP_DATA) {
			return 0;
		}
		/* The kernel's maps (pid -1) are covered by kallsyms. */
		if (pid == UINT32_MAX || (hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
						 PERF_RECORD_MISC_KERNEL)
			return 0;
		return add_map(s, pid, start, len, pgoff, name, record_time(hdr, attr));
	}
	case PERF_RECORD_COMM:
		if (hdr->size < 16)
			return hwc__fail(-EINVAL, "COMM record of %u bytes is too short", hdr->size);
		memcpy(&pid, b + 8, 4);
		memcpy(&tid, b + 12, 4);
		if ((err = record_string(hdr, attr, 16, name, 64)))
			return err;
		time = record_time(hdr, attr);
		if (hdr->misc & PERF_RECORD_MISC_COMM_EXEC) {
			struct hwc__proc *p = hwc__proc_get(s, pid, true);
			if (p && pid == tid)
				p->exec_time = time;
		}
		return set_comm(s, tid, name, time, hdr->misc & PERF_RECORD_MISC_COMM_EXEC);
	case PERF_RECORD_FORK:
		if (hdr->size < 32)
			return hwc__fail(-EINVAL, "FORK record of %u bytes is too short", hdr->size);
		memcpy(&pid, b + 8, 4);
		memcpy(&ppid, b + 12, 4);
		memcpy(&tid, b + 16, 4);
		memcpy(&ptid, b + 20, 4);
		memcpy(&time, b + 24, 8);
		if (pid != ppid) {
			struct hwc__proc *child = hwc__proc_get(s, pid, true);
			struct hwc__proc *parent = hwc__proc_get(s, ppid, true);
			if (!child || !parent)
				return hwc__fail(-ENOMEM, "out of memory");
			if (child != parent && !child->parent) {
				child->parent = parent;
				child->fork_time = time;
			}
		}
		if (tid != ptid) {
			struct hwc__thread *t = thread_get(s, tid);
			if (!t)
				return hwc__fail(-ENOMEM, "out of memory");
			if (!t->forked) {
				t->forked = true;
				t->parent_tid = ptid;
				t->fork_time = time;
			}
		}
		return 0;
	default:
		return 0;
	}
}

HWC_EXPORT int hwc_symbols_add_buildid(hwc_symbols *s, const char *filename, const uint8_t *id,
				       size_t len)
{
	hwc__clear_error();
	if (len > 20 || len == 0)
		return hwc__fail(-EINVAL, "build-id of %zu bytes for %s (expected 1..20)", len, filename);
	const char *name = hwc__intern(s, filename);
	struct hwc__bid *b = hwc__map_get(&s->buildids, (uint64_t)(uintptr_t)name);
	if (!b) {
		b = hwc__arena_alloc(&s->arena, sizeof(*b));
		if (!b || hwc__map_put(&s->buildids, (uint64_t)(uintptr_t)name, b))
			return hwc__fail(-ENOMEM, "out of memory");
	}
	memcpy(b->id, id, len);
	b->len = len;
	return 0;
}

HWC_EXPORT void hwc_symbols_load_header(hwc_symbols *s, hwc_perfdata *f)
{
	hwc__clear_error();
	/* The kernel's symbols are read while the maps are: both take long
	 * (kallsyms is the kernel formatting 100000 lines). */
	if (s->flags & HWC_SYM_THREAD)
		for (size_t i = 0; i < hwc_perfdata_nattrs(f); i++)
			if (!hwc_perfdata_attr(f, i)->attr.exclude_kernel) {
				hwc__kallsyms_prefetch(s);
				break;
			}
	for (size_t i = 0; i < hwc_perfdata_nbuildids(f); i++) {
		const struct hwc_perfdata_buildid *b = hwc_perfdata_buildid(f, i);
		if (b->size)
			hwc_symbols_add_buildid(s, b->filename, b->id, b->size);
	}
}

HWC_EXPORT int hwc_symbols_load(hwc_symbols *s, hwc_perfdata *f)
{
	hwc_symbols_load_header(s, f);
	hwc_perfdata_rewind(f);
	struct hwc_perfdata_record r;
	int rc;
	while ((rc = hwc_perfdata_next(f, &r)) > 0) {
		uint32_t t = r.hdr->type;
		if (t != PERF_RECORD_MMAP && t != PERF_RECORD_MMAP2 && t != PERF_RECORD_COMM &&
		    t != PERF_RECORD_FORK)
			continue;
		int err = hwc_symbols_record(s, r.hdr, r.attr ? &r.attr->attr : NULL);
		if (err) {
			hwc__fail_append(" (record at perf.data offset %" PRIu64 ")", r.offset);
			hwc_perfdata_rewind(f);
			return err;
		}
	}
	hwc_perfdata_rewind(f);
	return rc;
}


void hwc__procs_free(hwc_symbols *s)
{
	for (struct hwc__proc *p = s->proc_list, *n; p; p = n) {
		n = p->next;
		hwc__unwind_forget(p);
		free(p->maps);
		free(p);
	}
	for (size_t i = 0; i < s->threads.cap; i++)
		if (s->threads.slots[i].val)
			free(((struct hwc__thread *)s->threads.slots[i].val)->v);
	hwc__map_free(&s->threads);
	hwc__map_free(&s->procs);
}

/* A time at which what TIME sees may change: [*FROM, *TO) shrinks to keep
 * TIME on the same side of it (at AT and after, versus before). */
static void span_cut(uint64_t at, uint64_t time, uint64_t *from, uint64_t *to)
{
	if (at <= time) {
		if (at > *from)
			*from = at;
	} else if (at < *to) {
		*to = at;
	}
}

HWC_EXPORT void hwc_symbols_span(hwc_symbols *s, uint32_t pid, uint32_t tid, uint64_t time,
				 uint64_t *from, uint64_t *to)
{
	*from = 0;
	*to = UINT64_MAX;
	/* hwc__find_map()'s tests of TIME: each map's time, the exec, and
	 * the fork (after it, the parent is seen at the fork's time). */
	const struct hwc__proc *p = hwc__proc_get(s, pid, false);
	for (int depth = 0; p && depth < 64; depth++, p = p->parent) {
		for (size_t i = 0; i < p->nmaps; i++)
			span_cut(p->maps[i].time, time, from, to);
		if (p->exec_time != UINT64_MAX)
			span_cut(p->exec_time, time, from, to);
		if (!p->parent || p->fork_time == UINT64_MAX)
			break;
		span_cut(p->fork_time + 1, time, from, to);
		if (time > p->fork_time)
			break;
	}
	/* hwc_symbols_comm()'s: the thread's names (a forked thread that has
	 * none yet is seen at its fork's time). */
	const struct hwc__thread *t = hwc__map_get(&s->threads, tid);
	for (size_t i = 0; t && i < t->n; i++)
		span_cut(t->v[i].time, time, from, to);
}
