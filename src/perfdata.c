/* perf.data reader: map the file, check every section against the file's
 * size before trusting it, and walk the data section record by record.
 * Errors name the file offset and what was expected there. */
#include "dl.h"
#include "perf_file.h"
#include "hwc/perfdata.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC2_SW 0x50455246494c4532ULL /* the same, byte-swapped */
#define MAGIC1 0x454c494646524550ULL    /* "PERFFILE": version 1 */

struct id_entry {
	uint64_t id;
	size_t attr;
};

struct hwc_perfdata {
	const uint8_t *base;
	size_t size;
	bool mapped;
	struct pf_header h;
	struct hwc_perfdata_attr *attrs;
	size_t nattrs;
	char **names;
	uint64_t *ids; /* copies, aligned */
	struct id_entry *byid;
	size_t nbyid;
	struct pf_section feat[PF_FEAT_BITS];
	char *strings[PF_FEAT_BITS];
	struct hwc_perfdata_buildid *buildids;
	size_t nbuildids;
	/* Where the sample id sits: -1 none, else u64 index from the body's
	 * start (samples) and from its end (other records). */
	int id_pos_sample, id_pos_other;
	uint64_t pos; /* offset of the next record in the data section */
	uint64_t released; /* file pages below this were given back (madvise) */
	uint64_t *scratch; /* aligned copy of a misaligned record */
	/* The records of PERF_RECORD_COMPRESSED: one zstd stream across the
	 * data section, each compressed record a flushed piece of it.  A
	 * record may straddle two pieces, so what is left of one waits at the
	 * start of the buffer for the next. */
	ZSTD_DStream *zs;
	uint8_t *zbuf;
	size_t zlen, zpos, zcap; /* bytes held, the next record's position, allocated */
	uint64_t zoff;           /* file offset of the compressed record they came from */
	size_t zhint;            /* zstd's next input size after the last: mid-block if not 0 or 3 */
};

/* What one compressed record may unpack to: perf's unpack to at most its
 * ring buffer (HEADER_COMPRESSED's mmap_len), hwc's to its 1 MiB buffer. */
#define UNPACK_MAX (64u << 20)

