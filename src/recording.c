/* The perf.data writer.  Layout: the 104-byte header, the data section
 * (written as it goes, through a buffer that only ever holds whole records),
 * then the tail: the feature sections perf expects right after the data,
 * the id arrays and the attribute table.  The tail and the header are
 * rewritten by every flush and at close, so a full disk or an interrupted
 * recording still ends as a valid file holding every complete record that
 * fit.
 *
 * On a pipe or socket the records are streamed instead, as perf's pipe mode
 * writes them: a 16-byte header, then each event as a HEADER_ATTR record
 * (its attr and ids) before the first record that may name it, the
 * machine's features as HEADER_FEATURE records, then the records. */
#include "dl.h"
#include "perf_file.h"
#include "hwc/output.h"
#include "hwc/perfdata.h"
#include "hwc/sample.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DATA_OFF ((uint64_t)sizeof(struct pf_header))
#define BUF_SIZE (1u << 20) /* larger than any record (64 KiB) */

/* The event user records are samples of, and its sample id ("hwc-user"). */
#define USER_EVENT "hwc-user"
#define USER_ID 0x6877632d75736572ULL

struct rattr {
	struct perf_event_attr attr;
	char name[256];
	uint64_t *ids;
	size_t nids, cap;
	int leader;        /* attr index of its group's leader, -1: not in a group */
};

struct dso {
	char *path;
	bool kernel;
	int idlen; /* build-id bytes; 0: not looked up yet; -1: none */
	uint8_t id[PF_BUILD_ID_MAX];
};

/* The on-disk state at a flush: record boundaries to fall back to. */
struct mark {
	uint64_t end, records, samples;
};

struct hwc_recording {
	int fd;
	bool pipe;          /* streamed: perf's pipe mode */
	size_t announced;   /* pipe: events sent as HEADER_ATTR so far */
	bool features_sent; /* pipe: the HEADER_FEATURE records */
	hwc_output *out;    /* hwc_recording_create(): the file until it is committed */
	char path[1024];
	uint64_t disk, disk_records, disk_samples; /* complete records on disk */
	uint8_t *buf;
	size_t len;
	uint64_t buf_records, buf_samples;
	struct mark *marks;
	size_t nmarks, cap_marks;
	struct rattr *attrs;
	size_t nattrs;
	struct hwc__idmap *ids; /* sorted by id */
	size_t nids, cap_ids;
	struct dso *dsos;
	size_t ndsos, cap_dsos;
	struct hwc__bytes cmdline;   /* the CMDLINE feature */
	struct hwc__bytes machine[HWC_FEAT_PMU_MAPPINGS + 1]; /* features taken at create */
	bool have_machine[HWC_FEAT_PMU_MAPPINGS + 1];
	uint64_t first_time, last_time;
	bool have_time;
	/* The clock of the first event that names one (perf's -k), and one
	 * instant on the wall clock and on it (the CLOCK_DATA feature). */
	bool have_clock;
	clockid_t clock;
	struct timespec tod_ref, clock_ref;
	unsigned synthesized; /* HWC__SYNTH_* written already */
	int error;          /* the first write error: no more records after it */
	uint64_t tail_size; /* of the tail on disk after the last flush */
	/* hwc_recording_set_compression(): each flush of the buffer is written
	 * as PERF_RECORD_COMPRESSED records, pieces of one zstd stream, as
	 * perf record -z writes its ring buffers. */
	ZSTD_CStream *zs;
	int zlevel;
	uint8_t *zrec;          /* one compressed record */
	uint64_t zin, zout;     /* bytes given to zstd, bytes of compressed records */
};

static const int machine_features[] = {
	HWC_FEAT_HOSTNAME, HWC_FEAT_OSRELEASE,  HWC_FEAT_VERSION,      HWC_FEAT_ARCH,
	HWC_FEAT_NRCPUS,   HWC_FEAT_CPUDESC,    HWC_FEAT_CPUID,        HWC_FEAT_TOTAL_MEM,
	HWC_FEAT_CPU_TOPOLOGY, HWC_FEAT_NUMA_TOPOLOGY, HWC_FEAT_PMU_MAPPINGS,
};

/* Write N bytes at file offset OFF (a pipe: in order).  A reader that went
 * away is EPIPE, never a SIGPIPE that would end the caller. */
