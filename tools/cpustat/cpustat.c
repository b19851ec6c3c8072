/* cpustat(8): count events on every online CPU with libcpc's
 * cpc_bind_cpu(), one thread per CPU, printing illumos's columns:
 * time, cpu, event, counts; then the totals. */
#include "cpucmds.h"
#include "num.h"
#include "out.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
	bool title, tick, soaker, period;
	char timestamp; /* 0, 'u' or 'd' */
	long msec, rest_msec;
	unsigned long nsamples;
	int nsets;
	struct setgrp *master;
} opt = {.title = true, .msec = 5000, .nsamples = ULONG_MAX};

static cpc_t *cpc;
static atomic_int stopping; /* a termination signal arrived */
static atomic_int write_error; /* errno of the first failed write of a line */
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake; /* on CLOCK_MONOTONIC, set up in main() */

struct cpu_state {
	int cpu;
	pthread_t thread;
	struct setgrp *sgrp;
	int status; /* 0, or non-zero after an error */
	/* The soaker keeps the CPU out of the idle loop during system-only sets. */
	pthread_t soaker;
	bool has_soaker;
	atomic_int soak; /* 1: spin, 0: wait, -1: exit */
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage:\n"
		"\t%s [-c events] [-p period] [-nstD] [-T d|u] [interval [count]]\n\n"
		"\t-c events specify processor events to be monitored\n"
		"\t-n\t  suppress titles\n"
		"\t-p period cycle through event list periodically\n"
		"\t-s\t  run user soaker thread for system-only events\n"
		"\t-t\t  include %s register\n"
		"\t-T d|u\t  Display a timestamp in date (d) or unix time_t (u)\n"
		"\t-D\t  enable debug mode\n"
		"\t-h\t  print extended usage information\n\n"
		"\tUse cputrack(1) to monitor per-process statistics.\n",
		cpucmds_program, CPUCMDS_TICK_NAME);
}

/* Lines are written whole, so the CPUs' threads never interleave. */
static void emit(const char *line, size_t len)
{
	while (len) {
		ssize_t w = write(STDOUT_FILENO, line, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int expected = 0;
			atomic_compare_exchange_strong(&write_error, &expected, w < 0 ? errno : EIO);
			return;
		}
		line += w;
		len -= (size_t)w;
	}
}

static size_t stamp(char *buf, size_t size)
{
	time_t now = time(NULL);
	if (opt.timestamp == 'u')
		return (size_t)snprintf(buf, size, "%lld\n", (long long)now);
	if (opt.timestamp == 'd') {
		struct tm tm;
		localtime_r(&now, &tm);
		size_t n = strftime(buf, size, "%a %b %e %H:%M:%S %Z %Y\n", &tm);
		return n;
	}
	return 0;
}

/* A sample line (after the -T timestamp) or, for the totals, a plain one. */
static void print_line(int cpu, const char *what, cpc_buf_t *buf, const struct cmdset *cs)
{
	char line[4096];
	size_t n = strcmp(what, "total") == 0 ? 0 : stamp(line, sizeof(line));
	n += (size_t)snprintf(line + n, sizeof(line) - n, "%7.3f %3d %5s ",
			      cpucmds_timestamp(cpc_buf_hrtime(cpc, buf)), cpu, what);
	if (opt.tick)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%9" PRIu64 " ",
				      cpc_buf_tick(cpc, buf));
	for (int i = 0; i < cs->nreqs && n < sizeof(line); i++) {
		uint64_t v = 0;
		cpc_buf_get(cpc, buf, i, &v);
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%9" PRIu64 " ", v);
	}
	if (n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, opt.nsets > 1 ? " # %s\n" : "\n",
				      cs->name);
	emit(line, n < sizeof(line) ? n : sizeof(line) - 1);
}