static int bad(uint64_t off, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(uint64_t off, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return hwc__fail(-EINVAL, "perf.data offset %" PRIu64 " (%#" PRIx64 "): %s", off, off, what);
}

static bool in_file(const hwc_perfdata *f, uint64_t off, uint64_t len)
{
	return off <= f->size && len <= f->size - off;
}

static int check_section(const hwc_perfdata *f, const struct pf_section *s, uint64_t where,
			 const char *name)
{
	if (!in_file(f, s->offset, s->size))
		return bad(where, "the %s section [%" PRIu64 ", +%" PRIu64 ") lies past the end of "
				  "the %zu-byte file (truncated?)",
			   name, s->offset, s->size, f->size);
	return 0;
}

/* Keep the resident set small on big files: mapped pages below OFF that
 * were walked are dropped (every 256 KiB); touching them again rereads the
 * file (a private read-only mapping), so earlier pointers stay valid. */
static void release_below(hwc_perfdata *f, uint64_t off)
{
	if (!f->mapped || off - f->released < (1u << 18))
		return;
	uint64_t upto = off & ~(uint64_t)4095;
	uint64_t from = f->released & ~(uint64_t)4095;
	madvise((void *)(f->base + from), upto - from, MADV_DONTNEED);
	f->released = upto;
}

/* A name for an attr the file does not name. */
static char *attr_fallback_name(const struct perf_event_attr *a)
{
	char buf[64];
	const char *perf = hwc__table_name(a->type, a->config);
	if (perf)
		return strdup(perf);
	snprintf(buf, sizeof(buf), "type%u/config=%#llx/", a->type, (unsigned long long)a->config);
	return strdup(buf);
}

/* A perf_header_string at OFF within [OFF, END): its text, bounded. */
static int read_string(const hwc_perfdata *f, uint64_t *off, uint64_t end, char **out,
		       const char *what)
{
	uint32_t len;
	if (*off > end || end - *off < 4)
		return bad(*off, "expected the length of the %s string", what);
	memcpy(&len, f->base + *off, 4);
	*off += 4;
	if (len > end - *off)
		return bad(*off - 4, "%s string of %u bytes runs past its section's end at %" PRIu64,
			   what, len, end);
	*out = strndup((const char *)f->base + *off, len);
	*off += len;
	return *out ? 0 : hwc__fail(-ENOMEM, "out of memory");
}

static int read_attrs(hwc_perfdata *f)
{
	const struct pf_header *h = &f->h;
	if (h->attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct pf_section) || h->attr_size > 4096)
		return bad(16, "attr_size %" PRIu64 " is not the size of a perf_event_attr plus "
			       "its ids section (expected %zu..4096)",
			   h->attr_size, PERF_ATTR_SIZE_VER0 + sizeof(struct pf_section));
	int err = check_section(f, &h->attrs, 24, "attrs");
	if (err)
		return err;
	if (h->attrs.size % h->attr_size || h->attrs.size == 0)
		return bad(32, "the attrs section size %" PRIu64 " is not a positive multiple of "
			       "attr_size %" PRIu64,
			   h->attrs.size, h->attr_size);
	f->nattrs = h->attrs.size / h->attr_size;
	f->attrs = calloc(f->nattrs, sizeof(*f->attrs));
	f->names = calloc(f->nattrs, sizeof(*f->names));
	if (!f->attrs || !f->names)
		return hwc__fail(-ENOMEM, "out of memory");
	size_t total_ids = 0;
	uint64_t asz = h->attr_size - sizeof(struct pf_section);
	for (size_t i = 0; i < f->nattrs; i++) {
		uint64_t off = h->attrs.offset + i * h->attr_size;
		struct perf_event_attr *a = &f->attrs[i].attr;
		memcpy(a, f->base + off, asz < sizeof(*a) ? asz : sizeof(*a));
		if (a->size && (a->size < PERF_ATTR_SIZE_VER0 || a->size > asz))
			return bad(off + 4, "attr %zu says it is %u bytes; expected %d..%" PRIu64, i,
				   a->size, PERF_ATTR_SIZE_VER0, asz);
		/* Bytes of a bigger attr than ours must be zero, as the kernel demands. */
		for (uint64_t b = sizeof(*a); b < asz && b < a->size; b++)
			if (f->base[off + b])
				return hwc__fail(-ENOTSUP, "perf.data offset %" PRIu64 ": attr %zu uses "
							   "fields newer than this libhwc knows",
						 off + b, i);
		struct pf_section ids;
		memcpy(&ids, f->base + off + asz, sizeof(ids));
		if (!in_file(f, ids.offset, ids.size) || ids.size % 8)
			return bad(off + asz, "the ids of attr %zu [%" PRIu64 ", +%" PRIu64 ") are not "
					      "whole u64s inside the file",
				   i, ids.offset, ids.size);
		f->attrs[i].nids = ids.size / 8;
		total_ids += ids.size / 8;
	}
	f->ids = calloc(total_ids + 1, 8);
	f->byid = calloc(total_ids + 1, sizeof(*f->byid));
	if (!f->ids || !f->byid)
		return hwc__fail(-ENOMEM, "out of memory");
	uint64_t *next = f->ids;
	for (size_t i = 0; i < f->nattrs; i++) {
		uint64_t off = h->attrs.offset + i * h->attr_size;
		struct pf_section ids;
		memcpy(&ids, f->base + off + asz, sizeof(ids));
		memcpy(next, f->base + ids.offset, ids.size);
		f->attrs[i].ids = next;
		for (size_t k = 0; k < f->attrs[i].nids; k++)
			f->byid[f->nbyid++] = (struct id_entry){next[k], i};
		next += f->attrs[i].nids;
	}
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_entry *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Where records carry their sample id: perf requires every attr to agree. */
static int find_id_positions(hwc_perfdata *f)
{
	f->id_pos_sample = f->id_pos_other = -1;
	for (size_t i = 0; i < f->nattrs; i++) {
		uint64_t t = f->attrs[i].attr.sample_type;
		int ps = -1, po = -1;
		if (t & PERF_SAMPLE_IDENTIFIER) {
			ps = 0;
			po = 1;
		} else if (t & PERF_SAMPLE_ID) {
			ps = !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) +
			     !!(t & PERF_SAMPLE_ADDR);
			po = 1 + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU);
		}
		if (!f->attrs[i].attr.sample_id_all)
			po = -1;
		if (i == 0) {
			f->id_pos_sample = ps;
			f->id_pos_other = po;
		} else if (f->nattrs > 1 && (ps != f->id_pos_sample || po != f->id_pos_other)) {
			return bad(f->h.attrs.offset + i * f->h.attr_size,
				   "attr %zu keeps its sample id elsewhere than attr 0 (sample_type "
				   "%#" PRIx64 " vs %#" PRIx64 "), so records cannot be attributed",
				   i, t, (uint64_t)f->attrs[0].attr.sample_type);
		}
	}
	if (f->nattrs > 1 && f->id_pos_sample < 0)
		return bad(f->h.attrs.offset, "%zu attrs but no PERF_SAMPLE_ID or _IDENTIFIER to tell "
					      "their records apart",
			   f->nattrs);
	return 0;
}

