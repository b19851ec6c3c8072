/* Events of perf's JSON tables (pmu_events.c): NAME for this CPU's model,
 * MODEL::NAME for any model of the tree, with libpfm4-style modifiers.
 * The record becomes perf's term list (tools/perf/pmu-events/jevents.py:
 * event=, umask=, cmask=, ..., offcore_rsp=/ldlat=/frontend= from MSRIndex)
 * and the terms go through the PMU's sysfs format/, or, for a core PMU this
 * machine does not have (another model, a virtual machine), through the
 * format Linux gives that PMU, so that encoding needs no hardware. */
#include "internal.h"
#include "pmu_events.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The formats Linux gives the core PMUs (arch/x86/events/intel/core.c,
 * amd/core.c, drivers/perf/arm_pmuv3.c). */
struct format {
	const char *term, *bits;
};
static const struct format intel_formats[] = {
	{"event", "config:0-7"},     {"umask", "config:8-15"},     {"edge", "config:18"},
	{"pc", "config:19"},         {"any", "config:21"},         {"inv", "config:23"},
	{"cmask", "config:24-31"},   {"in_tx", "config:32"},       {"in_tx_cp", "config:33"},
	{"offcore_rsp", "config1:0-63"}, {"ldlat", "config1:0-15"}, {"frontend", "config1:0-23"},
	{NULL, NULL}};
static const struct format amd_formats[] = {
	{"event", "config:0-7,32-35"}, {"umask", "config:8-15"}, {"edge", "config:18"},
	{"inv", "config:23"},          {"cmask", "config:24-31"}, {NULL, NULL}};
static const struct format armv8_formats[] = {{"event", "config:0-15"}, {"long", "config1:0"},
					      {NULL, NULL}};

/* perf's names of the Unit field's PMUs (jevents.py unit_to_pmu). */
static void unit_to_pmu(const char *unit, char *pmu, size_t size)
{
	static const struct {
		const char *unit, *pmu;
	} table[] = {
		{"CBO", "uncore_cbox"},   {"QPI LL", "uncore_qpi"}, {"SBO", "uncore_sbox"},
		{"iMPH-U", "uncore_arb"}, {"UPI LL", "uncore_upi"}, {"L3PMC", "amd_l3"},
		{"DFPMC", "amd_df"},      {"UMCPMC", "amd_umc"},    {"cpu_core", "cpu_core"},
		{"cpu_atom", "cpu_atom"}, {"arm_cmn", "arm_cmn"},   {"core", "cpu"},
	};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(table); i++)
		if (strcmp(unit, table[i].unit) == 0) {
			snprintf(pmu, size, "%s", table[i].pmu);
			return;
		}
	int n = snprintf(pmu, size, "uncore_");
	for (size_t i = 0; unit[i] && (size_t)n + 1 < size; i++)
		pmu[n++] = (char)tolower((unsigned char)unit[i]);
	pmu[n] = '\0';
}

/* A JSON number: "0x14", "1", "0xB7, 0xBB" (the first). */
static bool json_num(const char *s, uint64_t *v)
{
	if (!s)
		return false;
	char *end;
	*v = strtoull(s, &end, 0);
	return end != s;
}

/* jevents.py's lookup_msr: the term an MSRIndex sets. */
static const char *msr_term(const char *index)
{
	uint64_t msr;
	if (!json_num(index, &msr))
		return NULL;
	switch (msr) {
	case 0x3f6: return "ldlat";
	case 0x1a6: case 0x1a7: return "offcore_rsp";
	case 0x3f7: return "frontend";
	default: return NULL;
	}
}

#define MAX_TERMS 24
struct terms {
	struct {
		char key[32];
		uint64_t val;
	} t[MAX_TERMS];
	size_t n;
};

static void set_term(struct terms *ts, const char *key, uint64_t val)
{
	for (size_t i = 0; i < ts->n; i++)
		if (strcmp(ts->t[i].key, key) == 0) {
			ts->t[i].val = val;
			return;
		}
	if (ts->n < MAX_TERMS) {
		snprintf(ts->t[ts->n].key, sizeof(ts->t[0].key), "%s", key);
		ts->t[ts->n++].val = val;
	}
}

