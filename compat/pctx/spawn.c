/* Taking control of a process: pctx_create() starts a program and holds
 * it just after its exec; pctx_capture() seizes every thread of a running
 * process and brings each to a stop. */
#include "pctx_impl.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* State letter and flags from /proc/PID/stat; false if there is no such process. */
static bool proc_stat(pid_t pid, char *state, unsigned long *flags)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command may contain spaces and ')' */
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		return false;
	return true;
}

/* Bring every seized thread of P to a stop before the caller sets events:
 * PTRACE_INTERRUPT was sent to each LWP_RUNNING one. */
static void settle(pctx_t *p)
{
	for (size_t i = 0; i < p->nlwp; i++) {
		struct lwp *l = &p->lwp[i];
		while (l->state == LWP_RUNNING) {
			int st;
			if (!pctx__wait_stop(l, &st))
				break;
			int event = (unsigned)st >> 16;
			pctx__note_stop(l, st);
			if (event == PTRACE_EVENT_CLONE) {
				/* A thread started meanwhile: it is traced already. */
				pid_t tid = (pid_t)pctx__geteventmsg(l->tid);
				if (tid > 0 && !pctx__find_lwp(p, tid)) {
					int nst;
					if (pctx__wait_tid(tid, &nst) == 0 && WIFSTOPPED(nst)) {
						struct lwp *n = pctx__add_lwp(p, tid, p->next_id);
						l = &p->lwp[i]; /* add_lwp may move the array */
						if (!n)
							ptrace(PTRACE_DETACH, tid, 0, 0);
					}
				}
				pctx__finish_call(l, 0);
			} else if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
				/* Not followed yet: let the child go. */
				pid_t child = (pid_t)pctx__geteventmsg(l->tid);
				int nst;
				if (child > 0 && pctx__wait_tid(child, &nst) == 0 &&
				    WIFSTOPPED(nst))
					ptrace(PTRACE_DETACH, child, 0, 0);
				pctx__finish_call(l, 0);
			} else if (event == PTRACE_EVENT_EXIT) {
				l->exiting = true;
			}
		}
	}
}

PCTX_EXPORT pctx_t *pctx_capture(pid_t pid, void *arg, int verbose, pctx_errfn_t *errfn)
{
	static const char fn[] = "capture";
	pctx_t *p = pctx__new_handle(fn, pid, arg, verbose, errfn);
	if (!p)
		return NULL;
	char state;
	unsigned long flags;
	if (pid <= 0 || !proc_stat(pid, &state, &flags)) {
		pctx__report(p, fn, "pid %d doesn't exist\n", (int)pid);
		goto fail;
	}
	if (pid == getpid()) {
		pctx__report(p, fn, "cannot capture self!\n");
		goto fail;
	}
	if (state == 'Z' || state == 'X') {
		pctx__report(p, fn, "pid %d is a zombie\n", (int)pid);
		goto fail;
	}
	if (flags & 0x00200000) { /* PF_KTHREAD */
		pctx__report(p, fn, "pid %d is a system process\n", (int)pid);
		goto fail;
	}
	if (pctx__proc_status_field(pid, "TracerPid") > 0) {
		pctx__report(p, fn, "pid %d is already being traced\n", (int)pid);
		goto fail;
	}
	/* Seize every thread; again until no new thread shows up. */
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	bool added = true;
	while (added) {
		added = false;
		DIR *d = opendir(dir);
		if (!d) {
			if (p->nlwp)
				break;
			pctx__report(p, fn, "pid %d doesn't exist\n", (int)pid);
			goto fail;
		}
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid <= 0 || pctx__find_lwp(p, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, p->options) < 0) {
				if (errno == ESRCH)
					continue; /* exited meanwhile */
				/* Auto-attached as a new thread: settle() adds it. */
				if (errno == EPERM &&
				    pctx__proc_status_field(tid, "TracerPid") == getpid())
					continue;
				int e = errno;
				closedir(d);
				if (e == EPERM)
					pctx__report(p, fn,
						     "pid %d: permission denied (ptrace access to it "
						     "is needed: same user, or root; see ptrace(2))\n",
						     (int)pid);
				else
					pctx__report(p, fn, "cannot trace pid %d: %s\n", (int)pid,
						     strerror(e));
				goto fail;
			}
			struct lwp *l = pctx__add_lwp(p, tid, 0);
			if (!l) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				closedir(d);
				pctx__report(p, fn, "out of memory\n");
				goto fail;
			}
			l->state = LWP_RUNNING;
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			added = true;
		}
		closedir(d);
	}
	/* illumos numbering: the main thread is LWP 1, the others follow by tid. */
	p->next_id = 2;
	for (size_t i = 0; i < p->nlwp; i++)
		if (p->lwp[i].tid == pid)
			p->lwp[i].id = 1;
	for (pid_t last = 0;;) {
		struct lwp *lowest = NULL;
		for (size_t i = 0; i < p->nlwp; i++)
			if (p->lwp[i].id == 0 && p->lwp[i].tid > last &&
			    (!lowest || p->lwp[i].tid < lowest->tid))
				lowest = &p->lwp[i];
		if (!lowest)
			break;
		lowest->id = p->next_id++;
		last = lowest->tid;
	}
	settle(p);
	if (!pctx__find_lwp(p, pid) && pctx__running_threads(p, NULL) == 0) {
		pctx__report(p, fn, "pid %d doesn't exist\n", (int)pid);
		goto fail;
	}
	return p;
