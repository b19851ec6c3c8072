/* perf's JSON event and metric tables, found and read at run time (see
 * pmu_events.h).  json-c is loaded with dlopen on first use, as libpfm4 is:
 * most runs never read a table, and the loader would map it in every one. */
#include "pmu_events.h"

#include "arch.h"
#include "internal.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <regex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef HWC_EVENTS_PREFIX_DIR
#define HWC_EVENTS_PREFIX_DIR "/usr/local/share/hwc/events"
#endif

#if defined(__aarch64__)
#define HOST_ARCH "arm64"
#elif defined(__x86_64__) || defined(__i386__)
#define HOST_ARCH "x86"
#else
#define HOST_ARCH ""
#endif

/* ------------------------------------------------------------- json-c */

#define JSON_FUNCTIONS(X)                                                                \
	X(json_tokener_parse_verbose)                                                    \
	X(json_tokener_error_desc)                                                       \
	X(json_object_put)                                                               \
	X(json_object_get_type)                                                          \
	X(json_object_get_string)                                                        \
	X(json_object_array_length)                                                      \
	X(json_object_array_get_idx)                                                     \
	X(json_object_iter_begin)                                                        \
	X(json_object_iter_end)                                                          \
	X(json_object_iter_equal)                                                        \
	X(json_object_iter_next)                                                         \
	X(json_object_iter_peek_name)                                                    \
	X(json_object_iter_peek_value)

#define JSON_POINTER(f) __typeof__(f) *f;
static struct {
	JSON_FUNCTIONS(JSON_POINTER)
} js;
static char json_load_error[256];

static void json_load(void)
{
#define JSON_SYM(f) {#f, offsetof(__typeof__(js), f)},
	static const struct hwc__dl_sym syms[] = {JSON_FUNCTIONS(JSON_SYM)};
#undef JSON_SYM
	hwc__dl_open("libjson-c.so.5", syms, HWC_ARRAY_SIZE(syms), &js, json_load_error,
		     sizeof(json_load_error));
}

/* ------------------------------------------------------------- the tree */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *set_dir; /* hwc_set_events_dir() */

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

HWC_EXPORT int hwc_set_events_dir(const char *dir)
{
	hwc__clear_error();
	if (dir && !is_dir(dir))
		return hwc__fail(-ENOENT, "events directory '%s' does not exist (it holds perf's "
					  "pmu-events tree: x86/, arm64/, each with mapfile.csv)",
				 dir);
	char *copy = dir ? strdup(dir) : NULL;
	if (dir && !copy)
		return hwc__fail(-ENOMEM, "out of memory");
	pthread_mutex_lock(&lock);
	free(set_dir);
	set_dir = copy;
	pthread_mutex_unlock(&lock);
	return 0;
}

