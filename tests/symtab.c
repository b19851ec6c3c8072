/* The sorted symbol tables of src/symtab.c against libdw itself: for real
 * binaries (this program's libraries, libc with its debuginfo among them,
 * the hwc tool, stripped copies of it and of libhwc, a workload), the table
 * must name exactly what dwfl_module_addrinfo() names (same name, start
 * and size, or nothing for both), or leave the address to libdw when the
 * answer is an assembly label, at every symbol's start, just after it,
 * in its middle, at its end and just before it, and at addresses spread
 * over every allocated section, gaps included.
 *
 * The one test that reaches into libhwc: it includes src/symbol_internal.h
 * and links libhwc.a, because the table is an internal with no public
 * call of its own (hwc_symbols_resolve() is what uses it). */
#include "check.h"
#include "internal.h"
#include "symbol_internal.h"

#include <link.h>

struct addrs {
	uint64_t *v;
	size_t n, cap;
};

static void add(struct addrs *a, uint64_t addr)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 4096;
		a->v = realloc(a->v, a->cap * sizeof(*a->v));
		if (!a->v)
			abort();
	}
	a->v[a->n++] = addr;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* PATH reported to a libdwfl session of its own, *DWFL (NULL: it failed). */
static Dwfl_Module *report(const char *path, Dwfl **dwfl)
{
	*dwfl = dwfl_begin(&callbacks);
	if (!*dwfl)
		return NULL;
	dwfl_report_begin(*dwfl);
	Dwfl_Module *mod = dwfl_report_elf(*dwfl, path, path, -1, 0, false);
	dwfl_report_end(*dwfl, NULL, NULL);
	return mod;
}

/* Compare the table with libdw over PATH; returns how many function
 * symbols it was checked at (their starts). */
static size_t compare(const char *path)
{
	Dwfl *dwfl;
	Dwfl_Module *mod = report(path, &dwfl);
	if (!mod) {
		fprintf(stderr, "%s: %s\n", path, dwfl_errmsg(-1));
		check_failures++;
		dwfl_end(dwfl);
		return 0;
	}
	struct hwc__symtab *t = hwc__symtab_build(mod);
	CHECK(t != NULL);
	if (!t) {
		dwfl_end(dwfl);
		return 0;
	}
	struct addrs a = {0};
	size_t funcs = 0;
	int n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		if (!dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL) ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		funcs += GELF_ST_TYPE(sym.st_info) == STT_FUNC;
		add(&a, value);
		add(&a, value + 1);
		add(&a, value + sym.st_size / 2);
		add(&a, value + sym.st_size);
		add(&a, value - 1);
	}
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		for (uint64_t k = 0; k <= 64; k++)
			add(&a, sh.sh_addr + bias + sh.sh_size * k / 64);
	}
	size_t mismatches = 0, deferred = 0;
	for (size_t i = 0; i < a.n; i++) {
		uint64_t addr = a.v[i], start = 0, size = 0;
		const char *name = NULL;
		int found = hwc__symtab_lookup(t, addr, &name, &start, &size);
		GElf_Off off = 0;
		GElf_Sym esym = {0};
		const char *want = dwfl_module_addrinfo(mod, addr, &off, &esym, NULL, NULL, NULL);
		/* The table leaves labels to libdw, and only labels: where libdw
		 * names a sized symbol, the table must have named it. */
		bool same = found < 0 ? !want || esym.st_size == 0
				      : (found == 1) == (want != NULL) &&
						(!want || (strcmp(name, want) == 0 && start == addr - off &&
							   size == esym.st_size));
		deferred += found < 0;
		if (!same && mismatches++ < 10)
			fprintf(stderr,
				"%s at %#" PRIx64 ": table %d %s %#" PRIx64 "+%" PRIu64
				", libdw %s %#" PRIx64 "+%" PRIu64 "\n",
				path, addr, found, found == 1 ? name : "-", start, size,
				want ? want : "-", want ? addr - off : 0, want ? esym.st_size : 0);
	}
	CHECK_INT(mismatches, ==, 0);
	fprintf(stderr, "%s: %zu addresses (%zu left to libdw), %zu function symbols\n", path, a.n,
		deferred, funcs);
	free(a.v);
	hwc__symtab_free(t);
	dwfl_end(dwfl);
	return funcs;
}

