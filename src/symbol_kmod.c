/* A loaded kernel module's file, as libdwfl reads it for symbol_kernel.c:
 * found and opened by libdwfl (by build-id, else NAME.ko, .ko.gz, .ko.xz
 * under /lib/modules/RELEASE, the compressed ones decompressed), else
 * NAME.ko.zst, which an elfutils built without zstd (Debian 12's 0.188)
 * neither finds nor reads, decompressed here with libzstd into an
 * anonymous memfd; then taken only when its build-id is the loaded
 * module's, as perf does.  A file that cannot be used is a problem
 * (hwc_symbols_problems) and its module is named from /proc/kallsyms. */
#include "dl.h"
#include "symbol_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A module's file is checked once; libdwfl keeps each module's userdata
 * for us: our hwc_symbols while its file is looked for (the find_elf
 * callback reads it), then one of these two. */
static const char usable, unusable;

static void kmod_problem(hwc_symbols *s, const char *module, const char *file, const char *why)
{
	char dso[80], text[1024];
	snprintf(dso, sizeof(dso), "[%s]", module);
	snprintf(text, sizeof(text), "%s: %s", file, why);
	struct hwc__kmod_problem *p = hwc__arena_alloc(&s->arena, sizeof(*p));
	if (!p || !(p->dso = hwc__intern(s, dso)) || !(p->why = hwc__intern(s, text)))
		return;
	p->next = s->kmod_problems;
	s->kmod_problems = p;
}

struct zst_search {
	const char *module;
	char *path;
};

static bool found_zst(const char *name, const char *path, void *arg)
{
	struct zst_search *z = arg;
	size_t len = strlen(path);
	if (strcmp(name, z->module) != 0 || len < 7 || strcmp(path + len - 7, ".ko.zst") != 0)
		return false;
	z->path = strdup(path);
	return true;
}

/* Decompressed modules larger than this are refused: no module is. */
#define MAX_MODULE_SIZE (1ull << 30)

/* PATH's zstd frame decompressed into an anonymous memfd: its descriptor,
 * or -1 with WHY (SIZE bytes) saying why. */
static int unzstd(const char *path, char *why, size_t size)
{
	if (hwc__load_zstd()) {
		snprintf(why, size, "libzstd.so.1, which decompresses it, cannot be loaded (install "
			 "libzstd1)");
		return -1;
	}
	int in = hwc__open_regular(path);
	if (in < 0) {
		snprintf(why, size, "%s", strerror(-in));
		return -1;
	}
	int out = memfd_create("hwc-module", MFD_CLOEXEC);
	ZSTD_DStream *z = ZSTD_createDStream();
	size_t cap = 128 << 10;
	char *ibuf = malloc(cap), *obuf = malloc(cap);
	uint64_t total = 0;
	size_t left = 0; /* 0: the frame ended */
	why[0] = '\0';
	if (out < 0 || !z || !ibuf || !obuf)
		snprintf(why, size, "cannot decompress: %s", out < 0 ? strerror(errno) : "out of memory");
	for (ssize_t got; !why[0] && (got = read(in, ibuf, cap)) != 0;) {
		if (got < 0) {
			if (errno != EINTR)
				snprintf(why, size, "%s", strerror(errno));
			continue;
		}
		ZSTD_inBuffer ib = {ibuf, (size_t)got, 0};
		bool full = false;
		while (!why[0] && (ib.pos < ib.size || full)) {
			ZSTD_outBuffer ob = {obuf, cap, 0};
			left = ZSTD_decompressStream(z, &ob, &ib);
			if (ZSTD_isError(left))
				snprintf(why, size, "not zstd data, or corrupt: %s", ZSTD_getErrorName(left));
			else if ((total += ob.pos) > MAX_MODULE_SIZE)
				snprintf(why, size, "larger than %llu bytes decompressed", MAX_MODULE_SIZE);
			else if (write(out, obuf, ob.pos) != (ssize_t)ob.pos)
				snprintf(why, size, "cannot decompress into memory: %s", strerror(errno));
			full = ob.pos == ob.size;
		}
	}
	if (!why[0] && (left || !total))
		snprintf(why, size, "truncated: its zstd data ends early");
	if (z)
		ZSTD_freeDStream(z);
	free(ibuf);
	free(obuf);
	close(in);
	if (why[0] && out >= 0) {
		close(out);
		out = -1;
	}
	return out;
}

int hwc__kmod_find_elf(Dwfl_Module *mod, void **userdata, const char *module, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	int fd = hwc__dl.dwfl_linux_kernel_find_elf(mod, userdata, module, base, file_name, elfp);
	if (fd >= 0 || *elfp || *file_name)
		return fd;
	int err = errno;
	struct zst_search z = {module, NULL};
	hwc__module_files(found_zst, &z);
	if (!z.path) {
		errno = err;
		return -1;
	}
	char why[512];
	fd = unzstd(z.path, why, sizeof(why));
	if (fd < 0) {
		if (*userdata) /* hwc__kmod_usable()'s hwc_symbols */
			kmod_problem(*userdata, module, z.path, why);
		free(z.path);
		errno = ENOENT; /* its problem is told: no other */
		return -1;
	}
	*file_name = z.path;
	return fd;
}

/* Is ELF (the module MODULE's FILE) the loaded module's build? */
static bool same_build(hwc_symbols *s, const char *module, const char *file, Elf *elf)
{
	uint8_t loaded[64];
	int n = hwc__module_build_id(module, loaded, sizeof(loaded));
	if (n <= 0)
		return true; /* nothing to check it against (nor does perf) */
	const void *bid;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &bid);
	if (len == n && memcmp(bid, loaded, (size_t)n) == 0)
		return true;
	char why[300], theirs[129], ours[129];
	hwc__hex(theirs, loaded, (size_t)n);
	if (len > 0 && len <= 64) {
		hwc__hex(ours, bid, (size_t)len);
		snprintf(why, sizeof(why), "another build than the loaded module (build-id %s, loaded %s)",
			 ours, theirs);
	} else { /* a file cut short loses its section headers, at its end */
		snprintf(why, sizeof(why), "no build-id to be read (a truncated file?), the loaded "
			 "module's is %s", theirs);
	}
	kmod_problem(s, module, file, why);
	return false;
}

bool hwc__kmod_usable(hwc_symbols *s, Dwfl_Module *m)
{
	void **state;
	const char *module = dwfl_module_info(m, &state, NULL, NULL, NULL, NULL, NULL, NULL);
	if (*state == &usable || *state == &unusable)
		return *state == &usable;
	*state = s; /* hwc__kmod_find_elf's */
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(m, &bias);
	const char *file;
	dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &file, NULL);
	bool ok = false;
	if (elf)
		ok = same_build(s, module, file ? file : "?", elf);
	else if (file) /* found, but unreadable: corrupt, truncated */
		kmod_problem(s, module, file, dwfl_errmsg(-1));
	*state = (void *)(ok ? &usable : &unusable);
	return ok;
}
