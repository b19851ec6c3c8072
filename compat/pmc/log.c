/* The log: a perf.data recording (hwc-data(5)) written asynchronously, as
 * hwpmc writes its log: a thread moves what the samplers' buffers hold into
 * the file, makes the file valid after every HWPMC_LOGBUFFERSIZE x
 * HWPMC_NBUFFERS KiB, and keeps the first write error for
 * pmc_flush_logfile().  Into a pipe or socket the records are streamed
 * (perf's pipe mode), and each pass of the thread sends what it took.  A
 * stream goes through a relay: the recording writes into a pipe of ours,
 * which a thread that holds no lock copies to the caller's descriptor, so
 * a reader that is slow (or is the owner itself, as pmcstat's top mode)
 * never blocks the library's lock.  libpmc's own records (allocations, attachments,
 * which events of the file are whose) are user records with a header
 * pmclog_read() recognizes. */
#include "pmc_impl.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct pmc_driverstats pmc__stats;

static struct {
	hwc_recording *rec;
	pthread_t thread;
	pthread_cond_t wake;
	bool quit;
	bool stream;        /* a pipe or socket: no file to make valid */
	int relay_fd;       /* a stream: the write end of the relay's pipe */
	int error;          /* the first write error (errno), kept */
	uint64_t unflushed; /* bytes since the file was last made valid */
	hwc_sampler **samplers; /* those writing into the log */
	size_t n, cap;
} lg = {.wake = PTHREAD_COND_INITIALIZER};

/* ------------------------------------------------------------ the relay */

/* What the relay may hold for a reader that does not read, before the
 * writer waits for it. */
#define RELAY_MAX ((size_t)64 << 20)

static struct {
	bool running;
	int in, out;     /* our pipe's read end; the caller's descriptor */
	pthread_t thread;
	int error;       /* errno of the first failed write to OUT */
} relay = {false, -1, -1, 0, 0};

static void *relay_main(void *arg)
{
	(void)arg;
	uint8_t *q = NULL;
	size_t head = 0, len = 0, cap = 0;
	bool eof = false;
	for (;;) {
		struct pollfd pf[2];
		int n = 0, in = -1, out = -1;
		if (!eof && len - head < RELAY_MAX)
			pf[in = n++] = (struct pollfd){relay.in, POLLIN, 0};
		if (len > head)
			pf[out = n++] = (struct pollfd){relay.out, POLLOUT, 0};
		if (n == 0)
			break;
		if (poll(pf, (nfds_t)n, -1) < 0)
			continue;
		if (in >= 0 && pf[in].revents) {
			if (head == len)
				head = len = 0;
			if (!pmc__room(&q, len + 65536 - 1, &cap, 1, 1 << 20)) {
				eof = true; /* out of memory: what came so far goes out */
			} else {
				ssize_t r = read(relay.in, q + len, cap - len < 65536 ? cap - len : 65536);
				if (r > 0)
					len += (size_t)r;
				else if (r == 0 || errno != EINTR)
					eof = true;
			}
		}
		if (out >= 0 && pf[out].revents) {
			/* At most a pipe's atomic write: POLLOUT promises that much. */
			size_t k = len - head < 4096 ? len - head : 4096;
			ssize_t w = write(relay.out, q + head, k);
			if (w > 0)
				head += (size_t)w;
			else if (w < 0 && errno != EINTR && errno != EAGAIN) {
				__atomic_store_n(&relay.error, errno, __ATOMIC_RELAXED);
				head = len; /* the reader is gone: drop the rest */
			}
		}
	}
	free(q);
	return NULL;
}

/* A relay to FD; the write end of its pipe into *IN, or -1 with errno. */
static int relay_start(int fd, int *in)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20); /* fewer wake-ups; best effort */
	relay.in = p[0];
	relay.out = fd;
	relay.error = 0;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old); /* no SIGPIPE for the relay */
	int err = pthread_create(&relay.thread, NULL, relay_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(p[0]);
		close(p[1]);
		errno = err;
		return -1;
	}
	relay.running = true;
	*in = p[1];
	return 0;
}

