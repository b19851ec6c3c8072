/* The one place that asks which CPU libhwc runs on: its timestamp counter,
 * the user-space counter read of the perf mmap-page protocol, and the
 * registers a DWARF unwinder starts from.  What is not inline (CPU
 * identity, counter count, the timestamp rate) is in arch.c.  Never
 * installed. */
#ifndef HWC_ARCH_H
#define HWC_ARCH_H

#include "internal.h"

#include <errno.h>
#include <linux/sched.h> /* struct clone_args */
#ifndef CLONE_CLEAR_SIGHAND /* headers before Linux 5.5, whose kernels refuse it */
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#endif
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
/* rdpmc and rdtsc: user space may always execute rdtsc, and rdpmc when the
 * page says cap_user_rdpmc (CR4.PCE set for the task). */
#define HWC__HAVE_RDPMC 1
static inline uint64_t hwc__rdpmc(unsigned counter)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return lo | (uint64_t)hi << 32;
}
static inline uint64_t hwc__rdtsc_insn(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return lo | (uint64_t)hi << 32;
}
#elif defined(__aarch64__)
/* The generic timer's virtual count (what the kernel's cap_user_time
 * converts) and the PMU's counters, readable at EL0 when the kernel sets
 * PMUSERENR_EL0 for the task (kernel.perf_user_access and config1 bit 1).
 * COUNTER is the page's index - 1: 31 is the cycle counter, others are
 * PMEVCNTR<n>_EL0, one instruction each (their number is in the encoding). */
