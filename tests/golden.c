/* The golden encoding table: tests/golden/encodings.tsv lists event specs
 * and what hwc_evlist_add() must make of them (type, config words, exclude
 * bits, or an error).  It checks the resolver on any host:
 *  - rows whose env column sets LIBPFM_FORCE_PMU run in a child process
 *    with that variable, because libpfm4 reads it once, at initialisation;
 *  - rows that name PMUs run against a FAKE sysfs tree (HWC_SYSFS_ROOT=
 *    tests/golden/sysfs or sysfs-amd): this machine has no cpu PMU, and
 *    encodings must not depend on the host anyway.  The fake files copy
 *    what Linux 6.1 exposes (sources named in tests/golden/README).
 * tests/golden_perf.py checks the same rows against perf.
 *
 * Rows that need a libpfm4 model this build lacks (Debian's libpfm4 has only
 * its own architecture's tables) are skipped, and the count says so.
 *
 * Usage: golden                 run the whole table
 *        golden --group ENV     only the rows of environment ENV (as the table
 *                               writes it, "-" for none), in this process: for
 *                               qemu-user, whose forked children hang
 *        golden --encode SPEC   print hwc's encoding of SPEC as JSON lines
 *                               (for golden_perf.py) */
#include "check.h"

#include <errno.h>
#include <hwc/hwc.h>
#include <stdbool.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ROWS 1024
#define MAX_ENVS 32
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

struct row {
	int line;
	char *spec, *env, *perf;
	char *error;              /* expected error substring, or NULL */
	char *cols[5];            /* type, config, config1, config2, excl */
	char *extra;              /* key=value ... or NULL */
};

static struct row rows[MAX_ROWS];
static size_t nrows;
static const char *table_path;
/* Rows that resolved, by source (enum hwc_source), over all groups. */
static int by_source[HWC_SRC_TRACEPOINT + 1];
/* Rows skipped because this libpfm4 lacks an x86 model's table: the
 * minimums below count x86 rows, so they cannot hold on other builds. */
static int rows_skipped;

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		abort();
	return d;
}

static void load_table(void)
{
	FILE *f = fopen(table_path, "r");
	if (!f) {
		fprintf(stderr, "cannot open %s: %s\n", table_path, strerror(errno));
		exit(1);
	}
	char line[2048];
	int lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		char *field[10] = {0};
		size_t n = 0;
		for (char *p = line; p && n < 10;) {
			char *tab = strchr(p, '\t');
			if (tab)
				*tab++ = '\0';
			field[n++] = p;
			p = tab;
		}
		if (nrows == MAX_ROWS || n < 4 || (strncmp(field[3], "error: ", 7) != 0 && n < 8)) {
			fprintf(stderr, "%s:%d: malformed row (%zu fields)\n", table_path, lineno, n);
			exit(1);
		}
		struct row *r = &rows[nrows++];
		r->line = lineno;
		r->spec = xstrdup(field[0]);
		r->env = xstrdup(field[1]);
		r->perf = xstrdup(field[2]);
		if (strncmp(field[3], "error: ", 7) == 0) {
			r->error = xstrdup(field[3] + 7);
			continue;
		}
		for (int i = 0; i < 5; i++)
			r->cols[i] = xstrdup(field[3 + i]);
		r->extra = n > 8 && field[8][0] ? xstrdup(field[8]) : NULL;
	}
	fclose(f);
}

static uint64_t num(const struct row *r, const char *s)
{
	char *end;
	errno = 0;
	uint64_t v = strtoull(s, &end, 0);
	if (errno || end == s || *end) {
		fprintf(stderr, "%s:%d: bad number '%s'\n", table_path, r->line, s);
		exit(1);
	}
	return v;
}

static void describe(const struct hwc_event *e, char *buf, size_t size)
{
	const struct perf_event_attr *a = &e->attr;
	snprintf(buf, size,
		 "type=%u config=%#llx config1=%#llx config2=%#llx excl=%d%d%d precise=%u eg=%d "
		 "eh=%d pinned=%d exclusive=%d group=%d leader=%d source=%s pmu=%s name=%s unit=%s "
		 "scale=%g period=%llu",
		 a->type, (unsigned long long)a->config, (unsigned long long)a->config1,
		 (unsigned long long)a->config2, a->exclude_user, a->exclude_kernel, a->exclude_hv,
		 a->precise_ip, a->exclude_guest, a->exclude_host, a->pinned, a->exclusive, e->group,
		 e->leader, hwc_source_name(e->source), e->pmu, e->name, e->unit, e->scale,
		 (unsigned long long)a->sample_period);
}

