/* Libraries loaded on first use (internal.h, dl.h): a command that only
 * counts maps libhwc and libc, not what symbols and compression need. */
#define HWC__DL_RESOLVER
#include "dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
		.find_debuginfo = hwc__dl.dwfl_standard_find_debuginfo,
		.section_address = hwc__dl.dwfl_offline_section_address,
	};
	hwc__dl.kmod_callbacks = (Dwfl_Callbacks){
		.find_elf = hwc__dl.dwfl_linux_kernel_find_elf,
		.find_debuginfo = hwc__dl.dwfl_standard_find_debuginfo,
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
