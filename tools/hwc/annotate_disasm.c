/* hwc annotate's disassembler: a function's code, read by libhwc
 * (hwc_symbols_code), disassembled by capstone for the machine its ELF
 * file was built for (x86-64 and i386 in AT&T syntax as objdump writes it,
 * arm64), each instruction with its samples and its source line. */
#include "annotate.h"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *an_machine_name(unsigned machine)
{
	return machine == EM_X86_64 ? "x86_64" : machine == EM_AARCH64 ? "aarch64"
					       : machine == EM_386 ? "i386" : NULL;
}

/* capstone is loaded when hwc annotate needs it, not linked: loading its
 * library relocates its tables, which cost every hwc command 3.3 MB of
 * peak RSS (hwc stat: 3.0 MB -> 6.5 MB).  The library of the major version
 * of the header this was built with: its structures are that version's. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define CAPSTONE_LIB "libcapstone.so." STR(CS_API_MAJOR)

static struct {
	__typeof__(cs_open) *open;
	__typeof__(cs_option) *option;
	__typeof__(cs_malloc) *malloc;
	__typeof__(cs_disasm_iter) *disasm_iter;
	__typeof__(cs_free) *free;
	__typeof__(cs_close) *close;
} cs;

static int load_capstone(void)
{
	static int loaded; /* 1 loaded, -1 failed (said) */
	if (loaded)
		return loaded > 0 ? 0 : -1;
	loaded = -1;
	void *h = dlopen(CAPSTONE_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "hwc annotate: cannot load capstone, the disassembler: %s (Debian's "
				"package libcapstone%d has it)\n",
			dlerror(), CS_API_MAJOR);
		return -1;
	}
	/* POSIX's way to store dlsym's answer in a function pointer. */
#define CS_SYM(field, name)                                                                   \
	if (!(*(void **)&cs.field = dlsym(h, name))) {                                        \
		fprintf(stderr, "hwc annotate: %s has no %s: not capstone %d\n", CAPSTONE_LIB, \
			name, CS_API_MAJOR);                                                  \
		return -1;                                                                    \
	}
	CS_SYM(open, "cs_open")
	CS_SYM(option, "cs_option")
	CS_SYM(malloc, "cs_malloc")
	CS_SYM(disasm_iter, "cs_disasm_iter")
	CS_SYM(free, "cs_free")
	CS_SYM(close, "cs_close")
#undef CS_SYM
	loaded = 1;
	return 0;
}