/* The terms of record R, as jevents.py writes them. */
static void record_terms(const struct hwc__pe_record *r, struct terms *ts)
{
	static const struct {
		const char *name;
		uint64_t event, umask;
		bool any;
	} fixed[] = {
		/* jevents.py real_event(): the fixed counters' events as perf encodes them */
		{"inst_retired.any", 0xc0, 0, false},     {"inst_retired.any_p", 0xc0, 0, false},
		{"cpu_clk_unhalted.ref", 0x00, 0x03, false}, {"cpu_clk_unhalted.thread", 0x3c, 0, false},
		{"cpu_clk_unhalted.core", 0x3c, 0, false}, {"cpu_clk_unhalted.thread_any", 0x3c, 0, true},
	};
	ts->n = 0;
	for (size_t i = 0; i < HWC_ARRAY_SIZE(fixed); i++)
		if (strcasecmp(r->name, fixed[i].name) == 0) {
			set_term(ts, "event", fixed[i].event);
			if (fixed[i].umask)
				set_term(ts, "umask", fixed[i].umask);
			if (fixed[i].any)
				set_term(ts, "any", 1);
			return;
		}
	static const struct {
		const char *field, *term;
	} fields[] = {
		{"AnyThread", "any"},     {"PortMask", "ch_mask"},     {"CounterMask", "cmask"},
		{"EdgeDetect", "edge"},   {"FCMask", "fc_mask"},       {"Invert", "inv"},
		{"UMask", "umask"},       {"NodeType", "type"},        {"RdWrMask", "rdwrmask"},
		{"EnAllCores", "enallcores"}, {"EnAllSlices", "enallslices"}, {"SliceId", "sliceid"},
		{"ThreadMask", "threadmask"},
	};
	uint64_t v = 0;
	if (json_num(hwc__pe_get(r, "ConfigCode"), &v))
		set_term(ts, "config", v);
	else if (json_num(hwc__pe_get(r, "EventidCode"), &v))
		set_term(ts, "eventid", v);
	else {
		uint64_t code = 0, ext = 0;
		json_num(hwc__pe_get(r, "EventCode"), &code);
		if (json_num(hwc__pe_get(r, "ExtSel"), &ext))
			code |= ext << 8;
		set_term(ts, "event", code);
	}
	for (size_t i = 0; i < HWC_ARRAY_SIZE(fields); i++)
		if (json_num(hwc__pe_get(r, fields[i].field), &v) && v)
			set_term(ts, fields[i].term, v);
	const char *msr = msr_term(hwc__pe_get(r, "MSRIndex"));
	if (msr && json_num(hwc__pe_get(r, "MSRValue"), &v))
		set_term(ts, msr, v);
}

/* A libpfm4-style modifier of an event (EV:c=2:i): its term, or NULL. */
static const char *modifier_term(const char *key)
{
	static const struct {
		const char *mod, *term;
	} mods[] = {
		{"e", "edge"},   {"edge", "edge"}, {"i", "inv"},       {"inv", "inv"},
		{"c", "cmask"},  {"cmask", "cmask"}, {"t", "any"},     {"any", "any"},
		{"ldlat", "ldlat"}, {"intx", "in_tx"}, {"intxcp", "in_tx_cp"},
	};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(mods); i++)
		if (strcasecmp(key, mods[i].mod) == 0)
			return mods[i].term;
	return NULL;
}

/* The PMU an event of T counts on and how its terms are encoded. */
struct target_pmu {
	char name[64];
	bool sysfs;                    /* format/ and type from sysfs */
	const struct format *builtin;  /* else these, with PERF_TYPE_RAW */
	uint32_t type;
};

static bool host_model(const struct hwc__pe_table *t)
{
	const struct hwc__pe_table *host;
	bool ok = hwc__pe_table(NULL, &host) == 0 && host == t;
	hwc__clear_error();
	return ok;
}

