/* spawn_time N CMD [ARGS] [-- CMD2 [ARGS] ...]: run each command N times,
 * interleaved, one round of all of them after another, so that a loaded
 * machine slows them alike, their output discarded.  Each round runs them
 * in a new order (a fixed pseudo-random sequence): a command that always
 * followed the same one would inherit that one's effect on the caches
 * (after perf, any command starts slower).  One line per command: the
 * median wall time in ms, the median peak RSS in KiB of the command's own
 * process (wait4's ru_maxrss; children not included), and, given two or
 * more commands, the quartiles (25%, 50%, 75%) over the N rounds of its
 * wall time divided by the second command's in the same round. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double quantile(double *v, int n, int q)
{
	qsort(v, (size_t)n, sizeof(double), cmp);
	return v[n * q / 4 < n ? n * q / 4 : n - 1];
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;
	if (n <= 0) {
		fprintf(stderr, "usage: spawn_time N command [args] [-- command [args]]...\n");
		return 2;
	}
	/* The commands: argv of each, split at "--". */
	char **cmd[16];
	int ncmd = 0;
	cmd[ncmd++] = argv + 2;
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			argv[i] = NULL;
			if (ncmd == 16 || i + 1 == argc) {
				fprintf(stderr, "spawn_time: 1 to 16 commands, none empty\n");
				return 2;
			}
			cmd[ncmd++] = argv + i + 1;
		}
	double *ms = calloc((size_t)(n * ncmd), sizeof(double));
	double *kb = calloc((size_t)(n * ncmd), sizeof(double));
	double *ratio = calloc((size_t)n, sizeof(double));
	if (!ms || !kb || !ratio)
		return 1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	int order[16];
	for (int c = 0; c < ncmd; c++)
		order[c] = c;
	srand(1);
	for (int i = 0; i < n; i++) {
		for (int k = ncmd - 1; k > 0; k--) { /* Fisher-Yates */
			int j = rand() % (k + 1), t = order[k];
			order[k] = order[j];
			order[j] = t;
		}
		for (int k = 0; k < ncmd; k++) {
			int c = order[k];
			struct timespec t0, t1;
			pid_t pid;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			if (posix_spawnp(&pid, cmd[c][0], &fa, NULL, cmd[c], environ)) {
				perror(cmd[c][0]);
				return 1;
			}
			int status;
			struct rusage ru;
			if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
				fprintf(stderr, "spawn_time: %s failed\n", cmd[c][0]);
				return 1;
			}
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ms[c * n + i] = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
			kb[c * n + i] = (double)ru.ru_maxrss;
		}
	}
	for (int c = 0; c < ncmd; c++) {
		if (ncmd > 1) {
			for (int i = 0; i < n; i++)
				ratio[i] = ms[c * n + i] / ms[n + i];
			printf("%.3f %.0f %.3f %.3f %.3f\n", quantile(ms + c * n, n, 2),
			       quantile(kb + c * n, n, 2), quantile(ratio, n, 1), quantile(ratio, n, 2),
			       quantile(ratio, n, 3));
		} else {
			printf("%.3f %.0f\n", quantile(ms, n, 2), quantile(kb, n, 2));
		}
	}
	return 0;
}