/* Compare one optional key=value of the extra column. */
static bool check_extra(const struct row *r, const struct hwc_event *e, size_t nev, const char *key,
			const char *val, char *why, size_t size)
{
	const struct perf_event_attr *a = &e->attr;
	uint64_t got;
	if (strcmp(key, "ev") == 0)
		return true; /* chose the event, handled by the caller */
	if (strcmp(key, "events") == 0)
		got = nev;
	else if (strcmp(key, "precise") == 0)
		got = a->precise_ip;
	else if (strcmp(key, "eg") == 0)
		got = a->exclude_guest;
	else if (strcmp(key, "eh") == 0)
		got = a->exclude_host;
	else if (strcmp(key, "pinned") == 0)
		got = a->pinned;
	else if (strcmp(key, "exclusive") == 0)
		got = a->exclusive;
	else if (strcmp(key, "idle") == 0)
		got = a->exclude_idle;
	else if (strcmp(key, "period") == 0)
		got = a->sample_period;
	else if (strcmp(key, "group") == 0)
		got = (uint64_t)e->group;
	else if (strcmp(key, "leader") == 0)
		got = e->leader;
	else if (strcmp(key, "weak") == 0)
		got = e->weak;
	else if (strcmp(key, "scale") == 0) {
		double want = strtod(val, NULL);
		if (e->scale != want)
			snprintf(why, size, "scale: want %s, got %g", val, e->scale);
		return e->scale == want;
	} else {
		const char *s = strcmp(key, "source") == 0 ? hwc_source_name(e->source)
				: strcmp(key, "pmu") == 0  ? e->pmu
				: strcmp(key, "unit") == 0 ? e->unit
				: strcmp(key, "name") == 0 ? e->name
				: strcmp(key, "origin") == 0 ? e->origin
							     : NULL;
		if (!s) {
			fprintf(stderr, "%s:%d: unknown key '%s'\n", table_path, r->line, key);
			exit(1);
		}
		/* origin is checked by substring: it is prose. */
		bool ok = strcmp(key, "origin") == 0 ? strstr(s, val) != NULL : strcmp(s, val) == 0;
		if (!ok)
			snprintf(why, size, "%s: want '%s', got '%s'", key, val, s);
		return ok;
	}
	if (got != num(r, val)) {
		snprintf(why, size, "%s: want %s, got %llu", key, val, (unsigned long long)got);
		return false;
	}
	return true;
}

