/* A Prometheus-like scraper for bench/serve.sh: CLIENTS threads each GET
 * http://127.0.0.1:PORT/metrics over one kept-alive connection (as
 * Prometheus does), back to back, for SECONDS; every scrape's latency is
 * kept.  Prints one line: "scrapes median_ms p99_ms bytes_per_scrape
 * errors".  Usage: scrape PORT SECONDS CLIENTS.  In C: Python's own cost
 * per request would hide the agents' at a few hundred scrapes a second. */
#include "bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static int port, seconds;
static double end_ns;

struct client {
	pthread_t t;
	double *lat; /* ms */
	size_t n, cap;
	size_t bytes, errors;
	/* The connection and what was read past the last response. */
	int fd;
	char *buf;
	size_t have, size;
};

static int connect_agent(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read more into the buffer: false on EOF or an error. */
static bool fill(struct client *c)
{
	if (c->have == c->size) {
		c->size = c->size ? 2 * c->size : 65536;
		c->buf = realloc(c->buf, c->size);
		if (!c->buf)
			abort();
	}
	ssize_t r = read(c->fd, c->buf + c->have, c->size - c->have);
	if (r <= 0)
		return false;
	c->have += (size_t)r;
	return true;
}

/* Position of the end of the line starting at FROM (past its \r\n), or 0
 * once more must be read. */
static size_t line_end(struct client *c, size_t from)
{
	for (size_t i = from; i + 1 < c->have; i++)
		if (c->buf[i] == '\r' && c->buf[i + 1] == '\n')
			return i + 2;
	return 0;
}

/* One response: its body's size, or -1.  Content-Length or chunked. */
static long response(struct client *c)
{
	size_t head;
	for (;;) {
		char *e = c->have ? memmem(c->buf, c->have, "\r\n\r\n", 4) : NULL;
		if (e) {
			head = (size_t)(e - c->buf) + 4;
			break;
		}
		if (!fill(c))
			return -1;
	}
	if (c->have < 12 || strncmp(c->buf + 9, "200", 3) != 0)
		return -1;
	long body = 0;
	size_t pos = head;
	char *cl = NULL, *te = NULL;
	for (char *p = c->buf; p < c->buf + head; p = memchr(p, '\n', (size_t)(c->buf + head - p)) + 1) {
		if (strncasecmp(p, "content-length:", 15) == 0)
			cl = p + 15;
		else if (strncasecmp(p, "transfer-encoding:", 18) == 0)
			te = p + 18;
	}
	if (cl) {
		body = strtol(cl, NULL, 10);
		while (c->have < head + (size_t)body)
			if (!fill(c))
				return -1;
		pos = head + (size_t)body;
	} else if (te && strstr(te, "chunked")) {
		for (;;) {
			size_t le;
			while (!(le = line_end(c, pos)))
				if (!fill(c))
					return -1;
			long chunk = strtol(c->buf + pos, NULL, 16);
			pos = le;
			while (c->have < pos + (size_t)chunk + 2)
				if (!fill(c))
					return -1;
			pos += (size_t)chunk + 2;
			body += chunk;
			if (!chunk)
				break;
		}
	} else {
		return -1;
	}
	memmove(c->buf, c->buf + pos, c->have - pos);
	c->have -= pos;
	return body;
}

static void *run(void *arg)
{
	struct client *c = arg;
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n";
	c->fd = -1;
	while (bench_now_ns() < end_ns) {
		if (c->fd < 0 && (c->fd = connect_agent()) < 0) {
			if (!c->errors && getenv("SCRAPE_DEBUG"))
				fprintf(stderr, "scrape: connect: %s\n", strerror(errno));
			c->errors++;
			usleep(10000);
			continue;
		}
		double t0 = bench_now_ns();
		long body = write(c->fd, req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1 ? response(c) : -1;
		if (body < 0) { /* the server closed it, or an error: a new connection */
			if (!c->errors && getenv("SCRAPE_DEBUG"))
				fprintf(stderr, "scrape: after %zu scrapes (%s): %.*s\n", c->n, strerror(errno),
					(int)(c->have < 200 ? c->have : 200), c->buf);
			c->errors++;
			close(c->fd);
			c->fd = -1;
			c->have = 0;
			continue;
		}
		if (c->n == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 4096;
			c->lat = realloc(c->lat, c->cap * sizeof(*c->lat));
			if (!c->lat)
				abort();
		}
		c->lat[c->n++] = (bench_now_ns() - t0) / 1e6;
		c->bytes += (size_t)body;
	}
	if (c->fd >= 0)
		close(c->fd);
	return NULL;
}

int main(int argc, char **argv)
{
	int clients;
	if (argc != 4 || (port = atoi(argv[1])) <= 0 || (seconds = atoi(argv[2])) <= 0 ||
	    (clients = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: scrape PORT SECONDS CLIENTS\n");
		return 2;
	}
	struct client *c = calloc((size_t)clients, sizeof(*c));
	end_ns = bench_now_ns() + seconds * 1e9;
	for (int i = 0; i < clients; i++)
		if (pthread_create(&c[i].t, NULL, run, &c[i])) {
			fprintf(stderr, "scrape: pthread_create: %s\n", strerror(errno));
			return 1;
		}
	size_t n = 0, bytes = 0, errors = 0;
	for (int i = 0; i < clients; i++) {
		pthread_join(c[i].t, NULL);
		n += c[i].n;
		bytes += c[i].bytes;
		errors += c[i].errors;
	}
	if (!n) {
		fprintf(stderr, "scrape: no scrape answered (%zu errors)\n", errors);
		return 1;
	}
	double *all = malloc(n * sizeof(*all));
	size_t k = 0;
	for (int i = 0; i < clients; i++) {
		memcpy(all + k, c[i].lat, c[i].n * sizeof(*all));
		k += c[i].n;
	}
	double median = bench_median(all, (int)n);
	printf("%zu %.3f %.3f %zu %zu\n", n, median, all[(size_t)((double)n * 0.99)], bytes / n, errors);
	return 0;
}
