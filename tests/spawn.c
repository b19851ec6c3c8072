/* Live tests of starting a command (HWC_TARGET_COMMAND): counted from its
 * exec, its own copy of argv and signal handling, found along PATH as
 * execvp would, reaped when its caller goes, and through clone() where
 * clone3 is refused.  Software events; the hardware suite runs it on a
 * real PMU too. */
#include <hwc/hwc.h>

#include "check.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_command(void)
{
	hwc_evlist *l = check_evlist("page-faults,task-clock");
	char *argv[] = {workload("pagetouch"), "2000", NULL};
	struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	hwc_counters *c = check_counters_open(l, &t);
	pid_t pid = hwc_counters_pid(c);
	CHECK(pid > 0);
	hwc_counters_read(c);
	CHECK_U64(check_value(c, 0), ==, 0); /* nothing before exec */
	CHECK_OK(hwc_counters_start(c));
	/* Its pidfd: from the clone3 that made it, or pidfd_open. */
	int fd = hwc_counters_wait_fd(c);
	CHECK(fd >= 0);
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	CHECK_INT(poll(&pfd, 1, 10000), ==, 1);
	CHECK_INT(hwc_counters_wait_fd(c), ==, fd);
	int status;
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	hwc_counters_read(c);
	CHECK_U64(check_value(c, 0), >=, 2000);
	CHECK_U64(check_value(c, 0), <, 2200);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

static void test_command_not_found(void)
{
	hwc_evlist *l = check_evlist("task-clock");
	char *argv[] = {"/nonexistent/hwc-no-such-command", NULL};
	struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	hwc_counters *c = check_counters_open(l, &t);
	CHECK_INT(hwc_counters_start(c), ==, -ENOENT);
	CHECK_STR_CONTAINS(hwc_errdetail(), "cannot execute");
	CHECK_INT(hwc_counters_pid(c), ==, -1); /* reaped */
	hwc_counters_close(c);
	/* A child never started is reaped by close, not left behind. */
	char *argv2[] = {"true", NULL};
	t.argv = argv2;
	c = check_counters_open(l, &t);
	pid_t pid = hwc_counters_pid(c);
	hwc_counters_close(c);
	CHECK_INT(waitpid(pid, NULL, WNOHANG), ==, -1);
	CHECK_INT(errno, ==, ECHILD);
	hwc_evlist_free(l);
}

static volatile sig_atomic_t usr1_seen;
static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen++;
}

/* A counter of the execve calls PID makes from now on, or -1 where the
 * tracepoint cannot be opened. */
static int execve_counter(pid_t pid)
{
	static const char *const ids[] = {"/sys/kernel/tracing/events/syscalls/sys_enter_execve/id",
					  "/sys/kernel/debug/tracing/events/syscalls/sys_enter_execve/id"};
	unsigned long long id = 0;
	for (size_t i = 0; i < 2 && !id; i++) {
		FILE *f = fopen(ids[i], "r");
		if (f && fscanf(f, "%llu", &id) != 1)
			id = 0;
		if (f)
			fclose(f);
	}
	struct perf_event_attr a = {.type = PERF_TYPE_TRACEPOINT, .size = sizeof(a), .config = id};
	return id ? (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC) : -1;
}

/* The command run as PATH finds it: the exit status of COMMAND, started
 * through the library (whose child looks along PATH while the events
 * open), or -1000 + the start's -errno when it could not execute.  *EXECS:
 * the execve calls of its start, or -1 where they cannot be counted. */
static int exit_status_of(char *command, long long *execs)
{
	hwc_evlist *l = check_evlist("task-clock");
	char *argv[] = {command, NULL};
	struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	hwc_counters *c = check_counters_open(l, &t);
	pid_t pid = hwc_counters_pid(c);
	int fd = execve_counter(pid);
	int status = -1, err = hwc_counters_start(c);
	if (err)
		status = -1000 + err;
	else if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		status = WEXITSTATUS(status);
	*execs = -1;
	if (fd >= 0 && read(fd, execs, sizeof(*execs)) != sizeof(*execs))
		*execs = -1;
	if (fd >= 0)
		close(fd);
	hwc_counters_close(c);
	hwc_evlist_free(l);
	return status;
}