/* After the recording's end was written into WRITE_END: close it, let the
 * relay hand the rest to the reader, and wait for it. */
static int relay_finish(int write_end)
{
	if (!relay.running)
		return 0;
	close(write_end);
	pthread_join(relay.thread, NULL);
	close(relay.in);
	relay.running = false;
	return relay.error;
}

bool pmc__have_log(void)
{
	return lg.rec != NULL;
}

static void write_error(int err)
{
	if (!lg.error)
		lg.error = -err;
	pmc__stats.pm_buffer_requests_failed++;
}

static void drain_one(hwc_sampler *s)
{
	struct hwc_recording_stats before, after;
	hwc_recording_stats(lg.rec, &before);
	long n = hwc_sampler_write(s, lg.rec);
	if (n < 0) {
		write_error((int)n);
		return;
	}
	pmc__stats.pm_buffer_requests += (unsigned)n;
	hwc_recording_stats(lg.rec, &after);
	lg.unflushed += after.bytes - before.bytes;
}

void pmc__log_drain(hwc_sampler *s)
{
	if (lg.rec && !lg.error)
		drain_one(s);
	for (size_t i = 0; i < lg.n; i++)
		if (lg.samplers[i] == s) {
			lg.samplers[i] = lg.samplers[--lg.n];
			break;
		}
}

/* What sampler S took, lost and had throttled, added to D. */
static void add_sampler_stats(struct pmc_driverstats *d, hwc_sampler *s)
{
	struct hwc_sampler_stats st;
	hwc_sampler_stats(s, &st);
	d->pm_intr_processed += (unsigned)st.samples;
	d->pm_intr_bufferfull += (unsigned)st.lost;
	d->pm_intr_ignored += (unsigned)st.throttled;
}

void pmc__stats_sampler(hwc_sampler *s)
{
	add_sampler_stats(&pmc__stats, s);
}

static void drain_all(void)
{
	pmc__stats.pm_log_sweeps++;
	for (size_t i = 0; i < lg.n && !lg.error; i++)
		drain_one(lg.samplers[i]);
	uint64_t limit = (uint64_t)pmc__tun.logbuffersize * 1024 * (uint64_t)pmc__tun.nbuffers;
	if (!lg.error && (lg.unflushed >= limit || lg.stream)) {
		int err = hwc_recording_flush(lg.rec);
		if (err)
			write_error(err);
		lg.unflushed = 0;
	}
}

static void *writer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pmc__lock);
	while (!lg.quit) {
		drain_all();
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 20 * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&lg.wake, &pmc__lock, &until);
	}
	pthread_mutex_unlock(&pmc__lock);
	return NULL;
}

/* ------------------------------------------------------------ libpmc's records */

static void control(uint32_t kind, const struct pmc__pmc *p, pid_t pid, uint32_t first,
		    uint32_t count, const char *text)
{
	if (!lg.rec || lg.error)
		return;
	char buf[sizeof(struct pmc__ctl) + 4096];
	struct pmc__ctl c = {.kind = kind, .pid = pid, .first = first, .count = count};
	memcpy(c.magic, PMC__CTL_MAGIC, sizeof(c.magic));
	if (p) {
		c.pmcid = p->id;
		c.event = (uint32_t)p->ev.code;
		c.flags = p->flags;
		c.rate = PMC_IS_SAMPLING_MODE(p->mode) ? p->count : 0;
		c.divisor = p->ev.divisor;
		c.mode = (uint32_t)p->mode;
	} else if (kind == PMCLOG_TYPE_INITIALIZE) {
		double hz = 0;
		hwc_tsc_hz(&hz, NULL);
		c.event = (uint32_t)pmc__m.info.pm_cputype;
		c.rate = (uint64_t)hz;
	}
	size_t len = strlen(text ? text : "");
	if (len > 4095)
		len = 4095;
	memcpy(buf, &c, sizeof(c));
	memcpy(buf + sizeof(c), text ? text : "", len);
	buf[sizeof(c) + len] = '\0';
	int err = hwc_recording_write_user(lg.rec, buf, sizeof(c) + len + 1);
	if (err)
		write_error(err);
}

