/* cpc_set_create(3CPC): sets, requests (indices, flags, attributes, the
 * errors each bad argument gives) and cpc_walk_requests(). */
#include "cpc_test.h"

/* Add EVENT and expect -1 with errno EINVAL and SUBCODE (0: no handler call). */
static void expect_refused(cpc_t *cpc, cpc_set_t *set, const char *event, uint_t flags,
			   uint_t nattrs, const cpc_attr_t *attrs, int subcode, const char *text)
{
	last_subcode = 0;
	last_msg[0] = '\0';
	errno = 0;
	int r = cpc_set_add_request(cpc, set, event, 0, flags, nattrs, attrs);
	CHECK_INT(r, ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(last_subcode, ==, subcode);
	if (subcode) {
		CHECK_STR_CONTAINS(last_fn, "cpc_set_add_request");
		CHECK_STR_CONTAINS(last_msg, text);
	}
	if (r != -1 || last_subcode != subcode)
		fprintf(stderr, "  (for event '%s': %s)\n", event, last_msg);
}

static void test_requests(void)
{
	cpc_t *cpc = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc);
	CHECK(set != NULL);
	/* Indices count up from 0 in the order of the calls. */
	CHECK_INT(cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER, 0, NULL), ==, 0);
	CHECK_INT(cpc_set_add_request(cpc, set, "page-faults", 42,
				      CPC_COUNT_USER | CPC_COUNT_SYSTEM, 0, NULL), ==, 1);
	/* picnum is accepted for a software event: it needs no counter. */
	cpc_attr_t pic = {"picnum", 0};
	CHECK_INT(cpc_set_add_request(cpc, set, "context-switches", 7, CPC_COUNT_SYSTEM, 1, &pic),
		  ==, 2);
	/* No level at all: a request that counts nothing (illumos's "nouser"
	 * without "sys"). */
	CHECK_INT(cpc_set_add_request(cpc, set, "cpu-migrations", 5, 0, 0, NULL), ==, 3);
	CHECK_INT(cpc_set_destroy(cpc, set), ==, 0);
	cpc_close(cpc);
}

static void test_bad_events(void)
{
	cpc_t *cpc = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc);
	expect_refused(cpc, set, "no-such-event", CPC_COUNT_USER, 0, NULL, CPC_INVALID_EVENT,
		       "Unknown event: unknown event 'no-such-event'");
	expect_refused(cpc, set, "task-clok", CPC_COUNT_USER, 0, NULL, CPC_INVALID_EVENT,
		       "did you mean 'task-clock'");
	expect_refused(cpc, set, "", CPC_COUNT_USER, 0, NULL, CPC_INVALID_EVENT,
		       "is not an event name");
	expect_refused(cpc, set, "task-clock,page-faults", CPC_COUNT_USER, 0, NULL,
		       CPC_INVALID_EVENT, "is not an event name");
	/* Privilege levels come from the flags, not from modifiers. */
	expect_refused(cpc, set, "task-clock:k", CPC_COUNT_USER, 0, NULL, CPC_INVALID_EVENT,
		       "use CPC_COUNT_USER and CPC_COUNT_SYSTEM");
	/* A processor event that this machine cannot count is refused now,
	 * not at bind time, with the reason. */
	if (strstr(cpc_cciname(cpc), "no hardware PMU")) { /* npic counts software pics */
		expect_refused(cpc, set, "PAPI_tot_ins", CPC_COUNT_USER, 0, NULL, CPC_INVALID_EVENT,
			       "no hardware PMU");
		expect_refused(cpc, set, "0xc0", CPC_COUNT_USER, 0, NULL, CPC_INVALID_EVENT,
			       "no hardware PMU");
	} else {
		SKIP_SUB("this machine has a PMU: no-PMU refusal not "
				"tested");
	}
	/* Nothing was added by the refused calls. */
	CHECK_INT(cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER, 0, NULL), ==, 0);
	cpc_close(cpc);
}

static void test_bad_flags_and_attributes(void)
{
	cpc_t *cpc = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc);
	expect_refused(cpc, set, "task-clock", CPC_COUNT_USER | 0x40, 0, NULL,
		       CPC_REQ_INVALID_FLAGS, "Invalid flags in a request: 0x42");
	cpc_attr_t unknown = {"frobnicate", 1};
	expect_refused(cpc, set, "task-clock", CPC_COUNT_USER, 1, &unknown, CPC_INVALID_ATTRIBUTE,
		       "Unknown attribute: 'frobnicate'; this platform's are: picnum");
	cpc_attr_t noname = {"", 1};
	expect_refused(cpc, set, "task-clock", CPC_COUNT_USER, 1, &noname, CPC_INVALID_ATTRIBUTE,
		       "no name");
#if defined(__x86_64__) || defined(__i386__)
	/* Processor attributes do not apply to software events. */
	cpc_attr_t umask = {"umask", 1};
	expect_refused(cpc, set, "page-faults", CPC_COUNT_USER, 1, &umask, CPC_INVALID_ATTRIBUTE,
		       "'umask' applies only to processor events; 'page-faults' is a software event");
	/* Out of range on a raw event code: refused before the machine is asked. */
	cpc_attr_t wide = {"umask", 0x1ff};
	expect_refused(cpc, set, "0xc0", CPC_COUNT_USER, 1, &wide, CPC_ATTRIBUTE_OUT_OF_RANGE,
		       "Attribute out of range: umask=0x1ff (at most 0xff)");
	cpc_attr_t edge = {"edge", 2};
	expect_refused(cpc, set, "0x3c", CPC_COUNT_USER, 1, &edge, CPC_ATTRIBUTE_OUT_OF_RANGE,
		       "edge=0x2 (at most 0x1)");
	/* A counter number beyond the machine's counters. */
	cpc_attr_t pic = {"picnum", cpc_npic(cpc)};
	expect_refused(cpc, set, "0xc0", CPC_COUNT_USER, 1, &pic, CPC_INVALID_PICNUM,
		       "Invalid counter number");
