/* The event a PERFEVTSEL word selects: the one place the device shims meet
 * the hardware.  Alone in its file so that the drivers' tests can stand a
 * software event in for it on hosts without a PMU. */
#include "devshim.h"

int devshim_event(hwc_evlist *list, uint64_t evtsel)
{
	return hwc_evlist_add_evtsel(list, evtsel);
}
