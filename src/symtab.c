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
 * 4. Otherwise, after both passes, a label at the highest start below the
 *    address may be the answer, depending on sections and on what reaches
 *    past it.
 *
 * The table answers rules 1 and 2 itself, and says "no symbol" when no
 * label could be the answer either.  Where a label could be (rules 3 and
 * 4), it leaves the answer to libdw: its label rules vary between elfutils
 * releases (the section of an address differs for sanitizer runtimes), and
 * labels are rare enough that the per-address cache above absorbs the cost.
 * What libdw does differently for relocatable files and for function
 * descriptors (ppc64) is not reproduced: such modules get no table. */
#include "dl.h"
#include "symbol_internal.h"

#include <stdlib.h>
#include <string.h>

/* One symbol in 24 bytes: a table of a large library (libpython's 15000
 * symbols) is built once and kept for the whole report, its file let go
 * (symbol_resolve.c), so it holds its names itself, in one pool. */
struct entry {
	uint64_t value;  /* first: at_or_below() */
	uint32_t reach;  /* the highest end (value + size) of this entry and all before it,
			  * less value */
	uint32_t size;
	uint32_t name;   /* offset in the pool */
	unsigned index : 28; /* in the symbol table: perf's order */
	unsigned bind : 2;   /* libdw's preference: global 3, weak 2, local 1, others 0 */
	bool local : 1;      /* in libdw's second pass: it scans the globals, then the locals,
			      * each in table order */
	bool code : 1;       /* a function or a label: what ends a sizeless one */
};

