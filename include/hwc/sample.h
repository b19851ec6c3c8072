/*
 * libhwc sample records: decoding the records perf_event_open(2) writes into
 * its ring buffer, which are also the records a perf.data file stores.  The
 * live sampler and the perf.data reader both hand out raw records (a
 * struct perf_event_header followed by its body) and decode them here.
 */
#ifndef HWC_SAMPLE_H
#define HWC_SAMPLE_H

#include <hwc/hwc.h>
#include <hwc/output.h>
#include <time.h>

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

/* Where the fixed-size fields at the head of a sample of ATTR are (those
 * before the first of variable size, IDENTIFIER to PERIOD, in
 * perf_event_open(2)'s order): the u64 word of the record's body (what
 * follows its header) that holds each one, -1 when sample_type lacks it,
 * and how many words the head has.  hwc_sample_parse() reads them there.
 * A reader that needs only these of many samples of one event (an address
 * and its period) computes this once, then per record checks that
 * hdr->size >= sizeof(*hdr) + 8 * words and reads the words. */
struct hwc_sample_head {
	int8_t id;      /* PERF_SAMPLE_ID's word, else PERF_SAMPLE_IDENTIFIER's */
	int8_t ip;
	int8_t pid_tid; /* two u32: pid, then tid */
	int8_t time;
	int8_t addr;
	int8_t stream_id;
	int8_t cpu;     /* two u32: cpu, then a reserved one */
	int8_t period;
	uint8_t words;
};
void hwc_sample_head(const struct perf_event_attr *attr, struct hwc_sample_head *out);

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

/* ------------------------------------------------------------------ sampling */

/* A sampler: events of an hwc_evlist opened for sampling on a target, their
 * records read from one ring buffer per CPU.  Process targets (COMMAND,
 * PROCESS, THREAD, SELF) are sampled on every CPU with inheritance, so
 * children and new threads are included unless HWC_NO_INHERIT; a CPUS
 * target samples everything on its CPUs and, when its argv is set, runs
 * that command too (the recording lasts as long as the command).  Every
 * event samples the IP, pid/tid, time (CLOCK_MONOTONIC, or the clock of
 * HWC_CLOCKID), CPU and period,
 * with the PERF_SAMPLE_IDENTIFIER that names the event. */
typedef struct hwc_sampler hwc_sampler;

/* A recording: a perf.data file being written (see hwc-data(5)). */
typedef struct hwc_recording hwc_recording;

enum hwc_callgraph {
	HWC_CALLGRAPH_NONE,
	HWC_CALLGRAPH_FP,    /* the kernel walks frame pointers (PERF_SAMPLE_CALLCHAIN) */
	HWC_CALLGRAPH_DWARF, /* kernel chain, plus user registers and a copy of the user
			      * stack to unwind with DWARF afterwards */
};

/* Flags for struct hwc_sampler_opts.flags. */
#define HWC_GROUP_VALUES 0x1u /* in each {group} only the leader samples; the others are
			       * counted and their values come with every sample */
