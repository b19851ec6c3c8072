/* Symbolization: per-process address maps built from MMAP/MMAP2/FORK/COMM
 * records, one libdwfl module per DSO (reported at bias 0 so module
 * addresses are ELF virtual addresses), /proc/kallsyms for the kernel.
 * Each (DSO, address) is resolved once; its location is cached. */
#include "internal.h"
#include "symbol_internal.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------------ arena, hashes */

void *hwc__arena_alloc(struct hwc__arena *a, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (!a->chunk || a->used + n > a->cap) {
		size_t cap = n > 65536 ? n : 65536;
		struct hwc__arena_chunk *c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = a->chunk;
		a->chunk = c;
		a->used = 0;
		a->cap = cap;
	}
	void *p = a->chunk->mem + a->used;
	a->used += n;
	memset(p, 0, n);
	return p;
}

char *hwc__arena_strdup(struct hwc__arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = hwc__arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

void hwc__arena_free(struct hwc__arena *a)
{
	while (a->chunk) {
		struct hwc__arena_chunk *n = a->chunk->next;
		free(a->chunk);
		a->chunk = n;
	}
}

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

void *hwc__map_get(const struct hwc__map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].val)
			return NULL;
		if (m->slots[i].key == key)
			return m->slots[i].val;
	}
}

int hwc__map_put(struct hwc__map *m, uint64_t key, void *val)
{
	if ((m->len + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct hwc__map_slot *slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slots[i].val)
				continue;
			size_t j = mix(m->slots[i].key) & (cap - 1);
			while (slots[j].val)
				j = (j + 1) & (cap - 1);
			slots[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = slots;
		m->cap = cap;
	}
	size_t i = mix(key) & (m->cap - 1);
	while (m->slots[i].val && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->slots[i].val)
		m->len++;
	m->slots[i].key = key;
	m->slots[i].val = val;
	return 0;
}

void hwc__map_free(struct hwc__map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

uint64_t hwc__hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
	return h;
}

/* Interned strings: equal text, equal pointer. */
static const char *intern(hwc_symbols *s, const char *str)
{
	uint64_t h = hwc__hash_str(str);
	for (;; h++) {
		const char *old = hwc__map_get(&s->strings, h);
		if (!old)
			break;
		if (strcmp(old, str) == 0)
			return old;
	}
	char *p = hwc__arena_strdup(&s->arena, str);
	if (!p || hwc__map_put(&s->strings, h, p))
		return "[out of memory]";
	return p;
}

/* ------------------------------------------------------------ kernel */

struct ksym {
	uint64_t addr;
	const char *name, *module;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols of /proc/kallsyms; unusable when its addresses are hidden. */
static void load_kallsyms(hwc_symbols *s)
{
	s->kallsyms_tried = true;
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f) {
		s->kallsyms_why = "cannot read /proc/kallsyms";
		return;
	}
	char line[512];
	size_t cap = 0;
	bool any_nonzero = false;
	/* "ADDR TYPE NAME[\t[MODULE]]", some 100000 lines: parsed by hand, as
	 * sscanf would take as long as the kernel takes to write them. */
	while (fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long long addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		char type = end[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		char *name = end + 3;
		size_t n = strcspn(name, " \t\n");
		const char *module = "";
		if (name[n] == ' ' || name[n] == '\t') {
			char *m = name + n + 1 + strspn(name + n + 1, " \t");
			size_t len = strcspn(m, "]\n");
			if (*m == '[' && m[len] == ']' && len > 1) {
				m[len] = '\0';
				module = m + 1;
			}
		}
		name[n] = '\0';
		if (!n)
			continue;
		if (s->nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			struct ksym *p = realloc(s->ksyms, cap * sizeof(*p));
			if (!p)
				break;
			s->ksyms = p;
		}
		any_nonzero |= addr != 0;
		s->ksyms[s->nksyms++] = (struct ksym){
			addr, intern(s, name), module[0] ? intern(s, module) : NULL};
	}
	fclose(f);
	if (!any_nonzero) {
		s->nksyms = 0;
		s->kallsyms_why = "/proc/kallsyms hides addresses (not root, or kptr_restrict)";
		return;
	}
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), cmp_ksym);
}

