/* Addresses to locations: a user address through its process's map to
 * its DSO's symbol (symtab.c), with file and line and the inlined scopes
 * from DWARF when asked; a kernel address through kallsyms. */
#include "dl.h"
#include "symbol_internal.h"

#include <stdlib.h>
#include <string.h>

const char *hwc__die_name(Dwarf_Die *die)
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
	Dwarf_Die *cu = dwfl_module_addrdie(hwc__dso_module(s, d), addr, &bias);
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
		const char *name = hwc__die_name(&scopes[i]);
		name = hwc__display_name(s, hwc__intern(s, name ? name : "[inlined]"));
		const struct hwc_symbol *sym =
			hwc__symbol_at(s, &d->inline_syms, name, d->name, hwc__hash_str(name), 0, true, false);
		struct hwc_location *l = hwc__new_location(s, sym, outer->dso_offset);
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
		file = cfile ? hwc__intern(s, cfile) : NULL;
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

/* The ELF symbol of module address ADDR, as dwfl_module_addrinfo() finds
 * it: from the DSO's sorted table, built on the first lookup, or from libdw
 * itself when the table cannot tell; named by the alias perf would name. */
static const char *elf_symbol(hwc_symbols *s, struct hwc__dso *d, uint64_t addr, uint64_t *start,
			      uint64_t *size)
{
	if (!d->symtab_tried) {
		d->symtab_tried = true;
		hwc__debuginfo_errno = 0;
		d->symtab = hwc__symtab_build(d->mod);
		if (hwc__debuginfo_errno) {
			/* Without its debug file, the DSO's own table would name
			 * the code of functions it lacks after the exported ones
			 * before them: no names, with the reason, rather than
			 * wrong ones without a word. */
			char why[512];
			snprintf(why, sizeof(why), "its debug file could not be looked for: %s",
				 hwc__open_why(s, -hwc__debuginfo_errno));
			d->why = hwc__intern(s, why);
			d->why = d->why ? d->why : "its debug file could not be looked for";
			d->state = -1;
			hwc__symtab_free(d->symtab);
			d->symtab = NULL;
			hwc__dso_release(d);
			return NULL;
		}
		d->plt = hwc__plt_build(d->mod);
		/* The table answers alone (but for labels: libdw's, opened
		 * again): the file's mapping and libdw's tables can go, the
		 * most of a report of many programs' memory.  Not when each
		 * address's source line is read too.  Only here, before any
		 * symbol of D is known: a module opened again stays (the bytes
		 * hwc_symbols_code() gives are in it). */
		if (d->symtab && !(s->flags & (HWC_SYM_SRCLINE | HWC_SYM_INLINE)))
			hwc__dso_release(d);
	}
	/* The PLT has no symbols of its own (libdw would name what precedes
	 * it, or nothing): its stubs first. */
	const char *name = d->plt ? hwc__plt_lookup(d->plt, addr, start, size) : NULL;
	if (name)
		return name;
	int found = d->symtab ? hwc__symtab_lookup(d->symtab, addr, &name, start, size) : -1;
	Dwfl_Module *mod = found < 0 ? hwc__dso_module(s, d) : NULL;
	if (mod) {
		GElf_Off off;
		GElf_Sym esym;
		name = dwfl_module_addrinfo(mod, addr, &off, &esym, NULL, NULL, NULL);
		if (name) {
			*start = addr - off;
			*size = esym.st_size;
		}
	}
	if (name && d->symtab) {
		name = hwc__symtab_alias(d->symtab, *start, name); /* the one perf names */
		if (!*size) /* so that every consumer reads where it ends, as perf */
			*size = hwc__symtab_extent(d->symtab, *start);
	}
	return name;
}

static const struct hwc_location *resolve_in_dso(hwc_symbols *s, struct hwc__dso *d, uint64_t off)
{
	if (d->state == 0)
		hwc__dso_load(s, d);
	return hwc__resolve_vaddr(s, d, d->state > 0 ? hwc__dso_vaddr(d, off) : off);
}