void pmc__log_pmc(const struct pmc__pmc *p, uint32_t kind, pid_t pid)
{
	if (kind != PMCLOG_TYPE_PMCATTACH) {
		control(kind, p, pid, 0, 0, kind == PMCLOG_TYPE_PMCALLOCATE ? p->ev.name : NULL);
		return;
	}
	char link[64], path[4096];
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	control(kind, p, pid, 0, 0, path);
}

int pmc__log_add_sampler(struct pmc__pmc *p, hwc_sampler *s, pid_t pid)
{
	if (!lg.rec)
		return pmc__fail(EDOOFUS, "no log is configured");
	size_t first = hwc_recording_nevents(lg.rec);
	int err = hwc_recording_add_sampler(lg.rec, s);
	if (err)
		return pmc__fail_hwc(err, "cannot add the PMC to the log");
	if (!pmc__room(&lg.samplers, lg.n, &lg.cap, sizeof(*lg.samplers), 8))
		return pmc__fail(ENOMEM, "out of memory");
	lg.samplers[lg.n++] = s;
	control(PMC__CTL_EVENTS, p, pid, (uint32_t)first,
		(uint32_t)(hwc_recording_nevents(lg.rec) - first), NULL);
	return 0;
}

void pmc__log_forget(void)
{
	/* The parent's recording and threads are not the child's to finish;
	 * its copy of the relay's pipe would keep the relay from its end. */
	if (lg.rec && lg.stream) {
		close(lg.relay_fd);
		close(relay.in);
	}
	relay.running = false;
	lg.rec = NULL;
	lg.n = 0;
	lg.quit = false;
	lg.error = 0;
}

/* ------------------------------------------------------------ the interface */

static int close_log(void);

PMC_EXPORT int pmc_configure_logfile(int fd)
{
	pmc__call();
	if (!pmc__initialized)
		return pmc__fail(ENXIO, "pmc_init() has not succeeded");
	if (fd == -1)
		return close_log();
	pthread_mutex_lock(&pmc__lock);
	int rc = 0;
	if (lg.rec) {
		rc = pmc__fail(EBUSY, "a log is already configured");
		goto out;
	}
	struct stat st;
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fstat(fd, &st) != 0) {
		rc = pmc__fail(EBADF, "%d is not an open file descriptor", fd);
		goto out;
	}
	if ((flags & O_ACCMODE) == O_RDONLY) {
		rc = pmc__fail(EBADF, "file descriptor %d is not open for writing", fd);
		goto out;
	}
	lg.stream = !S_ISREG(st.st_mode);
	int recfd = fd;
	if (lg.stream && relay_start(fd, &recfd) != 0) {
		rc = pmc__fail(errno, "cannot start the log relay: %s", strerror(errno));
		goto out;
	}
	lg.relay_fd = recfd;
	int err = hwc_recording_fdopen(&lg.rec, recfd);
	if (err) {
		rc = pmc__fail(-err, "%s", hwc_errdetail());
		lg.rec = NULL;
		if (lg.stream)
			relay_finish(recfd);
		goto out;
	}
	char *argv[] = {"libpmc"};
	hwc_recording_set_cmdline(lg.rec, 1, argv);
	lg.error = 0;
	lg.unflushed = 0;
	lg.quit = false;
	control(PMCLOG_TYPE_INITIALIZE, NULL, -1, 0, 0, NULL);
	for (size_t i = 0; i < PMC__MAX; i++)
		if (pmc__pmcs[i].used)
			pmc__log_pmc(&pmc__pmcs[i], PMCLOG_TYPE_PMCALLOCATE, -1);
	if ((err = pthread_create(&lg.thread, NULL, writer, NULL)) != 0) {
		hwc_recording_close(lg.rec, NULL);
		lg.rec = NULL;
		if (lg.stream)
			relay_finish(recfd);
		rc = pmc__fail(EAGAIN, "cannot start the log writer: %s", strerror(err));
	}