static const struct hwc_symbol *new_symbol(hwc_symbols *s, const char *name, const char *dso,
					   uint64_t start, uint64_t size, bool known, bool kernel)
{
	struct hwc_symbol *sym = hwc__arena_alloc(&s->arena, sizeof(*sym));
	if (!sym)
		return &s->oom_symbol;
	*sym = (struct hwc_symbol){name, dso, start, size, known, kernel};
	return sym;
}

static struct hwc_location *new_location(hwc_symbols *s, const struct hwc_symbol *sym,
					 uint64_t off)
{
	struct hwc_location *loc = hwc__arena_alloc(&s->arena, sizeof(*loc));
	if (!loc)
		return NULL;
	loc->sym = sym;
	loc->dso_offset = off;
	return loc;
}

/* Interned symbol of DSO_KEY's table by start (unknowns by address). */
static const struct hwc_symbol *symbol_at(hwc_symbols *s, struct hwc__map *table, const char *name,
					  const char *dso, uint64_t start, uint64_t size, bool known,
					  bool kernel)
{
	uint64_t key = start << 1 | known;
	const struct hwc_symbol *sym = hwc__map_get(table, key);
	if (sym && (!known || sym->name == name))
		return sym;
	sym = new_symbol(s, name, dso, start, size, known, kernel);
	hwc__map_put(table, key, (void *)sym);
	return sym;
}

static const struct hwc_location *resolve_kernel(hwc_symbols *s, uint64_t addr)
{
	const struct hwc_location *loc = hwc__map_get(&s->kernel_locs, addr);
	if (loc)
		return loc;
	s->kernel_used = true;
	if (!s->kallsyms_tried)
		load_kallsyms(s);
	const char *dso = s->kernel_dso;
	const struct hwc_symbol *sym = NULL;
	size_t lo = 0, hi = s->nksyms;
	while (lo < hi) { /* first symbol above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (s->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0) {
		const struct ksym *k = &s->ksyms[lo - 1];
		uint64_t size = lo < s->nksyms ? s->ksyms[lo].addr - k->addr : 4096;
		if (addr - k->addr < size && addr - k->addr < (1u << 20)) {
			if (k->module) {
				char m[160];
				snprintf(m, sizeof(m), "[%s]", k->module);
				dso = intern(s, m);
			}
			sym = symbol_at(s, &s->kernel_syms, k->name, dso, k->addr, size, true, true);
		}
	}
	if (!sym)
		sym = symbol_at(s, &s->kernel_syms, s->unknown, dso, addr, 0, false, true);
	struct hwc_location *l = new_location(s, sym, addr);
	if (!l)
		return &s->oom_location;
	hwc__map_put(&s->kernel_locs, addr, l);
	return l;
}

/* ------------------------------------------------------------ DSOs */

static const Dwfl_Callbacks dso_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct hwc__dso *hwc__dso_get(hwc_symbols *s, const char *name)
{
	const char *iname = intern(s, name);
	struct hwc__dso *d = hwc__map_get(&s->dsos, (uint64_t)(uintptr_t)iname);
	if (d)
		return d;
	d = hwc__arena_alloc(&s->arena, sizeof(*d));
	if (!d)
		return NULL;
	d->name = iname;
	d->next = s->dso_list;
	s->dso_list = d;
	hwc__map_put(&s->dsos, (uint64_t)(uintptr_t)iname, d);
	return d;
}

static bool pseudo_file(const char *name)
{
	return name[0] == '[' || strncmp(name, "//anon", 6) == 0 ||
	       strncmp(name, "/memfd:", 7) == 0 || strncmp(name, "anon_inode:", 11) == 0 ||
	       name[0] != '/';
}

static void hex(char *out, const uint8_t *id, size_t len)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = '\0';
}

/* Open PATH as ELF and check its build-id against the recorded one. */
static int try_candidate(hwc_symbols *s, struct hwc__dso *d, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int err = 0;
	GElf_Ehdr eh;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		err = -ENOEXEC;
		goto out;
	}
	const void *bid;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bid);
	if (d->bidlen && (n != (ssize_t)d->bidlen || memcmp(bid, d->bid, d->bidlen))) {
		err = -ESTALE;
		goto out;
	}
	size_t nph;
	if (elf_getphdrnum(elf, &nph) == 0)
		for (size_t i = 0; i < nph && d->nloads < HWC_ARRAY_SIZE(d->loads); i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				d->loads[d->nloads++] = (struct hwc__load){ph.p_offset, ph.p_vaddr,
									   ph.p_filesz};
		}
	d->et_exec = eh.e_type == ET_EXEC;
	d->path = intern(s, path);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* Find the DSO's file (by build-id when one was recorded) and report it to
 * a libdwfl session of its own. */