/* Sleep until DEADLINE (CLOCK_MONOTONIC ns); false if stopping. */
static bool sleep_until(hrtime_t deadline)
{
	struct timespec ts = {.tv_sec = deadline / 1000000000LL, .tv_nsec = deadline % 1000000000LL};
	pthread_mutex_lock(&wake_lock);
	while (!atomic_load(&stopping) && cpucmds_hrtime() < deadline &&
	       pthread_cond_timedwait(&wake, &wake_lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&wake_lock);
	return !atomic_load(&stopping);
}

static void *soaker(void *arg)
{
	struct cpu_state *s = arg;
	struct sched_param sp = {0};
	pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	for (;;) {
		int what = atomic_load(&s->soak);
		if (what < 0)
			return NULL;
		if (what == 0) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	}
}

static void set_soak(struct cpu_state *s, const struct cmdset *cs)
{
	if (s->has_soaker)
		atomic_store(&s->soak, cs->sysonly ? 1 : 0);
}

static void *per_cpu(void *arg)
{
	struct cpu_state *s = arg;
	struct setgrp *g = s->sgrp;
	struct cmdset *cs = setgrp_current(g);
	if (opt.soaker && setgrp_has_sysonly(opt.master)) {
		pthread_attr_t attr;
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(s->cpu, &one);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		s->has_soaker = pthread_create(&s->soaker, &attr, soaker, s) == 0;
		pthread_attr_destroy(&attr);
		set_soak(s, cs);
	}
	if (cpc_bind_cpu(cpc, s->cpu, cs->set, 0) != 0)
		goto bad;
	hrtime_t next = cpucmds_hrtime();
	for (unsigned long i = 1; i <= opt.nsamples; i++) {
		next += opt.msec * 1000000LL;
		bool go_on = sleep_until(next);
		if (setgrp_sample(g) != 0)
			goto bad;
		/* Sets cycled: this one is done until its turn comes again. */
		if (opt.nsets > 1 && cpc_unbind(cpc, cs->set) != 0)
			cpucmds_error("error unbinding on cpu %d - %s\n", s->cpu, strerror(errno));
		print_line(s->cpu, "tick", cs->scratch, cs);
		if (opt.nsets > 1) {
			cs = setgrp_next(g);
			if (go_on && opt.period && opt.rest_msec > 0 && i % (unsigned long)opt.nsets == 0) {
				if (s->has_soaker)
					atomic_store(&s->soak, 0);
				next += opt.rest_msec * 1000000LL;
				go_on = sleep_until(next);
			}
			set_soak(s, cs);
			if (go_on && i < opt.nsamples && cpc_bind_cpu(cpc, s->cpu, cs->set, 0) != 0)
				goto bad;
		}
		if (!go_on)
			break;
	}
	if (cs && opt.nsets == 1 && cpc_unbind(cpc, cs->set) != 0)
		cpucmds_error("error unbinding on cpu %d - %s\n", s->cpu, strerror(errno));
	goto out;
bad:
	s->status = 1;
	cpucmds_error("cpu%d - %s\n", s->cpu, strerror(errno));
out:
	if (s->has_soaker) {
		atomic_store(&s->soak, -1);
		pthread_join(s->soaker, NULL);
	}
	return NULL;
}

/* The CPUs this process may run on that are online. */
static int usable_cpus(int *cpus, int max)
{
	cpu_set_t mine;
	if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
		return -1;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f)
		return -1;
	char buf[4096];
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	int n = 0;
	for (char *p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			return -1;
		p = end;
		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (long c = a; c <= b && n < max; c++)
			if (c < CPU_SETSIZE && CPU_ISSET(c, &mine))
				cpus[n++] = (int)c;
		if (*p == ',')
			p++;
	}
	return n;
}