static int write_at(const hwc_recording *rec, const void *p, size_t n, uint64_t off, size_t *done)
{
	sigset_t pipe_sig, old;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	if (rec->pipe)
		pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
	int err = 0;
	*done = 0;
	while (*done < n) {
		const uint8_t *from = (const uint8_t *)p + *done;
		ssize_t w = rec->pipe ? write(rec->fd, from, n - *done)
				      : pwrite(rec->fd, from, n - *done, (off_t)(off + *done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? -errno : -ENOSPC;
			break;
		}
		*done += (size_t)w;
	}
	if (rec->pipe) {
		/* Take the SIGPIPE this thread raised, unless it was blocked before. */
		if (err == -EPIPE && !sigismember(&old, SIGPIPE)) {
			struct timespec now = {0, 0};
			sigtimedwait(&pipe_sig, NULL, &now);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return err;
}

static int add_mark(hwc_recording *rec)
{
	int err = hwc__reserve(&rec->marks, &rec->cap_marks, rec->nmarks + 1, sizeof(*rec->marks));
	if (err)
		return err;
	rec->marks[rec->nmarks++] = (struct mark){rec->disk, rec->disk_records, rec->disk_samples};
	return 0;
}

static int write_failed(hwc_recording *rec, int err)
{
	rec->error = err;
	return hwc__fail(err, "cannot write %s: %s; recording stopped with the %llu complete "
			      "records written so far",
			 rec->path, strerror(-err), (unsigned long long)rec->disk_records);
}

/* The error that stopped the recording, said again for a later call. */
static int stopped(const hwc_recording *rec)
{
	return hwc__fail(rec->error, "cannot write %s: %s; recording stopped earlier with the "
				     "%llu complete records written so far",
			 rec->path, strerror(-rec->error), (unsigned long long)rec->disk_records);
}

static int feature(hwc_recording *rec, int f, struct hwc__bytes *b);

/* Pipe mode: one header record of TYPE with the bytes A then B. */
static int header_record(hwc_recording *rec, uint32_t type, const void *a, size_t alen,
			 const void *b, size_t blen)
{
	struct perf_event_header h = {.type = type, .size = (uint16_t)(sizeof(h) + alen + blen)};
	if (sizeof(h) + alen + blen > UINT16_MAX)
		return -E2BIG;
	size_t done;
	return write_at(rec, &h, sizeof(h), 0, &done) ?: write_at(rec, a, alen, 0, &done)
						       ?: write_at(rec, b, blen, 0, &done);
}

/* Pipe mode: the features the stream can carry, once (those that need the
 * whole recording, as build ids, are a file's), and the events not sent
 * yet with their ids. */
static int announce(hwc_recording *rec)
{
	int err = 0;
	for (size_t i = rec->announced; i < rec->nattrs && !err; i++)
		err = header_record(rec, HWC_RECORD_HEADER_ATTR, &rec->attrs[i].attr,
				    sizeof(rec->attrs[i].attr), rec->attrs[i].ids,
				    rec->attrs[i].nids * 8);
	if (err)
		return err;
	rec->announced = rec->nattrs;
	if (rec->features_sent)
		return 0;
	static const int feats[] = {
		HWC_FEAT_HOSTNAME, HWC_FEAT_OSRELEASE, HWC_FEAT_VERSION,  HWC_FEAT_ARCH,
		HWC_FEAT_NRCPUS,   HWC_FEAT_CPUDESC,   HWC_FEAT_CPUID,    HWC_FEAT_TOTAL_MEM,
		HWC_FEAT_CMDLINE,  HWC_FEAT_CLOCKID,   HWC_FEAT_CLOCK_DATA, HWC_FEAT_COMPRESSED,
	};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(feats) && !err; i++) {
		struct hwc__bytes b = {0};
		uint64_t id = (uint64_t)feats[i];
		int ferr = feature(rec, feats[i], &b);
		if (ferr == 0)
			err = header_record(rec, HWC_RECORD_HEADER_FEATURE, &id, sizeof(id), b.p, b.len);
		else if (ferr != -ENOENT)
			err = ferr;
		free(b.p);
		if (err == -E2BIG)
			err = 0; /* too big for a record: left out */
	}
	rec->features_sent = !err;
	return err;
}

/* The buffer as compressed records, flushed so that the file holds all of
 * it (a reader unpacks it without what comes next); DONE: bytes written. */
static int write_compressed(hwc_recording *rec, size_t *done)
{
	ZSTD_inBuffer in = {rec->buf, rec->len, 0};
	size_t left;
	*done = 0;
	do {
		/* perf keeps each record's payload under its 64 KiB sample limit. */
		ZSTD_outBuffer out = {rec->zrec + sizeof(struct perf_event_header),
				      PF_RECORD_MAX - sizeof(struct perf_event_header), 0};
		left = ZSTD_compressStream2(rec->zs, &out, &in, ZSTD_e_flush);
		if (ZSTD_isError(left))
			return hwc__fail(-EIO, "zstd cannot compress the recording: %s",
					 ZSTD_getErrorName(left));
		if (out.pos == 0)
			continue;
		struct perf_event_header h = {.type = HWC_RECORD_COMPRESSED,
					      .size = (uint16_t)(sizeof(h) + out.pos)};
		memcpy(rec->zrec, &h, sizeof(h));
		size_t w;
		int err = write_at(rec, rec->zrec, h.size, DATA_OFF + rec->disk + *done, &w);
		*done += w;
		if (err)
			return err;
	} while (left);
	rec->zin += rec->len;
	rec->zout += *done;
	return 0;
}

/* Write the buffer out.  On a short write keep the whole records that made
 * it and remember the error: nothing more is taken. */
static int flush_buf(hwc_recording *rec)
{
	if (rec->error)
		return stopped(rec);
	if (rec->len == 0)
		return 0;
	size_t done;
	int err = rec->pipe ? announce(rec) : 0;
	if (err)
		return write_failed(rec, err);
	if (rec->zs)
		err = write_compressed(rec, &done);
	else
		err = write_at(rec, rec->buf, rec->len, DATA_OFF + rec->disk, &done);
	if (!err) {
		rec->disk += done; /* compressed: fewer bytes than the buffer's */
		rec->disk_records += rec->buf_records;
		rec->disk_samples += rec->buf_samples;
	} else if (!rec->zs) {
		/* The whole records that made it.  (Compressed, none: a piece cut
		 * short may end inside a record; the file ends at the last flush.) */
		size_t k = 0;
		for (;;) {
			const struct perf_event_header *h = (const void *)(rec->buf + k);
			if (k + sizeof(*h) > done || k + h->size > done)
				break;
			rec->disk_records++;
			rec->disk_samples += h->type == PERF_RECORD_SAMPLE;
			k += h->size;
		}
		rec->disk += k;
	}
	rec->len = 0;
	rec->buf_records = rec->buf_samples = 0;
	int merr = add_mark(rec);
	if (err)
		return write_failed(rec, err);
	return merr;
}

static int init(hwc_recording *rec)
{
	/* The build-id table at the close reads the DSOs' ELF notes: a missing
	 * elfutils is said now, not after the recording. */
	int err = hwc__load_elfutils();
	if (err)
		return err;
	rec->buf = malloc(BUF_SIZE);
	if (!rec->buf)
		return hwc__fail(-ENOMEM, "out of memory");
	for (size_t i = 0; i < HWC_ARRAY_SIZE(machine_features); i++) {
		int f = machine_features[i];
		/* A feature the machine cannot describe (no NUMA sysfs) is left out. */
		err = hwc__machine_feature(f, &rec->machine[f]);
		if (err == -ENOMEM)
			return err;
		rec->have_machine[f] = err == 0;
	}
	struct pf_header h = {.magic = PF_MAGIC, .size = sizeof(h),
			      .attr_size = sizeof(struct perf_event_attr) + sizeof(struct pf_section),
			      .data = {DATA_OFF, 0}};
	if (rec->pipe)
		h.size = 16; /* pipe mode: the magic and this size, nothing else */
	size_t done;
	err = write_at(rec, &h, rec->pipe ? 16 : sizeof(h), 0, &done);
	if (err)
		return hwc__fail(err, "cannot write %s: %s", rec->path, strerror(-err));
	return add_mark(rec);
}

static void free_rec(hwc_recording *rec)
{
	hwc_output_discard(rec->out);
	for (size_t i = 0; i < rec->nattrs; i++)
		free(rec->attrs[i].ids);
	for (size_t i = 0; i < rec->ndsos; i++)
		free(rec->dsos[i].path);
	for (size_t i = 0; i < HWC_ARRAY_SIZE(rec->machine); i++)
		free(rec->machine[i].p);
	free(rec->cmdline.p);
	free(rec->attrs);
	free(rec->ids);
	free(rec->dsos);
	free(rec->marks);
	free(rec->buf);
	free(rec->zrec);
	if (rec->zs)
		ZSTD_freeCStream(rec->zs);
	free(rec);
}

HWC_EXPORT int hwc_recording_create_flags(hwc_recording **out, const char *path, unsigned flags)
{
	hwc__clear_error();
	*out = NULL;
	hwc_recording *rec = calloc(1, sizeof(*rec));
	if (!rec)
		return hwc__fail(-ENOMEM, "out of memory");
	snprintf(rec->path, sizeof(rec->path), "%s", path);
	/* A temporary file renamed over PATH at the close: a failed recording
	 * leaves PATH as it was. */
	int err = hwc_output_create(&rec->out, path, flags | HWC_OUTPUT_PRIVATE);
	if (err) {
		free(rec);
		return err;
	}
	rec->fd = hwc_output_fd(rec->out);
	err = init(rec);
	if (err) {
		free_rec(rec);
		return err;
	}
	*out = rec;
	return 0;
}

HWC_EXPORT int hwc_recording_create(hwc_recording **out, const char *path)
{
	return hwc_recording_create_flags(out, path, 0);
}

HWC_EXPORT int hwc_recording_fdopen(hwc_recording **out, int fd)
{
	hwc__clear_error();
	*out = NULL;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return hwc__fail(-errno, "cannot record to file descriptor %d: %s", fd, strerror(errno));
	/* Anything but a regular file (a pipe, a socket) takes a stream, and so
	 * does a file opened to append (>>), where pwrite(2) cannot place the
	 * header. */
	int fl = fcntl(fd, F_GETFL);
	bool pipe = !S_ISREG(st.st_mode) || (fl >= 0 && (fl & O_APPEND));
	if (!pipe && ftruncate(fd, 0) < 0)
		return hwc__fail(-errno, "cannot truncate file descriptor %d: %s", fd, strerror(errno));
	hwc_recording *rec = calloc(1, sizeof(*rec));
	if (!rec)
		return hwc__fail(-ENOMEM, "out of memory");
	rec->pipe = pipe;
	snprintf(rec->path, sizeof(rec->path), "file descriptor %d%s", fd, pipe ? " (a stream)" : "");
	rec->fd = fd;
	int err = init(rec);
	if (err) {
		free_rec(rec);
		return err;
	}
	*out = rec;
	return 0;
}

HWC_EXPORT int hwc_recording_set_compression(hwc_recording *rec, int level)
{
	hwc__clear_error();
	/* No compression needs no libzstd. */
	int err = level ? hwc__load_zstd() : 0;
	if (err)
		return err;
	if (level && (level < 0 || level > ZSTD_maxCLevel()))
		return hwc__fail(-EINVAL, "compression level %d: expected 0 (none) to %d", level,
				 ZSTD_maxCLevel());
	if (rec->disk || rec->len || rec->zin)
		return hwc__fail(-EBUSY, "set the compression of %s before its first record is written",
				 rec->path);
	if (level == 0) {
		if (rec->zs)
			ZSTD_freeCStream(rec->zs);
		rec->zs = NULL;
		rec->zlevel = 0;
		return 0;
	}
	if (!rec->zrec && !(rec->zrec = malloc(PF_RECORD_MAX + 1)))
		return hwc__fail(-ENOMEM, "out of memory");
	if (!rec->zs && !(rec->zs = ZSTD_createCStream()))
		return hwc__fail(-ENOMEM, "out of memory");
	size_t r = ZSTD_CCtx_setParameter(rec->zs, ZSTD_c_compressionLevel, level);
	if (ZSTD_isError(r))
		return hwc__fail(-EINVAL, "zstd refuses compression level %d: %s", level,
				 ZSTD_getErrorName(r));
	rec->zlevel = level;
	return 0;
}

HWC_EXPORT int hwc_recording_set_cmdline(hwc_recording *rec, int argc, char *const *argv)
{
	hwc__clear_error();
	rec->cmdline.len = 0;
	int err = hwc__bytes_u32(&rec->cmdline, (uint32_t)argc);
	for (int i = 0; i < argc && !err; i++)
		err = hwc__bytes_string(&rec->cmdline, argv[i]);
	return err;
}

static int add_id(hwc_recording *rec, size_t a, uint64_t id)
{
	struct rattr *ra = &rec->attrs[a];
	size_t where;
	if (hwc__idmap_find(rec->ids, rec->nids, id, &where))
		return hwc__fail(-EEXIST, "sample id %llu is already in the recording",
				 (unsigned long long)id);
	int err = hwc__reserve(&ra->ids, &ra->cap, ra->nids + 1, sizeof(*ra->ids));
	if (!err)
		err = hwc__reserve(&rec->ids, &rec->cap_ids, rec->nids + 1, sizeof(*rec->ids));
	if (err)
		return err;
	ra->ids[ra->nids++] = id;
	size_t i = rec->nids++;
	while (i > 0 && rec->ids[i - 1].id > id) {
		rec->ids[i] = rec->ids[i - 1];
		i--;
	}
	rec->ids[i] = (struct hwc__idmap){id, a};
	return 0;
}

int hwc__recording_add_event(hwc_recording *rec, const struct perf_event_attr *attr,
			     const char *name, int leader)
{
	struct rattr *p = realloc(rec->attrs, (rec->nattrs + 1) * sizeof(*p));
	if (!p)
		return hwc__fail(-ENOMEM, "out of memory");
	rec->attrs = p;
	struct rattr *ra = &rec->attrs[rec->nattrs];
	memset(ra, 0, sizeof(*ra));
	ra->attr = *attr;
	ra->attr.size = sizeof(ra->attr);
	snprintf(ra->name, sizeof(ra->name), "%s", name);
	ra->leader = leader;
	if (attr->use_clockid && !rec->have_clock) {
		rec->have_clock = true;
		rec->clock = attr->clockid;
		clock_gettime(CLOCK_REALTIME, &rec->tod_ref);
		clock_gettime(rec->clock, &rec->clock_ref);
	}
	return (int)rec->nattrs++;
}

int hwc__recording_add_ids(hwc_recording *rec, int event, const uint64_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = add_id(rec, (size_t)event, ids[i]);
		if (err)
			return err;
	}
	return 0;
}

bool hwc__recording_once(hwc_recording *rec, unsigned what)
{
	bool first = !(rec->synthesized & what);
	rec->synthesized |= what;
	return first;
}

HWC_EXPORT size_t hwc_recording_nevents(const hwc_recording *rec)
{
	return rec->nattrs;
}

const struct perf_event_attr *hwc__recording_first_attr(const hwc_recording *rec)
{
	return rec->nattrs ? &rec->attrs[0].attr : NULL;
}

/* The event a record belongs to, by its PERF_SAMPLE_IDENTIFIER; synthesized
 * records (id 0) and unknown ids belong to the first. */
static const struct perf_event_attr *attr_of(const hwc_recording *rec,
					     const struct perf_event_header *h)
{
	if (!rec->nattrs)
		return NULL;
	const struct perf_event_attr *first = &rec->attrs[0].attr;
	size_t a;
	if (!(first->sample_type & PERF_SAMPLE_IDENTIFIER) ||
	    (h->type != PERF_RECORD_SAMPLE && !first->sample_id_all) ||
	    !hwc__idmap_find(rec->ids, rec->nids, hwc__record_id(h), &a))
		return first;
	return &rec->attrs[a].attr;
}

static int add_dso(hwc_recording *rec, const char *path, bool kernel)
{
	for (size_t i = 0; i < rec->ndsos; i++)
		if (rec->dsos[i].kernel == kernel && strcmp(rec->dsos[i].path, path) == 0)
			return 0;
	int err = hwc__reserve(&rec->dsos, &rec->cap_dsos, rec->ndsos + 1, sizeof(*rec->dsos));
	if (err)
		return err;
	char *copy = strdup(path);
	if (!copy)
		return hwc__fail(-ENOMEM, "out of memory");
	rec->dsos[rec->ndsos++] = (struct dso){copy, kernel, 0, {0}};
	return 0;
}

/* What the tail needs to know from a record: sample times, mapped files. */
static int observe(hwc_recording *rec, const struct perf_event_header *h)
{
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t blen = h->size - sizeof(*h);
	if (h->type == PERF_RECORD_SAMPLE) {
		const struct perf_event_attr *a = attr_of(rec, h);
		uint64_t t = a ? a->sample_type : 0;
		size_t off = 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
				  !!(t & PERF_SAMPLE_TID));
		uint64_t time;
		if (!(t & PERF_SAMPLE_TIME) || off + 8 > blen)
			return 0;
		memcpy(&time, body + off, 8);
		if (!rec->have_time || time < rec->first_time)
			rec->first_time = time;
		if (!rec->have_time || time > rec->last_time)
			rec->last_time = time;
		rec->have_time = true;
		return 0;
	}
	size_t name_off;
	bool exec;
	if (h->type == PERF_RECORD_MMAP) {
		name_off = 8 + 3 * 8; /* pid, tid, addr, len, pgoff */
		exec = !(h->misc & PERF_RECORD_MISC_MMAP_DATA);
	} else if (h->type == PERF_RECORD_MMAP2) {
		name_off = 8 + 3 * 8 + 4 + 4 + 8 + 8; /* ..., maj, min, ino, ino_generation */
		uint32_t prot = 0;
		if (name_off + 8 <= blen)
			memcpy(&prot, body + name_off, 4);
		name_off += 8; /* prot, flags */
		exec = (prot & PROT_EXEC) && !(h->misc & PERF_RECORD_MISC_MMAP_DATA);
	} else {
		return 0;
	}
	if (!exec || name_off >= blen || memchr(body + name_off, '\0', blen - name_off) == NULL)
		return 0;
	const char *name = (const char *)body + name_off;
	bool kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (kernel && strncmp(name, "[kernel.kallsyms]", 17) == 0)
		return add_dso(rec, "[kernel.kallsyms]", true);
	if (!kernel && strcmp(name, "[vdso]") == 0)
		return add_dso(rec, name, false); /* the build-id of our own vDSO: the kernel's */
	if (name[0] != '/' || strstr(name, " (deleted)"))
		return 0; /* anonymous, deleted: no file to take a build-id from */
	return add_dso(rec, name, kernel);
}

