/*
 * libhwc sample records: decoding the records perf_event_open(2) writes into
 * its ring buffer, which are also the records a perf.data file stores.  The
 * live sampler and the perf.data reader both hand out raw records (a
 * struct perf_event_header followed by its body) and decode them here.
 */
#ifndef HWC_SAMPLE_H
#define HWC_SAMPLE_H

#include <hwc/hwc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A decoded PERF_RECORD_SAMPLE.  Only fields whose PERF_SAMPLE_* bit is in
 * sample_type are meaningful; pointers point into the record's memory and
 * live as long as the record does. */
struct hwc_sample {
	uint64_t sample_type; /* the attr's sample_type */
	uint16_t misc;        /* header misc: PERF_RECORD_MISC_USER, _KERNEL, ... */
	uint64_t id;          /* PERF_SAMPLE_IDENTIFIER or PERF_SAMPLE_ID */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;

	/* PERF_SAMPLE_READ: NR values; value i is values[i * stride].  With a
	 * PERF_FORMAT_GROUP read_format that has PERF_FORMAT_ID, its id is
	 * values[i * stride + 1]; without GROUP there is one value, stride 1. */
	uint64_t read_enabled, read_running; /* 0 unless in read_format */
	uint32_t nr_values;
	uint32_t value_stride;
	const uint64_t *values;

	/* PERF_SAMPLE_CALLCHAIN: the kernel's array, PERF_CONTEXT_* markers included. */
	uint64_t nr_callchain;
	const uint64_t *callchain;

	/* PERF_SAMPLE_RAW */
	uint32_t raw_size;
	const void *raw;

	/* PERF_SAMPLE_BRANCH_STACK: NR entries of {from, to, flags}. */
	uint64_t nr_branches;
	const uint64_t *branches;

	/* PERF_SAMPLE_REGS_USER: registers named by attr.sample_regs_user, in bit order. */
	uint64_t user_regs_abi; /* PERF_SAMPLE_REGS_ABI_NONE: none were copied */
	uint32_t nr_user_regs;
	const uint64_t *user_regs;

	/* PERF_SAMPLE_STACK_USER: SIZE bytes copied, DYN_SIZE of them valid. */
	uint64_t user_stack_size;
	uint64_t user_stack_dyn_size;
	const void *user_stack;

	uint64_t weight;     /* PERF_SAMPLE_WEIGHT or _WEIGHT_STRUCT (full word) */
	uint64_t data_src;   /* PERF_SAMPLE_DATA_SRC */
	uint64_t phys_addr;  /* PERF_SAMPLE_PHYS_ADDR */
	uint64_t cgroup;     /* PERF_SAMPLE_CGROUP */
};

/* Decode HDR (a PERF_RECORD_SAMPLE of an event opened with ATTR).  Returns
 * 0, or -EINVAL when the record is shorter than its fields say (the detail
 * names the field); never reads past hdr->size. */
int hwc_sample_parse(const struct perf_event_header *hdr, const struct perf_event_attr *attr,
		     struct hwc_sample *out);

/* The sample_id trailer that non-sample records carry when
 * attr.sample_id_all is set: the PERF_SAMPLE_{TID,TIME,ID,STREAM_ID,CPU,
 * IDENTIFIER} fields of ATTR's sample_type. */
struct hwc_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
};

/* Decode the trailer of a non-sample record HDR; -EINVAL when too short. */
int hwc_sample_id_parse(const struct perf_event_header *hdr, const struct perf_event_attr *attr,
			struct hwc_sample_id *out);

/* Size in bytes of that trailer for ATTR (0 without sample_id_all). */
size_t hwc_sample_id_size(const struct perf_event_attr *attr);

#ifdef __cplusplus
}
#endif
#endif
