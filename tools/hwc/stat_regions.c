/* hwc stat --regions: the command reports its code regions (hwc-regions(3))
 * into a file of a private directory named by HWC_REGIONS_OUT; once it has
 * ended, the report is read back (Debian's json-c) and printed after the
 * counts, in the report's format. */

/* json-c's types json_object and json_bool have the names of functions of
 * the tool's JSON writer (json.h): here they are jc_value and jc_bool. */
#define json_object jc_value
#define json_bool jc_bool
#include <json-c/json.h>
#undef json_object
#undef json_bool

#include "stat.h"
#include "stat_regions.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64], path[96];
static jc_value *doc;

int stat_regions_setup(const char *const *specs, size_t nspecs)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp || strlen(tmp) > sizeof(dir) - 24)
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/hwc-regions-XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "hwc stat: --regions: cannot create a directory in %s: %s\n", tmp,
			strerror(errno));
		dir[0] = 0;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/regions.json", dir);
	/* The events hwc counts, comma-joined, are the regions' too. */
	size_t len = 1;
	for (size_t i = 0; i < nspecs; i++)
		len += strlen(specs[i]) + 1;
	char *events = calloc(1, len);
	if (!events || setenv("HWC_REGIONS_OUT", path, 1)) {
		free(events);
		fprintf(stderr, "hwc stat: out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < nspecs; i++)
		strcat(strcat(events, i ? "," : ""), specs[i]);
	int err = nspecs ? setenv("HWC_EVENTS", events, 1) : 0;
	free(events);
	if (err) {
		fprintf(stderr, "hwc stat: out of memory\n");
		return -1;
	}
	return 0;
}

static jc_value *member(jc_value *o, const char *key)
{
	jc_value *v = NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* The report's threads and events, or false when it is not one. */
static bool parts(jc_value **threads, jc_value **events, jc_value **errors)
{
	*threads = member(doc, "threads");
	*events = member(doc, "events");
	*errors = member(doc, "errors");
	return json_object_is_type(*threads, json_type_array) &&
	       json_object_is_type(*events, json_type_array) &&
	       json_object_is_type(*errors, json_type_array);
}

static void print_json(struct stat_report *r)
{
	json_raw(&r->json, "regions",
		 doc ? json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN) : "null");
}

static void print_csv(struct stat_report *r, jc_value *threads, jc_value *events)
{
	const char *sep = r->sep;
	for (size_t t = 0; t < json_object_array_length(threads); t++) {
		jc_value *th = json_object_array_get_idx(threads, t);
		int64_t tid = json_object_get_int64(member(th, "tid"));
		jc_value *regs = member(th, "regions");
		for (size_t i = 0; i < json_object_array_length(regs); i++) {
			jc_value *reg = json_object_array_get_idx(regs, i);
			const char *name = json_object_get_string(member(reg, "name"));
			uint64_t calls = json_object_get_uint64(member(reg, "calls"));
			jc_value *counts = member(reg, "counts");
			for (size_t e = 0; e < json_object_array_length(events); e++) {
				const char *ev = json_object_get_string(json_object_array_get_idx(events, e));
				jc_value *v = member(counts, ev);
				if (v)
					fprintf(r->out, "region%s%" PRId64 "%s%s%s%" PRIu64 "%s%" PRIu64 "%s%s\n", sep,
						tid, sep, name, sep, calls, sep, json_object_get_uint64(v), sep, ev);
			}
			jc_value *ipc = member(member(reg, "metrics"), "ipc");
			if (ipc)
				fprintf(r->out, "region%s%" PRId64 "%s%s%s%" PRIu64 "%s%.4f%sipc\n", sep, tid,
					sep, name, sep, calls, sep, json_object_get_double(ipc), sep);
		}
	}
}

static void print_human(struct stat_report *r, jc_value *threads, jc_value *events,
			jc_value *errors)
{
	FILE *f = r->out;
	size_t nev = json_object_array_length(events);
	bool ipc_column = false; /* only when cycles and instructions were counted */
	for (size_t t = 0; t < json_object_array_length(threads); t++) {
		jc_value *regs = member(json_object_array_get_idx(threads, t), "regions");
		for (size_t i = 0; i < json_object_array_length(regs); i++)
			ipc_column |= member(member(json_object_array_get_idx(regs, i), "metrics"), "ipc") != NULL;
	}
	fprintf(f, " Regions of each thread (inclusive counts):\n\n %8s  %-20s %8s", "tid", "region",
		"calls");
	for (size_t e = 0; e < nev; e++)
		fprintf(f, " %15s", json_object_get_string(json_object_array_get_idx(events, e)));
	fprintf(f, ipc_column ? " %8s\n" : "\n", "IPC");
	for (size_t t = 0; t < json_object_array_length(threads); t++) {
		jc_value *th = json_object_array_get_idx(threads, t);
		jc_value *regs = member(th, "regions");
		for (size_t i = 0; i < json_object_array_length(regs); i++) {
			jc_value *reg = json_object_array_get_idx(regs, i);
			fprintf(f, " %8" PRId64 "  %-20s %8" PRIu64, json_object_get_int64(member(th, "tid")),
				json_object_get_string(member(reg, "name")),
				json_object_get_uint64(member(reg, "calls")));
			jc_value *counts = member(reg, "counts");
			for (size_t e = 0; e < nev; e++) {
				jc_value *v = member(counts,
						     json_object_get_string(json_object_array_get_idx(events, e)));
				if (v)
					fprintf(f, " %'15" PRIu64, json_object_get_uint64(v));
				else
					fprintf(f, " %15s", "-");
			}
			jc_value *ipc = member(member(reg, "metrics"), "ipc");
			if (ipc)
				fprintf(f, " %8.2f", json_object_get_double(ipc));
			fputc('\n', f);
		}
	}
	for (size_t i = 0; i < json_object_array_length(errors); i++) {
		jc_value *e = json_object_array_get_idx(errors, i);
		fprintf(f, " error: %s (%" PRIu64 " times)\n", json_object_get_string(member(e, "error")),
			json_object_get_uint64(member(e, "count")));
	}
	fputc('\n', f);
}

static void print(struct stat_report *r)
{
	jc_value *threads, *events, *errors;
	if (r->format == STAT_JSON)
		print_json(r);
	else if (doc && parts(&threads, &events, &errors))
		(r->format == STAT_CSV ? print_csv(r, threads, events)
				       : print_human(r, threads, events, errors));
}

void stat_regions_load(struct stat_report *r)
{
	r->regions_print = print;
	if (access(path, F_OK) != 0) {
		fprintf(stderr, "hwc stat: --regions: the command wrote no region report: it called "
				"no hwc_region_begin(), or is not linked with libhwc (hwc-regions(3))\n");
		return;
	}
	doc = json_object_from_file(path);
	jc_value *threads, *events, *errors;
	if (!doc || !parts(&threads, &events, &errors)) {
		fprintf(stderr, "hwc stat: --regions: %s is not a region report: %s\n", path,
			json_util_get_last_err() ? json_util_get_last_err() : "members are missing");
		json_object_put(doc);
		doc = NULL;
	}
}

void stat_regions_cleanup(void)
{
	json_object_put(doc);
	doc = NULL;
	if (!dir[0])
		return;
	/* Only what the command may have left in our private directory: its
	 * report and a temporary file of hwc_output's that it did not commit. */
	unlink(path);
	rmdir(dir);
}