out:
	pthread_mutex_unlock(&pmc__lock);
	return rc;
}

/* Lock and take what the samplers hold into the log: false (unlocked,
 * EINVAL) when there is no log. */
static bool lock_log(void)
{
	pthread_mutex_lock(&pmc__lock);
	if (lg.rec) {
		drain_all();
		return true;
	}
	pthread_mutex_unlock(&pmc__lock);
	pmc__fail(EINVAL, "no log is configured");
	return false;
}

PMC_EXPORT int pmc_flush_logfile(void)
{
	pmc__call();
	if (!lock_log())
		return -1;
	int err = lg.error ? 0 : hwc_recording_flush(lg.rec);
	if (err)
		write_error(err);
	int rerr = lg.stream ? __atomic_load_n(&relay.error, __ATOMIC_RELAXED) : 0;
	if (rerr && !lg.error)
		lg.error = rerr;
	lg.unflushed = 0;
	int rc = lg.error ? pmc__fail(lg.error, "writing the log failed: %s", strerror(lg.error)) : 0;
	pthread_mutex_unlock(&pmc__lock);
	return rc;
}

PMC_EXPORT int pmc_close_logfile(void)
{
	pmc__call();
	return close_log();
}

static int close_log(void)
{
	if (!lock_log())
		return -1;
	/* Nothing may write into the log once it is closed. */
	pmc__stop_logging_pmcs();
	control(PMCLOG_TYPE_CLOSELOG, NULL, -1, 0, 0, NULL);
	lg.quit = true;
	pthread_cond_signal(&lg.wake);
	pthread_mutex_unlock(&pmc__lock);
	pthread_join(lg.thread, NULL);
	pthread_mutex_lock(&pmc__lock);
	int err = hwc_recording_close(lg.rec, NULL);
	lg.rec = NULL;
	lg.n = 0;
	int rc = 0;
	if (err)
		write_error(err);
	if (lg.stream) {
		/* The reader takes the rest at its pace, without the lock. */
		pthread_mutex_unlock(&pmc__lock);
		int rerr = relay_finish(lg.relay_fd);
		pthread_mutex_lock(&pmc__lock);
		if (rerr && !lg.error)
			lg.error = rerr;
	}
	if (lg.error)
		rc = pmc__fail(lg.error, "writing the log failed: %s", strerror(lg.error));
	lg.error = 0;
	pthread_mutex_unlock(&pmc__lock);
	return rc;
}

PMC_EXPORT int pmc_writelog(uint32_t udata)
{
	pmc__call();
	/* After what the samplers took so far, as hwpmc flushes first. */
	if (!lock_log())
		return -1;
	int rc = 0;
	int err = lg.error ? -lg.error : hwc_recording_write_user(lg.rec, &udata, sizeof(udata));
	if (err) {
		write_error(err);
		rc = pmc__fail(-err, "cannot write to the log: %s", hwc_errdetail());
	}
	pthread_mutex_unlock(&pmc__lock);
	return rc;
}

PMC_EXPORT int pmc_get_driver_stats(struct pmc_driverstats *gms)
{
	pmc__call();
	if (!gms)
		return pmc__fail(EFAULT, "gms is NULL");
	if (!pmc__initialized)
		return pmc__fail(ENXIO, "pmc_init() has not succeeded");
	pthread_mutex_lock(&pmc__lock);
	*gms = pmc__stats;
	/* Running samplers count too. */
	for (size_t i = 0; i < lg.n; i++)
		add_sampler_stats(gms, lg.samplers[i]);
	pthread_mutex_unlock(&pmc__lock);
	return 0;
}