/* The root into BUF, or false.  Caller holds the lock. */
static bool find_root(char *buf, size_t size)
{
	const char *env = getenv("HWC_EVENTS_DIR");
	if (set_dir || (env && *env)) {
		snprintf(buf, size, "%s", set_dir ? set_dir : env);
		return is_dir(buf);
	}
	const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	if (xdg && *xdg)
		snprintf(buf, size, "%s/hwc/events", xdg);
	else if (home && *home)
		snprintf(buf, size, "%s/.local/share/hwc/events", home);
	else
		buf[0] = '\0';
	if (buf[0] && is_dir(buf))
		return true;
	/* PREFIX/share/hwc/events: PREFIX as where libhwc (or a program
	 * linked with libhwc.a) is installed, PREFIX/lib or PREFIX/bin, so an
	 * installed tree is found whatever PREFIX the build had; then the
	 * build's PREFIX. */
	Dl_info info;
	if (dladdr((void *)find_root, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
		char *dir = realpath(info.dli_fname, NULL);
		char *slash = dir ? strrchr(dir, '/') : NULL;
		if (slash) {
			*slash = '\0';
			snprintf(buf, size, "%s/../share/hwc/events", dir);
		}
		free(dir);
		if (slash && is_dir(buf))
			return true;
	}
	snprintf(buf, size, "%s", HWC_EVENTS_PREFIX_DIR);
	return is_dir(buf);
}

const char *hwc__pe_root(void)
{
	static __thread char root[4096];
	pthread_mutex_lock(&lock);
	bool ok = find_root(root, sizeof(root));
	pthread_mutex_unlock(&lock);
	return ok ? root : NULL;
}

static int no_tree(void)
{
	const char *env = getenv("HWC_EVENTS_DIR");
	if (set_dir || (env && *env))
		return hwc__fail(-ENOENT, "the events directory %s does not exist",
				 set_dir ? set_dir : env);
	return hwc__fail(-ENOENT, "no JSON event tables: none of $HWC_EVENTS_DIR, "
				  "$XDG_DATA_HOME/hwc/events (~/.local/share/hwc/events), %s exists "
				  "(install perf's pmu-events tree there, or give --events-dir)",
			 HWC_EVENTS_PREFIX_DIR);
}

/* ------------------------------------------------------------- host CPU id */

bool hwc__pe_host_cpuid(char *buf, size_t size)
{
#if defined(__x86_64__) || defined(__i386__)
	struct hwc_cpu_info ci = {0};
	hwc__arch_cpu_identity(&ci);
	if (!ci.vendor[0])
		return false;
	/* perf's arch/x86/util/header.c: vendor-family-model-stepping. */
	snprintf(buf, size, "%s-%u-%X-%X", ci.vendor, ci.family, ci.model, ci.stepping);
	return true;
#elif defined(__aarch64__)
	struct hwc_midr m;
	if (hwc_cpu_midr(0, &m))
		return false;
	snprintf(buf, size, "0x%016llx", (unsigned long long)m.value);
	return true;
#else
	(void)buf;
	(void)size;
	return false;
#endif
}

/* Does mapfile.csv's first column MAP name the CPU ID?  As perf compares:
 * x86 (arch/x86/util/header.c) with a regular expression that must match
 * all of ID, or all but its stepping when MAP gives none; arm64
 * (arch/arm64/util/header.c) MIDRs without variant and revision, and those
 * at least MAP's when it gives them. */
static bool cpuid_matches(const char *map, const char *id)
{
	if (strncmp(id, "0x", 2) == 0) {
		const unsigned long long vr = 0xf0000fULL; /* variant, revision */
		unsigned long long m = strtoull(map, NULL, 16), v = strtoull(id, NULL, 16);
		if ((m & ~vr) != (v & ~vr))
			return false;
		return (v & vr) >= (m & vr) || !(m & vr);
	}
	int map_dashes = 0, id_dashes = 0;
	for (const char *p = map; *p; p++)
		map_dashes += *p == '-';
	for (const char *p = id; *p; p++)
		id_dashes += *p == '-';
	bool full_map = map_dashes >= 3, full_id = id_dashes >= 3;
	if (full_map && !full_id)
		return false;
	regex_t re;
	if (regcomp(&re, map, REG_EXTENDED) != 0)
		return false;
	regmatch_t pm[1];
	bool match = regexec(&re, id, 1, pm, 0) == 0;
	regfree(&re);
	if (!match)
		return false;
	size_t len = !full_map && full_id ? (size_t)(strrchr(id, '-') - id) : strlen(id);
	return pm[0].rm_so == 0 && (size_t)(pm[0].rm_eo - pm[0].rm_so) == len;
}

/* Call FN(cpuid, model) for every row of ARCH's mapfile.csv; stops at a
 * non-zero result.  -ENOENT without the file. */
static int mapfile_walk(const char *root, const char *arch,
			int (*fn)(const char *cpuid, const char *model, void *arg), void *arg)
{
	char path[4096], line[1024];
	snprintf(path, sizeof(path), "%s/%s/mapfile.csv", root, arch);
	int fd = hwc__open_regular(path);
	if (fd < 0)
		return -ENOENT;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	int r = 0;
	while (!r && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || strncmp(line, "Family-model", 12) == 0)
			continue;
		line[strcspn(line, "\r\n")] = '\0';
		char *c1 = strchr(line, ',');
		char *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
		if (!c2)
			continue;
		*c1 = '\0';
		char *model = c2 + 1;
		model[strcspn(model, ",")] = '\0';
		if (*model)
			r = fn(line, model, arg);
	}
	fclose(f);
	return r;
}