static int read_event_desc(hwc_perfdata *f)
{
	const struct pf_section *s = &f->feat[HWC_FEAT_EVENT_DESC];
	if (!s->size)
		return 0;
	uint64_t off = s->offset, end = s->offset + s->size;
	uint32_t nr, asz;
	if (s->size < 8)
		return bad(off, "EVENT_DESC feature of %" PRIu64 " bytes is shorter than its "
				"8-byte count", s->size);
	memcpy(&nr, f->base + off, 4);
	memcpy(&asz, f->base + off + 4, 4);
	off += 8;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nids;
		if (asz > end - off || end - off - asz < 4)
			return bad(off, "EVENT_DESC event %u: expected a %u-byte attr and its id count",
				   i, asz);
		off += asz;
		memcpy(&nids, f->base + off, 4);
		off += 4;
		char *name;
		int err = read_string(f, &off, end, &name, "EVENT_DESC name");
		if (err)
			return err;
		if (nids > (end - off) / 8) {
			free(name);
			return bad(off, "EVENT_DESC event %u: %u ids run past the section's end", i, nids);
		}
		off += (uint64_t)nids * 8;
		if (i < f->nattrs && !f->names[i])
			f->names[i] = name;
		else
			free(name);
	}
	return 0;
}

static int read_strings(hwc_perfdata *f)
{
	static const int feats[] = {HWC_FEAT_HOSTNAME, HWC_FEAT_OSRELEASE, HWC_FEAT_VERSION,
				    HWC_FEAT_ARCH, HWC_FEAT_CPUDESC, HWC_FEAT_CPUID};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(feats); i++) {
		const struct pf_section *s = &f->feat[feats[i]];
		uint64_t off = s->offset;
		if (s->size) {
			int err = read_string(f, &off, s->offset + s->size, &f->strings[feats[i]],
					      "feature");
			if (err)
				return err;
		}
	}
	const struct pf_section *s = &f->feat[HWC_FEAT_CMDLINE];
	if (!s->size)
		return 0;
	uint64_t off = s->offset, end = s->offset + s->size;
	uint32_t nr;
	if (s->size < 4)
		return bad(off, "CMDLINE feature is shorter than its 4-byte count");
	memcpy(&nr, f->base + off, 4);
	off += 4;
	struct hwc__buf b = {0};
	for (uint32_t i = 0; i < nr; i++) {
		char *arg;
		int err = read_string(f, &off, end, &arg, "CMDLINE");
		if (err) {
			free(b.s);
			return err;
		}
		hwc__buf_printf(&b, "%s%s", i ? " " : "", arg);
		free(arg);
	}
	f->strings[HWC_FEAT_CMDLINE] = b.s ? b.s : strdup("");
	return 0;
}

static int read_buildids(hwc_perfdata *f)
{
	const struct pf_section *s = &f->feat[HWC_FEAT_BUILD_ID];
	uint64_t off = s->offset, end = s->offset + s->size;
	size_t cap = 0;
	while (off < end) {
		struct pf_build_id e;
		if (end - off < sizeof(e))
			return bad(off, "expected a build_id record (at least %zu bytes) in the "
					"BUILD_ID feature",
				   sizeof(e));
		memcpy(&e, f->base + off, sizeof(e));
		if (e.h.size < sizeof(e) || e.h.size > end - off)
			return bad(off, "build_id record of %u bytes does not fit its feature "
					"(expected %zu..%" PRIu64 ")",
				   e.h.size, sizeof(e), end - off);
		int err = hwc__reserve(&f->buildids, &cap, f->nbuildids + 1, sizeof(*f->buildids));
		if (err)
			return err;
		struct hwc_perfdata_buildid *b = &f->buildids[f->nbuildids];
		memset(b, 0, sizeof(*b));
		b->pid = e.pid;
		memcpy(b->id, e.id, PF_BUILD_ID_MAX);
		b->misc = e.h.misc;
		b->size = e.h.misc & PF_MISC_BUILD_ID_SIZE ? e.id[PF_BUILD_ID_MAX] : PF_BUILD_ID_MAX;
		if (b->size > PF_BUILD_ID_MAX)
			b->size = PF_BUILD_ID_MAX;
		b->filename = strndup((const char *)f->base + off + sizeof(e), e.h.size - sizeof(e));
		if (!b->filename)
			return hwc__fail(-ENOMEM, "out of memory");
		f->nbuildids++;
		off += e.h.size;
	}
	return 0;
}

static int name_attrs(hwc_perfdata *f)
{
	for (size_t i = 0; i < f->nattrs; i++) {
		if (!f->names[i] && !(f->names[i] = attr_fallback_name(&f->attrs[i].attr)))
			return hwc__fail(-ENOMEM, "out of memory");
		f->attrs[i].name = f->names[i];
	}
	return 0;
}

