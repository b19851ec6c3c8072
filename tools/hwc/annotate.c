/* hwc annotate: the samples of a function per instruction, its code
 * disassembled by capstone (annotate_disasm.c) and interleaved with its source lines (DWARF), as perf annotate shows
 * it; JSON, and an HTML page that highlights the hot lines. */
#include "annotate.h"
#include "cli.h"
#include "hwc.h"
#include "json.h"
#include "out.h"
#include "profile.h"

#include <hwc/output.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: hwc annotate [options] [SYMBOL]\n"
	"Show where in a function the samples of a recording made by `hwc record` or\n"
	"`perf record` fall (default: a pipe on standard input, else ./hwc.data, else\n"
	"./perf.data): each instruction's share of the function's samples (weighted by\n"
	"period), its disassembly and the source lines it comes from.  Without SYMBOL,\n"
	"every function with samples whose code can be read, hottest first.\n"
	"\n"
	"  -i, --input=FILE   the recording; - reads a stream on standard input\n"
	"  --event=NAME       the event of a multi-event recording (default: the first\n"
	"                     sampled event)\n"
	"  --stdio            text, as perf annotate --stdio (the default)\n"
	"  --json             one JSON document (schema hwc-annotate/1) instead of text\n"
	"  --html=FILE        also write an HTML page that highlights the hot lines\n"
	"  --no-source        no source lines between the instructions\n"
	"  --no-demangle      C++ and Rust functions by their mangled names\n"
	"  -h, --help         show this help\n"
	"See hwc-annotate(1).\n";

struct options {
	const char *input, *event, *symbol, *html;
	bool stdio, json, no_source, no_demangle;
};

static int parse_opts(int argc, char **argv, struct options *o)
{
	enum { O_EVENT = 256, O_STDIO, O_JSON, O_HTML, O_NOSRC, O_NODEMANGLE };
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'},  {"event", required_argument, NULL, O_EVENT},
		{"stdio", no_argument, NULL, O_STDIO},     {"json", no_argument, NULL, O_JSON},
		{"html", required_argument, NULL, O_HTML}, {"no-source", no_argument, NULL, O_NOSRC},
		{"no-demangle", no_argument, NULL, O_NODEMANGLE}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': o->input = optarg; break;
		case 'h': fputs(usage_text, stdout); exit(0);
		case O_EVENT: o->event = optarg; break;
		case O_STDIO: o->stdio = true; break;
		case O_JSON: o->json = true; break;
		case O_HTML: o->html = optarg; break;
		case O_NOSRC: o->no_source = true; break;
		case O_NODEMANGLE: o->no_demangle = true; break;
		default:
			fprintf(stderr, "Try `hwc annotate --help`.\n");
			return 2;
		}
	}
	if (o->stdio && o->json)
		return cli_usage_error("annotate", "%s", "--stdio and --json: choose one");
	if (optind < argc) {
		if (optind + 1 < argc)
			return cli_usage_error("annotate", "one SYMBOL at a time (got '%s' too)",
					       argv[optind + 1]);
		o->symbol = argv[optind];
	}
	return -1;
}

/* ------------------------------------------------------------ functions */

static uint64_t addr_hash(const void *entry)
{
	uint64_t k = (uint64_t)(uintptr_t)((const struct an_addr *)entry)->loc;
	k ^= k >> 29;
	k *= 0xbf58476d1ce4e5b9ULL;
	return k ^ (k >> 32);
}

static bool same_addr(const void *entry, const void *key)
{
	return ((const struct an_addr *)entry)->loc == key;
}

/* rp_load() hands every sample record of the event here: only its address
 * is counted, not its call chain, thread or row as hwc report counts them,
 * so only the fixed-size fields at the head of the sample are read, where
 * hwc_sample_head() says they are. */
