/* The hardware tests' workload: a loop of exactly 2 user instructions per
 * iteration (pmu.h), in the shapes the tests count.
 *   work loop N      N iterations
 *   work f1f2 N      f1 runs N iterations, f2 3N (a 1:3 profile)
 *   work spin        loops until killed
 *   work afalg ALG N hashes N blocks of 4 KB with the kernel's hash ALG
 *                    through AF_ALG: kernel time in ALG's module */
#include "pmu.h"

#include <linux/if_alg.h>
#include <sys/socket.h>
#include <unistd.h>

/* N updates of 4 KB and a final through an AF_ALG socket of hash ALG (a
 * driver name, such as sha3-256-generic, picks one implementation). */
static int afalg(const char *alg, uint64_t n)
{
	struct sockaddr_alg sa = {.salg_family = AF_ALG, .salg_type = "hash"};
	if (strlen(alg) >= sizeof(sa.salg_name)) {
		fprintf(stderr, "work: algorithm name too long: %s\n", alg);
		return 2;
	}
	strcpy((char *)sa.salg_name, alg);
	int tfm = socket(AF_ALG, SOCK_SEQPACKET, 0);
	if (tfm < 0 || bind(tfm, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "work: AF_ALG hash %s: %s\n", alg, strerror(errno));
		return 1;
	}
	int op = accept(tfm, NULL, 0);
	if (op < 0) {
		fprintf(stderr, "work: AF_ALG accept: %s\n", strerror(errno));
		return 1;
	}
	static char block[4096];
	for (uint64_t i = 0; i < n; i++)
		if (send(op, block, sizeof(block), MSG_MORE) != (ssize_t)sizeof(block)) {
			fprintf(stderr, "work: AF_ALG send: %s\n", strerror(errno));
			return 1;
		}
	unsigned char digest[64];
	if (send(op, block, 0, 0) < 0 || read(op, digest, sizeof(digest)) <= 0) {
		fprintf(stderr, "work: AF_ALG digest: %s\n", strerror(errno));
		return 1;
	}
	close(op);
	close(tfm);
	return 0;
}

__attribute__((noinline)) static void f1(uint64_t n)
{
	pmu_loop(n);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void f2(uint64_t n)
{
	pmu_loop(n);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "spin") == 0) {
		for (;;)
			pmu_loop(1000000);
	}
	if (argc == 4 && strcmp(argv[1], "afalg") == 0) {
		char *e;
		uint64_t n = strtoull(argv[3], &e, 10);
		if (*e || !n) {
			fprintf(stderr, "work: bad count %s\n", argv[3]);
			return 2;
		}
		return afalg(argv[2], n);
	}
	if (argc != 3) {
		fprintf(stderr, "usage: work loop|f1f2 N | work spin | work afalg ALG N\n");
		return 2;
	}
	char *end;
	uint64_t n = strtoull(argv[2], &end, 10);
	if (*end || !n) {
		fprintf(stderr, "work: bad count %s\n", argv[2]);
		return 2;
	}
	if (strcmp(argv[1], "loop") == 0) {
		pmu_loop(n);
	} else if (strcmp(argv[1], "f1f2") == 0) {
		/* Interleaved in slices, so that a sampling period sees both. */
		for (int i = 0; i < 100; i++) {
			f1(n / 100);
			f2(3 * n / 100);
		}
	} else {
		fprintf(stderr, "work: unknown mode %s\n", argv[1]);
		return 2;
	}
	return 0;
}