/* Pipe mode: records from offset 16 to the last whole one.  The events are
 * the HEADER_ATTR records (attr, then its ids), the features the
 * HEADER_FEATURE records (feature id, then its section's bytes); the data
 * section is the whole stream, whose header records carry no samples. */
static int parse_pipe(hwc_perfdata *f)
{
	uint64_t end = 16, total_ids = 0;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t *next = f->ids;
		for (uint64_t off = 16;;) {
			struct perf_event_header h;
			if (f->size - off < sizeof(h))
				break;
			memcpy(&h, f->base + off, sizeof(h));
			if (h.size < sizeof(h))
				return bad(off, "record of type %u has size %u, smaller than its own "
						"8-byte header",
					   h.type, h.size);
			if (h.size > f->size - off)
				break; /* the stream goes on past what is here */
			const uint8_t *body = f->base + off + sizeof(h);
			size_t blen = h.size - sizeof(h);
			if (h.type == HWC_RECORD_HEADER_ATTR) {
				uint32_t asize;
				if (blen < PERF_ATTR_SIZE_VER0)
					return bad(off, "HEADER_ATTR of %zu bytes: expected at least %d",
						   blen, PERF_ATTR_SIZE_VER0);
				memcpy(&asize, body + 4, 4);
				if (asize < PERF_ATTR_SIZE_VER0 || asize > blen || (blen - asize) % 8)
					return bad(off + 12, "HEADER_ATTR says its attr is %u bytes in a "
							     "%zu-byte record",
						   asize, blen);
				size_t nids = (blen - asize) / 8;
				if (pass == 0) {
					f->nattrs++;
					total_ids += nids;
				} else {
					struct hwc_perfdata_attr *a = &f->attrs[f->nattrs];
					for (uint64_t b = sizeof(a->attr); b < asize; b++)
						if (body[b])
							return hwc__fail(-ENOTSUP, "perf.data offset %" PRIu64 ": attr %zu uses fields newer than this libhwc knows",
									 off + 8 + b, f->nattrs);
					memcpy(&a->attr, body, asize < sizeof(a->attr) ? asize : sizeof(a->attr));
					memcpy(next, body + asize, nids * 8);
					a->ids = next;
					a->nids = nids;
					for (size_t k = 0; k < nids; k++)
						f->byid[f->nbyid++] = (struct id_entry){next[k], f->nattrs};
					next += nids;
					f->nattrs++;
				}
			} else if (h.type == HWC_RECORD_HEADER_FEATURE && pass == 1 && blen >= 8) {
				uint64_t feat;
				memcpy(&feat, body, 8);
				if (feat > 0 && feat < PF_FEAT_BITS) {
					f->feat[feat] = (struct pf_section){off + 16, blen - 8};
					f->h.features[feat / 64] |= 1ULL << (feat % 64);
				}
			}
			off += h.size;
			end = off;
			release_below(f, off);
		}
		f->released = 0;
		if (pass == 0) {
			f->attrs = calloc(f->nattrs + 1, sizeof(*f->attrs));
			f->names = calloc(f->nattrs + 1, sizeof(*f->names));
			f->ids = calloc(total_ids + 1, 8);
			f->byid = calloc(total_ids + 1, sizeof(*f->byid));
			if (!f->attrs || !f->names || !f->ids || !f->byid)
				return hwc__fail(-ENOMEM, "out of memory");
			f->nattrs = 0;
		}
	}
	if (f->nattrs == 0)
		return bad(16, "a pipe-mode stream with no HEADER_ATTR record before offset %" PRIu64
			       ": no event to read its records with",
			   end);
	f->h.magic = PF_MAGIC;
	f->h.size = 16;
	f->h.data = (struct pf_section){16, end - 16};
	qsort(f->byid, f->nbyid, sizeof(*f->byid), cmp_id);
	int err = find_id_positions(f);
	if (!err)
		err = read_strings(f);
	if (!err)
		err = name_attrs(f);
	f->pos = f->h.data.offset;
	return err;
}

