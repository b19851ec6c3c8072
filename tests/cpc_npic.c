/* cpc_npic(3CPC): what the library says about this machine's counters, and
 * whether it tells the truth: every event a walker lists can be requested,
 * and the counter count matches the PMU the kernel exposes. */
#include "cpc_test.h"

#include <sys/stat.h>

struct names {
	int n, dup;
	char name[4096][64];
	cpc_t *cpc;
	int unusable;
	char first_unusable[64];
	uint_t picno;
	int wrong_pic;
};

static void add_name(struct names *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			s->dup++;
	if (s->n < 4096)
		snprintf(s->name[s->n++], sizeof(s->name[0]), "%s", name);
}

static void collect(void *arg, const char *name)
{
	add_name(arg, name);
}

static void collect_pic(void *arg, uint_t picno, const char *name)
{
	struct names *s = arg;
	s->wrong_pic += picno != s->picno;
	add_name(s, name);
}

static bool have(const struct names *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			return true;
	return false;
}

static void quiet(const char *fn, int subcode, const char *fmt, va_list ap)
{
	(void)fn, (void)subcode, (void)fmt, (void)ap;
}

/* Every listed event can be added to a set and bound. */
static void check_usable(cpc_t *cpc, const struct names *s, const char *what)
{
	int bad = 0;
	for (int i = 0; i < s->n; i++) {
		cpc_set_t *set = cpc_set_create(cpc);
		if (cpc_set_add_request(cpc, set, s->name[i], 0, CPC_COUNT_USER, 0, NULL) != 0 ||
		    cpc_bind_curlwp(cpc, set, 0) != 0) {
			if (bad++ == 0)
				fprintf(stderr, "%s lists '%s', which cannot be counted: %s\n", what,
					s->name[i], strerror(errno));
		}
		cpc_set_destroy(cpc, set);
	}
	CHECK_INT(bad, ==, 0);
}

static struct names all, generic, pic, attrs;

static void test_configuration(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	uint_t npic = cpc_npic(cpc);
	/* No counters without a core PMU; some (and not absurdly many) with one. */
	if (kernel_has_core_pmu()) {
		CHECK_INT(npic, >=, 1);
		CHECK_INT(npic, <=, 64);
	} else {
		CHECK_INT(npic, ==, 0);
	}
	CHECK(cpc_caps(cpc) & CPC_CAP_OVERFLOW_INTERRUPT);
	CHECK(cpc_caps(cpc) & CPC_CAP_OVERFLOW_PRECISE);
	CHECK(cpc_cciname(cpc) != NULL && strlen(cpc_cciname(cpc)) > 3);
	CHECK(cpc_cpuref(cpc) != NULL && strlen(cpc_cpuref(cpc)) > 10);
	if (npic == 0)
		CHECK_STR_CONTAINS(cpc_cciname(cpc), "no hardware PMU");
	cpc_close(cpc);
}

static void test_events(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_seterrhndlr(cpc, quiet);
	cpc_walk_events_all(cpc, &all, collect);
	CHECK_INT(all.dup, ==, 0); /* each event once */
	/* Linux software events: an hwc extension, listed on every machine. */
	CHECK(have(&all, "task-clock"));
	CHECK(have(&all, "page-faults"));
	CHECK(have(&all, "context-switches"));
	check_usable(cpc, &all, "cpc_walk_events_all");
	/* Per counter: the events of the processor, all of them in the full list. */
	uint_t npic = cpc_npic(cpc);
	for (uint_t p = 0; p < npic; p++) {
		pic.n = 0;
		pic.picno = p;
		cpc_walk_events_pic(cpc, p, &pic, collect_pic);
		CHECK_INT(pic.wrong_pic, ==, 0);
		for (int i = 0; i < pic.n; i++)
			CHECK(have(&all, pic.name[i]));
	}
	/* A counter the machine does not have: no calls, EINVAL. */
	pic.n = 0;
	errno = 0;
	cpc_walk_events_pic(cpc, npic, &pic, collect_pic);
	CHECK_INT(pic.n, ==, 0);
	CHECK_INT(errno, ==, EINVAL);
	cpc_close(cpc);
}

static void test_generic_events(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_seterrhndlr(cpc, quiet);
	cpc_walk_generic_events_all(cpc, &generic, collect);
	CHECK_INT(generic.dup, ==, 0);
	for (int i = 0; i < generic.n; i++)
		CHECK(strncmp(generic.name[i], "PAPI_", 5) == 0);
	check_usable(cpc, &generic, "cpc_walk_generic_events_all");
	if (cpc_npic(cpc) == 0)
		CHECK_INT(generic.n, ==, 0); /* each maps to a processor event: none here */
	struct names p0 = {.picno = 0};
	errno = 0;
	cpc_walk_generic_events_pic(cpc, cpc_npic(cpc), &p0, collect_pic);
	CHECK_INT(p0.n, ==, 0);
	CHECK_INT(errno, ==, EINVAL);
	if (cpc_npic(cpc)) {
		cpc_walk_generic_events_pic(cpc, 0, &p0, collect_pic);
		CHECK_INT(p0.n, ==, generic.n);
	}
	cpc_close(cpc);
}

static void test_attrs(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_walk_attrs(cpc, &attrs, collect);
	CHECK_INT(attrs.dup, ==, 0);
	CHECK(have(&attrs, "picnum"));
#if defined(__x86_64__) || defined(__i386__)
	CHECK(have(&attrs, "umask"));
	CHECK(have(&attrs, "cmask"));
	CHECK(have(&attrs, "edge"));
	CHECK(have(&attrs, "inv"));
#endif
	cpc_close(cpc);
}

int main(void)
{
	RUN(test_configuration);
	RUN(test_events);
	RUN(test_generic_events);
	RUN(test_attrs);
	return check_exit();
}
