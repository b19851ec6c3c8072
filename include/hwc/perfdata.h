/*
 * libhwc perf.data reader: the files `hwc record` and `perf record` write
 * (tools/perf/Documentation/perf.data-file-format.txt, "PERFILE2", native
 * endian, seekable form).  The file is mapped read-only; records are handed
 * out raw (header + body, exactly as the kernel wrote them) together with the
 * attr they belong to, ready for hwc_sample_parse() / hwc_sample_id_parse().
 *
 * Every malformed input (truncated, corrupted, foreign) is refused with
 * -EINVAL (or -ENOTSUP for valid perf files hwc cannot read) and a detail
 * that names the file offset and what was expected there.
 */
#ifndef HWC_PERFDATA_H
#define HWC_PERFDATA_H

#include <hwc/sample.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hwc_perfdata hwc_perfdata;

/* Header feature bits (perf's HEADER_* numbers). */
enum hwc_perfdata_feature {
	HWC_FEAT_TRACING_DATA = 1,
	HWC_FEAT_BUILD_ID = 2,
	HWC_FEAT_HOSTNAME = 3,
	HWC_FEAT_OSRELEASE = 4,
	HWC_FEAT_VERSION = 5,
	HWC_FEAT_ARCH = 6,
	HWC_FEAT_NRCPUS = 7,
	HWC_FEAT_CPUDESC = 8,
	HWC_FEAT_CPUID = 9,
	HWC_FEAT_TOTAL_MEM = 10,
	HWC_FEAT_CMDLINE = 11,
	HWC_FEAT_EVENT_DESC = 12,
	HWC_FEAT_CPU_TOPOLOGY = 13,
	HWC_FEAT_NUMA_TOPOLOGY = 14,
	HWC_FEAT_PMU_MAPPINGS = 16,
	HWC_FEAT_GROUP_DESC = 17,
	HWC_FEAT_SAMPLE_TIME = 21,
	HWC_FEAT_CLOCKID = 23,
	HWC_FEAT_COMPRESSED = 27,
	HWC_FEAT_CLOCK_DATA = 29,
};

/* Record types perf record adds to the kernel's (PERF_RECORD_USER_TYPE_START on). */
#define HWC_RECORD_HEADER_ATTR 64
#define HWC_RECORD_HEADER_BUILD_ID 67
#define HWC_RECORD_FINISHED_ROUND 68
#define HWC_RECORD_ID_INDEX 69
#define HWC_RECORD_HEADER_FEATURE 80
#define HWC_RECORD_COMPRESSED 81  /* a piece of the zstd stream of records (perf record -z) */
#define HWC_RECORD_COMPRESSED2 83 /* the same with its data size, padded to 8 bytes (perf 6.13) */

/* Open PATH (mapped read-only) and check its header, attrs and feature
 * sections.  -ENOENT/-EACCES when it cannot be opened, -EINVAL when it is
 * not a well-formed perf.data file, -ENOTSUP for forms hwc does not read
 * (other endianness, PERFFILE version 1).  A pipe-mode stream (perf record
 * -o -, hwc_recording_fdopen() on a pipe) saved to a file is read as far as
 * its last whole record: its events are its HEADER_ATTR records, its
 * features its HEADER_FEATURE records. */
int hwc_perfdata_open(hwc_perfdata **out, const char *path);

/* The same over SIZE bytes at DATA, which must stay valid until close (the
 * fuzzer and tests use it). */
int hwc_perfdata_open_mem(hwc_perfdata **out, const void *data, size_t size);

/* The recording on descriptor FD (not closed): a regular file is mapped from
 * its start; a pipe or socket (perf record -o -, hwc record -o -) is read to
 * its end into an unlinked temporary file in $TMPDIR (else /tmp), which is
 * then read as a file: the stream takes disk, not memory.  Other kinds (a
 * terminal, a device) are -EINVAL. */
int hwc_perfdata_open_fd(hwc_perfdata **out, int fd);

void hwc_perfdata_close(hwc_perfdata *f);

/* One event of the recording. */
struct hwc_perfdata_attr {
	struct perf_event_attr attr; /* zero-extended to this libhwc's size */
	const char *name;            /* from the EVENT_DESC feature, else made from type/config */
	size_t nids;
	const uint64_t *ids;         /* the sample ids the kernel gave its file descriptors */
};

size_t hwc_perfdata_nattrs(const hwc_perfdata *f);
const struct hwc_perfdata_attr *hwc_perfdata_attr(const hwc_perfdata *f, size_t idx);

/* The attr a sample id belongs to, or NULL. */
const struct hwc_perfdata_attr *hwc_perfdata_attr_by_id(const hwc_perfdata *f, uint64_t id);

/* Is header feature FEAT present?  Its raw bytes (into the mapping). */
bool hwc_perfdata_has_feature(const hwc_perfdata *f, int feat);
int hwc_perfdata_feature(const hwc_perfdata *f, int feat, const void **data, size_t *size);

/* A string feature (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID;
 * CMDLINE joined with spaces), or NULL when absent. */
const char *hwc_perfdata_string(const hwc_perfdata *f, int feat);

/* The BUILD_ID feature: which build-id each file had when recorded. */
struct hwc_perfdata_buildid {
	int32_t pid;      /* -1 for the kernel and its modules */
	uint16_t misc;    /* PERF_RECORD_MISC_KERNEL, _USER, ... */
	uint8_t size;     /* bytes of id used (20 for SHA-1 ids) */
	uint8_t id[20];
	const char *filename;
};
size_t hwc_perfdata_nbuildids(const hwc_perfdata *f);
const struct hwc_perfdata_buildid *hwc_perfdata_buildid(const hwc_perfdata *f, size_t idx);

/* Start and size of the data section. */
void hwc_perfdata_data_section(const hwc_perfdata *f, uint64_t *offset, uint64_t *size);

/* One record of the data section. */
struct hwc_perfdata_record {
	const struct perf_event_header *hdr; /* 8-byte aligned; valid until the next call */
	const struct hwc_perfdata_attr *attr; /* its event; NULL for perf's own record
	                                        * types (>= 64) and samples of unknown id */
	uint64_t offset;                      /* file offset of the header (of the compressed
	                                         record, for one unpacked from it) */
};

/* Next record into *REC: 1, 0 at the end of the data section, or -EINVAL
 * (detail: the offset and what was expected) for a record that does not fit
 * or whose size is impossible.  Records come in file order. */
int hwc_perfdata_next(hwc_perfdata *f, struct hwc_perfdata_record *rec);

/* Back to the first record. */
void hwc_perfdata_rewind(hwc_perfdata *f);

/* A readable name for a record type ("SAMPLE", "MMAP2", "FINISHED_ROUND", ...). */
const char *hwc_record_type_name(uint32_t type);

#ifdef __cplusplus
}
#endif
#endif
