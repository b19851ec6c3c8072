/* hwc stat --regions (stat_regions.c). */
#ifndef HWC_STAT_REGIONS_H
#define HWC_STAT_REGIONS_H

#include "stat.h"

/* Before the command starts: a private directory for its region report,
 * named in HWC_REGIONS_OUT, and the -e SPECS in HWC_EVENTS (when given).
 * Returns 0, or -1 after saying why not. */
int stat_regions_setup(const char *const *specs, size_t nspecs);

/* Once the command has ended: read its report (saying so on stderr when
 * there is none or it is not one) and have R print it. */
void stat_regions_load(struct stat_report *r);

/* Remove the report and the directory. */
void stat_regions_cleanup(void);

#endif