struct host_match {
	const char *id;
	char model[256];
};

static int match_row(const char *cpuid, const char *model, void *arg)
{
	struct host_match *hm = arg;
	if (!cpuid_matches(cpuid, hm->id))
		return 0;
	snprintf(hm->model, sizeof(hm->model), "%s", model);
	return 1;
}

static bool model_for(const char *root, const char *arch, struct host_match *hm)
{
	return mapfile_walk(root, arch, match_row, hm) == 1;
}

bool hwc__pe_model_for(const char *arch, const char *cpuid, char *model, size_t size)
{
	const char *root = hwc__pe_root();
	struct host_match hm = {.id = cpuid};
	if (!root || !model_for(root, arch, &hm))
		return false;
	snprintf(model, size, "%s", hm.model);
	return true;
}

/* The architectures of the tree, this host's first. */
static const char *const arches[] = {HOST_ARCH, "x86", "arm64", "powerpc", "riscv", "s390",
				     "nds32"};

/* ------------------------------------------------------------- reading */

struct table {
	struct hwc__pe_table pub;
	struct table *next;
};
static struct table *tables; /* loaded ones, freed only by hwc__pe_forget() */
/* This CPU's table, once found for a root: mapfile.csv is not read again. */
static struct table *host_table;
static char host_root[4096];

struct builder {
	struct hwc__pe_record *rec;
	size_t n, cap;
	struct hwc__pe_field *f; /* the fields of the record being built */
	size_t nf, capf;
};

/* Read PATH as one JSON value; NULL with detail. */
static json_object *read_json(const char *path)
{
	int fd = hwc__open_regular(path);
	if (fd < 0) {
		hwc__fail(fd, "cannot read %s: %s", path, strerror(-fd));
		return NULL;
	}
	struct hwc__buf b = {0};
	char chunk[65536];
	ssize_t got = 0;
	size_t off = 0;
	const char *nul = NULL;
	while ((got = read(fd, chunk, sizeof(chunk))) > 0) {
		/* JSON text has no NUL byte; past one, "%.*s" would drop the rest */
		nul = memchr(chunk, '\0', (size_t)got);
		if (nul) {
			off += (size_t)(nul - chunk);
			break;
		}
		hwc__buf_printf(&b, "%.*s", (int)got, chunk);
		off += (size_t)got;
	}
	close(fd);
	if (nul || got < 0) {
		free(b.s);
		if (nul)
			hwc__fail(-EINVAL, "%s is not JSON: a NUL byte at offset %zu", path, off);
		else
			hwc__fail(-EIO, "cannot read %s", path);
		return NULL;
	}
	enum json_tokener_error jerr = json_tokener_success;
	json_object *j = js.json_tokener_parse_verbose(b.s ? b.s : "", &jerr);
	free(b.s);
	if (!j)
		hwc__fail(-EINVAL, "%s is not JSON: %s", path, js.json_tokener_error_desc(jerr));
	return j;
}

static const char *field_of(json_object *o, const char *key)
{
	struct json_object_iterator it = js.json_object_iter_begin(o), end = js.json_object_iter_end(o);
	for (; !js.json_object_iter_equal(&it, &end); js.json_object_iter_next(&it))
		if (strcmp(js.json_object_iter_peek_name(&it), key) == 0)
			return js.json_object_get_string(js.json_object_iter_peek_value(&it));
	return NULL;
}

static bool has_field(const struct builder *b, const char *key)
{
	for (size_t i = 0; i < b->nf; i++)
		if (strcmp(b->f[i].key, key) == 0)
			return true;
	return false;
}

