/* The aggregated profile (tools/profile: loaded from a recording, or
 * built from live samples), shown by hwc report's views and exports, and
 * by hwc top's live view. */
#ifndef HWC_REPORT_H
#define HWC_REPORT_H

#include "profile.h"

/* report_out.c */
struct rp_row **rp_sorted_rows(struct rp_report *r, size_t *n);
struct rp_func **rp_sorted_funcs(struct rp_report *r, size_t *n);
/* The flat view's column titles and one row, as text without a newline. */
void rp_table_header(const struct rp_report *r, char *buf, size_t size);
void rp_table_row(const struct rp_report *r, const struct rp_row *w, char *buf, size_t size);
/* Is row W above --percent-limit? */
bool rp_row_shown(const struct rp_report *r, const struct rp_row *w);
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
/* The pprof Profile message of R, uncompressed, in a new *BUF of *LEN
 * bytes (freed by the caller); -1 when out of memory. */
int rp_pprof_encode(struct rp_report *r, uint8_t **buf, size_t *len);
int rp_write_flamegraph(struct rp_report *r, const char *path);
/* S with XML's special characters escaped, for SVG and HTML text and attributes. */
void rp_xml_text(FILE *out, const char *s);

#endif
