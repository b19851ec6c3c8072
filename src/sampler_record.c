/* A sampler's records into a perf.data recording (its events, their ids,
 * what existed before sampling started), or what existed before into a
 * symbolizer watching live. */
#include "sampler.h"
#include "hwc/symbol.h"

#include <sys/stat.h>

HWC_EXPORT long hwc_sampler_write(hwc_sampler *s, hwc_recording *rec)
{
	long n = 0;
	struct hwc_record r;
	while (hwc_sampler_next(s, &r) > 0) {
		int err = hwc_recording_write(rec, r.hdr);
		if (err)
			return err;
		n++;
	}
	if (n) {
		/* perf sorts records by time up to here before reading on. */
		struct perf_event_header round = {HWC_RECORD_FINISHED_ROUND, 0, 8};
		int err = hwc_recording_write(rec, &round);
		if (err)
			return err;
	}
	return n;
}

/* ------------------------------------------------------------- recording */

static bool same_file(int a, int b)
{
	struct stat x, y;
	return b >= 0 && fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* What existed before sampling started on S's target, from /proc: the
 * kernel's map (only into a recording REC: a symbolizer takes kernel
 * addresses from kallsyms itself), then every process (CPUS), the target
 * process, or nothing for a command not started yet, whose exec is in the
 * data.  A
 * recording gets the kernel's map and every process once, however many
 * samplers are added to it. */
static int synth_target(const hwc_sampler *s, const struct hwc__sink *k, hwc_recording *rec)
{
	bool kernel = false;
	for (size_t e = 0; rec && e < s->evs.n; e++)
		kernel |= !s->evs.e[e].ev->pub.attr.exclude_kernel;
	int err = kernel && hwc__recording_once(rec, HWC__SYNTH_KERNEL) ? hwc__synth_kernel_map(k)
									 : 0;
	if (err)
		return err;
	/* Each cgroup once (events of one cgroup follow each other). */
	for (size_t e = 0; !err && e < s->evs.n; e++) {
		int fd = s->evs.e[e].cgroup_fd;
		if (fd >= 0 && (e == 0 || !same_file(fd, s->evs.e[e - 1].cgroup_fd)))
			err = hwc__synth_cgroups(k, fd);
	}
	if (err)
		return err;
	switch (s->kind) {
	case HWC_TARGET_CPUS:
	case HWC_TARGET_CGROUP:
		return !rec || hwc__recording_once(rec, HWC__SYNTH_ALL) ? hwc__synth_all(k) : 0;
	case HWC_TARGET_PROCESS:
	case HWC_TARGET_THREAD:
	case HWC_TARGET_SELF:
		return hwc__synth_process(k, s->tgid);
	case HWC_TARGET_COMMAND:
		/* Its exec is in the data, unless this recording follows another
		 * (--switch-output): then it is described as it is now. */
		return s->child.started && s->child.pid > 0 ? hwc__synth_process(k, s->child.pid)
							    : 0;
	}
	return 0;
}

static int to_recording(void *arg, const struct perf_event_header *h)
{
	return hwc_recording_write(arg, h);
}

HWC_EXPORT int hwc_recording_add_sampler(hwc_recording *rec, const hwc_sampler *s)
{
	hwc__clear_error();
	int base = (int)hwc_recording_nevents(rec);
	for (size_t e = 0; e < s->evs.n; e++) {
		const struct hwc__opened *m = &s->evs.e[e];
		/* -1: alone; or in a group perf.data cannot describe, as its
		 * members do not follow the leader (a refused weak group's
		 * topdown events, kept together): its samples need none */
		int leader = s->evs.e[m->leader].group_size == 1 ||
					     !hwc__group_in_place(&s->evs, m->leader)
				     ? -1
				     : base + (int)m->leader;
		int idx = hwc__recording_add_event(rec, &s->evs.e[e].ev->pub.attr, s->evs.e[e].ev->name, leader);
		if (idx < 0)
			return idx;
		int err = hwc__recording_add_ids(rec, idx, m->ids, m->nids);
		if (err)
			return err;
	}
	struct hwc__sink k = {to_recording, rec, hwc__recording_first_attr(rec)};
	return synth_target(s, &k, rec);
}

static int to_symbols(void *arg, const struct perf_event_header *h)
{
	return hwc_symbols_record(arg, h, NULL);
}

HWC_EXPORT int hwc_symbols_add_sampler(hwc_symbols *syms, const hwc_sampler *s)
{
	hwc__clear_error();
	struct hwc__sink k = {to_symbols, syms, NULL};
	return synth_target(s, &k, NULL);
}
