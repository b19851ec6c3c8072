/* pctr(1): display the CPU performance counters through pctr(4), as
 * OpenBSD's pctr does: an OpenBSD program on /dev/pctr and <machine/pctr.h>,
 * built with the pctr library, plus libhwc's event tables for -l.
 *
 * Where the user may count whole CPUs, the counters are the CPUs', as on
 * OpenBSD (pctr(4)): `pctr -s` sets them on every CPU and the display shows
 * the CPU pctr runs on.  Otherwise they belong to the thread that sets
 * them, so `pctr -s` checks that the CPU can count the function and sets it
 * for pctr itself, and the display shows this process's (unset) counters. */
#include <machine/cpu.h>
#include <machine/pctr.h>

#include "num.h"
#include "out.h"

#include <errno.h>
#include <fcntl.h>
#include <hwc/hwc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCTR_MAX_FUNCT 0xff
#define PCTR_MAX_UMASK 0xff

static void usage(void)
{
	fprintf(stderr, "usage: pctr [-AEeIiklMSu] [-f funct] [-m umask] [-s ctr] [-t thold]\n");
	exit(1);
}

/* A hexadecimal number up to MAX for option OPT, or exit with WHAT in the
 * message, and the range. */
static unsigned hex_arg(const char *s, unsigned max, const char *what, char opt)
{
	unsigned long long v;
	if (num_ullong(s, 16, 0, max, &v) != NUM_OK) {
		fprintf(stderr, "pctr: ");
		fprintf(stderr, what, s);
		fprintf(stderr, " (-%c takes a hexadecimal number from 0 to %x)\n", opt, max);
		exit(1);
	}
	return (unsigned)v;
}

/* A decimal number from 0 to MAX for option OPT, or exit naming WHAT as
 * OpenBSD's does, and the range. */
static unsigned num_arg(const char *s, unsigned max, const char *what, char opt)
{
	long long v;
	enum num_result r = num_llong(s, 10, 0, max, &v);
	if (r != NUM_OK) {
		fprintf(stderr, "pctr: %s is %s: %s (-%c takes 0 to %u)\n", what, num_problem(r), s,
			opt, max);
		exit(1);
	}
	return (unsigned)v;
}

/* What an errno from PCIOCSx means here, for the user. */
static const char *hint(int err)
{
	switch (err) {
	case ENODEV:
		return "this machine has no hardware performance counters (the kernel exposes no "
		       "PMU, as in a virtual machine without PMU pass-through; `hwc info` "
		       "says more)";
	case EINVAL:
		return "the CPU or the kernel rejects this function (check it with -l)";
	case EACCES:
		return "counting kernel mode (-k) needs root or CAP_PERFMON, or "
		       "kernel.perf_event_paranoid <= 1; -u counts user mode only";
	case EBUSY:
		return "another user's process holds the socket of the whole-CPU counters' "
		       "helper (@hwc-pctr, see pctr(4)); its counters stay as they are";
	default:
		return NULL;
	}
}

/* "ieku ev um +thold", OpenBSD's rendering of a function word. */
static const char *fn_string(unsigned fn)
{
	static char buf[64];
	char th[8] = "";
	if (fn >> PCTR_CM_SHIFT)
		snprintf(th, sizeof(th), "+%u", fn >> PCTR_CM_SHIFT);
	snprintf(buf, sizeof(buf), "%c%c%c%c %02x %02x %s", fn & PCTR_I ? 'i' : '-',
		 fn & PCTR_E ? 'e' : '-', fn & PCTR_K ? 'k' : '-', fn & PCTR_U ? 'u' : '-',
		 fn & 0xff, (fn >> PCTR_UM_SHIFT) & 0xff, th);
	return buf;
}

static void print_values(void)
{
	struct pctrst st;
	memset(&st, 0, sizeof(st));
	int fd = open(_PATH_PCTR, O_RDONLY);
	if (fd < 0 || ioctl(fd, PCIOCRD, &st) < 0) {
		fprintf(stderr, "pctr: %s: %s\n", _PATH_PCTR, strerror(errno));
		exit(1);
	}
	close(fd);
	for (int i = 0; i < PCTR_NUM; i++)
		printf(" ctr%d = %16llu  [%s]\n", i, st.pctr_hwc[i], fn_string(st.pctr_fn[i]));
	printf("  tsc = %16llu\n", st.pctr_tsc);
}

static void set_counter(unsigned ctr, unsigned fn)
{
	int fd = open(_PATH_PCTR, O_WRONLY);
	if (fd < 0) {
		fprintf(stderr, "pctr: %s: %s\n", _PATH_PCTR, strerror(errno));
		exit(1);
	}
	if (ioctl(fd, PCIOCS0 + ctr, &fn) < 0) {
		int err = errno;
		const char *h = hint(err);
		fprintf(stderr, "pctr: cannot set counter %u to function %#x: %s%s%s\n", ctr, fn,
			strerror(err), h ? ": " : "", h ? h : "");
		exit(1);
	}
	close(fd);
}

int list_functions(void);

int main(int argc, char **argv)
{
	unsigned func = 0, masku = 0, thold = 0, ctr = 0;
	int list = 0, set = 0, eflag = 0, iflag = 0, kflag = 0, uflag = 0;
	int Mflag = 0, Eflag = 0, Sflag = 0, Iflag = 0, Aflag = 0;
	int ch;
	out_init(NULL, 1);
	while ((ch = getopt(argc, argv, "AEef:IiklMm:Ss:t:u")) != -1) {
		switch (ch) {
		case 'A': Aflag = 1; break;
		case 'E': Eflag = 1; break;
		case 'e': eflag = 1; break;
		case 'f': func = hex_arg(optarg, PCTR_MAX_FUNCT, "invalid function number: %s", 'f'); break;
		case 'I': Iflag = 1; break;
		case 'i': iflag = 1; break;
		case 'k': kflag = 1; break;
		case 'l': list = 1; break;
		case 'M': Mflag = 1; break;
		case 'm': masku = hex_arg(optarg, PCTR_MAX_UMASK, "invalid unit mask number: %s", 'm'); break;
		case 'S': Sflag = 1; break;
		case 's': set = 1; ctr = num_arg(optarg, PCTR_NUM - 1, "counter number", 's'); break;
		case 't': thold = num_arg(optarg, 0xff, "threshold", 't'); break;
		case 'u': uflag = 1; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (Aflag && (Mflag || Eflag || Sflag || Iflag))
		usage(); /* any agent, or cache states: not both */
	if (list)
		return list_functions();
	if (!set) {
		print_values();
		return 0;
	}
	unsigned fn = func | masku << PCTR_UM_SHIFT | thold << PCTR_CM_SHIFT;
	fn |= (Mflag ? PCTR_UM_M : 0) | (Eflag ? PCTR_UM_E : 0) | (Sflag ? PCTR_UM_S : 0) |
	      (Iflag ? PCTR_UM_I : 0) | (Aflag ? PCTR_UM_A : 0);
	fn |= (eflag ? PCTR_E : 0) | (iflag ? PCTR_I : 0) | (kflag ? PCTR_K : 0) |
	      (uflag ? PCTR_U : 0);
	if (func && !kflag && !uflag)
		fn |= PCTR_U | PCTR_K;
	if (func)
		fn |= PCTR_EN;
	set_counter(ctr, fn);
	return 0;
}
