/* Whole-CPU counters for pctr(4), as OpenBSD has them: a function set with
 * PCIOCSx counts on every CPU and stays set after the setting process
 * exits, and any process reads the counts of the CPU it runs on.
 *
 * The counters are perf events that must outlive their setter, so a small
 * helper process holds them: the first PCIOCSx that needs one forks it
 * (a daemon, in its own session, named "pctrd"), and it exits once every
 * function is 0 again.  It listens on an abstract UNIX socket, by default
 * "@hwc-pctr" ($HWC_PCTR_SOCKET names another: tests use their own).  A
 * request is one SOCK_SEQPACKET message, so is its reply.
 *
 * Trust, both ways, by the kernel's SO_PEERCRED: a client talks only to a
 * helper owned by root or by its own user (anyone may bind an abstract
 * name; a helper of another user is never used), and the helper takes
 * functions only from root and its own user.  Readers get the counts, not
 * the helper's descriptors: a perf event descriptor lets its holder
 * disable, reset or reprogram the event for everyone. */
#include "cpus.h"

#include "../common/devshim.h"
#include "function.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

enum { OP_SET = 1, OP_READ = 2 };

struct request {
	uint32_t op;
	uint32_t ctr, fn; /* OP_SET */
	int32_t cpu;      /* OP_READ */
};

struct reply {
	int32_t err; /* 0 or the errno of the request */
	struct pctrst st;
};

/* The helper's address; returns its length. */
static socklen_t helper_address(struct sockaddr_un *a)
{
	const char *name = secure_getenv("HWC_PCTR_SOCKET");
	if (!name || !*name)
		name = "hwc-pctr";
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	size_t n = strnlen(name, sizeof(a->sun_path) - 1);
	memcpy(a->sun_path + 1, name, n); /* sun_path[0] = 0: the abstract namespace */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static uid_t peer_uid(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 ? cr.uid : (uid_t)-1;
}

static bool trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* ------------------------------------------------------------------ the helper */

static struct cpu_counter {
	unsigned fn;
	hwc_counters *c; /* NULL: never set */
	bool counts;
} slots[PCTR_NUM];
static pctrval value_mask = ~0ULL;

static int helper_set(unsigned n, unsigned fn)
{
	uint64_t evtsel;
	bool counts;
	int err = pctr_function_evtsel(fn, &evtsel, &counts);
	if (err)
		return err;
	hwc_counters *c = NULL;
	if (fn) {
		err = devshim_cpus_counter_open(evtsel, &c);
		if (!err && counts && hwc_counters_start(c) < 0)
			err = EIO;
		if (err) {
			hwc_counters_close(c);
			return err; /* the counter keeps its previous function */
		}
	}
	hwc_counters_close(slots[n].c);
	slots[n] = (struct cpu_counter){fn, c, counts};
	return 0;
}

static int helper_read(int cpu, struct pctrst *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned i = 0; i < PCTR_NUM; i++)
		st->pctr_fn[i] = slots[i].fn;
	st->pctr_tsc = hwc_rdtsc();
	for (unsigned i = 0; i < PCTR_NUM; i++) {
		if (!slots[i].counts)
			continue;
		size_t inst = 0, n = hwc_counters_ninstances(slots[i].c);
		while (inst < n && hwc_counters_instance_cpu(slots[i].c, inst) != cpu)
			inst++;
		if (inst == n)
			return ENXIO; /* the CPU was offline when the function was set */
		struct hwc_value v;
		int err = hwc_counters_read_fast(slots[i].c, inst, 0, &v);
		if (err)
			return -err;
		st->pctr_hwc[i] = v.raw & value_mask;
	}
	return 0;
}

static bool all_unset(void)
{
	for (unsigned i = 0; i < PCTR_NUM; i++)
		if (slots[i].fn)
			return false;
	return true;
}

