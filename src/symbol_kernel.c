/* Kernel addresses: the text symbols of /proc/kallsyms, read once, sorted
 * and binary-searched; each address's location cached.  An address in a
 * module is named from the module's .ko file when libdwfl finds it, as
 * perf prefers it: exact sizes where kallsyms only has starts. */
#include "dl.h"
#include "internal.h"
#include "symbol_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hwc__ksym {
	uint64_t addr;
	const char *name, *module;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct hwc__ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* /proc/kallsyms as read: names copied into an arena of their own, and
 * interned only when a sample lands in them. */
struct hwc__kallsyms {
	struct hwc__ksym *ksyms;
	size_t n;
	struct hwc__arena names;
	int err;     /* -errno when it could not be read */
	bool hidden; /* every address 0: kptr_restrict, or not root */
};

/* Text symbols of /proc/kallsyms, sorted; unusable when its addresses are
 * hidden. */
static void read_kallsyms(struct hwc__kallsyms *k)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f) {
		k->err = -errno;
		return;
	}
	char *buf = malloc(1 << 16); /* fewer reads of the kernel's text */
	if (buf)
		setvbuf(f, buf, _IOFBF, 1 << 16);
	char line[512];
	size_t cap = 0;
	bool any_nonzero = false, sorted = true;
	const char *module = NULL; /* the latest module's name: they come in runs */
	/* "ADDR TYPE NAME[\t[MODULE]]", some 100000 lines: parsed by hand, as
	 * sscanf would take as long as the kernel takes to write them. */
	while (fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long long addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		char type = end[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		char *name = end + 3;
		size_t n = strcspn(name, " \t\n");
		const char *mod = "";
		if (name[n] == ' ' || name[n] == '\t') {
			char *m = name + n + 1 + strspn(name + n + 1, " \t");
			size_t len = strcspn(m, "]\n");
			if (*m == '[' && m[len] == ']' && len > 1) {
				m[len] = '\0';
				mod = m + 1;
			}
		}
		name[n] = '\0';
		/* No empty names, nor ARM's mapping symbols ($x, $d: where code or
		 * data starts), which arm64 modules list at their functions'
		 * addresses: perf skips them too. */
		if (!n || name[0] == '$')
			continue;
		if (k->n == cap) {
			cap = cap ? cap * 2 : 65536;
			struct hwc__ksym *p = realloc(k->ksyms, cap * sizeof(*p));
			if (!p)
				break;
			k->ksyms = p;
		}
		if (mod[0] && (!module || strcmp(module, mod) != 0))
			module = hwc__arena_strdup(&k->names, mod);
		const char *copy = hwc__arena_strdup(&k->names, name);
		if (!copy || (mod[0] && !module))
			break;
		any_nonzero |= addr != 0;
		sorted &= !k->n || k->ksyms[k->n - 1].addr <= addr;
		k->ksyms[k->n++] = (struct hwc__ksym){addr, copy, mod[0] ? module : NULL};
	}
	fclose(f);
	free(buf);
	struct hwc__ksym *fit = k->n ? realloc(k->ksyms, k->n * sizeof(*fit)) : NULL;
	if (fit) /* the doubling left up to half of it unused */
		k->ksyms = fit;
	k->hidden = !any_nonzero;
	/* The kernel's own come sorted, modules' may not. */
	if (!k->hidden && !sorted)
		qsort(k->ksyms, k->n, sizeof(*k->ksyms), cmp_ksym);
}

/* A read of /proc/kallsyms on a thread of its own (HWC_SYM_THREAD). */
struct hwc__kallsyms_reader {
	pthread_t thread;
	struct hwc__kallsyms k;
};

static void *reader_main(void *arg)
{
	read_kallsyms(&((struct hwc__kallsyms_reader *)arg)->k);
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

/* The prefetched read, once it has ended (the caller frees it), or NULL. */
static struct hwc__kallsyms_reader *join_reader(hwc_symbols *s)
{
	struct hwc__kallsyms_reader *rd = s->kallsyms_reader;
	if (rd)
		pthread_join(rd->thread, NULL);
	s->kallsyms_reader = NULL;
	return rd;
}

void hwc__kallsyms_forget(hwc_symbols *s)
{
	struct hwc__kallsyms_reader *rd = join_reader(s);
	if (rd) {
		free(rd->k.ksyms);
		hwc__arena_free(&rd->k.names);
		free(rd);
	}
}

/* Read the kernel's symbols (or take the prefetched read), or say why they
 * cannot be had. */
static void load_kallsyms(hwc_symbols *s)
{
	struct hwc__kallsyms k = {0};
	struct hwc__kallsyms_reader *rd = join_reader(s);
	if (rd) {
		k = rd->k;
		free(rd);
	} else {
		read_kallsyms(&k);
	}
	s->kallsyms_tried = true;
	s->ksyms = k.ksyms;
	s->nksyms = k.hidden ? 0 : k.n;
	s->ksym_names = k.names;
	int err = k.err;
	if (s->nksyms)
		return;
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
	 * /lib/modules/RELEASE (.ko.gz, .ko.xz too: libdwfl decompresses),
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
	if (!mname || strcmp(mname, module) != 0)
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
	size_t lo = 0, hi = s->nksyms;
	while (lo < hi) { /* first symbol above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (s->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0) {
		const struct hwc__ksym *k = &s->ksyms[lo - 1];
		uint64_t size = lo < s->nksyms ? s->ksyms[lo].addr - k->addr : 4096;
		if (addr - k->addr < size && addr - k->addr < (1u << 20)) {
			const char *name = k->name;
			uint64_t start = k->addr;
			if (k->module) {
				char m[160];
				snprintf(m, sizeof(m), "[%s]", k->module);
				dso = hwc__intern(s, m);
				ko_function(s, k->module, addr, &name, &start, &size);
			}
			name = hwc__intern(s, name);
			if (name)
				sym = hwc__symbol_at(s, &s->kernel_syms, name, dso, start, size, true, true);
		}
	}
	if (!sym)
		sym = hwc__symbol_at(s, &s->kernel_syms, s->unknown, dso, addr, 0, false, true);
	struct hwc_location *l = hwc__new_location(s, sym, addr);
	if (!l)
		return &s->oom_location;
	hwc__map_put(&s->kernel_locs, addr, l);
	return l;
}
