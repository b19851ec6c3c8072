/* libFuzzer harness for the perf.data reader: open the input as a
 * recording, walk every record, decode samples and sample_id trailers with
 * their attr, and feed the address-space records to the symbolizer (no
 * look-ups: those would open files the input names).  Built and run by
 * tests/fuzz.sh over the seed corpus of real recordings in tests/fuzz/corpus/perfdata. */
#include <hwc/perfdata.h>
#include <hwc/symbol.h>

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hwc_perfdata *f;
	if (hwc_perfdata_open_mem(&f, data, size))
		return 0;
	for (size_t i = 0; i < hwc_perfdata_nattrs(f); i++)
		(void)hwc_perfdata_attr(f, i)->name[0];
	for (size_t i = 0; i < hwc_perfdata_nbuildids(f); i++)
		(void)hwc_perfdata_buildid(f, i)->filename[0];
	hwc_symbols *syms;
	if (hwc_symbols_new(&syms, 0)) {
		hwc_perfdata_close(f);
		return 0;
	}
	struct hwc_perfdata_record r;
	while (hwc_perfdata_next(f, &r) > 0) {
		if (!r.attr)
			continue;
		if (r.hdr->type == PERF_RECORD_SAMPLE) {
			struct hwc_sample s;
			if (hwc_sample_parse(r.hdr, &r.attr->attr, &s) == 0) {
				(void)hwc_symbols_comm(syms, s.tid, s.time);
				for (uint64_t k = 0; k < s.nr_callchain; k++)
					(void)s.callchain[k];
			}
		} else {
			struct hwc_sample_id id;
			hwc_sample_id_parse(r.hdr, &r.attr->attr, &id);
			hwc_symbols_record(syms, r.hdr, &r.attr->attr);
		}
	}
	hwc_symbols_free(syms);
	hwc_perfdata_close(f);
	return 0;
}