#define HWC__HAVE_RDPMC 1
#define HWC__PMEVCNTR(n)                                                   \
	case n:                                                            \
		__asm__ __volatile__("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); \
		break
static inline uint64_t hwc__rdpmc(unsigned counter)
{
	uint64_t v = 0;
	switch (counter) {
		HWC__PMEVCNTR(0); HWC__PMEVCNTR(1); HWC__PMEVCNTR(2); HWC__PMEVCNTR(3);
		HWC__PMEVCNTR(4); HWC__PMEVCNTR(5); HWC__PMEVCNTR(6); HWC__PMEVCNTR(7);
		HWC__PMEVCNTR(8); HWC__PMEVCNTR(9); HWC__PMEVCNTR(10); HWC__PMEVCNTR(11);
		HWC__PMEVCNTR(12); HWC__PMEVCNTR(13); HWC__PMEVCNTR(14); HWC__PMEVCNTR(15);
		HWC__PMEVCNTR(16); HWC__PMEVCNTR(17); HWC__PMEVCNTR(18); HWC__PMEVCNTR(19);
		HWC__PMEVCNTR(20); HWC__PMEVCNTR(21); HWC__PMEVCNTR(22); HWC__PMEVCNTR(23);
		HWC__PMEVCNTR(24); HWC__PMEVCNTR(25); HWC__PMEVCNTR(26); HWC__PMEVCNTR(27);
		HWC__PMEVCNTR(28); HWC__PMEVCNTR(29); HWC__PMEVCNTR(30);
	case 31:
		__asm__ __volatile__("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}
#undef HWC__PMEVCNTR
static inline uint64_t hwc__rdtsc_insn(void)
{
	uint64_t v;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
}
#else
/* No user-space read: the page never offers one; every value from read(2). */
#define HWC__HAVE_RDPMC 0
static inline uint64_t hwc__rdpmc(unsigned counter)
{
	(void)counter;
	return 0;
}
static inline uint64_t hwc__rdtsc_insn(void)
{
	return 0;
}
#endif

/* A system call without errno: a CLONE_VM child (src/target.c) shares
 * its caller's thread pointer, hence errno, which glibc's wrappers would
 * set behind the running caller's back.  Returns -errno; -ENOSYS where
 * this file has no such assembly. */
static inline long hwc__syscall4_raw(long nr, long a, long b, long c, long d)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	long ret;
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			     : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	__asm__ __volatile__("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
#else
	(void)nr, (void)a, (void)b, (void)c, (void)d;
	return -ENOSYS;
#endif
}

/* futex(2) without errno (above).  Returns -errno. */
static inline long hwc__futex_raw(uint32_t *word, int op, uint32_t val,
				  const struct timespec *timeout)
{
#if defined(__x86_64__) || defined(__aarch64__)
	return hwc__syscall4_raw(SYS_futex, (long)word, op, (long)val, (long)timeout);
#else
	/* Elsewhere errno is written, which only a timed-out wait does. */
	long ret = syscall(SYS_futex, word, op, val, timeout, NULL, 0);
	return ret < 0 ? -errno : ret;
#endif
}

/* clone3(2) whose child runs FN(ARG) on the stack ARGS names, then exits
 * with its value.  Inline assembly because the child returns from the
 * system call on another stack, where no C frame may return.  The parent
 * gets the child's pid or -errno; -ENOSYS where this file has no such
 * assembly, and the caller falls back on clone(). */
static inline long hwc__clone3_raw(struct clone_args *args, int (*fn)(void *), void *arg)
{
#if defined(__x86_64__)
	/* syscall keeps every register but rax, rcx and r11: the child finds
	 * FN and ARG in r8 and r9; its stack top is 16-byte aligned. */
	register long r8 __asm__("r8") = (long)fn;
	register long r9 __asm__("r9") = (long)arg;
	long ret;
	__asm__ __volatile__("syscall\n\t"
			     "test %%rax, %%rax\n\t"
			     "jnz 1f\n\t"
			     "xor %%ebp, %%ebp\n\t" /* the child: its outermost frame */
			     "mov %%r9, %%rdi\n\t"
			     "call *%%r8\n\t"
			     "mov %%eax, %%edi\n\t"
			     "mov %[exit], %%eax\n\t"
			     "syscall\n\t"
			     "ud2\n"
			     "1:"
			     : "=a"(ret)
			     : "a"((long)SYS_clone3), "D"(args), "S"(sizeof(*args)), "r"(r8), "r"(r9),
			       [exit] "i"(SYS_exit)
			     : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	/* svc keeps every register but x0. */
	register long x8 __asm__("x8") = SYS_clone3;
	register long x0 __asm__("x0") = (long)args;
	register long x1 __asm__("x1") = sizeof(*args);
	register long x2 __asm__("x2") = (long)fn;
	register long x3 __asm__("x3") = (long)arg;
	__asm__ __volatile__("svc 0\n\t"
			     "cbnz x0, 1f\n\t"
			     "mov x29, xzr\n\t" /* the child: its outermost frame */
			     "mov x30, xzr\n\t"
			     "mov x0, x3\n\t"
			     "blr x2\n\t"
			     "mov x8, %[exit]\n\t"
			     "svc 0\n\t"
			     "brk #0\n"
			     "1:"
			     : "+r"(x0)
			     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), [exit] "i"(SYS_exit)
			     : "memory");
	return x0;
#else
	(void)args, (void)fn, (void)arg;
	return -ENOSYS;
#endif
}

/* The exact rate of hwc__rdtsc_insn() from the CPU itself (arm64's
 * CNTFRQ_EL0; x86 CPUID leaves 0x15/0x16 or a hypervisor's 0x40000010).
 * FIRST: whether it is better than the kernel's perf-page conversion (an
 * architectural register is; CPUID leaves are not always right). */
bool hwc__arch_tsc_rate(double *hz, enum hwc_tsc_source *src, bool *first);

/* CPU identity and the core counters this CPU reports (CPUID on x86, MIDR
 * and a group probe on arm64), into OUT. */
void hwc__arch_cpu_identity(struct hwc_cpu_info *out);
void hwc__arch_cpu_counters(struct hwc_cpu_info *out);

/* What ATTR must add to let its core-PMU counter be read from user space,
 * where the kernel asks for it (arm64: config1 bit 1, the armv8 PMU's
 * "rdpmc" format term, and only when kernel.perf_user_access is 1). */
void hwc__arch_request_user_read(struct perf_event_attr *attr);

/* Why the kernel may refuse user-space reads here, as "; ..." or "". */
const char *hwc__arch_user_read_hint(void);

/* The DWARF unwinder's registers: DWARF register r comes from perf's
 * user-register r of hwc__arch_perf_reg[r]; the stack pointer is DWARF
 * register HWC__DWARF_SP and the PC perf's HWC__PERF_PC. */
#if defined(__x86_64__)
/* rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip, as PERF_REG_X86_* */
#define HWC__DWARF_NREGS 17
#define HWC__DWARF_SP 7
#define HWC__PERF_PC 8
#define HWC__PERF_REGS_MASK 0xff0fffULL /* AX..SS and R8..R15; not DS, ES, FS, GS */
static const int hwc__arch_perf_reg[HWC__DWARF_NREGS] = {0,  3,  2,  1,  4,  5,  6,  7, 16,
							  17, 18, 19, 20, 21, 22, 23, 8};
#elif defined(__aarch64__)
/* x0..x30 and sp are DWARF 0..31 and PERF_REG_ARM64_X0..SP (LR is x30);
 * the PC (PERF_REG_ARM64_PC, 32) has no DWARF number: libdwfl takes it apart. */
#define HWC__DWARF_NREGS 32
#define HWC__DWARF_SP 31
#define HWC__PERF_PC 32
#define HWC__PERF_REGS_MASK ((1ULL << 33) - 1) /* X0..X30, SP, PC */
static const int hwc__arch_perf_reg[HWC__DWARF_NREGS] = {
	0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
#else
#define HWC__DWARF_NREGS 0
#define HWC__PERF_REGS_MASK 0ULL
#endif

#endif
