/* hwc report's exports, all from the caller tree: folded stacks, pprof's
 * profile.proto (encoded by hand: a handful of varint fields, gzipped with
 * zlib), and a self-contained interactive SVG flame graph. */
#include "hwc.h"
#include "out.h"
#include "report.h"

#include <hwc/output.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static int fail_write(const char *what, const char *path)
{
	fprintf(stderr, "hwc report: cannot write %s %s: %s\n", what, path, strerror(errno));
	return -1;
}

/* Start writing PATH (a temporary file renamed over it when complete), with
 * a stream in *OUT unless OUT is NULL; NULL after saying why. */
static hwc_output *start_file(const char *path, FILE **out)
{
	hwc_output *o;
	if (hwc_output_create(&o, path, 0) == 0 && (!out || (*out = hwc_output_stream(o))))
		return o;
	fprintf(stderr, "hwc report: %s\n", hwc_errdetail());
	if (o)
		hwc_output_discard(o);
	return NULL;
}

/* Replace the file by what was written: 0, or -1 after saying why (it is
 * then left as it was).  The details name the file. */
static int end_file(hwc_output *o)
{
	if (hwc_output_commit(o) == 0)
		return 0;
	fprintf(stderr, "hwc report: %s\n", hwc_errdetail());
	return -1;
}

static void frame_name(const struct rp_func *f, char *buf, size_t size)
{
	rp_func_name(f, buf, size);
	for (char *p = buf; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = ':';
}

/* ------------------------------------------------------------ folded */

static void folded_node(FILE *out, const struct rp_node *n, char *path, size_t len, size_t cap)
{
	for (const struct rp_node *c = n->child; c; c = c->sibling) {
		char name[1024];
		frame_name(c->func, name, sizeof(name));
		size_t add = strlen(name) + 1;
		if (len + add + 1 > cap)
			continue; /* deeper than 64 KiB of names: cut, still counted above */
		size_t l = len;
		if (l)
			path[l++] = ';';
		memcpy(path + l, name, add);
		if (c->self_samples)
			fprintf(out, "%s %" PRIu64 "\n", path, c->self_samples);
		folded_node(out, c, path, l + add - 1, cap);
		path[len] = '\0';
	}
}

int rp_write_folded(struct rp_report *r, const char *path)
{
	bool std = strcmp(path, "-") == 0;
	FILE *out = stdout;
	hwc_output *o = std ? NULL : start_file(path, &out);
	if (!std && !o)
		return -1;
	size_t cap = 65536;
	char *buf = calloc(1, cap);
	if (buf)
		folded_node(out, &r->root, buf, 0, cap);
	free(buf);
	if (std)
		return out_close(out, NULL);
	return end_file(o);
}

/* ------------------------------------------------------------ pprof */

struct pb {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void pb_bytes(struct pb *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = (b->cap + n) * 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_bytes(b, tmp, n);
}

static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3 | 0);
	pb_varint(b, v);
}

static void pb_msg(struct pb *b, unsigned field, const struct pb *m)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, m->len);
	pb_bytes(b, m->p, m->len);
}

/* The string table: index 0 is "", as profile.proto requires. */
struct strtab {
	char **v;
	size_t n, cap;
	uint64_t *hash;
	size_t *slot;
	size_t scap;
};

static int64_t str_id(struct strtab *t, const char *s)
{
	if ((t->n + 1) * 2 > t->scap) {
		size_t scap = t->scap ? t->scap * 2 : 1024;
		size_t *slot = malloc(scap * sizeof(*slot));
		if (!slot)
			return 0;
		for (size_t i = 0; i < scap; i++)
			slot[i] = SIZE_MAX;
		for (size_t i = 0; i < t->n; i++) {
			size_t j = rp_str_hash(t->v[i]) & (scap - 1);
			while (slot[j] != SIZE_MAX)
				j = (j + 1) & (scap - 1);
			slot[j] = i;
		}
		free(t->slot);
		t->slot = slot;
		t->scap = scap;
	}
	size_t j = rp_str_hash(s) & (t->scap - 1);
	for (; t->slot[j] != SIZE_MAX; j = (j + 1) & (t->scap - 1))
		if (strcmp(t->v[t->slot[j]], s) == 0)
			return (int64_t)t->slot[j];
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		char **v = realloc(t->v, t->cap * sizeof(*v));
		if (!v)
			return 0;
		t->v = v;
	}
	t->v[t->n] = strdup(s);
	if (!t->v[t->n])
		return 0;
	t->slot[j] = t->n;
	return (int64_t)t->n++;
}

