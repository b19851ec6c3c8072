/*
 * libhwc: code regions (see hwc-regions(3)), in the manner of PAPI's
 * high-level API and LIKWID's marker API.  A program marks parts of its
 * code; run under `hwc stat --regions -- PROGRAM` (or with HWC_REGIONS_OUT
 * set) each thread counts its regions, and a report per region and thread
 * is written at exit.  Without HWC_REGIONS_OUT both calls only test a flag.
 */
#ifndef HWC_REGION_H
#define HWC_REGION_H
#ifdef __cplusplus
extern "C" {
#endif

/* Open region NAME on the calling thread (regions nest; the same name may
 * be opened again, inside itself too).  The thread's counters are opened
 * at its first call, on the events of HWC_EVENTS (hwc's event syntax) or
 * the defaults.  Returns 0, also when regions are not measured, or -errno
 * (the error is also reported once on stderr and in the report). */
int hwc_region_begin(const char *name);

/* Close region NAME, the innermost open region of the calling thread:
 * its counts since the matching hwc_region_begin() are added to NAME's.
 * Returns 0, or -EINVAL when NAME is not open or not the innermost (the
 * call is then ignored), or another -errno. */
int hwc_region_end(const char *name);

#ifdef __cplusplus
}
#endif
#endif
