/* Decoding PERF_RECORD_SAMPLE and the sample_id trailer, field by field in
 * the order perf_event_open(2) documents, bounds-checked against the
 * record's size: the same code serves live ring buffers and perf.data. */
#include "internal.h"
#include "hwc/sample.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

struct cursor {
	const uint8_t *p, *end;
	const char *field; /* first field that did not fit */
};

static bool take(struct cursor *c, void *dst, size_t n, const char *field)
{
	if ((size_t)(c->end - c->p) < n) {
		if (!c->field)
			c->field = field;
		return false;
	}
	if (dst)
		memcpy(dst, c->p, n);
	c->p += n;
	return true;
}

static bool u64(struct cursor *c, uint64_t *v, const char *field)
{
	return take(c, v, sizeof(*v), field);
}

/* Point *ARR at N u64 words of the record, advancing past them. */
static bool words(struct cursor *c, const uint64_t **arr, uint64_t n, const char *field)
{
	if (n > (uint64_t)(c->end - c->p) / 8) {
		if (!c->field)
			c->field = field;
		return false;
	}
	*arr = (const uint64_t *)(const void *)c->p;
	c->p += n * 8;
	return true;
}

static bool read_values(struct cursor *c, uint64_t fmt, struct hwc_sample *s)
{
	uint64_t nr = 1;
	if (fmt & PERF_FORMAT_GROUP && !u64(c, &nr, "read.nr"))
		return false;
	uint32_t stride = 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
	if (!(fmt & PERF_FORMAT_GROUP)) {
		/* value, [enabled], [running], [id], [lost] */
		if (!words(c, &s->values, 1, "read.value"))
			return false;
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED && !u64(c, &s->read_enabled, "read.enabled"))
			return false;
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING && !u64(c, &s->read_running, "read.running"))
			return false;
		const uint64_t *rest;
		if (!words(c, &rest, stride - 1, "read.id"))
			return false;
		/* Single format splits value and id; present them as one entry. */
		s->nr_values = 1;
		s->value_stride = 1;
		return true;
	}
	if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED && !u64(c, &s->read_enabled, "read.enabled"))
		return false;
	if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING && !u64(c, &s->read_running, "read.running"))
		return false;
	if (nr > UINT32_MAX || !words(c, &s->values, nr * stride, "read.values"))
		return false;
	s->nr_values = (uint32_t)nr;
	s->value_stride = stride;
	return true;
}

static bool regs(struct cursor *c, uint64_t mask, uint64_t *abi, uint32_t *nr,
		 const uint64_t **arr, const char *field)
{
	if (!u64(c, abi, field))
		return false;
	if (*abi == PERF_SAMPLE_REGS_ABI_NONE) {
		*nr = 0;
		return true;
	}
	*nr = (uint32_t)__builtin_popcountll(mask);
	return words(c, arr, *nr, field);
}

/* The fixed-size fields at the head of a sample, in perf_event_open(2)'s
 * order, and where struct hwc_sample_head keeps each one's word. */
static const struct {
	uint64_t bit;
	size_t at;
	const char *name;
} head_fields[] = {
	{PERF_SAMPLE_IDENTIFIER, offsetof(struct hwc_sample_head, id), "identifier"},
	{PERF_SAMPLE_IP, offsetof(struct hwc_sample_head, ip), "ip"},
	{PERF_SAMPLE_TID, offsetof(struct hwc_sample_head, pid_tid), "pid/tid"},
	{PERF_SAMPLE_TIME, offsetof(struct hwc_sample_head, time), "time"},
	{PERF_SAMPLE_ADDR, offsetof(struct hwc_sample_head, addr), "addr"},
	{PERF_SAMPLE_ID, offsetof(struct hwc_sample_head, id), "id"},
	{PERF_SAMPLE_STREAM_ID, offsetof(struct hwc_sample_head, stream_id), "stream_id"},
	{PERF_SAMPLE_CPU, offsetof(struct hwc_sample_head, cpu), "cpu"},
	{PERF_SAMPLE_PERIOD, offsetof(struct hwc_sample_head, period), "period"},
};

HWC_EXPORT void hwc_sample_head(const struct perf_event_attr *attr, struct hwc_sample_head *out)
{
	memset(out, -1, offsetof(struct hwc_sample_head, words));
	int8_t w = 0;
	for (size_t i = 0; i < HWC_ARRAY_SIZE(head_fields); i++)
		if (attr->sample_type & head_fields[i].bit) /* ID after IDENTIFIER: ID's word */
			((int8_t *)out)[head_fields[i].at] = w++;
	out->words = (uint8_t)w;
}

/* Word AT of BODY, 0 when the field is absent (-1). */
static uint64_t head_word(const uint8_t *body, int8_t at)
{
	uint64_t v = 0;
	if (at >= 0)
		memcpy(&v, body + 8 * at, sizeof(v));
	return v;
}

static int too_short(const struct perf_event_header *hdr, const char *field)
{
	return hwc__fail(-EINVAL, "sample record of %u bytes is too short for its %s field",
			 hdr->size, field ? field : "?");
}