static void pprof_samples(struct pb *out, const struct rp_node *n, uint64_t *ids, size_t depth)
{
	for (const struct rp_node *c = n->child; c; c = c->sibling) {
		if (depth >= 1024)
			break;
		ids[depth] = c->func->id;
		if (c->self_samples) {
			struct pb s = {0}, locs = {0}, vals = {0};
			for (size_t i = depth + 1; i-- > 0;) /* leaf first */
				pb_varint(&locs, ids[i]);
			pb_varint(&vals, c->self_samples);
			pb_varint(&vals, c->self);
			pb_msg(&s, 1, &locs);
			pb_msg(&s, 2, &vals);
			pb_msg(out, 2, &s);
			out->oom |= s.oom || locs.oom || vals.oom;
			free(s.p);
			free(locs.p);
			free(vals.p);
		}
		pprof_samples(out, c, ids, depth + 1);
	}
}

static void value_type(struct pb *out, unsigned field, struct strtab *t, const char *type,
		       const char *unit)
{
	struct pb m = {0};
	pb_uint(&m, 1, (uint64_t)str_id(t, type));
	pb_uint(&m, 2, (uint64_t)str_id(t, unit));
	pb_msg(out, field, &m);
	out->oom |= m.oom;
	free(m.p);
}

/* Could DSO be a program rather than a shared library or a pseudo-file? */
static bool program_file(const struct hwc_symbol *sym)
{
	const char *name = sym->dso, *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (sym->kernel || !name[0] || name[0] == '[' || strncmp(name, "//", 2) == 0 ||
	    strncmp(base, "memfd:", 6) == 0)
		return false;
	for (const char *so = strstr(base, ".so"); so; so = strstr(so + 3, ".so"))
		if (so[3] == '\0' || so[3] == '.')
			return false; /* libc.so.6, ld-linux-x86-64.so.2 */
	return true;
}

int rp_pprof_encode(struct rp_report *r, uint8_t **buf, size_t *size)
{
	struct pb out = {0};
	struct strtab t = {0};
	str_id(&t, "");
	const char *event = r->attr ? r->attr->name : "events";
	bool clock = r->attr && r->attr->attr.type == PERF_TYPE_SOFTWARE &&
		     (r->attr->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		      r->attr->attr.config == PERF_COUNT_SW_TASK_CLOCK);
	const char *unit = clock ? "nanoseconds" : "count";
	value_type(&out, 1, &t, "samples", "count");
	value_type(&out, 1, &t, event, unit);
	uint64_t *ids = calloc(1024, sizeof(*ids));
	if (ids)
		pprof_samples(&out, &r->root, ids, 0);
	free(ids);
	/* One mapping per DSO, one location and function per frame.  pprof
	 * takes the first mapping for the main program ("File:"): the
	 * program with the busiest function comes first, then the DSOs by
	 * their busiest function. */
	size_t nf;
	struct rp_func **fs = rp_sorted_funcs(r, &nf);
	const char **dsos = calloc(nf + 2, sizeof(*dsos));
	size_t nd = 0, first = 0;
	while (fs && first < nf && !program_file(fs[first]->sym))
		first++;
	for (size_t k = 0; fs && dsos && k <= nf; k++) {
		/* FIRST's function, then all of them (FIRST again, skipped). */
		size_t i = k == 0 ? first : k - 1;
		if (i >= nf || (k > 0 && i == first))
			continue;
		size_t d;
		for (d = 0; d < nd && dsos[d] != fs[i]->sym->dso; d++)
			;
		if (d == nd) {
			dsos[nd++] = fs[i]->sym->dso;
			struct pb m = {0};
			pb_uint(&m, 1, d + 1);
			pb_uint(&m, 5, (uint64_t)str_id(&t, fs[i]->sym->dso));
			pb_uint(&m, 7, 1); /* has_functions */
			pb_msg(&out, 3, &m);
			free(m.p);
		}
		struct pb loc = {0}, line = {0}, fn = {0};
		char name[1024];
		rp_func_name(fs[i], name, sizeof(name));
		if (fs[i]->file) /* pprof shows the line itself: keep the name plain */
			snprintf(name, sizeof(name), "%s", fs[i]->sym->known ? fs[i]->sym->name : "[unknown]");
		pb_uint(&fn, 1, fs[i]->id);
		pb_uint(&fn, 2, (uint64_t)str_id(&t, name));
		pb_uint(&fn, 3, (uint64_t)str_id(&t, name));
		pb_uint(&fn, 4, (uint64_t)str_id(&t, fs[i]->file ? fs[i]->file : ""));
		pb_msg(&out, 5, &fn);
		pb_uint(&line, 1, fs[i]->id);
		if (fs[i]->line)
			pb_uint(&line, 2, fs[i]->line);
		pb_uint(&loc, 1, fs[i]->id);
		pb_uint(&loc, 2, d + 1);
		pb_msg(&loc, 4, &line);
		pb_msg(&out, 4, &loc);
		out.oom |= loc.oom || line.oom || fn.oom;
		free(loc.p);
		free(line.p);
		free(fn.p);
	}
	free(dsos);
	free(fs);
	if (r->attr && !r->attr->attr.freq && r->attr->attr.sample_period) {
		value_type(&out, 11, &t, event, unit);
		pb_uint(&out, 12, r->attr->attr.sample_period);
	}
	/* The string table goes last: every id above is assigned by now. */
	for (size_t i = 0; i < t.n; i++) {
		size_t len = strlen(t.v[i]);
		pb_varint(&out, 6 << 3 | 2);
		pb_varint(&out, len);
		pb_bytes(&out, t.v[i], len);
		free(t.v[i]);
	}
	free(t.v);
	free(t.slot);
	if (out.oom) {
		free(out.p);
		return -1;
	}
	*buf = out.p;
	*size = out.len;
	return 0;
}