static int check_row(const struct row *r)
{
	hwc_evlist *l;
	if (hwc_evlist_new(&l))
		abort();
	int err = hwc_evlist_add(l, r->spec);
	char got[1024] = "", why[512] = "";
	bool ok;
	if (r->error) {
		ok = err < 0 && strstr(hwc_errdetail(), r->error) && hwc_evlist_size(l) == 0;
		if (!ok && err == 0)
			describe(hwc_evlist_event(l, 0), got, sizeof(got));
		else if (!ok)
			snprintf(got, sizeof(got), "error %d: %s", err, hwc_errdetail());
		if (!ok)
			fprintf(stderr, "%s:%d: '%s'\n  want: error containing \"%s\"\n  got:  %s\n",
				table_path, r->line, r->spec, r->error, got);
		hwc_evlist_free(l);
		return ok ? 0 : 1;
	}
	if (err) {
		fprintf(stderr, "%s:%d: '%s'\n  want: type=%s config=%s config1=%s config2=%s excl=%s\n"
				"  got:  error %d: %s\n",
			table_path, r->line, r->spec, r->cols[0], r->cols[1], r->cols[2], r->cols[3],
			r->cols[4], err, hwc_errdetail());
		hwc_evlist_free(l);
		return 1;
	}
	size_t ev = 0;
	char extra[512] = "";
	if (r->extra) {
		snprintf(extra, sizeof(extra), "%s", r->extra);
		const char *e = strstr(extra, "ev=");
		if (e && (e == extra || e[-1] == ' '))
			ev = (size_t)strtoul(e + 3, NULL, 10);
	}
	const struct hwc_event *e = hwc_evlist_event(l, ev);
	if (e && (unsigned)e->source < LEN(by_source))
		by_source[e->source]++;
	if (!e) {
		fprintf(stderr, "%s:%d: '%s' has %zu events, no event %zu\n", table_path, r->line,
			r->spec, hwc_evlist_size(l), ev);
		hwc_evlist_free(l);
		return 1;
	}
	const struct perf_event_attr *a = &e->attr;
	char excl[4] = {(char)('0' + a->exclude_user), (char)('0' + a->exclude_kernel),
			(char)('0' + a->exclude_hv), 0};
	ok = a->type == num(r, r->cols[0]) && a->config == num(r, r->cols[1]) &&
	     a->config1 == num(r, r->cols[2]) && a->config2 == num(r, r->cols[3]) &&
	     strcmp(excl, r->cols[4]) == 0;
	if (!ok)
		snprintf(why, sizeof(why), "attr differs");
	char *save = NULL;
	for (char *kv = strtok_r(extra, " ", &save); kv && ok; kv = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq) {
			fprintf(stderr, "%s:%d: bad extra '%s'\n", table_path, r->line, kv);
			exit(1);
		}
		*eq = '\0';
		ok = check_extra(r, e, hwc_evlist_size(l), kv, eq + 1, why, sizeof(why));
	}
	if (!ok) {
		describe(e, got, sizeof(got));
		fprintf(stderr, "%s:%d: '%s' (event %zu): %s\n  want: type=%s config=%s config1=%s "
				"config2=%s excl=%s %s\n  got:  %s\n",
			table_path, r->line, r->spec, ev, why, r->cols[0], r->cols[1], r->cols[2],
			r->cols[3], r->cols[4], r->extra ? r->extra : "", got);
	}
	hwc_evlist_free(l);
	return ok ? 0 : 1;
}

/* The libpfm4 models the table's rows name.  Debian builds libpfm4 with
 * the tables of its own architecture only (x86 on amd64, ARM on arm64):
 * a row that needs a model this build lacks is skipped, and said so. */
static const char *const table_models[] = {"skl", "icl", "spr", "amd64_fam19h_zen3",
					   "amd64_fam19h_zen4", "arm_n1", "arm_ac57", "arm_ac53",
					   "arm_v1"};

static int find_model(const struct hwc_model_info *m, void *arg)
{
	return strcmp(m->name, arg) == 0;
}

/* The table model ROW needs that this libpfm4 lacks, or NULL. */
static const char *missing_model(const struct row *r)
{
	static int known[LEN(table_models)]; /* 0 not asked yet, 1 known, -1 not */
	for (size_t m = 0; m < LEN(table_models); m++) {
		const char *name = table_models[m];
		size_t n = strlen(name);
		char forced[64];
		snprintf(forced, sizeof(forced), "LIBPFM_FORCE_PMU=%s", name);
		bool needs = strcmp(r->env, forced) == 0 ||
			     (strncasecmp(r->spec, name, n) == 0 && r->spec[n] == ':');
		if (needs && !known[m]) { /* one walk per model: it counts every model's events */
			int found = hwc_models_walk(find_model, (void *)name);
			known[m] = found == 1 ? 1 : -1;
			if (found < 0) /* not even libpfm4: say why, once */
				fprintf(stderr, "libpfm4 rows skipped: %s\n", hwc_errdetail());
		}
		if (needs && known[m] < 0)
			return name;
	}
	return NULL;
}

/* Child: check the rows of one environment (already set by the parent). */
static int run_group(const char *env)
{
	int failed = 0, checked = 0, skipped = 0;
	const char *lacks = NULL;
	int skipped_x86 = 0;
	for (size_t i = 0; i < nrows; i++)
		if (strcmp(rows[i].env, env) == 0) {
			const char *m = missing_model(&rows[i]);
			if (m) {
				lacks = m;
				skipped++;
				skipped_x86 += strncmp(m, "arm_", 4) != 0;
				continue;
			}
			failed += check_row(&rows[i]);
			checked++;
		}
	if (skipped)
		fprintf(stderr, "env %-40s %d rows skipped: this libpfm4 lacks their model's table (%s, ...; Debian "
				"builds only its architecture's)\n",
			env, skipped, lacks);
	fprintf(stderr, "env %-40s %d rows, %d failed\n", env, checked, failed);
	/* The parent's coverage check discounts what was skipped. */
	printf("skipped %d\n", skipped_x86);
	/* Tell the parent what kinds of events the rows resolved to. */
	for (size_t s = 0; s < LEN(by_source); s++)
		printf("%zu %d\n", s, by_source[s]);
	return failed ? 1 : 0;
}

