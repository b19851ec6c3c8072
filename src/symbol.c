/* Symbolization: per-process address maps built from MMAP/MMAP2/FORK/COMM
 * records (symbol_proc.c), one libdwfl module per DSO found by build-id
 * (symbol_dso.c) with its symbol table sorted for lookups (symtab.c),
 * /proc/kallsyms for the kernel (symbol_kernel.c); addresses become
 * locations in symbol_resolve.c, each (DSO, address) once, then cached.
 * This file holds the symbolizer itself: its arena, hash maps and interned
 * strings, symbols and locations, and its life. */
#include "dl.h"
#include "symbol_internal.h"

#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
			return hwc__fail(-ENOMEM, "out of memory");
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
const char *hwc__intern(hwc_symbols *s, const char *str)
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

/* libiberty's demangler, as binutils' c++filt and perf use it: C++ (the
 * Itanium ABI) and Rust, legacy and v0 (DMGL_AUTO tries Rust first, then
 * C++; DMGL_RUST alone would leave C++ names), with the parameter types.
 * It allocates with malloc and returns NULL without memory: it never
 * exits. */
const char *hwc__display_name(hwc_symbols *s, const char *name)
{
	if (!(s->flags & HWC_SYM_DEMANGLE))
		return name;
	const char *known = hwc__map_get(&s->demangled, (uint64_t)(uintptr_t)name);
	if (known)
		return known;
	/* perf names a stub after its target's demangled name: "f(int)@plt". */
	size_t n = strlen(name);
	bool plt = n > 4 && strcmp(name + n - 4, "@plt") == 0;
	char *raw = strndup(name, plt ? n - 4 : n);
	char *d = raw ? cplus_demangle(raw, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO) : NULL;
	const char *res = name;
	if (d) {
		char *full = plt ? NULL : d;
		if (plt && asprintf(&full, "%s@plt", d) < 0)
			full = NULL;
		if (full)
			res = hwc__intern(s, full);
		if (full != d)
			free(full);
	}
	free(d);
	free(raw);
	hwc__map_put(&s->demangled, (uint64_t)(uintptr_t)name, (void *)res);
	return res;
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

struct hwc_location *hwc__new_location(hwc_symbols *s, const struct hwc_symbol *sym, uint64_t off)
{
	struct hwc_location *loc = hwc__arena_alloc(&s->arena, sizeof(*loc));
	if (!loc)
		return NULL;
	loc->sym = sym;
	loc->dso_offset = off;
	return loc;
}

/* Interned symbol of DSO_KEY's table by start (unknowns by address). */
const struct hwc_symbol *hwc__symbol_at(hwc_symbols *s, struct hwc__map *table, const char *name,
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

HWC_EXPORT size_t hwc_symbols_problems(const hwc_symbols *s,
				       void (*fn)(const char *dso, const char *why, void *arg),
				       void *arg)
{
	size_t n = 0;
	for (const struct hwc__dso *d = s->dso_list; d; d = d->next) {
		if (d->state >= 0 || hwc__pseudo_file(d->name))
			continue;
		n++;
		if (fn)
			fn(d->name, d->why, arg);
	}
	for (const struct hwc__kmod_problem *p = s->kmod_problems; p; p = p->next) {
		n++;
		if (fn)
			fn(p->dso, p->why, arg);
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
	hwc__clear_error();
	*out = NULL;
	int err = hwc__load_elfutils();
	if (err)
		return err;
	hwc_symbols *s = calloc(1, sizeof(*s));
	if (!s)
		return hwc__fail(-ENOMEM, "out of memory");
	s->flags = flags;
	s->unknown = hwc__intern(s, "[unknown]");
	s->kernel_dso = hwc__intern(s, "[kernel.kallsyms]");
	s->oom_symbol = (struct hwc_symbol){"[out of memory]", "[unknown]", 0, 0, false, false};
	s->oom_location.sym = &s->oom_symbol;
	*out = s;
	return 0;
}

HWC_EXPORT int hwc_symbols_set_root(hwc_symbols *s, const char *root)
{
	hwc__clear_error();
	if (!root || !*root) {
		s->root = NULL;
		return 0;
	}
	struct stat st;
	if (stat(root, &st) != 0)
		return hwc__fail(-EINVAL, "the root directory \"%s\": %s", root, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return hwc__fail(-EINVAL, "the root directory \"%s\" is not a directory", root);
	if (!(s->root = hwc__intern(s, root)))
		return hwc__fail(-ENOMEM, "out of memory");
	return 0;
}

HWC_EXPORT void hwc_symbols_free(hwc_symbols *s)
{
	if (!s)
		return;
	hwc__kallsyms_forget(s);
	for (struct hwc__dso *d = s->dso_list; d; d = d->next) {
		hwc__symtab_free(d->symtab);
		hwc__plt_free(d->plt);
		hwc__dso_release(d);
		hwc__map_free(&d->locs);
		hwc__map_free(&d->syms);
		hwc__map_free(&d->inline_syms);
	}
	hwc__procs_free(s);
	hwc__map_free(&s->dsos);
	hwc__map_free(&s->buildids);
	hwc__map_free(&s->strings);
	hwc__map_free(&s->demangled);
	hwc__map_free(&s->kernel_locs);
	hwc__map_free(&s->kernel_syms);
	hwc__map_free(&s->unknown_locs);
	hwc__map_free(&s->unknown_syms);
	if (s->kmods)
		dwfl_end(s->kmods);
	free(s->recent);
	hwc__arena_free(&s->arena);
	free(s);
}
