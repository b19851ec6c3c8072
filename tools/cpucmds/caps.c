/* The -h listing of cputrack and cpustat: what this machine's counters
 * can count, in illumos's layout, from the libcpc walkers. */
#include "cpucmds.h"

#include <stdlib.h>
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

/* The events of pic P, for comparing lists. */
struct names {
	char *text;
	size_t len;
};

static void add_name(void *arg, uint_t picno, const char *name)
{
	(void)picno;
	struct names *n = arg;
	size_t l = strlen(name);
	char *t = realloc(n->text, n->len + l + 2);
	if (!t)
		return;
	n->text = t;
	memcpy(t + n->len, name, l);
	n->len += l;
	t[n->len++] = ' ';
	t[n->len] = '\0';
}

static char *pic_names(cpc_t *cpc, uint_t p, bool generic)
{
	struct names n = {NULL, 0};
	if (generic)
		cpc_walk_generic_events_pic(cpc, p, &n, add_name);
	else
		cpc_walk_events_pic(cpc, p, &n, add_name);
	return n.text ? n.text : strdup("");
}

/* illumos's layout, one line per run of pics that list the same events:
 * the hardware counters take processor and software events, the pics
 * above them (cpc_npic(3)) software events only. */
static void list_pics(cpc_t *cpc, FILE *fp, bool generic)
{
	uint_t npic = cpc_npic(cpc);
	bool any = false;
	for (uint_t first = 0; first < npic;) {
		char *names = pic_names(cpc, first, generic);
		uint_t last = first;
		while (last + 1 < npic) {
			char *next = pic_names(cpc, last + 1, generic);
			bool same = names && next && strcmp(names, next) == 0;
			free(next);
			if (!same)
				break;
			last++;
		}
		if (names && names[0]) {
			struct wrap w = {fp, EVENT_MARGIN, EVENT_MARGIN};
			if (first == last)
				fprintf(fp, "\n\tevent%u: ", first);
			else
				fprintf(fp, "\n\tevent[%u-%u]: ", first, last);
			if (generic)
				cpc_walk_generic_events_pic(cpc, first, &w, word_pic);
			else
				cpc_walk_events_pic(cpc, first, &w, word_pic);
			fprintf(fp, "\n");
			any = true;
		}
		free(names);
		first = last + 1;
	}
	if (!any)
		fprintf(fp, "\n\t(none: no hardware counters are accessible on this machine)\n");
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
