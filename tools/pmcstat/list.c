/* pmcstat -L and -u: the events pmc_allocate() takes here. */
#include "pmc_err.h"
#include "pmcstat.h"

#include <hwc/hwc.h>

#include "out.h"

#include <err.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sysexits.h>


struct describe {
	const char *name;
	const char *desc;
	char buf[1024];
};

static int find_desc(const struct hwc_event_info *ev, void *arg)
{
	struct describe *d = arg;
	if (strcasecmp(ev->name, d->name) != 0 || !ev->desc[0])
		return 0;
	snprintf(d->buf, sizeof(d->buf), "%s", ev->desc);
	d->desc = d->buf;
	return 1;
}

/* -L (DESCRIBE false): the name of every event pmc_allocate() takes here,
 * as FreeBSD lists its PMU's, once each; -u: those whose name holds MATCH
 * (ignoring case), with libhwc's description of it when it has one.  The
 * names come from pmc_event_names_of_class() for each of the machine's
 * classes. */
int pmcstat_list_events(const char *match, bool describe)
{
	const struct pmc_cpuinfo *ci;
	if (pmc_cpuinfo(&ci) < 0)
		die_pmc(EX_OSERR, "Cannot determine CPU information");
	const char **seen = NULL;
	size_t nseen = 0, shown = 0;
	for (uint32_t c = 0; c < ci->pm_nclass; c++) {
		const char **names;
		int n;
		if (pmc_event_names_of_class(ci->pm_classes[c].pm_class, &names, &n) < 0)
			continue; /* a class without named events */
		for (int i = 0; i < n; i++) {
			bool dup = false;
			for (size_t j = 0; j < nseen && !dup; j++)
				dup = strcmp(seen[j], names[i]) == 0;
			if (dup || (match && !strcasestr(names[i], match)))
				continue;
			if (!(seen = realloc(seen, (nseen + 1) * sizeof(*seen))))
				errx(EX_SOFTWARE, "ERROR: Out of memory.");
			seen[nseen++] = names[i];
			if (!describe) {
				printf("\t%s\n", names[i]);
				shown++;
				continue;
			}
			struct describe d = {names[i], NULL, ""};
			hwc_events_walk(NULL, names[i], 0, find_desc, &d);
			if (d.desc) { /* FreeBSD leaves out events without one */
				printf("%s:\t%s\n", names[i], d.desc);
				shown++;
			}
		}
		free(names); /* the array: the strings are the library's */
	}
	free(seen);
	if (describe && shown == 0)
		errx(EX_DATAERR, "ERROR: no event named like \"%s\" has a description here (-L lists "
				 "the events).",
		     match);
	return out_close(stdout, NULL) != 0 ? EX_IOERR : EX_OK;
}

