/* A workload for symbol versions: glibc's pthread_cond_signal has two
 * versions on x86_64, the default pthread_cond_signal@@GLIBC_2.3.2 and the
 * old pthread_cond_signal@GLIBC_2.2.5 (bound here with .symver); this calls
 * both, on a condition nobody waits for, in a loop, so samples land in
 * them.  Usage: versioned [millions of calls] (default 20). */
#include <pthread.h>
#include <stdlib.h>

#if defined(__x86_64__)
__asm__(".symver old_cond_signal, pthread_cond_signal@GLIBC_2.2.5");
int old_cond_signal(pthread_cond_t *c);
#else
#define old_cond_signal pthread_cond_signal
#endif

int main(int argc, char **argv)
{
	long n = (argc > 1 ? atol(argv[1]) : 20) * 1000000L;
	static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
	for (long i = 0; i < n; i++) {
		pthread_cond_signal(&cond);
		if (i % 4 == 0)
			old_cond_signal(&cond);
	}
	return 0;
}
