/* DWARF unwinding of samples that carry user registers and a copy of the
 * user stack (perf record --call-graph dwarf): one libdwfl session per
 * process with its DSOs reported at their load addresses, attached once;
 * each sample only swaps in its registers and stack. */
#include "arch.h"
#include "dl.h"
#include "symbol_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The DWARF registers the unwinder starts from (arch.h), at least one. */
enum { NREGS = HWC__DWARF_NREGS ? HWC__DWARF_NREGS : 1 };

uint64_t hwc__unwind_regs_mask(void)
{
	return HWC__PERF_REGS_MASK; /* the general registers, a superset of arch.h's map */
}

struct hwc__unwind {
	Dwfl *dwfl;
	unsigned generation;
	bool attached;
	/* The sample being unwound. */
	uint64_t regs[NREGS];
	bool have[NREGS];
	uint64_t pc;
	const uint8_t *stack;
	uint64_t sp, stack_len;
	uint64_t *ips;
	size_t n, max;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)arg;
	(void)thread_argp;
	return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct hwc__unwind *u = arg;
	if (addr < u->sp || addr - u->sp > u->stack_len || u->stack_len - (addr - u->sp) < 8)
		return false;
	memcpy(result, u->stack + (addr - u->sp), 8);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct hwc__unwind *u = arg;
	for (int r = 0; r < NREGS; r++) {
		Dwarf_Word v = u->regs[r];
		if (u->have[r] && !dwfl_thread_state_registers(thread, r, 1, &v))
			return false;
	}
	/* Explicitly: on arm64 the PC has no DWARF number, and libdwfl would
	 * otherwise take the return-address register (x30) for it. */
	dwfl_thread_state_register_pc(thread, u->pc);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

void hwc__unwind_forget(struct hwc__proc *p)
{
	if (!p->unwind)
		return;
	if (p->unwind->dwfl)
		dwfl_end(p->unwind->dwfl);
	free(p->unwind);
	p->unwind = NULL;
}

static unsigned chain_generation(const struct hwc__proc *p)
{
	unsigned g = 0;
	for (int depth = 0; p && depth < 64; p = p->parent, depth++)
		g += p->generation;
	return g;
}

/* Report every file-backed map of P (and what it inherited) at its address. */
static int build_session(hwc_symbols *s, struct hwc__proc *p, struct hwc__unwind *u)
{
	if (u->dwfl)
		dwfl_end(u->dwfl);
	u->attached = false;
	u->dwfl = dwfl_begin(&hwc__dl.dwfl_callbacks);
	if (!u->dwfl)
		return hwc__fail(-ENOMEM, "libdwfl: %s", dwfl_errmsg(-1));
	dwfl_report_begin(u->dwfl);
	size_t reported = 0;
	for (const struct hwc__proc *q = p; q && reported < 4096; q = q->parent) {
		for (size_t i = 0; i < q->nmaps; i++) {
			const struct hwc__mapping *m = &q->maps[i];
			if (m->dso->state == 0)
				hwc__dso_load(s, m->dso);
			if (m->dso->state <= 0)
				continue;
			uint64_t bias = m->dso->et_exec ? 0 : m->start - hwc__dso_vaddr(m->dso, m->pgoff);
			/* Overlaps (an older map at the same place) are refused; fine. */
			if (dwfl_report_elf(u->dwfl, m->dso->name, m->dso->path, -1, bias, false))
				reported++;
		}
		if (q->exec_time != UINT64_MAX)
			break;
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
	if (!reported)
		return hwc__fail(-ENOENT, "no readable DSO of process %u to unwind through", p->pid);
	if (!dwfl_attach_state(u->dwfl, NULL, (pid_t)p->pid, &thread_callbacks, u))
		return hwc__fail(-ENOTSUP, "libdwfl cannot unwind here: %s", dwfl_errmsg(-1));
	u->attached = true;
	u->generation = chain_generation(p);
	return 0;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct hwc__unwind *u = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation) || u->n >= u->max)
		return DWARF_CB_ABORT;
	u->ips[u->n++] = pc;
	return DWARF_CB_OK;
}

HWC_EXPORT int hwc_symbols_unwind(hwc_symbols *s, const struct hwc_sample *sample,
				  const struct perf_event_attr *attr, uint64_t *ips, size_t max)
{
	hwc__clear_error();
#if !HWC__DWARF_NREGS
	(void)s, (void)sample, (void)attr, (void)ips, (void)max;
	(void)build_session, (void)frame_cb, (void)chain_generation;
	return hwc__fail(-ENOTSUP, "DWARF unwinding is implemented for x86_64 and arm64 only");
#else
	if (!(sample->sample_type & PERF_SAMPLE_REGS_USER) ||
	    !(sample->sample_type & PERF_SAMPLE_STACK_USER) ||
	    sample->user_regs_abi != PERF_SAMPLE_REGS_ABI_64)
		return hwc__fail(-ENOTSUP, "the sample has no 64-bit user registers and stack to "
					   "unwind");
	if (max == 0)
		return 0;
	struct hwc__proc *p = hwc__proc_get(s, sample->pid, true);
	if (!p)
		return hwc__fail(-ENOMEM, "out of memory");
	if (!p->unwind && !(p->unwind = calloc(1, sizeof(*p->unwind))))
		return hwc__fail(-ENOMEM, "out of memory");
	struct hwc__unwind *u = p->unwind;
	memset(u->have, 0, sizeof(u->have));
	uint64_t present[64] = {0};
	bool has[64] = {false};
	uint32_t k = 0;
	for (int bit = 0; bit < 64 && k < sample->nr_user_regs; bit++)
		if (attr->sample_regs_user >> bit & 1) {
			present[bit] = sample->user_regs[k++];
			has[bit] = true;
		}
	for (int r = 0; r < NREGS; r++) {
		u->have[r] = has[hwc__arch_perf_reg[r]];
		u->regs[r] = present[hwc__arch_perf_reg[r]];
	}
	if (!u->have[HWC__DWARF_SP] || !has[HWC__PERF_PC])
		return hwc__fail(-ENOTSUP, "the sample's registers lack SP or IP");
	u->pc = present[HWC__PERF_PC];
	if (!u->attached || u->generation != chain_generation(p)) {
		int err = build_session(s, p, u);
		if (err) {
			ips[0] = u->pc;
			return 1;
		}
	}
	u->stack = sample->user_stack;
	u->sp = u->regs[HWC__DWARF_SP];
	u->stack_len = sample->user_stack_dyn_size;
	u->ips = ips;
	u->max = max;
	u->n = 0;
	/* Unwinding stops with an error at the outermost frame: not a failure. */
	dwfl_getthread_frames(u->dwfl, (pid_t)(sample->tid ? sample->tid : p->pid), frame_cb, u);
	if (u->n == 0)
		ips[u->n++] = u->pc;
	return (int)u->n;
#endif
}
