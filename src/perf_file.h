/* The perf.data file layout (tools/perf/Documentation/perf.data-file-format.txt)
 * as the writer needs it; never installed. */
#ifndef HWC_PERF_FILE_H
#define HWC_PERF_FILE_H

#include <stdint.h>

#define PF_MAGIC 0x32454c4946524550ULL /* "PERFILE2" read as a native u64 */

struct pf_section {
	uint64_t offset, size;
};

struct pf_header {
	uint64_t magic;
	uint64_t size;      /* sizeof(struct pf_header) */
	uint64_t attr_size; /* one entry of the attrs section: attr + ids section */
	struct pf_section attrs, data, event_types;
	uint64_t features[4]; /* bitmap of the feature sections after the data */
};

/* Header features: bit numbers in pf_header.features. */
enum pf_feature {
	PF_FEAT_BUILD_ID = 2,
	PF_FEAT_HOSTNAME = 3,
	PF_FEAT_OSRELEASE = 4,
	PF_FEAT_VERSION = 5,
	PF_FEAT_ARCH = 6,
	PF_FEAT_NRCPUS = 7,
	PF_FEAT_CPUDESC = 8,
	PF_FEAT_CPUID = 9,
	PF_FEAT_TOTAL_MEM = 10,
	PF_FEAT_CMDLINE = 11,
	PF_FEAT_EVENT_DESC = 12,
	PF_FEAT_CPU_TOPOLOGY = 13,
	PF_FEAT_NUMA_TOPOLOGY = 14,
	PF_FEAT_PMU_MAPPINGS = 16,
	PF_FEAT_GROUP_DESC = 17,
	PF_FEAT_SAMPLE_TIME = 21,
	PF_FEAT_CLOCKID = 23,
	PF_FEAT_CLOCK_DATA = 29,
	PF_FEAT_MAX = 256,
};

/* Record types perf's tools add to the kernel's. */
#define PF_RECORD_HEADER_BUILD_ID 67
#define PF_RECORD_FINISHED_ROUND 68

/* In a build-id entry's misc: the build-id size is in the byte after it. */
#define PF_MISC_BUILD_ID_SIZE (1 << 15)

/* Strings in features are padded with NULs to this alignment. */
#define PF_NAME_ALIGN 64

/* The pid perf uses for the host machine in build-id entries. */
#define PF_HOST_PID (-1)

#endif
