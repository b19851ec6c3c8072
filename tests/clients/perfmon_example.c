/* A FreeBSD perfmon(4) client in the manner of FreeBSD's
 * share/examples/perfmon, built by tests/compat_clients.sh with nothing but
 *     cc perfmon_example.c $(pkg-config --cflags --libs perfmon)
 * Sets up counter 0 for EVENT, then LOOPS times stops, reads, resets and
 * restarts it around a piece of work, and prints the values and the TSC
 * ticks at the rate PMIOTSTAMP gives.
 * Usage: perfmon_example [-eiou] [-l loops] [-m mask] [-U unit] event */
#include <sys/types.h>
#include <sys/ioctl.h>

#include <machine/cpu.h>
#include <machine/perfmon.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;

static void usage(void) __dead2;

static void usage(void)
{
	fprintf(stderr, "usage: perfmon_example [-eiou] [-l loops] [-m mask] [-U unit] event\n");
	exit(1);
}

static int number(const char *s, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (!*s || *end || errno)
		errx(1, "%s: not a number", s);
	if (v < min || v > max)
		errx(1, "%s: must be between %d and %d", s, min, max);
	return (int)v;
}

int main(int argc, char **argv)
{
	struct pmc pmc;
	struct pmc_tstamp then, now;
	struct pmc_data value;
	long long *buf, total = 0;
	int c, fd, num = 0, loops = 10, i;

	memset(&pmc, 0, sizeof(pmc));
	while ((c = getopt(argc, argv, "eiol:m:uU:")) != -1) {
		switch (c) {
		case 'e': pmc.pmc_flags |= PMCF_E; break;
		case 'i': pmc.pmc_flags |= PMCF_INV; break;
		case 'o': pmc.pmc_flags |= PMCF_OS; break;
		case 'u': pmc.pmc_flags |= PMCF_USR; break;
		case 'l': loops = number(optarg, 1, INT_MAX - 1); break;
		case 'm': pmc.pmc_mask = (unsigned char)number(optarg, 0, 255); break;
		case 'U': pmc.pmc_unit = (unsigned char)number(optarg, 0, 255); break;
		default: usage();
		}
	}
	if (argc - optind != 1)
		usage();
	pmc.pmc_event = (unsigned char)number(argv[optind], 0, 255);
	if ((buf = calloc((size_t)loops + 1, sizeof(*buf))) == NULL)
		err(1, "calloc");

	if ((fd = open(_PATH_PERFMON, O_RDWR)) < 0)
		err(1, "open: " _PATH_PERFMON);
	if (ioctl(fd, PMIOTSTAMP, &then) < 0)
		err(1, "ioctl(PMIOTSTAMP)");
	printf("TSC rate: %d MHz\n", then.pmct_rate);
	if (ioctl(fd, PMIOSETUP, &pmc) < 0)
		err(1, "ioctl(PMIOSETUP)");
	if (ioctl(fd, PMIOSTART, &num) < 0)
		err(1, "ioctl(PMIOSTART)");
	value.pmcd_num = 0;
	for (i = 0; i < loops; i++) {
		if (ioctl(fd, PMIOSTOP, &num) < 0)
			err(1, "ioctl(PMIOSTOP)");
		if (ioctl(fd, PMIOREAD, &value) < 0)
			err(1, "ioctl(PMIOREAD)");
		buf[i] = value.pmcd_value;
		if (ioctl(fd, PMIORESET, &value.pmcd_num) < 0)
			err(1, "ioctl(PMIORESET)");
		if (ioctl(fd, PMIOSTART, &num) < 0)
			err(1, "ioctl(PMIOSTART)");
		for (long k = 0; k < 100000; k++)
			sink += (unsigned long)k;
	}
	if (ioctl(fd, PMIOSTOP, &num) < 0)
		err(1, "ioctl(PMIOSTOP)");
	if (ioctl(fd, PMIOREAD, &value) < 0)
		err(1, "ioctl(PMIOREAD)");
	buf[i] = value.pmcd_value;
	if (ioctl(fd, PMIOTSTAMP, &now) < 0)
		err(1, "ioctl(PMIOTSTAMP)");
	for (i = 1; i <= loops; i++) {
		printf("%d: %lld\n", i, buf[i]);
		total += buf[i];
	}
	printf("total: %lld\nmean: %f\n", total, (double)total / loops);
	printf("clocks (at %d-MHz): %lld\n", now.pmct_rate, now.pmct_value - then.pmct_value);
	return 0;
}