/* The command found as execvp(3) finds it, with one execve where the
 * child's own look along PATH found it: past a file it may not execute and
 * a directory without it; the current directory for an empty PATH entry.
 * Where the child's look and execve disagree, as execvp would have it: a
 * directory of the command's name, a script without #! run by /bin/sh, a
 * symbolic link loop (execvp stops there).  And execvp's default path
 * without PATH. */
static void test_command_found_as_execvp_would(void)
{
	char dir[] = "/tmp/hwc-path-XXXXXX", path[256], sub[200];
	CHECK(mkdtemp(dir) != NULL);
	const char *saved = getenv("PATH");
	char *old_path = saved ? strdup(saved) : NULL;
	for (int i = 0; i < 6; i++) {
		snprintf(sub, sizeof(sub), "%s/%c", dir, 'a' + i);
		CHECK_INT(mkdir(sub, 0700), ==, 0);
	}
	static const struct {
		const char *name, *text;
		mode_t mode;
	} files[] = {
		{"b/hwc-probe", "#!/bin/sh\nexit 3\n", 0600}, /* not executable */
		{"c/hwc-probe", "#!/bin/sh\nexit 7\n", 0700},
		{"f/hwc-probe", "#!/bin/sh\nexit 8\n", 0700},
		{"d/hwc-noexec", "exit 5\n", 0700}, /* ENOEXEC: execvp runs /bin/sh */
		{"c/hwc-loop", "#!/bin/sh\nexit 9\n", 0700},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		check_write_file(path, files[i].text, files[i].mode);
	}
	snprintf(path, sizeof(path), "%s/a/hwc-probe", dir);
	CHECK_INT(mkdir(path, 0700), ==, 0); /* access(X_OK) passes, execve fails */
	snprintf(path, sizeof(path), "%s/e/hwc-loop", dir);
	CHECK_INT(symlink("hwc-loop", path), ==, 0);

	long long execs;
	snprintf(path, sizeof(path), "%s/b:%s/d:%s/c", dir, dir, dir);
	CHECK_INT(setenv("PATH", path, 1), ==, 0);
	CHECK_INT(exit_status_of("hwc-probe", &execs), ==, 7);
	if (execs < 0)
		printf("  (not counting execve calls: no syscalls:sys_enter_execve tracepoint here)\n");
	else
		CHECK_INT(execs, ==, 1); /* execvp alone makes 3 */

	snprintf(path, sizeof(path), "%s/a:%s/b:%s/c:%s/d", dir, dir, dir, dir);
	CHECK_INT(setenv("PATH", path, 1), ==, 0);
	CHECK_INT(exit_status_of("hwc-probe", &execs), ==, 7);
	CHECK_INT(exit_status_of("hwc-noexec", &execs), ==, 5);
	snprintf(path, sizeof(path), "%s/e:%s/c", dir, dir);
	CHECK_INT(setenv("PATH", path, 1), ==, 0);
	CHECK_INT(exit_status_of("hwc-loop", &execs), ==, -1000 - ELOOP);

	char cwd[4096];
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	snprintf(sub, sizeof(sub), "%s/c", dir);
	CHECK_INT(chdir(sub), ==, 0);
	snprintf(path, sizeof(path), ":%s/f", dir); /* "": the current directory, first */
	CHECK_INT(setenv("PATH", path, 1), ==, 0);
	CHECK_INT(exit_status_of("hwc-probe", &execs), ==, 7);
	if (execs >= 0)
		CHECK_INT(execs, ==, 1);
	CHECK_INT(chdir(cwd), ==, 0);

	CHECK_INT(unsetenv("PATH"), ==, 0); /* execvp's default: /bin:/usr/bin */
	CHECK_INT(exit_status_of("true", &execs), ==, 0);
	if (old_path)
		setenv("PATH", old_path, 1);
	free(old_path);

	const char *names[] = {"a/hwc-probe", "b/hwc-probe", "c/hwc-probe", "f/hwc-probe",
			       "d/hwc-noexec", "c/hwc-loop", "e/hwc-loop", "a", "b", "c", "d", "e", "f", ""};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		CHECK_INT(remove(path), ==, 0);
	}
}

/* The command waits for its start in the caller's memory (it is not a
 * fork): what it runs is a copy of argv, taken at open, and no handler of
 * the caller's runs in it; a signal sent to it before its exec acts as on
 * the command. */
