/* hwc info: the CPU, the PMUs the kernel exposes and what they offer, what
 * this user may count, and how time and counters can be read. */
#include "hwc.h"
#include "json.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: hwc info [--json]\n"
		   "\n"
		   "Describe this machine: CPU, libpfm4 model, the PMUs the kernel exposes and their\n"
		   "counters, the NMI watchdog, what perf_event_paranoid allows this user, the TSC\n"
		   "rate and how it was obtained, and whether user-space time reads and rdpmc work.\n"
		   "\n"
		   "  --json      machine-readable output (schema hwc-info/1; see hwc-info(1))\n"
		   "  -h, --help  this help\n");
}

struct info {
	struct hwc_cpu_info cpu;
	struct hwc_permissions perm;
	struct hwc_user_reads reads;
	double tsc_hz;
	enum hwc_tsc_source tsc_src;
	bool arm;              /* the CPU has a MIDR_EL1 (an Arm CPU) */
	struct hwc_midr midr;
	/* perf's JSON tables: how many models, and this CPU's with its mapfile.csv row */
	int json_models;
	char json_model[256], json_map[256];
};

static int json_model(const struct hwc_model_info *m, void *arg)
{
	struct info *in = arg;
	in->json_models++;
	if (m->present) {
		snprintf(in->json_model, sizeof(in->json_model), "%s", m->name);
		snprintf(in->json_map, sizeof(in->json_map), "%s", m->desc);
	}
	return 0;
}

static const char *tsc_source_key(enum hwc_tsc_source s)
{
	switch (s) {
	case HWC_TSC_PERF_MMAP: return "perf_mmap";
	case HWC_TSC_CPUID_15: return "cpuid_15";
	case HWC_TSC_CPUID_16: return "cpuid_16";
	case HWC_TSC_HYPERVISOR: return "hypervisor";
	case HWC_TSC_CALIBRATED: return "calibrated";
	case HWC_TSC_CNTFRQ: return "cntfrq";
	}
	return "unknown";
}

/* Counters free for users: the watchdog's is not. */
static int usable_counters(const struct hwc_cpu_info *c)
{
	int n = c->counters - (c->watchdog_counter ? 1 : 0);
	return n > 0 ? n : 0;
}

/* ------------------------------------------------------------- text */

#define LABEL "%-14s"

static int text_pmu(const struct hwc_pmu_info *p, void *arg)
{
	(void)arg;
	printf("  %-20s type %-4u %4zu event%s", p->name, p->type, p->nevents, p->nevents == 1 ? "" : "s");
	if (*p->cpumask)
		printf("  cpumask %s", p->cpumask);
	if (*p->cpus)
		printf("  cpus %s", p->cpus);
	if (p->rdpmc >= 0)
		printf("  rdpmc %d", p->rdpmc);
	if (*p->caps)
		printf("  caps: %s", p->caps);
	printf("\n");
	if (*p->formats)
		printf("  %-20s terms: %s\n", "", p->formats);
	return 0;
}

/* The core PMUs with a cpus file, "cpu_atom on CPUs 16-23; cpu_core ...". */
struct core_pmus {
	int n;
	char text[1024];
};

static int add_core_pmu(const struct hwc_pmu_info *p, void *arg)
{
	struct core_pmus *cp = arg;
	size_t len = strlen(cp->text);
	if (p->core && *p->cpus && len < sizeof(cp->text))
		snprintf(cp->text + len, sizeof(cp->text) - len, "%s%s (type %u) on CPUs %s",
			 cp->n++ ? "; " : "", p->name, p->type, p->cpus);
	return 0;
}

