/* Internals shared by the sampler's files (sampler.c, sampler_open.c,
 * sampler_log.c, sampler_ring.c, sampler_record.c); never installed. */
#ifndef HWC_SAMPLER_H
#define HWC_SAMPLER_H

#include "internal.h"
#include "hwc/sample.h"

#include <poll.h>

#define BASE_SAMPLE_TYPE                                                                    \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |     \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
/* PERF_FORMAT_LOST everywhere: what the kernel dropped and never got to
 * report in a PERF_RECORD_LOST (a buffer full to the end) is read at stop. */
#define SINGLE_READ_FORMAT                                                                  \
	(PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |  \
	 PERF_FORMAT_LOST)
#define GROUP_READ_FORMAT (PERF_FORMAT_GROUP | SINGLE_READ_FORMAT)

struct hwc__ring {
	int fd; /* our own reference to the event whose buffer this is */
	struct perf_event_mmap_page *page;
	const uint8_t *data;
	uint64_t size, tail, head;
	bool scanned; /* head read in this pass */
	bool hup;
};

struct hwc_sampler {
	enum hwc_target_kind kind;
	unsigned tflags;
	bool every_cpu; /* on every online CPU (-a, not -C): uncore PMUs on their cpumask */
	struct hwc_sampler_opts opts;
	struct hwc__events evs; /* attrs as opened */
	int *cpus;
	size_t ncpus;
	pid_t *tids;          /* task targets: the threads; CPUS: one entry, -1 */
	size_t ntids, cap_tids;
	pid_t tgid;           /* the process of the threads, for exit records */
	int *fd;              /* [(tid * ncpus + cpu) * nev + ev] */
	size_t cap_fd;
	int *own_fd;          /* LOG_PROCEXIT: [tid * nev + ev], the thread alone */
	struct hwc__ring *ring;    /* [ncpus] */
	struct pollfd *pfd;   /* [ncpus + 1] */
	size_t pages;
	long page_size;
	struct hwc__idmap *ids; /* sorted by id once all are open */
	size_t nids, cap_ids;
	int csw_leader;       /* index of context-switches for HWC_LOG_PROCCSW, or -1 */
	struct hwc__child child;
	pid_t pid;
	int pidfd;
	bool ended, stopped;
	bool lost_done;       /* the unreported losses were queued */
	uint64_t lost_total;  /* dropped records, read from the events at stop */
	int status;
	/* iterator */
	size_t cur;
	uint64_t pending; /* size of the record handed out last, still in its ring */
	uint8_t *copy;    /* a record that wraps around the end of its ring */
	struct hwc__bytes synth;
	size_t synth_pos;
	struct hwc_sampler_stats stats;
};

#define HWC__SLOT(s, t, c, e) (((t) * (s)->ncpus + (c)) * (s)->evs.n + (e))

/* The clock of the sample times (HWC_CLOCKID, else CLOCK_MONOTONIC). */
static inline clockid_t hwc__sampler_clock(const hwc_sampler *s)
{
	return s->opts.flags & HWC_CLOCKID ? s->opts.clockid : CLOCK_MONOTONIC;
}

static inline bool hwc__sampler_task_target(const hwc_sampler *s)
{
	return !hwc__cpu_wide(s->kind);
}


/* sampler_open.c: opening the events on the target's threads and CPUs. */
/* Record the id of event E just opened as FD. */
int hwc__sampler_add_id(hwc_sampler *s, size_t e, int fd);
/* Explain why event E, opened with ATTR (its attr as adjusted for this
 * target), failed to open on PID and CPU with ERR (detail set). */
int hwc__sampler_explain(hwc_sampler *s, int err, size_t e, const struct perf_event_attr *attr,
			 pid_t pid, int cpu);
/* Open every event on every thread (or the CPUs) of target T: 0,
 * HWC__RETRY_USER_ONLY or HWC__RETRY_UNGROUPED (close_all and call again:
 * see hwc__open_event), or -errno. */
int hwc__sampler_open_tasks(hwc_sampler *s, const struct hwc_target *t);
/* Close every event and ring buffer, forgetting their ids. */
void hwc__sampler_close_all(hwc_sampler *s);

/* sampler_log.c: HWC_LOG_PROCEXIT and HWC_LOG_PROCCSW, and the records the
 * sampler makes itself when it stops. */
int hwc__sampler_add_log_events(hwc_sampler *s);
int hwc__sampler_open_own(hwc_sampler *s);
/* Records dropped on full buffers over every event, read at stop. */
uint64_t hwc__sampler_lost(hwc_sampler *s);
/* Queue each initial thread's own counts (HWC_LOG_PROCEXIT), read at stop. */
int hwc__sampler_queue_exits(hwc_sampler *s);
/* Queue a PERF_RECORD_LOST_SAMPLES for LOST records never reported. */
int hwc__sampler_queue_lost(hwc_sampler *s, uint64_t lost);

#endif
