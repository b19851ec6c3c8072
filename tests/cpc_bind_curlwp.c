/* cpc_bind_curlwp(3CPC): counting the calling LWP (the page's Example 1),
 * inheritance by new LWPs, overflow with a preset, the signal and
 * cpc_set_restart() (Example 2), cpc_bind_pctx() on another process,
 * cpc_bind_cpu(), cpc_unbind(), and the errors of each. */
#include "cpc_test.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

/* Example 1: 20 iterations, each measured with samples before and after. */
static void test_example1(void)
{
	cpc_t *cpc = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc);
	int ind0 = cpc_set_add_request(cpc, set, "page-faults", 0, CPC_COUNT_USER, 0, NULL);
	int ind1 = cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER | CPC_COUNT_SYSTEM,
				       0, NULL);
	cpc_buf_t *diff = cpc_buf_create(cpc, set), *after = cpc_buf_create(cpc, set),
		  *before = cpc_buf_create(cpc, set);
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
	int iter;
	for (iter = 1; iter <= 20; iter++) {
		if (cpc_set_sample(cpc, set, before) == -1)
			break;
		touch_pages(100 * iter);
		if (cpc_set_sample(cpc, set, after) == -1)
			break;
		cpc_buf_sub(cpc, diff, after, before);
		uint64_t val0, val1;
		cpc_buf_get(cpc, diff, ind0, &val0);
		cpc_buf_get(cpc, diff, ind1, &val1);
		CHECK_U64(val0, >=, (uint64_t)(100 * iter));
		CHECK_U64(val0, <=, FAULTS_MAX(100 * iter));
		CHECK_U64(val1, >, 0);
	}
	CHECK_INT(iter, ==, 21);
	CHECK_INT(cpc_unbind(cpc, set), ==, 0);
	/* Unbound: no sample, no second unbind. */
	CHECK_INT(cpc_set_sample(cpc, set, before), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(cpc_unbind(cpc, set), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	cpc_close(cpc);
}

static void test_levels(void)
{
	/* page faults on fresh pages happen in user mode: counted with
	 * CPC_COUNT_USER, not with CPC_COUNT_SYSTEM alone; a request with
	 * neither level stays at its preset. */
	cpc_t *cpc = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc);
	int user = cpc_set_add_request(cpc, set, "page-faults", 0, CPC_COUNT_USER, 0, NULL);
	int sys = cpc_set_add_request(cpc, set, "page-faults", 0, CPC_COUNT_SYSTEM, 0, NULL);
	int none = cpc_set_add_request(cpc, set, "page-faults", 1234, 0, 0, NULL);
	cpc_buf_t *buf = cpc_buf_create(cpc, set);
	int err = cpc_bind_curlwp(cpc, set, 0);
	if (err && errno == EACCES) {
		SKIP_SUB("kernel counting not permitted: %s", last_msg);
		cpc_close(cpc);
		return;
	}
	CHECK_INT(err, ==, 0);
	touch_pages(500);
	CHECK_INT(cpc_set_sample(cpc, set, buf), ==, 0);
	uint64_t u, s, n;
	cpc_buf_get(cpc, buf, user, &u);
	cpc_buf_get(cpc, buf, sys, &s);
	cpc_buf_get(cpc, buf, none, &n);
	CHECK_U64(u, >=, 500);
	CHECK_U64(s, <, 100);
	CHECK_U64(n, ==, 1234);
	cpc_close(cpc);
}