static void print_text(const struct info *in)
{
	const struct hwc_cpu_info *c = &in->cpu;
	const struct hwc_midr *m = &in->midr;
	if (in->arm)
		printf(LABEL "%s %s (MIDR_EL1 %#llx: implementer %#x, variant %#x, part %#x, "
			     "revision %u)\n",
		       "CPU", c->vendor, c->brand, (unsigned long long)m->value, m->implementer,
		       m->variant, m->part, m->revision);
	else
		printf(LABEL "%s family %u (%#x) model %u (%#x) stepping %u%s%s\n", "CPU", c->vendor,
		       c->family, c->family, c->model, c->model, c->stepping, *c->brand ? ": " : "",
		       c->brand);
	printf(LABEL "%d online, %d configured; %s %s\n", "CPUs", c->cpus_online,
	       c->cpus_configured, in->arm ? "generic timer" : "TSC",
	       c->tsc_invariant ? "invariant" : "not invariant (rate may vary)");
	if (*c->pfm_model)
		printf(LABEL "%s (%s); its table has %d general and %d fixed counters\n", "libpfm4",
		       c->pfm_model, c->pfm_desc, c->pfm_counters, c->pfm_fixed);
	else
		printf(LABEL "no model for this CPU (model::EVENT still encodes for any model)\n",
		       "libpfm4");
	if (*in->json_model)
		printf(LABEL "%s (mapfile.csv: %s); metrics: hwc list --metrics\n", "JSON tables",
		       in->json_model, in->json_map);
	else if (in->json_models)
		printf(LABEL "no model for this CPU among %d (model::EVENT still encodes for any)\n",
		       "JSON tables", in->json_models);
	else
		printf(LABEL "none found (--events-dir, $HWC_EVENTS_DIR: see hwc-events(7))\n",
		       "JSON tables");

	if (!c->core_pmu) {
		printf(LABEL "none: the kernel exposes no hardware PMU (no "
			     "/sys/bus/event_source/devices/cpu),\n",
		       "Hardware PMU");
		printf(LABEL "as on virtual machines without PMU pass-through.  No hardware event\n", "");
		printf(LABEL "(cycles, instructions, cache, raw or libpfm4 events) can be opened here:\n", "");
		printf(LABEL "0 usable counters.  Software events and the PMUs below still work.\n", "");
	} else {
		printf(LABEL "%s: %d general counters of %d bits", "Hardware PMU", c->core_pmu_name,
		       c->counters, c->counter_width);
		if (c->fixed)
			printf(", %d fixed of %d bits", c->fixed, c->fixed_width);
		printf(" (%s)\n", *c->counters_source ? c->counters_source : "source unknown");
		printf(LABEL "%d general counters usable%s\n", "", usable_counters(c),
		       c->watchdog_counter ? " (the NMI watchdog holds one)" : "");
	}
	struct core_pmus cp = {0};
	hwc_pmus_walk(add_core_pmu, &cp);
	if (cp.n > 1) /* hybrid, big.LITTLE */
		printf(LABEL "%s\n" LABEL "a generic event (cycles) counts on each, one row per PMU\n",
		       "Core PMUs", cp.text, "");
	if (c->nmi_watchdog < 0)
		printf(LABEL "unknown (no /proc/sys/kernel/nmi_watchdog)\n", "NMI watchdog");
	else
		printf(LABEL "%s (kernel.nmi_watchdog = %d); %s\n", "NMI watchdog",
		       c->nmi_watchdog ? "on" : "off", c->nmi_watchdog,
		       c->watchdog_counter ? "holds one general counter on every CPU"
					   : "holds no counter");

	const struct hwc_permissions *p = &in->perm;
	printf(LABEL "perf_event_paranoid = %d; uid %u%s\n", "Permissions", p->paranoid,
	       (unsigned)geteuid(), p->privileged ? ", privileged" : "");
	printf(LABEL "%s\n", "", p->summary);
	printf(LABEL "own processes, user space: %s; kernel: %s; whole CPUs: %s\n", "",
	       p->user ? "yes" : "no", p->kernel ? "yes" : "no", p->cpu_wide ? "yes" : "no");

	printf(LABEL "%.6f MHz (%.0f Hz), %s\n", in->arm ? "Timer" : "TSC", in->tsc_hz / 1e6, in->tsc_hz,
	       hwc_tsc_source_name(in->tsc_src));
	const struct hwc_user_reads *r = &in->reads;
	if (r->time)
		printf(LABEL "yes (cap_user_time%s; time_mult %u, time_shift %u)\n", "User time",
		       r->time_zero ? ", cap_user_time_zero" : "", r->time_mult, r->time_shift);
	else
		printf(LABEL "no: %s\n", "User time", r->time_why);
	if (r->rdpmc)
		printf(LABEL "yes (cap_user_rdpmc; counters %d bits wide)\n", "rdpmc", r->pmc_width);
	else
		printf(LABEL "no: %s\n", "rdpmc", r->rdpmc_why);

	printf("\nPMUs the kernel exposes (/sys/bus/event_source/devices):\n");
	hwc_pmus_walk(text_pmu, NULL);
}

/* ------------------------------------------------------------- JSON */

/* "a=x b=y" as an object. */
static void json_pairs(struct json *j, const char *key, const char *pairs)
{
	json_object(j, key);
	char *copy = strdup(pairs), *save = NULL;
	for (char *tok = copy ? strtok_r(copy, " ", &save) : NULL; tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq = '\0';
		json_string(j, tok, eq + 1);
	}
	free(copy);
	json_object_end(j);
}

static int json_pmu(const struct hwc_pmu_info *p, void *arg)
{
	struct json *j = arg;
	json_object(j, NULL);
	json_string(j, "name", p->name);
	json_uint(j, "type", p->type);
	json_bool(j, "core", p->core);
	json_string(j, "cpumask", *p->cpumask ? p->cpumask : NULL);
	json_string(j, "cpus", *p->cpus ? p->cpus : NULL);
	json_uint(j, "events", p->nevents);
	json_pairs(j, "formats", p->formats);
	json_pairs(j, "caps", p->caps);
	if (p->rdpmc >= 0)
		json_int(j, "rdpmc", p->rdpmc);
	else
		json_null(j, "rdpmc");
	json_object_end(j);
	return 0;
}

