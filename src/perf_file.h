/* The perf.data file header (tools/perf/Documentation/perf.data-file-format.txt),
 * shared by the writer (recording.c) and the reader (perfdata.c); never
 * installed.  Feature numbers and perf's own record types are public, in
 * hwc/perfdata.h. */
#ifndef HWC_PERF_FILE_H
#define HWC_PERF_FILE_H

#include <stdint.h>

#define PF_MAGIC 0x32454c4946524550ULL /* "PERFILE2" read as a native u64 */
#define PF_FEAT_BITS 256

struct pf_section {
	uint64_t offset, size;
};

struct pf_header {
	uint64_t magic;
	uint64_t size;      /* sizeof(struct pf_header) */
	uint64_t attr_size; /* one entry of the attrs section: attr + ids section */
	struct pf_section attrs, data, event_types;
	uint64_t features[PF_FEAT_BITS / 64]; /* the feature sections after the data */
};

/* In a build-id entry's misc: the build-id size is in the byte after it. */
#define PF_MISC_BUILD_ID_SIZE (1 << 15)

/* Strings in features are padded with NULs to this alignment. */
#define PF_NAME_ALIGN 64

/* The pid perf uses for the host machine in build-id entries. */
#define PF_HOST_PID (-1)

#endif
