/* DSOs: the file behind a mapping, found by its recorded build-id (at its
 * path, else in the debug directories), and a libdwfl session of its own
 * with the module reported at bias 0, so module addresses are ELF virtual
 * addresses. */
#include "dl.h"
#include "symbol_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct hwc__dso *hwc__dso_get(hwc_symbols *s, const char *name)
{
	const char *iname = hwc__intern(s, name);
	struct hwc__dso *d = hwc__map_get(&s->dsos, (uint64_t)(uintptr_t)iname);
	if (d)
		return d;
	d = hwc__arena_alloc(&s->arena, sizeof(*d));
	if (!d)
		return NULL;
	d->name = iname;
	d->next = s->dso_list;
	s->dso_list = d;
	hwc__map_put(&s->dsos, (uint64_t)(uintptr_t)iname, d);
	return d;
}

bool hwc__pseudo_file(const char *name)
{
	return name[0] == '[' || strncmp(name, "//anon", 6) == 0 ||
	       strncmp(name, "/memfd:", 7) == 0 || strncmp(name, "anon_inode:", 11) == 0 ||
	       name[0] != '/';
}

void hwc__hex(char *out, const uint8_t *id, size_t len)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = '\0';
}

const char *hwc__open_why(hwc_symbols *s, int err)
{
	if (err != -EMFILE && err != -ENFILE)
		return strerror(-err);
	if (err == -ENFILE)
		return "the system's table of open files is full (sysctl fs.file-max)";
	struct rlimit rl;
	char buf[160];
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return "too many open files: raise the limit with ulimit -n";
	snprintf(buf, sizeof(buf), "too many open files (ulimit -n is %llu): raise the limit with "
				   "ulimit -n",
		 (unsigned long long)rl.rlim_cur);
	const char *why = hwc__intern(s, buf);
	return why ? why : "too many open files: raise the limit with ulimit -n";
}

/* Open PATH as ELF and check its build-id against the recorded one. */
static int try_candidate(hwc_symbols *s, struct hwc__dso *d, const char *path)
{
	/* Only a regular file: a FIFO at a mapping's name must not hang us. */
	int fd = hwc__open_regular(path);
	if (fd < 0)
		return fd;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int err = 0;
	GElf_Ehdr eh;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		err = -ENOEXEC;
		goto out;
	}
	const void *bid;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bid);
	if (d->bidlen && (n != (ssize_t)d->bidlen || memcmp(bid, d->bid, d->bidlen))) {
		err = -ESTALE;
		goto out;
	}
	size_t nph;
	if (elf_getphdrnum(elf, &nph) == 0)
		for (size_t i = 0; i < nph && d->nloads < HWC_ARRAY_SIZE(d->loads); i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				d->loads[d->nloads++] = (struct hwc__load){ph.p_offset, ph.p_vaddr,
									   ph.p_filesz};
		}
	d->et_exec = eh.e_type == ET_EXEC;
	d->path = hwc__intern(s, path);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* Find the DSO's file (by build-id when one was recorded) and report it to
 * a libdwfl session of its own. */
