/* Sample ids: which event a record belongs to.  Every event hwc opens has
 * PERF_SAMPLE_IDENTIFIER, at a fixed place in every record. */
#include "internal.h"

#include <string.h>

uint64_t hwc__record_id(const struct perf_event_header *h)
{
	uint64_t id = 0;
	if (h->size < sizeof(*h) + 8)
		return 0;
	if (h->type == PERF_RECORD_SAMPLE) /* right after the header */
		memcpy(&id, h + 1, 8);
	else /* the last word of the sample_id trailer */
		memcpy(&id, (const uint8_t *)h + h->size - 8, 8);
	return id;
}

bool hwc__idmap_find(const struct hwc__idmap *map, size_t n, uint64_t id, size_t *ev)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (map[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || map[lo].id != id)
		return false;
	*ev = map[lo].ev;
	return true;
}