/* A capstone handle for ELF machine MACHINE; -1 after saying why. */
static int open_capstone(const struct an_func *f, unsigned machine, csh *h)
{
	if (load_capstone())
		return -1;
	cs_err err;
	if (machine == EM_X86_64 || machine == EM_386) {
		err = cs.open(CS_ARCH_X86, machine == EM_X86_64 ? CS_MODE_64 : CS_MODE_32, h);
		/* AT&T syntax, as objdump and so perf annotate write it. */
		if (err == CS_ERR_OK)
			err = cs.option(*h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	} else if (machine == EM_AARCH64) {
		err = cs.open(CS_ARCH_ARM64, CS_MODE_ARM, h);
	} else {
		fprintf(stderr, "hwc annotate: cannot annotate %s: hwc disassembles x86-64, i386 and "
				"arm64 code, not that of ELF machine %u\n",
			f->sym->name, machine);
		return -1;
	}
	if (err != CS_ERR_OK)
		fprintf(stderr, "hwc annotate: capstone: cannot disassemble %s code (error %d)\n",
			an_machine_name(machine), (int)err);
	return err == CS_ERR_OK ? 0 : -1;
}

static bool is_branch(unsigned machine, const char *m)
{
	if (machine == EM_AARCH64)
		return strcmp(m, "b") == 0 || strncmp(m, "b.", 2) == 0 || strcmp(m, "bl") == 0 ||
		       strncmp(m, "cbz", 3) == 0 || strncmp(m, "cbnz", 4) == 0 ||
		       strncmp(m, "tbz", 3) == 0 || strncmp(m, "tbnz", 4) == 0;
	return m[0] == 'j' || strncmp(m, "call", 4) == 0 || strncmp(m, "loop", 4) == 0;
}

/* A direct branch's target as objdump writes it: "1224 <f2+0x39>",
 * "1199 <mark>", or the bare address where no symbol covers it. */
static void name_target(hwc_symbols *syms, struct an_insn *in, unsigned machine,
			const struct an_func *f)
{
	if (!is_branch(machine, in->mnemonic))
		return;
	char *imm = strrchr(in->operands, ' ');
	imm = imm ? imm + 1 : in->operands;
	char *p = imm + (*imm == '#');
	if (strncmp(p, "0x", 2) != 0)
		return;
	char *end;
	uint64_t to = strtoull(p, &end, 16);
	if (*end)
		return;
	size_t room = sizeof(in->operands) - (size_t)(imm - in->operands);
	const struct hwc_location *l = hwc_symbols_resolve_in(syms, f->sym, to);
	if (!l || !l->sym->known)
		snprintf(imm, room, "%" PRIx64, to);
	else if (to == l->sym->start)
		snprintf(imm, room, "%" PRIx64 " <%s>", to, l->sym->name);
	else
		snprintf(imm, room, "%" PRIx64 " <%s+%#" PRIx64 ">", to, l->sym->name, to - l->sym->start);
}

int an_disassemble(hwc_symbols *syms, struct an_func *f, bool source)
{
	struct hwc_code code;
	if (hwc_symbols_code(syms, f->sym, &code)) {
		fprintf(stderr, "hwc annotate: cannot annotate %s: %s\n", f->sym->name, hwc_errdetail());
		return -1;
	}
	f->machine = code.machine;
	csh h;
	if (open_capstone(f, code.machine, &h))
		return -1;
	cs_insn *ci = cs.malloc(h);
	size_t cap = 0;
	const uint8_t *p = code.bytes;
	size_t left = code.size;
	uint64_t addr = code.start;
	int rc = 0;
	while (left && ci) {
		if (f->ninsns == cap) {
			cap = cap ? cap * 2 : 64;
			struct an_insn *v = realloc(f->insns, cap * sizeof(*v));
			if (!v) {
				rc = -1;
				break;
			}
			f->insns = v;
		}
		struct an_insn *in = &f->insns[f->ninsns++];
		memset(in, 0, sizeof(*in));
		in->addr = addr;
		if (cs.disasm_iter(h, &p, &left, &addr, ci)) {
			snprintf(in->mnemonic, sizeof(in->mnemonic), "%s", ci->mnemonic);
			snprintf(in->operands, sizeof(in->operands), "%s", ci->op_str);
			name_target(syms, in, code.machine, f);
		} else {
			/* Not an instruction capstone knows: one unit of it as data. */
			size_t unit = code.machine == EM_AARCH64 && left >= 4 ? 4 : 1;
			snprintf(in->mnemonic, sizeof(in->mnemonic), unit == 4 ? ".inst" : ".byte");
			uint32_t v = 0;
			memcpy(&v, p, unit);
			snprintf(in->operands, sizeof(in->operands), "%#x", v);
			p += unit;
			left -= unit;
			addr += unit;
		}
		in->size = (unsigned)(addr - in->addr);
		if (source)
			hwc_symbols_srcline(syms, f->sym, in->addr, &in->src);
	}
	if (!ci)
		rc = -1;
	if (rc)
		fprintf(stderr, "hwc annotate: out of memory\n");
	if (ci)
		cs.free(ci, 1);
	cs.close(&h);
	/* Each sampled address counts for the instruction that holds it. */
	size_t k = 0;
	for (size_t i = 0; i < f->naddrs && f->ninsns; i++) {
		uint64_t a = f->addrs[i]->loc->dso_offset;
		while (k + 1 < f->ninsns && f->insns[k + 1].addr <= a)
			k++;
		f->insns[k].period += f->addrs[i]->period;
		f->insns[k].samples += f->addrs[i]->samples;
	}
	return rc;
}
