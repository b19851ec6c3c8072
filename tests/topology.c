/* hwc_cpu_topology() on sysfs trees written here (HWC_SYSFS_ROOT): what
 * each file says, what an older kernel leaves out (die_id, cluster_id, the
 * node directory), perf's cache instance (the first CPU of
 * shared_cpu_list, the last level for 0), and each error with its detail;
 * then on this machine's own sysfs, against the files read here. */
#include "check.h"

#include <errno.h>
#include <hwc/hwc.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[4096];

/* Write TEXT to ROOT/devices/system/PATH, making its directories. */
static void put(const char *path, const char *text)
{
	char rel[4096];
	snprintf(rel, sizeof(rel), "devices/system/%s", path);
	check_put_line(root, rel, text);
}

static void test_fake_tree(void)
{
	/* CPU 2: socket 1, die 1, cluster 5, core 3; L1 shared with 3, L2 with
	 * 0-3 (listed from 0), L3 with 0-7; NUMA node 1. */
	put("cpu/cpu2/topology/physical_package_id", "1");
	put("cpu/cpu2/topology/die_id", "1");
	put("cpu/cpu2/topology/cluster_id", "5");
	put("cpu/cpu2/topology/core_id", "3");
	put("cpu/cpu2/cache/index0/level", "1");
	put("cpu/cpu2/cache/index0/shared_cpu_list", "2-3");
	put("cpu/cpu2/cache/index1/level", "3");
	put("cpu/cpu2/cache/index1/shared_cpu_list", "0-7");
	put("cpu/cpu2/cache/index2/level", "2");
	put("cpu/cpu2/cache/index2/shared_cpu_list", "0,2-3");
	put("node/node0/cpu0/online", "1");
	put("node/node1/cpu2/online", "1");
	/* CPU 4: a kernel before 5.2: no die_id, no cluster_id, no caches */
	put("cpu/cpu4/topology/physical_package_id", "0");
	put("cpu/cpu4/topology/core_id", "7");

	struct hwc_cpu_topology t;
	CHECK_OK(hwc_cpu_topology(2, -1, &t));
	CHECK_INT(t.cpu, ==, 2);
	CHECK_INT(t.socket, ==, 1);
	CHECK_INT(t.die, ==, 1);
	CHECK_INT(t.cluster, ==, 5);
	CHECK_INT(t.core, ==, 3);
	CHECK_INT(t.node, ==, 1);
	CHECK_INT(t.cache_level, ==, -1);
	CHECK_INT(t.cache, ==, -1);
	CHECK_OK(hwc_cpu_topology(2, 0, &t)); /* the last level: L3, index1 */
	CHECK_INT(t.cache_level, ==, 3);
	CHECK_INT(t.cache, ==, 0);
	CHECK_OK(hwc_cpu_topology(2, 1, &t));
	CHECK_INT(t.cache_level, ==, 1);
	CHECK_INT(t.cache, ==, 2);
	CHECK_OK(hwc_cpu_topology(2, 2, &t));
	CHECK_INT(t.cache_level, ==, 2);
	CHECK_INT(t.cache, ==, 0);

	CHECK_INT(hwc_cpu_topology(2, 4, &t), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "CPU 2 has no level 4 cache");
	CHECK_INT(hwc_cpu_topology(2, 5, &t), ==, -EINVAL);
	CHECK_INT(hwc_cpu_topology(-1, 0, &t), ==, -EINVAL);

	CHECK_OK(hwc_cpu_topology(4, -1, &t));
	CHECK_INT(t.socket, ==, 0);
	CHECK_INT(t.die, ==, 0);
	CHECK_INT(t.cluster, ==, -1);
	CHECK_INT(t.core, ==, 7);
	CHECK_INT(t.node, ==, -1); /* NUMA, but in no node */
	CHECK_INT(hwc_cpu_topology(4, 0, &t), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "CPU 4 has no cache described in");

	CHECK_INT(hwc_cpu_topology(3, -1, &t), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "CPU 3 has no topology in");
	CHECK_STR_CONTAINS(hwc_errdetail(), root);

	/* A kernel without NUMA has no node directory: one node, 0. */
	char node[8192];
	snprintf(node, sizeof(node), "%s/devices/system/node", root);
	remove_tree(node);
	CHECK_OK(hwc_cpu_topology(2, -1, &t));
	CHECK_INT(t.node, ==, 0);
}

static long read_long(const char *fmt, int cpu)
{
	char path[256];
	snprintf(path, sizeof(path), fmt, cpu);
	FILE *f = fopen(path, "r");
	long v = -1;
	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

static void test_this_machine(void)
{
	unsetenv("HWC_SYSFS_ROOT");
	int cpus[4096];
	int n = hwc_online_cpus(cpus, 4096);
	CHECK_INT(n, >, 0);
	for (int i = 0; i < n && i < 4096; i++) {
		struct hwc_cpu_topology t;
		CHECK_OK(hwc_cpu_topology(cpus[i], -1, &t));
		CHECK_INT(t.socket, ==, read_long("/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpus[i]));
		CHECK_INT(t.core, ==, read_long("/sys/devices/system/cpu/cpu%d/topology/core_id", cpus[i]));
		long die = read_long("/sys/devices/system/cpu/cpu%d/topology/die_id", cpus[i]);
		CHECK_INT(t.die, ==, die < 0 ? 0 : die);
	}
}

int main(void)
{
	snprintf(root, sizeof(root), "%s/hwc-topology-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("HWC_SYSFS_ROOT", root, 1);
	RUN(test_fake_tree);
	RUN(test_this_machine);
	remove_tree(root);
	return check_exit();
}