static void test_command_is_its_own(void)
{
	hwc_evlist *l = check_evlist("task-clock");
	char **argv = calloc(4, sizeof(char *));
	argv[0] = strdup("sh"), argv[1] = strdup("-c"), argv[2] = strdup("exit 7");
	struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
	hwc_counters *c = check_counters_open(l, &t);
	for (size_t i = 0; i < 3; i++) {
		memset(argv[i], 'x', strlen(argv[i]));
		free(argv[i]);
		argv[i] = "false";
	}
	free(argv);
	pid_t pid = hwc_counters_pid(c);
	CHECK_OK(hwc_counters_start(c));
	int status;
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), ==, 7);
	hwc_counters_close(c);

	usr1_seen = 0;
	struct sigaction sa = {.sa_handler = on_usr1}, old;
	sigaction(SIGUSR1, &sa, &old);
	char *true_argv[] = {"true", NULL};
	t.argv = true_argv;
	c = check_counters_open(l, &t);
	pid = hwc_counters_pid(c);
	CHECK_INT(kill(pid, SIGUSR1), ==, 0);
	CHECK_OK(hwc_counters_start(c));
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK_INT(usr1_seen, ==, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1);
	raise(SIGUSR1); /* the caller's handler is still its own */
	CHECK_INT(usr1_seen, ==, 1);
	sigaction(SIGUSR1, &old, NULL);
	hwc_counters_close(c);
	hwc_evlist_free(l);
}

/* A caller killed between open and start leaves no command behind
 * waiting for a release that cannot come: the command quits (127, never
 * exec'd) once its parent is gone.  This process is the subreaper, so the
 * orphan is its child to wait for. */
static void test_command_outlives_no_caller(void)
{
	CHECK_INT(prctl(PR_SET_CHILD_SUBREAPER, 1), ==, 0);
	int p[2];
	CHECK_INT(pipe(p), ==, 0);
	pid_t caller = fork();
	if (caller == 0) {
		hwc_evlist *l = check_evlist("task-clock");
		char *argv[] = {"true", NULL};
		struct hwc_target t = {.kind = HWC_TARGET_COMMAND, .argv = argv};
		hwc_counters *c = check_counters_open(l, &t);
		pid_t pid = hwc_counters_pid(c);
		if (write(p[1], &pid, sizeof(pid)) != sizeof(pid))
			_exit(1);
		pause();
		_exit(0);
	}
	pid_t command = -1;
	CHECK_INT(read(p[0], &command, sizeof(command)), ==, (int)sizeof(command));
	close(p[0]);
	close(p[1]);
	CHECK_INT(kill(caller, SIGKILL), ==, 0);
	CHECK_INT(waitpid(caller, NULL, 0), ==, caller);
	int status = 0;
	pid_t r = 0;
	for (int i = 0; i < 1000 && (r = waitpid(command, &status, WNOHANG)) == 0; i++)
		usleep(10 * 1000);
	CHECK_INT(r, ==, command);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 127);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* Where clone3 is refused (before Linux 5.5, or a seccomp profile that
 * answers ENOSYS, as Docker's default does), the command starts through
 * clone(), resets the caller's handlers itself and is watched through
 * pidfd_open: the command tests pass again in a process whose filter
 * refuses clone3. */
static void test_command_without_clone3(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		check_failures = 0; /* this process's own */
		struct sock_filter filter[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {.len = sizeof(filter) / sizeof(filter[0]), .filter = filter};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(77); /* no seccomp here */
		if (syscall(SYS_clone3, NULL, (size_t)0) != -1 || errno != ENOSYS)
			_exit(3); /* the filter does not hold */
		test_command();
		test_command_is_its_own();
		test_command_not_found();
		_exit(check_failures ? 1 : 0);
	}
	int status;
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFEXITED(status));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		SKIP_SUB("no seccomp filter can be installed here (CONFIG_SECCOMP_FILTER off?)");
		return;
	}
	CHECK_INT(WEXITSTATUS(status), ==, 0);
}

int main(void)
{
	RUN(test_command);
	RUN(test_command_not_found);
	RUN(test_command_found_as_execvp_would);
	RUN(test_command_is_its_own);
	RUN(test_command_outlives_no_caller);
	RUN(test_command_without_clone3);
	return check_exit();
}