int rp_write_pprof(struct rp_report *r, const char *path)
{
	struct pb out = {0};
	int rc = 0;
	if (rp_pprof_encode(r, &out.p, &out.len)) {
		fprintf(stderr, "hwc report: out of memory building the pprof profile\n");
		rc = -1;
	} else {
		hwc_output *o = start_file(path, NULL);
		/* zlib gets a descriptor of its own to close. */
		int fd = o ? dup(hwc_output_fd(o)) : -1;
		gzFile gz = fd >= 0 ? gzdopen(fd, "wb") : NULL;
		if (fd >= 0 && !gz)
			close(fd);
		if (!o) {
			rc = -1;
		} else if (!gz || gzwrite(gz, out.p, (unsigned)out.len) != (int)out.len) {
			if (gz)
				gzclose(gz);
			rc = fail_write("the pprof profile to", path);
			hwc_output_discard(o);
		} else if (gzclose(gz) != Z_OK) {
			rc = fail_write("the pprof profile to", path);
			hwc_output_discard(o);
		} else {
			rc = end_file(o);
		}
	}
	free(out.p);
	return rc;
}

/* ------------------------------------------------------------ flame graph */

enum { FG_WIDTH = 1200, FG_ROW = 17, FG_TOP = 40 };

static int tree_depth(const struct rp_node *n)
{
	int d = 0;
	for (const struct rp_node *c = n->child; c; c = c->sibling) {
		int k = tree_depth(c);
		if (k > d)
			d = k;
	}
	return d + 1;
}

void rp_xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* Warm colours from the name, so a function keeps its colour across graphs. */
static void colour(const char *name, bool kernel, char *buf, size_t size)
{
	uint64_t h = rp_str_hash(name);
	unsigned r = 205 + (unsigned)(h % 50), g = (unsigned)((h >> 8) % 190), b = (unsigned)((h >> 16) % 55);
	if (kernel)
		snprintf(buf, size, "rgb(%u,%u,%u)", b + 40, 150 + g % 80, 200 + r % 40);
	else
		snprintf(buf, size, "rgb(%u,%u,%u)", r, g, b);
}

static void flame_node(struct rp_report *r, FILE *out, const struct rp_node *n, double x, int depth,
		       int height)
{
	for (const struct rp_node *c = n->child; c; c = c->sibling) {
		double w = r->root.total ? (double)c->total / (double)r->root.total : 0;
		if (w * FG_WIDTH >= 0.1) {
			char name[1024], fill[32];
			rp_func_name(c->func, name, sizeof(name));
			colour(name, c->func->sym->kernel, fill, sizeof(fill));
			double y = FG_TOP + (double)(height - depth - 1) * FG_ROW;
			fprintf(out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%d\"><title>", x,
				w, depth);
			rp_xml_text(out, name);
			fprintf(out, " (%" PRIu64 " samples, %.2f%%)</title><rect x=\"%.2f\" y=\"%.1f\" "
				     "width=\"%.2f\" height=\"%d\" fill=\"%s\"/><text x=\"%.2f\" y=\"%.1f\">",
				c->total_samples, 100 * w, x * FG_WIDTH, y, w * FG_WIDTH, FG_ROW - 1, fill,
				x * FG_WIDTH + 3, y + FG_ROW - 5);
			fprintf(out, "</text></g>\n");
			flame_node(r, out, c, x, depth + 1, height);
		}
		x += w;
	}
}

