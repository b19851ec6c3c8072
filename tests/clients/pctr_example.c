/* An OpenBSD pctr(4) client, written as pctr(4) says, built by
 * tests/compat_clients.sh with nothing but
 *     cc pctr_example.c $(pkg-config --cflags --libs pctr)
 * Times a loop with rdtsc(), reads /dev/pctr, then tries to count retired
 * instructions in user mode on counter 0.  Usage: pctr_example [loops] */
#include <sys/types.h>
#include <machine/cpu.h>
#include <machine/pctr.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;

static void functionx(long loops)
{
	for (long i = 0; i < loops; i++)
		sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	long loops = argc > 1 ? atol(argv[1]) : 1000000;
	/* Not a constant, so that -D_FORTIFY_SOURCE builds call __open_2. */
	int rdonly = argc > 2 ? atoi(argv[2]) : O_RDONLY;
	struct pctrst st, st2;
	pctrval tsc;
	unsigned int fn;
	int fd;

	tsc = rdtsc();
	functionx(loops);
	tsc = rdtsc() - tsc;
	printf("Functionx took %llu cycles.\n", tsc);

	if ((fd = open(_PATH_PCTR, rdonly)) < 0)
		err(1, "%s", _PATH_PCTR);
	if (ioctl(fd, PCIOCRD, &st) < 0 || ioctl(fd, PCIOCRD, &st2) < 0)
		err(1, "PCIOCRD");
	printf("tsc %s\n", st2.pctr_tsc > st.pctr_tsc ? "advances" : "DOES NOT ADVANCE");
	fn = 0xc0 | PCTR_U | PCTR_EN;
	if (ioctl(fd, PCIOCS0, &fn) == 0 || errno != EPERM)
		errx(1, "PCIOCS0 on a read-only descriptor did not fail with EPERM");
	printf("read-only PCIOCS0: %s\n", strerror(errno));
	close(fd);

	if ((fd = open(_PATH_PCTR, O_WRONLY)) < 0)
		err(1, "%s", _PATH_PCTR);
	if (ioctl(fd, PCIOCS0, &fn) < 0) {
		printf("PCIOCS0: %s\n", strerror(errno));
		return 0;
	}
	pctrval before = rdpmc(0);
	functionx(loops);
	pctrval after = rdpmc(0);
	if (ioctl(fd, PCIOCRD, &st) < 0)
		err(1, "PCIOCRD");
	printf("PCIOCS0: counted %llu instructions for %ld loops (counter now %llu)\n",
	    after - before, loops, st.pctr_hwc[0]);
	fn = 0; /* stop counting: whole-CPU functions outlive this process */
	if (ioctl(fd, PCIOCS0, &fn) < 0)
		err(1, "PCIOCS0 0");
	close(fd);
	return 0;
}