HWC_EXPORT int hwc_recording_write(hwc_recording *rec, const struct perf_event_header *h)
{
	hwc__clear_error();
	if (rec->error)
		return stopped(rec);
	if (h->size < sizeof(*h) || h->size % 8)
		return hwc__fail(-EINVAL, "record of type %u has a size of %u bytes, not a multiple "
					  "of 8 of at least 8",
				 h->type, h->size);
	if (rec->len + h->size > BUF_SIZE) {
		int err = flush_buf(rec);
		if (err)
			return err;
	}
	memcpy(rec->buf + rec->len, h, h->size);
	rec->len += h->size;
	rec->buf_records++;
	rec->buf_samples += h->type == PERF_RECORD_SAMPLE;
	return observe(rec, h);
}

HWC_EXPORT int hwc_recording_write_user(hwc_recording *rec, const void *data, size_t size)
{
	hwc__clear_error();
	size_t a;
	clockid_t clock = rec->have_clock ? rec->clock : CLOCK_MONOTONIC;
	if (!hwc__idmap_find(rec->ids, rec->nids, USER_ID, &a)) {
		/* Its records are told apart by their ids: the others need theirs. */
		for (size_t i = 0; i < rec->nattrs; i++)
			if (!(rec->attrs[i].attr.sample_type & PERF_SAMPLE_IDENTIFIER))
				return hwc__fail(-EINVAL, "the events of this recording carry no "
							  "sample id, so user records cannot be told "
							  "apart: sample with HWC_SAMPLE_ID");
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_BPF_OUTPUT,
			.sample_period = 1,
			.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
				       PERF_SAMPLE_RAW,
			.read_format = PERF_FORMAT_ID,
			.sample_id_all = 1,
			.use_clockid = 1,
			.clockid = clock,
		};
		int ev = hwc__recording_add_event(rec, &attr, USER_EVENT, -1);
		if (ev < 0)
			return ev;
		uint64_t id = USER_ID;
		int err = hwc__recording_add_ids(rec, ev, &id, 1);
		if (err)
			return err;
	}
	/* header, id, ip, pid/tid, time, cpu, period, raw size, raw */
	size_t fixed = 8 + 6 * 8 + 4;
	size_t raw = (4 + size + 7) / 8 * 8 - 4;
	if (fixed + raw > PF_RECORD_MAX_ALIGNED)
		return hwc__fail(-E2BIG, "a user record of %zu bytes does not fit a perf record "
					 "(at most %zu bytes)",
				 size, (size_t)PF_RECORD_MAX_ALIGNED - fixed - 4);
	uint64_t rec_buf[(PF_RECORD_MAX + 1) / 8];
	uint8_t *p = (uint8_t *)rec_buf;
	memset(p, 0, fixed + raw);
	struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
				      (uint16_t)(fixed + raw)};
	struct timespec ts;
	clock_gettime(clock, &ts);
	uint64_t w[6] = {USER_ID, 0, 0, (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec,
			 0, 1};
	uint32_t ids[2] = {(uint32_t)getpid(), (uint32_t)syscall(SYS_gettid)};
	memcpy(&w[2], ids, 8);
	int cpu = sched_getcpu();
	uint32_t cpus[2] = {(uint32_t)(cpu < 0 ? 0 : cpu), 0};
	memcpy(&w[4], cpus, 8);
	uint32_t raw_size = (uint32_t)raw;
	memcpy(p, &h, 8);
	memcpy(p + 8, w, sizeof(w));
	memcpy(p + 8 + sizeof(w), &raw_size, 4);
	if (size)
		memcpy(p + fixed, data, size);
	return hwc_recording_write(rec, (const struct perf_event_header *)p);
}

