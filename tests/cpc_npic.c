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
	/* Some counters, and not absurdly many: the core PMU's, and without
	 * one, pics for the software events (there are always some). */
	CHECK_INT(npic, >=, 1);
	CHECK_INT(npic, <=, 64);
	(void)kernel_has_core_pmu;
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

/* The invariant the illumos tools rely on: every event the library
 * accepts (here: every event cpc_walk_events_all lists) is listed by
 * cpc_walk_events_pic for some pic below cpc_npic(), and a request for it
 * with that pic as its picnum is accepted. */
static void test_every_event_has_a_pic(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_seterrhndlr(cpc, quiet);
	struct names everything = {.n = 0};
	cpc_walk_events_all(cpc, &everything, collect);
	CHECK(have(&everything, "page-faults"));
	static struct names on_pic[64];
	uint_t npic = cpc_npic(cpc);
	for (uint_t p = 0; p < npic && p < 64; p++) {
		on_pic[p] = (struct names){.picno = p};
		cpc_walk_events_pic(cpc, p, &on_pic[p], collect_pic);
	}
	int missing = 0, refused = 0;
	for (int i = 0; i < everything.n; i++) {
		uint_t p = 0;
		while (p < npic && p < 64 && !have(&on_pic[p], everything.name[i]))
			p++;
		if (p == npic || p == 64) {
			if (missing++ == 0)
				fprintf(stderr, "'%s' is on no pic\n", everything.name[i]);
			continue;
		}
		cpc_attr_t pick = {"picnum", p};
		cpc_set_t *set = cpc_set_create(cpc);
		if (cpc_set_add_request(cpc, set, everything.name[i], 0, CPC_COUNT_USER, 1, &pick) < 0 &&
		    refused++ == 0)
			fprintf(stderr, "'%s' refused on pic %u\n", everything.name[i], p);
		cpc_set_destroy(cpc, set);
	}
	CHECK_INT(missing, ==, 0);
	CHECK_INT(refused, ==, 0);
	/* Software events are on every pic: a set can hold all of them. */
	CHECK_INT(npic, >=, 1);
	if (npic >= 1) {
		CHECK(have(&on_pic[0], "task-clock"));
		CHECK(have(&on_pic[(npic < 64 ? npic : 64) - 1], "task-clock"));
	}
	cpc_close(cpc);
}

/* -c as illumos's cputrack and cpustat parse it (strtoset.c): each event
 * goes to the first free pic after the last one taken whose
 * cpc_walk_events_pic lists it, or to the pic "picN=" names; each becomes
 * a request with that picnum.  NULL if the spec does not fit. */
struct fit {
	const char *want;
	bool found;
};

static void match(void *arg, uint_t picno, const char *name)
{
	(void)picno;
	struct fit *f = arg;
	f->found |= strcmp(f->want, name) == 0;
}

static bool pic_lists(cpc_t *cpc, uint_t p, const char *event)
{
	struct fit f = {event, false};
	cpc_walk_events_pic(cpc, p, &f, match);
	return f.found;
}

static cpc_set_t *parse_like_strtoset(cpc_t *cpc, const char *spec)
{
	uint_t npic = cpc_npic(cpc) < 64 ? cpc_npic(cpc) : 64; /* test_configuration checks */
	char events[64][CPC_MAX_EVENT_LEN] = {{0}};
	uint_t flags[64];
	for (uint_t i = 0; i < 64; i++)
		flags[i] = CPC_COUNT_USER;
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", spec);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned n;
		int used = 0;
		if (sscanf(tok, "pic%u=%n", &n, &used) == 1 && used > 0) {
			if (n >= npic || events[n][0] || !pic_lists(cpc, n, tok + used))
				return NULL;
			snprintf(events[n], sizeof(events[n]), "%s", tok + used);
		} else if (sscanf(tok, "sys%u%n", &n, &used) == 1 && !tok[used]) {
			if (n >= npic)
				return NULL;
			flags[n] |= CPC_COUNT_SYSTEM;
		} else if (strcmp(tok, "sys") == 0) {
			for (uint_t i = 0; i < npic; i++)
				flags[i] |= CPC_COUNT_SYSTEM;
		} else {
			int last = -1;
			for (int i = (int)npic - 1; i >= 0 && last < 0; i--)
				if (events[i][0])
					last = i;
			uint_t p = (uint_t)(last + 1);
			while (p < npic && !pic_lists(cpc, p, tok))
				p++;
			if (p >= npic)
				return NULL; /* cputrack: "bad token" */
			snprintf(events[p], sizeof(events[p]), "%s", tok);
		}
	}
	cpc_set_t *set = cpc_set_create(cpc);
	for (uint_t i = 0; i < npic && i < 64; i++) {
		if (!events[i][0])
			continue;
		cpc_attr_t pick = {"picnum", i};
		if (cpc_set_add_request(cpc, set, events[i], 0, flags[i], 1, &pick) < 0) {
			cpc_set_destroy(cpc, set);
			return NULL;
		}
	}
	return set;
}

static void test_spec_parsed_as_cputrack_does(void)
{
	cpc_t *cpc = cpc_open(CPC_VER_CURRENT);
	cpc_seterrhndlr(cpc, quiet);
	cpc_set_t *set = parse_like_strtoset(cpc, "page-faults,task-clock");
	CHECK(set != NULL);
	if (set) {
		cpc_buf_t *buf = cpc_buf_create(cpc, set);
		CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
		touch_pages(64);
		CHECK_INT(cpc_set_sample(cpc, set, buf), ==, 0);
		uint64_t faults = 0, clock = 0;
		CHECK_INT(cpc_buf_get(cpc, buf, 0, &faults), ==, 0);
		CHECK_INT(cpc_buf_get(cpc, buf, 1, &clock), ==, 0);
		CHECK_U64(faults, >=, 64);
		CHECK_U64(clock, >, 0);
		cpc_unbind(cpc, set);
	}
	set = parse_like_strtoset(cpc, "pic1=context-switches,sys1,cpu-migrations");
	CHECK(set != NULL || cpc_npic(cpc) < 3);
	/* Not an event anywhere: refused, as "bad token". */
	CHECK(parse_like_strtoset(cpc, "page-faults,no-such-event") == NULL);
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
	RUN(test_every_event_has_a_pic);
	RUN(test_spec_parsed_as_cputrack_does);
	RUN(test_generic_events);
	RUN(test_attrs);
	return check_exit();
}
