/* The perf.data header features that describe the machine: host, kernel,
 * CPUs, memory, topology and PMUs, in the layouts perf's tools read. */
#include "internal.h"
#include "perf_file.h"
#include "hwc/perfdata.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int hwc__bytes_put(struct hwc__bytes *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p)
			return hwc__fail(-ENOMEM, "out of memory");
		b->p = p;
		b->cap = cap;
	}
	if (data)
		memcpy(b->p + b->len, data, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
	return 0;
}

int hwc__bytes_u32(struct hwc__bytes *b, uint32_t v)
{
	return hwc__bytes_put(b, &v, sizeof(v));
}

int hwc__bytes_u64(struct hwc__bytes *b, uint64_t v)
{
	return hwc__bytes_put(b, &v, sizeof(v));
}

int hwc__bytes_string(struct hwc__bytes *b, const char *s)
{
	/* u32 length, then the string NUL-padded to that length. */
	size_t n = strlen(s) + 1;
	size_t len = (n + PF_NAME_ALIGN - 1) / PF_NAME_ALIGN * PF_NAME_ALIGN;
	int err = hwc__bytes_u32(b, (uint32_t)len);
	if (!err)
		err = hwc__bytes_put(b, s, n);
	if (!err)
		err = hwc__bytes_put(b, NULL, len - n);
	return err;
}

/* The value of "KEY : value" in /proc/cpuinfo's first processor. */
static bool cpuinfo(const char *key, char *out, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return false;
	char line[1024];
	bool found = false;
	size_t klen = strlen(key);
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) != 0 || (line[klen] != ' ' && line[klen] != '\t' &&
						      line[klen] != ':'))
			continue;
		char *v = strchr(line, ':');
		if (!v)
			continue;
		v++;
		/* Squeeze runs of blanks, as perf does for the CPU description. */
		size_t o = 0;
		bool blank = true;
		for (; *v && *v != '\n' && o + 1 < size; v++) {
			bool sp = *v == ' ' || *v == '\t';
			if (sp && blank)
				continue;
			out[o++] = sp ? ' ' : *v;
			blank = sp;
		}
		while (o > 0 && out[o - 1] == ' ')
			o--;
		out[o] = '\0';
		found = true;
	}
	fclose(f);
	return found;
}

static int cpu_desc(struct hwc__bytes *b)
{
	char desc[512];
	if (!cpuinfo("model name", desc, sizeof(desc)) && !cpuinfo("cpu model", desc, sizeof(desc)) &&
	    !cpuinfo("CPU implementer", desc, sizeof(desc))) {
		struct utsname u;
		uname(&u);
		snprintf(desc, sizeof(desc), "%s", u.machine);
	}
	return hwc__bytes_string(b, desc);
}

static int cpu_id(struct hwc__bytes *b)
{
	char vendor[64], family[32], model[32], stepping[32], id[256], path[256];
	if (cpuinfo("vendor_id", vendor, sizeof(vendor)) &&
	    cpuinfo("cpu family", family, sizeof(family)) && cpuinfo("model", model, sizeof(model)) &&
	    cpuinfo("stepping", stepping, sizeof(stepping))) {
		snprintf(id, sizeof(id), "%s,%s,%s,%s", vendor, family, model, stepping);
		return hwc__bytes_string(b, id);
	}
	/* arm64: perf uses MIDR_EL1 of the first CPU. */
	long long midr;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");
	if (hwc__read_int_file(path, &midr) == 0) {
		snprintf(id, sizeof(id), "0x%016llx", (unsigned long long)midr);
		return hwc__bytes_string(b, id);
	}
	return hwc__bytes_string(b, "unknown");
}

static int total_mem(struct hwc__bytes *b)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
				break;
		fclose(f);
	}
	return hwc__bytes_u64(b, kb); /* perf stores kB despite its documentation */
}

static int topo_string(int cpu, const char *file, char *out, size_t size)
{
	char path[256];
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, file);
	return hwc__read_file(path, out, size);
}

static long topo_int(int cpu, const char *file)
{
	char path[256];
	long long v;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, file);
	return hwc__read_int_file(path, &v) == 0 ? (long)v : -1;
}

/* Distinct sibling lists of FILE over the online CPUs, as a string list. */
static int sibling_lists(struct hwc__bytes *b, const int *cpus, int n, const char *file,
			 const char *older)
{
	char (*list)[256] = calloc((size_t)n, sizeof(*list));
	if (!list)
		return hwc__fail(-ENOMEM, "out of memory");
	uint32_t nr = 0;
	for (int i = 0; i < n; i++) {
		char s[256];
		if (topo_string(cpus[i], file, s, sizeof(s)) && (!older ||
								 topo_string(cpus[i], older, s, sizeof(s))))
			continue;
		bool dup = false;
		for (uint32_t k = 0; k < nr && !dup; k++)
			dup = strcmp(list[k], s) == 0;
		if (!dup)
			snprintf(list[nr++], sizeof(list[0]), "%s", s);
	}
	int err = hwc__bytes_u32(b, nr);
	for (uint32_t k = 0; k < nr && !err; k++)
		err = hwc__bytes_string(b, list[k]);
	free(list);
	return err;
}

