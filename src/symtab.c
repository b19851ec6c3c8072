/* A DSO's symbol table sorted by address, so that finding the symbol of an
 * address is a binary search instead of dwfl_module_addrinfo()'s scan of
 * every symbol on every call (tens of thousands in a large binary).  The
 * answers are exactly libdw's: the entries are the symbols it considers,
 * read with dwfl_module_getsym_info() from the table it reads (.symtab of
 * the file or of its debuginfo, .dynsym, the mini debuginfo), and the
 * lookup applies its rules (elfutils 0.188, libdwfl/dwfl_module_addrsym.c),
 * stated here in terms of the symbols at or below the address:
 *
 * 1. libdw looks at the globals first, and at the locals only when no
 *    global gave an answer.
 * 2. Within a pass, a sized symbol containing the address is the answer.
 *    Among several, in table order, the next one replaces the current when
 *    it starts higher, or binds more strongly (global, weak, local, other),
 *    or starts at the same place, is narrower and binds no weaker.
 * 3. Otherwise a sizeless symbol (an assembly label) exactly at the address
 *    among the globals ends the search without looking at the locals.
 * 4. Otherwise, after both passes, the answer is the last sizeless symbol
 *    in table order at the highest start below the address, provided no
 *    symbol reaches past that start and the label is in the address's
 *    section (a label outside allocated sections: only its own address).
 *
 * What libdw does differently for relocatable files and for function
 * descriptors (ppc64) is not reproduced: such modules get no table and the
 * caller asks libdw. */
#include "internal.h"
#include "symbol_internal.h"

#include <errno.h>
#include <stdlib.h>

struct entry {
	uint64_t value, size;
	uint64_t reach;   /* the highest end (value + size) of this entry and all before it */
	const char *name; /* libelf's string: lives as long as the module */
	uint32_t seq;     /* position in libdw's scan: the globals, then the locals */
	uint8_t bind;     /* libdw's preference: global 3, weak 2, local 1, others 0 */
	bool local;       /* in the second pass */
	bool exact;       /* sizeless outside allocated sections: matches its own address only */
};

struct section {
	uint64_t start, end; /* end included, as libdw has it */
	size_t ndx;
};

struct hwc__symtab {
	struct entry *e; /* by value, then seq */
	size_t n;
	struct section *sec; /* allocated sections by start, then index */
	size_t nsec;
};

/* More sized symbols containing one address than this, and the caller
 * asks libdw (no real binary comes close). */
#define MAX_CONTAINING 64

static uint8_t bind_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_section(const void *a, const void *b)
{
	const struct section *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

/* Symbols LO..HI-1 of MOD's table into T, in scan order.  False when one
 * does not fit the rules above (its range wraps around). */
static bool add_pass(struct hwc__symtab *t, Dwfl_Module *mod, int lo, int hi, bool local)
{
	for (int i = lo; i < hi; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue; /* never an answer, and never in the way of one */
		if (value + sym.st_size < value)
			return false;
		t->e[t->n] = (struct entry){
			.value = value,
			.size = sym.st_size,
			.name = name,
			.seq = (uint32_t)t->n,
			.bind = bind_rank(&sym),
			.local = local,
			.exact = sym.st_size == 0 && shndx >= SHN_LORESERVE,
		};
		t->n++;
	}
	return true;
}

/* The allocated sections of the module's main file, as libdw finds the
 * section of an address.  A file libdw cannot list sections of leaves none:
 * every address is then in no section, all in the same one. */
static int add_sections(struct hwc__symtab *t, Elf *elf, GElf_Addr bias)
{
	size_t shstrndx, nscn;
	if (elf_getshdrstrndx(elf, &shstrndx) < 0 || elf_getshdrnum(elf, &nscn) < 0)
		return 0;
	t->sec = calloc(nscn ? nscn : 1, sizeof(*t->sec));
	if (!t->sec)
		return -ENOMEM;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) ||
		    ((sh.sh_flags & SHF_ALLOC) && !elf_strptr(elf, shstrndx, sh.sh_name))) {
			t->nsec = 0;
			return 0;
		}
		if ((sh.sh_flags & SHF_ALLOC) && t->nsec < nscn)
			t->sec[t->nsec++] = (struct section){sh.sh_addr + bias,
							     sh.sh_addr + bias + sh.sh_size,
							     elf_ndxscn(scn)};
	}
	/* Sorted stably, as glibc's qsort sorts libdw's list. */
	qsort(t->sec, t->nsec, sizeof(*t->sec), cmp_section);
	return 0;
}