static void test_bad_binds(void)
{
	cpc_t *cpc = open_cpc(), *other = open_cpc();
	cpc_set_t *empty = cpc_set_create(cpc);
	CHECK_INT(cpc_bind_curlwp(cpc, empty, 0), ==, -1); /* no requests */
	CHECK_INT(errno, ==, EINVAL);
	cpc_set_t *set = cpc_set_create(cpc);
	cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER, 0, NULL);
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0x2), ==, -1); /* not a bind flag */
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(cpc_bind_curlwp(other, set, 0), ==, -1); /* another handle's set */
	CHECK_INT(errno, ==, EINVAL);
	/* Without a bound set, nothing to preset, restart, enable. */
	CHECK_INT(cpc_request_preset(cpc, 0, 1), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(cpc_set_restart(cpc, set), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
	CHECK_INT(cpc_request_preset(cpc, 1, 1), ==, -1); /* no request 1 */
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(cpc_request_preset(cpc, 0, 1), ==, 0);
	/* Binding another set replaces the LWP's first one. */
	cpc_set_t *second = cpc_set_create(cpc);
	cpc_set_add_request(cpc, second, "page-faults", 0, CPC_COUNT_USER, 0, NULL);
	cpc_buf_t *buf = cpc_buf_create(cpc, set);
	CHECK_INT(cpc_bind_curlwp(cpc, second, 0), ==, 0);
	CHECK_INT(cpc_set_sample(cpc, set, buf), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	cpc_close(cpc);
	cpc_close(other);
}

static void *thread_touch(void *arg)
{
	touch_pages((long)(intptr_t)arg);
	return NULL;
}

static void test_inherit(void)
{
	for (int inherit = 0; inherit < 2; inherit++) {
		cpc_t *cpc = open_cpc();
		cpc_set_t *set = cpc_set_create(cpc);
		cpc_set_add_request(cpc, set, "page-faults", 0, CPC_COUNT_USER, 0, NULL);
		cpc_buf_t *buf = cpc_buf_create(cpc, set);
		CHECK_INT(cpc_bind_curlwp(cpc, set, inherit ? CPC_BIND_LWP_INHERIT : 0), ==, 0);
		pthread_t th;
		pthread_create(&th, NULL, thread_touch, (void *)(intptr_t)1000);
		pthread_join(th, NULL);
		/* A child process is no LWP of ours: never counted. */
		pid_t pid = fork();
		if (pid == 0) {
			touch_pages(2000);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		CHECK_INT(cpc_set_sample(cpc, set, buf), ==, 0);
		uint64_t v;
		cpc_buf_get(cpc, buf, 0, &v);
		if (inherit) {
			CHECK_U64(v, >=, 1000);
			CHECK_U64(v, <, 2000);
		} else {
			CHECK_U64(v, <, 1000);
		}
		cpc_close(cpc);
	}
	/* Overflow signals cannot follow inherited LWPs on Linux: ENOTSUP. */
	cpc_t *cpc = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc);
	cpc_set_add_request(cpc, set, "page-faults", UINT64_MAX - 10,
			    CPC_COUNT_USER | CPC_OVF_NOTIFY_EMT, 0, NULL);
	last_subcode = 0;
	CHECK_INT(cpc_bind_curlwp(cpc, set, CPC_BIND_LWP_INHERIT), ==, -1);
	CHECK_INT(errno, ==, ENOTSUP);
	CHECK_INT(last_subcode, ==, CPC_REQ_INVALID_FLAGS);
	CHECK_STR_CONTAINS(last_msg, "CPC_BIND_LWP_INHERIT");
	cpc_close(cpc);
}

/* Example 2: a counter preset 1000 counts short of overflowing. */
#define PRESET (UINT64_MAX - 999ull)

static cpc_t *ovf_cpc;
static cpc_set_t *ovf_set;
static cpc_buf_t *ovf_buf;
static int ovf_index, ovf_clock;
static volatile int ovf_count, ovf_bad, ovf_restart;
static volatile uint64_t ovf_value[8];

static void emt_handler(int sig, siginfo_t *sip, void *arg)
{
	(void)arg;
	if (sig != SIGEMT || sip->si_code != EMT_CPCOVF) {
		ovf_bad++;
		return;
	}
	uint64_t val = 0;
	if (cpc_set_sample(ovf_cpc, ovf_set, ovf_buf) != 0)
		ovf_bad++;
	cpc_buf_get(ovf_cpc, ovf_buf, ovf_index, &val);
	if (ovf_count < 8)
		ovf_value[ovf_count] = val;
	ovf_count++;
	if (!ovf_restart)
		return;
	/* Update the request's preset and restart the counters. */
	if (cpc_request_preset(ovf_cpc, ovf_index, UINT64_MAX - 499) != 0 ||
	    cpc_set_restart(ovf_cpc, ovf_set) != 0)
		ovf_bad++;
}

static void test_overflow(void)
{
	struct sigaction act = {.sa_sigaction = emt_handler, .sa_flags = SA_RESTART | SA_SIGINFO};
	sigemptyset(&act.sa_mask);
	CHECK_INT(sigaction(SIGEMT, &act, NULL), ==, 0);
	cpc_t *cpc = open_cpc();
	CHECK(cpc_caps(cpc) & CPC_CAP_OVERFLOW_INTERRUPT);
	cpc_close(cpc);
	for (int restart = 0; restart < 2; restart++) {
		ovf_cpc = open_cpc();
		ovf_set = cpc_set_create(ovf_cpc);
		ovf_clock = cpc_set_add_request(ovf_cpc, ovf_set, "task-clock", 0, CPC_COUNT_USER, 0,
						NULL);
		ovf_index = cpc_set_add_request(ovf_cpc, ovf_set, "page-faults", PRESET,
						CPC_COUNT_USER | CPC_OVF_NOTIFY_EMT, 0, NULL);
		CHECK_INT(ovf_index, ==, 1);
		ovf_buf = cpc_buf_create(ovf_cpc, ovf_set);
		ovf_count = ovf_bad = 0;
		ovf_restart = restart;
		CHECK_INT(cpc_bind_curlwp(ovf_cpc, ovf_set, 0), ==, 0);
		cpc_buf_t *b = cpc_buf_create(ovf_cpc, ovf_set);
		CHECK_INT(cpc_set_sample(ovf_cpc, ovf_set, b), ==, 0);
		uint64_t start;
		cpc_buf_get(ovf_cpc, b, ovf_index, &start);
		CHECK_U64(start, >=, PRESET); /* counting starts at the preset */
		CHECK_U64(start, <, PRESET + 20);
		touch_pages(2250);
		CHECK_INT(ovf_bad, ==, 0);
		/* The virtual counter wrapped at 2^64 when the signal came. */
		CHECK_U64(ovf_value[0], <=, 3);
		if (restart) {
			/* Restarted from 2^64 - 500: overflows at 1000, 1500, 2000. */
			CHECK_INT(ovf_count, ==, 3);
			CHECK_U64(ovf_value[1], <=, 3);
			CHECK_U64(ovf_value[2], <=, 3);
		} else {
			/* Frozen at the overflow: one signal, and the whole set stopped. */
			CHECK_INT(ovf_count, ==, 1);
			uint64_t faults, clock, faults2, clock2;
			cpc_set_sample(ovf_cpc, ovf_set, b);
			cpc_buf_get(ovf_cpc, b, ovf_index, &faults);
			cpc_buf_get(ovf_cpc, b, ovf_clock, &clock);
			CHECK_U64(faults, <=, 3);
			touch_pages(300);
			cpc_set_sample(ovf_cpc, ovf_set, b);
			cpc_buf_get(ovf_cpc, b, ovf_index, &faults2);
			cpc_buf_get(ovf_cpc, b, ovf_clock, &clock2);
			CHECK_U64(faults2, ==, faults);
			CHECK_U64(clock2, ==, clock);
			/* cpc_set_restart() from outside the handler restarts it too. */
			CHECK_INT(cpc_set_restart(ovf_cpc, ovf_set), ==, 0);
			cpc_set_sample(ovf_cpc, ovf_set, b);
			cpc_buf_get(ovf_cpc, b, ovf_index, &faults);
			CHECK_U64(faults, >=, PRESET);
			touch_pages(1100);
			CHECK_INT(ovf_count, ==, 2);
		}
		cpc_unbind(ovf_cpc, ovf_set);
		cpc_close(ovf_cpc);
	}
	signal(SIGEMT, SIG_DFL);
}

static void test_preset_restart(void)
{
	/* cpc_request_preset() takes effect at the next cpc_set_restart(),
	 * which starts every request from its preset, the new one if any. */
	cpc_t *cpc = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc);
	cpc_set_add_request(cpc, set, "page-faults", 10, CPC_COUNT_USER, 0, NULL);
	cpc_set_add_request(cpc, set, "page-faults", 5000, CPC_COUNT_USER, 0, NULL);
	cpc_buf_t *buf = cpc_buf_create(cpc, set);
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
	touch_pages(100);
	CHECK_INT(cpc_request_preset(cpc, 0, 1000000), ==, 0);
	uint64_t a, b;
	cpc_set_sample(cpc, set, buf);
	cpc_buf_get(cpc, buf, 0, &a);
	CHECK_U64(a, >=, 110); /* not yet */
	CHECK_U64(a, <=, FAULTS_MAX(110));
	CHECK_INT(cpc_set_restart(cpc, set), ==, 0);
	touch_pages(100);
	cpc_set_sample(cpc, set, buf);
	cpc_buf_get(cpc, buf, 0, &a);
	cpc_buf_get(cpc, buf, 1, &b);
	CHECK_U64(a, >=, 1000100);
	CHECK_U64(a, <=, 1000000 + FAULTS_MAX(100));
	CHECK_U64(b, >=, 5100); /* restarted from its own preset */
	CHECK_U64(b, <=, 5000 + FAULTS_MAX(100));
	/* A new bind starts from the presets of cpc_set_add_request() again. */
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
	cpc_set_sample(cpc, set, buf);
	cpc_buf_get(cpc, buf, 0, &a);
	CHECK_U64(a, >=, 10);
	CHECK_U64(a, <, 100);
	cpc_close(cpc);
}

/* cpc_bind_pctx(): count LWP 1 of another process from its controller. */
struct pctx_state {
	cpc_t *cpc;
	cpc_set_t *set;
	cpc_buf_t *buf;
	int binds, bad_id;
	uint64_t faults;
};

static int pinit(pctx_t *pctx, pid_t pid, id_t lwpid, void *arg)
{
	(void)pid;
	struct pctx_state *st = arg;
	if (lwpid != 1)
		return 0;
	/* An LWP the process does not have. */
	if (cpc_bind_pctx(st->cpc, pctx, 99, st->set, 0) == 0 || errno != ESRCH)
		st->bad_id++;
	if (cpc_bind_pctx(st->cpc, pctx, lwpid, st->set, 1) == 0 || errno != EINVAL)
		st->bad_id++;
	if (cpc_bind_pctx(st->cpc, pctx, lwpid, st->set, 0) != 0)
		return -1;
	st->binds++;
	return 0;
}

static int pfini(pctx_t *pctx, pid_t pid, id_t lwpid, void *arg)
{
	(void)pctx, (void)pid;
	struct pctx_state *st = arg;
	if (lwpid != 1)
		return 0;
	if (cpc_set_sample(st->cpc, st->set, st->buf) != 0)
		return -1;
	cpc_buf_get(st->cpc, st->buf, 0, &st->faults);
	return cpc_unbind(st->cpc, st->set);
}

static void test_bind_pctx(void)
{
	struct pctx_state st = {.cpc = open_cpc()};
	st.set = cpc_set_create(st.cpc);
	cpc_set_add_request(st.cpc, st.set, "page-faults", 0, CPC_COUNT_USER, 0, NULL);
	st.buf = cpc_buf_create(st.cpc, st.set);
	char *argv[] = {workload("pagetouch"), "3000", NULL};
	pctx_t *pctx = pctx_create(argv[0], argv, &st, 0, NULL);
	CHECK(pctx != NULL);
	if (!pctx)
		return;
	CHECK_INT(pctx_set_events(pctx, PCTX_INIT_LWP_EVENT, pinit, PCTX_FINI_LWP_EVENT, pfini,
				  PCTX_NULL_EVENT), ==, 0);
	CHECK_INT(pctx_run(pctx, 0, 0, NULL), ==, 0);
	pctx_release(pctx);
	CHECK_INT(st.binds, ==, 1);
	CHECK_INT(st.bad_id, ==, 0);
	CHECK_U64(st.faults, >=, 3000);
	CHECK_U64(st.faults, <, 3200);
	cpc_close(st.cpc);
}

static int first_cpu(void)
{
	cpu_set_t set;
	sched_getaffinity(0, sizeof(set), &set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			return i;
	return 0;
}

static void test_bind_cpu(void)
{
	cpc_t *cpc = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc);
	cpc_set_add_request(cpc, set, "cpu-clock", 0, CPC_COUNT_USER | CPC_COUNT_SYSTEM, 0, NULL);
	cpc_buf_t *buf = cpc_buf_create(cpc, set);
	/* Processors that do not exist. */
	int bad[] = {-1, 4096, 99999};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(cpc_bind_cpu(cpc, bad[i], set, 0), ==, -1);
		CHECK_INT(errno, ==, EINVAL);
	}
	int cpu = first_cpu();
	CHECK_INT(cpc_bind_cpu(cpc, cpu, set, 1), ==, -1); /* flags must be 0 */
	CHECK_INT(errno, ==, EINVAL);
	if (geteuid() != 0) {
		SKIP_SUB("the counting part needs root");
		cpc_close(cpc);
		return;
	}
	cpu_set_t before, during, after;
	sched_getaffinity(0, sizeof(before), &before);
	CHECK_INT(cpc_bind_cpu(cpc, cpu, set, 0), ==, 0);
	/* The calling LWP now runs on the measured CPU only. */
	sched_getaffinity(0, sizeof(during), &during);
	CHECK_INT(CPU_COUNT(&during), ==, 1);
	CHECK(CPU_ISSET(cpu, &during));
	struct timespec ts = {0, 100000000};
	nanosleep(&ts, NULL);
	CHECK_INT(cpc_set_sample(cpc, set, buf), ==, 0);
	uint64_t ns;
	cpc_buf_get(cpc, buf, 0, &ns);
	CHECK_U64(ns, >=, 90000000); /* cpu-clock ticks whatever runs there */
	/* Moved off the CPU: the set cannot be sampled (EAGAIN). */
	CHECK_INT(sched_setaffinity(0, sizeof(before), &before), ==, 0);
	if (CPU_COUNT(&before) > 1) {
		CHECK_INT(cpc_set_sample(cpc, set, buf), ==, -1);
		CHECK_INT(errno, ==, EAGAIN);
	}
	CHECK_INT(cpc_unbind(cpc, set), ==, 0);
	sched_getaffinity(0, sizeof(after), &after);
	CHECK(CPU_EQUAL(&before, &after)); /* unbind gives the old binding back */
	cpc_close(cpc);
}

