/* Where each CPU sits: socket, die, cluster, core, NUMA node and cache
 * instance, read from sysfs the way perf stat's aggregation modes read it
 * (tools/perf/util/cpumap.c, builtin-stat.c), under hwc__sysfs_root() so
 * that tests describe machines this one is not. */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_CACHE_LEVEL = 4 }; /* perf's MAX_CACHE_LVL */

static int cpu_file_int(int cpu, const char *file, long long *out)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/%s", hwc__sysfs_root(), cpu, file);
	return hwc__read_int_file(path, out);
}

/* The NUMA node with a cpuCPU entry; 0 on a kernel without NUMA. */
static int node_of(int cpu)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/devices/system/node", hwc__sysfs_root());
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int node = -1;
	struct dirent *de;
	while (node < 0 && (de = readdir(d))) {
		char *end;
		if (strncmp(de->d_name, "node", 4) != 0)
			continue;
		long n = strtol(de->d_name + 4, &end, 10);
		if (end == de->d_name + 4 || *end)
			continue;
		char entry[600];
		snprintf(entry, sizeof(entry), "%s/%s/cpu%d", path, de->d_name, cpu);
		if (access(entry, F_OK) == 0)
			node = (int)n;
	}
	closedir(d);
	return node;
}

/* The cache of LEVEL (0: the highest) CPU is in: its level and instance,
 * the first CPU of its shared_cpu_list, which sysfs lists in order. */
static int cache_of(int cpu, int level, struct hwc_cpu_topology *out)
{
	out->cache_level = -1;
	for (int i = 0;; i++) {
		char file[64], list[4096];
		long long lvl;
		snprintf(file, sizeof(file), "cache/index%d/level", i);
		int err = cpu_file_int(cpu, file, &lvl);
		if (err == -ENOENT)
			break;
		if (err)
			return hwc__fail(err, "cannot read CPU %d's %s under %s: %s", cpu, file,
					 hwc__sysfs_root(), strerror(-err));
		if ((level && lvl != level) || (!level && lvl <= out->cache_level))
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
			 hwc__sysfs_root(), cpu, i);
		char *end;
		if ((err = hwc__read_file(path, list, sizeof(list))))
			return hwc__fail(err, "cannot read %s: %s", path, strerror(-err));
		long first = strtol(list, &end, 10);
		out->cache_level = (int)lvl;
		out->cache = end == list ? cpu : (int)first; /* perf: an empty list is the CPU's own */
	}
	if (out->cache_level < 0) {
		if (level)
			return hwc__fail(-ENOENT, "CPU %d has no level %d cache in %s/devices/system/cpu/"
						  "cpu%d/cache", cpu, level, hwc__sysfs_root(), cpu);
		return hwc__fail(-ENOENT, "CPU %d has no cache described in %s/devices/system/cpu/cpu%d/"
					  "cache", cpu, hwc__sysfs_root(), cpu);
	}
	return 0;
}

HWC_EXPORT int hwc_cpu_topology(int cpu, int cache_level, struct hwc_cpu_topology *out)
{
	hwc__clear_error();
	if (cpu < 0 || cache_level < -1 || cache_level > MAX_CACHE_LEVEL)
		return hwc__fail(-EINVAL, "hwc_cpu_topology: CPU %d, cache level %d: the CPU is 0 or "
					  "more, the level -1 (none), 0 (the last) or 1 to %d",
				 cpu, cache_level, MAX_CACHE_LEVEL);
	long long socket, core, die = 0, cluster = -1;
	int err = cpu_file_int(cpu, "topology/physical_package_id", &socket);
	if (!err)
		err = cpu_file_int(cpu, "topology/core_id", &core);
	if (err)
		return hwc__fail(err, "CPU %d has no topology in %s/devices/system/cpu/cpu%d/topology "
				      "(offline, or not a CPU of this machine): %s",
				 cpu, hwc__sysfs_root(), cpu, strerror(-err));
	cpu_file_int(cpu, "topology/die_id", &die);         /* before Linux 5.2 */
	cpu_file_int(cpu, "topology/cluster_id", &cluster); /* before Linux 5.16 */
	*out = (struct hwc_cpu_topology){
		.cpu = cpu, .socket = (int)socket, .die = die < 0 ? 0 : (int)die,
		.cluster = (int)cluster, .core = (int)core, .node = node_of(cpu),
		.cache_level = -1, .cache = -1,
	};
	return cache_level < 0 ? 0 : cache_of(cpu, cache_level, out);
}