/* ---------------------------------------------------------------- the tail */

/* A kernel DSO's build-id: the kernel's, or a module's (PATH its .ko file;
 * a module without one, "[NAME]", has none, as in perf) as loaded, from its
 * notes in sysfs, else from the file (which may be another build, or
 * compressed). */
static int kernel_dso_build_id(const char *path, uint8_t *id, size_t max)
{
	if (strcmp(path, "[kernel.kallsyms]") == 0)
		return hwc__kernel_build_id(id, max);
	char name[64];
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (!hwc__module_name(base, name, sizeof(name)))
		return -ENOENT;
	int n = hwc__module_build_id(name, id, max);
	return n > 0 ? n : hwc__build_id(path, id, max);
}

static int feat_build_ids(hwc_recording *rec, struct hwc__bytes *b)
{
	int err = 0;
	for (size_t i = 0; i < rec->ndsos && !err; i++) {
		struct dso *d = &rec->dsos[i];
		if (d->idlen == 0) {
			int n = d->kernel ? kernel_dso_build_id(d->path, d->id, sizeof(d->id))
				: strcmp(d->path, "[vdso]") == 0 ? hwc__vdso_build_id(d->id, sizeof(d->id))
							       : hwc__build_id(d->path, d->id, sizeof(d->id));
			d->idlen = n > 0 ? n : -1;
		}
		if (d->idlen < 0)
			continue;
		size_t name = strlen(d->path) + 1;
		size_t padded = (name + PF_NAME_ALIGN - 1) / PF_NAME_ALIGN * PF_NAME_ALIGN;
		struct pf_build_id e = {
			.h = {HWC_RECORD_HEADER_BUILD_ID,
			      (uint16_t)((d->kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER) |
					 PF_MISC_BUILD_ID_SIZE),
			      (uint16_t)(sizeof(e) + padded)},
			.pid = PF_HOST_PID,
		};
		memcpy(e.id, d->id, (size_t)d->idlen);
		e.id[PF_BUILD_ID_MAX] = (uint8_t)d->idlen;
		err = hwc__bytes_put(b, &e, sizeof(e));
		if (!err)
			err = hwc__bytes_put(b, d->path, name);
		if (!err)
			err = hwc__bytes_put(b, NULL, padded - name);
	}
	return err;
}