static int find_pmu(const struct hwc__pe_table *t, const struct hwc__pe_record *r,
		    const char *spec, struct hwc__ev *ev, struct target_pmu *p)
{
	const char *unit = hwc__pe_get(r, "Unit"), *compat = hwc__pe_get(r, "Compat");
	bool arm = strcmp(t->arch, "arm64") == 0;
	bool core = !unit || strcmp(unit, "cpu_core") == 0 || strcmp(unit, "cpu_atom") == 0 ||
		    strcmp(unit, "core") == 0;
	if (unit)
		unit_to_pmu(unit, p->name, sizeof(p->name));
	else if (arm)
		snprintf(p->name, sizeof(p->name), "%s", hwc__core_pmu_label());
	else
		snprintf(p->name, sizeof(p->name), "cpu");
	bool is_host = host_model(t);
	if (hwc__pmu_exists(p->name) && (is_host || !core) &&
	    (!compat || hwc__pmu_identifier_matches(p->name, compat))) {
		p->sysfs = true;
		return 0;
	}
	if (core) {
		/* Another model's core PMU, or none in this kernel: encode only. */
		p->builtin = arm ? armv8_formats
			     : strncmp(t->model, "amd", 3) == 0 ? amd_formats : intel_formats;
		p->type = PERF_TYPE_RAW;
		if (arm && !is_host)
			snprintf(p->name, sizeof(p->name), "armv8_pmuv3");
		return 0;
	}
	/* perf's: each instance (uncore_imc_0, ...) whose identifier Compat matches */
	char instance[64];
	int n = hwc__pmu_instance(p->name, true, compat, ev->instance, instance, sizeof(instance));
	if (n > ev->instance) {
		ev->ninstances = n;
		snprintf(p->name, sizeof(p->name), "%s", instance);
		p->sysfs = true;
		return 0;
	}
	if (!compat || !(hwc__pmu_exists(p->name) ||
			 hwc__pmu_instance(p->name, true, NULL, 0, instance, sizeof(instance))))
		hwc__fail(-ENOENT, "'%s' is an event of PMU %s (Unit %s), which this machine does "
				   "not have; `hwc list --pmu help` lists this machine's PMUs",
			  spec, p->name, unit);
	else
		hwc__fail(-ENOENT, "'%s' is an event of PMU %s (Unit %s) whose identifier matches "
				   "'%s' (Compat), and no PMU %s of this machine has such an identifier",
			  spec, p->name, unit, compat, p->name);
	for (int i = 0; compat && hwc__pmu_instance(p->name, true, NULL, i, instance,
						       sizeof(instance)) > i; i++) {
		char path[1024], id[128] = "?";
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/identifier",
			 hwc__sysfs_root(), instance);
		hwc__read_file(path, id, sizeof(id));
		hwc__fail_append("%s%s's is %s", i ? ", " : "; ", instance, id);
	}
	return -ENOENT;
}

static int apply(const struct target_pmu *p, const char *key, uint64_t val, const char *spec,
		 struct perf_event_attr *a)
{
	if (strcmp(key, "config") == 0) {
		a->config = val;
		return 0;
	}
	char format[256] = "";
	if (p->sysfs) {
		char path[1024];
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/format/%s",
			 hwc__sysfs_root(), p->name, key);
		hwc__read_file(path, format, sizeof(format));
	} else {
		for (const struct format *f = p->builtin; f->term; f++)
			if (strcmp(f->term, key) == 0)
				snprintf(format, sizeof(format), "%s", f->bits);
	}
	if (!format[0])
		return hwc__fail(-EINVAL, "'%s': PMU %s has no field '%s'", spec, p->name, key);
	return hwc__format_apply(format, val, a, key);
}