static int cpu_topology(struct hwc__bytes *b)
{
	int cpus[4096];
	int n = hwc_online_cpus(cpus, HWC_ARRAY_SIZE(cpus));
	if (n <= 0)
		return n < 0 ? n : -ENOENT;
	if (n > (int)HWC_ARRAY_SIZE(cpus))
		n = (int)HWC_ARRAY_SIZE(cpus);
	long avail = sysconf(_SC_NPROCESSORS_CONF);
	/* Socket siblings, thread siblings, then core and socket ids of every
	 * configured CPU, then die siblings and die ids: perf's version 3. */
	int err = sibling_lists(b, cpus, n, "package_cpus_list", "core_siblings_list");
	if (!err)
		err = sibling_lists(b, cpus, n, "core_cpus_list", "thread_siblings_list");
	for (long c = 0; c < avail && !err; c++) {
		long core = topo_int((int)c, "core_id"), sock = topo_int((int)c, "physical_package_id");
		err = hwc__bytes_u32(b, (uint32_t)core);
		if (!err)
			err = hwc__bytes_u32(b, (uint32_t)sock);
	}
	if (!err)
		err = sibling_lists(b, cpus, n, "die_cpus_list", NULL);
	for (long c = 0; c < avail && !err; c++)
		err = hwc__bytes_u32(b, (uint32_t)topo_int((int)c, "die_id"));
	return err;
}

static int numa_topology(struct hwc__bytes *b)
{
	DIR *d = opendir("/sys/devices/system/node");
	if (!d)
		return -ENOENT;
	int nodes[1024];
	uint32_t nr = 0;
	struct dirent *de;
	while ((de = readdir(d)) && nr < HWC_ARRAY_SIZE(nodes)) {
		int node;
		char extra;
		if (sscanf(de->d_name, "node%d%c", &node, &extra) == 1)
			nodes[nr++] = node;
	}
	closedir(d);
	if (nr == 0)
		return -ENOENT;
	int err = hwc__bytes_u32(b, nr);
	for (uint32_t i = 0; i < nr && !err; i++) {
		char path[256], line[256], cpus[1024] = "";
		unsigned long long total = 0, mfree = 0, v;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", nodes[i]);
		FILE *f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f)) {
			int id;
			if (sscanf(line, "Node %d MemTotal: %llu kB", &id, &v) == 2)
				total = v;
			else if (sscanf(line, "Node %d MemFree: %llu kB", &id, &v) == 2)
				mfree = v;
		}
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", nodes[i]);
		hwc__read_file(path, cpus, sizeof(cpus));
		err = hwc__bytes_u32(b, (uint32_t)nodes[i]);
		if (!err)
			err = hwc__bytes_u64(b, total);
		if (!err)
			err = hwc__bytes_u64(b, mfree);
		if (!err)
			err = hwc__bytes_string(b, cpus);
	}
	return err;
}

static int pmu_mappings(struct hwc__bytes *b)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/bus/event_source/devices", hwc__sysfs_root());
	DIR *d = opendir(dir);
	if (!d)
		return -ENOENT;
	struct hwc__bytes list = {0};
	uint32_t nr = 0;
	int err = 0;
	struct dirent *de;
	while (!err && (de = readdir(d))) {
		char path[1024];
		long long type;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/type", dir, de->d_name);
		if (hwc__read_int_file(path, &type))
			continue;
		err = hwc__bytes_u32(&list, (uint32_t)type);
		if (!err)
			err = hwc__bytes_string(&list, de->d_name);
		nr++;
	}
	closedir(d);
	if (!err)
		err = hwc__bytes_u32(b, nr);
	if (!err)
		err = hwc__bytes_put(b, list.p, list.len);
	free(list.p);
	return err;
}

int hwc__machine_feature(int feat, struct hwc__bytes *b)
{
	struct utsname u;
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	switch (feat) {
	case HWC_FEAT_HOSTNAME:
		return hwc__bytes_string(b, u.nodename);
	case HWC_FEAT_OSRELEASE:
		return hwc__bytes_string(b, u.release);
	case HWC_FEAT_VERSION:
		return hwc__bytes_string(b, "hwc " HWC_VERSION_STRING);
	case HWC_FEAT_ARCH:
		return hwc__bytes_string(b, u.machine);
	case HWC_FEAT_NRCPUS: {
		long online = sysconf(_SC_NPROCESSORS_ONLN), avail = sysconf(_SC_NPROCESSORS_CONF);
		int err = hwc__bytes_u32(b, (uint32_t)avail); /* available first, then online */
		return err ? err : hwc__bytes_u32(b, (uint32_t)online);
	}
	case HWC_FEAT_CPUDESC:
		return cpu_desc(b);
	case HWC_FEAT_CPUID:
		return cpu_id(b);
	case HWC_FEAT_TOTAL_MEM:
		return total_mem(b);
	case HWC_FEAT_CPU_TOPOLOGY:
		return cpu_topology(b);
	case HWC_FEAT_NUMA_TOPOLOGY:
		return numa_topology(b);
	case HWC_FEAT_PMU_MAPPINGS:
		return pmu_mappings(b);
	}
	return -ENOENT;
}
