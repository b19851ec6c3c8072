/* libFuzzer harness for perf's JSON tables as hwc reads them
 * (src/pmu_events.c, event_json.c, metric.c).  The input is up to three
 * files separated by a line "===": a model's events file, its metrics
 * file, and the architecture's standard events (what ArchStdEvent names).
 * They are written into a tree laid out as perf's, whose mapfile.csv gives
 * the model to this CPU, and read through the library's own path
 * (hwc_set_events_dir): the table loaded, each event encoded as fz::NAME,
 * the metrics listed, and each metric selected (its events resolved, its
 * metrics followed) and computed.  Whatever is refused must say why.
 * Built and run by tests/fuzz.sh, seeded from models of perf's tree. */
#include "internal.h"
#include "pmu_events.h"

#include <hwc/hwc.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__aarch64__)
#define ARCH "arm64"
#else
#define ARCH "x86"
#endif
#define MAX_TRIED 16 /* events and metrics tried per input */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64] = "/tmp/hwc-json-fuzz.XXXXXX";
static char path[3][256]; /* events, metrics, standard events */

static void remove_tree(void)
{
	char p[320];
	for (int i = 0; i < 3; i++)
		unlink(path[i]);
	snprintf(p, sizeof(p), "%s/%s/mapfile.csv", root, ARCH);
	unlink(p);
	snprintf(p, sizeof(p), "%s/%s/fz", root, ARCH);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/%s", root, ARCH);
	rmdir(p);
	rmdir(root);
}

static void write_file(const char *name, const void *data, size_t size)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd)) {
		perror(name);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char p[320], id[128], row[512];
	if (!mkdtemp(root))
		abort();
	atexit(remove_tree);
	snprintf(p, sizeof(p), "%s/%s", root, ARCH);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/%s/fz", root, ARCH);
	mkdir(p, 0700);
	snprintf(path[0], sizeof(path[0]), "%s/%s/fz/events.json", root, ARCH);
	snprintf(path[1], sizeof(path[1]), "%s/%s/fz/metrics.json", root, ARCH);
	snprintf(path[2], sizeof(path[2]), "%s/%s/std.json", root, ARCH);
	/* This CPU's identifier, as written, maps it to the model fz. */
	int n = snprintf(row, sizeof(row), "Family-model,Version,Filename,EventType\n%s,v1,fz,core\n",
			 hwc__pe_host_cpuid(id, sizeof(id)) ? id : "none");
	snprintf(p, sizeof(p), "%s/%s/mapfile.csv", root, ARCH);
	write_file(p, row, (size_t)n);
	if (hwc_set_events_dir(root))
		abort();
	return 0;
}

/* A refusal names its reason. */
static void said_why(int err)
{
	if (err < 0 && !hwc_errdetail()[0]) {
		fprintf(stderr, "error %d without detail\n", err);
		abort();
	}
}

static int listed(const struct hwc_event_info *ev, void *arg)
{
	*(size_t *)arg += strlen(ev->name) + strlen(ev->desc);
	return 0;
}

static int count_metric(const struct hwc_metric_info *m, void *arg)
{
	*(size_t *)arg += strlen(m->name) + strlen(m->expr) + (m->scale == m->scale);
	return 0;
}

/* Select metric NAME as -M does and compute it from made-up counts. */
static void try_metric(const char *name)
{
	hwc_evlist *list;
	hwc_metrics *ms;
	if (hwc_evlist_new(&list))
		return;
	int err = hwc_metrics_new(&ms, name, 0, list);
	said_why(err);
	if (!err) {
		size_t n = hwc_evlist_size(list);
		double *counts = calloc(n + 1, sizeof(*counts));
		for (size_t i = 0; counts && i < n; i++)
			counts[i] = (double)(i * 977 % 13);
		hwc_metrics_compute(ms, counts, n, 1.5, 0.5, 0.25);
		for (size_t i = 0; i < hwc_metrics_count(ms); i++) {
			int over;
			(void)hwc_metrics_value(ms, i, &over);
			(void)hwc_metrics_info(ms, i)->name[0];
		}
		free(counts);
		hwc_metrics_free(ms);
	}
	hwc_evlist_free(list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Split at the "\n===\n" lines into the three files. */
	const uint8_t *part = data, *end = data + size;
	for (int i = 0; i < 3; i++) {
		const uint8_t *sep = i < 2 ? memmem(part, (size_t)(end - part), "\n===\n", 5) : NULL;
		if (!sep)
			sep = end;
		write_file(path[i], part, (size_t)(sep - part));
		part = sep < end ? sep + 5 : end;
	}
	hwc__pe_forget();
	hwc__clear_error();
	const struct hwc__pe_table *t;
	int err = hwc__pe_table("fz", &t);
	said_why(err);
	if (err)
		return 0;
	/* The names first: trying them may load the table again. */
	char *events[MAX_TRIED], *metrics[MAX_TRIED];
	size_t nev = 0, nm = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (!t->rec[i].metric && nev < MAX_TRIED && asprintf(&events[nev], "fz::%s", t->rec[i].name) >= 0)
			nev++;
		else if (t->rec[i].metric && nm < MAX_TRIED && (metrics[nm] = strdup(t->rec[i].name)))
			nm++;
		(void)hwc__pe_get(&t->rec[i], "MetricExpr");
	}
	hwc_evlist *list;
	if (!hwc_evlist_new(&list)) {
		for (size_t i = 0; i < nev; i++)
			said_why(hwc_evlist_add(list, events[i]));
		hwc_evlist_free(list);
	}
	size_t sum = 0;
	said_why(hwc_events_walk("json", NULL, 0, listed, &sum));
	said_why(hwc_metrics_walk("fz", count_metric, &sum));
	for (size_t i = 0; i < nm; i++)
		try_metric(metrics[i]);
	for (size_t i = 0; i < nev; i++)
		free(events[i]);
	for (size_t i = 0; i < nm; i++)
		free(metrics[i]);
	return 0;
}
