/* spawn_time N command [args]: run COMMAND N times (its output discarded)
 * and print the median wall time in ms and the median peak RSS in KiB of
 * the command's own process (wait4's ru_maxrss; children not included). */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;
	if (n <= 0) {
		fprintf(stderr, "usage: spawn_time N command [args]\n");
		return 2;
	}
	double *ms = calloc((size_t)n, sizeof(double)), *kb = calloc((size_t)n, sizeof(double));
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (int i = 0; i < n; i++) {
		struct timespec t0, t1;
		pid_t pid;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (posix_spawnp(&pid, argv[2], &fa, NULL, argv + 2, environ)) {
			perror(argv[2]);
			return 1;
		}
		int status;
		struct rusage ru;
		if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "spawn_time: %s failed\n", argv[2]);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms[i] = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
		kb[i] = (double)ru.ru_maxrss;
	}
	qsort(ms, (size_t)n, sizeof(double), cmp);
	qsort(kb, (size_t)n, sizeof(double), cmp);
	printf("%.3f %.0f\n", ms[n / 2], kb[n / 2]);
	return 0;
}