static int count_sample(void *arg, const struct hwc_perfdata_record *rec)
{
	struct an_ctx *c = arg;
	const struct hwc_sample_head *head = &c->head;
	if (c->head_of != rec->attr) {
		hwc_sample_head(&rec->attr->attr, &c->head);
		c->head_of = rec->attr;
	}
	const struct perf_event_attr *a = &rec->attr->attr;
	const uint64_t *body = (const uint64_t *)(const void *)(rec->hdr + 1);
	if ((rec->hdr->size - sizeof(*rec->hdr)) / 8 < head->words) {
		fprintf(stderr, "hwc annotate: %s: perf.data offset %" PRIu64 ": sample record of %u "
				"bytes is too short for its fields (%u bytes)\n",
			c->report->o.input, rec->offset, rec->hdr->size,
			(unsigned)sizeof(*rec->hdr) + 8 * head->words);
		return -1;
	}
	uint64_t period = head->period >= 0 ? body[head->period] : a->freq ? 1 : a->sample_period;
	c->samples++;
	c->period += period;
	/* The kernel's code is not read: its addresses are not even resolved. */
	if (head->ip < 0)
		return 0;
	if ((rec->hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER) {
		c->kernel_samples++;
		return 0;
	}
	uint32_t pid = 0;
	if (head->pid_tid >= 0)
		memcpy(&pid, &body[head->pid_tid], sizeof(pid));
	const struct hwc_location *l = hwc_symbols_resolve(c->report->syms, pid,
							   head->time >= 0 ? body[head->time] : 0,
							   body[head->ip], false);
	if (!l->sym->known)
		return 0;
	struct an_addr key = {.loc = l};
	uint64_t h = addr_hash(&key);
	struct an_addr *e = rp_table_find(&c->addrs, h, same_addr, l);
	if (!e) {
		e = rp_table_new(&c->addrs, sizeof(*e), h, addr_hash);
		e->loc = l;
	}
	e->period += period;
	e->samples++;
	return 0;
}

static int cmp_sampled(const void *a, const void *b)
{
	const struct an_addr *x = *(const struct an_addr *const *)a, *y = *(const struct an_addr *const *)b;
	if (x->loc->sym != y->loc->sym)
		return (uintptr_t)x->loc->sym < (uintptr_t)y->loc->sym ? -1 : 1;
	return x->loc->dso_offset < y->loc->dso_offset ? -1 : x->loc->dso_offset > y->loc->dso_offset;
}

static int cmp_hotter(const void *a, const void *b)
{
	const struct an_func *x = a, *y = b;
	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	int c = strcmp(x->sym->name, y->sym->name);
	return c ? c : strcmp(x->sym->dso, y->sym->dso);
}

/* The user-space functions with samples, hottest first, each with its
 * sampled addresses (a run of ADDRS, which the caller frees with the array). */
static struct an_func *sampled_functions(const struct an_ctx *c, size_t *nfuncs,
					 struct an_addr ***addrs)
{
	size_t n;
	struct an_addr **v = rp_table_sorted(&c->addrs, NULL, NULL, cmp_sampled, &n);
	struct an_func *f = calloc(n ? n : 1, sizeof(*f));
	if (!v || !f) {
		free(v);
		free(f);
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!k || f[k - 1].sym != v[i]->loc->sym)
			f[k++] = (struct an_func){.sym = v[i]->loc->sym, .addrs = v + i};
		f[k - 1].naddrs++;
		f[k - 1].period += v[i]->period;
		f[k - 1].samples += v[i]->samples;
	}
	qsort(f, k, sizeof(*f), cmp_hotter);
	*nfuncs = k;
	*addrs = v;
	return f;
}

/* ------------------------------------------------------------ source files */

struct source {
	const char *path;
	char *text;       /* NULL: unreadable */
	char **lines;     /* lines[i]: line i + 1 */
	size_t nlines;
	struct source *next;
};

/* Read a regular file only: a FIFO would hang. */
static char *read_text(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *text = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (64 << 20) &&
	    (text = malloc((size_t)st.st_size + 1))) {
		size_t len = 0, size = (size_t)st.st_size;
		for (ssize_t got; len < size && (got = read(fd, text + len, size - len)) != 0;)
			if (got > 0)
				len += (size_t)got;
			else if (errno != EINTR)
				break;
		text[len] = '\0';
	}
	close(fd);
	return text;
}

/* Line LINE of FILE (NULL: unknown), files read once into *LIST. */
static const char *source_line(struct source **list, const char *file, unsigned line)
{
	struct source *s = *list;
	while (s && s->path != file) /* interned by libhwc: equal names, equal pointers */
		s = s->next;
	if (!s) {
		if (!(s = calloc(1, sizeof(*s))))
			return NULL;
		s->path = file;
		s->text = read_text(file);
		for (char *p = s->text; p && *p;) {
			char **l = realloc(s->lines, (s->nlines + 1) * sizeof(*l));
			if (!l)
				break;
			s->lines = l;
			s->lines[s->nlines++] = p;
			char *nl = strchr(p, '\n');
			if (!nl)
				break;
			*nl = '\0';
			p = nl + 1;
		}
		s->next = *list;
		*list = s;
	}
	if (!line || line > s->nlines)
		return NULL;
	const char *t = s->lines[line - 1];
	return t + strspn(t, " \t");
}