/* Answer one request of client FD; false when the client is gone. */
static bool helper_answer(int fd, uid_t uid)
{
	struct request rq;
	ssize_t n = recv(fd, &rq, sizeof(rq), 0);
	if (n < 0 && errno == EINTR)
		return true;
	if (n != (ssize_t)sizeof(rq))
		return false;
	struct reply rp = {0};
	if (rq.op == OP_SET && rq.ctr < PCTR_NUM)
		rp.err = trusted(uid) ? helper_set(rq.ctr, rq.fn) : EPERM;
	else if (rq.op == OP_READ)
		rp.err = helper_read(rq.cpu, &rp.st);
	else
		rp.err = EINVAL;
	/* Never wait on a client: one that reads no replies is dropped. */
	return send(fd, &rp, sizeof(rp), MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof(rp);
}

/* The helper's life: listen, tell the starter through READY (0, or the
 * errno of bind: EADDRINUSE when another helper has the name), serve until
 * no function is left. */
static __attribute__((noreturn)) void helper_main(int ready)
{
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Nothing of the starter stays open: its pipes would never see EOF. */
	int null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
	    dup2(ready, 3) < 0)
		_exit(1);
	ready = 3;
	close_range(4, ~0U, 0);
	prctl(PR_SET_NAME, "pctrd");
	if (chdir("/") < 0)
		_exit(1);

	struct sockaddr_un a;
	socklen_t alen = helper_address(&a);
	int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int err = ls < 0 || bind(ls, (struct sockaddr *)&a, alen) < 0 || listen(ls, 64) < 0 ? errno : 0;
	if (write(ready, &err, sizeof(err)) != sizeof(err) || err)
		_exit(0);
	close(ready);

	struct hwc_cpu_info info;
	if (hwc_cpu_info(&info) == 0 && info.core_pmu && info.counter_width > 0 &&
	    info.counter_width < 64)
		value_mask = (1ULL << info.counter_width) - 1;

	struct pollfd *pfd = calloc(1, sizeof(*pfd));
	uid_t *uids = calloc(1, sizeof(*uids));
	size_t nfd = 1;
	if (!pfd || !uids)
		_exit(1);
	pfd[0] = (struct pollfd){.fd = ls, .events = POLLIN};
	for (;;) {
		/* A helper whose starter never set anything does not stay. */
		int ready_fds = poll(pfd, nfd, all_unset() ? 10000 : -1);
		if (ready_fds == 0)
			_exit(0);
		if (ready_fds < 0)
			continue;
		for (size_t i = nfd; i-- > 1;) {
			if (!pfd[i].revents)
				continue;
			if (!(pfd[i].revents & POLLIN) || !helper_answer(pfd[i].fd, uids[i])) {
				close(pfd[i].fd);
				pfd[i] = pfd[--nfd];
				uids[i] = uids[nfd];
			}
			if (all_unset()) {
				/* Stop taking clients first, so none finds a helper on its way out. */
				close(ls);
				_exit(0);
			}
		}
		if (pfd[0].revents & POLLIN) {
			int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			struct pollfd *p = realloc(pfd, (nfd + 1) * sizeof(*pfd));
			uid_t *u = p ? realloc(uids, (nfd + 1) * sizeof(*uids)) : NULL;
			if (p)
				pfd = p;
			if (!u) {
				close(fd);
				continue;
			}
			uids = u;
			uids[nfd] = peer_uid(fd);
			pfd[nfd++] = (struct pollfd){.fd = fd, .events = POLLIN};
		}
	}
}

/* Fork the helper; 0 when it listens, EADDRINUSE when another one does. */
static int start_helper(void)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	pid_t pid = fork();
	if (pid == 0) { /* a new session, and a grandchild: the daemon has no parent to wait */
		close(p[0]);
		if (setsid() < 0)
			_exit(1);
		pid_t d = fork();
		if (d == 0)
			helper_main(p[1]);
		_exit(d < 0);
	}
	int err = pid < 0 ? errno : 0;
	close(p[1]);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	ssize_t n = 0;
	if (!err)
		while ((n = read(p[0], &err, sizeof(err))) < 0 && errno == EINTR)
			;
	close(p[0]);
	if (!err && n != (ssize_t)sizeof(err))
		err = EIO; /* the helper died before it listened */
	return err;
}

/* ------------------------------------------------------------------ clients */

/* The connection of this process (a child after fork makes its own). */
static int conn = -1;
static pid_t conn_pid;

/* Connect to the helper.  ENOENT: none runs; EPERM: the name is held by
 * another user's process, which we never talk to. */
static int connect_helper(void)
{
	if (conn >= 0 && conn_pid == getpid())
		return 0;
	if (conn >= 0)
		close(conn); /* the parent's, inherited through fork */
	conn = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (conn < 0)
		return errno;
	struct sockaddr_un a;
	socklen_t alen = helper_address(&a);
	int err = 0;
	if (connect(conn, (struct sockaddr *)&a, alen) < 0)
		err = errno == ECONNREFUSED ? ENOENT : errno;
	else if (!trusted(peer_uid(conn)))
		err = EPERM;
	if (err) {
		close(conn);
		conn = -1;
		return err;
	}
	conn_pid = getpid();
	return 0;
}

/* One request and its reply; a stale connection (the helper exited) is
 * made again once.  Returns 0 with *RP filled, or the errno of the talk. */
static int call(const struct request *rq, struct reply *rp)
{
	int err = 0;
	for (int attempt = 0; attempt < 2; attempt++) {
		if ((err = connect_helper()))
			return err;
		ssize_t n = send(conn, rq, sizeof(*rq), MSG_NOSIGNAL);
		if (n == (ssize_t)sizeof(*rq))
			while ((n = recv(conn, rp, sizeof(*rp), 0)) < 0 && errno == EINTR)
				;
		if (n == (ssize_t)sizeof(*rp))
			return 0;
		err = n < 0 ? errno : ECONNRESET;
		close(conn);
		conn = -1;
	}
	return err;
}

int pctr_cpus_set(unsigned ctr, unsigned fn)
{
	struct request rq = {.op = OP_SET, .ctr = ctr, .fn = fn};
	struct reply rp;
	for (int attempt = 0; attempt < 3; attempt++) {
		int err = call(&rq, &rp);
		if (!err)
			return rp.err;
		if (err != ENOENT)
			return err == EPERM ? EBUSY : err;
		if (!fn)
			return 0; /* nothing set anywhere: nothing to stop */
		err = start_helper();
		if (err && err != EADDRINUSE) /* EADDRINUSE: another setter's helper won */
			return err;
	}
	return EAGAIN;
}

int pctr_cpus_read(int cpu, struct pctrst *st)
{
	struct request rq = {.op = OP_READ, .cpu = cpu};
	struct reply rp;
	int err = call(&rq, &rp);
	if (err)
		return err == EPERM ? ENOENT : err; /* an untrusted helper is no helper */
	if (!rp.err)
		*st = rp.st;
	return rp.err;
}
