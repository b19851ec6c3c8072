/* What annotating a function needs beyond its symbol: its code, from the
 * same libdwfl module its symbols came from (symbol_dso.c), the source
 * line and (inlined) function of each instruction, and the symbols of the
 * addresses its branches go to. */
#include "dl.h"
#include "symbol_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

/* SYM's DSO, loaded, in *OUT; or -errno with the detail. */
static int loaded_dso(hwc_symbols *s, const struct hwc_symbol *sym, struct hwc__dso **out)
{
	if (sym->kernel)
		return hwc__fail(-ENOTSUP, "%s is a kernel function: hwc reads no kernel image",
				 sym->name);
	struct hwc__dso *d = sym->known ? hwc__map_get(&s->dsos, (uint64_t)(uintptr_t)sym->dso) : NULL;
	if (!d)
		return hwc__fail(-ENOENT, "no known function at %s+%#" PRIx64, sym->dso, sym->start);
	if (d->state == 0)
		hwc__dso_load(s, d);
	if (d->state < 0 || !hwc__dso_module(s, d))
		return hwc__fail(-ENOENT, "%s: %s", d->name, d->why);
	*out = d;
	return 0;
}

HWC_EXPORT int hwc_symbols_code(hwc_symbols *s, const struct hwc_symbol *sym, struct hwc_code *code)
{
	hwc__clear_error();
	struct hwc__dso *d;
	int err = loaded_dso(s, sym, &d);
	if (err)
		return err;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(d->mod, &bias);
	GElf_Ehdr eh;
	if (!elf || !gelf_getehdr(elf, &eh))
		return hwc__fail(-ENOENT, "%s: %s", d->path, elf_errmsg(-1));
	uint64_t start = sym->start - bias;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || start < sh.sh_addr ||
		    start - sh.sh_addr >= sh.sh_size)
			continue;
		if (sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_EXECINSTR))
			return hwc__fail(-ENODATA, "%s: %s holds no code at %#" PRIx64 " (%s)", sym->name,
					 d->path, start, sh.sh_type == SHT_NOBITS ? "a debug file" : "not code");
		if (!sym->size)
			return hwc__fail(-ENODATA, "%s in %s has no size: where it ends is unknown",
					 sym->name, d->path);
		Elf_Data *data = elf_getdata(scn, NULL);
		uint64_t off = start - sh.sh_addr;
		if (!data || !data->d_buf || off >= data->d_size)
			return hwc__fail(-ENODATA, "%s: cannot read the code of %s: %s", d->path,
					 sym->name, elf_errmsg(-1));
		uint64_t size = sym->size < data->d_size - off ? sym->size : data->d_size - off;
		*code = (struct hwc_code){(const uint8_t *)data->d_buf + off, (size_t)size, sym->start,
					  eh.e_machine};
		return 0;
	}
	return hwc__fail(-ENODATA, "%s: no section holds %s at %#" PRIx64, d->path, sym->name, start);
}

HWC_EXPORT const struct hwc_location *hwc_symbols_resolve_in(hwc_symbols *s,
							     const struct hwc_symbol *sym,
							     uint64_t addr)
{
	hwc__clear_error();
	struct hwc__dso *d;
	return loaded_dso(s, sym, &d) ? NULL : hwc__resolve_vaddr(s, d, addr);
}

HWC_EXPORT int hwc_symbols_srcline(hwc_symbols *s, const struct hwc_symbol *sym, uint64_t addr,
				   struct hwc_srcline *out)
{
	hwc__clear_error();
	*out = (struct hwc_srcline){0};
	struct hwc__dso *d;
	int err = loaded_dso(s, sym, &d);
	if (err)
		return err == -ENOTSUP ? -ENOENT : err;
	Dwfl_Line *l = dwfl_module_getsrc(d->mod, addr);
	int line = 0;
	const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	if (!file)
		return hwc__fail(-ENOENT, "%s: no line table covers %#" PRIx64, d->name, addr);
	/* A name relative to the compilation's directory: joined, so it can be opened. */
	const char *dir = file[0] != '/' ? dwfl_line_comp_dir(l) : NULL;
	char joined[4096];
	if (dir && snprintf(joined, sizeof(joined), "%s/%s", dir, file) < (int)sizeof(joined))
		file = joined;
	out->file = hwc__intern(s, file);
	out->line = line > 0 ? (unsigned)line : 0;
	/* The innermost function scope: an inlined subroutine, else the function. */
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(d->mod, addr, &bias);
	Dwarf_Die *scopes = NULL;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		const char *name = hwc__die_name(&scopes[i]);
		if (name)
			out->function = hwc__display_name(s, hwc__intern(s, name));
		break;
	}
	free(scopes);
	return 0;
}
