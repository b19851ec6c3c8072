/* hwc_sample_parse on records the kernel really wrote (cpu-clock samples of
 * this process, read straight from a ring buffer), and on truncated copies. */
#include "check.h"

#include <errno.h>
#include <hwc/sample.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile uint64_t sink;

static void spin(void)
{
	for (uint64_t i = 0; i < 200000000ULL && sink < UINT64_MAX; i++)
		sink += i;
}

/* The fixed-size head of a sample: IDENTIFIER to PERIOD, one word each. */
#define HEAD_BITS                                                                        \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |  \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |    \
	 PERF_SAMPLE_PERIOD)

/* Word AT of the body of HDR, 0 when absent (-1), as hwc_sample_parse() has it. */
static uint64_t word_at(const struct perf_event_header *hdr, int at)
{
	uint64_t v = 0;
	if (at >= 0)
		memcpy(&v, (const uint8_t *)(hdr + 1) + 8 * at, sizeof(v));
	return v;
}

/* hwc_sample_head()'s layout against hwc_sample_parse() on real cpu-clock
 * records of many sample_types: every subset of the head's nine fields,
 * each with some of the variable-size fields after them. */
static void head_matches_full(void)
{
	static const uint64_t head[] = {
		PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,	       PERF_SAMPLE_TID,
		PERF_SAMPLE_TIME,	PERF_SAMPLE_ADDR,      PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID,	PERF_SAMPLE_CPU,       PERF_SAMPLE_PERIOD,
	};
	static const uint64_t tail[] = {
		PERF_SAMPLE_READ,      PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_REGS_USER,
		PERF_SAMPLE_STACK_USER, PERF_SAMPLE_WEIGHT,   PERF_SAMPLE_DATA_SRC,
	};
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)page * 9;
	int opened = 0, records = 0;
	for (unsigned combo = 0; combo < 1u << 9; combo++) {
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.sample_period = 20000,
			.read_format = PERF_FORMAT_ID,
			.sample_regs_user = 1,
			.sample_stack_user = 64,
			.exclude_kernel = 1,
			.exclude_hv = 1,
			.disabled = 1,
		};
		for (unsigned i = 0; i < 9; i++)
			if (combo >> i & 1)
				attr.sample_type |= head[i];
		for (unsigned i = 0; i < 6; i++) /* a different tail for neighbouring heads */
			if ((combo * 37 + 11) >> i & 1)
				attr.sample_type |= tail[i];
		int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
		if (fd < 0)
			continue;
		opened++;
		uint64_t id = 0;
		CHECK_INT(ioctl(fd, PERF_EVENT_IOC_ID, &id), ==, 0);
		struct perf_event_mmap_page *meta =
			mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (meta == MAP_FAILED) {
			close(fd);
			continue;
		}
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		for (uint64_t i = 0; i < 500000 && sink < UINT64_MAX; i++)
			sink += i;
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		uint64_t end = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		const uint8_t *data = (const uint8_t *)meta + meta->data_offset;
		static uint8_t rec[65536];
		for (uint64_t pos = meta->data_tail; pos < end;) {
			const struct perf_event_header *h = (const void *)(data + pos % meta->data_size);
			uint16_t n = h->size;
			for (uint16_t i = 0; i < n; i++)
				rec[i] = data[(pos + i) % meta->data_size];
			pos += n;
			struct perf_event_header *hdr = (void *)rec;
			if (hdr->type != PERF_RECORD_SAMPLE)
				continue;
			records++;
			struct hwc_sample full;
			CHECK_INT(hwc_sample_parse(hdr, &attr, &full), ==, 0);
			struct hwc_sample_head lay;
			memset(&lay, 0x55, sizeof(lay));
			hwc_sample_head(&attr, &lay);
			/* one word per field, within the record */
			CHECK_INT(lay.words, ==, __builtin_popcountll(attr.sample_type & HEAD_BITS));
			CHECK(sizeof(*hdr) + 8u * lay.words <= n);
			uint64_t pid_tid = word_at(hdr, lay.pid_tid);
			uint32_t pair[2];
			memcpy(pair, &pid_tid, sizeof(pair));
			bool same = word_at(hdr, lay.id) == full.id && word_at(hdr, lay.ip) == full.ip &&
				    pair[0] == full.pid && pair[1] == full.tid &&
				    word_at(hdr, lay.time) == full.time && word_at(hdr, lay.addr) == full.addr &&
				    word_at(hdr, lay.stream_id) == full.stream_id &&
				    (uint32_t)word_at(hdr, lay.cpu) == full.cpu &&
				    word_at(hdr, lay.period) == full.period;
			if (!same)
				CHECK_U64(attr.sample_type, ==, ~(uint64_t)0); /* names the combination */
			/* and what the words say is what this process and event are */
			uint64_t t = attr.sample_type;
			if (t & PERF_SAMPLE_TID) {
				CHECK_INT(pair[0], ==, getpid());
				CHECK_INT(pair[1], ==, syscall(SYS_gettid));
			}
			if (t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
				CHECK_U64(word_at(hdr, lay.id), ==, id);
			if (t & PERF_SAMPLE_STREAM_ID)
				CHECK_U64(word_at(hdr, lay.stream_id), ==, id);
			if (t & PERF_SAMPLE_PERIOD)
				CHECK_U64(word_at(hdr, lay.period), ==, 20000);
			if (t & PERF_SAMPLE_ADDR) /* cpu-clock has none */
				CHECK_U64(word_at(hdr, lay.addr), ==, 0);
			if (t & PERF_SAMPLE_CPU)
				CHECK((uint32_t)word_at(hdr, lay.cpu) < (uint32_t)sysconf(_SC_NPROCESSORS_CONF));
			if (t & PERF_SAMPLE_IP)
				CHECK(word_at(hdr, lay.ip) != 0);
			/* each field present: a word of its own, after the one before */
			const int8_t at[] = {lay.ip, lay.pid_tid, lay.time, lay.addr, lay.stream_id, lay.cpu, lay.period};
			const uint64_t bit[] = {PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
						PERF_SAMPLE_ADDR, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
						PERF_SAMPLE_PERIOD};
			int last = attr.sample_type & PERF_SAMPLE_IDENTIFIER ? 0 : -1;
			for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
				CHECK_INT(at[i] >= 0, ==, !!(attr.sample_type & bit[i]));
				if (at[i] >= 0) {
					CHECK_INT(at[i], >, last);
					last = at[i];
				}
			}
			/* Cut short of the lay: refused, naming a field. */
			for (uint16_t cut = sizeof(*hdr); cut < sizeof(*hdr) + 8u * lay.words; cut += 8) {
				hdr->size = cut;
				CHECK_INT(hwc_sample_parse(hdr, &attr, &full), ==, -EINVAL);
				CHECK_STR_CONTAINS(hwc_errdetail(), "field");
			}
			hdr->size = n;
		}
		munmap(meta, len);
		close(fd);
	}
	CHECK_INT(opened, >, 400); /* of 512; a kernel may refuse a tail field */
	CHECK_INT(records, >, 1000);
}

