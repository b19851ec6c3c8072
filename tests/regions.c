/* Code regions (<hwc/region.h>).  Without arguments: the calls' contract
 * in this process (off without HWC_REGIONS_OUT: nothing opened; errors
 * returned, never fatal).  With "client MODE ...": a program that marks
 * regions, run by tests/regions.py, which checks its report:
 *   client nested PAGES     touches 2*PAGES pages outside any region, then
 *                           3 times: outer { touch { PAGES pages } idle {} }
 *   client threads N PAGES  N threads (ended before exit), each one
 *                           region "work" touching PAGES pages; "main" around
 *   client errors           end without begin, misnesting (twice each), then
 *                           one good region "ok"
 *   client fork             region "parent" around a fork(); the child, where
 *                           regions are off, marks region "child" and exits */
#include "check.h"

#include <hwc/region.h>

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void touch_fresh(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	for (size_t i = 0; i < n; i++)
		((volatile char *)p)[i * page] = 1;
	munmap(p, n * page);
}

static size_t pages_arg;

static void *thread_work(void *arg)
{
	(void)arg;
	if (hwc_region_begin("work") || (touch_fresh(pages_arg), hwc_region_end("work")))
		exit(3);
	return NULL;
}

static int client(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[2], "nested") == 0) {
		size_t pages = strtoul(argv[3], NULL, 10);
		touch_fresh(2 * pages);
		for (int i = 0; i < 3; i++) {
			int err = hwc_region_begin("outer");
			err = err ? err : hwc_region_begin("touch");
			touch_fresh(pages);
			err = err ? err : hwc_region_end("touch");
			err = err ? err : hwc_region_begin("idle");
			err = err ? err : hwc_region_end("idle");
			err = err ? err : hwc_region_end("outer");
			if (err) {
				fprintf(stderr, "regions client: %s\n", strerror(-err));
				return 3;
			}
		}
		return 0;
	}
	if (argc >= 5 && strcmp(argv[2], "threads") == 0) {
		int n = atoi(argv[3]);
		pages_arg = strtoul(argv[4], NULL, 10);
		pthread_t th[64];
		if (n < 1 || n > 64 || hwc_region_begin("main"))
			return 2;
		for (int i = 0; i < n; i++)
			if (pthread_create(&th[i], NULL, thread_work, NULL))
				return 2;
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		return hwc_region_end("main") ? 3 : 0;
	}
	if (argc >= 3 && strcmp(argv[2], "errors") == 0) {
		for (int i = 0; i < 2; i++) {
			if (hwc_region_end("never") != -EINVAL)
				return 3;
			if (hwc_region_begin("a") || hwc_region_begin("b") || hwc_region_end("a") != -EINVAL ||
			    hwc_region_end("b") || hwc_region_end("a"))
				return 3;
		}
		return hwc_region_begin("ok") || hwc_region_end("ok") ? 3 : 0;
	}
	if (argc >= 3 && strcmp(argv[2], "fork") == 0) {
		if (hwc_region_begin("parent"))
			return 3;
		pid_t pid = fork();
		if (pid == 0)
			/* off in the child: even an end without begin returns 0 */
			exit(hwc_region_end("never") || hwc_region_begin("child") || hwc_region_end("child")
				     ? 3 : 0);
		int st = 1;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			return 3;
		return hwc_region_end("parent") ? 3 : 0;
	}
	fprintf(stderr, "usage: regions client nested PAGES | threads N PAGES | errors\n");
	return 2;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* Without HWC_REGIONS_OUT the calls do nothing: no descriptor opened, 0
 * returned, even for calls that would be errors when measuring. */
static void test_off(void)
{
	unsetenv("HWC_REGIONS_OUT");
	int before = count_fds();
	CHECK_INT(hwc_region_begin("a"), ==, 0);
	CHECK_INT(hwc_region_end("a"), ==, 0);
	CHECK_INT(hwc_region_end("never opened"), ==, 0);
	CHECK_INT(count_fds(), ==, before);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "client") == 0)
		return client(argc, argv);
	RUN(test_off);
	return check_exit();
}
