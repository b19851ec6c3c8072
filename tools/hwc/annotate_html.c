/* hwc annotate --html: one self-contained page (no script, no outside
 * resource), a table per function whose instruction rows are shaded by
 * their share of the function's samples, and source lines between them,
 * shaded by the share of the instructions under them. */
#include "annotate.h"
#include "hwc.h"
#include "report.h"

#include <hwc/output.h>

#include <inttypes.h>
#include <stdio.h>

/* White for no samples, to red at 40% of the function and above. */
static void heat(FILE *out, double pct)
{
	if (pct <= 0)
		return;
	double t = pct >= 40 ? 1 : pct / 40;
	int gb = (int)(255 - 175 * t + 0.5);
	fprintf(out, " style=\"background:rgb(255,%d,%d)\"", gb, gb);
}

static void write_func(FILE *out, struct an_ctx *c, const struct an_func *f, size_t k)
{
	fprintf(out, "<h2 id=\"f%zu\">", k);
	rp_xml_text(out, f->sym->name);
	fprintf(out, " <small>");
	rp_xml_text(out, rp_dso_base(f->sym->dso));
	fprintf(out, " &middot; %" PRIu64 " samples, %.2f%% of the event</small></h2>\n<table>\n"
		     "<tr><th>Percent</th><th>Address</th><th>Instruction</th></tr>\n",
		f->samples, c->period ? 100.0 * (double)f->period / (double)c->period : 0);
	for (size_t i = 0; i < f->ninsns; i++) {
		const struct an_insn *in = &f->insns[i];
		if (an_new_function(f, i)) {
			fputs("<tr class=\"fn\"><td></td><td colspan=\"2\">", out);
			rp_xml_text(out, in->src.function);
			fprintf(out, "%s:</td></tr>\n", an_parens(in->src.function));
		}
		if (an_new_line(f, i)) {
			/* A source line is as hot as the instructions under it. */
			double sum = 0;
			for (size_t j = i; j < f->ninsns && (j == i || !an_new_line(f, j)); j++)
				sum += an_percent(f, &f->insns[j]);
			const char *text = an_source(c, &in->src);
			fprintf(out, "<tr class=\"src\"");
			heat(out, sum);
			fprintf(out, "><td class=\"pct\">%.2f</td><td>%u</td><td>", sum, in->src.line);
			rp_xml_text(out, text ? text : rp_dso_base(in->src.file));
			fputs("</td></tr>\n", out);
		}
		double pct = an_percent(f, in);
		fprintf(out, "<tr class=\"insn\"");
		heat(out, pct);
		fprintf(out, " title=\"%" PRIu64 " samples\"><td class=\"pct\">%.2f</td><td>%" PRIx64
			     "</td><td>",
			in->samples, pct, in->addr);
		rp_xml_text(out, in->mnemonic);
		putc(' ', out);
		rp_xml_text(out, in->operands);
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
}

int an_write_html(struct an_ctx *c, const struct an_func *funcs, size_t n, const char *path)
{
	hwc_output *o;
	FILE *out = NULL;
	if (hwc_output_create(&o, path, 0) || !(out = hwc_output_stream(o))) {
		fprintf(stderr, "hwc annotate: %s\n", hwc_errdetail());
		hwc_output_discard(o);
		return -1;
	}
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hwc annotate: ", out);
	rp_xml_text(out, c->input);
	fputs("</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1em}\n"
	      "table{border-collapse:collapse;font-family:monospace;font-size:13px;width:100%}\n"
	      "th{text-align:left;border-bottom:1px solid #888}\n"
	      "td{padding:0 .6em;white-space:pre;height:16px}\n"
	      "td.pct{text-align:right;width:5em}\n"
	      "tr.src td,tr.fn td{color:#666;font-style:italic}\n"
	      "</style></head><body>\n<h1>", out);
	rp_xml_text(out, c->input);
	fprintf(out, "</h1>\n<p>Event ");
	rp_xml_text(out, c->event);
	fprintf(out, ", %" PRIu64 " samples; each instruction's share of its function's samples "
		     "(weighted by period).</p>\n",
		c->samples);
	for (size_t k = 0; k < n; k++)
		if (funcs[k].ninsns)
			write_func(out, c, &funcs[k], k);
	fputs("</body></html>\n", out);
	if (hwc_output_commit(o)) {
		fprintf(stderr, "hwc annotate: %s\n", hwc_errdetail());
		return -1;
	}
	return 0;
}
