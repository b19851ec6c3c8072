/* hwc diff: the profile diff (diff.c) hands --stat to diff_stat.c. */
#ifndef HWC_DIFF_H
#define HWC_DIFF_H

#include <stdbool.h>

/* Compare two `hwc stat -r N --json` results, BASE and NEW, at the
 * CONFIDENCE level (0.5 to 0.9999): text, or JSON when JSON.  The exit
 * status: 0, or 1 after saying why. */
int diff_stat(const char *base, const char *new_file, double confidence, bool json);

/* Student's t distribution with DF degrees of freedom (DF > 0): P(T <= T). */
double diff_t_cdf(double t, double df);
/* Its quantile: the T with P(T <= T) = P, for 0 < P < 1. */
double diff_t_quantile(double p, double df);

#endif