/* Add O's scalar fields that the record does not have yet. */
static int add_fields(struct builder *b, json_object *o)
{
	struct json_object_iterator it = js.json_object_iter_begin(o), end = js.json_object_iter_end(o);
	for (; !js.json_object_iter_equal(&it, &end); js.json_object_iter_next(&it)) {
		json_object *v = js.json_object_iter_peek_value(&it);
		enum json_type t = js.json_object_get_type(v);
		const char *key = js.json_object_iter_peek_name(&it);
		if (t == json_type_object || t == json_type_array || t == json_type_null ||
		    has_field(b, key))
			continue;
		if (hwc__reserve(&b->f, &b->capf, b->nf + 1, sizeof(*b->f)))
			return hwc__fail(-ENOMEM, "out of memory");
		char *k = strdup(key), *val = strdup(js.json_object_get_string(v));
		if (!k || !val) {
			free(k);
			free(val);
			return hwc__fail(-ENOMEM, "out of memory");
		}
		b->f[b->nf++] = (struct hwc__pe_field){k, val};
	}
	return 0;
}

/* The architecture-standard events ArchStdEvent refers to: every record of
 * the arch directory's own *.json files (perf's preprocess_arch_std_files),
 * by name, lower-cased as jevents.py keys them. */
struct std_events {
	json_object **files;
	size_t nfiles, capfiles;
};

static json_object *std_find(const struct std_events *s, const char *name)
{
	for (size_t f = 0; f < s->nfiles; f++) {
		size_t n = js.json_object_array_length(s->files[f]);
		for (size_t i = 0; i < n; i++) {
			json_object *o = js.json_object_array_get_idx(s->files[f], i);
			const char *ev = field_of(o, "EventName");
			if (!ev)
				ev = field_of(o, "MetricName");
			if (ev && strcasecmp(ev, name) == 0)
				return o;
		}
	}
	return NULL;
}

static int json_files(const char *dir, struct dirent ***out);

static void std_free(struct std_events *s)
{
	for (size_t i = 0; i < s->nfiles; i++)
		js.json_object_put(s->files[i]);
	free(s->files);
}

static int std_load(const char *archdir, struct std_events *s)
{
	struct dirent **ents;
	int n = json_files(archdir, &ents);
	char path[4096];
	int err = 0;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", archdir, ents[i]->d_name);
		json_object *j = err ? NULL : read_json(path);
		if (!err && !j)
			err = -EINVAL;
		else if (j && js.json_object_get_type(j) != json_type_array)
			js.json_object_put(j);
		else if (j && hwc__reserve(&s->files, &s->capfiles, s->nfiles + 1, sizeof(*s->files)))
			js.json_object_put(j), err = hwc__fail(-ENOMEM, "out of memory");
		else if (j)
			s->files[s->nfiles++] = j;
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	return err;
}

static int is_json(const struct dirent *de)
{
	size_t n = strlen(de->d_name);
	return de->d_name[0] != '.' && n > 5 && strcmp(de->d_name + n - 5, ".json") == 0;
}

/* The *.json files of DIR, sorted; their count or -errno. */
static int json_files(const char *dir, struct dirent ***out)
{
	int n = scandir(dir, out, is_json, alphasort);
	return n < 0 ? -errno : n;
}