void hwc__dso_load(hwc_symbols *s, struct hwc__dso *d)
{
	d->state = -1;
	char path[4096], rooted[8192];
	int err;
	if (strcmp(d->name, "[vdso]") == 0) {
		/* Its image in the build-id cache: by its recorded build-id, else
		 * the running kernel's (a live session, a recording without one). */
		struct hwc__bid *b = hwc__map_get(&s->buildids, (uint64_t)(uintptr_t)d->name);
		int n = b ? (int)b->len : hwc__vdso_build_id(d->bid, sizeof(d->bid));
		if (b)
			memcpy(d->bid, b->id, b->len);
		if (n <= 0 || hwc__cache_path(path, sizeof(path), "[vdso]", d->bid, (size_t)n, "vdso")) {
			d->why = "no build-id for the vDSO";
			return;
		}
		d->bidlen = (size_t)n;
		err = try_candidate(s, d, path);
		if (err) {
			d->why = "its image is not in the build-id cache ~/.debug/[vdso] (hwc record "
				 "keeps it there)";
			return;
		}
		goto open;
	}
	if (hwc__pseudo_file(d->name)) {
		d->why = "no file backs this mapping";
		return;
	}
	snprintf(path, sizeof(path), "%s", d->name);
	size_t len = strlen(path);
	static const char deleted[] = " (deleted)";
	if (len > sizeof(deleted) - 1 && strcmp(path + len - (sizeof(deleted) - 1), deleted) == 0)
		path[len - (sizeof(deleted) - 1)] = '\0';
	struct hwc__bid *b = hwc__map_get(&s->buildids, (uint64_t)(uintptr_t)hwc__intern(s, path));
	if (!b)
		b = hwc__map_get(&s->buildids, (uint64_t)(uintptr_t)d->name);
	if (b) {
		memcpy(d->bid, b->id, b->len);
		d->bidlen = b->len;
	}
	/* Under hwc_symbols_set_root()'s directory instead of at its path. */
	snprintf(rooted, sizeof(rooted), "%s%s", s->root ? s->root : "", path);
	err = try_candidate(s, d, rooted);
	if (err && d->bidlen) {
		char h[41], cand[4200];
		hwc__hex(h, d->bid, d->bidlen);
		const char *home = getenv("HOME");
		const char *fmts[] = {"/usr/lib/debug/.build-id/%.2s/%s.debug", "%s/.debug/.build-id/%.2s/%s/elf",
				      "%s/.debug/.build-id/%.2s/%s"};
		for (size_t i = 0; i < 3 && err; i++) {
			if (i == 0)
				snprintf(cand, sizeof(cand), fmts[0], h, h + 2);
			else if (home)
				snprintf(cand, sizeof(cand), fmts[i], home, h, h + 2);
			else
				continue;
			int e = try_candidate(s, d, cand);
			if (!e)
				err = 0;
		}
	}
	if (err) {
		d->why = err == -ESTALE ? "its build-id differs from the recorded one"
				       : err == -ENOENT ? "the file no longer exists"
				       : err == -EACCES ? "permission denied"
				       : err == -EINVAL ? "not a regular file"
				       : err == -EMFILE || err == -ENFILE ? hwc__open_why(s, err)
				       : "not a readable ELF file";
		return;
	}
open:
	d->state = 1;
	if (!hwc__dso_module(s, d))
		d->state = -1;
}

Dwfl_Module *hwc__dso_module(hwc_symbols *s, struct hwc__dso *d)
{
	if (d->mod || d->state <= 0)
		return d->mod;
	d->dwfl = dwfl_begin(&hwc__dl.dwfl_callbacks);
	if (!d->dwfl) {
		d->why = "libdwfl failed";
		return NULL;
	}
	dwfl_report_begin(d->dwfl);
	d->mod = dwfl_report_elf(d->dwfl, d->name, d->path, -1, 0, false);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!d->mod) {
		/* libdwfl opens the file again: the limit may hit there. */
		int e = errno;
		d->why = e == EMFILE || e == ENFILE ? hwc__open_why(s, -e) : dwfl_errmsg(-1);
		dwfl_end(d->dwfl);
		d->dwfl = NULL;
	}
	return d->mod;
}

void hwc__dso_release(struct hwc__dso *d)
{
	if (d->dwfl)
		dwfl_end(d->dwfl);
	d->dwfl = NULL;
	d->mod = NULL;
}

/* File offset within the DSO to its ELF virtual address. */
uint64_t hwc__dso_vaddr(const struct hwc__dso *d, uint64_t off)
{
	for (size_t i = 0; i < d->nloads; i++)
		if (off >= d->loads[i].offset && off - d->loads[i].offset < d->loads[i].filesz)
			return off - d->loads[i].offset + d->loads[i].vaddr;
	return off;
}
