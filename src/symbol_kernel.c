/* Kernel addresses: the text symbols of /proc/kallsyms, read once, sorted
 * and binary-searched; each address's location cached. */
#include "internal.h"
#include "symbol_internal.h"

#include <errno.h>
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

/* Text symbols of /proc/kallsyms; unusable when its addresses are hidden. */
static void load_kallsyms(hwc_symbols *s)
{
	s->kallsyms_tried = true;
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f) {
		char buf[256];
		snprintf(buf, sizeof(buf), "cannot read /proc/kallsyms: %s", hwc__open_why(s, -errno));
		s->kallsyms_why = hwc__intern(s, buf);
		if (!s->kallsyms_why)
			s->kallsyms_why = "cannot read /proc/kallsyms";
		return;
	}
	char line[512];
	size_t cap = 0;
	bool any_nonzero = false;
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
		const char *module = "";
		if (name[n] == ' ' || name[n] == '\t') {
			char *m = name + n + 1 + strspn(name + n + 1, " \t");
			size_t len = strcspn(m, "]\n");
			if (*m == '[' && m[len] == ']' && len > 1) {
				m[len] = '\0';
				module = m + 1;
			}
		}
		name[n] = '\0';
		if (!n)
			continue;
		if (s->nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			struct hwc__ksym *p = realloc(s->ksyms, cap * sizeof(*p));
			if (!p)
				break;
			s->ksyms = p;
		}
		any_nonzero |= addr != 0;
		s->ksyms[s->nksyms++] = (struct hwc__ksym){
			addr, hwc__intern(s, name), module[0] ? hwc__intern(s, module) : NULL};
	}
	fclose(f);
	if (!any_nonzero) {
		s->nksyms = 0;
		s->kallsyms_why = "/proc/kallsyms hides addresses (not root, or kptr_restrict)";
		return;
	}
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), cmp_ksym);
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
			if (k->module) {
				char m[160];
				snprintf(m, sizeof(m), "[%s]", k->module);
				dso = hwc__intern(s, m);
			}
			sym = hwc__symbol_at(s, &s->kernel_syms, k->name, dso, k->addr, size, true, true);
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
