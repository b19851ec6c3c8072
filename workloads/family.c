/* A process family for the libpctx and cputrack tests: touch N pages
 * (default 500), do it again in a second thread, then fork a child that
 * execs "pagetouch N" from this program's directory, wait for it, and exit
 * with status 7.  Each step is a distinct event: init_lwp, lwp_create,
 * lwp_exit, fork, exec, exit. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static long pages = 500;

static void *touch(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* Where transparent huge pages are "always" (Debian's arm64 kernel),
	 * one fault would map 512 pages. */
	madvise((void *)p, (size_t)(pages * page), MADV_NOHUGEPAGE);
	for (long i = 0; i < pages; i++)
		p[i * page] = 1;
	munmap((void *)p, (size_t)(pages * page));
	return arg;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (pages = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: family [pages]\n");
		return 2;
	}
	touch(NULL);
	pthread_t th;
	if (pthread_create(&th, NULL, touch, NULL) || pthread_join(th, NULL))
		return 1;
	char self[PATH_MAX], prog[PATH_MAX + 16], arg[32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(prog, sizeof(prog), "%s/pagetouch", self);
	snprintf(arg, sizeof(arg), "%ld", pages);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		execl(prog, "pagetouch", arg, (char *)NULL);
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 1;
	return 7;
}
