/* Target exit.  hwpmc sends the owner SIGIO when a PMC is left without
 * targets (pmc_unlink_target_process(): when its last target process
 * exits, or is detached, or the PMC is released), and pmcstat waits for
 * that signal.  Here a thread waits on a pidfd per target process.
 *
 * FreeBSD's default action for SIGIO is to ignore it, Linux's to
 * terminate: where the owner left the default, a handler that does
 * nothing is installed before the signal is sent. */
#include "pmc_impl.h"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct {
	bool running;
	int wake;   /* eventfd: the targets changed */
} w = {false, -1};

static void sigio_does_nothing(int sig)
{
	(void)sig;
}

/* FreeBSD's default action for SIGIO: nothing happens.  A handler that
 * does nothing stands in for SIG_DFL (SIG_IGN would pass to the programs
 * the owner executes); blocked, it still goes to sigwait() and signalfd(). */
static void default_is_ignore(void)
{
	struct sigaction sa;
	if (sigaction(SIGIO, NULL, &sa) != 0 || (sa.sa_flags & SA_SIGINFO) ||
	    sa.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sigio_does_nothing;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGIO, &sa, NULL);
}

void pmc__targets_gone(struct pmc__pmc *p)
{
	if (p->signalled)
		return;
	p->signalled = true;
	default_is_ignore();
	kill(getpid(), SIGIO);
}

static bool exited(int pidfd)
{
	struct pollfd pf = {pidfd, POLLIN, 0};
	return poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN);
}

/* Mark the targets that exited; a PMC whose targets all did is left
 * without targets (lock held). */
static void reap_targets(void)
{
	for (size_t i = 0; i < PMC__MAX; i++) {
		struct pmc__pmc *p = &pmc__pmcs[i];
		if (!p->used || !p->nt)
			continue;
		bool all = true;
		for (size_t k = 0; k < p->nt; k++) {
			struct pmc__target *t = &p->t[k];
			if (t->pidfd >= 0 && !t->exited && exited(t->pidfd))
				t->exited = true;
			all &= t->exited;
		}
		if (all)
			pmc__targets_gone(p);
	}
}

static void *watcher(void *arg)
{
	(void)arg;
	struct pollfd *fds = NULL;
	size_t cap = 0;
	pthread_mutex_lock(&pmc__lock);
	for (;;) {
		size_t n = 0;
		bool room = pmc__room(&fds, n, &cap, sizeof(*fds), 16);
		if (room)
			fds[n++] = (struct pollfd){w.wake, POLLIN, 0};
		for (size_t i = 0; room && i < PMC__MAX; i++)
			for (size_t k = 0; room && pmc__pmcs[i].used && k < pmc__pmcs[i].nt; k++) {
				const struct pmc__target *t = &pmc__pmcs[i].t[k];
				if (t->pidfd < 0 || t->exited)
					continue;
				if ((room = pmc__room(&fds, n, &cap, sizeof(*fds), 16)))
					fds[n++] = (struct pollfd){t->pidfd, POLLIN, 0};
			}
		pthread_mutex_unlock(&pmc__lock);
		/* Without memory, look again a little later. */
		if (poll(fds, room ? n : 0, room ? -1 : 100) > 0 && (fds[0].revents & POLLIN)) {
			uint64_t v;
			if (read(w.wake, &v, sizeof(v)) < 0)
				v = 0;
		}
		pthread_mutex_lock(&pmc__lock);
		reap_targets();
	}
	return NULL;
}

static void start(void)
{
	if (w.running)
		return;
	if (w.wake < 0 && (w.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return;
	/* The watcher takes no signal: created with all of them blocked. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t th;
	if (pthread_create(&th, NULL, watcher, NULL) == 0) {
		pthread_detach(th);
		w.running = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void wake(void)
{
	uint64_t one = 1;
	if (w.wake >= 0 && write(w.wake, &one, sizeof(one)) < 0)
		return; /* the counter is full: the watcher is awake anyway */
}

void pmc__watch_target(struct pmc__target *t)
{
	t->pidfd = -1;
	t->exited = false;
	if (t->pid == getpid())
		return; /* the owner does not see its own exit */
	/* Before Linux 5.3 there are no pidfds, and no SIGIO. */
	t->pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0);
	if (t->pidfd < 0)
		return;
	start();
	wake();
}

void pmc__unwatch_target(struct pmc__target *t)
{
	if (t->pidfd >= 0) {
		close(t->pidfd);
		t->pidfd = -1;
		wake();
	}
}

void pmc__watch_forget(void)
{
	/* The watcher and its eventfd are the parent's. */
	if (w.wake >= 0)
		close(w.wake);
	w.wake = -1;
	w.running = false;
}
