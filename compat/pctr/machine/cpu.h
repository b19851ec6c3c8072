/*
 * <machine/cpu.h> for the classic BSD counter interfaces on Linux, from hwc.
 *
 * OpenBSD pctr(4) and FreeBSD perfmon(4) programs include it before
 * <machine/pctr.h> or <machine/perfmon.h>.  Those headers are complete on
 * their own; this one only supplies what such programs commonly take from
 * the BSD system headers.
 */
#ifndef _MACHINE_CPU_H_
#define _MACHINE_CPU_H_

#include <sys/types.h>

#ifndef __dead2
#define __dead2 __attribute__((__noreturn__)) /* FreeBSD <sys/cdefs.h> */
#endif

#endif
