/*
 * libhwc symbolization: which function, file and line an address of a
 * recorded process was in.  Feed it the recording's address-space records
 * (MMAP, MMAP2, COMM, FORK, EXIT) and build-ids, then resolve sample
 * addresses.  Symbols come from ELF .symtab/.dynsym and DWARF (elfutils),
 * found by build-id: the file at its recorded path when its build-id
 * matches, else /usr/lib/debug/.build-id/ and ~/.debug/.build-id/; kernel
 * addresses from /proc/kallsyms (a module's: DSO "[module]").  Names are
 * the symbol table's, a version included ("memcpy@@GLIBC_2.14"), as perf
 * shows them.  An address nothing explains resolves to
 * the symbol "[unknown]" of its DSO (or of "[unknown]") with its offset:
 * never dropped.  Each distinct address is resolved once and cached.
 */
#ifndef HWC_SYMBOL_H
#define HWC_SYMBOL_H

#include <hwc/perfdata.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hwc_symbols hwc_symbols;

/* Flags for hwc_symbols_new. */
#define HWC_SYM_SRCLINE 0x1u /* resolve source file:line (DWARF line tables) */
#define HWC_SYM_INLINE 0x2u  /* describe inlined functions (DWARF scopes) */
/* Demangle C++ and Rust (legacy and v0) function names as binutils'
 * c++filt does (libiberty, with parameter types): "ns::f<int>(int)",
 * "f(int)@plt" for its PLT stub.  Kernel symbols are left as they are. */
#define HWC_SYM_DEMANGLE 0x4u
/* Read the kernel's symbols (/proc/kallsyms) on a thread of their own from
 * hwc_symbols_load() on, while it reads the recording's maps, when the
 * recording's events may sample the kernel.  The results are the same. */
#define HWC_SYM_THREAD 0x8u

/* A function of a DSO (interned: one pointer per function). */
struct hwc_symbol {
	const char *name; /* "[unknown]" when no symbol covers the address */
	const char *dso;  /* the mapped file as recorded, "[kernel.kallsyms]", "[vdso]", "[unknown]" */
	uint64_t start;   /* DSO-relative start (an unknown symbol: the address's offset) */
	uint64_t size;
	bool known;
	bool kernel;
};

/* Where one address is.  With HWC_SYM_INLINE, an address in code inlined
 * into F is the inlined function, and INLINED_INTO gives F at the call site. */
struct hwc_location {
	const struct hwc_symbol *sym;
	uint64_t dso_offset;  /* address relative to the DSO (its ELF virtual address) */
	const char *file;     /* source file (HWC_SYM_SRCLINE), or NULL */
	unsigned line;
	const struct hwc_location *inlined_into;
};

int hwc_symbols_new(hwc_symbols **out, unsigned flags);

/* Look for the recorded files under the directory ROOT (a copy of the
 * recorded machine's tree, as FreeBSD pmcstat -r and perf --symfs): a DSO
 * recorded as /usr/lib/x.so is read from ROOT/usr/lib/x.so, then from the
 * build-id caches.  NULL or "" (the default): the recorded paths.  Call it
 * before the first hwc_symbols_resolve().  -EINVAL if ROOT is not a
 * directory, -ENOMEM. */
int hwc_symbols_set_root(hwc_symbols *s, const char *root);
void hwc_symbols_free(hwc_symbols *s);

/* FILENAME had build-id ID when recorded (the BUILD_ID feature, MMAP2). */
int hwc_symbols_add_buildid(hwc_symbols *s, const char *filename, const uint8_t *id, size_t len);

/* Feed one record of the recording in file order: MMAP, MMAP2, COMM, FORK
 * and EXIT change the address spaces and names; other types are ignored.
 * ATTR gives the sample_id trailer's layout (times).  -EINVAL for a record
 * too short for its fields. */
int hwc_symbols_record(hwc_symbols *s, const struct perf_event_header *hdr,
		       const struct perf_event_attr *attr);

/* The BUILD_ID feature plus every address-space record of F (rewinds F). */
int hwc_symbols_load(hwc_symbols *s, hwc_perfdata *f);
/* What hwc_symbols_load() takes of F besides its records: the BUILD_ID
 * feature, and with HWC_SYM_THREAD the kernel's symbols started on their
 * thread.  A reader that walks F's records itself then feeds every one to
 * hwc_symbols_record(). */
void hwc_symbols_load_header(hwc_symbols *s, hwc_perfdata *f);

/* Symbolize a live sampler's records: describe in S what existed on
 * SMP's target before it started, from /proc (every process for a CPUS
 * target, the target process otherwise, nothing for a command, whose exec
 * comes in the records), as hwc_recording_add_sampler() does in a file.
 * Call it once, after hwc_sampler_start() so that no task is missed, then
 * feed every record hwc_sampler_next() returns to hwc_symbols_record(). */
int hwc_symbols_add_sampler(hwc_symbols *s, const hwc_sampler *smp);

/* Resolve ADDR of process PID at TIME (KERNEL: a kernel address).  Never
 * fails: unknown addresses give an "[unknown]" symbol.  The result lives as
 * long as S. */
const struct hwc_location *hwc_symbols_resolve(hwc_symbols *s, uint32_t pid, uint64_t time,
					       uint64_t addr, bool kernel);