fail:
	pctx_release(p); /* lets go of the threads seized so far, if any */
	return NULL;
}

/* The fork, go pipe and exec-status pipe are libhwc's hwc__child_spawn()
 * again, written out here on purpose: libpctx does not link libhwc (it only
 * controls processes; libcpc, which links both, counts), the core's spawner
 * is internal, and pctx_create() must seize the child between the fork and
 * the go signal, then hold it at its exec, which that spawner has no hook
 * for. */
PCTX_EXPORT pctx_t *pctx_create(const char *filename, char *const *argv, void *arg, int verbose,
				pctx_errfn_t *errfn)
{
	static const char fn[] = "create";
	pctx_t *p = pctx__new_handle(fn, 0, arg, verbose, errfn);
	if (!p)
		return NULL;
	int go[2], st[2];
	if (!filename || !*filename || !argv) {
		pctx__report(p, fn, "no program to run\n");
		goto fail;
	}
	if (pipe2(go, O_CLOEXEC) < 0) {
		pctx__report(p, fn, "cannot fork, program '%s': %s\n", filename, strerror(errno));
		goto fail;
	}
	if (pipe2(st, O_CLOEXEC) < 0) {
		pctx__report(p, fn, "cannot fork, program '%s': %s\n", filename, strerror(errno));
		close(go[0]);
		close(go[1]);
		goto fail;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		pctx__report(p, fn, "cannot fork, program '%s': %s\n", filename, strerror(errno));
		close(go[0]), close(go[1]), close(st[0]), close(st[1]);
		goto fail;
	}
	if (pid == 0) {
		/* Wait until traced, then exec; an exec failure goes up the pipe. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(go[1]);
		close(st[0]);
		char x;
		ssize_t r;
		do
			r = read(go[0], &x, 1);
		while (r < 0 && errno == EINTR);
		if (r != 1)
			_exit(127);
		execvp(filename, argv);
		int e = errno;
		if (write(st[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(st[1]);
	p->pid = pid;
	p->created = true;
	if (ptrace(PTRACE_SEIZE, pid, 0, p->options) < 0) {
		pctx__report(p, fn, "cannot trace program '%s': %s\n", filename, strerror(errno));
		close(go[1]), close(st[0]);
		waitpid(pid, NULL, 0); /* EOF on the pipe: the child exits */
		goto fail;
	}
	ssize_t w;
	do
		w = write(go[1], "x", 1);
	while (w < 0 && errno == EINTR);
	close(go[1]);
	/* Run it to the end of its exec (PTRACE_EVENT_EXEC), or to its death. */
	for (;;) {
		int status;
		if (pctx__wait_tid(pid, &status) < 0) {
			pctx__report(p, fn, "lost program '%s': %s\n", filename, strerror(errno));
			ptrace(PTRACE_DETACH, pid, 0, 0);
			close(st[0]);
			goto fail;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			int e = 0;
			ssize_t r;
			do
				r = read(st[0], &e, sizeof(e));
			while (r < 0 && errno == EINTR);
			close(st[0]);
			if (r == (ssize_t)sizeof(e) && e == ENOENT)
				pctx__report(p, fn, "cannot find program '%s'\n", filename);
			else if (r == (ssize_t)sizeof(e))
				pctx__report(p, fn, "cannot execute program '%s': %s\n", filename,
					     strerror(e));
			else
				pctx__report(p, fn, "program '%s' died before it started\n",
					     filename);
			goto fail;
		}
		int event = (unsigned)status >> 16;
		if (event == PTRACE_EVENT_EXEC)
			break;
		int sig = event == 0 ? WSTOPSIG(status) : 0;
		ptrace(PTRACE_CONT, pid, 0, sig);
	}
	close(st[0]);
	if (!pctx__add_lwp(p, pid, 1)) {
		/* Never leave the program stopped under our trace: let it run. */
		ptrace(PTRACE_DETACH, pid, 0, 0);
		pctx__report(p, fn, "out of memory\n");
		goto fail;
	}
	return p;
fail:
	pctx__free_handle(p); /* it holds no LWP yet */
	return NULL;
}
