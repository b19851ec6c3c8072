/* What a pctr(4) function word asks of perf_event: shared by the pctr
 * library and its golden tests, so both use the same translation.  Never
 * installed. */
#ifndef HWC_COMPAT_PCTR_FUNCTION_H
#define HWC_COMPAT_PCTR_FUNCTION_H

#include <errno.h>
#include <machine/pctr.h>
#include <stdbool.h>
#include <stdint.h>

/* Bits OpenBSD refuses in a function: pin control (19), APIC interrupt (20)
 * and any-thread (21). */
#define PCTR_FN_RESERVED 0x380000u

/* Translate FN: 0 and the PERFEVTSEL word to open in *EVTSEL, or EINVAL.
 * *COUNTS is false for a function that counts nothing (PCTR_EN clear, or
 * neither PCTR_U nor PCTR_K): its event is still opened, so that the
 * hardware and the encoding are checked, but never enabled. */
static inline int pctr_function_evtsel(unsigned fn, uint64_t *evtsel, bool *counts)
{
	if (fn & PCTR_FN_RESERVED)
		return EINVAL;
	*counts = (fn & PCTR_EN) && (fn & (PCTR_U | PCTR_K));
	*evtsel = fn & ~(unsigned)PCTR_EN;
	if (!(fn & (PCTR_U | PCTR_K)))
		*evtsel |= PCTR_U | PCTR_K;
	return 0;
}

#endif
