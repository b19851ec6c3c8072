/* Records for what existed before sampling started, read from /proc: the
 * kernel's text map, and for each process its COMM, the MMAP2 of every
 * executable mapping (device and inode identify the file) and a FORK + COMM
 * per extra thread.  They carry time 0 and sample id 0 (the first event). */
#include "internal.h"
#include "hwc/sample.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_RECORD 8192

struct rbuf {
	uint64_t words[MAX_RECORD / 8];
	size_t len;
};

static void put(struct rbuf *r, const void *p, size_t n)
{
	memcpy((uint8_t *)r->words + r->len, p, n);
	r->len += n;
}

static void put_u32(struct rbuf *r, uint32_t a, uint32_t b)
{
	uint32_t v[2] = {a, b};
	put(r, v, sizeof(v));
}

static void put_u64(struct rbuf *r, uint64_t v)
{
	put(r, &v, sizeof(v));
}

/* A NUL-terminated string padded to 8 bytes; long names are cut. */
static void put_name(struct rbuf *r, const char *s)
{
	size_t n = strnlen(s, 4095) + 1;
	size_t padded = (n + 7) / 8 * 8;
	memset((uint8_t *)r->words + r->len, 0, padded);
	memcpy((uint8_t *)r->words + r->len, s, n - 1);
	r->len += padded;
}

/* Finish with a zeroed sample_id trailer and hand the record to the sink. */
static int emit(const struct hwc__sink *k, struct rbuf *r, uint32_t type, uint16_t misc)
{
	size_t trailer = k->attr ? hwc_sample_id_size(k->attr) : 0;
	memset((uint8_t *)r->words + r->len, 0, trailer);
	r->len += trailer;
	struct perf_event_header h = {type, misc, (uint16_t)r->len};
	memcpy(r->words, &h, sizeof(h));
	return k->write(k->arg, (const struct perf_event_header *)r->words);
}

struct kmodule {
	char name[64];
	uint64_t start, size;
	char *path; /* its .ko file, NULL when not found */
};

struct ko_files {
	struct kmodule *m;
	size_t n;
};

/* A module file: the first one of each loaded module is its.  Not a
 * .ko.zst, which perf neither takes for a module nor reads (it knows .ko,
 * .ko.gz, .ko.xz): perf record names such a module "[NAME]", and so perf
 * report names its samples from kallsyms. */
static bool found_ko_file(const char *name, const char *path, void *arg)
{
	struct ko_files *k = arg;
	size_t len = strlen(path);
	if (len > 4 && strcmp(path + len - 4, ".zst") == 0)
		return false;
	for (size_t i = 0; i < k->n; i++)
		if (!k->m[i].path && strcmp(k->m[i].name, name) == 0)
			k->m[i].path = strdup(path);
	return false;
}

/* A kernel MMAP per loaded module, as perf record gives them: its address
 * and size from /proc/modules, named after its .ko file, else "[NAME]";
 * perf report places module samples by them. */
static int synth_modules(const struct hwc__sink *k)
{
	FILE *f = fopen("/proc/modules", "re");
	if (!f)
		return 0; /* no loadable modules */
	struct kmodule *m = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		struct kmodule one = {0};
		unsigned long long size, start;
		if (sscanf(line, "%63s %llu %*s %*s %*s %llx", one.name, &size, &start) != 3 || !start)
			continue; /* unparsable, or addresses hidden */
		one.start = start;
		one.size = size;
		if ((err = hwc__reserve(&m, &cap, n + 1, sizeof(*m))))
			break;
		m[n++] = one;
	}
	fclose(f);
	if (n)
		hwc__module_files(found_ko_file, &(struct ko_files){m, n});
	for (size_t i = 0; i < n && !err; i++) {
		char bracketed[80];
		snprintf(bracketed, sizeof(bracketed), "[%s]", m[i].name);
		struct rbuf r = {.len = 8};
		put_u32(&r, (uint32_t)-1, 0);
		put_u64(&r, m[i].start);
		put_u64(&r, m[i].size);
		put_u64(&r, 0);
		put_name(&r, m[i].path ? m[i].path : bracketed);
		err = emit(k, &r, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	}
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
	return err;
}

int hwc__synth_kernel_map(const struct hwc__sink *k)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f)
		return 0;
	/* The map starts at _text, as perf's does; arm64 has no _text in
	 * kallsyms, only _stext, which perf takes then (and names the map
	 * after it: "[kernel.kallsyms]_stext"). */
	uint64_t text = 0, stext = 0, etext = 0;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (strcmp(name, "_text") == 0)
			text = addr;
		else if (strcmp(name, "_stext") == 0)
			stext = addr;
		else if (strcmp(name, "_etext") == 0)
			etext = addr;
	}
	fclose(f);
	const char *ref = text ? "[kernel.kallsyms]_text" : "[kernel.kallsyms]_stext";
	if (!text)
		text = stext;
	if (text == 0)
		return 0; /* addresses hidden (kptr_restrict): no kernel map to give */
	struct rbuf r = {.len = 8};
	put_u32(&r, (uint32_t)-1, 0);
	put_u64(&r, text);
	put_u64(&r, etext > text ? etext - text : UINT64_MAX - text);
	put_u64(&r, text);
	put_name(&r, ref);
	int err = emit(k, &r, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	return err ? err : synth_modules(k);
}

