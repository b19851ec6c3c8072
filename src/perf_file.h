/* The perf.data file header (tools/perf/Documentation/perf.data-file-format.txt),
 * shared by the writer (recording.c) and the reader (perfdata.c); never
 * installed.  Feature numbers and perf's own record types are public, in
 * hwc/perfdata.h. */
#ifndef HWC_PERF_FILE_H
#define HWC_PERF_FILE_H

#include <linux/perf_event.h>
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

/* The largest record: its header's size is a u16.  A buffer of
 * PF_RECORD_MAX + 1 bytes holds any record. */
#define PF_RECORD_MAX 0xffffu
/* The largest record whose size is a multiple of 8, as the kernel's are. */
#define PF_RECORD_MAX_ALIGNED (PF_RECORD_MAX & ~7u)

/* An entry of the BUILD_ID feature; the NUL-padded file name follows. */
struct pf_build_id {
	struct perf_event_header h; /* type HWC_RECORD_HEADER_BUILD_ID */
	int32_t pid;                /* PF_HOST_PID for the host */
	uint8_t id[24];             /* the id, zero-padded; its size in id[20] with: */
};
_Static_assert(sizeof(struct pf_build_id) == 36, "perf's build-id entry is 36 bytes");

/* In a build-id entry's misc: the build-id size is in id[20]. */
#define PF_MISC_BUILD_ID_SIZE (1 << 15)
#define PF_BUILD_ID_MAX 20

/* Strings in features are padded with NULs to this alignment. */
#define PF_NAME_ALIGN 64

/* The pid perf uses for the host machine in build-id entries. */
#define PF_HOST_PID (-1)

#endif