/* Records of one JSON file. */
static int add_file(struct builder *b, const char *dir, const char *file,
		    const struct std_events *std)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	json_object *j = read_json(path);
	if (!j)
		return -EINVAL;
	int err = 0;
	/* metricgroups.json is an object: group descriptions, no records. */
	size_t n = js.json_object_get_type(j) == json_type_array ? js.json_object_array_length(j) : 0;
	for (size_t i = 0; i < n && !err; i++) {
		json_object *o = js.json_object_array_get_idx(j, i);
		if (js.json_object_get_type(o) != json_type_object)
			continue;
		b->f = NULL;
		b->nf = b->capf = 0;
		err = add_fields(b, o);
		const char *std_name = field_of(o, "ArchStdEvent");
		if (!err && std_name) {
			json_object *s = std_find(std, std_name);
			if (!s)
				err = hwc__fail(-EINVAL, "%s: ArchStdEvent '%s' is no architecture-"
							 "standard event of the tree",
						path, std_name);
			else
				err = add_fields(b, s);
		}
		const char *metric = NULL, *event = NULL;
		for (size_t k = 0; k < b->nf; k++) {
			if (strcmp(b->f[k].key, "MetricName") == 0)
				metric = b->f[k].value;
			else if (strcmp(b->f[k].key, "EventName") == 0)
				event = b->f[k].value;
		}
		if (!err && (metric || event)) {
			err = hwc__reserve(&b->rec, &b->cap, b->n + 1, sizeof(*b->rec));
			char *fname = err ? NULL : strdup(file);
			if (!err && !fname)
				err = -ENOMEM;
			if (!err)
				b->rec[b->n++] = (struct hwc__pe_record){
					.name = metric ? metric : event, .metric = metric != NULL,
					.file = fname, .nfields = b->nf, .fields = b->f};
			else
				hwc__fail(-ENOMEM, "out of memory");
		}
		if (err || !(metric || event)) {
			for (size_t k = 0; k < b->nf; k++) {
				free((char *)b->f[k].key);
				free((char *)b->f[k].value);
			}
			free(b->f);
		}
	}
	js.json_object_put(j);
	return err;
}

static void records_free(const struct hwc__pe_record *rec, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < rec[i].nfields; k++) {
			free((char *)rec[i].fields[k].key);
			free((char *)rec[i].fields[k].value);
		}
		free((void *)rec[i].fields);
		free((char *)rec[i].file);
	}
	free((void *)rec);
}

void hwc__pe_forget(void)
{
	pthread_mutex_lock(&lock);
	while (tables) {
		struct table *t = tables;
		tables = t->next;
		records_free(t->pub.rec, t->pub.n);
		free((char *)t->pub.arch);
		free((char *)t->pub.model);
		free((char *)t->pub.dir);
		free(t);
	}
	host_table = NULL;
	host_root[0] = '\0';
	pthread_mutex_unlock(&lock);
}

static int load_table(const char *root, const char *arch, const char *model,
		      struct table **out)
{
	char dir[4096], archdir[4096];
	snprintf(archdir, sizeof(archdir), "%s/%s", root, arch);
	snprintf(dir, sizeof(dir), "%s/%s", archdir, model);
	struct dirent **ents;
	int n = json_files(dir, &ents);
	if (n < 0)
		return hwc__fail(n, "cannot read the JSON event tables in %s: %s", dir, strerror(-n));
	struct std_events std = {0};
	int err = std_load(archdir, &std);
	struct builder b = {0};
	for (int i = 0; i < n; i++) {
		if (!err)
			err = add_file(&b, dir, ents[i]->d_name, &std);
		free(ents[i]);
	}
	free(ents);
	/* A system's PMUs (arm/cmn/sys/): events matched by Compat, not by CPU */
	char sys[4096 + 8];
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	n = is_dir(sys) ? json_files(sys, &ents) : 0;
	for (int i = 0; i < n; i++) {
		if (!err)
			err = add_file(&b, sys, ents[i]->d_name, &std);
		free(ents[i]);
	}
	if (n > 0)
		free(ents);
	std_free(&std);
	struct table *t = err ? NULL : calloc(1, sizeof(*t));
	char *a = t ? strdup(arch) : NULL, *m = a ? strdup(model) : NULL, *d = m ? strdup(dir) : NULL;
	if (!err && !d) {
		free(a);
		free(m);
		free(t);
		err = hwc__fail(-ENOMEM, "out of memory");
	}
	if (err) {
		records_free(b.rec, b.n);
		return err;
	}
	t->pub = (struct hwc__pe_table){.arch = a, .model = m, .dir = d, .n = b.n, .rec = b.rec};
	*out = t;
	return 0;
}

/* The architecture whose directory holds MODEL, or NULL; CANON gets the
 * model directory: MODEL itself, or VENDOR/MODEL for a bare arm64 name
 * ("cortex-a76" for arm/cortex-a76: model::EVENT cannot hold a '/'). */
