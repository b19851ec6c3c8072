/* The sampler's per-thread logs and the records it makes itself.
 * HWC_LOG_PROCCSW and HWC_LOG_PROCEXIT add counted events (below); at stop,
 * each initial thread's own counts become PERF_RECORD_READ records, and
 * losses the kernel never reported a PERF_RECORD_LOST_SAMPLES. */
#include "sampler.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void counting_attr(const hwc_sampler *s, struct perf_event_attr *a, uint64_t read_format)
{
	a->size = sizeof(*a);
	a->sample_type = BASE_SAMPLE_TYPE;
	a->read_format = read_format;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = hwc__sampler_clock(s);
	a->sample_period = 0;
	a->freq = 0;
}

/* HWC_LOG_PROCCSW: a group led by context-switches, sampling every switch
 * with the group's values.  HWC_LOG_PROCEXIT: the counted events get
 * inherit_stat, so the kernel writes a PERF_RECORD_READ of each when an
 * inherited task exits (one per CPU buffer the task had it on).  Those read
 * a single value: a group's READ would miss the members the exit detached
 * first, and perf reads READ records as single values. */
int hwc__sampler_add_log_events(hwc_sampler *s)
{
	unsigned f = s->opts.flags;
	if (!(f & (HWC_LOG_PROCEXIT | HWC_LOG_PROCCSW)))
		return 0;
	hwc_evlist *defaults = NULL, *csw = NULL;
	const hwc_evlist *counted = s->opts.counted;
	int err = 0;
	if (!counted || hwc_evlist_size(counted) == 0) {
		err = hwc_evlist_new(&defaults);
		if (!err)
			err = hwc_evlist_add(defaults, "task-clock");
		counted = defaults;
	}
	int leader = -1;
	size_t ncounted = hwc_evlist_size(counted);
	if (!err && (f & HWC_LOG_PROCCSW) && 1 + ncounted > HWC__MAX_GROUP)
		err = hwc__fail(-E2BIG, "the context-switch log counts %zu events with "
					"context-switches: a group holds at most %d",
				ncounted, HWC__MAX_GROUP);
	if (!err && (f & HWC_LOG_PROCCSW)) {
		leader = s->csw_leader = (int)s->evs.n;
		err = hwc_evlist_new(&csw);
		if (!err)
			err = hwc_evlist_add(csw, "context-switches");
		if (!err)
			err = hwc__events_add(&s->evs, hwc_evlist_event(csw, 0), (size_t)leader,
					      1 + ncounted);
		if (!err) {
			/* Switches happen in the kernel: user-only would count none, so
			 * never fall back for this one. */
			struct perf_event_attr *a = &s->evs.e[leader].ev->pub.attr;
			counting_attr(s, a, GROUP_READ_FORMAT);
			a->sample_period = 1;
			a->sample_type |= PERF_SAMPLE_READ;
			a->exclude_kernel = 0;
			s->evs.e[leader].ev->pub.explicit_priv = true;
		}
	}
	for (size_t e = 0; !err && e < ncounted; e++) {
		/* alone, or a member of the context-switch group */
		size_t n = s->evs.n;
		err = hwc__events_add(&s->evs, hwc_evlist_event(counted, e),
				      leader < 0 ? n : (size_t)leader, leader < 0);
		if (err)
			break;
		struct perf_event_attr *a = &s->evs.e[n].ev->pub.attr;
		counting_attr(s, a, SINGLE_READ_FORMAT);
		a->inherit_stat = !!(f & HWC_LOG_PROCEXIT);
	}
	hwc_evlist_free(defaults);
	hwc_evlist_free(csw);
	return err;
}


/* HWC_LOG_PROCEXIT: the counted events once more on each initial thread
 * alone, not inherited, so their own counts are known when they end: the
 * kernel reports the exit of inherited tasks only. */
