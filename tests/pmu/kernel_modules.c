/* Kernel module symbols in the emulated machine, whose Debian kernel loads
 * modules: sha3_generic (scripts/pmu-vm --module sha3_generic puts its .ko
 * under /lib/modules/RELEASE) is loaded, and each function of its .text
 * is resolved with hwc_symbols_resolve().  The oracle is the .ko's own
 * symbol table (what nm -S prints) placed at the address the kernel gives
 * .text in /sys/module/sha3_generic/sections, checked against
 * /proc/kallsyms: with the .ko, plain or compressed as distributions ship
 * it (.ko.gz, .ko.xz, .ko.zst, made here with zlib, liblzma and libzstd),
 * each function is named, in "[sha3_generic]", with its size from the .ko;
 * without it, or with a file that is truncated, of no known format or of
 * another build (its build-id), from /proc/kallsyms alone, up to the next
 * kallsyms symbol, the file passed over told by hwc_symbols_problems(). */
#include "pmu.h"

#include <fcntl.h>
#include <gelf.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#include <hwc/hwc.h>
#include <hwc/symbol.h>
#include <sys/stat.h>
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

/* One problem hwc_symbols_problems() told: the module's file. */
struct told {
	size_t n;
	char why[1024];
};

static void tell(const char *dso, const char *why, void *arg)
{
	struct told *t = arg;
	if (strcmp(dso, "[" MODULE "]") == 0 && t->n++ == 0)
		snprintf(t->why, sizeof(t->why), "%s", why);
}

/* Every function's first, middle and last byte: named, in [MODULE], with
 * the size the .ko gives (FROM_KO) or kallsyms does; a module file passed
 * over is told as a problem whose text holds PROBLEM (NULL: none is). */
static void check_functions(bool from_ko, const char *problem)
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
	struct told t = {0};
	hwc_symbols_problems(s, tell, &t);
	printf("problems: %zu%s%s\n", t.n, t.n ? ": " : "", t.why);
	CHECK_INT(t.n, ==, problem ? 1 : 0);
	if (problem)
		CHECK_STR_CONTAINS(t.why, problem);
	hwc_symbols_free(s);
}

static void test_from_ko(void)
{
	check_functions(true, NULL);
}

/* The .ko's bytes, read whole. */
static uint8_t *ko_bytes(size_t *n)
{
	struct stat st;
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	uint8_t *b = fd >= 0 && fstat(fd, &st) == 0 ? malloc((size_t)st.st_size) : NULL;
	if (!b || read(fd, b, (size_t)st.st_size) != st.st_size) {
		fprintf(stderr, "cannot read %s: %s\n", ko, strerror(errno));
		exit(1);
	}
	close(fd);
	*n = (size_t)st.st_size;
	return b;
}

/* Compressed as the kernel's build makes them (scripts/Makefile.modinst):
 * gzip -9, xz --check=crc32, zstd; into OUT (CAP bytes): their size. */
static size_t compress_as(const char *suffix, const uint8_t *in, size_t n, uint8_t *out,
			  size_t cap)
{
	if (strcmp(suffix, ".gz") == 0) {
		z_stream z = {0};
		CHECK_INT(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), ==,
			  Z_OK);
		z.next_in = (uint8_t *)in, z.avail_in = (uInt)n;
		z.next_out = out, z.avail_out = (uInt)cap;
		CHECK_INT(deflate(&z, Z_FINISH), ==, Z_STREAM_END);
		deflateEnd(&z);
		return z.total_out;
	}
	if (strcmp(suffix, ".xz") == 0) {
		size_t pos = 0;
		CHECK_INT(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC32, NULL, in, n, out, &pos, cap), ==,
			  LZMA_OK);
		return pos;
	}
	size_t len = ZSTD_compress(out, cap, in, n, 19);
	CHECK(!ZSTD_isError(len));
	return ZSTD_isError(len) ? 0 : len;
}

static void write_file(const char *path, const uint8_t *b, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && write(fd, b, n) == (ssize_t)n);
	if (fd >= 0)
		close(fd);
}

/* With the .ko out of sight (its name no longer ends in .ko), MODULE.ko
 * SUFFIX holds BYTES (N of them): check_functions(FROM_KO, PROBLEM). */
static void with_file(const char *suffix, const uint8_t *b, size_t n, bool from_ko,
		      const char *problem)
{
	char hidden[600], path[600];
	snprintf(hidden, sizeof(hidden), "%s.hidden", ko);
	snprintf(path, sizeof(path), "%s%s", ko, suffix);
	printf("%s: %zu bytes\n", path, n);
	CHECK_INT(rename(ko, hidden), ==, 0);
	if (n)
		write_file(path, b, n);
	check_functions(from_ko, problem);
	if (n)
		CHECK_INT(unlink(path), ==, 0);
	CHECK_INT(rename(hidden, ko), ==, 0);
}