/* Set the ENV column's NAME=value assignments (space separated); a relative
 * HWC_SYSFS_ROOT is relative to the source tree. */
static void apply_env(const char *env, const char *src)
{
	unsetenv("LIBPFM_FORCE_PMU");
	unsetenv("HWC_SYSFS_ROOT");
	if (strcmp(env, "-") == 0)
		return;
	char *copy = xstrdup(env), *save = NULL;
	for (char *kv = strtok_r(copy, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq) {
			fprintf(stderr, "bad env '%s'\n", env);
			exit(1);
		}
		*eq = '\0';
		char path[4096];
		if (strcmp(kv, "HWC_SYSFS_ROOT") == 0 && eq[1] != '/') {
			snprintf(path, sizeof(path), "%s/%s", src, eq + 1);
			setenv(kv, path, 1);
		} else {
			setenv(kv, eq + 1, 1);
		}
	}
	free(copy);
}

/* The table must keep covering every kind of spec. */
static void check_coverage(void)
{
	static const struct {
		enum hwc_source src;
		int min;
	} kinds[] = {
		{HWC_SRC_GENERIC, 10}, {HWC_SRC_CACHE, 15}, {HWC_SRC_SOFTWARE, 12}, {HWC_SRC_RAW, 6},
		{HWC_SRC_PMU, 15},     {HWC_SRC_PRESET, 12}, {HWC_SRC_PFM, 25},
	};
	for (size_t k = 0; k < LEN(kinds); k++)
		if (rows_skipped && (kinds[k].src == HWC_SRC_PFM || kinds[k].src == HWC_SRC_PRESET))
			fprintf(stderr, "%s rows: no minimum, %d rows needed x86 libpfm4 tables this "
					"build lacks\n",
				hwc_source_name(kinds[k].src), rows_skipped);
		else if (by_source[kinds[k].src] < kinds[k].min) {
			fprintf(stderr, "the table has %d %s rows, fewer than %d\n",
				by_source[kinds[k].src], hwc_source_name(kinds[k].src), kinds[k].min);
			check_failures++;
		}
	/* Every architecture's models keep their rows, run here or not. */
	static const char *const models[] = {"skl::", "icl::", "spr::", "amd64_fam19h_zen3::",
					     "amd64_fam19h_zen4::", "arm_n1::", "arm_ac57::"};
	for (size_t m = 0; m < LEN(models); m++) {
		int n = 0;
		for (size_t i = 0; i < nrows; i++)
			n += strstr(rows[i].spec, models[m]) != NULL;
		if (n < 4) {
			fprintf(stderr, "the table has %d rows for %s, fewer than 4\n", n, models[m]);
			check_failures++;
		}
	}
	int errors = 0;
	for (size_t i = 0; i < nrows; i++)
		errors += rows[i].error != NULL;
	if (nrows < 150 || errors < 30) {
		fprintf(stderr, "the table has %zu rows and %d error rows (want >= 150 and >= 30)\n",
			nrows, errors);
		check_failures++;
	}
}

/* What the table cannot say: the evlist as a whole. */
static void check_api(void)
{
	hwc_evlist *l;
	if (hwc_evlist_new(&l))
		abort();
	CHECK_INT(hwc_evlist_add(l, ""), ==, -EINVAL);
	CHECK_STR_CONTAINS(hwc_errdetail(), "empty event specification");
	CHECK_INT(hwc_evlist_add(l, NULL), ==, -EINVAL);
	char longname[400];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK_INT(hwc_evlist_add(l, longname), ==, -ENAMETOOLONG);
	CHECK_STR_CONTAINS(hwc_errdetail(), "too long");
	/* A failing spec appends nothing, even after events that resolved. */
	CHECK_INT(hwc_evlist_add(l, "cycles,{instructions,branches},nosuchevent"), ==, -ENOENT);
	CHECK_OK(hwc_evlist_size(l));
	/* Successive calls append; groups keep counting up. */
	CHECK_OK(hwc_evlist_add(l, "{task-clock,page-faults}"));
	CHECK_OK(hwc_evlist_add(l, "cycles,{instructions,branches}:u"));
	CHECK_INT(hwc_evlist_size(l), ==, 5);
	const int group[] = {0, 0, 1, 2, 2}, leader[] = {1, 0, 1, 1, 0};
	for (size_t i = 0; i < 5; i++) {
		CHECK_INT(hwc_evlist_event(l, i)->group, ==, group[i]);
		CHECK_INT(hwc_evlist_event(l, i)->leader, ==, leader[i]);
	}
	CHECK(hwc_evlist_event(l, 5) == NULL);
	CHECK_STR_CONTAINS(hwc_evlist_event(l, 4)->name, "branches");
	hwc_evlist_free(l);
}