static int feat_event_desc(hwc_recording *rec, struct hwc__bytes *b)
{
	int err = hwc__bytes_u32(b, (uint32_t)rec->nattrs);
	if (!err)
		err = hwc__bytes_u32(b, sizeof(struct perf_event_attr));
	for (size_t i = 0; i < rec->nattrs && !err; i++) {
		const struct rattr *ra = &rec->attrs[i];
		err = hwc__bytes_put(b, &ra->attr, sizeof(ra->attr));
		if (!err)
			err = hwc__bytes_u32(b, (uint32_t)ra->nids);
		if (!err)
			err = hwc__bytes_string(b, ra->name);
		if (!err)
			err = hwc__bytes_put(b, ra->ids, ra->nids * sizeof(uint64_t));
	}
	return err;
}

static size_t group_members(const hwc_recording *rec, size_t leader)
{
	size_t n = 0;
	for (size_t i = 0; i < rec->nattrs; i++)
		n += rec->attrs[i].leader == (int)leader;
	return n;
}

static int feat_group_desc(hwc_recording *rec, struct hwc__bytes *b)
{
	uint32_t nr = 0;
	for (size_t i = 0; i < rec->nattrs; i++)
		nr += rec->attrs[i].leader == (int)i && group_members(rec, i) > 1;
	if (nr == 0)
		return -ENOENT;
	int err = hwc__bytes_u32(b, nr);
	for (size_t i = 0; i < rec->nattrs && !err; i++) {
		size_t n = group_members(rec, i);
		if (rec->attrs[i].leader != (int)i || n < 2)
			continue;
		err = hwc__bytes_string(b, "{anon_group}");
		if (!err)
			err = hwc__bytes_u32(b, (uint32_t)i);
		if (!err)
			err = hwc__bytes_u32(b, (uint32_t)n);
	}
	return err;
}

