/*
 * <machine/pctr.h>: OpenBSD's pctr(4) interface on Linux, from hwc.
 *
 * Programs written for OpenBSD build unmodified with
 *     cc prog.c $(pkg-config --cflags --libs pctr)
 * The pctr library provides the /dev/pctr device in user space (it
 * interposes open(2), ioctl(2) and close(2) for that path) on top of
 * libhwc and perf_event_open(2).  See pctr(4).
 *
 * The header of the seed's generation: OpenBSD's i386 <machine/pctr.h>
 * revision 1.16 (OpenBSD 4.9 to 6.1), without the older PCTR_INTEL_NUM,
 * PCTR_AMD_NUM, pctr_idl, PCTR_UM_O and PCTR_UM_MOESI (pctr(4), STANDARDS).
 */
#ifndef _MACHINE_PCTR_H_
#define _MACHINE_PCTR_H_

#if !defined(__x86_64__) && !defined(__i386__)
#error "<machine/pctr.h>: pctr(4) is an interface to x86 counters"
#endif

#include <sys/types.h>
#include <sys/ioctl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A 64-bit counter value; unsigned long long, as printf("%llu") expects
 * (__extension__ keeps C90 -pedantic clients quiet). */
__extension__ typedef unsigned long long pctrval;

#define PCTR_NUM 4 /* counters of the interface; see pctr(4) for what each counts */

struct pctrst {
	unsigned int pctr_fn[PCTR_NUM]; /* the functions set with PCIOCSx */
	pctrval pctr_tsc;               /* time stamp counter, read just before the counters */
	pctrval pctr_hwc[PCTR_NUM];     /* counter values, as wide as the hardware's counters */
};

/* Pentium (P5) function flags: defined for source compatibility only; the
 * functions here always have the P6 and later layout below. */
#define P5CTR_K 0x040  /* count kernel-mode events */
#define P5CTR_U 0x080  /* count user-mode events */
#define P5CTR_C 0x100  /* count cycles instead of events */

/* Function word: event | unit mask << PCTR_UM_SHIFT | flags | counter mask
 * << PCTR_CM_SHIFT, the layout of the x86 PERFEVTSEL registers. */
#define PCTR_U  0x010000 /* count events in user mode */
#define PCTR_K  0x020000 /* count events in kernel mode */
#define PCTR_E  0x040000 /* edge detect */
#define PCTR_EN 0x400000 /* enable the counter */
#define PCTR_I  0x800000 /* invert the counter mask comparison */

/* Unit mask bits */
#define PCTR_UM_M    0x0800 /* modified cache lines */
#define PCTR_UM_E    0x0400 /* exclusive cache lines */
#define PCTR_UM_S    0x0200 /* shared cache lines */
#define PCTR_UM_I    0x0100 /* invalid cache lines */
#define PCTR_UM_MESI (PCTR_UM_M | PCTR_UM_E | PCTR_UM_S | PCTR_UM_I)
#define PCTR_UM_A    0x2000 /* any bus agent, not just this processor */

#define PCTR_UM_SHIFT 8  /* left shift of the unit mask */
#define PCTR_CM_SHIFT 24 /* left shift of the counter mask */

#define PCIOCRD _IOR('c', 1, struct pctrst) /* read the functions, the TSC and the counters */
#define PCIOCS0 _IOW('c', 8, unsigned int)  /* set the function of counter 0 */
#define PCIOCS1 _IOW('c', 9, unsigned int)  /* ... of counter 1 */
#define PCIOCS2 _IOW('c', 10, unsigned int) /* ... of counter 2 */
#define PCIOCS3 _IOW('c', 11, unsigned int) /* ... of counter 3 */

#define _PATH_PCTR "/dev/pctr"

/* The time stamp counter, read directly in user mode. */
#define rdtsc() ((pctrval)__builtin_ia32_rdtsc())

/* Counter CTR (0 to PCTR_NUM - 1) as PCIOCRD reads it: the current CPU's
 * for whole-CPU counters; for per-thread counters, read from user space
 * through the kernel's self-monitoring page when the kernel allows it,
 * otherwise with one system call.  0 for a counter never set. */
pctrval __pctr_rdpmc(unsigned int ctr);
#define rdpmc(ctr) __pctr_rdpmc(ctr)

#ifdef __cplusplus
}
#endif
#endif
