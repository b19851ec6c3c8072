/* hwc script's exports: what script.c hands them per sample. */
#ifndef HWC_TOOL_SCRIPT_H
#define HWC_TOOL_SCRIPT_H

#include <hwc/perfdata.h>
#include <hwc/symbol.h>

/* One frame of a sample, innermost first. */
struct frame {
	uint64_t ip;
	const struct hwc_location *loc;
	bool kernel;
};

/* The name of thread TID at TIME into BUF: its comm, else ":TID" as perf
 * script says of a thread never named. */
const char *script_comm(hwc_symbols *syms, uint32_t tid, uint64_t time, char *buf, size_t size);

/* realloc, or exit saying "out of memory". */
void *script_xrealloc(void *p, size_t size);

/* A function's name in the exports: the symbol, else "[unknown] dso+0x..". */
void script_frame_name(const struct hwc_location *l, char *buf, size_t size);

/* script_firefox.c: a Firefox Profiler processed profile (format version
 * FIREFOX_PROFILE_VERSION) of every sample of FILE. */
struct firefox;
struct firefox *firefox_new(hwc_perfdata *file, hwc_symbols *syms);
/* Sample S of event ATTR (time order), its N frames FR. */
void firefox_sample(struct firefox *ff, const struct hwc_sample *s, const struct hwc_perfdata_attr *attr,
		    const struct frame *fr, size_t n);
/* Write the profile to PATH through hwc_output; 0, or -1 after saying why. */
int firefox_write(struct firefox *ff, const char *path, const char *prog);
void firefox_free(struct firefox *ff);

#endif