int main(int argc, char **argv)
{
	out_init(NULL, 1);
	if (!(cpc = cpucmds_open(argv[0], "cannot access performance counters")))
		return 1;
	opt.master = setgrp_new(cpc);
	if (!opt.master) {
		cpucmds_error("out of heap\n");
		return 1;
	}
	int c, errors = 0;
	bool help = false;
	long period = 0;
	/* Options end at the first operand, as illumos's getopt(3C). */
	while ((c = getopt(argc, argv, "+Dc:hntT:sp:")) != -1) {
		switch (c) {
		case 'D': cpucmds_debug++; break;
		case 'c':
			if (setgrp_add(opt.master, optarg))
				errors++;
			break;
		case 'n': opt.title = false; break;
		case 'p':
			opt.period = true;
			if ((period = cpucmds_parse_seconds(optarg)) < 0) {
				cpucmds_error("invalid parameter \"%s\" for -p: seconds from 0 to %d\n",
					      optarg, CPUCMDS_MAX_SECONDS);
				errors++;
			}
			break;
		case 's': opt.soaker = true; break;
		case 't': opt.tick = true; break;
		case 'T':
			if ((optarg[0] == 'u' || optarg[0] == 'd') && !optarg[1]) {
				opt.timestamp = optarg[0];
			} else {
				cpucmds_error("invalid -T argument \"%s\": d or u\n", optarg);
				errors++;
			}
			break;
		case 'h': help = true; break;
		default: errors++; break;
		}
	}
	int nargs = argc - optind;
	if (nargs >= 1 && (opt.msec = cpucmds_parse_seconds(argv[optind])) <= 0) {
		cpucmds_error("invalid argument \"%s\": the interval is a number of seconds "
			      "above 0, up to %d\n",
			      argv[optind], CPUCMDS_MAX_SECONDS);
		errors++;
	}
	if (nargs >= 2) {
		/* At most UINT_MAX: -p multiplies it by the number of sets. */
		long long n;
		if (num_llong(argv[optind + 1], 10, 1, UINT_MAX, &n) != NUM_OK) {
			cpucmds_error("invalid argument \"%s\": the count is a number from 1 to %u\n",
				      argv[optind + 1], UINT_MAX);
			errors++;
		} else {
			opt.nsamples = (unsigned long)n;
		}
	}
	if (nargs > 2) {
		cpucmds_error("too many arguments\n");
		errors++;
	}
	opt.nsets = opt.master->nsets;
	if (help) {
		cpucmds_help(cpc, usage);
		return 0;
	}
	if (!errors && opt.nsets == 0)
		cpucmds_error("no events: -c events is required\n");
	if (errors || opt.nsets == 0) {
		usage(stderr);
		return 2;
	}
	if (opt.period) {
		/* Rest after each cycle through the sets until PERIOD has passed;
		 * COUNT is then a number of cycles. */
		opt.rest_msec = period - opt.msec * opt.nsets;
		if (opt.rest_msec < 0)
			opt.rest_msec = 0;
		if (opt.nsamples != ULONG_MAX)
			opt.nsamples *= (unsigned long)opt.nsets;
	}

	int cpus[CPU_SETSIZE];
	int ncpus = usable_cpus(cpus, CPU_SETSIZE);
	if (ncpus <= 0) {
		cpucmds_error("cannot find the online CPUs: %s\n", strerror(errno));
		return 1;
	}
	/* System-wide counting needs privilege: find out once, up front. */
	struct cmdset *first = setgrp_current(opt.master);
	if (cpc_bind_cpu(cpc, cpus[0], first->set, 0) != 0) {
		cpucmds_error("cannot count on cpu%d - %s%s\n", cpus[0], strerror(errno),
			      errno == EACCES ? " (cpustat counts every process on the CPUs: run it "
						"as root)"
					      : "");
		return 1;
	}
	cpc_unbind(cpc, first->set);

	/* Termination signals end the sampling: each CPU prints what it
	 * counted since its last line, then the totals are printed. */
	sigset_t term, saved;
	sigemptyset(&term);
	sigaddset(&term, SIGINT);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &term, &saved);

	if (opt.title) {
		char title[4096];
		int n = snprintf(title, sizeof(title), "%7s %3s %5s ", "time", "cpu", "event");
		if (opt.tick)
			n += snprintf(title + n, sizeof(title) - (size_t)n, "%9s ",
				      CPUCMDS_TICK_NAME);
		n += snprintf(title + n, sizeof(title) - (size_t)n, "%s\n", first->header);
		emit(title, (size_t)n < sizeof(title) ? (size_t)n : sizeof(title) - 1);
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wake, &ca);
	pthread_condattr_destroy(&ca);
	cpucmds_zerotime();
	struct cpu_state *state = calloc((size_t)ncpus, sizeof(*state));
	if (!state) {
		cpucmds_error("out of heap\n");
		return 1;
	}
	int started = 0;
	for (int i = 0; i < ncpus; i++) {
		state[i].cpu = cpus[i];
		state[i].sgrp = setgrp_clone(opt.master);
		if (!state[i].sgrp || pthread_create(&state[i].thread, NULL, per_cpu, &state[i])) {
			cpucmds_error("cannot create thread for cpu%d\n", cpus[i]);
			state[i].status = 4;
			state[i].cpu = -1;
			continue;
		}
		started++;
	}
	/* Wait for the threads, or for a termination signal. */
	int sig = 0;
	for (int joined = 0; joined < ncpus;) {
		struct timespec poll = {0, 50000000};
		int got = sigtimedwait(&term, NULL, &poll);
		if (got > 0 && !sig) {
			sig = got;
			atomic_store(&stopping, 1);
			pthread_mutex_lock(&wake_lock);
			pthread_cond_broadcast(&wake);
			pthread_mutex_unlock(&wake_lock);
		}
		joined = 0;
		for (int i = 0; i < ncpus; i++) {
			if (state[i].cpu < 0) {
				joined++;
				continue;
			}
			if (pthread_tryjoin_np(state[i].thread, NULL) == 0)
				state[i].cpu = -2 - state[i].cpu; /* joined */
			joined += state[i].cpu <= -2;
		}
	}

	struct setgrp *accum = setgrp_clone(opt.master);
	int ret = 0;
	for (int i = 0; i < ncpus; i++) {
		if (state[i].status)
			ret = 1;
		if (accum && state[i].sgrp)
			setgrp_accum(accum, state[i].sgrp);
		setgrp_free(state[i].sgrp);
	}
	for (int i = 0; accum && i < accum->nsets; i++)
		print_line(started, "total", accum->sets[i].data1, &accum->sets[i]);
	setgrp_free(accum);
	free(state);
	cpc_close(cpc);
	/* The lines go out by write(2): a failure is reported as stdio's are. */
	int werr = atomic_load(&write_error);
	if (werr)
		out_failed(stdout, werr);
	if (out_close(stdout, NULL))
		ret = 1;
	if (sig) {
		signal(sig, SIG_DFL);
		pthread_sigmask(SIG_SETMASK, &saved, NULL);
		raise(sig);
	}
	return ret;
}