static void print_json(const struct info *in)
{
	struct json j;
	const struct hwc_cpu_info *c = &in->cpu;
	json_init(&j, stdout);
	json_object(&j, NULL);
	json_string(&j, "schema", "hwc-info/1");

	json_object(&j, "cpu");
	json_string(&j, "vendor", c->vendor);
	json_uint(&j, "family", c->family);
	json_uint(&j, "model", c->model);
	json_uint(&j, "stepping", c->stepping);
	json_string(&j, "brand", c->brand);
	json_int(&j, "cpus_online", c->cpus_online);
	json_int(&j, "cpus_configured", c->cpus_configured);
	json_bool(&j, "tsc_invariant", c->tsc_invariant);
	if (in->arm) {
		json_object(&j, "midr");
		json_hex(&j, "value", in->midr.value);
		json_uint(&j, "implementer", in->midr.implementer);
		json_uint(&j, "variant", in->midr.variant);
		json_uint(&j, "architecture", in->midr.architecture);
		json_uint(&j, "part", in->midr.part);
		json_uint(&j, "revision", in->midr.revision);
		json_string(&j, "implementer_name", in->midr.implementer_name);
		json_string(&j, "part_name", in->midr.part_name);
		json_object_end(&j);
	} else {
		json_null(&j, "midr");
	}
	json_object_end(&j);

	json_object(&j, "libpfm4");
	json_string(&j, "model", *c->pfm_model ? c->pfm_model : NULL);
	json_string(&j, "desc", *c->pfm_model ? c->pfm_desc : NULL);
	json_int(&j, "table_counters", c->pfm_counters);
	json_int(&j, "table_fixed", c->pfm_fixed);
	json_object_end(&j);

	json_object(&j, "json_tables");
	json_int(&j, "models", in->json_models);
	json_string(&j, "model", *in->json_model ? in->json_model : NULL);
	json_string(&j, "mapping", *in->json_model ? in->json_map : NULL);
	json_object_end(&j);

	json_object(&j, "core_pmu");
	json_bool(&j, "present", c->core_pmu);
	json_string(&j, "name", c->core_pmu ? c->core_pmu_name : NULL);
	json_int(&j, "counters", c->counters);
	json_int(&j, "counter_width", c->counter_width);
	json_int(&j, "fixed", c->fixed);
	json_int(&j, "fixed_width", c->fixed_width);
	json_int(&j, "usable_counters", usable_counters(c));
	json_string(&j, "source", *c->counters_source ? c->counters_source : NULL);
	json_object_end(&j);

	json_object(&j, "nmi_watchdog");
	if (c->nmi_watchdog < 0)
		json_null(&j, "enabled");
	else
		json_bool(&j, "enabled", c->nmi_watchdog);
	json_bool(&j, "holds_counter", c->watchdog_counter);
	json_object_end(&j);

	json_array(&j, "pmus");
	hwc_pmus_walk(json_pmu, &j);
	json_array_end(&j);

	const struct hwc_permissions *p = &in->perm;
	json_object(&j, "permissions");
	json_int(&j, "paranoid", p->paranoid);
	json_uint(&j, "uid", geteuid());
	json_bool(&j, "privileged", p->privileged);
	json_bool(&j, "user", p->user);
	json_bool(&j, "kernel", p->kernel);
	json_bool(&j, "cpu_wide", p->cpu_wide);
	json_string(&j, "summary", p->summary);
	json_object_end(&j);

	const struct hwc_user_reads *r = &in->reads;
	json_object(&j, "time");
	json_double(&j, "tsc_hz", in->tsc_hz);
	json_string(&j, "tsc_source", tsc_source_key(in->tsc_src));
	json_string(&j, "tsc_source_desc", hwc_tsc_source_name(in->tsc_src));
	json_bool(&j, "user_time", r->time);
	json_bool(&j, "user_time_zero", r->time_zero);
	json_string(&j, "user_time_reason", r->time ? NULL : r->time_why);
	json_bool(&j, "rdpmc", r->rdpmc);
	json_string(&j, "rdpmc_reason", r->rdpmc ? NULL : r->rdpmc_why);
	if (r->rdpmc_sysfs >= 0)
		json_int(&j, "rdpmc_sysfs", r->rdpmc_sysfs);
	else
		json_null(&j, "rdpmc_sysfs");
	json_int(&j, "pmc_width", r->pmc_width);
	json_object_end(&j);

	json_object_end(&j);
	json_end(&j);
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = false;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "hwc info: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hwc info: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	struct info in = {0};
	int err = hwc_cpu_info(&in.cpu);
	if (!err)
		err = hwc_json_models_walk(json_model, &in);
	if (!err)
		err = hwc_permissions(&in.perm);
	if (!err)
		err = hwc_user_reads(&in.reads);
	if (!err)
		err = hwc_tsc_hz(&in.tsc_hz, &in.tsc_src);
	int cpus[1];
	in.arm = !err && hwc_online_cpus(cpus, 1) >= 1 && hwc_cpu_midr(cpus[0], &in.midr) == 0;
	if (err) {
		fprintf(stderr, "hwc info: %s\n", hwc_errdetail());
		return 1;
	}
	if (json)
		print_json(&in);
	else
		print_text(&in);
	return 0;
}