static const char *arch_of(const char *root, const char *model, char *canon, size_t size)
{
	char path[4096];
	if (!*model || strstr(model, "..") || model[0] == '/' || strchr(model, ':'))
		return NULL;
	for (size_t i = 0; i < HWC_ARRAY_SIZE(arches); i++) {
		if (!arches[i][0])
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", root, arches[i], model);
		if (is_dir(path)) {
			snprintf(canon, size, "%s", model);
			return arches[i];
		}
	}
	for (size_t i = 0; i < HWC_ARRAY_SIZE(arches) && !strchr(model, '/'); i++) {
		if (!arches[i][0])
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, arches[i]);
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/%s/%s", root, arches[i], de->d_name, model);
			if (is_dir(path)) {
				snprintf(canon, size, "%s/%s", de->d_name, model);
				closedir(d);
				return arches[i];
			}
		}
		if (d)
			closedir(d);
	}
	return NULL;
}

bool hwc__pe_model_known(const char *model)
{
	char canon[256];
	const char *root = hwc__pe_root();
	return root && arch_of(root, model, canon, sizeof(canon));
}

static pthread_once_t json_once = PTHREAD_ONCE_INIT;

/* MODEL's table of ARCH, loaded once.  Caller holds the lock. */
static int table_get(const char *root, const char *arch, const char *model, struct table **out)
{
	struct table *t;
	for (t = tables; t; t = t->next)
		if (strcmp(t->pub.arch, arch) == 0 && strcmp(t->pub.model, model) == 0)
			break;
	int err = 0;
	if (!t) {
		err = hwc__dl_load_once(&json_once, json_load, json_load_error,
					"the JSON event tables need json-c (libjson-c.so.5)",
					"libjson-c5");
		if (!err && !(err = load_table(root, arch, model, &t))) {
			t->next = tables;
			tables = t;
		}
	}
	*out = t;
	return err;
}

int hwc__pe_arch_table(const char *arch, const struct hwc__pe_table **out)
{
	char root[4096];
	struct table *t = NULL;
	pthread_mutex_lock(&lock);
	int err = find_root(root, sizeof(root)) ? table_get(root, arch, "", &t) : no_tree();
	pthread_mutex_unlock(&lock);
	if (!err)
		*out = &t->pub;
	return err;
}

int hwc__pe_table(const char *model, const struct hwc__pe_table **out)
{
	bool host_lookup = !model;
	char root[4096], id[128];
	pthread_mutex_lock(&lock);
	int err = 0;
	const char *arch = NULL;
	struct host_match hm = {.id = id};
	if (!find_root(root, sizeof(root))) {
		err = no_tree();
	} else if (!model && host_table && strcmp(root, host_root) == 0) {
		*out = &host_table->pub;
		pthread_mutex_unlock(&lock);
		return 0;
	} else if (model) {
		arch = arch_of(root, model, hm.model, sizeof(hm.model));
		if (!arch)
			err = hwc__fail(-ENOENT, "no JSON model '%s' in %s (`hwc list --pmu help` "
						 "lists the models)",
					model, root);
		model = hm.model;
	} else if (!hwc__pe_host_cpuid(id, sizeof(id))) {
		err = hwc__fail(-ENOENT, "this CPU has no identifier to look up in %s/%s/mapfile.csv",
				root, HOST_ARCH);
	} else if (!model_for(root, HOST_ARCH, &hm)) {
		err = hwc__fail(-ENOENT, "no JSON event table for this CPU (%s) in %s/%s/mapfile.csv",
				id, root, HOST_ARCH);
	} else {
		model = hm.model;
		arch = HOST_ARCH;
	}
	struct table *t = NULL;
	if (!err)
		err = table_get(root, arch, model, &t);
	if (!err && host_lookup) {
		host_table = t;
		snprintf(host_root, sizeof(host_root), "%s", root);
	}
	pthread_mutex_unlock(&lock);
	if (!err)
		*out = &t->pub;
	return err;
}

