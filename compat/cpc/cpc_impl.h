/* libcpc internals shared between its files; never installed. */
#ifndef CPC_IMPL_H
#define CPC_IMPL_H

#include "libcpc.h"

#include <stdbool.h>

#define CPC_EXPORT __attribute__((visibility("default")))

/* What libcpc says about this machine; gathered once by cpc_open(). */
struct cpc_machine {
	unsigned npic;  /* core PMU counters the kernel exposes; 0 without a PMU */
	bool x86;
	bool intel;     /* has the AnyThread bit (anythr) */
	char cciname[CPC_MAX_IMPL_NAME];
	char cpuref[CPC_MAX_CPUREF];
};

int cpc__machine(struct cpc_machine *m);
/* The TSC rate in Hz, 0 when unknown; found on the first call (it may take
 * a calibration of 25 ms), so only programs that ask for ticks pay. */
double cpc__tsc_hz(void);

/* Names of this machine's native (libpfm4) events, none without a core PMU. */
void cpc__walk_native(void (*fn)(void *arg, const char *name), void *arg);
/* Linux software events: an hwc extension, so that everything works on a
 * machine without a hardware PMU. */
void cpc__walk_software(void (*fn)(void *arg, const char *name), void *arg);
/* Can SPEC be counted on this machine (on the calling thread, user space)?
 * 0, or -errno with DETAIL set. */
int cpc__probe(const char *spec, char *detail, size_t size);

#endif