#endif
	cpc_close(cpc);
}

static void test_bad_sets(void)
{
	cpc_t *cpc = open_cpc(), *other = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc), *foreign = cpc_set_create(other);
	/* A set of another handle: EINVAL, without a handler message. */
	last_subcode = 0;
	errno = 0;
	CHECK_INT(cpc_set_add_request(cpc, foreign, "task-clock", 0, CPC_COUNT_USER, 0, NULL), ==,
		  -1);
	CHECK_INT(errno, ==, EINVAL);
	CHECK_INT(last_subcode, ==, 0);
	CHECK_INT(cpc_set_destroy(cpc, foreign), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	/* A bound set takes no more requests. */
	CHECK_INT(cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_USER, 0, NULL), ==, 0);
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
	CHECK_INT(cpc_set_add_request(cpc, set, "page-faults", 0, CPC_COUNT_USER, 0, NULL), ==, -1);
	CHECK_INT(errno, ==, EINVAL);
	/* Destroying a bound set unbinds it. */
	CHECK_INT(cpc_set_destroy(cpc, set), ==, 0);
	CHECK_INT(cpc_set_destroy(cpc, set), ==, -1);
	CHECK_INT(cpc_enable(cpc), ==, -1);
	cpc_close(cpc);
	cpc_close(other);
}

struct seen {
	int n;
	int index[8];
	char event[8][64];
	uint64_t preset[8];
	uint_t flags[8];
	int nattrs[8];
	char attr0[8][32];
	uint64_t val0[8];
};

static void walker(void *arg, int index, const char *event, uint64_t preset, uint_t flags,
		   int nattrs, const cpc_attr_t *attrs)
{
	struct seen *s = arg;
	int i = s->n++;
	s->index[i] = index;
	snprintf(s->event[i], sizeof(s->event[i]), "%s", event);
	s->preset[i] = preset;
	s->flags[i] = flags;
	s->nattrs[i] = nattrs;
	if (nattrs > 0) {
		snprintf(s->attr0[i], sizeof(s->attr0[i]), "%s", attrs[0].ca_name);
		s->val0[i] = attrs[0].ca_val;
	}
}

static void test_walk_requests(void)
{
	cpc_t *cpc = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc);
	/* The library keeps its own copy of the attributes. */
	char name[] = "picnum";
	cpc_attr_t attrs[] = {{name, 0}};
	CHECK_INT(cpc_set_add_request(cpc, set, "page-faults", 100,
				      CPC_COUNT_USER | CPC_OVF_NOTIFY_EMT, 1, attrs), ==, 0);
	strcpy(name, "xxxxxx");
	attrs[0].ca_val = 99;
	CHECK_INT(cpc_set_add_request(cpc, set, "task-clock", 0, CPC_COUNT_SYSTEM, 0, NULL), ==, 1);
	struct seen s = {0};
	cpc_walk_requests(cpc, set, &s, walker);
	CHECK_INT(s.n, ==, 2);
	CHECK_INT(s.index[0], ==, 0);
	CHECK_STR_CONTAINS(s.event[0], "page-faults");
	CHECK_U64(s.preset[0], ==, 100);
	CHECK_INT(s.flags[0], ==, CPC_COUNT_USER | CPC_OVF_NOTIFY_EMT);
	CHECK_INT(s.nattrs[0], ==, 1);
	CHECK_STR_EQ(s.attr0[0], "picnum");
	CHECK_U64(s.val0[0], ==, 0);
	CHECK_INT(s.index[1], ==, 1);
	CHECK_STR_EQ(s.event[1], "task-clock");
	CHECK_INT(s.flags[1], ==, CPC_COUNT_SYSTEM);
	CHECK_INT(s.nattrs[1], ==, 0);
	/* An empty set walks nothing. */
	struct seen none = {0};
	cpc_walk_requests(cpc, cpc_set_create(cpc), &none, walker);
	CHECK_INT(none.n, ==, 0);
	cpc_close(cpc);
}

static void test_sample_mode(void)
{
	/* illumos's kernel takes CPC_COUNT_SAMPLE_MODE on every platform (only
	 * SPARC T3's counters use it): accepted, kept, and counting as usual. */
	CHECK_INT(CPC_COUNT_SAMPLE_MODE, ==, 0x10);
	cpc_t *cpc = open_cpc();
	cpc_set_t *set = cpc_set_create(cpc);
	CHECK_INT(cpc_set_add_request(cpc, set, "page-faults", 0,
				      CPC_COUNT_USER | CPC_COUNT_SAMPLE_MODE, 0, NULL),
		  ==, 0);
	struct seen s = {0};
	cpc_walk_requests(cpc, set, &s, walker);
	CHECK_INT(s.flags[0], ==, CPC_COUNT_USER | CPC_COUNT_SAMPLE_MODE);
	cpc_buf_t *buf = cpc_buf_create(cpc, set);
	CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
	touch_pages(32);
	CHECK_INT(cpc_set_sample(cpc, set, buf), ==, 0);
	uint64_t faults = 0;
	CHECK_INT(cpc_buf_get(cpc, buf, 0, &faults), ==, 0);
	CHECK_U64(faults, >=, 32);
	cpc_close(cpc);
}

int main(void)
{
	RUN(test_requests);
	RUN(test_bad_events);
	RUN(test_bad_flags_and_attributes);
	RUN(test_bad_sets);
	RUN(test_walk_requests);
	RUN(test_sample_mode);
	return check_exit();
}
