/* libpmc's start: pmc_init() reads hwpmc's tunables from the environment
 * and hooks fork (a child owns none of its parent's PMCs) and exit (the
 * log is finished). */
#include "pmc_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pmc_tunables pmc__tun = {8, 4, 64, 512, 1000, 1024, 2048};
bool pmc__initialized;
pthread_mutex_t pmc__lock = PTHREAD_MUTEX_INITIALIZER;

/* A tunable from the environment; a bad value is reported as hwpmc's
 * loader does, and the default kept.  This is the one place libpmc prints:
 * FreeBSD's module prints the same warning on the console and pmc_init()
 * still succeeds, so its contract has no error to carry a warning, and
 * pmc_errdetail() describes failures only; stderr is where a user of the
 * real system would see it. */
static void tunable(const char *env, const char *name, int *v, int max, const char *rule)
{
	const char *s = getenv(env);
	if (!s || !*s)
		return;
	char *end;
	long n = strtol(s, &end, 10);
	if (*end || n <= 0 || n > max) {
		fprintf(stderr, "hwpmc: tunable %s=%s %s.\n", name, s, rule);
		return;
	}
	*v = (int)n;
}

static void read_tunables(void)
{
	int depth_max = PMC_CALLCHAIN_DEPTH_MAX;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");
	if (f) {
		int k;
		if (fscanf(f, "%d", &k) == 1 && k > 0 && k < depth_max)
			depth_max = k;
		fclose(f);
	}
	tunable("HWPMC_CALLCHAINDEPTH", "callchaindepth", &pmc__tun.callchaindepth, depth_max,
		"out of range");
	tunable("HWPMC_LOGBUFFERSIZE", "logbuffersize", &pmc__tun.logbuffersize, 1 << 20,
		"must be greater than zero");
	tunable("HWPMC_NBUFFERS", "nlogbuffers", &pmc__tun.nbuffers, 1 << 20,
		"must be greater than zero");
	tunable("HWPMC_NSAMPLES", "nsamples", &pmc__tun.nsamples, 65535, "out of range");
	tunable("HWPMC_MINCOUNT", "mincount", &pmc__tun.mincount, INT32_MAX,
		"must be greater than zero");
	tunable("HWPMC_HASHSIZE", "hashsize", &pmc__tun.hashsize, INT32_MAX,
		"must be greater than zero");
	tunable("HWPMC_MTXPOOLSIZE", "mtxpoolsize", &pmc__tun.mtxpoolsize, INT32_MAX,
		"must be greater than zero");
	/* HWPMC_DEBUGFLAGS (kern.hwpmc.debugflags) selects the trace output of
	 * a debug kernel, which this library has none of: any value is taken. */
}

/* Forget every PMC and the log without touching what the parent owns. */
static void forget_all(void)
{
	for (size_t i = 0; i < PMC__MAX; i++) {
		struct pmc__pmc *p = &pmc__pmcs[i];
		if (!p->used)
			continue;
		/* Closing the child's copies of descriptors is harmless; the
		 * samplers are not stopped (that would stop the parent's). */
		for (size_t k = 0; k < p->nt; k++) {
			hwc_counters_close(p->t[k].c);
			hwc_sampler_close(p->t[k].s);
			if (p->t[k].pidfd >= 0)
				close(p->t[k].pidfd);
		}
		free(p->t);
		hwc_counters_close(p->sys);
		hwc_sampler_close(p->ss);
		pmc__event_free(&p->ev);
		memset(p, 0, sizeof(*p));
	}
	pmc__log_forget();
	pmc__watch_forget();
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&pmc__lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&pmc__lock);
}

/* A child does not own its parent's PMCs or log. */
static void fork_child(void)
{
	forget_all();
	pthread_mutex_unlock(&pmc__lock);
}

/* At exit(3) the log is finished, as hwpmc finishes an owner's log when
 * the owner exits. */
static void at_exit(void)
{
	if (pmc__have_log())
		pmc_close_logfile();
}

PMC_EXPORT int pmc_init(void)
{
	pmc__call();
	if (pmc__initialized)
		return 0;
	if (access("/proc/sys/kernel/perf_event_paranoid", F_OK) != 0)
		return pmc__fail(ENOENT, "this kernel has no performance events "
					 "(/proc/sys/kernel/perf_event_paranoid is missing)");
	read_tunables();
	if (pmc__machine_init())
		return -1;
	static bool hooks;
	if (!hooks) {
		hooks = true;
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		atexit(at_exit);
	}
	pmc__initialized = true;
	return 0;
}
