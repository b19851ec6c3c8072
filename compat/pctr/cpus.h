/* Whole-CPU counters, held by the pctr helper process (cpus.c).  Never
 * installed. */
#ifndef HWC_COMPAT_PCTR_CPUS_H
#define HWC_COMPAT_PCTR_CPUS_H

#include <machine/pctr.h>

/* Set counter CTR to function FN on every CPU, starting the helper when
 * none runs (and FN is not 0).  Returns 0 or the errno of PCIOCSx; EBUSY
 * when the helper's name is held by another user's process. */
int pctr_cpus_set(unsigned ctr, unsigned fn);

/* The functions, the TSC and CPU's counts into *ST.  Returns 0, ENOENT
 * when no helper (of root or of this user) runs, or an errno. */
int pctr_cpus_read(int cpu, struct pctrst *st);

#endif