/* Feature F's bytes into B; -ENOENT leaves F out of the file. */
static int feature(hwc_recording *rec, int f, struct hwc__bytes *b)
{
	switch (f) {
	case HWC_FEAT_BUILD_ID:
		return feat_build_ids(rec, b);
	case HWC_FEAT_CMDLINE:
		return rec->cmdline.len ? hwc__bytes_put(b, rec->cmdline.p, rec->cmdline.len)
					: hwc__bytes_u32(b, 0);
	case HWC_FEAT_EVENT_DESC:
		return feat_event_desc(rec, b);
	case HWC_FEAT_GROUP_DESC:
		return feat_group_desc(rec, b);
	case HWC_FEAT_SAMPLE_TIME:
		if (!rec->have_time)
			return -ENOENT;
		return hwc__bytes_u64(b, rec->first_time) ?: hwc__bytes_u64(b, rec->last_time);
	case HWC_FEAT_CLOCKID: {
		struct timespec res;
		if (!rec->have_clock || clock_getres(rec->clock, &res) < 0)
			return -ENOENT;
		return hwc__bytes_u64(b, (uint64_t)res.tv_sec * 1000000000ULL +
						 (uint64_t)res.tv_nsec);
	}
	case HWC_FEAT_COMPRESSED: {
		if (!rec->zs)
			return -ENOENT;
		/* As perf writes it: version 0, type 1 (zstd), level, the ratio
		 * rounded, and the most one compressed record unpacks to (perf:
		 * its ring buffer; hwc: a flush of its buffer). */
		uint32_t ratio = rec->zout ? (uint32_t)((double)rec->zin / (double)rec->zout + 0.5) : 0;
		int err = hwc__bytes_u32(b, 0) ?: hwc__bytes_u32(b, 1);
		err = err ?: hwc__bytes_u32(b, (uint32_t)rec->zlevel) ?: hwc__bytes_u32(b, ratio);
		return err ?: hwc__bytes_u32(b, BUF_SIZE);
	}
	case HWC_FEAT_CLOCK_DATA: {
		if (!rec->have_clock)
			return -ENOENT;
		/* version, clockid, then one instant on the wall clock and on it */
		int err = hwc__bytes_u32(b, 1) ?: hwc__bytes_u32(b, (uint32_t)rec->clock);
		err = err ?: hwc__bytes_u64(b, (uint64_t)rec->tod_ref.tv_sec * 1000000000ULL +
						     (uint64_t)rec->tod_ref.tv_nsec);
		return err ?: hwc__bytes_u64(b, (uint64_t)rec->clock_ref.tv_sec * 1000000000ULL +
							(uint64_t)rec->clock_ref.tv_nsec);
	}
	default:
		if (f < (int)HWC_ARRAY_SIZE(rec->machine) && rec->have_machine[f])
			return hwc__bytes_put(b, rec->machine[f].p, rec->machine[f].len);
		return -ENOENT;
	}
}

