/* pmclog(3)'s second pass: each perf record of the log turned into the
 * pmclog records it stands for, in file order:
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
#include "pmclog_impl.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
		if (!e->used || (!all && e->a != pid) || !pmclog__first_time(&p->exit_done, e->a, e->b))
			continue;
		const struct pmcinfo *pi = pmclog__find_pmc(p, (pmc_id_t)e->b);
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
	if (pmclog__is_user_event(r->attr)) {
		const char *text;
		const struct pmc__ctl *c = pmclog__control_of(&s, &text);
		if (!c) {
			struct pmclog_ev *ev = emit(p, PMCLOG_TYPE_USERDATA, r->offset, s.time, h);
			if (ev) {
				memcpy(&ev->pl_u.pl_u.pl_userdata, s.raw,
				       s.raw_size < 4 ? s.raw_size : 4);
			}
			return;
		}
		struct pmcinfo *pi = pmclog__find_pmc(p, c->pmcid);
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
	if (pmclog__is_switch_leader(r->attr)) {
		/* Values are the thread's own on this CPU, cumulative: the slice
		 * that ended is the difference from the last one. */
		for (uint32_t i = 0; s.values && i < s.nr_values; i++) {
			if (!(r->attr->attr.read_format & PERF_FORMAT_ID) || s.value_stride < 2)
				break;
			uint64_t id = s.values[i * s.value_stride + 1];
			const struct hwc_perfdata_attr *a = hwc_perfdata_attr_by_id(p->f, id);
			struct pmcinfo *pi = pmclog__pmc_of(p, a);
			if (!pi || a == r->attr || pmclog__is_switch_leader(a))
				continue;
			uint64_t v = s.values[i * s.value_stride];
			struct kv *last = pmclog__lookup(&p->csw, (uint64_t)s.tid << 16 | (s.cpu & 0xFFFF), id,
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
	struct pmcinfo *pi = pmclog__pmc_of(p, r->attr);
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
	struct pmcinfo *pi = pmclog__pmc_of(p, r->attr);
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
	uint64_t key = pmclog__mix((uint64_t)(uint32_t)pid << 32 ^ len, start);
	for (const char *c = name; *c; c++)
		key = pmclog__mix(key, (unsigned char)*c);
	bool fresh = pmclog__first_time(&p->seen, PERF_RECORD_MMAP, key);
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
int pmclog__step(struct parser *p)
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
			if (pid != ppid && pmclog__first_time(&p->seen, PERF_RECORD_FORK, (uint64_t)ppid << 32 | pid)) {
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
			if (pid == tid && pmclog__first_time(&p->exited, pid, 0)) {
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
