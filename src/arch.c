/* What differs between the CPUs libhwc runs on, beside arch.h's inline
 * reads: who the CPU is, how many counters its PMU has, the exact rate of
 * its timestamp counter, and what an event must ask for to be read from
 * user space.  MIDR decoding works on any host (tests, recordings). */
#include "arch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* ------------------------------------------------------------- Arm MIDR */

static const struct {
	unsigned code;
	const char *name;
} implementers[] = {
	{0x41, "Arm"},     {0x42, "Broadcom"}, {0x43, "Cavium"}, {0x46, "Fujitsu"},
	{0x48, "HiSilicon"}, {0x4e, "NVIDIA"}, {0x50, "APM"},    {0x51, "Qualcomm"},
	{0x61, "Apple"},   {0xc0, "Ampere"},
};

/* Parts as the Arm Technical Reference Manuals (and Linux's
 * arch/arm64/include/asm/cputype.h) number them. */
static const struct {
	unsigned implementer, part;
	const char *name;
} parts[] = {
	{0x41, 0xd03, "Cortex-A53"},   {0x41, 0xd04, "Cortex-A35"},   {0x41, 0xd05, "Cortex-A55"},
	{0x41, 0xd07, "Cortex-A57"},   {0x41, 0xd08, "Cortex-A72"},   {0x41, 0xd09, "Cortex-A73"},
	{0x41, 0xd0a, "Cortex-A75"},   {0x41, 0xd0b, "Cortex-A76"},   {0x41, 0xd0c, "Neoverse N1"},
	{0x41, 0xd0d, "Cortex-A77"},   {0x41, 0xd40, "Neoverse V1"},  {0x41, 0xd41, "Cortex-A78"},
	{0x41, 0xd44, "Cortex-X1"},    {0x41, 0xd46, "Cortex-A510"},  {0x41, 0xd47, "Cortex-A710"},
	{0x41, 0xd48, "Cortex-X2"},    {0x41, 0xd49, "Neoverse N2"},  {0x41, 0xd4a, "Neoverse E1"},
	{0x41, 0xd4f, "Neoverse V2"},  {0x43, 0x0af, "ThunderX2"},    {0x46, 0x001, "A64FX"},
	{0x48, 0xd01, "TSV110"},       {0xc0, 0xac3, "AmpereOne"},
};

HWC_EXPORT void hwc_midr_decode(uint64_t value, struct hwc_midr *out)
{
	*out = (struct hwc_midr){
		.value = value,
		.implementer = (unsigned)(value >> 24) & 0xff,
		.variant = (unsigned)(value >> 20) & 0xf,
		.architecture = (unsigned)(value >> 16) & 0xf,
		.part = (unsigned)(value >> 4) & 0xfff,
		.revision = (unsigned)value & 0xf,
	};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(implementers); i++)
		if (implementers[i].code == out->implementer)
			out->implementer_name = implementers[i].name;
	for (size_t i = 0; i < HWC_ARRAY_SIZE(parts); i++)
		if (parts[i].implementer == out->implementer && parts[i].part == out->part)
			out->part_name = parts[i].name;
}

HWC_EXPORT int hwc_cpu_midr(int cpu, struct hwc_midr *out)
{
	hwc__clear_error();
	memset(out, 0, sizeof(*out));
	char path[512], text[64];
	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/regs/identification/midr_el1",
		 hwc__sysfs_root(), cpu);
	int err = hwc__read_file(path, text, sizeof(text));
	if (err)
		return hwc__fail(err, "cannot read %s: %s (only Linux on Arm CPUs has it)", path,
				 strerror(-err));
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 16);
	if (errno || end == text || *end)
		return hwc__fail(-EINVAL, "%s holds '%s', not a hexadecimal MIDR", path, text);
	hwc_midr_decode(v, out);
	return 0;
}

/* ------------------------------------------------------------- x86 */

#if defined(__x86_64__) || defined(__i386__)
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

void hwc__arch_cpu_identity(struct hwc_cpu_info *out)
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

void hwc__arch_cpu_counters(struct hwc_cpu_info *out)
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

bool hwc__arch_tsc_rate(double *hz, enum hwc_tsc_source *src, bool *first)
{
	*first = false; /* CPUID leaves are wrong on some CPUs: the kernel's first */
	unsigned a, b, c, d, max = __get_cpuid_max(0, NULL);
	if (max >= 0x15) {
		__cpuid(0x15, a, b, c, d);
		if (a && b && c) { /* crystal Hz x TSC/crystal ratio */
			*hz = (double)c * b / a;
			*src = HWC_TSC_CPUID_15;
			return true;
		}
		if (a && b && max >= 0x16) { /* no crystal given: the base MHz is the TSC's */
			unsigned base_mhz;
			__cpuid(0x16, base_mhz, b, c, d);
			if (base_mhz) {
				*hz = base_mhz * 1e6;
				*src = HWC_TSC_CPUID_16;
				return true;
			}
		}
	}
	__cpuid(1, a, b, c, d);
	if (c & (1u << 31)) { /* under a hypervisor: its timing leaf, if it has one */
		__cpuid(0x40000000, a, b, c, d);
		if (a >= 0x40000010) {
			__cpuid(0x40000010, a, b, c, d);
			if (a) {
				*hz = a * 1e3;
				*src = HWC_TSC_HYPERVISOR;
				return true;
			}
		}
	}
	return false;
}

const char *hwc__arch_user_read_hint(void)
{
	return "";
}

void hwc__arch_request_user_read(struct perf_event_attr *attr)
{
	(void)attr; /* x86 kernels decide rdpmc per PMU (its rdpmc file), not per event */
}