/* Build the tail for data ending at DATA_END, and the header pointing at it. */
static int build_tail(hwc_recording *rec, uint64_t data_end, struct hwc__bytes *tail,
		      struct pf_header *h)
{
	static const int order[] = {
		HWC_FEAT_BUILD_ID,     HWC_FEAT_HOSTNAME,      HWC_FEAT_OSRELEASE,
		HWC_FEAT_VERSION,      HWC_FEAT_ARCH,          HWC_FEAT_NRCPUS,
		HWC_FEAT_CPUDESC,      HWC_FEAT_CPUID,         HWC_FEAT_TOTAL_MEM,
		HWC_FEAT_CMDLINE,      HWC_FEAT_EVENT_DESC,    HWC_FEAT_CPU_TOPOLOGY,
		HWC_FEAT_NUMA_TOPOLOGY, HWC_FEAT_PMU_MAPPINGS, HWC_FEAT_GROUP_DESC,
		HWC_FEAT_SAMPLE_TIME,  HWC_FEAT_CLOCKID,       HWC_FEAT_COMPRESSED,
		HWC_FEAT_CLOCK_DATA,
	};
	struct hwc__bytes body = {0};
	struct pf_section sec[HWC_ARRAY_SIZE(order)];
	size_t nsec = 0;
	memset(h, 0, sizeof(*h));
	int err = 0;
	for (size_t i = 0; i < HWC_ARRAY_SIZE(order) && !err; i++) {
		size_t before = body.len;
		err = feature(rec, order[i], &body);
		if (err == -ENOENT) {
			body.len = before;
			err = 0;
			continue;
		}
		sec[nsec++] = (struct pf_section){before, body.len - before};
		h->features[order[i] / 64] |= 1ULL << (order[i] % 64);
	}
	/* The section table comes first, right after the data, as perf expects. */
	uint64_t base = data_end + nsec * sizeof(struct pf_section);
	for (size_t i = 0; i < nsec; i++)
		sec[i].offset += base;
	tail->len = 0;
	if (!err)
		err = hwc__bytes_put(tail, sec, nsec * sizeof(sec[0]));
	if (!err)
		err = hwc__bytes_put(tail, body.p, body.len);
	free(body.p);
	if (!err)
		err = hwc__bytes_put(tail, NULL, (8 - (data_end + tail->len) % 8) % 8);
	/* The id arrays, then the attribute table pointing at them. */
	struct pf_section *idsec = calloc(rec->nattrs + 1, sizeof(*idsec));
	if (!idsec)
		err = err ?: hwc__fail(-ENOMEM, "out of memory");
	for (size_t i = 0; i < rec->nattrs && !err; i++) {
		idsec[i] = (struct pf_section){data_end + tail->len, rec->attrs[i].nids * 8};
		err = hwc__bytes_put(tail, rec->attrs[i].ids, rec->attrs[i].nids * 8);
	}
	uint64_t attrs_off = data_end + tail->len;
	for (size_t i = 0; i < rec->nattrs && !err; i++) {
		err = hwc__bytes_put(tail, &rec->attrs[i].attr, sizeof(rec->attrs[i].attr));
		if (!err)
			err = hwc__bytes_put(tail, &idsec[i], sizeof(idsec[i]));
	}
	free(idsec);
	h->magic = PF_MAGIC;
	h->size = sizeof(*h);
	h->attr_size = sizeof(struct perf_event_attr) + sizeof(struct pf_section);
	h->attrs = (struct pf_section){attrs_off, rec->nattrs * h->attr_size};
	h->data = (struct pf_section){DATA_OFF, data_end - DATA_OFF};
	return err;
}

