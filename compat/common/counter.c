/* Counters for a PERFEVTSEL word, with the errno the BSD interfaces give. */
#include "devshim.h"

#include <errno.h>

static int open_counter(uint64_t evtsel, const struct hwc_target *t, int pinned, hwc_counters **out)
{
	hwc_evlist *list;
	*out = NULL;
	int err = hwc_evlist_new(&list);
	if (err)
		return -err;
	err = devshim_event(list, evtsel);
	if (!err) {
		hwc_evlist_attr(list, 0)->pinned = pinned ? 1 : 0;
		err = hwc_counters_open(out, list, t);
	}
	hwc_evlist_free(list);
	switch (err) {
	case 0:
		return 0;
	case -ENOENT: /* no hardware PMU; the only way the encoder says ENOENT */
	case -ENODEV:
	case -EOPNOTSUPP:
		return ENODEV;
	case -EACCES:
	case -EPERM:
		return EACCES;
	default:
		return -err;
	}
}

int devshim_counter_open(uint64_t evtsel, int inherit, hwc_counters **out)
{
	struct hwc_target t = {.kind = HWC_TARGET_SELF,
			       .flags = HWC_NO_FALLBACK | (inherit ? 0 : HWC_NO_INHERIT)};
	return open_counter(evtsel, &t, 0, out);
}

int devshim_cpus_counter_open(uint64_t evtsel, hwc_counters **out)
{
	struct hwc_target t = {.kind = HWC_TARGET_CPUS, .flags = HWC_NO_FALLBACK};
	return open_counter(evtsel, &t, 1, out);
}
