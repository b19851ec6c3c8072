/* Kernel module symbols in the emulated machine, whose Debian kernel loads
 * modules: sha3_generic (scripts/pmu-vm --module sha3_generic puts its .ko
 * under /lib/modules/RELEASE) is loaded, and each function of its .text
 * is resolved with hwc_symbols_resolve().  The oracle is the .ko's own
 * symbol table (what nm -S prints) placed at the address the kernel gives
 * .text in /sys/module/sha3_generic/sections, checked against
 * /proc/kallsyms: with the .ko (plain or gzip-compressed) each function is
 * named, in "[sha3_generic]", with its size from the .ko; without it, from
 * /proc/kallsyms alone, up to the next kallsyms symbol. */
#include "pmu.h"

#include <fcntl.h>
#include <gelf.h>
#include <hwc/hwc.h>
#include <hwc/symbol.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MODULE "sha3_generic"

struct fn {
	char name[128];
	uint64_t start, size, kallsyms_size;
};
static struct fn fns[64];
static size_t nfns;
static char ko[512];

/* The .text functions of the .ko with their addresses in the kernel. */
static void read_ko(uint64_t text)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		SKIP("cannot open %s: %s", ko, strerror(errno));
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		SKIP("%s: %s", ko, elf_errmsg(-1));
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize && nfns < 64; i++) {
			GElf_Sym sym;
			GElf_Shdr sec;
			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size || !gelf_getshdr(elf_getscn(elf, sym.st_shndx), &sec) ||
			    strcmp(elf_strptr(elf, shstrndx, sec.sh_name), ".text") != 0)
				continue;
			struct fn *f = &fns[nfns++];
			snprintf(f->name, sizeof(f->name), "%s", elf_strptr(elf, sh.sh_link, sym.st_name));
			f->start = text + sym.st_value;
			f->size = sym.st_size;
		}
	}
	elf_end(elf);
	close(fd);
}

/* Each function's kallsyms entry must be where the .ko puts it; its size
 * there runs to the next text symbol. */
static void read_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	CHECK(f != NULL);
	if (!f)
		return;
	char line[512];
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !strchr("tTwW", type))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			addrs = realloc(addrs, cap * sizeof(*addrs));
			if (!addrs)
				SKIP("out of memory");
		}
		addrs[n++] = a;
		if (!strstr(line, "[" MODULE "]"))
			continue;
		for (size_t i = 0; i < nfns; i++)
			if (strcmp(fns[i].name, name) == 0)
				CHECK_U64(fns[i].start, ==, a);
	}
	fclose(f);
	for (size_t i = 0; i < nfns; i++) {
		uint64_t next = UINT64_MAX;
		for (size_t j = 0; j < n; j++)
			if (addrs[j] > fns[i].start && addrs[j] < next)
				next = addrs[j];
		fns[i].kallsyms_size = next - fns[i].start;
	}
	free(addrs);
}

/* Every function's first, middle and last byte: named, in [MODULE], with
 * the size the .ko gives (FROM_KO) or kallsyms does. */
static void check_functions(bool from_ko)
{
	hwc_symbols *s;
	CHECK_OK(hwc_symbols_new(&s, 0));
	for (size_t i = 0; i < nfns; i++) {
		const struct fn *f = &fns[i];
		uint64_t at[] = {f->start, f->start + f->size / 2, f->start + f->size - 1};
		for (size_t j = 0; j < 3; j++) {
			const struct hwc_location *l = hwc_symbols_resolve(s, 0, 0, at[j], true);
			CHECK_STR_EQ(l->sym->name, f->name);
			CHECK_STR_EQ(l->sym->dso, "[" MODULE "]");
			CHECK(l->sym->known && l->sym->kernel);
			CHECK_U64(l->sym->start, ==, f->start);
			CHECK_U64(l->sym->size, ==, from_ko ? f->size : f->kallsyms_size);
		}
	}
	hwc_symbols_free(s);
}

static void test_from_ko(void)
{
	check_functions(true);
}

/* The .ko out of libdwfl's sight: its name no longer ends in .ko. */
static void test_from_kallsyms(void)
{
	char hidden[600];
	snprintf(hidden, sizeof(hidden), "%s.hidden", ko);
	CHECK_INT(rename(ko, hidden), ==, 0);
	check_functions(false);
	CHECK_INT(rename(hidden, ko), ==, 0);
}

/* As distributions ship them: MODULE.ko.gz, which libdwfl decompresses. */
static void test_from_compressed_ko(void)
{
	char hidden[600], cmd[1400];
	snprintf(hidden, sizeof(hidden), "%s.hidden", ko);
	snprintf(cmd, sizeof(cmd), "gzip -c '%s' > '%s.gz'", ko, ko);
	if (system(cmd) != 0) {
		SKIP_SUB("gzip failed");
		return;
	}
	CHECK_INT(rename(ko, hidden), ==, 0);
	check_functions(true);
	CHECK_INT(rename(hidden, ko), ==, 0);
	snprintf(cmd, sizeof(cmd), "%s.gz", ko);
	CHECK_INT(unlink(cmd), ==, 0);
}

int main(void)
{
	if (access("/proc/modules", F_OK) != 0)
		SKIP("this kernel has no loadable modules (no /proc/modules)");
	struct utsname u;
	uname(&u);
	snprintf(ko, sizeof(ko), "/lib/modules/%s/kernel/crypto/" MODULE ".ko", u.release);
	if (access(ko, R_OK) != 0)
		SKIP("no %s (scripts/pmu-vm --module " MODULE " puts it there)", ko);
	if (access("/sys/module/" MODULE, F_OK) != 0) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "insmod %s", ko);
		if (system(cmd) != 0)
			SKIP("insmod %s failed", ko);
	}
	char buf[64];
	FILE *t = fopen("/sys/module/" MODULE "/sections/.text", "re");
	if (!t || !fgets(buf, sizeof(buf), t))
		SKIP("cannot read /sys/module/" MODULE "/sections/.text");
	fclose(t);
	read_ko(strtoull(buf, NULL, 16));
	if (nfns < 3)
		SKIP("%s has %zu sized functions in .text, expected 3 or more", ko, nfns);
	read_kallsyms();
	for (size_t i = 0; i < nfns; i++)
		printf("%s: %#" PRIx64 " size %#" PRIx64 " (kallsyms: to %#" PRIx64 ")\n", fns[i].name,
		       fns[i].start, fns[i].size, fns[i].start + fns[i].kallsyms_size);
	RUN(test_from_ko);
	RUN(test_from_kallsyms);
	RUN(test_from_compressed_ko);
	return check_failures ? 1 : 0;
}