static bool out_of_space(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG;
}

/* Drop records from the end so that the data ends at or before WANT, on a
 * record boundary: found from the last flush before WANT, reading the
 * records written since (at most a buffer's worth). */
static void give_back(hwc_recording *rec, uint64_t want)
{
	while (rec->nmarks > 1 && rec->marks[rec->nmarks - 1].end > want)
		rec->nmarks--;
	struct mark m = rec->marks[rec->nmarks - 1];
	uint64_t end = rec->disk < m.end + BUF_SIZE ? rec->disk : m.end + BUF_SIZE;
	ssize_t n = pread(rec->fd, rec->buf, (size_t)(end - m.end), (off_t)(DATA_OFF + m.end));
	if (n < 0)
		n = 0; /* a write-only descriptor: keep only what the flush left */
	rec->disk = m.end;
	rec->disk_records = m.records;
	rec->disk_samples = m.samples;
	/* Compressed records end on a record of the stream only at a flush. */
	for (size_t k = 0; !rec->zs;) {
		const struct perf_event_header *h = (const void *)(rec->buf + k);
		if (k + sizeof(*h) > (size_t)n || h->size < sizeof(*h) || k + h->size > (size_t)n ||
		    m.end + k + h->size > want)
			break;
		k += h->size;
		rec->disk = m.end + k;
		rec->disk_records++;
		rec->disk_samples += h->type == PERF_RECORD_SAMPLE;
	}
	rec->marks[rec->nmarks - 1] = (struct mark){rec->disk, rec->disk_records, rec->disk_samples};
}

/* Make the file valid: data, tail, header.  When the tail does not fit,
 * give up records from the end, a flush at a time, until it does. */
static int finish(hwc_recording *rec)
{
	int err = flush_buf(rec);
	if (rec->pipe)
		return err; /* a stream is valid record by record */
	if (err && !rec->error)
		return err; /* out of memory, nothing written wrong */
	struct hwc__bytes tail = {0};
	struct pf_header h;
	for (;;) {
		uint64_t end = DATA_OFF + rec->disk;
		if (ftruncate(rec->fd, (off_t)end) < 0) {
			err = -errno;
			break;
		}
		err = build_tail(rec, end, &tail, &h);
		if (err)
			break;
		size_t done;
		err = write_at(rec, tail.p, tail.len, end, &done);
		if (!err || !out_of_space(err) || rec->disk == 0)
			break;
		if (!rec->error)
			write_failed(rec, err);
		give_back(rec, rec->disk > tail.len ? rec->disk - tail.len : 0);
	}
	if (!err) {
		size_t done;
		err = write_at(rec, &h, sizeof(h), 0, &done);
	}
	rec->tail_size = err ? 0 : tail.len;
	free(tail.p);
	if (err)
		return hwc__fail(err, "cannot finish %s: %s; the file is not a valid recording",
				 rec->path, strerror(-err));
	return 0;
}

HWC_EXPORT int hwc_recording_set_path(hwc_recording *rec, const char *path)
{
	hwc__clear_error();
	if (!rec->out)
		return hwc__fail(-EINVAL, "%s is not a file made by hwc_recording_create(): it "
					  "cannot be renamed",
				 rec->path);
	int err = hwc__output_set_path(rec->out, path);
	if (!err)
		snprintf(rec->path, sizeof(rec->path), "%s", path);
	return err;
}

HWC_EXPORT int hwc_recording_flush(hwc_recording *rec)
{
	hwc__clear_error();
	int err = finish(rec);
	if (err)
		return err;
	return rec->error ? stopped(rec) : 0;
}

HWC_EXPORT void hwc_recording_stats(const hwc_recording *rec, struct hwc_recording_stats *out)
{
	out->records = rec->disk_records + rec->buf_records;
	out->samples = rec->disk_samples + rec->buf_samples;
	out->bytes = DATA_OFF + rec->disk + rec->len + rec->tail_size;
}

HWC_EXPORT int hwc_recording_close(hwc_recording *rec, struct hwc_recording_stats *final)
{
	hwc__clear_error();
	if (!rec)
		return 0;
	int err = finish(rec);
	if (final)
		hwc_recording_stats(rec, final);
	if (err) {
		if (rec->out) /* not a valid recording: PATH stays as it was */
			hwc__fail_append("; %s is left as it was", rec->path);
		free_rec(rec);
		return err;
	}
	if (rec->error) {
		err = rec->error;
		hwc__fail(err, "cannot write %s: %s; it holds the %llu complete records (%llu "
			       "samples) that fit and is a valid recording",
			  rec->path, strerror(-err), (unsigned long long)rec->disk_records,
			  (unsigned long long)rec->disk_samples);
	}
	if (rec->out) {
		/* The commit sets the detail only when it fails. */
		int cerr = hwc__output_commit(rec->out);
		rec->out = NULL;
		if (cerr)
			err = cerr;
	}
	rec->fd = -1;
	free_rec(rec);
	return err;
}

HWC_EXPORT void hwc_recording_discard(hwc_recording *rec)
{
	if (rec)
		free_rec(rec);
}