static int each_library(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	size_t *libc_funcs = arg;
	const char *path = info->dlpi_name;
	if (!path || path[0] != '/')
		return 0; /* this program, or the vDSO */
	size_t funcs = compare(path);
	if (strstr(path, "/libc.so"))
		*libc_funcs = funcs;
	return 0;
}

/* Every library this program has loaded: libc (its symbol table comes from
 * its debuginfo when that is installed), libdw, libelf, libz, ld.so. */
static void loaded_libraries(void)
{
	size_t libc_funcs = 0;
	dl_iterate_phdr(each_library, &libc_funcs);
	CHECK_INT(libc_funcs, >, 1000); /* the table was checked where it matters */
}

static const char *build_dir(void)
{
	const char *b = getenv("HWC_BUILD");
	return b ? b : "build";
}

static void hwc_tool_and_workload(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/bin/hwc", build_dir());
	CHECK_INT(compare(path), >, 100);
	snprintf(path, sizeof(path), "%s/workloads/hotspots", build_dir());
	CHECK_INT(compare(path), >=, 4); /* main, g, f1, f2 at least */
}

/* Stripped copies: only .dynsym is left (libhwc's exported functions). */
static void stripped(void)
{
	char dir[] = "/tmp/hwc-symtab-XXXXXX";
	if (!mkdtemp(dir)) {
		fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
		check_failures++;
		return;
	}
	const char *what[][2] = {{"bin/hwc", "hwc"}, {"lib/libhwc.so.0", "libhwc.so.0"}};
	for (size_t i = 0; i < 2; i++) {
		char cmd[8192], out[4200];
		snprintf(out, sizeof(out), "%s/%s", dir, what[i][1]);
		snprintf(cmd, sizeof(cmd), "strip -o '%s' '%s/%s'", out, build_dir(), what[i][0]);
		if (system(cmd) != 0) {
			SKIP_SUB("'%s' failed (binutils' strip): no stripped copy checked",
				cmd);
			continue;
		}
		size_t funcs = compare(out);
		if (i == 1)
			CHECK_INT(funcs, >, 50); /* the exported API */
		unlink(out);
	}
	rmdir(dir);
}

/* The table holds what it answers: a DSO's module (its file's mapping,
 * libdw's tables) is let go once its table is built (symbol_resolve.c),
 * so every answer must be the same after dwfl_end() as before, names
 * and aliases included. */
static void answers_outlive_module(const char *path)
{
	Dwfl *dwfl;
	Dwfl_Module *mod = report(path, &dwfl);
	struct hwc__symtab *t = mod ? hwc__symtab_build(mod) : NULL;
	CHECK(t != NULL);
	struct answer {
		uint64_t addr, start, size;
		char *name, *alias;
	} *v = NULL;
	size_t n = 0;
	int nsyms = t ? dwfl_module_getsymtab(mod) : 0;
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name;
		uint64_t start, size;
		if (!dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL) ||
		    hwc__symtab_lookup(t, value, &name, &start, &size) != 1)
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		if (!v)
			abort();
		v[n++] = (struct answer){value, start, size, strdup(name),
					 strdup(hwc__symtab_alias(t, start, name))};
	}
	dwfl_end(dwfl);
	size_t differ = 0;
	for (size_t i = 0; i < n; i++) {
		const char *name = NULL;
		uint64_t start = 0, size = 0;
		int found = hwc__symtab_lookup(t, v[i].addr, &name, &start, &size);
		const char *alias = found == 1 ? hwc__symtab_alias(t, start, name) : NULL;
		if ((found != 1 || strcmp(name, v[i].name) || start != v[i].start ||
		     size != v[i].size || strcmp(alias, v[i].alias)) &&
		    differ++ < 10)
			fprintf(stderr, "%s at %#" PRIx64 ": %s before dwfl_end, %s after\n", path,
				v[i].addr, v[i].name, found == 1 ? name : "-");
		free(v[i].name);
		free(v[i].alias);
	}
	CHECK_INT(differ, ==, 0);
	CHECK_INT(n, >, 100);
	free(v);
	hwc__symtab_free(t);
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "/libc.so"))
		*(const char **)arg = info->dlpi_name;
	return 0;
}