void hwc__dso_load(hwc_symbols *s, struct hwc__dso *d)
{
	d->state = -1;
	if (pseudo_file(d->name)) {
		d->why = "no file backs this mapping";
		return;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s", d->name);
	size_t len = strlen(path);
	static const char deleted[] = " (deleted)";
	if (len > sizeof(deleted) - 1 && strcmp(path + len - (sizeof(deleted) - 1), deleted) == 0)
		path[len - (sizeof(deleted) - 1)] = '\0';
	struct hwc__bid *b = hwc__map_get(&s->buildids, (uint64_t)(uintptr_t)intern(s, path));
	if (!b)
		b = hwc__map_get(&s->buildids, (uint64_t)(uintptr_t)d->name);
	if (b) {
		memcpy(d->bid, b->id, b->len);
		d->bidlen = b->len;
	}
	int err = try_candidate(s, d, path);
	if (err && d->bidlen) {
		char h[41], cand[4200];
		hex(h, d->bid, d->bidlen);
		const char *home = getenv("HOME");
		const char *fmts[] = {"/usr/lib/debug/.build-id/%.2s/%s.debug", "%s/.debug/.build-id/%.2s/%s/elf",
				      "%s/.debug/.build-id/%.2s/%s"};
		for (size_t i = 0; i < 3 && err; i++) {
			if (i == 0)
				snprintf(cand, sizeof(cand), fmts[0], h, h + 2);
			else if (home)
				snprintf(cand, sizeof(cand), fmts[i], home, h, h + 2);
			else
				continue;
			int e = try_candidate(s, d, cand);
			if (!e)
				err = 0;
		}
	}
	if (err) {
		d->why = err == -ESTALE ? "its build-id differs from the recorded one"
				       : err == -ENOENT ? "the file no longer exists"
				       : err == -EACCES ? "permission denied"
				       : "not a readable ELF file";
		return;
	}
	d->dwfl = dwfl_begin(&dso_callbacks);
	if (!d->dwfl) {
		d->why = "libdwfl failed";
		return;
	}
	dwfl_report_begin(d->dwfl);
	d->mod = dwfl_report_elf(d->dwfl, d->name, d->path, -1, 0, false);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!d->mod) {
		d->why = dwfl_errmsg(-1);
		dwfl_end(d->dwfl);
		d->dwfl = NULL;
		return;
	}
	d->state = 1;
}

/* File offset within the DSO to its ELF virtual address. */
uint64_t hwc__dso_vaddr(const struct hwc__dso *d, uint64_t off)
{
	for (size_t i = 0; i < d->nloads; i++)
		if (off >= d->loads[i].offset && off - d->loads[i].offset < d->loads[i].filesz)
			return off - d->loads[i].offset + d->loads[i].vaddr;
	return off;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return n;
}

/* With HWC_SYM_INLINE: the chain of inlined scopes around ADDR, innermost
 * first, each at its line, ending in OUTER (the ELF symbol's location) at
 * the call site of the outermost inlined scope. */
static const struct hwc_location *inline_chain(hwc_symbols *s, struct hwc__dso *d, uint64_t addr,
					       struct hwc_location *outer)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(d->mod, addr, &bias);
	Dwarf_Die *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	if (n <= 0)
		return outer;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	const struct hwc_location *first = outer;
	struct hwc_location *prev = NULL;
	const char *file = outer->file;
	unsigned line = outer->line;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		const char *name = die_name(&scopes[i]);
		name = intern(s, name ? name : "[inlined]");
		const struct hwc_symbol *sym =
			symbol_at(s, &d->inline_syms, name, d->name, hwc__hash_str(name), 0, true, false);
		struct hwc_location *l = new_location(s, sym, outer->dso_offset);
		if (!l)
			break;
		l->file = file;
		l->line = line;
		if (prev)
			prev->inlined_into = l;
		else
			first = l;
		prev = l;
		/* The caller of this scope is at its call site. */
		Dwarf_Attribute a;
		Dwarf_Word fileno = 0, cline = 0;
		dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &fileno);
		dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cline);
		const char *cfile = files && fileno < nfiles ? dwarf_filesrc(files, fileno, NULL, NULL)
							     : NULL;
		file = cfile ? intern(s, cfile) : NULL;
		line = (unsigned)cline;
	}
	free(scopes);
	if (prev) {
		prev->inlined_into = outer;
		outer->file = file;
		outer->line = line;
	}
	return first;
}

