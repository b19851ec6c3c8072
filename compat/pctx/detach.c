/* Letting go: pctx_release() detaches every thread of the controlled
 * process, which runs on (it is never killed and never left stopped). */
#include "pctx_impl.h"

#include <errno.h>
#include <sys/wait.h>

/* Detach every thread: stop the running ones first (the kernel requires a
 * ptrace-stop), keep pending signals, and let new tracees go too. */
static void detach_all(pctx_t *p)
{
	/* New tracees first: a vfork parent waits for its child to run. */
	for (size_t i = 0; i < p->nearly; i++)
		if (WIFSTOPPED(p->early[i].status))
			ptrace(PTRACE_DETACH, p->early[i].tid, 0, 0);
	p->nearly = 0;
	for (size_t i = 0; i < p->nlwp; i++) {
		struct lwp *l = &p->lwp[i];
		if (l->exiting && l->state == LWP_RUNNING) {
			/* Let go at its exit: it dies without another stop (a dead
			 * leader waits for the whole process, so do not wait). */
			waitpid(l->tid, NULL, WNOHANG | __WALL);
			l->state = LWP_GONE;
		}
		if (l->state == LWP_RUNNING || l->state == LWP_LISTENING)
			ptrace(PTRACE_INTERRUPT, l->tid, 0, 0);
	}
	for (size_t i = 0; i < p->nlwp; i++) {
		while (p->lwp[i].state == LWP_RUNNING || p->lwp[i].state == LWP_LISTENING) {
			struct lwp *l = &p->lwp[i];
			int st;
			if (!pctx__wait_stop(l, &st))
				break;
			int event = (unsigned)st >> 16;
			bool listening = l->state == LWP_LISTENING;
			pctx__note_stop(l, st);
			if (listening && event == PTRACE_EVENT_STOP)
				l->group_stop = true; /* still job-control stopped: stays so */
			if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
			    event == PTRACE_EVENT_VFORK) {
				pid_t tid = (pid_t)pctx__geteventmsg(l->tid);
				int nst;
				bool waited = tid > 0 && (pctx__take_early(p, tid, &nst) ||
							  pctx__wait_tid(tid, &nst) == 0);
				if (waited && WIFSTOPPED(nst))
					ptrace(PTRACE_DETACH, tid, 0, 0);
				/* Let the creator finish its call, then stop it again. */
				pctx__finish_call(l, l->inject);
				l->inject = 0;
			}
		}
	}
	for (size_t i = 0; i < p->nlwp; i++) {
		struct lwp *l = &p->lwp[i];
		if (l->state == LWP_STOPPED)
			ptrace(PTRACE_DETACH, l->tid, 0, l->inject);
		l->state = LWP_GONE;
	}
}

PCTX_EXPORT void pctx_release(pctx_t *p)
{
	if (!p)
		return;
	detach_all(p);
	/* A created process that has exited is our child: reap it. */
	if (p->created && p->exited) {
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	pctx__free_handle(p);
}
