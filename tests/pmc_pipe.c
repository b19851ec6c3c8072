/* Logs into a pipe or socket, as pmcstat's top mode and its -P ... -G
 * without -O write them: hwpmc writes its log to any writable descriptor,
 * and pmclog_open() reads it as it comes.  The records read back are of
 * the same kinds as those of the same session logged into a file. */
#include "pmc_test.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>

/* Generous: reaching it fails the test. */
#define WAIT_S 60

struct reader {
	int fd;
	pid_t child;             /* set before the child runs */
	int kinds[32];           /* records of each type */
	int state;               /* the last pmclog_read() state */
	bool saw_child_sample;   /* a sample of the child arrived */
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void *read_log(void *arg)
{
	struct reader *r = arg;
	void *parser = pmclog_open(r->fd);
	struct pmclog_ev ev;
	while (pmclog_read(parser, &ev) == 0) {
		pthread_mutex_lock(&r->lock);
		if ((unsigned)ev.pl_type < 32)
			r->kinds[ev.pl_type]++;
		if (ev.pl_type == PMCLOG_TYPE_CALLCHAIN && (pid_t)ev.pl_u.pl_cc.pl_pid == r->child) {
			r->saw_child_sample = true;
			pthread_cond_signal(&r->cond);
		}
		pthread_mutex_unlock(&r->lock);
	}
	pthread_mutex_lock(&r->lock);
	r->state = ev.pl_state;
	pthread_mutex_unlock(&r->lock);
	pmclog_close(parser);
	return NULL;
}

/* One session: a sampling PMC with call chains and a counting one that
 * logs exits, both on a child running hotspots; a pmc_writelog().  With
 * WAIT, the reader must see the child's samples before the log closes. */
static void session(int fd, struct reader *r, bool wait)
{
	char *cmd[] = {workload("hotspots"), "5", NULL};
	CHECK_INT(pmc_configure_logfile(fd), ==, 0);
	pmc_id_t s = alloc_or_die("cpu-clock", PMC_MODE_TS, PMC_F_CALLCHAIN, PMC_CPU_ANY, 100000);
	pmc_id_t c = alloc_or_die("page-faults", PMC_MODE_TC, PMC_F_LOG_PROCEXIT, PMC_CPU_ANY, 0);
	struct waiting w = spawn(exec_argv, cmd);
	pthread_mutex_lock(&r->lock);
	r->child = w.pid;
	pthread_mutex_unlock(&r->lock);
	CHECK_INT(pmc_attach(s, w.pid), ==, 0);
	CHECK_INT(pmc_attach(c, w.pid), ==, 0);
	CHECK_INT(pmc_start(s), ==, 0);
	CHECK_INT(pmc_start(c), ==, 0);
	release(w);
	reap(w.pid);
	CHECK_INT(pmc_writelog(0x1234), ==, 0);
	CHECK_INT(pmc_flush_logfile(), ==, 0);
	if (wait) {
		/* Streamed: the records come while the log is still open. */
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += WAIT_S;
		pthread_mutex_lock(&r->lock);
		while (!r->saw_child_sample)
			if (pthread_cond_timedwait(&r->cond, &r->lock, &until) != 0)
				break;
		bool seen = r->saw_child_sample;
		pthread_mutex_unlock(&r->lock);
		CHECK(seen);
	}
	CHECK_INT(pmc_stop(s), ==, 0);
	CHECK_INT(pmc_stop(c), ==, 0);
	CHECK_INT(pmc_close_logfile(), ==, 0);
	pmc_release(s);
	pmc_release(c);
}

static struct reader new_reader(int fd)
{
	struct reader r = {.fd = fd, .child = -1, .state = -1};
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.cond, NULL);
	return r;
}