static const struct hwc_location *resolve_in_dso(hwc_symbols *s, struct hwc__dso *d, uint64_t off)
{
	if (d->state == 0)
		hwc__dso_load(s, d);
	uint64_t rel = d->state > 0 ? hwc__dso_vaddr(d, off) : off;
	const struct hwc_location *cached = hwc__map_get(&d->locs, rel);
	if (cached)
		return cached;
	const struct hwc_symbol *sym = NULL;
	const char *file = NULL;
	int line = 0;
	if (d->state > 0) {
		GElf_Off symoff;
		GElf_Sym esym;
		const char *name = dwfl_module_addrinfo(d->mod, rel, &symoff, &esym, NULL, NULL, NULL);
		if (name) {
			/* Drop the symbol version ("memcpy@@GLIBC_2.14"), as perf shows names. */
			char plain[1024];
			const char *at = strchr(name, '@');
			if (at && at != name && (size_t)(at - name) < sizeof(plain)) {
				memcpy(plain, name, (size_t)(at - name));
				plain[at - name] = '\0';
				name = plain;
			}
			sym = symbol_at(s, &d->syms, intern(s, name), d->name, rel - symoff, esym.st_size,
					true, false);
		}
		if (s->flags & (HWC_SYM_SRCLINE | HWC_SYM_INLINE)) {
			Dwfl_Line *l = dwfl_module_getsrc(d->mod, rel);
			if (l)
				file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		}
	}
	if (!sym)
		sym = symbol_at(s, &d->syms, s->unknown, d->name, rel, 0, false, false);
	struct hwc_location *loc = new_location(s, sym, rel);
	if (!loc)
		return &s->oom_location;
	if (file) {
		loc->file = intern(s, file);
		loc->line = line > 0 ? (unsigned)line : 0;
	}
	const struct hwc_location *res = loc;
	if (s->flags & HWC_SYM_INLINE && d->state > 0)
		res = inline_chain(s, d, rel, loc);
	hwc__map_put(&d->locs, rel, (void *)res);
	return res;
}

/* ------------------------------------------------------------ processes */

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
		return -ENOMEM;
	if (p->nmaps == p->capmaps) {
		size_t cap = p->capmaps ? p->capmaps * 2 : 16;
		void *m = realloc(p->maps, cap * sizeof(*p->maps));
		if (!m)
			return -ENOMEM;
		p->maps = m;
		p->capmaps = cap;
	}
	struct hwc__dso *d = hwc__dso_get(s, name);
	if (!d)
		return -ENOMEM;
	p->maps[p->nmaps++] = (struct hwc__mapping){start, start + len, pgoff, time, d};
	p->generation++;
	return 0;
}

