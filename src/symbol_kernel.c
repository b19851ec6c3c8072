/* Kernel addresses: the text symbols of /proc/kallsyms (or of perf's copy
 * of it, when it is the running kernel's), read once, sorted and
 * binary-searched; each address's location cached.  An address in a
 * module is named from the module's .ko file when libdwfl finds it, as
 * perf prefers it: exact sizes where kallsyms only has starts. */
#include "dl.h"
#include "internal.h"
#include "symbol_internal.h"

#include "hwc/output.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One text symbol of kallsyms as read; its name and its module's are
 * bytes of the table's text: its pool, or the cached copy's file. */
struct ksym {
	uint64_t addr;
	uint32_t name;   /* offset in the text */
	uint16_t len;    /* the name's length */
	uint16_t module; /* 0: the kernel's own; else 1 + its index in modules */
};

struct kmodule {
	uint32_t name; /* offset in the text */
	uint16_t len;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* One text symbol as the table keeps it once sorted, in 8 bytes (some
 * 120000 of them: 1.9 MB of a system-wide report's 10.6 MB peak in 16):
 * the lower half of its address (the upper one is its run's) and where
 * its name is (name_at()); its module is its module run's. */
struct kentry {
	uint32_t addr;
	uint32_t name;
};
_Static_assert(sizeof(struct kentry) <= sizeof(struct ksym), "keep_entries() works in place");

/* Entries whose addresses share their upper 32 bits: on x86-64 the
 * kernel, its modules and BPF programs are one run; elsewhere modules
 * may be far from the kernel. */
struct krun {
	uint32_t high;
	size_t first; /* its first entry */
};

/* Entries of one module, the kernel's own (0) or 1 + its index in
 * modules: a module's text is one piece of memory. */
struct kmrun {
	uint16_t module;
	size_t first; /* its first entry */
};

/* The text symbols of kallsyms, sorted.  Their names are copied from
 * /proc/kallsyms into one pool; or, from a copy in the build-id cache,
 * left in that file and read when a sample lands in them.  Read into V,
 * then kept in E. */
struct hwc__kallsyms {
	struct ksym *v;
	size_t n, cap;
	struct kentry *e;
	struct krun *runs;
	size_t nruns;
	struct kmrun *mruns;
	size_t nmruns;
	struct kmodule *modules;
	size_t nmodules, capmodules;
	char *pool; /* the names read from /proc/kallsyms */
	size_t pool_len, pool_cap;
	int fd;     /* else the cached copy the names are in (-1: none) */
	int err;    /* -errno when it could not be read */
	bool hidden; /* every address 0: kptr_restrict, or not root */
};

static void kallsyms_free(struct hwc__kallsyms *k)
{
	if (!k)
		return;
	if (k->fd >= 0)
		close(k->fd);
	free(k->v);
	free(k->e);
	free(k->runs);
	free(k->mruns);
	free(k->modules);
	free(k->pool);
	free(k);
}

/* Bytes OFF..OFF+LEN of K's text as a string in BUF (SIZE bytes), or
 * NULL when they cannot be read. */
static const char *text_at(const struct hwc__kallsyms *k, uint32_t off, uint16_t len, char *buf,
			   size_t size)
{
	if (len >= size)
		return NULL;
	if (k->fd < 0)
		memcpy(buf, k->pool + off, len);
	else if (pread(k->fd, buf, len, off) != len)
		return NULL;
	buf[len] = '\0';
	return buf;
}

/* The name at OFF of K's text (up to the blank, newline or NUL after it)
 * in BUF (SIZE bytes), or NULL when it cannot be read. */
static const char *name_at(const struct hwc__kallsyms *k, uint32_t off, char *buf, size_t size)
{
	size_t n = size - 1;
	if (k->fd < 0) {
		n = strnlen(k->pool + off, n);
		memcpy(buf, k->pool + off, n);
	} else {
		ssize_t got = pread(k->fd, buf, n, off);
		if (got <= 0)
			return NULL;
		n = (size_t)got;
	}
	buf[n] = '\0';
	buf[strcspn(buf, " \t\n")] = '\0';
	return buf;
}

static bool grow(void **v, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return true;
	size_t cap2 = *cap ? *cap : first;
	while (cap2 < need)
		cap2 *= 2;
	void *p = realloc(*v, cap2 * elem);
	if (!p)
		return false;
	*v = p;
	*cap = cap2;
	return true;
}

/* Where BYTES (LEN of them, at offset OFF of the source) are kept: copied
 * into the pool (from /proc/kallsyms), a NUL after them, else where they
 * are in the file. */
static bool keep_text(struct hwc__kallsyms *k, bool copy, const char *bytes, size_t len, size_t off,
		      uint32_t *at)
{
	if (!copy) {
		*at = (uint32_t)off;
		return off + len <= UINT32_MAX;
	}
	if (k->pool_len + len + 1 > UINT32_MAX ||
	    !grow((void **)&k->pool, &k->pool_cap, k->pool_len + len + 1, 1, 1 << 20))
		return false;
	memcpy(k->pool + k->pool_len, bytes, len);
	k->pool[k->pool_len + len] = '\0';
	*at = (uint32_t)k->pool_len;
	k->pool_len += len + 1;
	return true;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* State of one read: the latest module (they come in runs). */
struct kread {
	bool copy, sorted, any_nonzero;
	char module[64];
	size_t module_len;
};

/* One line "ADDR TYPE NAME[\t[MODULE]]" (LINE[0..LEN), no newline, at
 * offset OFF of the source): a text symbol is kept.  False when out of
 * memory.  Parsed by hand: some 120000 lines. */
static bool add_line(struct hwc__kallsyms *k, struct kread *r, const char *line, size_t len,
		     size_t off)
{
	uint64_t addr = 0;
	size_t i = 0;
	for (int h; i < len && i < 16 && (h = hex_digit(line[i])) >= 0; i++)
		addr = addr << 4 | (unsigned)h;
	if (i == 0 || i + 3 > len || line[i] != ' ' || line[i + 2] != ' ')
		return true;
	char type = line[i + 1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return true;
	const char *name = line + i + 3, *end = line + len;
	size_t n = 0;
	while (name + n < end && name[n] != ' ' && name[n] != '\t')
		n++;
	const char *mod = NULL;
	size_t mlen = 0;
	if (name + n < end) {
		const char *m = name + n;
		while (m < end && (*m == ' ' || *m == '\t'))
			m++;
		while (m + mlen < end && m[mlen] != ']')
			mlen++;
		if (m < end && *m == '[' && m + mlen < end && mlen > 1 && mlen < sizeof(r->module)) {
			mod = m + 1;
			mlen--;
		}
	}
	/* No empty names, nor ARM's mapping symbols ($x, $d: where code or
	 * data starts), which arm64 modules list at their functions'
	 * addresses: perf skips them too.  The kernel's names are shorter
	 * than 512 (KSYM_NAME_LEN). */
	if (!n || name[0] == '$' || n >= 1024)
		return true;
	if (mod && (r->module_len != mlen || memcmp(r->module, mod, mlen) != 0)) {
		if (k->nmodules >= UINT16_MAX ||
		    !grow((void **)&k->modules, &k->capmodules, k->nmodules + 1, sizeof(*k->modules),
			  16))
			return false;
		struct kmodule *km = &k->modules[k->nmodules];
		if (!keep_text(k, r->copy, mod, mlen, off + (size_t)(mod - line), &km->name))
			return false;
		km->len = (uint16_t)mlen;
		k->nmodules++;
		memcpy(r->module, mod, mlen);
		r->module_len = mlen;
	}
	if (!grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v), 65536))
		return false;
	struct ksym *e = &k->v[k->n];
	if (!keep_text(k, r->copy, name, n, off + (size_t)(name - line), &e->name))
		return false;
	e->addr = addr;
	e->len = (uint16_t)n;
	e->module = mod ? (uint16_t)k->nmodules : 0;
	r->any_nonzero |= addr != 0;
	r->sorted &= !k->n || k->v[k->n - 1].addr <= addr;
	k->n++;
	return true;
}

/* Read the lines of FD (from its start) into K: names copied when COPY.
 * 0, or -errno. */
static int read_lines(struct hwc__kallsyms *k, int fd, bool copy)
{
	struct kread r = {.copy = copy, .sorted = true};
	char *buf = malloc(1 << 16); /* fewer reads of the kernel's text */
	if (!buf)
		return -ENOMEM;
	size_t have = 0, base = 0; /* bytes in buf, the source offset of buf[0] */
	int err = 0;
	for (;;) {
		ssize_t got = read(fd, buf + have, (1 << 16) - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			break;
		}
		have += (size_t)got;
		size_t used = 0;
		for (;;) { /* each whole line; at the end, the last one too */
			char *nl = memchr(buf + used, '\n', have - used);
			if (!nl && (got > 0 || used == have))
				break;
			size_t end = nl ? (size_t)(nl - buf) : have;
			if (!add_line(k, &r, buf + used, end - used, base + used)) {
				err = -ENOMEM;
				goto out;
			}
			used = nl ? end + 1 : have;
		}
		if (got == 0)
			break;
		if (used == 0 && have == 1 << 16) { /* no line is that long */
			err = -EINVAL;
			break;
		}
		memmove(buf, buf + used, have - used);
		have -= used;
		base += used;
	}
out:
	free(buf);
	if (err)
		return err;
	char *pool = k->pool_len ? realloc(k->pool, k->pool_len) : NULL;
	if (pool) /* the doubling left up to half of it unused */
		k->pool = pool, k->pool_cap = k->pool_len;
	k->hidden = !r.any_nonzero;
	/* The kernel's own come sorted, modules' may not. */
	if (!k->hidden && !r.sorted)
		qsort(k->v, k->n, sizeof(*k->v), cmp_ksym);
	return 0;
}

/* The symbols read (K->v, sorted) into the entries kept (K->e): 0 or
 * -ENOMEM.  In place, so that the peak is K->v's own: entry I (8 bytes at
 * 8I) is written once symbol I is read, and never reaches the unread
 * symbols after it (16 bytes each, from 16(I+1)); then trimmed to fit. */
static int keep_entries(struct hwc__kallsyms *k)
{
	char *buf = (char *)k->v;
	k->v = NULL;
	k->e = (struct kentry *)buf; /* freed as the entries from here on */
	size_t cap = 0, mcap = 0;
	for (size_t i = 0; i < k->n; i++) {
		struct ksym v;
		memcpy(&v, buf + i * sizeof(v), sizeof(v));
		uint32_t high = (uint32_t)(v.addr >> 32);
		if (!k->nruns || k->runs[k->nruns - 1].high != high) {
			if (!grow((void **)&k->runs, &cap, k->nruns + 1, sizeof(*k->runs), 4))
				return -ENOMEM;
			k->runs[k->nruns++] = (struct krun){high, i};
		}
		if (!k->nmruns || k->mruns[k->nmruns - 1].module != v.module) {
			if (!grow((void **)&k->mruns, &mcap, k->nmruns + 1, sizeof(*k->mruns), 64))
				return -ENOMEM;
			k->mruns[k->nmruns++] = (struct kmrun){v.module, i};
		}
		struct kentry e = {(uint32_t)v.addr, v.name};
		memcpy(buf + i * sizeof(e), &e, sizeof(e));
	}
	struct kentry *fit = realloc(buf, k->n * sizeof(*k->e));
	if (fit)
		k->e = fit;
	return 0;
}

/* /proc/kallsyms, its names copied: 0 or -errno. */
static int read_proc(struct hwc__kallsyms *k)
{
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = read_lines(k, fd, true);
	close(fd);
	return err;
}

/* Does the cached copy FD begin as /proc/kallsyms does?  Its first lines
 * cost the kernel next to nothing to write, and they give the kernel's
 * own addresses: the same boot (KASLR moves them on every boot) or none. */
static bool same_start(int fd)
{
	char live[4096], cached[4096];
	int pfd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (pfd < 0)
		return false;
	ssize_t n = read(pfd, live, sizeof(live));
	close(pfd);
	return n > 0 && pread(fd, cached, (size_t)n, 0) == n && memcmp(live, cached, (size_t)n) == 0;
}

/* Not a module: where kallsyms puts BPF programs and trampolines. */
static bool pseudo_module(const char *name)
{
	return strcmp(name, "bpf") == 0 || strncmp(name, "__builtin__", 11) == 0;
}

/* Are the modules K names those loaded now, each of its symbols within its
 * module's text as loaded (/proc/modules: name, size, address)? */
static bool same_modules(const struct hwc__kallsyms *k)
{
	struct loaded {
		char name[64];
		unsigned long long size, addr;
		bool seen;
	} *mods = NULL;
	size_t n = 0, cap = 0;
	bool ok = true;
	FILE *f = fopen("/proc/modules", "re");
	if (!f && errno != ENOENT) /* none: a kernel without loadable modules */
		return false;
	char line[512];
	while (ok && f && fgets(line, sizeof(line), f)) {
		ok = grow((void **)&mods, &cap, n + 1, sizeof(*mods), 64);
		struct loaded *m = ok ? &mods[n++] : NULL;
		ok = ok && sscanf(line, "%63s %llu %*s %*s %*s %llx", m->name, &m->size, &m->addr) == 3 &&
		     m->addr != 0; /* 0: addresses hidden from us */
		if (m)
			m->seen = false;
	}
	if (f)
		fclose(f);
	/* Each module of the copy: 0 a pseudo-module, else 1 + the loaded one. */
	size_t *which = ok ? calloc(k->nmodules + 1, sizeof(*which)) : NULL;
	ok = ok && which;
	for (size_t i = 0; ok && i < k->nmodules; i++) {
		char buf[80];
		const char *name = text_at(k, k->modules[i].name, k->modules[i].len, buf, sizeof(buf));
		ok = name != NULL;
		if (!ok || pseudo_module(name))
			continue;
		ok = false;
		for (size_t j = 0; !ok && j < n; j++)
			if (strcmp(mods[j].name, name) == 0)
				which[i + 1] = j + 1, ok = true;
	}
	for (size_t i = 0; ok && i < k->n; i++) {
		size_t w = which[k->v[i].module];
		if (!w)
			continue;
		struct loaded *m = &mods[w - 1];
		ok = k->v[i].addr >= m->addr && k->v[i].addr - m->addr < m->size;
		m->seen = true;
	}
	for (size_t j = 0; ok && j < n; j++)
		ok = mods[j].seen;
	free(which);
	free(mods);
	return ok;
}

/* perf's copy of /proc/kallsyms in its build-id cache,
 * $HOME/.debug/[kernel.kallsyms]/BUILDID/kallsyms (perf record writes
 * it): reading it spares the kernel formatting every line of
 * /proc/kallsyms, most of a system-wide report's time, and its names stay
 * in the file.  Taken only when it is the running kernel's: named by the
 * running kernel's build-id, beginning as /proc/kallsyms does (the same
 * addresses), with the modules loaded now where they are loaded.  BPF
 * programs and trampolines come and go without a trace: their names are as
 * they were when it was written. */
static bool read_cache(struct hwc__kallsyms *k)
{
	uint8_t id[20];
	int n = hwc__kernel_build_id(id, sizeof(id));
	char path[4096];
	if (n <= 0 ||
	    hwc__cache_path(path, sizeof(path), "[kernel.kallsyms]", id, (size_t)n, "kallsyms"))
		return false;
	int fd = hwc__open_regular(path);
	if (fd < 0)
		return false;
	k->fd = fd; /* where text_at() reads the names */
	if (same_start(fd) && read_lines(k, fd, false) == 0 && !k->hidden && same_modules(k))
		return true;
	close(fd);
	free(k->v);
	free(k->modules);
	*k = (struct hwc__kallsyms){.fd = -1};
	return false;
}

static int same_start_of(int fd, void *arg)
{
	(void)arg;
	return same_start(fd);
}

/* Does this beginning of kallsyms show an address that is not 0?  A reader
 * not allowed to see them gets only zeros. */
static bool shows_addresses(const char *text, size_t len)
{
	bool in_address = true;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n')
			in_address = true;
		else if (text[i] == ' ')
			in_address = false;
		else if (in_address && text[i] != '0')
			return true;
	}
	return false;
}

/* Copy /proc/kallsyms (its descriptor ARG) to F as it comes. */
static int copy_kallsyms(FILE *f, void *arg)
{
	int fd = *(int *)arg;
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, f); /* an error is the commit's */
	return n < 0 ? -errno : 0;
}

HWC_EXPORT int hwc_symbols_save_kallsyms(char *path, size_t size)
{
	hwc__clear_error();
	uint8_t id[20];
	int n = hwc__kernel_build_id(id, sizeof(id));
	if (n <= 0)
		return hwc__fail(n < 0 ? n : -ENOENT, "the running kernel has no build-id");
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hwc__fail(-errno, "/proc/kallsyms: %s", strerror(errno));
	char head[4096];
	ssize_t len = pread(fd, head, sizeof(head), 0);
	int err = len < 0 ? hwc__fail(-errno, "/proc/kallsyms: %s", strerror(errno))
		  : !shows_addresses(head, (size_t)len)
		      ? hwc__fail(-EPERM, "/proc/kallsyms hides its addresses from this user: "
					  "a copy would name nothing")
		      : hwc__cache_save("[kernel.kallsyms]", id, (size_t)n, "kallsyms",
					HWC_OUTPUT_PRIVATE, same_start_of, copy_kallsyms, &fd, path, size);
	close(fd);
	return err;
}

/* The kernel's text symbols: from the cached copy, else from /proc/kallsyms. */
static struct hwc__kallsyms *read_kallsyms(void)
{
	struct hwc__kallsyms *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->fd = -1;
	if (!read_cache(k))
		k->err = read_proc(k);
	if (k->n && !k->hidden && (k->err = keep_entries(k)))
		k->n = 0;
	return k;
}

/* Entry I's address. */
static uint64_t entry_addr(const struct hwc__kallsyms *k, size_t i)
{
	size_t r = k->nruns - 1;
	while (k->runs[r].first > i)
		r--;
	return (uint64_t)k->runs[r].high << 32 | k->e[i].addr;
}

/* Entry I's module: 0, or 1 + its index in modules. */
static uint16_t entry_module(const struct hwc__kallsyms *k, size_t i)
{
	size_t lo = 0, hi = k->nmruns; /* the first run after I's */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->mruns[mid].first <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return k->mruns[lo - 1].module;
}

/* How many entries begin at or below ADDR. */
static size_t at_or_below(const struct hwc__kallsyms *k, uint64_t addr)
{
	size_t r = k->nruns;
	while (r > 0 && k->runs[r - 1].high > addr >> 32)
		r--;
	if (r == 0)
		return 0;
	size_t lo = k->runs[r - 1].first, hi = r < k->nruns ? k->runs[r].first : k->n;
	if (k->runs[r - 1].high < addr >> 32)
		return hi;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->e[mid].addr <= (uint32_t)addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A read of the kernel's symbols on a thread of its own (HWC_SYM_THREAD). */
struct hwc__kallsyms_reader {
	pthread_t thread;
	struct hwc__kallsyms *k;
};

static void *reader_main(void *arg)
{
	struct hwc__kallsyms_reader *rd = arg;
	rd->k = read_kallsyms();
	return NULL;
}

void hwc__kallsyms_prefetch(hwc_symbols *s)
{
	if (s->kallsyms_tried || s->kallsyms_reader)
		return;
	struct hwc__kallsyms_reader *rd = calloc(1, sizeof(*rd));
	if (rd && pthread_create(&rd->thread, NULL, reader_main, rd) == 0)
		s->kallsyms_reader = rd;
	else
		free(rd); /* read on first use instead */
}

/* The prefetched read, once it has ended, or NULL. */
static struct hwc__kallsyms *join_reader(hwc_symbols *s)
{
	struct hwc__kallsyms_reader *rd = s->kallsyms_reader;
	if (!rd)
		return NULL;
	pthread_join(rd->thread, NULL);
	struct hwc__kallsyms *k = rd->k;
	free(rd);
	s->kallsyms_reader = NULL;
	return k;
}

void hwc__kallsyms_forget(hwc_symbols *s)
{
	kallsyms_free(join_reader(s));
	kallsyms_free(s->kallsyms);
	s->kallsyms = NULL;
}

/* Read the kernel's symbols (or take the prefetched read), or say why they
 * cannot be had. */
static void load_kallsyms(hwc_symbols *s)
{
	bool prefetched = s->kallsyms_reader != NULL;
	struct hwc__kallsyms *k = prefetched ? join_reader(s) : read_kallsyms();
	s->kallsyms_tried = true;
	if (k && k->n && !k->hidden) {
		s->kallsyms = k;
		return;
	}
	int err = k ? k->err : -ENOMEM;
	kallsyms_free(k);
	if (err) {
		char buf[256];
		snprintf(buf, sizeof(buf), "cannot read /proc/kallsyms: %s", hwc__open_why(s, err));
		s->kallsyms_why = hwc__intern(s, buf);
		if (!s->kallsyms_why)
			s->kallsyms_why = "cannot read /proc/kallsyms";
	} else {
		s->kallsyms_why = "/proc/kallsyms hides addresses (not root, or kptr_restrict)";
	}
}

static Dwfl *kernel_modules(hwc_symbols *s)
{
	if (s->kmods_tried)
		return s->kmods;
	s->kmods_tried = true;
	/* libdwfl's view of the running kernel's modules: /proc/modules, each
	 * section's address in /sys/module/NAME/sections (so symbols land
	 * where the loader put them), the .ko file found under
	 * /lib/modules/RELEASE (.ko.gz, .ko.xz, .ko.zst too: symbol_kmod.c),
	 * read on first use. */
	Dwfl *d = dwfl_begin(&hwc__dl.kmod_callbacks);
	if (d && (dwfl_linux_kernel_report_modules(d) != 0 || dwfl_report_end(d, NULL, NULL) != 0)) {
		dwfl_end(d);
		d = NULL;
	}
	return s->kmods = d;
}

/* The function of MODULE's .ko containing ADDR: true with its name
 * (libelf's), start and size; false when no .ko was found or no sized
 * function covers ADDR (kallsyms tells then). */
static bool ko_function(hwc_symbols *s, const char *module, uint64_t addr, const char **name,
			uint64_t *start, uint64_t *size)
{
	Dwfl *d = kernel_modules(s);
	Dwfl_Module *m = d ? dwfl_addrmodule(d, addr) : NULL;
	const char *mname = m ? dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL) : NULL;
	if (!mname || strcmp(mname, module) != 0 || !hwc__kmod_usable(s, m))
		return false;
	GElf_Off off;
	GElf_Sym sym;
	const char *n = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
	if (!n || !*n || GELF_ST_TYPE(sym.st_info) != STT_FUNC || off >= sym.st_size)
		return false;
	*name = n;
	*start = addr - off;
	*size = sym.st_size;
	return true;
}

const struct hwc_location *hwc__resolve_kernel(hwc_symbols *s, uint64_t addr)
{
	const struct hwc_location *loc = hwc__map_get(&s->kernel_locs, addr);
	if (loc)
		return loc;
	s->kernel_used = true;
	if (!s->kallsyms_tried)
		load_kallsyms(s);
	const char *dso = s->kernel_dso;
	const struct hwc_symbol *sym = NULL;
	const struct hwc__kallsyms *k = s->kallsyms;
	size_t lo = k ? at_or_below(k, addr) : 0; /* the first symbol above ADDR */
	if (lo > 0) {
		uint64_t start = entry_addr(k, lo - 1);
		uint64_t size = lo < k->n ? entry_addr(k, lo) - start : 4096;
		char buf[1024], mbuf[80];
		const char *name = NULL;
		if (addr - start < size && addr - start < (1u << 20))
			name = name_at(k, k->e[lo - 1].name, buf, sizeof(buf));
		uint16_t which = name ? entry_module(k, lo - 1) : 0;
		const struct kmodule *km = which ? &k->modules[which - 1] : NULL;
		const char *module = km ? text_at(k, km->name, km->len, mbuf, sizeof(mbuf)) : NULL;
		if (module) {
			char m[160];
			snprintf(m, sizeof(m), "[%s]", module);
			dso = hwc__intern(s, m);
			ko_function(s, module, addr, &name, &start, &size);
		}
		if (name)
			sym = hwc__symbol_at(s, &s->kernel_syms, hwc__intern(s, name), dso, start, size,
					     true, true);
	}
	if (!sym)
		sym = hwc__symbol_at(s, &s->kernel_syms, s->unknown, dso, addr, 0, false, true);
	struct hwc_location *l = hwc__new_location(s, sym, addr);
	if (!l)
		return &s->oom_location;
	hwc__map_put(&s->kernel_locs, addr, l);
	return l;
}
