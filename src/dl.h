/* elfutils (libdw, libelf) and libzstd, loaded on first use (dl.c) rather
 * than linked: they and what they bring (liblzma, libbz2, libz) cost every
 * start ~200 page faults and thousands of relocations, and a program that
 * only counts never calls them.  A file that calls them includes this
 * header after the libraries' own: the macros at its end route each call
 * through the loaded library.  Call hwc__load_elfutils() or
 * hwc__load_zstd() (internal.h) first: before, the pointers are NULL.
 * Never installed; tests that call libdw themselves link it and include
 * symbol_internal.h instead. */
#ifndef HWC_DL_H
#define HWC_DL_H

#include "internal.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>
#include <zstd.h>

/* Every function libhwc calls, by library; dl.c resolves them. */
#define HWC__LIBELF_FUNCTIONS(X)                                                         \
	X(elf_version)                                                                   \
	X(elf_begin)                                                                     \
	X(elf_memory)                                                                    \
	X(elf_end)                                                                       \
	X(elf_errmsg)                                                                    \
	X(elf_kind)                                                                      \
	X(elf_getdata)                                                                   \
	X(elf_getphdrnum)                                                                \
	X(elf_getscn)                                                                    \
	X(elf_getshdrstrndx)                                                             \
	X(elf_nextscn)                                                                   \
	X(elf_strptr)                                                                    \
	X(gelf_getdyn)                                                                   \
	X(gelf_getehdr)                                                                  \
	X(gelf_getphdr)                                                                  \
	X(gelf_getrela)                                                                  \
	X(gelf_getshdr)                                                                  \
	X(gelf_getsym)
#define HWC__LIBDW_FUNCTIONS(X)                                                          \
	X(dwelf_elf_gnu_build_id)                                                        \
	X(dwarf_attr)                                                                    \
	X(dwarf_attr_integrate)                                                          \
	X(dwarf_filesrc)                                                                 \
	X(dwarf_formstring)                                                              \
	X(dwarf_formudata)                                                               \
	X(dwarf_getscopes)                                                               \
	X(dwarf_getsrcfiles)                                                             \
	X(dwarf_tag)                                                                     \
	X(dwfl_begin)                                                                    \
	X(dwfl_end)                                                                      \
	X(dwfl_errmsg)                                                                   \
	X(dwfl_report_begin)                                                             \
	X(dwfl_report_elf)                                                               \
	X(dwfl_report_end)                                                               \
	X(dwfl_build_id_find_elf)                                                        \
	X(dwfl_standard_find_debuginfo)                                                  \
	X(dwfl_build_id_find_debuginfo)                                                  \
	X(dwfl_offline_section_address)                                                  \
	X(dwfl_attach_state)                                                             \
	X(dwfl_getthread_frames)                                                         \
	X(dwfl_frame_pc)                                                                 \
	X(dwfl_thread_state_registers)                                                   \
	X(dwfl_thread_state_register_pc)                                                 \
	X(dwfl_line_comp_dir)                                                            \
	X(dwfl_lineinfo)                                                                 \
	X(dwfl_module_addrdie)                                                           \
	X(dwfl_module_addrinfo)                                                          \
	X(dwfl_module_getelf)                                                            \
	X(dwfl_module_getsrc)                                                            \
	X(dwfl_module_getsym_info)                                                       \
	X(dwfl_module_getsymtab)                                                         \
	X(dwfl_module_getsymtab_first_global)                                            \
	X(dwfl_addrmodule)                                                               \
	X(dwfl_module_info)                                                              \
	X(dwfl_linux_kernel_report_modules)                                              \
	X(dwfl_linux_kernel_find_elf)                                                    \
	X(dwfl_linux_kernel_module_section_address)
#define HWC__LIBZSTD_FUNCTIONS(X)                                                        \
	X(ZSTD_isError)                                                                  \
	X(ZSTD_getErrorName)                                                             \
	X(ZSTD_maxCLevel)                                                                \
	X(ZSTD_createCStream)                                                            \
	X(ZSTD_freeCStream)                                                              \
	X(ZSTD_CCtx_setParameter)                                                        \
	X(ZSTD_compressStream2)                                                          \
	X(ZSTD_createDStream)                                                            \
	X(ZSTD_freeDStream)                                                              \
	X(ZSTD_DCtx_reset)                                                               \
	X(ZSTD_decompressStream)

#define HWC__DL_POINTER(f) __typeof__(f) *f;
struct hwc__dl {
	HWC__LIBELF_FUNCTIONS(HWC__DL_POINTER)
	HWC__LIBDW_FUNCTIONS(HWC__DL_POINTER)
	HWC__LIBZSTD_FUNCTIONS(HWC__DL_POINTER)
	/* libdwfl's standard callbacks: find files by build-id, debug info in
	 * the usual places, ET_REL sections laid out as for an offline module. */
	Dwfl_Callbacks dwfl_callbacks;
	/* The running kernel's modules: their .ko files under
	 * /lib/modules/RELEASE, sections where /sys/module says. */
	Dwfl_Callbacks kmod_callbacks;
};
extern struct hwc__dl hwc__dl;
/* EMFILE or ENFILE when a search for separate debug info found no
 * descriptor to open a candidate with (the search then says only "not
 * found"); the caller clears it before the search. */