struct thread_comm {
	uint64_t time;
	const char *comm;
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
		return -ENOMEM;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 2;
		void *v = realloc(t->v, cap * sizeof(*t->v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	/* A name read earlier in the file but stamped after this exec (perf
	 * synthesizes the workload's pre-exec name) only applies before it. */
	for (size_t i = 0; exec && i < t->n; i++)
		if (t->v[i].time > time)
			t->v[i].time = 0;
	t->v[t->n++] = (struct thread_comm){time, intern(s, comm)};
	return 0;
}

HWC_EXPORT const char *hwc_symbols_comm(hwc_symbols *s, uint32_t tid, uint64_t time)
{
	/* Walk up the fork chain while the thread had no name of its own yet;
	 * bounded, in case a corrupt file makes the chain a cycle. */
	for (int depth = 0; depth < 64; depth++) {
		struct hwc__thread *t = hwc__map_get(&s->threads, tid);
		if (!t)
			return s->unknown;
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
				return -ENOMEM;
			if (child != parent && !child->parent) {
				child->parent = parent;
				child->fork_time = time;
			}
		}
		if (tid != ptid) {
			struct hwc__thread *t = thread_get(s, tid);
			if (!t)
				return -ENOMEM;
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
	if (len > 20 || len == 0)
		return hwc__fail(-EINVAL, "build-id of %zu bytes for %s (expected 1..20)", len, filename);
	const char *name = intern(s, filename);
	struct hwc__bid *b = hwc__map_get(&s->buildids, (uint64_t)(uintptr_t)name);
	if (!b) {
		b = hwc__arena_alloc(&s->arena, sizeof(*b));
		if (!b || hwc__map_put(&s->buildids, (uint64_t)(uintptr_t)name, b))
			return -ENOMEM;
	}
	memcpy(b->id, id, len);
	b->len = len;
	return 0;
}

HWC_EXPORT int hwc_symbols_load(hwc_symbols *s, hwc_perfdata *f)
{
	for (size_t i = 0; i < hwc_perfdata_nbuildids(f); i++) {
		const struct hwc_perfdata_buildid *b = hwc_perfdata_buildid(f, i);
		if (b->size)
			hwc_symbols_add_buildid(s, b->filename, b->id, b->size);
	}
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

HWC_EXPORT const struct hwc_location *hwc_symbols_resolve(hwc_symbols *s, uint32_t pid,
							  uint64_t time, uint64_t addr, bool kernel)
{
	if (kernel)
		return resolve_kernel(s, addr);
	struct hwc__proc *p = hwc__proc_get(s, pid, false);
	const struct hwc__mapping *m = p ? hwc__find_map(p, addr, time) : NULL;
	if (!m) {
		const struct hwc_location *loc = hwc__map_get(&s->unknown_locs, addr);
		if (loc)
			return loc;
		const struct hwc_symbol *sym =
			symbol_at(s, &s->unknown_syms, s->unknown, s->unknown, addr, 0, false, false);
		struct hwc_location *l = new_location(s, sym, addr);
		if (!l)
			return &s->oom_location;
		hwc__map_put(&s->unknown_locs, addr, l);
		return l;
	}
	return resolve_in_dso(s, m->dso, addr - m->start + m->pgoff);
}

HWC_EXPORT size_t hwc_symbols_problems(const hwc_symbols *s,
				       void (*fn)(const char *dso, const char *why, void *arg),
				       void *arg)
{
	size_t n = 0;
	for (const struct hwc__dso *d = s->dso_list; d; d = d->next) {
		if (d->state >= 0 || pseudo_file(d->name))
			continue;
		n++;
		if (fn)
			fn(d->name, d->why, arg);
	}
	if (s->kallsyms_why && s->kernel_used) {
		n++;
		if (fn)
			fn(s->kernel_dso, s->kallsyms_why, arg);
	}
	return n;
}

HWC_EXPORT int hwc_symbols_new(hwc_symbols **out, unsigned flags)
{
	*out = NULL;
	hwc_symbols *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->flags = flags;
	s->unknown = intern(s, "[unknown]");
	s->kernel_dso = intern(s, "[kernel.kallsyms]");
	s->oom_symbol = (struct hwc_symbol){"[out of memory]", "[unknown]", 0, 0, false, false};
	s->oom_location.sym = &s->oom_symbol;
	elf_version(EV_CURRENT);
	*out = s;
	return 0;
}

HWC_EXPORT void hwc_symbols_free(hwc_symbols *s)
{
	if (!s)
		return;
	for (struct hwc__dso *d = s->dso_list; d; d = d->next) {
		if (d->dwfl)
			dwfl_end(d->dwfl);
		hwc__map_free(&d->locs);
		hwc__map_free(&d->syms);
		hwc__map_free(&d->inline_syms);
	}
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
	hwc__map_free(&s->dsos);
	hwc__map_free(&s->buildids);
	hwc__map_free(&s->strings);
	hwc__map_free(&s->kernel_locs);
	hwc__map_free(&s->kernel_syms);
	hwc__map_free(&s->unknown_locs);
	hwc__map_free(&s->unknown_syms);
	free(s->ksyms);
	hwc__arena_free(&s->arena);
	free(s);
}