static void print_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int encode(const char *spec)
{
	hwc_evlist *l;
	if (hwc_evlist_new(&l))
		return 1;
	int err = hwc_evlist_add(l, spec);
	if (err) {
		printf("{\"error\": ");
		print_json_string(hwc_errdetail());
		printf("}\n");
	}
	for (size_t i = 0; !err && i < hwc_evlist_size(l); i++) {
		const struct hwc_event *e = hwc_evlist_event(l, i);
		const struct perf_event_attr *a = &e->attr;
		printf("{\"type\": %u, \"config\": %llu, \"config1\": %llu, \"config2\": %llu, "
		       "\"exclude_user\": %d, \"exclude_kernel\": %d, \"exclude_hv\": %d, "
		       "\"exclude_guest\": %d, \"exclude_host\": %d, \"precise_ip\": %u, \"name\": ",
		       a->type, (unsigned long long)a->config, (unsigned long long)a->config1,
		       (unsigned long long)a->config2, a->exclude_user, a->exclude_kernel,
		       a->exclude_hv, a->exclude_guest, a->exclude_host, a->precise_ip);
		print_json_string(e->name);
		printf("}\n");
	}
	hwc_evlist_free(l);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--encode") == 0)
		return encode(argv[2]);
	const char *src = getenv("HWC_SRC") ? getenv("HWC_SRC") : ".";
	static char path[4096];
	snprintf(path, sizeof(path), "%s/tests/golden/encodings.tsv", src);
	table_path = path;
	load_table();
	if (argc == 3 && strcmp(argv[1], "--group") == 0) {
		apply_env(argv[2], src);
		return run_group(argv[2]);
	}

	/* One child per environment: libpfm4 reads LIBPFM_FORCE_PMU once. */
	const char *envs[MAX_ENVS];
	size_t nenvs = 0;
	for (size_t i = 0; i < nrows; i++) {
		size_t k = 0;
		while (k < nenvs && strcmp(envs[k], rows[i].env) != 0)
			k++;
		if (k == nenvs) {
			if (nenvs == MAX_ENVS) {
				fprintf(stderr, "too many environments\n");
				return 1;
			}
			envs[nenvs++] = rows[i].env;
		}
	}
	for (size_t k = 0; k < nenvs; k++) {
		int pipefd[2];
		fflush(NULL);
		if (pipe(pipefd)) {
			perror("pipe");
			return 1;
		}
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			dup2(pipefd[1], STDOUT_FILENO);
			close(pipefd[0]);
			close(pipefd[1]);
			/* The parent has not started libhwc (nor libpfm4) yet, so the
			 * child starts it afresh with this environment; no exec, so
			 * that it also runs under qemu-user without binfmt_misc. */
			apply_env(envs[k], src);
			int rc = run_group(envs[k]);
			fflush(NULL);
			_exit(rc);
		}
		close(pipefd[1]);
		FILE *counts = fdopen(pipefd[0], "r");
		size_t s;
		int n;
		char line[64];
		while (counts && fgets(line, sizeof(line), counts))
			if (sscanf(line, "skipped %d", &n) == 1)
				rows_skipped += n;
			else if (sscanf(line, "%zu %d", &s, &n) == 2 && s < LEN(by_source))
				by_source[s] += n;
		if (counts)
			fclose(counts);
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "FAIL rows with env '%s'\n", envs[k]);
			check_failures++;
		}
	}
	check_coverage();
	check_api();
	fprintf(stderr, "%zu rows in %zu environments\n", nrows, nenvs);
	return check_exit();
}