extern _Thread_local int hwc__debuginfo_errno;
/* kmod_callbacks' find_elf: libdwfl's, and .ko.zst files (symbol_kmod.c). */
int hwc__kmod_find_elf(Dwfl_Module *mod, void **userdata, const char *module, Dwarf_Addr base,
		       char **file_name, Elf **elfp);

/* From here on, calls go through the loaded libraries (not in dl.c, which
 * names the functions themselves). */
#ifndef HWC__DL_RESOLVER
#define elf_version (*hwc__dl.elf_version)
#define elf_begin (*hwc__dl.elf_begin)
#define elf_memory (*hwc__dl.elf_memory)
#define elf_end (*hwc__dl.elf_end)
#define elf_errmsg (*hwc__dl.elf_errmsg)
#define elf_kind (*hwc__dl.elf_kind)
#define elf_getdata (*hwc__dl.elf_getdata)
#define elf_getphdrnum (*hwc__dl.elf_getphdrnum)
#define elf_getscn (*hwc__dl.elf_getscn)
#define elf_getshdrstrndx (*hwc__dl.elf_getshdrstrndx)
#define elf_nextscn (*hwc__dl.elf_nextscn)
#define elf_strptr (*hwc__dl.elf_strptr)
#define gelf_getdyn (*hwc__dl.gelf_getdyn)
#define gelf_getehdr (*hwc__dl.gelf_getehdr)
#define gelf_getphdr (*hwc__dl.gelf_getphdr)
#define gelf_getrela (*hwc__dl.gelf_getrela)
#define gelf_getshdr (*hwc__dl.gelf_getshdr)
#define gelf_getsym (*hwc__dl.gelf_getsym)
#define dwelf_elf_gnu_build_id (*hwc__dl.dwelf_elf_gnu_build_id)
#define dwarf_attr (*hwc__dl.dwarf_attr)
#define dwarf_attr_integrate (*hwc__dl.dwarf_attr_integrate)
#define dwarf_filesrc (*hwc__dl.dwarf_filesrc)
#define dwarf_formstring (*hwc__dl.dwarf_formstring)
#define dwarf_formudata (*hwc__dl.dwarf_formudata)
#define dwarf_getscopes (*hwc__dl.dwarf_getscopes)
#define dwarf_getsrcfiles (*hwc__dl.dwarf_getsrcfiles)
#define dwarf_tag (*hwc__dl.dwarf_tag)
#define dwfl_begin (*hwc__dl.dwfl_begin)
#define dwfl_end (*hwc__dl.dwfl_end)
#define dwfl_errmsg (*hwc__dl.dwfl_errmsg)
#define dwfl_report_begin (*hwc__dl.dwfl_report_begin)
#define dwfl_report_elf (*hwc__dl.dwfl_report_elf)
#define dwfl_report_end (*hwc__dl.dwfl_report_end)
#define dwfl_attach_state (*hwc__dl.dwfl_attach_state)
#define dwfl_getthread_frames (*hwc__dl.dwfl_getthread_frames)
#define dwfl_frame_pc (*hwc__dl.dwfl_frame_pc)
#define dwfl_thread_state_registers (*hwc__dl.dwfl_thread_state_registers)
#define dwfl_thread_state_register_pc (*hwc__dl.dwfl_thread_state_register_pc)
#define dwfl_line_comp_dir (*hwc__dl.dwfl_line_comp_dir)
#define dwfl_lineinfo (*hwc__dl.dwfl_lineinfo)
#define dwfl_module_addrdie (*hwc__dl.dwfl_module_addrdie)
#define dwfl_module_addrinfo (*hwc__dl.dwfl_module_addrinfo)
#define dwfl_module_getelf (*hwc__dl.dwfl_module_getelf)
#define dwfl_module_getsrc (*hwc__dl.dwfl_module_getsrc)
#define dwfl_module_getsym_info (*hwc__dl.dwfl_module_getsym_info)
#define dwfl_module_getsymtab (*hwc__dl.dwfl_module_getsymtab)
#define dwfl_module_getsymtab_first_global (*hwc__dl.dwfl_module_getsymtab_first_global)
#define dwfl_addrmodule (*hwc__dl.dwfl_addrmodule)
#define dwfl_module_info (*hwc__dl.dwfl_module_info)
#define dwfl_linux_kernel_report_modules (*hwc__dl.dwfl_linux_kernel_report_modules)
#define ZSTD_isError (*hwc__dl.ZSTD_isError)
#define ZSTD_getErrorName (*hwc__dl.ZSTD_getErrorName)
#define ZSTD_maxCLevel (*hwc__dl.ZSTD_maxCLevel)
#define ZSTD_createCStream (*hwc__dl.ZSTD_createCStream)
#define ZSTD_freeCStream (*hwc__dl.ZSTD_freeCStream)
#define ZSTD_CCtx_setParameter (*hwc__dl.ZSTD_CCtx_setParameter)
#define ZSTD_compressStream2 (*hwc__dl.ZSTD_compressStream2)
#define ZSTD_createDStream (*hwc__dl.ZSTD_createDStream)
#define ZSTD_freeDStream (*hwc__dl.ZSTD_freeDStream)
#define ZSTD_DCtx_reset (*hwc__dl.ZSTD_DCtx_reset)
#define ZSTD_decompressStream (*hwc__dl.ZSTD_decompressStream)
#endif

#endif
