/* What this machine has: the CPU (from CPUID), its core PMU as the kernel
 * exposes it, and what perf_event_paranoid lets the caller do. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static bool cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
	unsigned max = __get_cpuid_max(leaf & 0x80000000u, NULL);
	if (max < leaf) {
		r[0] = r[1] = r[2] = r[3] = 0;
		return false;
	}
	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
	return true;
}

static void cpu_identity(struct hwc_cpu_info *out)
{
	unsigned r[4];
	cpuid(0, 0, r);
	memcpy(out->vendor, &r[1], 4);
	memcpy(out->vendor + 4, &r[3], 4);
	memcpy(out->vendor + 8, &r[2], 4);
	out->vendor[12] = '\0';
	if (strcmp(out->vendor, "GenuineIntel") == 0)
		out->vendor_id = HWC_VENDOR_INTEL;
	else if (strcmp(out->vendor, "AuthenticAMD") == 0 || strcmp(out->vendor, "HygonGenuine") == 0)
		out->vendor_id = HWC_VENDOR_AMD;
	if (cpuid(1, 0, r)) {
		unsigned family = (r[0] >> 8) & 0xf, model = (r[0] >> 4) & 0xf;
		/* The extended fields count when the base family says so (SDM / APM). */
		if (family == 0xf)
			family += (r[0] >> 20) & 0xff;
		if (family == 0x6 || family >= 0xf)
			model |= ((r[0] >> 16) & 0xf) << 4;
		out->family = family;
		out->model = model;
		out->stepping = r[0] & 0xf;
	}
	if (cpuid(0x80000004, 0, r)) {
		char brand[49];
		for (unsigned i = 0; i < 3; i++) {
			cpuid(0x80000002 + i, 0, r);
			memcpy(brand + 16 * i, r, 16);
		}
		brand[48] = '\0';
		const char *b = brand;
		while (*b == ' ')
			b++;
		snprintf(out->brand, sizeof(out->brand), "%s", b);
		size_t n = strlen(out->brand);
		while (n && out->brand[n - 1] == ' ')
			out->brand[--n] = '\0';
	}
	if (cpuid(0x80000007, 0, r))
		out->tsc_invariant = (r[3] >> 8) & 1;
}

/* The core counters the CPU reports, for a kernel that exposes its PMU. */
static void cpu_counters(struct hwc_cpu_info *out)
{
	unsigned r[4];
	bool amd = out->vendor_id == HWC_VENDOR_AMD;
	if (out->vendor_id == HWC_VENDOR_INTEL && cpuid(0xa, 0, r) && (r[0] & 0xff)) {
		unsigned version = r[0] & 0xff;
		out->counters = (int)((r[0] >> 8) & 0xff);
		out->counter_width = (int)((r[0] >> 16) & 0xff);
		if (version > 1) {
			out->fixed = (int)(r[3] & 0x1f);
			out->fixed_width = (int)((r[3] >> 5) & 0xff);
		}
		snprintf(out->counters_source, sizeof(out->counters_source),
			 "CPUID leaf 0xA (architectural PMU v%u)", version);
	} else if (amd && cpuid(0x80000022, 0, r) && (r[0] & 1)) {
		out->counters = (int)(r[1] & 0xf);
		out->counter_width = 48;
		snprintf(out->counters_source, sizeof(out->counters_source),
			 "CPUID leaf 0x80000022 (PerfMonV2)");
	} else if (amd && cpuid(0x80000001, 0, r)) {
		bool core_ext = (r[2] >> 23) & 1;
		out->counters = core_ext ? 6 : 4;
		out->counter_width = 48;
		snprintf(out->counters_source, sizeof(out->counters_source), "%s",
			 core_ext ? "CPUID 0x80000001 perfctr_core" : "AMD legacy counters (no perfctr_core)");
	}
}
#else
static void cpu_identity(struct hwc_cpu_info *out)
{
	snprintf(out->vendor, sizeof(out->vendor), "unknown");
}

static void cpu_counters(struct hwc_cpu_info *out)
{
	(void)out;
}
#endif

