/* Libraries loaded on first use (internal.h, dl.h): a command that only
 * counts maps libhwc and libc, not what symbols and compression need. */
#define HWC__DL_RESOLVER
#include "dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hwc__dl_open(const char *soname, const struct hwc__dl_sym *syms, size_t n, void *table,
		 char *why, size_t size)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, size, "%s", dlerror());
		return -ENOTSUP;
	}
	for (size_t i = 0; i < n; i++) {
		void *f = dlsym(h, syms[i].name);
		if (!f) {
			snprintf(why, size, "%s has no %s", soname, syms[i].name);
			/* None of it then: no pointer into an unloaded library. */
			for (size_t k = 0; k < i; k++)
				memset((char *)table + syms[k].offset, 0, sizeof(f));
			dlclose(h);
			return -ENOTSUP;
		}
		/* POSIX's way to store dlsym's answer in a function pointer. */
		memcpy((char *)table + syms[i].offset, &f, sizeof(f));
	}
	return 0;
}

struct hwc__dl hwc__dl;

#define SYM(f) {#f, offsetof(struct hwc__dl, f)},
static const struct hwc__dl_sym libelf_syms[] = {HWC__LIBELF_FUNCTIONS(SYM)};
static const struct hwc__dl_sym libdw_syms[] = {HWC__LIBDW_FUNCTIONS(SYM)};
static const struct hwc__dl_sym libzstd_syms[] = {HWC__LIBZSTD_FUNCTIONS(SYM)};
#undef SYM

int hwc__dl_load_once(pthread_once_t *once, void (*load)(void), const char *why, const char *what,
		      const char *packages)
{
	pthread_once(once, load);
	if (why[0])
		return hwc__fail(-ENOTSUP, "%s, which cannot be loaded: %s (install %s)", what, why,
				 packages);
	return 0;
}

/* Whether NAME exists in one of the places libdwfl's search by name
 * looks for the debug file of a file in DIR (its default path
 * ":.debug:/usr/lib/debug", with the .dwz directories of an alternate
 * file): DIR/NAME (unless OWN_NAME: never the file itself there),
 * DIR/.debug/NAME, DIR/.dwz/NAME, /usr/lib/debug/TAIL/NAME for every tail
 * of DIR, and /usr/lib/debug/.dwz/NAME. */
static bool named_debug_file(const char *dir, const char *name, bool own_name)
{
	char path[PATH_MAX];
	static const char *const subdirs[] = {"", "/.debug", "/.dwz"};
	for (size_t i = own_name; i < HWC_ARRAY_SIZE(subdirs); i++)
		if (snprintf(path, sizeof(path), "%s%s/%s", dir, subdirs[i], name) < (int)sizeof(path) &&
		    access(path, F_OK) == 0)
			return true;
	if (snprintf(path, sizeof(path), "/usr/lib/debug/.dwz/%s", name) < (int)sizeof(path) &&
	    access(path, F_OK) == 0)
		return true;
	for (const char *tail = dir; tail; tail = strchr(tail + 1, '/'))
		if (snprintf(path, sizeof(path), "/usr/lib/debug%s/%s", tail, name) <
			    (int)sizeof(path) &&
		    access(path, F_OK) == 0)
			return true;
	return false;
}

/* Whether libdwfl's search by name could find FILE's debug file LINK (its
 * .gnu_debuglink, or an alternate file; NULL: FILE's name and FILE.debug),
 * FILE taken as named and with its symbolic links resolved. */
static bool debug_file_by_name(const char *file, const char *link)
{
	if (!file)
		return false;
	char *canon = realpath(file, NULL);
	bool found = false;
	for (int i = 0; i < 2 && !found; i++) {
		const char *f = i ? canon : file;
		const char *base = f ? strrchr(f, '/') : NULL;
		if (!base)
			continue;
		char dir[PATH_MAX], made_up[PATH_MAX];
		snprintf(dir, sizeof(dir), "%.*s", (int)(base - f), f);
		snprintf(made_up, sizeof(made_up), "%s.debug", base + 1);
		const char *link_base = link ? strrchr(link, '/') : NULL;
		found = link ? named_debug_file(dir, link, false) ||
				       (link_base && named_debug_file(dir, link_base + 1, false))
			     : named_debug_file(dir, made_up, false) ||
				       named_debug_file(dir, base + 1, true);
	}
	free(canon);
	return found;
}

/* libdwfl's standard search for separate debug info, but without asking
 * debuginfod when no server is configured.  The standard search ends, when
 * nothing was found locally, by asking libdebuginfod, which libdw dlopens
 * then with libcurl, GnuTLS, OpenSSL and Kerberos (7 MB of mappings and
 * their constructors) only to hear that DEBUGINFOD_URLS names no server
 * (it then answers -ENOSYS without even looking at its cache).  So without
 * a server the search by build-id, where Debian's debug packages put their
 * files, runs alone, unless a file the search by name would try exists. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			  const char *file, const char *link, GElf_Word crc, char **debug_file)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	int fd = (urls && urls[0]) || debug_file_by_name(file, link)
			 ? hwc__dl.dwfl_standard_find_debuginfo(mod, userdata, modname, base, file,
								link, crc, debug_file)
			 : hwc__dl.dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file,
								link, crc, debug_file);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE))
		hwc__debuginfo_errno = errno;
	return fd;
}

_Thread_local int hwc__debuginfo_errno;

static pthread_once_t elfutils_once = PTHREAD_ONCE_INIT;
static char elfutils_why[256];

static void elfutils_load(void)
{
	if (hwc__dl_open("libelf.so.1", libelf_syms, HWC_ARRAY_SIZE(libelf_syms), &hwc__dl,
			 elfutils_why, sizeof(elfutils_why)) ||
	    hwc__dl_open("libdw.so.1", libdw_syms, HWC_ARRAY_SIZE(libdw_syms), &hwc__dl,
			 elfutils_why, sizeof(elfutils_why)))
		return;
	hwc__dl.elf_version(EV_CURRENT);
	hwc__dl.dwfl_callbacks = (Dwfl_Callbacks){
		.find_elf = hwc__dl.dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo,
		.section_address = hwc__dl.dwfl_offline_section_address,
	};
	hwc__dl.kmod_callbacks = (Dwfl_Callbacks){
		.find_elf = hwc__kmod_find_elf,
		.find_debuginfo = find_debuginfo,
		.section_address = hwc__dl.dwfl_linux_kernel_module_section_address,
	};
}

int hwc__load_elfutils(void)
{
	return hwc__dl_load_once(&elfutils_once, elfutils_load, elfutils_why,
			 "symbols and build-ids need elfutils (libdw.so.1, libelf.so.1)",
			 "libdw1 and libelf1");
}

static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;
static char zstd_why[256];

static void zstd_load(void)
{
	hwc__dl_open("libzstd.so.1", libzstd_syms, HWC_ARRAY_SIZE(libzstd_syms), &hwc__dl, zstd_why,
		     sizeof(zstd_why));
}

int hwc__load_zstd(void)
{
	return hwc__dl_load_once(&zstd_once, zstd_load, zstd_why,
				 "compressed recordings need libzstd.so.1", "libzstd1");
}