/* ------------------------------------------------------------- arm64 */

#elif defined(__aarch64__)
void hwc__arch_cpu_identity(struct hwc_cpu_info *out)
{
	struct hwc_midr m;
	out->vendor_id = HWC_VENDOR_ARM;
	out->tsc_invariant = true; /* the generic timer ticks at CNTFRQ_EL0 in every state */
	int cpus[1];
	if (hwc_online_cpus(cpus, 1) < 1 || hwc_cpu_midr(cpus[0], &m) != 0) {
		snprintf(out->vendor, sizeof(out->vendor), "Arm");
		return;
	}
	if (m.implementer_name)
		snprintf(out->vendor, sizeof(out->vendor), "%s", m.implementer_name);
	else
		snprintf(out->vendor, sizeof(out->vendor), "implementer %#x", m.implementer);
	out->family = m.implementer;
	out->model = m.part;
	out->stepping = m.revision;
	if (m.part_name)
		snprintf(out->brand, sizeof(out->brand), "%s r%up%u", m.part_name, m.variant,
			 m.revision);
	else
		snprintf(out->brand, sizeof(out->brand), "part %#x r%up%u", m.part, m.variant,
			 m.revision);
}

/* Linux 6.1 reports PMCR_EL0.N nowhere in sysfs (caps/slots is PMMIR's
 * STALL_SLOT), but the armv8 driver validates a group against the PMU when
 * it is opened: the first INST_RETIRED (0x08, which every PMUv3 has and
 * only a general counter counts) that a group refuses is one too many.
 * The driver leaves disabled events out of that check unless they are to
 * be enabled on exec: hence enable_on_exec (the descriptors close on exec). */
void hwc__arch_cpu_counters(struct hwc_cpu_info *out)
{
	int fd[33], n = 0;
	for (; n < (int)HWC_ARRAY_SIZE(fd); n++) {
		struct perf_event_attr a = {.type = PERF_TYPE_RAW, .size = sizeof(a), .config = 0x08,
					    .disabled = 1, .enable_on_exec = 1, .exclude_kernel = 1,
					    .exclude_hv = 1};
		fd[n] = hwc__perf_event_open(&a, 0, -1, n ? fd[0] : -1, PERF_FLAG_FD_CLOEXEC);
		if (fd[n] < 0)
			break;
	}
	bool limit = n > 0 && n < (int)HWC_ARRAY_SIZE(fd) && fd[n] == -EINVAL;
	int cycles = -1;
	if (limit) { /* CPU_CYCLES (0x11) still fits: the PMU has its cycle counter */
		struct perf_event_attr a = {.type = PERF_TYPE_RAW, .size = sizeof(a), .config = 0x11,
					    .disabled = 1, .enable_on_exec = 1, .exclude_kernel = 1,
					    .exclude_hv = 1};
		cycles = hwc__perf_event_open(&a, 0, -1, fd[0], PERF_FLAG_FD_CLOEXEC);
	}
	if (cycles >= 0)
		close(cycles);
	for (int i = 0; i < n; i++)
		close(fd[i]);
	hwc__clear_error();
	if (!limit)
		return;
	out->counters = n;
	out->counter_width = 32; /* as perf uses them: 64 only chained (config1 long) */
	out->fixed = cycles >= 0;
	out->fixed_width = cycles >= 0 ? 64 : 0; /* PMCCNTR_EL0 is 64 bits wide */
	snprintf(out->counters_source, sizeof(out->counters_source),
		 "probed: a group of %d INST_RETIRED opens, %d not", n, n + 1);
}

bool hwc__arch_tsc_rate(double *hz, enum hwc_tsc_source *src, bool *first)
{
	uint64_t f;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
	*first = true; /* the architecture defines the count's rate as this register */
	if (!f)
		return false; /* firmware left it unset */
	*hz = (double)f;
	*src = HWC_TSC_CNTFRQ;
	return true;
}

const char *hwc__arch_user_read_hint(void)
{
	long long v = -1;
	if (hwc__read_int_file("/proc/sys/kernel/perf_user_access", &v) != 0)
		return "; this kernel has no kernel.perf_user_access (Linux 5.17+ has)";
	return v != 1 ? "; kernel.perf_user_access is 0: `sysctl kernel.perf_user_access=1`" : "";
}

void hwc__arch_request_user_read(struct perf_event_attr *attr)
{
	/* The armv8 PMU gives EL0 its counter only for events that ask (config1
	 * bit 1, format/rdpmc) while kernel.perf_user_access is 1 (Linux 5.17+);
	 * asking otherwise is harmless but pointless. */
	long long v = 0;
	if (hwc__read_int_file("/proc/sys/kernel/perf_user_access", &v) != 0 || v != 1)
		return;
	uint32_t core_type;
	if (hwc__is_core_hw(attr) || (hwc__core_pmu(&core_type) && attr->type == core_type))
		attr->config1 |= 1ULL << 1;
}

/* ------------------------------------------------------------- others */

#else
void hwc__arch_cpu_identity(struct hwc_cpu_info *out)
{
	snprintf(out->vendor, sizeof(out->vendor), "unknown");
}

void hwc__arch_cpu_counters(struct hwc_cpu_info *out)
{
	(void)out;
}

bool hwc__arch_tsc_rate(double *hz, enum hwc_tsc_source *src, bool *first)
{
	(void)hz, (void)src, (void)first;
	return false;
}

const char *hwc__arch_user_read_hint(void)
{
	return "";
}

void hwc__arch_request_user_read(struct perf_event_attr *attr)
{
	(void)attr;
}
#endif