static int parse(hwc_perfdata *f)
{
	if (f->size < 16)
		return bad(0, "a perf.data header needs at least 16 bytes; the file has %zu", f->size);
	uint64_t magic;
	memcpy(&magic, f->base, 8);
	if (magic == MAGIC2_SW)
		return hwc__fail(-ENOTSUP, "perf.data offset 0: the file was written with the other "
					   "byte order; hwc reads native-endian files only");
	if (magic == MAGIC1)
		return hwc__fail(-ENOTSUP, "perf.data offset 0: PERFFILE version 1 files are not "
					   "supported; convert with a newer perf");
	if (magic != PF_MAGIC)
		return bad(0, "expected the magic \"PERFILE2\"; this is not a perf.data file");
	uint64_t hsize;
	memcpy(&hsize, f->base + 8, 8);
	if (hsize == 16)
		return parse_pipe(f);
	if (hsize < sizeof(f->h) || f->size < sizeof(f->h))
		return bad(8, "header size %" PRIu64 " (file %zu bytes): expected a %zu-byte "
			      "header",
			   hsize, f->size, sizeof(f->h));
	memcpy(&f->h, f->base, sizeof(f->h));
	int err = read_attrs(f);
	if (err)
		return err;
	err = check_section(f, &f->h.data, 40, "data");
	if (err)
		return err;
	qsort(f->byid, f->nbyid, sizeof(*f->byid), cmp_id);
	err = find_id_positions(f);
	if (err)
		return err;
	/* Feature sections follow the data, one per set bit, in bit order. */
	uint64_t off = f->h.data.offset + f->h.data.size;
	for (int bit = 1; bit < PF_FEAT_BITS; bit++) {
		if (!(f->h.features[bit / 64] >> (bit % 64) & 1))
			continue;
		if (!in_file(f, off, sizeof(struct pf_section)))
			return bad(off, "expected the section descriptor of header feature %d; the "
					"file ends at %zu (truncated?)",
				   bit, f->size);
		memcpy(&f->feat[bit], f->base + off, sizeof(struct pf_section));
		if (!in_file(f, f->feat[bit].offset, f->feat[bit].size))
			return bad(off, "header feature %d [%" PRIu64 ", +%" PRIu64 ") lies past the "
					"end of the %zu-byte file",
				   bit, f->feat[bit].offset, f->feat[bit].size, f->size);
		off += sizeof(struct pf_section);
	}
	if ((err = read_event_desc(f)) || (err = read_strings(f)) || (err = read_buildids(f)) ||
	    (err = name_attrs(f)))
		return err;
	f->pos = f->h.data.offset;
	return 0;
}

/* MAPPED: DATA is a mapping of SIZE bytes the handle unmaps at close. */
static int open_data(hwc_perfdata **out, const void *data, size_t size, bool mapped)
{
	hwc__clear_error();
	*out = NULL;
	hwc_perfdata *f = calloc(1, sizeof(*f));
	if (!f)
		return hwc__fail(-ENOMEM, "out of memory");
	f->base = data;
	f->size = size;
	f->mapped = mapped;
	int err = parse(f);
	if (err) {
		f->mapped = false; /* the caller's to unmap */
		hwc_perfdata_close(f);
		return err;
	}
	*out = f;
	return 0;
}

HWC_EXPORT int hwc_perfdata_open_mem(hwc_perfdata **out, const void *data, size_t size)
{
	return open_data(out, data, size, false);
}

/* Map the SIZE bytes of regular file FD and parse them; NAME for errors. */
static int open_mapped(hwc_perfdata **out, int fd, size_t size, const char *name)
{
	void *p = NULL;
	if (size > 0) {
		p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return hwc__fail(-errno, "cannot map %s: %s", name, strerror(errno));
	}
	int err = open_data(out, p ? p : "", size, p != NULL);
	if (err) {
		hwc__fail_append(" (in %s)", name);
		if (p)
			munmap(p, size);
	}
	return err;
}

HWC_EXPORT int hwc_perfdata_open(hwc_perfdata **out, const char *path)
{
	*out = NULL;
	/* A FIFO with no writer must not block the open. */
	int fd = hwc__open_regular(path);
	if (fd == -EINVAL)
		return hwc__fail(-EINVAL, "%s is not a regular file (a FIFO or device is not "
					  "read; save the stream to a file first)",
				 path);
	if (fd < 0)
		return hwc__fail(fd, "cannot open %s: %s", path, strerror(-fd));
	struct stat st;
	int err = fstat(fd, &st) < 0 ? -errno : 0;
	if (err)
		hwc__fail(err, "cannot open %s: %s", path, strerror(-err));
	else
		err = open_mapped(out, fd, (size_t)st.st_size, path);
	close(fd);
	return err;
}

/* Copy the stream on FD to its end into an unlinked file in $TMPDIR (else
 * /tmp): the stream then costs disk, not memory, and is read as a file. */
