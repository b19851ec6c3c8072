/* hwc annotate's functions and instructions, shared by its text and JSON
 * (annotate.c) and its HTML page (annotate_html.c). */
#ifndef HWC_ANNOTATE_H
#define HWC_ANNOTATE_H

#include "profile.h"

struct an_insn {
	uint64_t addr; /* DSO-relative */
	unsigned size;
	char mnemonic[32];
	char operands[160];
	uint64_t period, samples;
	struct hwc_srcline src;
};

/* The samples at one user-space address. */
struct an_addr {
	struct rp_link link;            /* first */
	const struct hwc_location *loc; /* libhwc's: one per address of a DSO */
	uint64_t period, samples;
};

struct an_func {
	const struct hwc_symbol *sym;
	struct an_addr **addrs; /* its sampled addresses, in order */
	size_t naddrs;
	uint64_t period, samples;
	unsigned machine;       /* ELF e_machine */
	struct an_insn *insns;  /* disassembled: shown */
	size_t ninsns;
};

struct source;

struct an_ctx {
	const char *input, *event;
	const struct rp_report *report; /* its symbols resolve the samples */
	uint64_t samples, period; /* of the event, the kernel's included */
	uint64_t kernel_samples;  /* the kernel's and its modules': not annotated */
	struct rp_table addrs;    /* struct an_addr */
	struct source *sources; /* the source files read */
	const struct hwc_perfdata_attr *head_of; /* the event whose HEAD this is */
	struct hwc_sample_head head;
};

/* Instruction IN's share of F's period, in percent. */
double an_percent(const struct an_func *f, const struct an_insn *in);
/* Does instruction I of F start a source line (or an inlined function)? */
bool an_new_line(const struct an_func *f, size_t i);
bool an_new_function(const struct an_func *f, size_t i);
/* What follows FUNCTION's name in its header, "name():" as objdump -l
 * writes it: "()", or nothing for a demangled name with its parameters. */
const char *an_parens(const char *function);
/* The text of source line S (leading blanks dropped), or NULL. */
const char *an_source(struct an_ctx *c, const struct hwc_srcline *s);

/* annotate_disasm.c: disassemble F's code into F->insns, each with its
 * samples and (SOURCE) its source line; 0, or -1 after saying why. */
int an_disassemble(hwc_symbols *syms, struct an_func *f, bool source);
/* "x86_64", "aarch64", "i386", or NULL. */
const char *an_machine_name(unsigned machine);

/* annotate_html.c: the page of the N functions (those disassembled) at PATH. */
int an_write_html(struct an_ctx *c, const struct an_func *funcs, size_t n, const char *path);

#endif