/* NAME[:MOD...] of table T into EV. */
static int encode(const struct hwc__pe_table *t, const char *name, const char *mods,
		  const char *spec, struct hwc__ev *ev)
{
	const struct hwc__pe_record *r = hwc__pe_find(t, name, false);
	if (!r)
		return HWC__NOT_MINE;
	struct terms ts;
	record_terms(r, &ts);
	/* Modifiers: libpfm4's unit-mask-like terms, else perf's letters. */
	char letters[64] = "", buf[256];
	snprintf(buf, sizeof(buf), "%s", mods ? mods : "");
	for (char *part = mods ? buf : NULL, *next; part; part = next) {
		next = strchr(part, ':');
		if (next)
			*next++ = '\0';
		char *eq = strchr(part, '=');
		if (eq)
			*eq = '\0';
		const char *term = modifier_term(part);
		if (term) {
			uint64_t v = 1;
			char *end = NULL;
			if (eq)
				v = strtoull(eq + 1, &end, 0);
			if (eq && (!eq[1] || *end))
				return hwc__fail(-EINVAL, "malformed event '%s': bad value in '%s=%s' (a "
							  "decimal or 0x hex number)",
						 spec, part, eq + 1);
			set_term(&ts, term, v);
		} else if (eq || part[strspn(part, "ukhpGHDIe")] ||
			   strlen(letters) + strlen(part) >= sizeof(letters)) {
			return hwc__fail(-EINVAL, "malformed event '%s': unknown modifier '%s' "
						  "(modifiers: e/edge, i/inv, c/cmask=N, t/any, ldlat=N, "
						  "and perf's u, k, h, p, ...)",
					 spec, part);
		} else {
			strcat(letters, part);
		}
	}
	struct target_pmu p = {0};
	int err = find_pmu(t, r, spec, ev, &p);
	if (err)
		return err;
	struct perf_event_attr *a = &ev->pub.attr;
	if (p.sysfs) {
		char path[1024];
		long long type;
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/type", hwc__sysfs_root(),
			 p.name);
		if ((err = hwc__read_int_file(path, &type)))
			return hwc__fail(err, "cannot read %s", path);
		a->type = (uint32_t)type;
	} else {
		a->type = p.type;
	}
	for (size_t i = 0; i < ts.n; i++)
		if ((err = apply(&p, ts.t[i].key, ts.t[i].val, spec, a)))
			return err;
	ev->pub.source = HWC_SRC_JSON;
	snprintf(ev->pmu, sizeof(ev->pmu), "%s", p.name);
	struct hwc__buf o = {0};
	hwc__buf_printf(&o, "JSON %s/%s %s/", t->model, r->file, p.name);
	for (size_t i = 0; i < ts.n; i++)
		hwc__buf_printf(&o, "%s%s=%#llx", i ? "," : "", ts.t[i].key,
				(unsigned long long)ts.t[i].val);
	hwc__buf_printf(&o, "/%s%s", p.sysfs ? "" : " (format built in: PMU absent here)",
			hwc__pe_get(r, "Deprecated") ? " [deprecated]" : "");
	snprintf(ev->origin, sizeof(ev->origin), "%s", o.s ? o.s : "");
	free(o.s);
	return letters[0] ? hwc__modify(ev, letters, spec) : 0;
}

bool hwc__json_alias(const char *pmu, const char *name, char *body, size_t size)
{
	const struct hwc__pe_table *t;
	if (!hwc__pe_root() || hwc__pe_table(NULL, &t)) {
		hwc__clear_error();
		return false;
	}
	const struct hwc__pe_record *r = hwc__pe_find(t, name, false);
	if (!r)
		return false;
	char json_pmu[64];
	const char *unit = hwc__pe_get(r, "Unit");
	if (unit)
		unit_to_pmu(unit, json_pmu, sizeof(json_pmu));
	else
		snprintf(json_pmu, sizeof(json_pmu), "%s",
			 strcmp(t->arch, "arm64") == 0 ? hwc__core_pmu_label() : "cpu");
	if (!hwc__pmu_name_matches(pmu, json_pmu, true))
		return false;
	struct terms ts;
	record_terms(r, &ts);
	int n = 0;
	for (size_t i = 0; i < ts.n && body && n >= 0 && (size_t)n < size; i++)
		n += snprintf(body + n, size - (size_t)n, "%s%s=%#llx", i ? "," : "", ts.t[i].key,
			      (unsigned long long)ts.t[i].val);
	return true;
}

bool hwc__json_sys_present(const struct hwc__pe_record *r)
{
	const char *compat = hwc__pe_get(r, "Compat"), *unit = hwc__pe_get(r, "Unit");
	char pmu[64], instance[64];
	if (!compat || !unit)
		return false;
	unit_to_pmu(unit, pmu, sizeof(pmu));
	return (hwc__pmu_exists(pmu) && hwc__pmu_identifier_matches(pmu, compat)) ||
	       hwc__pmu_instance(pmu, true, compat, 0, instance, sizeof(instance)) > 0;
}

struct sys_find {
	const char *name;
	const struct hwc__pe_table *t;
};

static int sys_find(const struct hwc__pe_table *t, void *arg)
{
	struct sys_find *f = arg;
	const struct hwc__pe_record *r = hwc__pe_find(t, f->name, false);
	if (!r || !hwc__json_sys_present(r))
		return 0;
	f->t = t;
	return 1;
}