static int spool(int fd, const char *name, int *tmp, size_t *size)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	*tmp = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (*tmp < 0)
		return hwc__fail(-errno, "cannot keep %s in a temporary file in %s: %s (set TMPDIR "
					 "to a writable directory)",
				 name, dir, strerror(errno));
	char buf[1 << 14];
	*size = 0;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue; /* hwc report lets Ctrl-C through: the writer ends the stream */
		if (n < 0)
			return hwc__fail(-errno, "cannot read %s: %s", name, strerror(errno));
		if (n == 0)
			return 0;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(*tmp, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return hwc__fail(w < 0 ? -errno : -ENOSPC, "cannot keep %s in a temporary "
						 "file in %s: %s after %zu bytes (set TMPDIR to a "
						 "directory with more room)",
						 name, dir, w < 0 ? strerror(errno) : "short write", *size);
			done += w;
		}
		*size += (size_t)n;
	}
}

HWC_EXPORT int hwc_perfdata_open_fd(hwc_perfdata **out, int fd)
{
	hwc__clear_error();
	*out = NULL;
	char name[64];
	struct stat st;
	if (fstat(fd, &st) < 0)
		return hwc__fail(-errno, "cannot read file descriptor %d: %s", fd, strerror(errno));
	if (S_ISREG(st.st_mode)) {
		snprintf(name, sizeof(name), "file descriptor %d", fd);
		return open_mapped(out, fd, (size_t)st.st_size, name);
	}
	if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
		return hwc__fail(-EINVAL, "file descriptor %d is neither a regular file nor a pipe "
					  "or socket (a terminal or device is not read)",
				 fd);
	snprintf(name, sizeof(name), "the stream on file descriptor %d", fd);
	int tmp = -1;
	size_t size = 0;
	int err = spool(fd, name, &tmp, &size);
	if (!err)
		err = open_mapped(out, tmp, size, name);
	if (tmp >= 0)
		close(tmp);
	return err;
}

HWC_EXPORT void hwc_perfdata_close(hwc_perfdata *f)
{
	if (!f)
		return;
	if (f->mapped)
		munmap((void *)f->base, f->size);
	for (size_t i = 0; f->names && i < f->nattrs; i++)
		free(f->names[i]);
	for (int i = 0; i < PF_FEAT_BITS; i++)
		free(f->strings[i]);
	for (size_t i = 0; i < f->nbuildids; i++)
		free((char *)f->buildids[i].filename);
	free(f->buildids);
	free(f->names);
	free(f->attrs);
	free(f->ids);
	free(f->byid);
	free(f->scratch);
	free(f->zbuf);
	if (f->zs)
		ZSTD_freeDStream(f->zs);
	free(f);
}

HWC_EXPORT size_t hwc_perfdata_nattrs(const hwc_perfdata *f)
{
	return f->nattrs;
}

HWC_EXPORT const struct hwc_perfdata_attr *hwc_perfdata_attr(const hwc_perfdata *f, size_t idx)
{
	return idx < f->nattrs ? &f->attrs[idx] : NULL;
}