HWC_EXPORT int hwc_sample_parse(const struct perf_event_header *hdr,
				const struct perf_event_attr *attr, struct hwc_sample *s)
{
	/* A copy of a zero sample, not memset(): GCC makes that a rep stosq,
	 * slow for these 240 bytes (a sixth of hwc annotate's time on AMD). */
	static const struct hwc_sample empty;
	*s = empty;
	if (hdr->size < sizeof(*hdr))
		return hwc__fail(-EINVAL, "sample record of %u bytes is shorter than its header",
				 hdr->size);
	uint64_t t = attr->sample_type;
	s->sample_type = t;
	s->misc = hdr->misc;
	struct hwc_sample_head h;
	hwc_sample_head(attr, &h);
	const uint8_t *body = (const uint8_t *)(hdr + 1);
	size_t fit = (hdr->size - sizeof(*hdr)) / 8; /* whole words */
	if (fit < h.words) /* the first field that does not fit */
		for (size_t i = 0, w = 0; i < HWC_ARRAY_SIZE(head_fields); i++)
			if (t & head_fields[i].bit && w++ == fit)
				return too_short(hdr, head_fields[i].name);
	s->id = head_word(body, h.id);
	s->ip = head_word(body, h.ip);
	if (h.pid_tid >= 0) {
		uint32_t pair[2];
		memcpy(pair, body + 8 * h.pid_tid, sizeof(pair));
		s->pid = pair[0], s->tid = pair[1];
	}
	s->time = head_word(body, h.time);
	s->addr = head_word(body, h.addr);
	s->stream_id = head_word(body, h.stream_id);
	if (h.cpu >= 0)
		memcpy(&s->cpu, body + 8 * h.cpu, sizeof(s->cpu));
	s->period = head_word(body, h.period);
	struct cursor c = {body + 8 * h.words, (const uint8_t *)hdr + hdr->size, NULL};
	bool ok = true;
	if (t & PERF_SAMPLE_READ)
		ok = ok && read_values(&c, attr->read_format, s);
	if (t & PERF_SAMPLE_CALLCHAIN)
		ok = ok && u64(&c, &s->nr_callchain, "callchain.nr") &&
		     words(&c, &s->callchain, s->nr_callchain, "callchain");
	if (t & PERF_SAMPLE_RAW && ok && (ok = take(&c, &s->raw_size, 4, "raw.size"))) {
		s->raw = c.p;
		ok = take(&c, NULL, s->raw_size, "raw");
	}
	if (t & PERF_SAMPLE_BRANCH_STACK && ok && (ok = u64(&c, &s->nr_branches, "branch.nr"))) {
		if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			ok = u64(&c, NULL, "branch.hw_idx");
		ok = ok && s->nr_branches <= UINT64_MAX / 3 &&
		     words(&c, &s->branches, s->nr_branches * 3, "branch stack");
	}
	if (t & PERF_SAMPLE_REGS_USER)
		ok = ok && regs(&c, attr->sample_regs_user, &s->user_regs_abi, &s->nr_user_regs,
				&s->user_regs, "user regs");
	if (t & PERF_SAMPLE_STACK_USER && ok && (ok = u64(&c, &s->user_stack_size, "stack.size"))) {
		s->user_stack = c.p;
		ok = take(&c, NULL, s->user_stack_size, "stack.data");
		if (ok && s->user_stack_size)
			ok = u64(&c, &s->user_stack_dyn_size, "stack.dyn_size");
		if (ok && s->user_stack_dyn_size > s->user_stack_size)
			ok = false, c.field = "stack.dyn_size";
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		ok = ok && u64(&c, &s->weight, "weight");
	if (t & PERF_SAMPLE_DATA_SRC)
		ok = ok && u64(&c, &s->data_src, "data_src");
	if (t & PERF_SAMPLE_TRANSACTION)
		ok = ok && u64(&c, NULL, "transaction");
	if (t & PERF_SAMPLE_REGS_INTR) {
		uint64_t abi;
		uint32_t nr;
		const uint64_t *arr;
		ok = ok && regs(&c, attr->sample_regs_intr, &abi, &nr, &arr, "intr regs");
	}
	if (t & PERF_SAMPLE_PHYS_ADDR)
		ok = ok && u64(&c, &s->phys_addr, "phys_addr");
	if (t & PERF_SAMPLE_CGROUP)
		ok = ok && u64(&c, &s->cgroup, "cgroup");
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		ok = ok && u64(&c, NULL, "data_page_size");
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		ok = ok && u64(&c, NULL, "code_page_size");
	return ok ? 0 : too_short(hdr, c.field);
}

HWC_EXPORT size_t hwc_sample_id_size(const struct perf_event_attr *attr)
{
	if (!attr->sample_id_all)
		return 0;
	uint64_t t = attr->sample_type;
	return 8 * (!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
		    !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
		    !!(t & PERF_SAMPLE_IDENTIFIER));
}

HWC_EXPORT int hwc_sample_id_parse(const struct perf_event_header *hdr,
				   const struct perf_event_attr *attr, struct hwc_sample_id *out)
{
	memset(out, 0, sizeof(*out));
	size_t n = hwc_sample_id_size(attr);
	if (hdr->size < sizeof(*hdr) + n)
		return hwc__fail(-EINVAL, "record of type %u and %u bytes is too short for its "
					  "%zu-byte sample_id",
				 hdr->type, hdr->size, n);
	uint64_t t = attr->sample_type;
	const uint8_t *end = (const uint8_t *)hdr + hdr->size;
	struct cursor c = {end - n, end, NULL};
	uint32_t pair[2];
	if (t & PERF_SAMPLE_TID && take(&c, pair, 8, "pid/tid"))
		out->pid = pair[0], out->tid = pair[1];
	if (t & PERF_SAMPLE_TIME)
		u64(&c, &out->time, "time");
	if (t & PERF_SAMPLE_ID)
		u64(&c, &out->id, "id");
	if (t & PERF_SAMPLE_STREAM_ID)
		u64(&c, &out->stream_id, "stream_id");
	if (t & PERF_SAMPLE_CPU && take(&c, pair, 8, "cpu"))
		out->cpu = pair[0];
	if (t & PERF_SAMPLE_IDENTIFIER)
		u64(&c, &out->id, "identifier");
	return 0;
}