/* Keep the running kernel's vDSO image (all processes share it) where
 * perf's build-id cache keeps it, $HOME/.debug/[vdso]/BUILDID/vdso, for
 * hwc_symbols_resolve() to name "[vdso]" addresses of a recording, also on
 * another boot.  PATH (SIZE bytes; NULL allowed) gets the file's name.
 * Missing directories are made (an existing one must not be a symbolic
 * link); a file already there is kept: 0 if it is this image, -EEXIST if
 * not.  -ENOENT without HOME or vDSO, or an hwc_output_create() error. */
int hwc_symbols_save_vdso(char *path, size_t size);

/* Copy /proc/kallsyms where perf record copies it,
 * $HOME/.debug/[kernel.kallsyms]/BUILDID/kallsyms (BUILDID the running
 * kernel's), with perf's link to it: a report of this boot's recordings
 * reads the copy instead of having the kernel format /proc/kallsyms.
 * PATH (SIZE bytes; NULL allowed) gets the file's name.  Missing
 * directories are made (an existing one must not be a symbolic link); a
 * file already there is kept: 0 if it begins as /proc/kallsyms does (this
 * boot's), -EEXIST if not.  -EPERM when /proc/kallsyms hides its addresses
 * from the caller, -ENOENT without HOME or kernel build-id, or an
 * hwc_output_create() error. */
int hwc_symbols_save_kallsyms(char *path, size_t size);

/* The command name of thread TID at TIME ("[unknown]" if never named;
 * "swapper", as perf says, for the idle task, thread 0). */
const char *hwc_symbols_comm(hwc_symbols *s, uint32_t tid, uint64_t time);

/* The span of time [*FROM, *TO) around TIME (*TO past it) over which every
 * address of process PID resolves (hwc_symbols_resolve) and thread TID is
 * named (hwc_symbols_comm) as at TIME, given the records fed so far: a
 * profile may resolve the samples of one span once. */
void hwc_symbols_span(hwc_symbols *s, uint32_t pid, uint32_t tid, uint64_t time, uint64_t *from,
		      uint64_t *to);

/* Unwind a sample that carries PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER
 * with DWARF CFI (libdwfl): fills IPS (innermost first, the sampled ip
 * included) and returns how many, or -errno (-ENOTSUP: neither x86_64 nor arm64, or the
 * sample lacks registers or stack).  Frames libdwfl cannot step past end the
 * chain; they are not an error. */
int hwc_symbols_unwind(hwc_symbols *s, const struct hwc_sample *sample,
		       const struct perf_event_attr *attr, uint64_t *ips, size_t max);

/* The machine code of a function, as its DSO's file holds it. */
struct hwc_code {
	const uint8_t *bytes; /* SIZE bytes, valid as long as the hwc_symbols */
	size_t size;
	uint64_t start;       /* the DSO-relative address of bytes[0]: the symbol's start */
	unsigned machine;     /* the file's ELF e_machine (EM_X86_64, EM_AARCH64, ...) */
};

/* The code of SYM, a known function of a DSO that hwc_symbols_resolve()
 * returned, read from the file its symbols came from (for
 * hwc_annotate-style listings).  -ENOTSUP for a kernel function (no kernel
 * image is read), -ENOENT when SYM is no known symbol or its DSO's file
 * could not be read (the detail says why, as hwc_symbols_problems() does),
 * -ENODATA when the file holds no code there (a debug file, a symbol of
 * size 0). */
int hwc_symbols_code(hwc_symbols *s, const struct hwc_symbol *sym, struct hwc_code *code);

/* Where DSO-relative address ADDR of SYM's DSO is, as hwc_symbols_resolve()
 * says of an address a process maps there (the same cached location): the
 * function a branch of SYM goes to, say.  NULL (with the detail) when SYM
 * is not a known function of a DSO whose file could be read. */
const struct hwc_location *hwc_symbols_resolve_in(hwc_symbols *s, const struct hwc_symbol *sym,
						  uint64_t addr);

/* The source of one instruction. */
struct hwc_srcline {
	const char *file;     /* as the DWARF line table names it */
	unsigned line;
	const char *function; /* the function whose code it is: an inlined one by its own
			       * name (demangled with HWC_SYM_DEMANGLE), or NULL */
};

/* Where DSO-relative address ADDR of SYM's DSO comes from (DWARF line
 * table and scopes), whatever the flags of S.  0, -ENOENT when the DWARF
 * data says nothing of ADDR (or SYM's DSO has no usable file). */
int hwc_symbols_srcline(hwc_symbols *s, const struct hwc_symbol *sym, uint64_t addr,
			struct hwc_srcline *out);

/* How many DSOs were asked for and could not be read, did not match
 * their recorded build-id, or whose separate debug file could not be
 * looked for (no descriptor left); their addresses resolved to "[unknown]".  Calls
 * FN(name, why, ARG) for each when FN is not NULL.  A loaded kernel
 * module's file that was found but cannot be used (corrupt, truncated, or
 * another build than the loaded module) counts too, named "[MODULE]", WHY
 * "FILE: REASON": its addresses are named from /proc/kallsyms. */
size_t hwc_symbols_problems(const hwc_symbols *s,
			    void (*fn)(const char *dso, const char *why, void *arg), void *arg);

#ifdef __cplusplus
}
#endif
#endif