const struct hwc_location *hwc__resolve_vaddr(hwc_symbols *s, struct hwc__dso *d, uint64_t rel)
{
	const struct hwc_location *cached = hwc__map_get(&d->locs, rel);
	if (cached)
		return cached;
	const struct hwc_symbol *sym = NULL;
	const char *file = NULL;
	int line = 0;
	if (d->state > 0) {
		uint64_t start, size;
		const char *name = elf_symbol(s, d, rel, &start, &size);
		if (name) {
			/* The name as the symbol table has it, a version included
			 * ("pthread_cond_signal@@GLIBC_2.3.2" in glibc's .symtab), as
			 * perf names it. */
			sym = hwc__symbol_at(s, &d->syms, hwc__display_name(s, hwc__intern(s, name)),
					     d->name, start, size, true, false);
		}
		if (s->flags & (HWC_SYM_SRCLINE | HWC_SYM_INLINE)) {
			Dwfl_Line *l = dwfl_module_getsrc(hwc__dso_module(s, d), rel);
			if (l)
				file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		}
	}
	if (!sym)
		sym = hwc__symbol_at(s, &d->syms, s->unknown, d->name, rel, 0, false, false);
	struct hwc_location *loc = hwc__new_location(s, sym, rel);
	if (!loc)
		return &s->oom_location;
	if (file) {
		loc->file = hwc__intern(s, file);
		loc->line = line > 0 ? (unsigned)line : 0;
	}
	const struct hwc_location *res = loc;
	if (s->flags & HWC_SYM_INLINE && d->state > 0)
		res = inline_chain(s, d, rel, loc);
	hwc__map_put(&d->locs, rel, (void *)res);
	return res;
}

/* Does one map of P alone cover ADDR (its own, not its parent's)? */
static bool only_map(const struct hwc__proc *p, uint64_t addr)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nmaps; i++)
		n += addr >= p->maps[i].start && addr < p->maps[i].end;
	return n == 1;
}

HWC_EXPORT const struct hwc_location *hwc_symbols_resolve(hwc_symbols *s, uint32_t pid,
							  uint64_t time, uint64_t addr, bool kernel)
{
	/* Most samples repeat addresses seen before: the cache first. */
	if (!s->recent)
		s->recent = calloc(HWC__NRECENT, sizeof(*s->recent));
	struct hwc__recent *r = NULL;
	if (s->recent) {
		uint64_t h = (addr ^ (uint64_t)pid << 40 ^ kernel) * 0x9e3779b97f4a7c15ULL;
		r = &s->recent[h >> 52 & (HWC__NRECENT - 1)];
		if (r->loc && r->addr == addr && r->kernel == kernel &&
		    (kernel || (r->proc->pid == pid && r->generation == r->proc->generation)))
			return r->loc;
	}
	if (kernel) {
		const struct hwc_location *loc = hwc__resolve_kernel(s, addr);
		if (r && loc != &s->oom_location)
			*r = (struct hwc__recent){NULL, addr, 0, true, loc};
		return loc;
	}
	struct hwc__proc *p = hwc__proc_get(s, pid, false);
	const struct hwc__mapping *m = p ? hwc__find_map(p, addr, time) : NULL;
	if (r && m && m >= p->maps && m < p->maps + p->nmaps && only_map(p, addr)) {
		const struct hwc_location *loc = resolve_in_dso(s, m->dso, addr - m->start + m->pgoff);
		if (loc != &s->oom_location)
			*r = (struct hwc__recent){p, addr, p->generation, false, loc};
		return loc;
	}
	if (!m) {
		const struct hwc_location *loc = hwc__map_get(&s->unknown_locs, addr);
		if (loc)
			return loc;
		const struct hwc_symbol *sym =
			hwc__symbol_at(s, &s->unknown_syms, s->unknown, s->unknown, addr, 0, false, false);
		struct hwc_location *l = hwc__new_location(s, sym, addr);
		if (!l)
			return &s->oom_location;
		hwc__map_put(&s->unknown_locs, addr, l);
		return l;
	}
	return resolve_in_dso(s, m->dso, addr - m->start + m->pgoff);
}
