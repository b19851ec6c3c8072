/* A workload for symbols without a size: sizeless_spin is an assembly
 * function with a type but no .size, as hand-written assembly and gcc's
 * crtstuff (deregister_tm_clones, __do_global_dtors_aux) often have; the
 * sized function sized_after follows it.  perf gives a sizeless symbol the
 * extent up to the next symbol's start, so that is where its samples go.
 * Usage: sizeless [rounds] (default 1000, about a second). */
#include <stdlib.h>

unsigned long sizeless_spin(unsigned long n); /* n > 0 rounds of a few adds */
unsigned long sized_after(unsigned long n);

#if defined(__x86_64__)
__asm__(".text\n"
	".globl sizeless_spin\n"
	".type sizeless_spin, @function\n"
	".p2align 4\n"
	"sizeless_spin:\n"
	"	xor %eax, %eax\n"
	"1:	add $1, %rax\n"
	"	add $3, %rax\n"
	"	add $5, %rax\n"
	"	sub $1, %rdi\n"
	"	jnz 1b\n"
	"	ret\n"
	".globl sized_after\n"
	".type sized_after, @function\n"
	".p2align 4\n"
	"sized_after:\n"
	"	lea 1(%rdi), %rax\n"
	"	ret\n"
	".size sized_after, .-sized_after\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl sizeless_spin\n"
	".type sizeless_spin, %function\n"
	".p2align 4\n"
	"sizeless_spin:\n"
	"	mov x1, #0\n"
	"1:	add x1, x1, #1\n"
	"	add x1, x1, #3\n"
	"	add x1, x1, #5\n"
	"	subs x0, x0, #1\n"
	"	b.ne 1b\n"
	"	mov x0, x1\n"
	"	ret\n"
	".globl sized_after\n"
	".type sized_after, %function\n"
	".p2align 4\n"
	"sized_after:\n"
	"	add x0, x0, #1\n"
	"	ret\n"
	".size sized_after, .-sized_after\n");
#else
#error "sizeless: no assembly for this architecture"
#endif

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000; /* about 1 ms of CPU each */
	unsigned long sum = 0;
	for (long i = 0; i < rounds; i++)
		sum += sizeless_spin(1000000) + sized_after(sum);
	return sum == 42;
}