static void file_kinds(int kinds[32])
{
	FILE *log = tmpfile();
	struct reader r = new_reader(fileno(log));
	session(fileno(log), &r, false);
	lseek(fileno(log), 0, SEEK_SET);
	read_log(&r);
	CHECK_INT(r.state, ==, PMCLOG_EOF);
	memcpy(kinds, r.kinds, sizeof(r.kinds));
	fclose(log);
}

static void compare_kinds(const int *file, const int *got)
{
	for (int t = 0; t < 32; t++)
		if (!file[t] != !got[t]) {
			fprintf(stderr, "record type %d: %d in the file log, %d in the stream\n", t,
				file[t], got[t]);
			CHECK(!file[t] == !got[t]);
		}
}

static void test_pipe(void)
{
	int file[32];
	file_kinds(file);
	CHECK_INT(file[PMCLOG_TYPE_CALLCHAIN], >, 0);
	CHECK_INT(file[PMCLOG_TYPE_PROCEXEC], ==, 1);
	CHECK_INT(file[PMCLOG_TYPE_PROCEXIT], >, 0);
	int p[2];
	CHECK_INT(pipe(p), ==, 0);
	struct reader r = new_reader(p[0]);
	pthread_t th;
	pthread_create(&th, NULL, read_log, &r);
	session(p[1], &r, true);
	close(p[1]); /* the reader sees the end */
	pthread_join(th, NULL);
	close(p[0]);
	CHECK_INT(r.state, ==, PMCLOG_EOF);
	CHECK_INT(r.kinds[PMCLOG_TYPE_INITIALIZE], ==, 1);
	CHECK_INT(r.kinds[PMCLOG_TYPE_CLOSELOG], ==, 1);
	CHECK_INT(r.kinds[PMCLOG_TYPE_USERDATA], ==, 1);
	CHECK_INT(r.kinds[PMCLOG_TYPE_PROCEXEC], ==, 1);
	compare_kinds(file, r.kinds);
}

/* A socket, read by another process. */
static void test_socket(void)
{
	int sv[2];
	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
	fflush(NULL);
	pid_t reader = fork();
	if (reader == 0) {
		close(sv[0]);
		struct reader r = new_reader(sv[1]);
		read_log(&r);
		bool ok = r.state == PMCLOG_EOF && r.kinds[PMCLOG_TYPE_CALLCHAIN] > 0 &&
			  r.kinds[PMCLOG_TYPE_PROCEXEC] == 1 && r.kinds[PMCLOG_TYPE_CLOSELOG] == 1;
		if (!ok)
			fprintf(stderr, "socket reader: state %d, %d call chains, %d execs\n",
				r.state, r.kinds[PMCLOG_TYPE_CALLCHAIN],
				r.kinds[PMCLOG_TYPE_PROCEXEC]);
		_exit(ok ? 0 : 1);
	}
	close(sv[1]);
	struct reader unused = new_reader(-1);
	session(sv[0], &unused, false);
	close(sv[0]);
	int status = reap(reader);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A reader that goes away is a write error, not a SIGPIPE. */
static void test_reader_gone(void)
{
	int p[2];
	CHECK_INT(pipe(p), ==, 0);
	close(p[0]);
	CHECK_INT(pmc_configure_logfile(p[1]), ==, 0);
	CHECK_INT(pmc_writelog(1), ==, 0);
	int rc = 0;
	/* The relay finds out as it writes: within the bound, a call says so. */
	for (int i = 0; i < WAIT_S * 10 && rc == 0; i++) {
		rc = pmc_flush_logfile();
		struct timespec ts = {0, 100 * 1000000L};
		nanosleep(&ts, NULL);
	}
	CHECK_INT(rc, ==, -1);
	CHECK_INT(errno, ==, EPIPE);
	CHECK_INT(pmc_close_logfile(), ==, -1);
	CHECK_INT(errno, ==, EPIPE);
	close(p[1]);
}

int main(void)
{
	init_or_die();
	RUN(test_pipe);
	RUN(test_socket);
	RUN(test_reader_gone);
	return check_exit();
}
