/* pctr -l: the events of this CPU, from libhwc's listing of its libpfm4
 * model, as pctr options.  Each unit mask is resolved (model::EVENT:UMASK)
 * so that what is printed is exactly what the resolver encodes, including
 * the edge, invert and threshold bits some unit masks carry. */
#include <hwc/hwc.h>
#include <stdio.h>
#include <string.h>

int list_functions(void);

/* LEAD, then TEXT filled to 76 columns, continuation lines indented by
 * INDENT spaces (OpenBSD's pctr wraps at 72 under a 6-space indent). */
static void print_wrapped(const char *lead, int indent, const char *text)
{
	int col = printf("%s", lead);
	while (*text) {
		while (*text == ' ')
			text++;
		int word = (int)strcspn(text, " ");
		if (!word)
			break;
		if (col > indent && col + 1 + word > 76)
			col = printf("\n%*s", indent, "") - 1;
		col += printf("%s%.*s", col > indent ? " " : "", word, text);
		text += word;
	}
	printf("\n");
}

/* The config SPEC resolves to, or false. */
static bool config_of(const char *spec, uint64_t *config)
{
	hwc_evlist *l;
	if (hwc_evlist_new(&l))
		return false;
	bool ok = hwc_evlist_add(l, spec) == 0;
	if (ok)
		*config = hwc_evlist_event(l, 0)->attr.config;
	hwc_evlist_free(l);
	return ok;
}

/* "-m 01 -e -i -t 2": the pctr options for bits 8-31 of CONFIG, into BUF. */
static int options(char *buf, size_t size, uint64_t config)
{
	return snprintf(buf, size, "      -m %02x%s%s", (unsigned)(config >> 8) & 0xff,
			config & (1u << 18) ? " -e" : "", config & (1u << 23) ? " -i" : "");
}

static int one_event(const struct hwc_event_info *ev, void *arg)
{
	(void)arg;
	unsigned code = (unsigned)ev->code;
	printf("%02x  %s%s\n", code, ev->name,
	       code > 0xff ? "  (event select above ff: not a pctr function)" : "");
	if (*ev->desc)
		print_wrapped("      ", 6, ev->desc);
	char spec[512], lead[512];
	for (size_t i = 0; i < ev->nattrs; i++) {
		const struct hwc_event_attr_info *a = &ev->attrs[i];
		if (a->kind != HWC_ATTR_UMASK)
			continue;
		uint64_t config;
		snprintf(spec, sizeof(spec), "%s:%s", ev->spec, a->name);
		if (!config_of(spec, &config))
			continue; /* a unit mask that needs others with it */
		int n = options(lead, sizeof(lead), config);
		if ((config >> 24) & 0xff)
			n += snprintf(lead + n, sizeof(lead) - (size_t)n, " -t %u",
				      (unsigned)(config >> 24) & 0xff);
		snprintf(lead + n, sizeof(lead) - (size_t)n, "  %s%s%s%s", a->name,
			 a->is_default ? " (default)" : "",
			 config & (1u << 21) ? " (any thread: not a pctr function)" : "",
			 *a->desc ? ":" : "");
		print_wrapped(lead, 13, a->desc);
	}
	return 0;
}

int list_functions(void)
{
	struct hwc_cpu_info ci;
	if (hwc_cpu_info(&ci) < 0) {
		fprintf(stderr, "pctr: cannot identify the CPU: %s\n", hwc_errdetail());
		return 1;
	}
	if (!ci.pfm_model[0]) {
		fprintf(stderr, "pctr: no libpfm4 model knows this CPU (%s family %#x model %#x): "
				"no event list\n",
			ci.vendor, ci.family, ci.model);
		return 1;
	}
	int err = hwc_events_walk(ci.pfm_model, NULL, 0, one_event, NULL);
	if (err < 0) {
		fprintf(stderr, "pctr: listing the events of %s: %s\n", ci.pfm_model, hwc_errdetail());
		return 1;
	}
	return 0;
}
