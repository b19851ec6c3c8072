/* Build-ids: the GNU build-id note of an ELF file (elfutils), and of the
 * running kernel and its loaded modules from their notes in sysfs. */
#include "dl.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ELF's build-id (ELF NULL: none; ended either way): its length or -ENOENT. */
static int elf_build_id(Elf *elf, uint8_t *id, size_t max)
{
	int n = -ENOENT;
	if (elf) {
		const void *bid;
		ssize_t len = dwelf_elf_gnu_build_id(elf, &bid);
		if (len > 0 && (size_t)len <= max) {
			memcpy(id, bid, (size_t)len);
			n = (int)len;
		}
		elf_end(elf);
	}
	return n;
}

int hwc__build_id(const char *path, uint8_t *id, size_t max)
{
	int err = hwc__load_elfutils();
	if (err)
		return err;
	int fd = hwc__open_regular(path); /* a FIFO named by a mapping must not block */
	if (fd < 0)
		return fd;
	int n = elf_build_id(elf_begin(fd, ELF_C_READ_MMAP, NULL), id, max);
	close(fd);
	return n;
}

/* The build-id among the raw ELF notes in PATH. */
static int notes_build_id(const char *path, uint8_t *id, size_t max)
{
	uint8_t notes[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t len = read(fd, notes, sizeof(notes));
	close(fd);
	if (len < 0)
		return -errno;
	for (size_t off = 0; off + sizeof(Elf64_Nhdr) <= (size_t)len;) {
		Elf64_Nhdr nh;
		memcpy(&nh, notes + off, sizeof(nh));
		size_t name = off + sizeof(nh);
		size_t desc = name + ((nh.n_namesz + 3) & ~3u);
		size_t next = desc + ((nh.n_descsz + 3) & ~3u);
		if (next > (size_t)len)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(notes + name, "GNU", 4) == 0 && nh.n_descsz <= max) {
			memcpy(id, notes + desc, nh.n_descsz);
			return (int)nh.n_descsz;
		}
		off = next;
	}
	return -ENOENT;
}

int hwc__kernel_build_id(uint8_t *id, size_t max)
{
	return notes_build_id("/sys/kernel/notes", id, max);
}

bool hwc__module_name(const char *file, char *name, size_t size)
{
	static const char *const suffixes[] = {".ko", ".ko.gz", ".ko.xz", ".ko.zst"};
	const char *ko = strstr(file, ".ko");
	bool known = false;
	for (size_t i = 0; ko && i < HWC_ARRAY_SIZE(suffixes); i++)
		known |= strcmp(ko, suffixes[i]) == 0;
	if (!known || (size_t)(ko - file) >= size)
		return false;
	for (size_t i = 0; file + i < ko; i++)
		name[i] = file[i] == '-' ? '_' : file[i];
	name[ko - file] = '\0';
	return true;
}

void hwc__module_files(bool (*found)(const char *name, const char *path, void *arg), void *arg)
{
	struct utsname u;
	char dir[sizeof(u.release) + 16];
	if (uname(&u) != 0)
		return;
	snprintf(dir, sizeof(dir), "/lib/modules/%s", u.release);
	char *roots[] = {dir, NULL};
	FTS *fts = fts_open(roots, FTS_PHYSICAL | FTS_NOSTAT, NULL);
	if (!fts)
		return;
	for (FTSENT *e; (e = fts_read(fts));) {
		char name[64];
		if ((e->fts_info == FTS_F || e->fts_info == FTS_NSOK) &&
		    hwc__module_name(e->fts_name, name, sizeof(name)) && found(name, e->fts_path, arg))
			break;
	}
	fts_close(fts);
}

int hwc__module_build_id(const char *module, uint8_t *id, size_t max)
{
	char path[256];
	if ((size_t)snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id", module) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	return notes_build_id(path, id, max);
}

int hwc__vdso_image(const uint8_t **image, size_t *size)
{
	/* Every process of one kernel maps the same image: ours. */
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return -ENOENT;
	/* Its size (it is of our own ELF class): the end of what its program
	 * and section headers cover. */
	size_t end = 0;
	ElfW(Ehdr) eh;
	memcpy(&eh, base, sizeof(eh));
	for (unsigned i = 0; i < eh.e_phnum && i < 64; i++) {
		ElfW(Phdr) ph;
		memcpy(&ph, base + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > end)
			end = ph.p_offset + ph.p_filesz;
	}
	if (eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize > end)
		end = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	if (end == 0 || end > (1u << 20))
		return -ENOEXEC;
	/* The kernel maps it in whole pages, which perf's copy holds. */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	*image = base;
	*size = (end + page - 1) / page * page;
	return 0;
}

int hwc__vdso_build_id(uint8_t *id, size_t max)
{
	const uint8_t *image;
	size_t size;
	int err = hwc__load_elfutils();
	if (!err)
		err = hwc__vdso_image(&image, &size);
	if (err)
		return err;
	return elf_build_id(elf_memory((char *)image, size), id, max);
}
