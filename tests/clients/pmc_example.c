/* A FreeBSD libpmc client, built by tests/compat_clients.sh with nothing but
 *     cc pmc_example.c $(pkg-config --cflags --libs libpmc)
 * Counts its own page faults with a log configured, writes a user record
 * and reads the log back: prints "ok 1 1 1" (>= 300 faults, the record,
 * the log's end). */
#include <fcntl.h>
#include <pmc.h>
#include <pmclog.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void)
{
	pmc_id_t id;
	pmc_value_t v = 0;
	FILE *log = tmpfile();
	if (pmc_init() < 0 || pmc_configure_logfile(fileno(log)) < 0 ||
	    pmc_allocate("page-faults", PMC_MODE_TC, 0, PMC_CPU_ANY, &id, 0) < 0 || pmc_start(id) < 0)
		return 1;
	volatile char *p = mmap(NULL, 300 * 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 300; i++)
		p[i * 4096] = 1;
	if (pmc_read(id, &v) < 0 || pmc_writelog(42) < 0 || pmc_close_logfile() < 0)
		return 2;
	lseek(fileno(log), 0, SEEK_SET);
	void *parser = pmclog_open(fileno(log));
	struct pmclog_ev ev;
	int user = 0;
	while (pmclog_read(parser, &ev) == 0)
		user += ev.pl_type == PMCLOG_TYPE_USERDATA && ev.pl_u.pl_u.pl_userdata == 42;
	printf("ok %d %d %d\n", v >= 300, user, ev.pl_state == PMCLOG_EOF);
	pmclog_close(parser);
	return pmc_release(id);
}