int hwc__sampler_open_own(hwc_sampler *s)
{
	s->own_fd = malloc(s->ntids * s->evs.n * sizeof(int));
	if (!s->own_fd)
		return hwc__fail(-ENOMEM, "out of memory");
	for (size_t i = 0; i < s->ntids * s->evs.n; i++)
		s->own_fd[i] = -1;
	for (size_t t = 0; t < s->ntids; t++) {
		for (size_t e = 0; e < s->evs.n; e++) {
			if (!s->evs.e[e].ev->pub.attr.inherit_stat)
				continue;
			struct perf_event_attr attr = s->evs.e[e].ev->pub.attr;
			attr.disabled = 1;
			attr.enable_on_exec = s->kind == HWC_TARGET_COMMAND;
			attr.inherit = attr.inherit_stat = 0;
			int fd = hwc__perf_event_open(&attr, s->tids[t], -1, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd == -ESRCH)
				break; /* exited already: nothing of it to report */
			if (fd < 0)
				return hwc__sampler_explain(s, fd, e, &attr, s->tids[t], -1);
			s->own_fd[t * s->evs.n + e] = fd;
			int err = hwc__apply_filter(fd, s->evs.e[e].ev);
			if (!err)
				err = hwc__sampler_add_id(s, e, fd);
			if (err)
				return err;
		}
	}
	return 0;
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The sample_id trailer of a record of event A, in the kernel's order:
 * tid, time, id, stream id, cpu, identifier. */
static int put_sample_id(struct hwc__bytes *b, const struct perf_event_attr *a,
			 const uint32_t pidtid[2], uint64_t id, int cpu)
{
	uint64_t type = a->sample_type;
	uint32_t cpures[2] = {(uint32_t)(cpu < 0 ? 0 : cpu), 0};
	int err = 0;
	if (!err && (type & PERF_SAMPLE_TID))
		err = hwc__bytes_put(b, pidtid, 8);
	if (!err && (type & PERF_SAMPLE_TIME))
		err = hwc__bytes_u64(b, now_ns(a->clockid));
	if (!err && (type & PERF_SAMPLE_ID))
		err = hwc__bytes_u64(b, id);
	if (!err && (type & PERF_SAMPLE_STREAM_ID))
		err = hwc__bytes_u64(b, id);
	if (!err && (type & PERF_SAMPLE_CPU))
		err = hwc__bytes_put(b, cpures, 8);
	if (!err && (type & PERF_SAMPLE_IDENTIFIER))
		err = hwc__bytes_u64(b, id);
	return err;
}

/* A PERF_RECORD_READ of thread T's own count of event E, as the kernel
 * writes for inherited tasks: pid, tid, value, times, id, lost, sample_id. */
static int queue_exit(hwc_sampler *s, size_t t, size_t e)
{
	int fd = s->own_fd[t * s->evs.n + e];
	uint64_t vals[5]; /* value, enabled, running, id, lost */
	if (fd < 0 || read(fd, vals, sizeof(vals)) != (ssize_t)sizeof(vals))
		return 0; /* never opened, or failed: nothing counted to report */
	const struct perf_event_attr *a = &s->evs.e[e].ev->pub.attr;
	uint32_t pidtid[2] = {(uint32_t)s->tgid, (uint32_t)s->tids[t]};
	size_t size = sizeof(struct perf_event_header) + 8 + sizeof(vals) + hwc_sample_id_size(a);
	struct perf_event_header h = {PERF_RECORD_READ, 0, (uint16_t)size};
	struct hwc__bytes *b = &s->synth;
	return hwc__bytes_put(b, &h, sizeof(h)) ?: hwc__bytes_put(b, pidtid, 8) ?:
	       hwc__bytes_put(b, vals, sizeof(vals)) ?: put_sample_id(b, a, pidtid, vals[3],
								       sched_getcpu());
}

/* A PERF_RECORD_LOST_SAMPLES for drops the kernel never reported: the
 * buffer was still full when the events stopped. */
int hwc__sampler_queue_lost(hwc_sampler *s, uint64_t lost)
{
	const struct perf_event_attr *a = &s->evs.e[0].ev->pub.attr;
	uint64_t id = s->evs.e[0].nids ? s->evs.e[0].ids[0] : 0;
	size_t size = sizeof(struct perf_event_header) + 8 + hwc_sample_id_size(a);
	struct perf_event_header h = {PERF_RECORD_LOST_SAMPLES, 0, (uint16_t)size};
	uint32_t none[2] = {0, 0};
	struct hwc__bytes *b = &s->synth;
	return hwc__bytes_put(b, &h, sizeof(h)) ?: hwc__bytes_u64(b, lost) ?:
	       put_sample_id(b, a, none, id, 0);
}

/* Records event E dropped on full buffers (PERF_FORMAT_LOST), over every
 * thread and CPU.  A member whose leader reads the group is counted there. */
static uint64_t lost_of(hwc_sampler *s, size_t e)
{
	const struct hwc__opened *m = &s->evs.e[e];
	const struct perf_event_attr *a = &s->evs.e[e].ev->pub.attr;
	if (!m->group_size && s->evs.e[m->leader].ev->pub.attr.read_format & PERF_FORMAT_GROUP)
		return 0;
	uint64_t total = 0, buf[3 + 3 * HWC__MAX_GROUP];
	for (size_t t = 0; t < s->ntids; t++)
		for (size_t c = 0; c < s->ncpus; c++) {
			int fd = s->fd[HWC__SLOT(s, t, c, e)];
			ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
			if (n <= 0)
				continue;
			size_t words = (size_t)n / 8;
			if (!(a->read_format & PERF_FORMAT_GROUP)) {
				total += buf[words - 1]; /* lost comes last */
				continue;
			}
			/* nr, enabled, running, then {value, id, lost} per member */
			size_t first = 1 + !!(a->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
				       !!(a->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);
			for (size_t k = first + 2; k < words; k += 3)
				total += buf[k];
		}
	return total;
}

uint64_t hwc__sampler_lost(hwc_sampler *s)
{
	uint64_t total = 0;
	for (size_t e = 0; e < s->evs.n; e++)
		total += lost_of(s, e);
	return total;
}

int hwc__sampler_queue_exits(hwc_sampler *s)
{
	int err = 0;
	if (!s->own_fd)
		return 0;
	for (size_t t = 0; t < s->ntids && !err; t++)
		for (size_t e = 0; e < s->evs.n && !err; e++)
			err = queue_exit(s, t, e);
	return err;
}
