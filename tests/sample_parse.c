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
	return check_exit();
}
