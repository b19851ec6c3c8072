/* hwc report: the aggregated profile shared by its views and exports. */
#ifndef HWC_REPORT_H
#define HWC_REPORT_H

#include "profile.h"

/* report_out.c */
struct rp_row **rp_sorted_rows(struct rp_report *r, size_t *n);
struct rp_func **rp_sorted_funcs(struct rp_report *r, size_t *n);
void rp_print_flat(struct rp_report *r, FILE *out);
void rp_print_tree(struct rp_report *r, FILE *out, bool callers_first);
void rp_print_gprof(struct rp_report *r, FILE *out);
void rp_print_threads(struct rp_report *r, FILE *out);
void rp_print_records(struct rp_report *r, FILE *out);
void rp_print_json(struct rp_report *r, FILE *out);
void rp_json_string(FILE *out, const char *s);

/* report_export.c */
int rp_write_folded(struct rp_report *r, const char *path);
int rp_write_pprof(struct rp_report *r, const char *path);
int rp_write_flamegraph(struct rp_report *r, const char *path);

#endif