/* Out of libdwfl's sight: named from /proc/kallsyms alone. */
static void test_from_kallsyms(void)
{
	with_file("", NULL, 0, false, NULL);
}

static const char *const compressions[] = {".gz", ".xz", ".zst"};

/* As distributions ship them: MODULE.ko.gz, .ko.xz, .ko.zst, each named
 * from the file, as the plain .ko is (Debian 12's elfutils, 0.188, has no
 * zstd: hwc decompresses .ko.zst itself). */
static void test_from_compressed_ko(void)
{
	size_t n;
	uint8_t *b = ko_bytes(&n), *z = malloc(2 * n + 4096);
	for (size_t i = 0; i < sizeof(compressions) / sizeof(*compressions); i++)
		with_file(compressions[i], z, compress_as(compressions[i], b, n, z, 2 * n + 4096),
			  true, NULL);
	free(z);
	free(b);
}

/* Cut in half, plain and compressed: a warning that names the file, and
 * the names of /proc/kallsyms; so is a file of no known format. */
static void test_truncated_ko(void)
{
	size_t n;
	uint8_t *b = ko_bytes(&n), *z = malloc(2 * n + 4096);
	char want[600];
	snprintf(want, sizeof(want), "%s: ", ko);
	with_file("", b, n / 2, false, want); /* its section headers, at the end, are gone */
	for (size_t i = 0; i < sizeof(compressions) / sizeof(*compressions); i++) {
		size_t len = compress_as(compressions[i], b, n, z, 2 * n + 4096);
		snprintf(want, sizeof(want), "%s%s: ", ko, compressions[i]);
		with_file(compressions[i], z, len / 2, false, want);
	}
	static const char junk[] = "no module, no compressed data either\n";
	snprintf(want, sizeof(want), "%s.zst: ", ko);
	with_file(".zst", (const uint8_t *)junk, sizeof(junk) - 1, false, want);
	free(z);
	free(b);
}

/* Another build of the module (its build-id changed): passed over, as perf
 * does, plain and compressed, with a warning. */
static void test_other_build(void)
{
	uint8_t note[64];
	int fd = open("/sys/module/" MODULE "/notes/.note.gnu.build-id", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, note, sizeof(note)) : -1;
	if (fd >= 0)
		close(fd);
	if (got < 16 + 20) {
		SKIP_SUB("the loaded " MODULE " has no 20-byte build-id note");
		return;
	}
	size_t n;
	uint8_t *b = ko_bytes(&n), *z = malloc(2 * n + 4096);
	uint8_t *at = memmem(b, n, note + 16, 20); /* after the note's header and "GNU" */
	CHECK(at != NULL);
	if (at) {
		at[0] ^= 0xff;
		char want[600];
		snprintf(want, sizeof(want), "%s: another build", ko);
		with_file("", b, n, false, want);
		size_t len = compress_as(".zst", b, n, z, 2 * n + 4096);
		snprintf(want, sizeof(want), "%s.zst: another build", ko);
		with_file(".zst", z, len, false, want);
	}
	free(z);
	free(b);
}

int main(int argc, char **argv)
{
	/* "compress SUFFIX FILE" (.gz, .xz, .zst): FILE's compressed copy
	 * FILE.SUFFIX, for kernel_modules.sh (busybox has no xz nor zstd). */
	if (argc == 4 && strcmp(argv[1], "compress") == 0) {
		if (strcmp(argv[2], ".gz") && strcmp(argv[2], ".xz") && strcmp(argv[2], ".zst"))
			return 2;
		size_t n, len;
		snprintf(ko, sizeof(ko), "%s", argv[3]);
		uint8_t *b = ko_bytes(&n), *z = malloc(2 * n + 4096);
		char out[600];
		snprintf(out, sizeof(out), "%s%s", ko, argv[2]);
		if (z && (len = compress_as(argv[2], b, n, z, 2 * n + 4096)) > 0)
			write_file(out, z, len);
		return check_failures ? 1 : 0;
	}
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
	bool sizes_differ = false;
	for (size_t i = 0; i < nfns; i++) {
		printf("%s: %#" PRIx64 " size %#" PRIx64 " (kallsyms: to %#" PRIx64 ")\n", fns[i].name,
		       fns[i].start, fns[i].size, fns[i].start + fns[i].kallsyms_size);
		sizes_differ |= fns[i].size != fns[i].kallsyms_size;
	}
	/* Else names from the file and from kallsyms would look the same. */
	if (!sizes_differ)
		SKIP("every function of %s has its kallsyms size", ko);
	RUN(test_from_ko);
	RUN(test_from_kallsyms);
	RUN(test_from_compressed_ko);
	RUN(test_truncated_ko);
	RUN(test_other_build);
	return check_failures ? 1 : 0;
}