static const char flame_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"var W = 1200, frames = [], details;\n"
	"function label(g) {\n"
	"  var t = g.getElementsByTagName('title')[0].textContent;\n"
	"  return t.replace(/ \\([0-9]+ samples, [0-9.]+%\\)$/, '');\n"
	"}\n"
	"function fit(g, x, w) {\n"
	"  var r = g.getElementsByTagName('rect')[0], t = g.getElementsByTagName('text')[0];\n"
	"  r.setAttribute('x', x * W); r.setAttribute('width', w * W);\n"
	"  t.setAttribute('x', x * W + 3);\n"
	"  var name = label(g), fits = Math.floor((w * W - 6) / 7);\n"
	"  t.textContent = fits < 3 ? '' : name.length <= fits ? name : name.substring(0, fits - 2) + '..';\n"
	"}\n"
	"function zoom(g) {\n"
	"  var x0 = +g.dataset.x, w0 = +g.dataset.w, d0 = +g.dataset.d, eps = 1e-9;\n"
	"  frames.forEach(function (f) {\n"
	"    var x = +f.dataset.x, w = +f.dataset.w, d = +f.dataset.d;\n"
	"    if (d >= d0 && x >= x0 - eps && x + w <= x0 + w0 + eps) {\n"
	"      f.style.display = ''; f.classList.remove('parent'); fit(f, (x - x0) / w0, w / w0);\n"
	"    } else if (d < d0 && x <= x0 + eps && x + w >= x0 + w0 - eps) {\n"
	"      f.style.display = ''; f.classList.add('parent'); fit(f, 0, 1);\n"
	"    } else {\n"
	"      f.style.display = 'none';\n"
	"    }\n"
	"  });\n"
	"  document.getElementById('unzoom').style.display = d0 > 0 ? '' : 'none';\n"
	"  document.documentElement.setAttribute('data-zoomed', d0 > 0 ? label(g) : '');\n"
	"}\n"
	"function init() {\n"
	"  details = document.getElementById('details');\n"
	"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"  frames.forEach(function (f) {\n"
	"    fit(f, +f.dataset.x, +f.dataset.w);\n"
	"    f.addEventListener('mouseover', function () {\n"
	"      details.textContent = f.getElementsByTagName('title')[0].textContent; });\n"
	"    f.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"    f.addEventListener('click', function () { zoom(f); });\n"
	"  });\n"
	"  document.getElementById('unzoom').addEventListener('click', function () { zoom(frames[0]); });\n"
	"  var z = location.hash.match(/^#zoom=(.*)$/);\n"
	"  if (z) frames.forEach(function (f) { if (label(f) === decodeURIComponent(z[1])) zoom(f); });\n"
	"}\n"
	"window.addEventListener('load', init);\n"
	"]]></script>\n";

int rp_write_flamegraph(struct rp_report *r, const char *path)
{
	FILE *out;
	hwc_output *o = start_file(path, &out);
	if (!o)
		return -1;
	int height = tree_depth(&r->root); /* rows, "all" included */
	int h = FG_TOP + height * FG_ROW + 30;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		     "xmlns=\"http://www.w3.org/2000/svg\">\n"
		     "<style>text { font-family: monospace; font-size: 12px; fill: #000; } "
		     "g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; } "
		     "g.parent rect { opacity: 0.5; } #title { font-size: 16px; } "
		     "#unzoom { cursor: pointer; }</style>\n%s"
		     "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f8\"/>\n"
		     "<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">",
		FG_WIDTH, h, FG_WIDTH, h, flame_script, FG_WIDTH, h, FG_WIDTH / 2);
	fprintf(out, "Flame graph of ");
	rp_xml_text(out, r->o.input);
	fprintf(out, " (%s, %" PRIu64 " samples)</text>\n"
		     "<text id=\"unzoom\" x=\"10\" y=\"22\" style=\"display:none\">Reset zoom</text>\n"
		     "<text id=\"details\" x=\"10\" y=\"%d\"> </text>\n",
		r->attr ? r->attr->name : "?", r->samples, h - 10);
	/* The root spans everything; clicking it resets the zoom. */
	fprintf(out, "<g class=\"f\" data-x=\"0\" data-w=\"1\" data-d=\"0\"><title>all (%" PRIu64
		     " samples, 100.00%%)</title><rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" "
		     "fill=\"rgb(230,120,60)\"/><text x=\"3\" y=\"%d\"></text></g>\n",
		r->samples, FG_TOP + (height - 1) * FG_ROW, FG_WIDTH, FG_ROW - 1,
		FG_TOP + height * FG_ROW - 5);
	flame_node(r, out, &r->root, 0, 1, height);
	fprintf(out, "</svg>\n");
	return end_file(o);
}
