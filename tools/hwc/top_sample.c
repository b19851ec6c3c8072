/* hwc top's sampling view: one event sampled on the target, each sample
 * symbolized as it arrives and summed as hwc report sums a recording
 * (tools/profile/agg.c); each refresh shows the interval's flat table and
 * starts afresh. */
#include "report.h"
#include "top.h"

#include <hwc/symbol.h>

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes that grow: the samples of one pass over the buffers. */
struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static bool put(struct bytes *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p)
			return false;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return true;
}

struct sview {
	const struct top_opts *o;
	hwc_sampler *s;
	hwc_symbols *syms;
	struct rp_report r;                 /* this interval's samples */
	const struct perf_event_attr *attr; /* the sampled event */
	struct hwc_perfdata_attr pattr;     /* it and its name, as the profile's r.attr */
	char note[1024];                    /* the event fallback, or "" */
	struct bytes pending;               /* samples taken, not yet resolved */
	uint64_t npending;                  /* how many */
	uint64_t malformed;                 /* samples hwc_sample_parse() refused */
	uint64_t dropped;                   /* samples left out for want of memory */
	bool stopped, ended;
	int status;
};

/* Take every record waiting.  The address-space records of all buffers go
 * to the symbolizer before any sample is resolved: the buffers are read one
 * CPU after the other, and the maps of a process (at its exec, say) can sit
 * in another CPU's buffer than its first samples.  Samples are resolved
 * until UNTIL (top_now()); the rest wait for the next call, so that a
 * slow first look at a file (the kernel's symbols, a big library) delays
 * no refresh by more than itself.  Returns the seconds spent after UNTIL. */
static double take(struct sview *v, uint64_t until)
{
	uint64_t t0 = top_now();
	struct hwc_record rec;
	while (hwc_sampler_next(v->s, &rec) > 0) {
		if (rec.hdr->type != PERF_RECORD_SAMPLE) {
			/* A record too short for its fields changes nothing; the
			 * samples it would have explained show as [unknown]. */
			hwc_symbols_record(v->syms, rec.hdr, rec.attr);
		} else if (rec.attr == v->attr && !put(&v->pending, rec.hdr, rec.hdr->size)) {
			v->dropped++;
		} else if (rec.attr == v->attr) {
			v->npending++;
		}
	}
	size_t off = 0;
	while (off < v->pending.len && top_now() < until) {
		const struct perf_event_header *h = (const void *)(v->pending.p + off);
		off += h->size;
		v->npending--;
		struct hwc_sample smp;
		if (hwc_sample_parse(h, v->attr, &smp))
			v->malformed++;
		else
			rp_add_sample(&v->r, &smp, v->attr);
	}
	memmove(v->pending.p, v->pending.p + off, v->pending.len - off);
	v->pending.len -= off;
	uint64_t t1 = top_now(), from = t0 > until ? t0 : until;
	return t1 > from ? (double)(t1 - from) / 1e9 : 0;
}

static double sample_wait(void *state, int ms, uint64_t until)
{
	struct sview *v = state;
	if (ms > 0 && !v->stopped)
		hwc_sampler_poll(v->s, ms);
	return take(v, until);
}

static void sample_fill(void *state, const struct top_tick *tick, struct top_frame *f)
{
	struct sview *v = state;
	struct hwc_sampler_stats st;
	hwc_sampler_stats(v->s, &st);
	top_frame_add(f, "refresh %ld%s: %.2f s, %" PRIu64 " samples; since the start: %" PRIu64
			 " samples, %" PRIu64 " lost, %" PRIu64 " throttled",
		      tick->n, tick->last ? " (cut short)" : "", tick->seconds, v->r.samples, st.samples,
		      st.lost, st.throttled);
	top_tick_notes(tick, "symbolizing samples", f);
	if (v->npending)
		top_frame_add(f, "note: %" PRIu64 " samples taken are still to be symbolized: they "
				 "count in the next refresh",
			      v->npending);
	if (v->note[0])
		top_frame_add(f, "note: %s", v->note);
	if (hwc_sampler_user_only(v->s))
		top_frame_add(f, "note: kernel sampling is not allowed for this user: user space only");
	if (v->malformed || v->dropped)
		top_frame_add(f, "note: samples left out: %" PRIu64 " malformed, %" PRIu64
				 " for want of memory",
			      v->malformed, v->dropped);
	char line[2048];
	rp_table_header(&v->r, line, sizeof(line));
	top_frame_titles(f);
	top_frame_add(f, "%s", line);
	size_t n;
	rp_settle(&v->r);
	struct rp_row **rows = rp_sorted_rows(&v->r, &n);
	for (size_t i = 0; i < n; i++) {
		rp_table_row(&v->r, rows[i], line, sizeof(line));
		top_frame_add(f, "%s", line);
	}
	free(rows);
	rp_clear(&v->r);
}