const char *hwc__pe_get(const struct hwc__pe_record *r, const char *key)
{
	for (size_t i = 0; i < r->nfields; i++)
		if (strcmp(r->fields[i].key, key) == 0)
			return r->fields[i].value;
	return NULL;
}

const struct hwc__pe_record *hwc__pe_find(const struct hwc__pe_table *t, const char *name,
					  bool metric)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->rec[i].metric == metric && strcasecmp(t->rec[i].name, name) == 0)
			return &t->rec[i];
	return NULL;
}

int hwc__pe_sys_walk(int (*fn)(const struct hwc__pe_table *t, void *arg), void *arg)
{
	const char *r = hwc__pe_root();
	if (!r || !HOST_ARCH[0])
		return 0;
	char dir[4096], path[4096 + 512], model[512];
	snprintf(dir, sizeof(dir), "%s/%s", r, HOST_ARCH);
	struct dirent **top;
	int n = scandir(dir, &top, NULL, alphasort), ret = 0;
	for (int i = 0; i < n; i++) {
		/* x86/MODEL/sys or arm64/VENDOR/MODEL/sys */
		struct dirent **sub = NULL;
		snprintf(path, sizeof(path), "%s/%s", dir, top[i]->d_name);
		int m = top[i]->d_name[0] == '.' ? -1 : scandir(path, &sub, NULL, alphasort);
		for (int k = -1; k < m && !ret; k++) {
			if (k >= 0 && sub[k]->d_name[0] == '.')
				continue;
			if (k < 0)
				snprintf(model, sizeof(model), "%s", top[i]->d_name);
			else
				snprintf(model, sizeof(model), "%s/%s", top[i]->d_name, sub[k]->d_name);
			snprintf(path, sizeof(path), "%s/%s/sys", dir, model);
			const struct hwc__pe_table *t;
			if (!is_dir(path))
				continue;
			if (hwc__pe_table(model, &t) == 0)
				ret = fn(t, arg);
			else
				hwc__clear_error(); /* a table that does not load holds no event */
		}
		for (int k = 0; k < m; k++)
			free(sub[k]);
		free(sub);
		free(top[i]);
	}
	if (n > 0)
		free(top);
	return ret;
}

struct models_walk {
	int (*fn)(const char *model, const char *arch, const char *cpuid, void *arg);
	void *arg;
	const char *arch;
	char **seen;
	size_t nseen, cap;
};

static int model_row(const char *cpuid, const char *model, void *arg)
{
	struct models_walk *w = arg;
	for (size_t i = 0; i < w->nseen; i++)
		if (strcmp(w->seen[i], model) == 0)
			return 0;
	char *copy = strdup(model);
	if (!copy || hwc__reserve(&w->seen, &w->cap, w->nseen + 1, sizeof(*w->seen))) {
		free(copy);
		return hwc__fail(-ENOMEM, "out of memory");
	}
	w->seen[w->nseen++] = copy;
	return w->fn(model, w->arch, cpuid, w->arg);
}

int hwc__pe_models_walk(int (*fn)(const char *model, const char *arch, const char *cpuid,
				  void *arg),
			void *arg)
{
	const char *r = hwc__pe_root();
	if (!r)
		return 0;
	char root[4096];
	snprintf(root, sizeof(root), "%s", r);
	struct models_walk w = {.fn = fn, .arg = arg};
	int ret = 0;
	for (size_t i = 0; i < HWC_ARRAY_SIZE(arches) && !ret; i++) {
		bool again = false;
		for (size_t k = 0; k < i; k++)
			again |= strcmp(arches[k], arches[i]) == 0;
		if (again || !arches[i][0])
			continue;
		w.arch = arches[i];
		ret = mapfile_walk(root, arches[i], model_row, &w);
		if (ret == -ENOENT)
			ret = 0;
	}
	for (size_t i = 0; i < w.nseen; i++)
		free(w.seen[i]);
	free(w.seen);
	return ret;
}