static void outlives_module(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/bin/hwc", build_dir());
	answers_outlive_module(path);
	const char *libc = NULL; /* its table from its debuginfo, when installed */
	dl_iterate_phdr(find_libc, &libc);
	CHECK(libc != NULL);
	if (libc)
		answers_outlive_module(libc);
}

/* PLT stubs against binutils: every stub objdump labels "NAME@plt" is
 * named so from its first byte to its last.  Stubs objdump can only label
 * "*ABS*+0x...@plt" (IRELATIVE) get a name of ours, also "...@plt".
 * Returns how many stubs were compared. */
static size_t compare_plt(const char *path)
{
	Dwfl *dwfl;
	Dwfl_Module *mod = report(path, &dwfl);
	struct hwc__plt *p = mod ? hwc__plt_build(mod) : NULL;
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", path);
	FILE *f = popen(cmd, "r");
	size_t n = 0;
	char line[1024];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char label[512];
		size_t len;
		if (sscanf(line, "%llx <%511[^>]>:", &addr, label) != 2)
			continue;
		if (strstr(label, "@plt-0x")) {
			/* The lazy PLT's header ("<first@plt-0x10>"): ".plt". */
			uint64_t start = 0, size = 0;
			const char *name = p ? hwc__plt_lookup(p, addr + 6, &start, &size) : NULL;
			CHECK_STR_EQ(name, ".plt");
			CHECK_U64(start, ==, addr);
			continue;
		}
		if ((len = strlen(label)) < 4 || strcmp(label + len - 4, "@plt") != 0)
			continue;
		for (uint64_t at = addr; at < addr + 16; at += 15) {
			uint64_t start = 0, size = 0;
			const char *name = p ? hwc__plt_lookup(p, at, &start, &size) : NULL;
			bool abs = strncmp(label, "*ABS*", 5) == 0;
			bool same = name && start == addr && at < start + size &&
				    (abs ? strstr(name, "@plt") && name[strlen(name) - 4] == '@'
					 : strcmp(name, label) == 0);
			if (!same && n < 1000) {
				fprintf(stderr, "%s at %#llx: objdump %s, hwc %s at %#" PRIx64 "+%" PRIu64 "\n",
					path, (unsigned long long)at, label, name ? name : "-", start, size);
				check_failures++;
			}
			if (at + 15 >= addr + size || !size)
				break; /* .plt.got stubs are 8 bytes */
		}
		n++;
	}
	if (!f || pclose(f) == -1) {
		fprintf(stderr, "note: '%s' failed (binutils' objdump): %s not checked\n", cmd, path);
		n = 0;
	}
	hwc__plt_free(p);
	dwfl_end(dwfl);
	fprintf(stderr, "%s: %zu PLT stubs\n", path, n);
	return n;
}

static void plt_stubs(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/workloads/libmcalls", build_dir());
	CHECK_INT(compare_plt(path), >=, 2); /* fabs, sin and their neighbours */
	snprintf(path, sizeof(path), "%s/bin/hwc", build_dir());
	CHECK_INT(compare_plt(path), >, 50);
	snprintf(path, sizeof(path), "%s/lib/libhwc.so.0", build_dir());
	CHECK_INT(compare_plt(path), >, 20);
	compare_plt("/lib/x86_64-linux-gnu/libc.so.6"); /* IRELATIVE stubs */
}

int main(void)
{
	/* libhwc's symbol tables call libdw through the copy it loads. */
	CHECK_OK(hwc__load_elfutils());
	RUN(loaded_libraries);
	RUN(hwc_tool_and_workload);
	RUN(stripped);
	RUN(outlives_module);
	RUN(plt_stubs);
	return check_failures ? 1 : 0;
}