HWC_EXPORT const struct hwc_perfdata_attr *hwc_perfdata_attr_by_id(const hwc_perfdata *f,
								   uint64_t id)
{
	size_t lo = 0, hi = f->nbyid;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->byid[mid].id == id)
			return &f->attrs[f->byid[mid].attr];
		if (f->byid[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

HWC_EXPORT bool hwc_perfdata_has_feature(const hwc_perfdata *f, int feat)
{
	return feat > 0 && feat < PF_FEAT_BITS && (f->h.features[feat / 64] >> (feat % 64) & 1);
}

HWC_EXPORT int hwc_perfdata_feature(const hwc_perfdata *f, int feat, const void **data,
				    size_t *size)
{
	hwc__clear_error();
	if (!hwc_perfdata_has_feature(f, feat))
		return hwc__fail(-ENOENT, "the recording has no header feature %d", feat);
	*data = f->base + f->feat[feat].offset;
	*size = f->feat[feat].size;
	return 0;
}

HWC_EXPORT const char *hwc_perfdata_string(const hwc_perfdata *f, int feat)
{
	return feat > 0 && feat < PF_FEAT_BITS ? f->strings[feat] : NULL;
}

HWC_EXPORT size_t hwc_perfdata_nbuildids(const hwc_perfdata *f)
{
	return f->nbuildids;
}

HWC_EXPORT const struct hwc_perfdata_buildid *hwc_perfdata_buildid(const hwc_perfdata *f,
								   size_t idx)
{
	return idx < f->nbuildids ? &f->buildids[idx] : NULL;
}

HWC_EXPORT void hwc_perfdata_data_section(const hwc_perfdata *f, uint64_t *offset, uint64_t *size)
{
	*offset = f->h.data.offset;
	*size = f->h.data.size;
}

HWC_EXPORT void hwc_perfdata_rewind(hwc_perfdata *f)
{
	f->pos = f->h.data.offset;
	f->released = 0;
	f->zlen = f->zpos = f->zhint = 0;
	if (f->zs)
		ZSTD_DCtx_reset(f->zs, ZSTD_reset_session_only);
}

static const struct hwc_perfdata_attr *record_attr(const hwc_perfdata *f,
						   const struct perf_event_header *hdr)
{
	if (hdr->type >= HWC_RECORD_HEADER_ATTR)
		return NULL;
	if (f->nattrs == 1)
		return &f->attrs[0];
	const uint64_t *body = (const uint64_t *)(hdr + 1);
	size_t words = (hdr->size - sizeof(*hdr)) / 8;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		if ((size_t)f->id_pos_sample >= words)
			return NULL;
		return hwc_perfdata_attr_by_id(f, body[f->id_pos_sample]);
	}
	/* Records without a usable trailer belong to the first attr, as in perf. */
	const struct hwc_perfdata_attr *a = NULL;
	if (f->id_pos_other > 0 && (size_t)f->id_pos_other <= words)
		a = hwc_perfdata_attr_by_id(f, body[words - (size_t)f->id_pos_other]);
	return a ? a : &f->attrs[0];
}

/* The compressed record of SIZE bytes at f->pos: its payload appended to
 * the buffer of unpacked records. */
static int unpack(hwc_perfdata *f, uint32_t type, uint16_t size)
{
	const uint8_t *p = f->base + f->pos + sizeof(struct perf_event_header);
	size_t n = size - sizeof(struct perf_event_header);
	if (type == HWC_RECORD_COMPRESSED2) {
		uint64_t dsize;
		if (n < 8)
			return bad(f->pos, "COMPRESSED2 record of %u bytes has no room for its "
					   "8-byte data size",
				   size);
		memcpy(&dsize, p, 8);
		if (dsize > n - 8)
			return bad(f->pos + 8, "COMPRESSED2 record says it holds %" PRIu64 " bytes "
					       "of data in %zu (corrupted)",
				   dsize, n - 8);
		p += 8;
		n = (size_t)dsize;
	}
	if (!f->zs) {
		uint32_t comp[2];
		if (f->feat[HWC_FEAT_COMPRESSED].size >= sizeof(comp)) {
			memcpy(comp, f->base + f->feat[HWC_FEAT_COMPRESSED].offset, sizeof(comp));
			if (comp[1] != 1) /* perf's PERF_COMP_ZSTD */
				return hwc__fail(-ENOTSUP, "perf.data offset %" PRIu64 ": the data is "
							   "compressed with method %u; hwc reads "
							   "zstd (1) only",
						 f->pos, comp[1]);
		}
		int err = hwc__load_zstd();
		if (err)
			return err;
		if (!(f->zs = ZSTD_createDStream()))
			return hwc__fail(-ENOMEM, "out of memory");
	}
	/* Keep what is left of the last piece: the start of a record. */
	if (f->zpos) {
		memmove(f->zbuf, f->zbuf + f->zpos, f->zlen - f->zpos);
		f->zlen -= f->zpos;
		f->zpos = 0;
	}
	size_t before = f->zlen;
	ZSTD_inBuffer in = {p, n, 0};
	for (;;) {
		if (f->zcap - f->zlen < (64u << 10)) {
			if (f->zlen - before > UNPACK_MAX)
				return bad(f->pos, "a compressed record unpacks to more than %u MiB "
						   "(corrupted?)",
					   UNPACK_MAX >> 20);
			size_t cap = f->zcap ? f->zcap * 2 : (1u << 20);
			uint8_t *b = realloc(f->zbuf, cap);
			if (!b)
				return hwc__fail(-ENOMEM, "out of memory");
			f->zbuf = b;
			f->zcap = cap;
		}
		ZSTD_outBuffer out = {f->zbuf, f->zcap, f->zlen};
		size_t had_in = in.pos;
		size_t r = ZSTD_decompressStream(f->zs, &out, &in);
		if (ZSTD_isError(r))
			return bad(f->pos, "compressed record of %u bytes does not unpack: zstd "
					   "says \"%s\" (corrupted)",
				   size, ZSTD_getErrorName(r));
		bool progress = out.pos > f->zlen || in.pos > had_in;
		f->zlen = out.pos;
		f->zhint = r;
		if ((in.pos == in.size && out.pos < out.size) || !progress)
			break;
	}
	f->zoff = f->pos;
	return 0;
}

/* Point REC at the SIZE-byte record at P, taken from file offset OFF. */
static int deliver(hwc_perfdata *f, struct hwc_perfdata_record *rec, const uint8_t *p,
		   uint16_t size, uint64_t off)
{
	if ((uintptr_t)p % 8) {
		if (!f->scratch && !(f->scratch = malloc(PF_RECORD_MAX + 1)))
			return hwc__fail(-ENOMEM, "out of memory");
		memcpy(f->scratch, p, size);
		p = (const uint8_t *)f->scratch;
	}
	rec->hdr = (const struct perf_event_header *)(const void *)p;
	rec->offset = off;
	rec->attr = record_attr(f, rec->hdr);
	return 1;
}

/* The next whole record unpacked from compressed ones: 1, 0 (none whole
 * yet) or -errno. */
static int next_unpacked(hwc_perfdata *f, struct hwc_perfdata_record *rec)
{
	struct perf_event_header hdr;
	size_t left = f->zlen - f->zpos;
	if (left < sizeof(hdr))
		return 0;
	memcpy(&hdr, f->zbuf + f->zpos, sizeof(hdr));
	if (hdr.size < sizeof(hdr))
		return bad(f->zoff, "record of type %u (%s) unpacked from this compressed record "
				    "has size %u, smaller than its own 8-byte header",
			   hdr.type, hwc_record_type_name(hdr.type), hdr.size);
	if (hdr.type == HWC_RECORD_COMPRESSED || hdr.type == HWC_RECORD_COMPRESSED2)
		return bad(f->zoff, "a compressed record inside compressed data (corrupted)");
	if (hdr.size > left)
		return 0;
	f->zpos += hdr.size;
	return deliver(f, rec, f->zbuf + f->zpos - hdr.size, hdr.size, f->zoff);
}

HWC_EXPORT int hwc_perfdata_next(hwc_perfdata *f, struct hwc_perfdata_record *rec)
{
	hwc__clear_error();
	uint64_t end = f->h.data.offset + f->h.data.size;
	for (;;) {
		int got = next_unpacked(f, rec);
		if (got)
			return got;
		if (f->pos >= end)
			break;
		struct perf_event_header hdr;
		if (end - f->pos < sizeof(hdr))
			return bad(f->pos, "expected an 8-byte record header; the data section ends "
					   "after %" PRIu64 " bytes",
				   end - f->pos);
		memcpy(&hdr, f->base + f->pos, sizeof(hdr));
		if (hdr.size < sizeof(hdr))
			return bad(f->pos, "record of type %u (%s) has size %u, smaller than its own "
					   "8-byte header",
				   hdr.type, hwc_record_type_name(hdr.type), hdr.size);
		if (hdr.size > end - f->pos)
			return bad(f->pos, "record of type %u (%s) claims %u bytes but the data "
					   "section ends %" PRIu64 " bytes later (truncated or "
					   "corrupted)",
				   hdr.type, hwc_record_type_name(hdr.type), hdr.size, end - f->pos);
		if (hdr.type == HWC_RECORD_COMPRESSED || hdr.type == HWC_RECORD_COMPRESSED2) {
			int err = unpack(f, hdr.type, hdr.size);
			if (err)
				return err;
			release_below(f, f->pos);
			f->pos += hdr.size;
			continue;
		}
		int got_file = deliver(f, rec, f->base + f->pos, hdr.size, f->pos);
		if (got_file < 0)
			return got_file;
		f->pos += hdr.size;
		release_below(f, rec->offset);
		return 1;
	}
	/* A piece may end inside a zstd block (perf's do when a flush fills a
	 * record), the last one may not: the rest of the stream is missing. */
	if (f->zs && f->zhint != 0 && f->zhint != 3 /* a block header: a block ended */)
		return bad(f->zoff, "the compressed data ends inside a zstd block (%zu more bytes "
				    "expected; truncated?)",
			   f->zhint);
	if (f->zpos < f->zlen)
		return bad(f->zoff, "the compressed data ends inside a record (%zu bytes of it "
				    "unpacked; truncated?)",
			   f->zlen - f->zpos);
	return 0;
}

HWC_EXPORT const char *hwc_record_type_name(uint32_t type)
{
	static const char *const kernel[] = {
		[PERF_RECORD_MMAP] = "MMAP", [PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM", [PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE", [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK", [PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE", [PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX", [PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES", [PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES", [PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT", [PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	};
	static const char *const user[] = {
		"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA", "HEADER_BUILD_ID",
		"FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE", "AUXTRACE_ERROR",
		"THREAD_MAP", "CPU_MAP", "STAT_CONFIG", "STAT", "STAT_ROUND", "EVENT_UPDATE",
		"TIME_CONV", "HEADER_FEATURE", "COMPRESSED", "FINISHED_INIT", "COMPRESSED2",
	};
	if (type < HWC_ARRAY_SIZE(kernel) && kernel[type])
		return kernel[type];
	if (type >= 64 && type - 64 < HWC_ARRAY_SIZE(user))
		return user[type - 64];
	return "unknown";
}
