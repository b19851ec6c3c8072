/* Touch N fresh pages (default 1000), one write each: N minor page faults.
 * Used by tests to cross-check page-fault counts against perf. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long page = sysconf(_SC_PAGESIZE);
	if (n <= 0) {
		fprintf(stderr, "usage: pagetouch [pages]\n");
		return 2;
	}
	volatile char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* Where transparent huge pages are "always" (Debian's arm64 kernel),
	 * one fault would map 512 pages. */
	madvise((void *)p, (size_t)(n * page), MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		p[i * page] = 1;
	return 0;
}