int hwc__resolve_json(const char *model, const char *spec, struct hwc__ev *ev)
{
	const char *event = spec;
	const char *dcolon = strstr(spec, "::");
	if (dcolon)
		event = dcolon + 2;
	char name[256];
	size_t len = strcspn(event, ":");
	if (!len || len >= sizeof(name))
		return HWC__NOT_MINE;
	memcpy(name, event, len);
	name[len] = '\0';
	const struct hwc__pe_table *t;
	if (!model && !hwc__pe_root())
		return HWC__NOT_MINE;
	int err = hwc__pe_table(model, &t);
	/* This CPU's table is there but cannot be read (not JSON, an I/O
	 * error): say so, rather than call the name unknown. */
	if (err && (model || err == -EINVAL || err == -EIO))
		return err;
	hwc__clear_error(); /* no table for this CPU: the name may be a system event */
	const char *mods = event[len] ? event + len + 1 : NULL;
	err = err ? HWC__NOT_MINE : encode(t, name, mods, spec, ev);
	/* As perf: a system event (arm_cmn's, in arm/cmn/sys) of a PMU this
	 * machine has, whatever its CPU */
	struct sys_find f = {.name = name};
	if (err == HWC__NOT_MINE && !model && hwc__pe_sys_walk(sys_find, &f) > 0)
		err = encode(f.t, name, mods, spec, ev);
	return err;
}

void hwc__json_names(const char *model, hwc__name_fn fn, void *arg)
{
	const struct hwc__pe_table *t;
	if ((!model && !hwc__pe_root()) || hwc__pe_table(model, &t)) {
		hwc__clear_error();
		return;
	}
	char name[512];
	for (size_t i = 0; i < t->n; i++) {
		if (t->rec[i].metric)
			continue;
		if (model)
			snprintf(name, sizeof(name), "%s::%s", model, t->rec[i].name);
		fn(model ? name : t->rec[i].name, arg);
	}
}

struct events_walk {
	hwc_event_walk_fn fn;
	void *arg;
	const struct hwc__pe_table *host; /* listed already */
};

static int walk_table(const struct hwc__pe_table *t, bool sys_only, hwc_event_walk_fn fn,
		      void *arg)
{
	int err = 0;
	char spec[512];
	/* model::EVENT takes the last part of arm64's vendor/model. */
	const char *base = strrchr(t->model, '/') ? strrchr(t->model, '/') + 1 : t->model;
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct hwc__pe_record *r = &t->rec[i];
		if (r->metric || (sys_only && !hwc__json_sys_present(r)))
			continue;
		/* As perf describes them: a precise event says so, a deprecated one too. */
		const char *brief = hwc__pe_get(r, "BriefDescription"), *pebs = hwc__pe_get(r, "PEBS");
		char desc[2048];
		bool says = brief && strcasestr(brief, "deprecated");
		snprintf(desc, sizeof(desc), "%s%s%s",
			 hwc__pe_get(r, "Deprecated") && !says ? "[deprecated] " : "",
			 brief ? brief : "",
			 !pebs || strcmp(pebs, "0") == 0 ? ""
			 : strcmp(pebs, "2") == 0	 ? " (Must be precise)"
							 : " (Precise event)");
		uint64_t code = 0;
		json_num(hwc__pe_get(r, "EventCode"), &code);
		snprintf(spec, sizeof(spec), "%s::%s", base, r->name);
		struct hwc_event_info info = {.name = r->name, .spec = spec, .pmu = t->model,
					      .source = HWC_SRC_JSON, .desc = desc,
					      .code = code};
		err = fn(&info, arg);
	}
	return err;
}

static int walk_sys(const struct hwc__pe_table *t, void *arg)
{
	struct events_walk *w = arg;
	return t == w->host ? 0 : walk_table(t, true, w->fn, w->arg);
}

int hwc__json_events_walk(const char *model, hwc_event_walk_fn fn, void *arg)
{
	const struct hwc__pe_table *t;
	int err = hwc__pe_table(model, &t);
	if (err)
		return err;
	struct events_walk w = {fn, arg, t};
	err = walk_table(t, false, fn, arg);
	/* This CPU's: also the system events of the PMUs it has (perf's sys/) */
	return err || model ? err : hwc__pe_sys_walk(walk_sys, &w);
}
