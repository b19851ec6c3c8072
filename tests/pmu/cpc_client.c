/* A libcpc client on a real PMU (only <libcpc.h>): instructions counted
 * around the loop exactly, and CPC_OVF_NOTIFY_EMT's SIGEMT after the preset's
 * count, not before. */
#include "pmu.h"

#include <libcpc.h>
#include <signal.h>

#define N 1000000ull

static cpc_t *open_or_die(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	if (!cpc) {
		perror("cpc_open");
		exit(1);
	}
	return cpc;
}

static uint64_t count(uint64_t n)
{
	cpc_t *cpc = open_or_die();
	cpc_set_t *set = cpc_set_create(cpc);
	int idx = cpc_set_add_request(cpc, set, "instructions", 0, CPC_COUNT_USER, 0, NULL);
	CHECK_INT(idx, ==, 0);
	cpc_buf_t *a = cpc_buf_create(cpc, set), *b = cpc_buf_create(cpc, set);
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
	CHECK_INT(cpc_set_sample(cpc, set, a), ==, 0);
	pmu_loop(n);
	CHECK_INT(cpc_set_sample(cpc, set, b), ==, 0);
	uint64_t va = 0, vb = 0;
	cpc_buf_get(cpc, a, idx, &va);
	cpc_buf_get(cpc, b, idx, &vb);
	cpc_unbind(cpc, set);
	cpc_close(cpc);
	return vb - va;
}

static void test_count(void)
{
	check_doubling("libcpc instructions", count, N);
}

static cpc_t *ovf_cpc;
static cpc_set_t *ovf_set;
static cpc_buf_t *ovf_buf;
static volatile int ovf_count;
static volatile uint64_t ovf_value;

static void on_emt(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if (si->si_code != EMT_CPCOVF)
		return;
	uint64_t v = 0;
	if (ovf_count++ == 0 && cpc_set_sample(ovf_cpc, ovf_set, ovf_buf) == 0 &&
	    cpc_buf_get(ovf_cpc, ovf_buf, 0, &v) == 0)
		ovf_value = v;
}

/* Preset 2^64 - PERIOD: the counter wraps, and SIGEMT comes, after PERIOD
 * events.  cycles: QEMU raises no overflow interrupt for its instruction
 * counter, and with -icount shift=0 a cycle is one instruction. */
static void test_overflow(void)
{
	const uint64_t period = 1000000, margin = period / 100;
	struct sigaction act = {.sa_sigaction = on_emt, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&act.sa_mask);
	CHECK_INT(sigaction(SIGEMT, &act, NULL), ==, 0);
	ovf_cpc = open_or_die();
	ovf_set = cpc_set_create(ovf_cpc);
	CHECK_INT(cpc_set_add_request(ovf_cpc, ovf_set, "cycles", UINT64_MAX - period + 1,
				      CPC_COUNT_USER | CPC_OVF_NOTIFY_EMT, 0, NULL), ==, 0);
	ovf_buf = cpc_buf_create(ovf_cpc, ovf_set);
	CHECK_INT(cpc_bind_curlwp(ovf_cpc, ovf_set, 0), ==, 0);
	pmu_loop((period - margin) / 2);
	int early = ovf_count;
	pmu_loop(margin);
	int late = ovf_count;
	fprintf(stderr, "measured: libcpc preset 2^64-%" PRIu64 ": %d SIGEMT 1%% before, %d 1%% after; "
		"counter at the signal %" PRIu64 "\n", period, early, late, ovf_value);
	CHECK_INT(early, ==, 0);
	CHECK_INT(late, ==, 1);
	CHECK_U64(ovf_value, <, margin); /* wrapped past 2^64 just now */
	cpc_unbind(ovf_cpc, ovf_set);
	cpc_close(ovf_cpc);
	signal(SIGEMT, SIG_DFL);
}

int main(void)
{
	require_pmu();
	run_on_cpu0();
	RUN(test_count);
	RUN(test_overflow);
	return check_failures ? 1 : 0;
}
