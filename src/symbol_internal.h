/* Internals of the symbolizer (symbol*.c, symtab.c, unwind.c); never installed. */
#ifndef HWC_SYMBOL_INTERNAL_H
#define HWC_SYMBOL_INTERNAL_H

#include "hwc/symbol.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>

/* A bump allocator: everything it hands out lives until the arena is freed. */
struct hwc__arena_chunk {
	struct hwc__arena_chunk *next;
	_Alignas(8) uint8_t mem[];
};
struct hwc__arena {
	struct hwc__arena_chunk *chunk;
	size_t used, cap;
};
void *hwc__arena_alloc(struct hwc__arena *a, size_t n); /* zeroed */
char *hwc__arena_strdup(struct hwc__arena *a, const char *s);
void hwc__arena_free(struct hwc__arena *a);

/* u64 -> non-NULL pointer, open addressing. */
struct hwc__map_slot {
	uint64_t key;
	void *val;
};
struct hwc__map {
	struct hwc__map_slot *slots;
	size_t len, cap;
};
void *hwc__map_get(const struct hwc__map *m, uint64_t key);
int hwc__map_put(struct hwc__map *m, uint64_t key, void *val);
void hwc__map_free(struct hwc__map *m);
uint64_t hwc__hash_str(const char *s);

struct hwc__bid {
	uint8_t id[20];
	size_t len;
};

struct hwc__load {
	uint64_t offset, vaddr, filesz;
};

struct hwc__dso {
	const char *name; /* as recorded (interned) */
	const char *path; /* the file read, once found */
	uint8_t bid[20];
	size_t bidlen;
	int state;        /* 0 not tried, 1 usable, -1 failed (why says why) */
	const char *why;
	bool et_exec;
	struct hwc__load loads[16];
	size_t nloads;
	Dwfl *dwfl;       /* NULL when let go: hwc__dso_module() opens it again */
	Dwfl_Module *mod;
	struct hwc__symtab *symtab; /* its symbols sorted, once looked up (NULL: ask libdw) */
	bool symtab_tried;
	struct hwc__plt *plt;       /* its PLT stubs, built with symtab */
	struct hwc__map locs, syms, inline_syms;
	struct hwc__dso *next;
};

struct hwc__mapping {
	uint64_t start, end, pgoff, time;
	struct hwc__dso *dso;
};

struct hwc__unwind;

struct hwc__proc {
	uint32_t pid;
	struct hwc__mapping *maps;
	size_t nmaps, capmaps;
	unsigned generation;   /* bumped by every new map */
	struct hwc__proc *parent; /* its maps apply before FORK_TIME, until an exec */
	uint64_t fork_time, exec_time;
	struct hwc__unwind *unwind;
	struct hwc__proc *next;
};

struct hwc__kallsyms;

/* A module's file found but not used (symbol_kmod.c): DSO "[NAME]", WHY
 * "PATH: REASON". */
struct hwc__kmod_problem {
	const char *dso, *why;
	struct hwc__kmod_problem *next;
};

/* An address resolved before, in hwc_symbols_resolve()'s cache: a kernel
 * one holds for good; a user one while its process has no new map
 * (generation) and one map alone covers the address, whatever the time. */
struct hwc__recent {
	const struct hwc__proc *proc; /* NULL for the kernel */
	uint64_t addr;
	unsigned generation;
	bool kernel;
	const struct hwc_location *loc;
};
#define HWC__NRECENT 4096

struct hwc_symbols {
	unsigned flags;
	const char *root; /* hwc_symbols_set_root(), interned; NULL: none */
	struct hwc__arena arena;
	struct hwc__map strings, dsos, procs, threads, buildids;
	struct hwc__map demangled; /* interned name -> its interned demangled name */
	struct hwc__dso *dso_list;
	struct hwc__proc *proc_list;
	const char *unknown, *kernel_dso;
	struct hwc__kallsyms *kallsyms; /* the kernel's text symbols, once read (NULL: none) */
	bool kallsyms_tried, kernel_used;
	struct hwc__kallsyms_reader *kallsyms_reader; /* HWC_SYM_THREAD's read under way */
	const char *kallsyms_why;
	Dwfl *kmods; /* the running kernel's modules, their .ko files (symbol_kernel.c) */
	bool kmods_tried;
	struct hwc__kmod_problem *kmod_problems; /* module files that cannot be used */
	struct hwc__map kernel_locs, kernel_syms, unknown_locs, unknown_syms;
	struct hwc_symbol oom_symbol;
	struct hwc_location oom_location;
	struct hwc__recent *recent; /* HWC__NRECENT, made on the first user address */
};

/* symbol.c: interned strings (equal text, equal pointer), symbols and locations. */
const char *hwc__intern(hwc_symbols *s, const char *str);
/* NAME (interned) as the user reads it: with HWC_SYM_DEMANGLE, a C++ or
 * Rust name demangled ("NAME@plt" as its demangled name's stub), interned;
 * otherwise, or when it is no mangled name, NAME itself. */
const char *hwc__display_name(hwc_symbols *s, const char *name);
/* The interned symbol of TABLE starting at START (an unknown: at the
 * address), made on first use. */
const struct hwc_symbol *hwc__symbol_at(hwc_symbols *s, struct hwc__map *table, const char *name,
					const char *dso, uint64_t start, uint64_t size, bool known,
					bool kernel);
/* A new location of SYM at OFF, or NULL when out of memory. */
struct hwc_location *hwc__new_location(hwc_symbols *s, const struct hwc_symbol *sym, uint64_t off);

/* symbol_kernel.c: the location of kernel address ADDR, from kallsyms. */
const struct hwc_location *hwc__resolve_kernel(hwc_symbols *s, uint64_t addr);
/* Start reading kallsyms on a thread of its own (once; nothing when no
 * thread can be had): the first kernel address takes the result. */
