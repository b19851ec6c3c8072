/* An illumos libpctx client, built by tests/compat_clients.sh with nothing but
 *     cc pctx_example.c $(pkg-config --cflags --libs libpctx)
 * Runs /bin/true under libpctx's control and sees its main LWP start and
 * the process exit: prints "ok 1 1". */
#include <libpctx.h>
#include <stdio.h>

static int inits, exits;

static int on_init(pctx_t *p, pid_t pid, id_t lwp, void *arg)
{
	(void)p, (void)pid, (void)arg;
	inits += lwp == 1;
	return 0;
}

static void on_exit_(pctx_t *p, pid_t pid, id_t lwp, int status, void *arg)
{
	(void)p, (void)pid, (void)lwp, (void)arg;
	exits += status == 0;
}

int main(void)
{
	char *argv[] = {"true", NULL};
	pctx_t *p = pctx_create("/bin/true", argv, NULL, 0, NULL);
	if (!p || pctx_set_events(p, PCTX_INIT_LWP_EVENT, on_init, PCTX_SYSC_EXIT_EVENT, on_exit_,
				  PCTX_NULL_EVENT) != 0 ||
	    pctx_run(p, 0, 0, NULL) != 0)
		return 1;
	pctx_release(p);
	printf("ok %d %d\n", inits, exits);
	return 0;
}
