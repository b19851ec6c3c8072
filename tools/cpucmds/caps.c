/* The -h listing of cputrack and cpustat: what this machine's counters
 * can count, in illumos's layout, from the libcpc walkers. */
#include "cpucmds.h"

#include <string.h>

#define RIGHT_MARGIN 76
#define EVENT_MARGIN 17
#define ATTR_MARGIN 20

struct wrap {
	FILE *fp;
	int col, margin;
};

static void put_word(struct wrap *w, const char *word)
{
	if (w->col + (int)strlen(word) + 1 > RIGHT_MARGIN && w->col > w->margin) {
		fprintf(w->fp, "\n%*s", w->margin, "");
		w->col = w->margin;
	}
	w->col += fprintf(w->fp, "%s ", word);
}

static void word_pic(void *arg, uint_t picno, const char *name)
{
	(void)picno;
	put_word(arg, name);
}

static void word_attr(void *arg, const char *name)
{
	if (strcmp(name, "picnum") != 0) /* set by the tools, not by hand */
		put_word(arg, name);
}

static void list_pics(cpc_t *cpc, FILE *fp, bool generic)
{
	uint_t npic = cpc_npic(cpc);
	if (npic == 0) {
		fprintf(fp, "\n\t(none: no hardware counters are accessible on this machine)\n");
		return;
	}
	/* Linux schedules any event on any general counter: one list. */
	struct wrap w = {fp, EVENT_MARGIN, EVENT_MARGIN};
	fprintf(fp, "\n\tevent[0-%u]: ", npic - 1);
	if (generic)
		cpc_walk_generic_events_pic(cpc, 0, &w, word_pic);
	else
		cpc_walk_events_pic(cpc, 0, &w, word_pic);
	fprintf(fp, "\n");
}

/* Events cpc_walk_events_all() lists that no counter does: software ones. */
struct others {
	cpc_t *cpc;
	struct wrap w;
	const char *match;
	bool found;
};

static void find_pic(void *arg, uint_t picno, const char *name)
{
	(void)picno;
	struct others *o = arg;
	if (strcmp(o->match, name) == 0)
		o->found = true;
}

static void word_other(void *arg, const char *name)
{
	struct others *o = arg;
	o->match = name;
	o->found = false;
	if (cpc_npic(o->cpc))
		cpc_walk_events_pic(o->cpc, 0, o, find_pic);
	if (!o->found)
		put_word(&o->w, name);
}

void cpucmds_capabilities(cpc_t *cpc, FILE *fp)
{
	fprintf(fp, "\tCPU performance counter interface: %s\n\n", cpc_cciname(cpc));
	fprintf(fp, "\tevent specification syntax:\n");
	fprintf(fp, "\t[picn=]<eventn>[,attr[n][=<val>]][,[picn=]<eventn>[,attr[n][=<val>]],...]\n");

	fprintf(fp, "\n\tGeneric Events:\n");
	list_pics(cpc, fp, true);
	fprintf(fp, "\n\tSee generic_events(3CPC) for descriptions of these events\n\n");

	fprintf(fp, "\tPlatform Specific Events:\n");
	list_pics(cpc, fp, false);

	fprintf(fp, "\n\tLinux software events (no hardware counter needed):\n");
	struct others o = {.cpc = cpc, .w = {fp, EVENT_MARGIN, EVENT_MARGIN}};
	fprintf(fp, "\n\t%-*s", EVENT_MARGIN - 8, "event:");
	cpc_walk_events_all(cpc, &o, word_other);
	fprintf(fp, "\n");

	struct wrap w = {fp, ATTR_MARGIN, ATTR_MARGIN};
	fprintf(fp, "\n\tattributes: ");
	cpc_walk_attrs(cpc, &w, word_attr);
	put_word(&w, "nouser");
	put_word(&w, "sys");
	fprintf(fp, "\n\n\t");

	/* The reference, wrapped at word boundaries. */
	char ref[CPC_MAX_CPUREF];
	snprintf(ref, sizeof(ref), "%s", cpc_cpuref(cpc));
	struct wrap r = {fp, 8, 8};
	char *save = NULL;
	for (char *word = strtok_r(ref, " ", &save); word; word = strtok_r(NULL, " ", &save)) {
		if (r.col + (int)strlen(word) + 1 > RIGHT_MARGIN) {
			fprintf(fp, "\n\t");
			r.col = 8;
		}
		r.col += fprintf(fp, "%s ", word);
	}
	fprintf(fp, "\n");
}

void cpucmds_help(cpc_t *cpc, void (*usage)(FILE *fp))
{
	usage(stdout);
	putchar('\n');
	cpucmds_capabilities(cpc, stdout);
}