static void free_sources(struct source *s)
{
	while (s) {
		struct source *next = s->next;
		free(s->text);
		free(s->lines);
		free(s);
		s = next;
	}
}

double an_percent(const struct an_func *f, const struct an_insn *in)
{
	return f->period ? 100.0 * (double)in->period / (double)f->period : 0.0;
}

bool an_new_line(const struct an_func *f, size_t i)
{
	const struct hwc_srcline *s = &f->insns[i].src;
	if (!s->file)
		return false;
	const struct hwc_srcline *p = i ? &f->insns[i - 1].src : NULL;
	return !p || p->file != s->file || p->line != s->line || p->function != s->function;
}

const char *an_parens(const char *function)
{
	return strchr(function, '(') ? "" : "()";
}

bool an_new_function(const struct an_func *f, size_t i)
{
	const char *fn = f->insns[i].src.function;
	return fn && (!i || f->insns[i - 1].src.function != fn);
}

const char *an_source(struct an_ctx *c, const struct hwc_srcline *s)
{
	return s->file ? source_line(&c->sources, s->file, s->line) : NULL;
}

/* ------------------------------------------------------------ text, JSON */

static void print_stdio(struct an_ctx *c, const struct an_func *f)
{
	char title[1024];
	int n = snprintf(title, sizeof(title),
			 " Percent |\tSource code & Disassembly of %s for %s (%" PRIu64
			 " samples, percent: local period)",
			 rp_dso_base(f->sym->dso), c->event, f->samples);
	printf("%s\n", title);
	for (int i = 0; i < n + 7; i++) /* the tab, as perf, counted as 8 */
		putchar('-');
	printf("\n         :\n         :      %016" PRIx64 " <%s>:\n", f->sym->start, f->sym->name);
	for (size_t i = 0; i < f->ninsns; i++) {
		const struct an_insn *in = &f->insns[i];
		if (an_new_function(f, i))
			printf("         :      %s%s:\n", in->src.function, an_parens(in->src.function));
		if (an_new_line(f, i)) {
			const char *text = an_source(c, &in->src);
			if (text)
				printf("         : %-5u%s\n", in->src.line, text);
			else
				printf("         : %-5u%s:%u\n", in->src.line, rp_dso_base(in->src.file),
				       in->src.line);
		}
		/* objdump's columns: the mnemonic in 6, one blank, the operands. */
		printf("%8.2f :   %" PRIx64 ":   ", an_percent(f, in), in->addr);
		if (in->operands[0])
			printf("%-6s %s\n", in->mnemonic, in->operands);
		else
			printf("%s\n", in->mnemonic);
	}
	putchar('\n');
}