static bool sample_ended(void *state, int *status, char *msg, size_t size)
{
	struct sview *v = state;
	if (!v->ended && hwc_sampler_ended(v->s, &v->status)) {
		v->ended = true;
		/* The records still in the buffers belong to the last refresh. */
		hwc_sampler_stop(v->s);
		v->stopped = true;
		take(v, UINT64_MAX);
	}
	if (!v->ended)
		return false;
	*status = v->status;
	top_end_message(v->o, hwc_sampler_pid(v->s), v->status, msg, size);
	return true;
}

static void sample_close(void *state)
{
	struct sview *v = state;
	/* A command started here does not outlive its view. */
	if (!v->ended && v->o->t.argv && hwc_sampler_pid(v->s) > 0)
		kill(hwc_sampler_pid(v->s), SIGTERM);
	hwc_sampler_close(v->s);
	rp_clear(&v->r);
	hwc_symbols_free(v->syms);
	free(v->pending.p);
	free(v);
}

struct rp_report *top_sample_profile(void *state, const char **note)
{
	struct sview *v = state;
	*note = v->note;
	rp_settle(&v->r);
	return &v->r;
}

int top_sample_open(const struct top_opts *o, struct top_view *view)
{
	struct sview *v = calloc(1, sizeof(*v));
	if (!v) {
		fprintf(stderr, "hwc %s: out of memory\n", o->prog);
		return 1;
	}
	v->o = o;
	v->status = -1;
	struct hwc_target t;
	cli_target_of(&o->t, &t);
	struct hwc_sampler_opts so = {
		.freq = o->freq ? o->freq : 4000,
		.callgraph = o->callgraph ? HWC_CALLGRAPH_FP : HWC_CALLGRAPH_NONE,
	};
	if (cli_open_sampler(o->prog, o->specs, o->nspecs, &t, &so, &v->s, v->note, sizeof(v->note))) {
		free(v);
		return 1;
	}
	if (hwc_symbols_new(&v->syms, o->no_demangle ? 0 : HWC_SYM_DEMANGLE)) {
		fprintf(stderr, "hwc %s: %s\n", o->prog, hwc_errdetail());
		hwc_sampler_close(v->s);
		free(v);
		return 1;
	}
	const char *name;
	v->attr = hwc_sampler_event(v->s, 0, &name);
	if (hwc_sampler_nevents(v->s) > 1) {
		fprintf(stderr, "hwc %s: hwc %s samples one event at a time; '%s' gives %zu%s\n",
			o->prog, o->prog, o->specs[0], hwc_sampler_nevents(v->s),
			strcmp(o->prog, "top") == 0 ? " (several events are for --count)" : "");
		hwc_symbols_free(v->syms);
		hwc_sampler_close(v->s);
		free(v);
		return 2;
	}
	v->pattr.attr = *v->attr;
	v->pattr.name = name;
	v->r.attr = &v->pattr;
	v->r.syms = v->syms;
	v->r.o.keys = K_COMM | K_DSO | K_SYM;
	v->r.o.no_children = !o->callgraph;
	v->r.o.order = o->callgraph ? O_CHILDREN : O_SELF; /* as perf top -g */
	v->r.have_callchains = o->callgraph;
	int rc = 1;
	if (hwc_sampler_start(v->s)) {
		fprintf(stderr, "hwc %s: %s\n", o->prog, hwc_errdetail());
		if (o->t.argv)
			rc = 127; /* the command cannot be executed */
	} else if ((void)hwc_symbols_save_vdso(NULL, 0), /* [vdso] names: best effort */
		   hwc_symbols_add_sampler(v->syms, v->s)) {
		fprintf(stderr, "hwc %s: %s\n", o->prog, hwc_errdetail());
	} else {
		rc = 0;
	}
	if (rc) {
		v->ended = true;
		sample_close(v);
		return rc;
	}
	char target[256];
	top_describe_target(o, hwc_sampler_pid(v->s), target, sizeof(target));
	snprintf(view->what, sizeof(view->what), "%s at %" PRIu64 " Hz, %s%s", name, so.freq, target,
		 o->callgraph ? ", call chains" : "");
	view->state = v;
	view->wait = sample_wait;
	view->fill = sample_fill;
	view->ended = sample_ended;
	view->close = sample_close;
	return 0;
}