struct hwc__symtab {
	struct entry *e; /* by value, then libdw's scan order */
	size_t n;
	char *pool;      /* the names, each NUL-terminated */
	size_t pool_len, pool_cap;
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

/* Does X come before Y in libdw's scan? */
static bool scanned_before(const struct entry *x, const struct entry *y)
{
	return x->local != y->local ? !x->local : x->index < y->index;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return scanned_before(x, y) ? -1 : scanned_before(y, x);
}

static const char *name_of(const struct hwc__symtab *t, const struct entry *e)
{
	return t->pool + e->name;
}

/* Copy NAME into T's pool: false without memory or room. */
static bool keep_name(struct hwc__symtab *t, const char *name, uint32_t *at)
{
	size_t len = strlen(name) + 1;
	if (t->pool_len + len > UINT32_MAX ||
	    hwc__reserve(&t->pool, &t->pool_cap, t->pool_len + len, 1))
		return false;
	memcpy(t->pool + t->pool_len, name, len);
	*at = (uint32_t)t->pool_len;
	t->pool_len += len;
	return true;
}

/* Symbols LO..HI-1 of MOD's table into T, in scan order.  False when one
 * does not fit the rules above (its range wraps around) or the entries
 * (a size or an index that does not fit them), or without memory. */
static bool add_pass(struct hwc__symtab *t, Dwfl_Module *mod, int lo, int hi, bool local)
{
	for (int i = lo; i < hi; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue; /* never an answer, and never in the way of one */
		if (value + sym.st_size < value || sym.st_size > UINT32_MAX || i >= 1 << 28)
			return false;
		struct entry *e = &t->e[t->n];
		*e = (struct entry){
			.value = value,
			.size = (uint32_t)sym.st_size,
			.index = (unsigned)i,
			.bind = bind_rank(&sym),
			.local = local,
			.code = type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE,
		};
		if (!keep_name(t, name, &e->name))
			return false;
		t->n++;
	}
	return true;
}

void hwc__symtab_free(struct hwc__symtab *t)
{
	if (!t)
		return;
	free(t->e);
	free(t->pool);
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
	if (t->n) /* qsort's array may not be NULL, even empty */
		qsort(t->e, t->n, sizeof(*t->e), cmp_entry);
	/* Fits 32 bits: the values are sorted, so reach - value is at most the
	 * size of the entry that ends at reach, and add_pass() refuses sizes
	 * over UINT32_MAX and ranges that wrap. */
	uint64_t reach = 0;
	for (size_t i = 0; i < t->n; i++) {
		uint64_t end = t->e[i].value + t->e[i].size;
		reach = end > reach ? end : reach;
		t->e[i].reach = (uint32_t)(reach - t->e[i].value);
	}
	/* Only what was kept: the doubling left up to half of the pool unused,
	 * and the entries were sized for every symbol. */
	char *pool = t->pool_len ? realloc(t->pool, t->pool_len) : NULL;
	if (pool)
		t->pool = pool, t->pool_cap = t->pool_len;
	struct entry *e = t->n ? realloc(t->e, t->n * sizeof(*e)) : NULL;
	if (e)
		t->e = e;
	return t;
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

/* How many of the N elements of V (STRIDE bytes each, sorted by the
 * address each begins with) begin at or below ADDR. */
static size_t at_or_below(const void *v, size_t n, size_t stride, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;
		memcpy(&key, (const char *)v + mid * stride, sizeof(key));
		if (key <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int hwc__symtab_lookup(const struct hwc__symtab *t, uint64_t addr, const char **name,
		       uint64_t *start, uint64_t *size)
{
	/* Entries at or below ADDR: 0..above-1. */
	size_t above = at_or_below(t->e, t->n, sizeof(*t->e), addr);
	if (above == 0)
		return 0;
	/* The sized symbols containing ADDR; none before the first entry
	 * whose reach passes ADDR. */
	const struct entry *c[MAX_CONTAINING];
	size_t nc = 0;
	for (size_t i = above; i > 0 && t->e[i - 1].value + t->e[i - 1].reach > addr; i--) {
		const struct entry *e = &t->e[i - 1];
		if (e->size == 0 || addr - e->value >= e->size)
			continue;
		if (nc == MAX_CONTAINING)
			return -1;
		/* Keep C in scan order. */
		size_t k = nc++;
		for (; k > 0 && scanned_before(e, c[k - 1]); k--)
			c[k] = c[k - 1];
		c[k] = e;
	}
	const struct entry *found = best_containing(c, nc, false); /* rule 2, globals */
	for (size_t i = above; !found && i > 0 && t->e[i - 1].value == addr; i--)
		if (t->e[i - 1].size == 0 && !t->e[i - 1].local)
			return -1; /* rule 3: libdw's */
	if (!found)
		found = best_containing(c, nc, true); /* rule 2, locals */
	const struct entry *last = &t->e[above - 1];
	for (size_t i = above; !found && last->reach == 0 && i > 0 &&
			       t->e[i - 1].value == last->value;
	     i--)
		if (t->e[i - 1].size == 0)
			return -1; /* rule 4: libdw's */
	if (!found)
		return 0;
	*name = name_of(t, found);
	*start = found->value;
	*size = found->size;
	return 1;
}

/* Aliases: several symbols may start at one address (glibc's memrchr, a
 * weak IFUNC, is also the local IFUNC __memrchr and the local function
 * __memrchr_ifunc; with libc6-dbg all three are in the table).  libdw names
 * the first that binds most strongly; perf keeps one per start address
 * (symbols__fixup_duplicate(), choose_best_symbol() in tools/perf/util/
 * symbol.c), and hwc names what perf names, so that the two read alike:
 * a sized symbol before a sizeless one, then one that is not weak, then a
 * global, then the fewest leading underscores, then the longest name,
 * then the first in the table (clock_gettime@@GLIBC_2.17 before
 * clock_gettime@GLIBC_2.2.5). */
static size_t underscores(const char *s)
{
	return strspn(s, "_");
}

/* Whether perf prefers A to B (same start), of T. */
static bool perf_prefers(const struct hwc__symtab *t, const struct entry *a, const struct entry *b)
{
	if ((a->size > 0) != (b->size > 0))
		return a->size > 0;
	if ((a->bind == 2) != (b->bind == 2)) /* weak */
		return b->bind == 2;
	if ((a->bind == 3) != (b->bind == 3)) /* global */
		return a->bind == 3;
	const char *na = name_of(t, a), *nb = name_of(t, b);
	size_t ua = underscores(na), ub = underscores(nb);
	if (ua != ub)
		return ua < ub;
	size_t la = strlen(na), lb = strlen(nb);
	if (la != lb)
		return la > lb;
	return a->index < b->index;
}

const char *hwc__symtab_alias(const struct hwc__symtab *t, uint64_t start, const char *name)
{
	/* One name per start address, whatever the address looked up in it:
	 * the symbol cache keeps one symbol per start. */
	const struct entry *best = NULL;
	for (size_t i = at_or_below(t->e, t->n, sizeof(*t->e), start);
	     i > 0 && t->e[i - 1].value == start; i--)
		if (!best || perf_prefers(t, &t->e[i - 1], best))
			best = &t->e[i - 1];
	return best ? name_of(t, best) : name;
}

uint64_t hwc__symtab_extent(const struct hwc__symtab *t, uint64_t start)
{
	/* perf's symbols__fixup_end(): up to the next function or label; the
	 * last one to the end of the page after its own. */
	for (size_t i = at_or_below(t->e, t->n, sizeof(*t->e), start); i < t->n; i++)
		if (t->e[i].code)
			return t->e[i].value - start;
	return ((start + 4095) & ~(uint64_t)4095) + 4096 - start;
}

/* ------------------------------------------------------------ PLT stubs */

/* The PLT has no symbols: perf (and objdump) name each stub after the
 * function it jumps to, "NAME@plt", from the relocation of its GOT slot.
 * The stubs are found by what they do rather than by their index, so the
 * lazy PLT (.plt, whose first entry is the resolver's), the IBT PLT
 * (.plt.sec) and the PLT of GOT-bound calls (.plt.got) read alike:
 * x86-64 stubs jump through their slot ("jmp *disp(%rip)", after an
 * endbr64 and a bnd prefix in .plt.sec); AArch64 stubs are the 16-byte
 * entries after the 32-byte header, in relocation order. */
struct plt_stub {
	uint64_t addr, size; /* addr first: at_or_below() */
	char *name;
};

struct hwc__plt {
	struct plt_stub *s; /* by address */
	size_t n;
};

void hwc__plt_free(struct hwc__plt *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i].name);
	free(p->s);
	free(p);
}

/* A GOT slot and the name of what it holds. */
struct slot {
	uint64_t got;
	const char *name; /* libelf's, or NULL: an IRELATIVE slot (see addend) */
	uint64_t addend;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	return x->got < y->got ? -1 : x->got > y->got;
}

static int cmp_stub(const void *a, const void *b)
{
	const struct plt_stub *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* No relocation type. */
#define NONE UINT32_MAX

/* How many relocations at the start of the RELA section at ADDR are
 * R_*_RELATIVE ones: DT_RELACOUNT, when the dynamic table's DT_RELA is
 * that section.  The linker puts them first, and the dynamic loader counts
 * on it; none names a stub's slot, and in a large program they are most of
 * .rela.dyn (libpython's 800 KiB): not reading them spares the pages. */
static size_t relative_relocs(Elf *elf, uint64_t addr)
{
	uint64_t rela = 0, count = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		GElf_Dyn dyn;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && gelf_getdyn(data, (int)i, &dyn) &&
				   dyn.d_tag != DT_NULL;
		     i++) {
			if (dyn.d_tag == DT_RELA)
				rela = dyn.d_un.d_ptr;
			else if (dyn.d_tag == DT_RELACOUNT)
				count = dyn.d_un.d_val;
		}
		break;
	}
	return rela == addr ? count : 0;
}

/* Append to *V the slots of the RELA section SCN: its relocations of the
 * types JUMP, GLOB (named by their symbols) and IREL (by their addend),
 * from the FIRST on. */
static size_t read_slots(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, uint64_t bias,
			 unsigned jump, unsigned glob, unsigned irel, size_t first, struct slot **v,
			 size_t n, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr symsh;
	Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	if (!data || !sh->sh_entsize || !syms || !gelf_getshdr(symscn, &symsh))
		return n;
	for (size_t i = first; i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Rela r;
		if (!gelf_getrela(data, (int)i, &r))
			break;
		unsigned type = (unsigned)GELF_R_TYPE(r.r_info);
		if (type != jump && type != glob && type != irel)
			continue;
		struct slot sl = {.got = r.r_offset + bias, .addend = r.r_addend};
		GElf_Sym sym;
		if (type != irel) {
			if (!gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			sl.name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (!sl.name || !sl.name[0])
				continue;
		}
		if (n == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			struct slot *nv = realloc(*v, *cap * sizeof(**v));
			if (!nv)
				return n;
			*v = nv;
		}
		(*v)[n++] = sl;
	}
	return n;
}

static const struct slot *find_slot(const struct slot *v, size_t n, uint64_t got)
{
	struct slot key = {.got = got};
	return bsearch(&key, v, n, sizeof(*v), cmp_slot);
}

/* The GOT slot the x86-64 stub at ADDR (bytes B[0..LEN)) jumps through. */
static bool x86_stub_slot(const uint8_t *b, size_t len, uint64_t addr, uint64_t *got)
{
	size_t i = 0;
	if (len >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4; /* endbr64 */
	if (i < len && b[i] == 0xf2)
		i++; /* bnd */
	if (i + 6 > len || b[i] != 0xff || b[i + 1] != 0x25)
		return false;
	int32_t disp;
	memcpy(&disp, b + i + 2, 4);
	*got = addr + i + 6 + (uint64_t)(int64_t)disp;
	return true;
}

struct hwc__plt *hwc__plt_build(Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	size_t shstrndx;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL ||
	    elf_getshdrstrndx(elf, &shstrndx) ||
	    (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64))
		return NULL;
	bool x86 = eh.e_machine == EM_X86_64;
	struct slot *slots = NULL;
	size_t nslots = 0, capslots = 0, nplt_relocs = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		bool plt = name && strcmp(name, ".rela.plt") == 0;
		if (!plt && !(x86 && name && strcmp(name, ".rela.dyn") == 0))
			continue;
		size_t before = nslots;
		if (x86)
			nslots = read_slots(elf, scn, &sh, bias, R_X86_64_JUMP_SLOT,
					    plt ? NONE : R_X86_64_GLOB_DAT,
					    plt ? R_X86_64_IRELATIVE : NONE,
					    plt ? 0 : relative_relocs(elf, sh.sh_addr), &slots, nslots,
					    &capslots);
		else if (plt)
			nslots = read_slots(elf, scn, &sh, bias, R_AARCH64_JUMP_SLOT, NONE,
					    R_AARCH64_IRELATIVE, 0, &slots, nslots, &capslots);
		if (plt)
			nplt_relocs = nslots - before;
	}
	struct hwc__plt *p = calloc(1, sizeof(*p));
	if (!p) {
		free(slots);
		return NULL;
	}
	if (x86 && nslots) /* found by GOT address; AArch64's stay in relocation order */
		qsort(slots, nslots, sizeof(*slots), cmp_slot);
	size_t cap = 0;
	for (Elf_Scn *scn = NULL; nslots && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".plt") && strcmp(name, ".plt.sec") &&
			      strcmp(name, ".plt.got")))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		uint64_t esize = x86 ? (sh.sh_entsize ? sh.sh_entsize : 16) : 16;
		uint64_t first = !x86 && strcmp(name, ".plt") == 0 ? 32 : 0;
		if (!data || !data->d_buf || data->d_size < sh.sh_size || (!x86 && first == 0))
			continue;
		for (uint64_t off = first; off + esize <= sh.sh_size; off += esize) {
			uint64_t addr = sh.sh_addr + bias + off;
			const struct slot *sl = NULL;
			uint64_t got;
			if (x86 && x86_stub_slot((const uint8_t *)data->d_buf + off, esize, addr, &got))
				sl = find_slot(slots, nslots, got);
			else if (!x86 && (off - first) / esize < nplt_relocs)
				sl = &slots[(off - first) / esize]; /* in relocation order */
			/* The lazy PLT's first entry is the trampoline to the dynamic
			 * linker's resolver: newer perf names it ".plt". */
			bool header = x86 && !sl && off == 0 && strcmp(name, ".plt") == 0;
			if (!sl && !header)
				continue;
			char buf[512];
			if (header) {
				snprintf(buf, sizeof(buf), ".plt");
			} else {
				const char *what = sl->name;
				if (!what) {
					/* IRELATIVE: the stub reaches what the ifunc resolver
					 * picks; name it after the resolver's symbol, as newer
					 * perf does. */
					GElf_Off o;
					GElf_Sym s;
					what = dwfl_module_addrinfo(mod, sl->addend + bias, &o, &s, NULL,
								    NULL, NULL);
					if (!what || o)
						continue;
				}
				snprintf(buf, sizeof(buf), "%.*s@plt", (int)strcspn(what, "@"), what);
			}
			if (p->n == cap) {
				cap = cap ? cap * 2 : 64;
				struct plt_stub *ns = realloc(p->s, cap * sizeof(*ns));
				if (!ns)
					break;
				p->s = ns;
			}
			p->s[p->n].name = strdup(buf);
			if (!p->s[p->n].name)
				break;
			p->s[p->n].addr = addr;
			p->s[p->n].size = esize;
			p->n++;
		}
	}
	free(slots);
	if (p->n) /* qsort's array may not be NULL, even empty */
		qsort(p->s, p->n, sizeof(*p->s), cmp_stub);
	return p;
}

const char *hwc__plt_lookup(const struct hwc__plt *p, uint64_t addr, uint64_t *start,
			    uint64_t *size)
{
	size_t lo = at_or_below(p->s, p->n, sizeof(*p->s), addr);
	if (lo == 0 || addr - p->s[lo - 1].addr >= p->s[lo - 1].size)
		return NULL;
	*start = p->s[lo - 1].addr;
	*size = p->s[lo - 1].size;
	return p->s[lo - 1].name;
}
