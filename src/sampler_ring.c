/* Draining a sampler: polling its ring buffers and its target, and the
 * record iterator, which hands out each record in place in its buffer (a
 * copy when it wraps around the end), then the records the sampler made
 * itself once every buffer is empty. */
#include "sampler.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>

HWC_EXPORT int hwc_sampler_poll(hwc_sampler *s, int timeout_ms)
{
	hwc__clear_error();
	struct pollfd *pfd = s->pfd;
	nfds_t n = 0;
	for (size_t c = 0; c < s->ncpus; c++)
		if (s->ring[c].fd >= 0 && !s->ring[c].hup)
			pfd[n++] = (struct pollfd){s->ring[c].fd, POLLIN, 0};
	nfds_t nrings = n;
	if (s->pidfd >= 0 && !s->ended)
		pfd[n++] = (struct pollfd){s->pidfd, POLLIN, 0};
	if (n == 0)
		return 1;
	int r = poll(pfd, n, timeout_ms);
	if (r < 0)
		return errno == EINTR ? -EINTR : hwc__fail(-errno, "poll: %s", strerror(errno));
	/* A buffer whose events all ended hangs up for good: stop polling it. */
	for (nfds_t i = 0; i < nrings; i++)
		if (pfd[i].revents & POLLHUP)
			for (size_t c = 0; c < s->ncpus; c++)
				if (s->ring[c].fd == pfd[i].fd)
					s->ring[c].hup = true;
	return r > 0;
}

HWC_EXPORT bool hwc_sampler_ended(hwc_sampler *s, int *status)
{
	if (!s->ended && s->child.pid > 0 && s->child.started) {
		int st;
		pid_t r = waitpid(s->child.pid, &st, WNOHANG);
		if (r == s->child.pid) {
			s->ended = true;
			s->status = st;
			s->child.pid = -1;
		}
	} else if (!s->ended && s->pidfd >= 0 && s->child.pid <= 0 && s->kind != HWC_TARGET_COMMAND) {
		struct pollfd p = {s->pidfd, POLLIN, 0};
		if (poll(&p, 1, 0) > 0)
			s->ended = true;
	}
	if (!s->ended && hwc__sampler_task_target(s) && s->kind != HWC_TARGET_SELF && s->pidfd < 0) {
		bool all = s->ncpus > 0;
		for (size_t c = 0; c < s->ncpus; c++)
			all &= s->ring[c].fd < 0 || s->ring[c].hup;
		s->ended = all;
	}
	if (status)
		*status = s->status;
	return s->ended;
}

/* -------------------------------------------------------------- iterating */

/* The event of record H; unknown ids are the first event's, as are all
 * records of a sampler with one event (they carry no id). */
static size_t event_of(const hwc_sampler *s, const struct perf_event_header *h)
{
	size_t e;
	if (s->evs.n == 1)
		return 0;
	return hwc__idmap_find(s->ids, s->nids, hwc__record_id(h), &e) ? e : 0;
}

static void count(hwc_sampler *s, const struct perf_event_header *h)
{
	const uint64_t *body = (const uint64_t *)(const void *)(h + 1);
	s->stats.records++;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		s->stats.samples++;
		break;
	case PERF_RECORD_LOST: /* id, lost */
		if (h->size >= 24)
			s->stats.lost += body[1];
		break;
	case PERF_RECORD_LOST_SAMPLES: /* lost */
		if (h->size >= 16)
			s->stats.lost += body[0];
		break;
	case PERF_RECORD_THROTTLE:
		s->stats.throttled++;
		break;
	case PERF_RECORD_UNTHROTTLE:
		s->stats.unthrottled++;
		break;
	}
}

static void release(hwc_sampler *s)
{
	if (!s->pending)
		return;
	struct hwc__ring *r = &s->ring[s->cur];
	r->tail += s->pending;
	s->pending = 0;
	__atomic_store_n(&r->page->data_tail, r->tail, __ATOMIC_RELEASE);
}

/* The record at the tail of ring R, copied when it wraps around the end. */
static const struct perf_event_header *peek(hwc_sampler *s, struct hwc__ring *r)
{
	uint64_t off = r->tail & (r->size - 1);
	struct perf_event_header h;
	for (size_t i = 0; i < sizeof(h); i++)
		((uint8_t *)&h)[i] = r->data[(off + i) & (r->size - 1)];
	if (h.size < sizeof(h) || r->tail + h.size > r->head)
		return NULL; /* cannot happen with a sane kernel: give up on this pass */
	if (off + h.size <= r->size)
		return (const void *)(r->data + off);
	size_t first = (size_t)(r->size - off);
	memcpy(s->copy, r->data + off, first);
	memcpy(s->copy + first, r->data, h.size - first);
	return (const void *)s->copy;
}

HWC_EXPORT int hwc_sampler_next(hwc_sampler *s, struct hwc_record *rec)
{
	hwc__clear_error();
	release(s);
	for (; s->cur < s->ncpus; s->cur++) {
		struct hwc__ring *r = &s->ring[s->cur];
		if (!r->page)
			continue;
		if (!r->scanned) {
			r->head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
			r->scanned = true;
		}
		if (r->tail >= r->head)
			continue;
		const struct perf_event_header *h = peek(s, r);
		if (!h) {
			r->tail = r->head;
			__atomic_store_n(&r->page->data_tail, r->tail, __ATOMIC_RELEASE);
			continue;
		}
		s->pending = h->size;
		count(s, h);
		size_t e = event_of(s, h);
		*rec = (struct hwc_record){h, &s->evs.e[e].ev->pub.attr, s->evs.e[e].ev->name, s->cpus[s->cur]};
		return 1;
	}
	/* Every buffer is empty: the records made here at the end, then a new pass. */
	if (s->stopped && !s->lost_done) {
		s->lost_done = true;
		if (s->lost_total > s->stats.lost && hwc__sampler_queue_lost(s, s->lost_total - s->stats.lost))
			return hwc__fail(-ENOMEM, "out of memory");
	}
	if (s->synth_pos < s->synth.len) {
		const struct perf_event_header *h = (const void *)(s->synth.p + s->synth_pos);
		s->synth_pos += h->size;
		count(s, h);
		size_t e = event_of(s, h);
		*rec = (struct hwc_record){h, &s->evs.e[e].ev->pub.attr, s->evs.e[e].ev->name, -1};
		return 1;
	}
	s->cur = 0;
	for (size_t c = 0; c < s->ncpus; c++)
		s->ring[c].scanned = false;
	return 0;
}

HWC_EXPORT void hwc_sampler_stats(const hwc_sampler *s, struct hwc_sampler_stats *out)
{
	*out = s->stats;
}