static void print_json(struct an_ctx *c, struct an_func *funcs, size_t n)
{
	struct json j;
	json_init(&j, stdout);
	json_object(&j, NULL);
	json_string(&j, "schema", "hwc-annotate/1");
	json_string(&j, "file", c->input);
	json_string(&j, "event", c->event);
	json_uint(&j, "samples", c->samples);
	json_uint(&j, "period", c->period);
	json_string(&j, "percent", "local period");
	json_array(&j, "functions");
	for (size_t k = 0; k < n; k++) {
		const struct an_func *f = &funcs[k];
		if (!f->ninsns)
			continue;
		json_object(&j, NULL);
		json_string(&j, "symbol", f->sym->name);
		json_string(&j, "dso", f->sym->dso);
		json_hex(&j, "start", f->sym->start);
		json_uint(&j, "size", f->sym->size);
		json_string(&j, "machine", an_machine_name(f->machine));
		json_uint(&j, "samples", f->samples);
		json_uint(&j, "period", f->period);
		json_double(&j, "share", c->period ? 100.0 * (double)f->period / (double)c->period : 0);
		json_array(&j, "instructions");
		for (size_t i = 0; i < f->ninsns; i++) {
			const struct an_insn *in = &f->insns[i];
			json_object(&j, NULL);
			json_hex(&j, "address", in->addr);
			json_uint(&j, "offset", in->addr - f->sym->start);
			json_uint(&j, "size", in->size);
			json_string(&j, "mnemonic", in->mnemonic);
			json_string(&j, "operands", in->operands);
			json_uint(&j, "samples", in->samples);
			json_uint(&j, "period", in->period);
			json_double(&j, "percent", an_percent(f, in));
			json_string(&j, "file", in->src.file);
			if (in->src.file)
				json_uint(&j, "line", in->src.line);
			else
				json_null(&j, "line");
			json_string(&j, "function", in->src.function);
			json_string(&j, "source", an_source(c, &in->src));
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_end(&j);
}

/* ------------------------------------------------------------ the command */

static void say_problem(const char *dso, const char *why, void *arg)
{
	(void)arg;
	fprintf(stderr, "hwc annotate:   %s: %s\n", dso, why);
}

/* No function to show: say why, with the DSOs that could not be read. */
static void explain_none(const struct options *o, struct rp_report *r, const struct an_func *f,
			 size_t n, uint64_t kernel_samples)
{
	if (o->symbol) {
		fprintf(stderr, "hwc annotate: no function '%s' has samples in %s", o->symbol, r->o.input);
		if (n) {
			fprintf(stderr, " (the hottest:");
			for (size_t i = 0, shown = 0; i < n && shown < 5; i++)
				if (f[i].sym->known)
					fprintf(stderr, "%s %s", shown++ ? "," : "", f[i].sym->name);
			fprintf(stderr, ")");
		}
		fprintf(stderr, "\n");
		if (kernel_samples) /* a kernel or module function is not one of them */
			fprintf(stderr, "hwc annotate: %" PRIu64 " samples are in the kernel or its "
					"modules, whose code it does not read\n",
				kernel_samples);
	} else {
		fprintf(stderr, "hwc annotate: no function of %s could be annotated: its samples are in "
				"the kernel or in code whose file cannot be read\n",
			r->o.input);
	}
	if (hwc_symbols_problems(r->syms, NULL, NULL)) {
		fprintf(stderr, "hwc annotate: these files of the recording could not be read:\n");
		hwc_symbols_problems(r->syms, say_problem, NULL);
	}
}

int cmd_annotate(int argc, char **argv)
{
	struct options o = {0};
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (!o.input && !(o.input = cli_default_recording("hwc annotate", false)))
		return 1;
	struct an_ctx c = {0};
	struct rp_report r = {.o = {.prog = "hwc annotate", .input = o.input, .event = o.event,
				    .no_children = true, .no_demangle = o.no_demangle,
				    .sample = count_sample, .sample_arg = &c,
				    /* Files that cannot be read matter to SYMBOL only if it is theirs. */
				    .quiet = o.symbol != NULL}};
	struct an_func *funcs = NULL;
	struct an_addr **addrs = NULL;
	size_t n = 0, shown = 0;
	rc = 1;
	cli_raise_fd_limit(); /* libdw keeps each DSO's file open */
	/* rp_load() makes the symbols, then reads the samples into count_sample(). */
	c.report = &r;
	if (rp_load(&r))
		goto out;
	c.input = r.o.input;
	c.event = r.attr ? r.attr->name : "?";
	if (!c.samples) {
		fprintf(stderr, "hwc annotate: %s has no samples of %s: nothing to annotate\n", c.input,
			c.event);
		goto out;
	}
	if (!(funcs = sampled_functions(&c, &n, &addrs))) {
		fprintf(stderr, "hwc annotate: out of memory\n");
		goto out;
	}
	/* SYMBOL: the hottest function of that name; else every one, hottest
	 * first, but those whose code cannot be read (the kernel's, unknown). */
	for (size_t i = 0; i < n; i++) {
		struct an_func *f = &funcs[i];
		if (o.symbol ? strcmp(f->sym->name, o.symbol) != 0 || shown : !f->sym->known || f->sym->kernel)
			continue;
		if (an_disassemble(r.syms, f, !o.no_source) == 0)
			shown++;
		else if (o.symbol)
			goto out;
	}
	if (!shown) {
		explain_none(&o, &r, funcs, n, c.kernel_samples);
		goto out;
	}
	if (o.json)
		print_json(&c, funcs, n);
	else if (!o.html || o.stdio)
		for (size_t i = 0; i < n; i++)
			if (funcs[i].ninsns)
				print_stdio(&c, &funcs[i]);
	if (o.html && an_write_html(&c, funcs, n, o.html))
		goto out;
	if (out_close(stdout, NULL))
		goto out;
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(funcs[i].insns);
	free(funcs);
	free(addrs);
	rp_table_free(&c.addrs, NULL);
	free_sources(c.sources);
	rp_free(&r);
	return rc;
}
