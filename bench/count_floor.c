/* count_floor COMMAND [ARGS]: the least any tool counting a command's
 * task-clock does, as a start-up floor to set hwc stat beside (bench/run):
 * start the command waiting in this process's memory, open one counter on
 * it, let it exec, wait for it, read the counter and print one line.  No
 * option parsing, no event names, no signal care, no error report beyond
 * the exit status.  Linked with libc alone, as bin/hwc is. */
#include <errno.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static uint32_t go, alive = 1;

static int child(void *argv)
{
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &go, FUTEX_WAIT, 0, NULL, NULL, 0);
	execvp(((char **)argv)[0], argv);
	_exit(127);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: count_floor command [args]\n");
		return 2;
	}
	size_t size = 64 * 1024;
	char *stack = malloc(size);
	if (!stack)
		return 1;
	pid_t pid = clone(child, stack + size, CLONE_VM | CLONE_CHILD_CLEARTID | SIGCHLD, argv + 1,
			  NULL, NULL, &alive);
	if (pid < 0)
		return 1;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.disabled = 1,
		.inherit = 1,
		.enable_on_exec = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &go, FUTEX_WAKE, 1, NULL, NULL, 0);
	while (__atomic_load_n(&alive, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &alive, FUTEX_WAIT, 1, NULL, NULL, 0);
	int status;
	if (waitpid(pid, &status, 0) != pid || fd < 0)
		return 1;
	uint64_t ns;
	if (read(fd, &ns, sizeof(ns)) != sizeof(ns))
		return 1;
	fprintf(stderr, "%.2f msec task-clock\n", (double)ns / 1e6);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
