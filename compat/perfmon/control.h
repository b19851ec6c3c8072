/* What a perfmon(4) struct pmc asks of perf_event: shared by the perfmon
 * library and its golden tests, so both use the same translation.  Never
 * installed. */
#ifndef HWC_COMPAT_PERFMON_CONTROL_H
#define HWC_COMPAT_PERFMON_CONTROL_H

#include <errno.h>
#include <machine/perfmon.h>
#include <stdbool.h>
#include <stdint.h>

/* The control word PMIOSETUP keeps for PMC: its PERFEVTSEL bits without the
 * ones the user cannot set (PMCF_SYS_FLAGS), as FreeBSD does. */
static inline unsigned perfmon_control(const struct pmc *pmc)
{
	return pmc->pmc_val & ~((unsigned)PMCF_SYS_FLAGS << 16);
}

/* Translate the control word CTL: 0 and the PERFEVTSEL word to open in
 * *EVTSEL, or EINVAL (pin control, which perf_event cannot program).
 * *COUNTS is false when neither PMCF_USR nor PMCF_OS is set: the event is
 * still opened, so that the hardware and the encoding are checked, but
 * never enabled. */
static inline int perfmon_control_evtsel(unsigned ctl, uint64_t *evtsel, bool *counts)
{
	unsigned flags = (ctl >> 16) & 0xff;
	if (flags & PMCF_PC)
		return EINVAL;
	*counts = flags & (PMCF_USR | PMCF_OS);
	*evtsel = ctl;
	if (!*counts)
		*evtsel |= (PMCF_USR | PMCF_OS) << 16;
	return 0;
}

#endif