int main(void)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 100000, /* 100 us of CPU time */
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_READ,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_ID,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.disabled = 1,
		.sample_id_all = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		SKIP("cannot open a cpu-clock sampler: %s", strerror(errno));
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)page * 9;
	struct perf_event_mmap_page *meta = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(meta != MAP_FAILED);
	if (meta == MAP_FAILED)
		return check_exit();
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	spin();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	const uint8_t *data = (const uint8_t *)meta + meta->data_offset;
	uint64_t size = meta->data_size;
	int samples = 0;
	static uint8_t rec[65536];
	for (uint64_t pos = meta->data_tail; pos < head;) {
		const struct perf_event_header *h = (const void *)(data + pos % size);
		uint16_t n = h->size;
		for (uint16_t i = 0; i < n; i++)
			rec[i] = data[(pos + i) % size];
		pos += n;
		const struct perf_event_header *hdr = (const void *)rec;
		if (hdr->type != PERF_RECORD_SAMPLE)
			continue;
		struct hwc_sample s;
		CHECK_INT(hwc_sample_parse(hdr, &attr, &s), ==, 0);
		CHECK_INT(s.pid, ==, getpid());
		CHECK_INT(s.tid, ==, syscall(SYS_gettid));
		CHECK_U64(s.period, ==, 100000);
		CHECK(s.ip != 0);
		CHECK(s.time != 0);
		CHECK_INT(s.nr_values, ==, 1);
		CHECK(s.nr_callchain >= 2);
		CHECK_U64(s.callchain[0], ==, PERF_CONTEXT_USER);
		CHECK_U64(s.callchain[1], ==, s.ip);
		CHECK_INT(s.misc & PERF_RECORD_MISC_CPUMODE_MASK, ==, PERF_RECORD_MISC_USER);
		/* Every shorter copy is rejected without reading past its end. */
		for (uint16_t cut = sizeof(*hdr); cut < n; cut += 8) {
			struct perf_event_header *t = malloc(cut);
			memcpy(t, rec, cut);
			t->size = cut;
			CHECK_INT(hwc_sample_parse(t, &attr, &s), ==, -EINVAL);
			free(t);
		}
		samples++;
	}
	CHECK(samples > 10);
	struct perf_event_header tiny = {.type = PERF_RECORD_COMM, .size = 16};
	struct hwc_sample_id sid;
	CHECK_INT(hwc_sample_id_parse(&tiny, &attr, &sid), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "too short");
	CHECK_INT(hwc_sample_id_size(&attr), ==, 32);
	munmap(meta, len);
	close(fd);
	head_matches_full();
	return check_exit();
}