static int comm(const struct hwc__sink *k, pid_t pid, pid_t tid)
{
	char path[64], name[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if (hwc__read_file(path, name, sizeof(name)))
		return 0; /* gone */
	struct rbuf r = {.len = 8};
	put_u32(&r, (uint32_t)pid, (uint32_t)tid);
	put_name(&r, name);
	return emit(k, &r, PERF_RECORD_COMM, 0);
}

static int maps(const struct hwc__sink *k, pid_t pid)
{
	char path[64], line[4096 + 256];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	/* Code only, unless the events track data mappings (DWARF unwinding). */
	bool data = k->attr && k->attr->mmap_data;
	int err = 0;
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8];
		int n = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj,
			   &min, &ino, &n) < 7)
			continue;
		char *name = line + n;
		name[strcspn(name, "\n")] = '\0';
		bool exec = strlen(perms) >= 4 && perms[2] == 'x';
		if ((!exec && (!data || name[0] != '/')) || strcmp(name, "[vsyscall]") == 0)
			continue;
		uint32_t prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
				(exec ? PROT_EXEC : 0);
		uint32_t flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		struct rbuf r = {.len = 8};
		put_u32(&r, (uint32_t)pid, (uint32_t)pid);
		put_u64(&r, start);
		put_u64(&r, end - start);
		put_u64(&r, pgoff);
		put_u32(&r, maj, min);
		put_u64(&r, ino);
		put_u64(&r, 0); /* inode generation: unknown */
		put_u32(&r, prot, flags);
		put_name(&r, *name ? name : "//anon");
		err = emit(k, &r, PERF_RECORD_MMAP2,
			   PERF_RECORD_MISC_USER | (exec ? 0 : PERF_RECORD_MISC_MMAP_DATA));
	}
	fclose(f);
	return err;
}

int hwc__synth_process(const struct hwc__sink *k, pid_t pid)
{
	pid_t tgid = hwc__tgid_of(pid);
	if (tgid <= 0)
		return 0; /* gone meanwhile: nothing to describe */
	int err = comm(k, tgid, tgid);
	if (!err)
		err = maps(k, tgid);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	DIR *d = opendir(path);
	struct dirent *de;
	while (!err && d && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		if (tid <= 0 || tid == tgid)
			continue;
		/* A thread shares its process's maps: a FORK from the main thread. */
		struct rbuf r = {.len = 8};
		put_u32(&r, (uint32_t)tgid, (uint32_t)tgid);
		put_u32(&r, (uint32_t)tid, (uint32_t)tgid);
		put_u64(&r, 0);
		err = emit(k, &r, PERF_RECORD_FORK, 0);
		if (!err)
			err = comm(k, tgid, tid);
	}
	if (d)
		closedir(d);
	return err;
}

int hwc__synth_all(const struct hwc__sink *k)
{
	DIR *d = opendir("/proc");
	if (!d)
		return hwc__fail(-errno, "cannot list /proc: %s", strerror(errno));
	int err = 0;
	struct dirent *de;
	while (!err && (de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			err = hwc__synth_process(k, (pid_t)atoi(de->d_name));
	closedir(d);
	/* The idle task (pid 0) has no /proc entry; it is "swapper" as in perf. */
	struct rbuf r = {.len = 8};
	put_u32(&r, 0, 0);
	put_name(&r, "swapper");
	return err ? err : emit(k, &r, PERF_RECORD_COMM, 0);
}

/* The cgroup id perf_event reports (PERF_SAMPLE_CGROUP, PERF_RECORD_CGROUP):
 * the kernfs id the directory's file handle carries, as perf reads it. */
static uint64_t cgroup_id(int dirfd)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = {.fh.handle_bytes = sizeof(uint64_t)};
	int mount_id;
	if (name_to_handle_at(dirfd, "", &h.fh, &mount_id, AT_EMPTY_PATH) < 0)
		return 0;
	return h.id;
}

/* A CGROUP record for directory DIRFD (PATH: relative to the hierarchy's
 * root, "/" for the root), then for each cgroup below it. */
static int cgroup_tree(const struct hwc__sink *k, int dirfd, const char *path, int depth)
{
	struct rbuf r = {.len = 8};
	put_u64(&r, cgroup_id(dirfd));
	put_name(&r, path);
	int err = emit(k, &r, PERF_RECORD_CGROUP, 0);
	int fd = depth < 64 ? dup(dirfd) : -1; /* fdopendir takes it over */
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	struct dirent *de;
	while (!err && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		char sub[4096];
		int n = snprintf(sub, sizeof(sub), "%s%s%s", path, strcmp(path, "/") ? "/" : "",
				 de->d_name);
		int child = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (n > 0 && (size_t)n < sizeof(sub) && child >= 0)
			err = cgroup_tree(k, child, sub, depth + 1);
		if (child >= 0)
			close(child);
	}
	closedir(d);
	return err;
}

int hwc__synth_cgroups(const struct hwc__sink *k, int dirfd)
{
	char root[4096], self[64], path[4096];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", dirfd);
	ssize_t n = readlink(self, path, sizeof(path) - 1);
	if (n < 0 || hwc_cgroup_path("", root, sizeof(root)))
		return 0; /* samples keep their cgroup ids, unnamed */
	path[n] = '\0';
	size_t len = strlen(root);
	const char *rel = strncmp(path, root, len) == 0 ? path + len : path;
	return cgroup_tree(k, dirfd, *rel ? rel : "/", 0);
}