void hwc__kallsyms_prefetch(hwc_symbols *s);
/* Drop the kernel's symbols: the read under way (waited for) or taken. */
void hwc__kallsyms_forget(hwc_symbols *s);
/* symbol_kmod.c: may module M (of s->kmods) be named from its file?  Its
 * file is found and checked on first use; when found but unusable, a
 * problem says why. */
bool hwc__kmod_usable(hwc_symbols *s, Dwfl_Module *m);

/* symbol_dso.c */
/* ID (LEN bytes) in hex, ended, into OUT (2 * LEN + 1 bytes). */
void hwc__hex(char *out, const uint8_t *id, size_t len);
struct hwc__dso *hwc__dso_get(hwc_symbols *s, const char *name);
/* No file backs a mapping of this name ("[vdso]", "//anon", ...). */
bool hwc__pseudo_file(const char *name);
/* Why opening a file failed with ERR, for a "no symbols" warning: for
 * -EMFILE the limit and how to raise it. */
const char *hwc__open_why(hwc_symbols *s, int err);
/* Find and open the DSO's file once; d->state says how it went. */
void hwc__dso_load(hwc_symbols *s, struct hwc__dso *d);
/* D's libdwfl module (D loaded), its session opened again when it was let
 * go; NULL (d->why says why) when that fails. */
Dwfl_Module *hwc__dso_module(hwc_symbols *s, struct hwc__dso *d);
/* Let D's libdwfl session go: its file's mapping and libdw's tables. */
void hwc__dso_release(struct hwc__dso *d);
uint64_t hwc__dso_vaddr(const struct hwc__dso *d, uint64_t file_offset);

/* symbol_vdso.c: perf's build-id cache.  PATH gets the file NAME of DSO
 * ("[vdso]", "[kernel.kallsyms]") of build-id ID there,
 * $HOME/.debug/DSO/BUILDID/NAME (-ENOENT without HOME). */
int hwc__cache_path(char *path, size_t size, const char *dso, const uint8_t *id, size_t len,
		    const char *name);
/* Write that file with WRITE_TO(stream, ARG), which returns 0 or -errno,
 * with hwc_output_create() FLAGS (HWC_OUTPUT_PRIVATE), unless a file is
 * there (or appears meanwhile): then 0 if SAME(its descriptor, ARG) is 1,
 * else -EEXIST and it is left as it is.  The directories are made (0700)
 * when missing and walked by descriptor: one that is a symbolic link fails
 * (-ENOTDIR), and HOME or one of them that is not this user's (-EPERM).
 * Then perf's link to the entry, $HOME/.debug/.build-id/XX/REST, unless
 * something is there.  PATH (SIZE bytes, NULL allowed) gets the file's
 * name. */
int hwc__cache_save(const char *dso, const uint8_t *id, size_t len, const char *name,
		    unsigned flags, int (*same)(int fd, void *arg),
		    int (*write_to)(FILE *f, void *arg), void *arg, char *path, size_t size);

/* symbol_proc.c */
struct hwc__proc *hwc__proc_get(hwc_symbols *s, uint32_t pid, bool create);
const struct hwc__mapping *hwc__find_map(const struct hwc__proc *p, uint64_t addr, uint64_t time);
/* Free every process and thread. */
void hwc__procs_free(hwc_symbols *s);

/* symtab.c: a module's symbols sorted by address, giving what
 * dwfl_module_addrinfo() gives in O(log n).  NULL when out of memory or
 * when the module is one whose answers it cannot reproduce (relocatable,
 * ppc64 function descriptors) or whose symbols its entries cannot hold:
 * ask libdw then.  It holds copies of the names: it outlives the module. */
struct hwc__symtab;
struct hwc__symtab *hwc__symtab_build(Dwfl_Module *mod);
/* The symbol dwfl_module_addrinfo() names for module address ADDR: 1 with
 * *NAME (the table's copy), *START and *SIZE; 0 when it names none; -1 when
 * the table cannot tell (ask libdw). */
int hwc__symtab_lookup(const struct hwc__symtab *t, uint64_t addr, const char **name,
		       uint64_t *start, uint64_t *size);
/* The name perf gives a symbol NAME starting at START: of all the symbols
 * starting there (its aliases), the one it prefers. */
const char *hwc__symtab_alias(const struct hwc__symtab *t, uint64_t start, const char *name);
/* The size of a sizeless symbol (an assembly function without .size) at
 * START, as perf gives it: up to the next function's start. */
uint64_t hwc__symtab_extent(const struct hwc__symtab *t, uint64_t start);
void hwc__symtab_free(struct hwc__symtab *t);

/* symtab.c: a module's PLT stubs, named "NAME@plt" as perf names them;
 * NULL when it has none we can read or without memory. */
struct hwc__plt;
struct hwc__plt *hwc__plt_build(Dwfl_Module *mod);
/* The name of the stub containing module address ADDR, or NULL. */
const char *hwc__plt_lookup(const struct hwc__plt *p, uint64_t addr, uint64_t *start,
			    uint64_t *size);
void hwc__plt_free(struct hwc__plt *p);

/* symbol_resolve.c: the location of REL, an address of D's file (its ELF
 * virtual address; D loaded), resolved once and cached. */
const struct hwc_location *hwc__resolve_vaddr(hwc_symbols *s, struct hwc__dso *d, uint64_t rel);
/* symbol_resolve.c: a DWARF function's linkage name, else its name (NULL: none). */
const char *hwc__die_name(Dwarf_Die *die);

/* unwind.c: drop the process's unwinding session. */
void hwc__unwind_forget(struct hwc__proc *p);

#endif