void hwc__symtab_free(struct hwc__symtab *t)
{
	if (!t)
		return;
	free(t->e);
	free(t->sec);
	free(t);
}

struct hwc__symtab *hwc__symtab_build(Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL || eh.e_machine == EM_PPC64)
		return NULL;
	struct hwc__symtab *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	int n = dwfl_module_getsymtab(mod);
	int first_global = dwfl_module_getsymtab_first_global(mod);
	if (n > 0 && first_global >= 0) { /* else libdw finds nothing: no entries */
		t->e = malloc((size_t)n * sizeof(*t->e));
		if (!t->e || !add_pass(t, mod, first_global ? first_global : 1, n, false) ||
		    (first_global > 1 && !add_pass(t, mod, 1, first_global, true))) {
			hwc__symtab_free(t);
			return NULL;
		}
	}
	if (add_sections(t, elf, bias)) {
		hwc__symtab_free(t);
		return NULL;
	}
	qsort(t->e, t->n, sizeof(*t->e), cmp_entry);
	uint64_t reach = 0;
	for (size_t i = 0; i < t->n; i++) {
		uint64_t end = t->e[i].value + t->e[i].size;
		reach = end > reach ? end : reach;
		t->e[i].reach = reach;
	}
	return t;
}

/* The index of the section holding ADDR, 0 for none: libdw's search, ties
 * and all (a section's end is in it unless the next starts there). */
static size_t section_of(const struct hwc__symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nsec;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (addr < t->sec[mid].start) {
			hi = mid;
		} else if (addr > t->sec[mid].end) {
			lo = mid + 1;
		} else {
			if (addr == t->sec[mid].end && mid + 1 < t->nsec &&
			    addr == t->sec[mid + 1].start)
				mid++;
			return t->sec[mid].ndx;
		}
	}
	return 0;
}

/* Rule 2 over the containing symbols of one pass, C[N] in scan order. */
static const struct entry *best_containing(const struct entry *const *c, size_t n, bool local)
{
	const struct entry *best = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = c[i];
		if (e->local != local)
			continue;
		if (!best || best->value < e->value || best->bind < e->bind ||
		    (best->value == e->value && best->size > e->size && best->bind <= e->bind))
			best = e;
	}
	return best;
}

int hwc__symtab_lookup(const struct hwc__symtab *t, uint64_t addr, const char **name,
		       uint64_t *start, uint64_t *size)
{
	/* Entries at or below ADDR: 0..above-1. */
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->e[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t above = lo;
	if (above == 0)
		return 0;
	/* The sized symbols containing ADDR; none before the first entry
	 * whose reach passes ADDR. */
	const struct entry *c[MAX_CONTAINING];
	size_t nc = 0;
	for (size_t i = above; i > 0 && t->e[i - 1].reach > addr; i--) {
		const struct entry *e = &t->e[i - 1];
		if (e->size == 0 || addr - e->value >= e->size)
			continue;
		if (nc == MAX_CONTAINING)
			return -1;
		/* Keep C in scan order: insert E by its seq. */
		size_t k = nc++;
		for (; k > 0 && c[k - 1]->seq > e->seq; k--)
			c[k] = c[k - 1];
		c[k] = e;
	}
	const struct entry *found = best_containing(c, nc, false); /* rule 2, globals */
	for (size_t i = above; !found && i > 0 && t->e[i - 1].value == addr; i--) /* rule 3 */
		if (t->e[i - 1].size == 0 && !t->e[i - 1].local)
			found = &t->e[i - 1];
	if (!found)
		found = best_containing(c, nc, true); /* rule 2, locals */
	if (!found) { /* rule 4 */
		const struct entry *last = &t->e[above - 1];
		size_t addr_section = section_of(t, addr);
		for (size_t i = above; last->reach == last->value && i > 0 &&
				       t->e[i - 1].value == last->value;
		     i--) {
			const struct entry *e = &t->e[i - 1];
			if (e->exact ? e->value == addr : section_of(t, e->value) == addr_section) {
				found = e;
				break;
			}
		}
	}
	if (!found)
		return 0;
	*name = found->name;
	*start = found->value;
	*size = found->size;
	return 1;
}
