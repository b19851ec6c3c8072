/* Built twice by tests/report_fold.py, static, without libc and at fixed
 * addresses, as "one" (-DSPIN=spin_one) and "two" (-DSPIN=spin_two): the
 * same code at the same addresses under two names.  One spins, then execs
 * the other in the same process, so the same raw call chains (the frame
 * pointers end at _start: nothing random on them) mean two functions.
 * x86-64 Linux: its own _start and system calls. */
static volatile unsigned long sink;

/* Data after the code, so that the two files differ in their build-ids
 * (perf's cache would take one for the other), not in their addresses. */
#define NAME(x) #x
#define STRING(x) NAME(x)
__attribute__((used)) static const char name[] = STRING(SPIN);

__attribute__((noinline)) static void SPIN(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

static long syscall3(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}

/* spin N [PROGRAM ARGS...]: N million rounds, then exec PROGRAM. */
__attribute__((noreturn, used)) static void start(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	unsigned long n = 0;
	for (const char *p = argc > 1 ? argv[1] : ""; *p >= '0' && *p <= '9'; p++)
		n = n * 10 + (unsigned long)(*p - '0');
	SPIN(n * 1000000ul);
	if (argc > 2)
		syscall3(59 /* execve */, (long)argv[2], (long)(argv + 2), (long)(argv + argc + 1));
	for (;;)
		syscall3(60 /* exit */, argc > 2, 0, 0);
}

/* No caller's frame: %rbp 0 ends the chain. */
__asm__(".globl _start\n_start:\n\txor %ebp, %ebp\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n\tcall start\n");