static int bind_cpu_unprivileged(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	if (!cpc)
		return 1;
	cpc_seterrhndlr(cpc, record_error);
	cpc_set_t *set = cpc_set_create(cpc);
	cpc_set_add_request(cpc, set, "cpu-clock", 0, CPC_COUNT_USER, 0, NULL);
	cpu_set_t before, after;
	sched_getaffinity(0, sizeof(before), &before);
	if (cpc_bind_cpu(cpc, first_cpu(), set, 0) != -1 || errno != EACCES)
		return 2;
	if (last_subcode != CPC_ATTR_REQUIRES_PRIVILEGE || !strstr(last_msg, "permission denied"))
		return 3;
	sched_getaffinity(0, sizeof(after), &after);
	if (!CPU_EQUAL(&before, &after)) /* a failed bind leaves the binding alone */
		return 4;
	/* Counting the system as well as user space is refused too. */
	cpc_set_t *sys = cpc_set_create(cpc);
	cpc_set_add_request(cpc, sys, "page-faults", 0, CPC_COUNT_SYSTEM, 0, NULL);
	if (cpc_bind_curlwp(cpc, sys, 0) != -1 || errno != EACCES)
		return 5;
	if (!strstr(last_msg, "perf_event_paranoid"))
		return 6;
	return cpc_close(cpc);
}

static void test_unprivileged(void)
{
	CHECK_AS_NOBODY(bind_cpu_unprivileged);
}

int main(void)
{
	RUN(test_example1);
	RUN(test_levels);
	RUN(test_bad_binds);
	RUN(test_inherit);
	RUN(test_overflow);
	RUN(test_preset_restart);
	RUN(test_bind_pctx);
	RUN(test_bind_cpu);
	RUN(test_unprivileged);
	return check_exit();
}