#define HWC_LOG_PROCEXIT 0x2u /* every thread's counts of the counted events at its exit,
			       * as PERF_RECORD_READ (hwpmc's PMC_F_LOG_PROCEXIT) */
#define HWC_LOG_PROCCSW  0x4u /* a thread's counts at each of its context switches, as
			       * samples of "context-switches" (PMC_F_LOG_PROCCSW) */
/* What each sample carries beyond ip, pid/tid, time and period (and what the
 * call graph needs), as perf record decides: its event's id
 * (PERF_SAMPLE_IDENTIFIER) only when the sampler has several events, its
 * CPU only on a CPUS target.  These flags ask for them anyway. */
#define HWC_SAMPLE_CPU   0x8u  /* every sample names its CPU (perf record --sample-cpu) */
#define HWC_SAMPLE_ID    0x10u /* every record names its event even when it is the only
				* one: a recording given user records needs it */
#define HWC_CLOCKID      0x20u /* times on opts.clockid, not CLOCK_MONOTONIC (perf's -k) */

struct hwc_sampler_opts {
	uint64_t period;           /* a sample every PERIOD events, or */
	uint64_t freq;             /* FREQ samples a second (both 0: 4000 Hz) */
	enum hwc_callgraph callgraph;
	uint32_t stack_size;       /* DWARF: bytes of user stack per sample, a multiple
				    * of 8 up to 65528 (0: 8192) */
	unsigned flags;            /* HWC_GROUP_VALUES | HWC_LOG_PROCEXIT | HWC_LOG_PROCCSW |
				    * HWC_SAMPLE_CPU | HWC_SAMPLE_ID */
	const hwc_evlist *counted; /* the events HWC_LOG_* report (NULL: task-clock) */
	size_t mmap_pages;         /* ring buffer pages per CPU, a power of 2 (0: 128, or
				    * 512 for DWARF call graphs when privileged) */
	clockid_t clockid;         /* with HWC_CLOCKID: CLOCK_MONOTONIC, _MONOTONIC_RAW,
				    * _REALTIME, _BOOTTIME or _TAI (the kernel's choice) */
};

/* Open the events of LIST (may be NULL or empty when OPTS->flags has an
 * HWC_LOG_* flag) for sampling on TARGET, disabled.  For a COMMAND target
 * (or a CPUS target with argv) the process is created here and waits;
 * hwc_sampler_start() lets it exec.  When kernel sampling is denied, events
 * that did not choose their privilege levels fall back to user space only
 * (see hwc_sampler_user_only()), unless TARGET->flags has HWC_NO_FALLBACK. */
int hwc_sampler_open(hwc_sampler **out, const hwc_evlist *list, const struct hwc_target *target,
		     const struct hwc_sampler_opts *opts);

/* Close every event and unmap the buffers.  A COMMAND child never started is
 * reaped; one still running is left running (signal hwc_sampler_pid()). */
void hwc_sampler_close(hwc_sampler *s);

/* Start sampling: release a COMMAND child to exec (its events start with the
 * exec; an exec failure is returned, e.g. -ENOENT), or enable the events. */
int hwc_sampler_start(hwc_sampler *s);

/* Stop sampling.  What the buffers still hold stays readable, followed by
 * a PERF_RECORD_LOST_SAMPLES for records the kernel dropped and had not
 * reported yet (read from the events), and by the exit counts
 * (HWC_LOG_PROCEXIT) of the threads sampled from the start, whose own exit
 * the kernel does not report. */
int hwc_sampler_stop(hwc_sampler *s);

/* The pid of the COMMAND child or of the target process, or -1. */
pid_t hwc_sampler_pid(const hwc_sampler *s);

/* True when kernel sampling was denied and the events sample user space only. */
bool hwc_sampler_user_only(const hwc_sampler *s);

/* Wait up to TIMEOUT_MS (-1: no limit) until a ring buffer is half full or
 * the target ended.  Returns 1 (records or the end may be there), 0 on
 * timeout, -EINTR when a signal arrived. */
int hwc_sampler_poll(hwc_sampler *s, int timeout_ms);

/* True once the target is gone: the COMMAND child or the target process
 * exited (for a child, *STATUS gets its wait(2) status, else -1), or every
 * sampled task ended.  Never true for SELF or a CPUS target without argv. */
bool hwc_sampler_ended(hwc_sampler *s, int *status);

/* A record from a ring buffer: the kernel's bytes (8-byte aligned, valid
 * until the next hwc_sampler_next() or hwc_sampler_write()), and the event
 * it belongs to, found by its sample id. */
struct hwc_record {
	const struct perf_event_header *hdr;
	const struct perf_event_attr *attr; /* decode with hwc_sample_parse() */
	const char *event;                  /* the event's name */
	int cpu;                            /* the CPU of the ring buffer */
};

/* Take the next record: 1 and *REC, or 0 when every buffer is empty for now
 * (after hwc_sampler_stop(): for good).  Records of one CPU come in order;
 * across CPUs they are not sorted by time. */
int hwc_sampler_next(hwc_sampler *s, struct hwc_record *rec);

/* Move every record waiting in the buffers into REC, then a
 * PERF_RECORD_FINISHED_ROUND.  Returns the number of records moved, or the
 * recording's -errno (e.g. -ENOSPC: see hwc_recording_write()). */
long hwc_sampler_write(hwc_sampler *s, hwc_recording *rec);

/* Totals over the records taken so far: never hidden, always counted. */
struct hwc_sampler_stats {
	uint64_t records;     /* every record taken */
	uint64_t samples;     /* PERF_RECORD_SAMPLE */
	uint64_t lost;        /* records the kernel dropped on full buffers
			       * (PERF_RECORD_LOST and _LOST_SAMPLES) */
	uint64_t throttled;   /* PERF_RECORD_THROTTLE: sampling paused at the rate limit */
	uint64_t unthrottled; /* PERF_RECORD_UNTHROTTLE */
};
void hwc_sampler_stats(const hwc_sampler *s, struct hwc_sampler_stats *out);

/* The events the sampler opened, in the order a recording lists them: the
 * sampled events, then the HWC_LOG_* group.  NAME (may be NULL) gets the
 * event's name.  NULL past the end. */
size_t hwc_sampler_nevents(const hwc_sampler *s);
const struct perf_event_attr *hwc_sampler_event(const hwc_sampler *s, size_t idx,
						const char **name);

/* ------------------------------------------------------------------ recording */

/* Start the perf.data file PATH, mode 0600.  The data goes to a temporary
 * file next to it (hwc_output_create(): a PATH that is a symbolic link,
 * FIFO, device or directory is refused), which hwc_recording_close()
 * renames to PATH: until then, and when the recording is discarded, a
 * previous PATH is left as it was. */
int hwc_recording_create(hwc_recording **out, const char *path);

/* The same with hwc_output_create()'s FLAGS: HWC_OUTPUT_KEEP_OLD renames
 * a previous PATH to PATH.old at the close, as hwc record and perf record
 * do. */
int hwc_recording_create_flags(hwc_recording **out, const char *path, unsigned flags);

/* The same on FD, open for writing, which stays the caller's: a regular file
 * is truncated and made a perf.data file; a pipe or socket, or a file open
 * to append (O_APPEND: pwrite cannot place the header), takes a stream in
 * perf's pipe mode (hwc-data(5), STREAMS). */
int hwc_recording_fdopen(hwc_recording **out, int fd);

/* Compress what is written from now on with zstd at LEVEL (1, fastest, to
 * 22, smallest; 0: none, the default) into PERF_RECORD_COMPRESSED records
 * and the COMPRESSED feature, as perf record -z does.  Call before the
 * first record is written (-EBUSY after it); -EINVAL for a level out of
 * range. */
int hwc_recording_set_compression(hwc_recording *rec, int level);

/* The command line stored in the file's CMDLINE feature. */
int hwc_recording_set_cmdline(hwc_recording *rec, int argc, char *const *argv);

/* Describe S's events in REC and write what a report needs about the tasks
 * that existed before sampling started: COMM, MMAP2 and FORK records from
 * /proc for the target (every process for a CPUS target) and the kernel's
 * map.  Call once, after hwc_sampler_open() and before hwc_sampler_start();
 * or, to go on in a new recording while S samples (as perf record
 * --switch-output does), after hwc_sampler_write() into the previous one:
 * the started command's process is then described too. */
int hwc_recording_add_sampler(hwc_recording *rec, const hwc_sampler *s);

/* The events REC lists so far, in the order they were added: each
 * hwc_recording_add_sampler() appends its sampler's events (as
 * hwc_sampler_event() lists them), the first user record appends
 * "hwc-user".  An event's position here is its index in the finished
 * file's attribute table (hwc_perfdata_attr()). */
size_t hwc_recording_nevents(const hwc_recording *rec);

/* Append one record (HDR and its HDR->size bytes, a multiple of 8).  Its
 * sample id must name an event the recording knows; synthesized records
 * carry id 0, which means the first event.  The data section is written as
 * it goes.  When the disk is full (or another write error occurs) the
 * recording stops taking records, keeps every complete record already
 * written and returns the -errno (-ENOSPC); hwc_recording_close() still
 * leaves a valid file. */
int hwc_recording_write(hwc_recording *rec, const struct perf_event_header *hdr);

/* A user record (hwpmc's PMC_OP_WRITELOG): SIZE bytes of DATA, timestamped
 * now (on the clock of the recording's events, CLOCK_MONOTONIC without
 * one) with the caller's pid, tid and CPU.  Stored as a
 * sample of the event "hwc-user" (a software bpf-output event) whose RAW
 * payload is DATA zero-padded so that 4 + the raw size is a multiple of 8;
 * see hwc-data(5).  -EINVAL when the recording's events carry no sample id
 * (sample with HWC_SAMPLE_ID). */
int hwc_recording_write_user(hwc_recording *rec, const void *data, size_t size);

/* The name a file of hwc_recording_create() gets at the close instead of
 * its PATH: a name in the same directory, checked as hwc_output_create()
 * checks PATH (-EXDEV for another directory, -EINVAL for a stream). */
int hwc_recording_set_path(hwc_recording *rec, const char *path);

/* Write everything buffered and make the file complete and valid as of now
 * (header, event list, features); later records extend it again.  (A file
 * of hwc_recording_create() has PATH only after the close.) */
int hwc_recording_flush(hwc_recording *rec);

struct hwc_recording_stats {
	uint64_t records;  /* records in the data section (or buffered for it) */
	uint64_t samples;  /* of which PERF_RECORD_SAMPLE */
	uint64_t bytes;    /* size of the file */
};
void hwc_recording_stats(const hwc_recording *rec, struct hwc_recording_stats *out);

/* Flush, finish the file and free REC; FINAL (may be NULL) gets what the
 * finished file holds.  Returns 0 or the first write error: the file then
 * holds every complete record that fit and is valid (the detail says so). */
int hwc_recording_close(hwc_recording *rec, struct hwc_recording_stats *final);

/* Free REC without finishing it, when what it holds must not replace the
 * previous file (the command could not even start): the temporary file of
 * hwc_recording_create() is removed and PATH left as it was; the
 * descriptor of hwc_recording_fdopen() is left as it is. */
void hwc_recording_discard(hwc_recording *rec);

#ifdef __cplusplus
}
#endif
#endif
