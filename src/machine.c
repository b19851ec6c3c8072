/* What this machine has: the CPU (arch.c), its core PMU as the kernel
 * exposes it, and what perf_event_paranoid lets the caller do. */
#include "arch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


HWC_EXPORT int hwc_cpu_info(struct hwc_cpu_info *out)
{
	hwc__clear_error();
	memset(out, 0, sizeof(*out));
	hwc__arch_cpu_identity(out);
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

	const char *core = hwc__core_pmu(NULL);
	if (core) {
		out->core_pmu = true;
		snprintf(out->core_pmu_name, sizeof(out->core_pmu_name), "%s", core);
		hwc__arch_cpu_counters(out);
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