HWC_EXPORT int hwc_cpu_info(struct hwc_cpu_info *out)
{
	hwc__clear_error();
	memset(out, 0, sizeof(*out));
	cpu_identity(out);
	int n = hwc_online_cpus(NULL, 0);
	out->cpus_online = n > 0 ? n : 0;
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	out->cpus_configured = conf > 0 ? (int)conf : out->cpus_online;

	int ngen = 0, nfix = 0;
	const char *model = hwc__pfm_host_model(&ngen, &nfix);
	struct hwc_model_info m;
	if (model && hwc__pfm_model(model, &m) == 0) {
		snprintf(out->pfm_model, sizeof(out->pfm_model), "%s", model);
		snprintf(out->pfm_desc, sizeof(out->pfm_desc), "%s", m.desc);
		out->pfm_counters = ngen;
		out->pfm_fixed = nfix;
	}

	static const char *const core_pmus[] = {"cpu", "cpu_core"};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(core_pmus) && !out->core_pmu; i++)
		if (hwc__pmu_exists(core_pmus[i])) {
			out->core_pmu = true;
			snprintf(out->core_pmu_name, sizeof(out->core_pmu_name), "%s", core_pmus[i]);
		}
	if (out->core_pmu) {
		cpu_counters(out);
		if (!out->counters && ngen) { /* a CPU that CPUID does not describe */
			out->counters = ngen;
			out->fixed = nfix;
			snprintf(out->counters_source, sizeof(out->counters_source),
				 "libpfm4 table of %s", model);
		}
		struct hwc_user_reads r;
		if (out->counters && !out->counter_width && hwc_user_reads(&r) == 0 && r.pmc_width) {
			out->counter_width = r.pmc_width; /* what the kernel says it reads */
			size_t len = strlen(out->counters_source);
			snprintf(out->counters_source + len, sizeof(out->counters_source) - len,
				 "; width from the perf mmap page");
		}
	}

	long long wd;
	out->nmi_watchdog = hwc__read_int_file("/proc/sys/kernel/nmi_watchdog", &wd) == 0 ? (int)!!wd : -1;
	/* The perf-based hard-lockup detector keeps one counter per CPU. */
	out->watchdog_counter = out->nmi_watchdog == 1 && out->core_pmu;
	return 0;
}

/* Can a task-clock/cpu-clock be opened this way?  Used to establish what
 * the kernel allows rather than guess it from the paranoid level. */
static bool can_open(uint64_t config, bool kernel, bool cpu_wide)
{
	struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .size = sizeof(a), .config = config,
				    .exclude_kernel = !kernel, .exclude_hv = 1, .disabled = 1};
	int cpus[1] = {0};
	if (cpu_wide && hwc_online_cpus(cpus, 1) <= 0)
		return false;
	int fd = hwc__perf_event_open(&a, cpu_wide ? -1 : 0, cpu_wide ? cpus[0] : -1, -1,
				      PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

HWC_EXPORT int hwc_permissions(struct hwc_permissions *out)
{
	hwc__clear_error();
	memset(out, 0, sizeof(*out));
	int err = hwc_paranoid(&out->paranoid);
	if (err)
		return err;
	out->privileged = hwc__privileged();
	out->user = can_open(PERF_COUNT_SW_TASK_CLOCK, false, false);
	out->kernel = can_open(PERF_COUNT_SW_TASK_CLOCK, true, false);
	out->cpu_wide = can_open(PERF_COUNT_SW_CPU_CLOCK, false, true);
	if (out->privileged && out->user && out->kernel && out->cpu_wide)
		snprintf(out->summary, sizeof(out->summary),
			 "privileged (CAP_PERFMON or CAP_SYS_ADMIN): perf_event_paranoid does "
			 "not restrict this user");
	else if (!out->user)
		snprintf(out->summary, sizeof(out->summary),
			 "perf_event_paranoid %d forbids this user any counting; run as root or "
			 "`sysctl kernel.perf_event_paranoid=2`",
			 out->paranoid);
	else
		snprintf(out->summary, sizeof(out->summary),
			 "perf_event_paranoid %d lets this user count its own processes in user "
			 "space%s; %s",
			 out->paranoid, out->kernel ? " and in the kernel" : " only",
			 out->cpu_wide ? "and whole CPUs (all tasks)"
				       : "not whole CPUs (system-wide needs root, CAP_PERFMON or "
					 "perf_event_paranoid 0)");
	return 0;
}
