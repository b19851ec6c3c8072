/* What libpmc says about the machine: the CPU type, its classes and rows
 * (pmc_cpuinfo(), pmc_pmcinfo()), and the rows' administrative state
 * (pmc_enable(), pmc_disable()).  Linux lends every counter to whoever
 * asks and multiplexes them, so a row is FREE unless this process, the NMI
 * watchdog or an administrator holds it. */
#include "pmc_impl.h"

#include <hwc/output.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pmc__machine pmc__m;

#define SOFT_ROWS 16 /* as FreeBSD's software class */
#define ADMIN_FILE "/run/hwc/pmc-disabled"

static enum pmc_cputype intel_type(const char *model)
{
	static const struct {
		const char *model;
		enum pmc_cputype type;
	} map[] = {
		{"core", PMC_CPU_INTEL_CORE2},	   {"atom", PMC_CPU_INTEL_ATOM},
		{"nhm", PMC_CPU_INTEL_COREI7},	   {"nhm_ex", PMC_CPU_INTEL_NEHALEM_EX},
		{"wsm", PMC_CPU_INTEL_WESTMERE},   {"wsm_dp", PMC_CPU_INTEL_WESTMERE},
		{"snb", PMC_CPU_INTEL_SANDYBRIDGE}, {"snb_ep", PMC_CPU_INTEL_SANDYBRIDGE_XEON},
		{"ivb", PMC_CPU_INTEL_IVYBRIDGE},  {"ivb_ep", PMC_CPU_INTEL_IVYBRIDGE_XEON},
		{"hsw", PMC_CPU_INTEL_HASWELL},	   {"hsw_ep", PMC_CPU_INTEL_HASWELL_XEON},
		{"bdw", PMC_CPU_INTEL_BROADWELL},  {"bdw_ep", PMC_CPU_INTEL_BROADWELL_XEON},
		{"skl", PMC_CPU_INTEL_SKYLAKE},	   {"skx", PMC_CPU_INTEL_SKYLAKE_XEON},
		{"clx", PMC_CPU_INTEL_SKYLAKE_XEON}, {"icl", PMC_CPU_INTEL_ICELAKE},
		{"icx", PMC_CPU_INTEL_ICELAKE_XEON}, {"spr", PMC_CPU_INTEL_SAPPHIRE_RAPIDS},
		{"emr", PMC_CPU_INTEL_EMERALD_RAPIDS}, {"gnr", PMC_CPU_INTEL_GRANITE_RAPIDS},
		{"adl_glc", PMC_CPU_INTEL_ALDERLAKE}, {"adl_grt", PMC_CPU_INTEL_ALDERLAKE},
		{"slm", PMC_CPU_INTEL_ATOM_SILVERMONT}, {"glm", PMC_CPU_INTEL_ATOM_GOLDMONT},
		{"tmt", PMC_CPU_INTEL_ATOM_TREMONT},
	};
	for (size_t i = 0; i < PMC_ARRAY_SIZE(map); i++)
		if (strcmp(map[i].model, model) == 0)
			return map[i].type;
	return PMC_CPU_GENERIC;
}

static void add_class(enum pmc_class cls, uint32_t caps, uint32_t width, uint32_t num)
{
	if (num == 0 || pmc__m.nclass == PMC_CLASS_MAX)
		return;
	int first = (int)pmc__m.info.pm_npmc;
	pmc__m.classes[pmc__m.nclass++] = (struct pmc__class){cls, caps, width, num, first};
	struct pmc_classinfo *ci = &pmc__m.info.pm_classes[pmc__m.info.pm_nclass++];
	*ci = (struct pmc_classinfo){cls, caps, width, num};
	pmc__m.info.pm_npmc += num;
}

int pmc__machine_init(void)
{
	struct hwc_cpu_info ci;
	int err = hwc_cpu_info(&ci);
	if (err)
		return pmc__fail_hwc(err, "cannot describe this CPU");
	memset(&pmc__m, 0, sizeof(pmc__m));
	pmc__m.watchdog_row = -1;
	pmc__m.ncpu = ci.cpus_configured > 0 ? ci.cpus_configured : ci.cpus_online;
	pmc__m.core_pmu = ci.core_pmu;
	snprintf(pmc__m.core_pmu_name, sizeof(pmc__m.core_pmu_name), "%s", ci.core_pmu_name);
	snprintf(pmc__m.model, sizeof(pmc__m.model), "%s", ci.pfm_model);
	bool intel = ci.vendor_id == HWC_VENDOR_INTEL;
	bool amd = ci.vendor_id == HWC_VENDOR_AMD;
#if defined(__aarch64__)
	pmc__m.core = PMC_CLASS_ARMV8;
#else
	pmc__m.core = amd ? PMC_CLASS_K8 : PMC_CLASS_IAP;
#endif
	enum pmc_cputype type = PMC_CPU_GENERIC;
	if (ci.core_pmu)
		type = intel ? intel_type(ci.pfm_model) : amd ? PMC_CPU_AMD_K8 : PMC_CPU_GENERIC;
	pmc__m.info.pm_cputype = type;
	pmc__m.info.pm_ncpu = (uint32_t)pmc__m.ncpu;
	if (hwc_event_probe("msr/tsc/", NULL) == 0)
		add_class(PMC_CLASS_TSC, PMC_CAP_READ, 64, 1);
	if (ci.core_pmu) {
		uint32_t caps = PMC_CAP_INTERRUPT | PMC_CAP_USER | PMC_CAP_SYSTEM | PMC_CAP_EDGE |
				PMC_CAP_THRESHOLD | PMC_CAP_READ | PMC_CAP_WRITE | PMC_CAP_INVERT |
				PMC_CAP_QUALIFIER | PMC_CAP_PRECISE;
		add_class(pmc__m.core, caps, (uint32_t)ci.counter_width, (uint32_t)ci.counters);
		if (intel)
			add_class(PMC_CLASS_IAF,
				  PMC_CAP_INTERRUPT | PMC_CAP_USER | PMC_CAP_SYSTEM | PMC_CAP_READ |
					  PMC_CAP_WRITE,
				  (uint32_t)ci.fixed_width, (uint32_t)ci.fixed);
		/* The watchdog counts cycles: on Intel the fixed cycles counter,
		 * elsewhere a general one. */
		if (ci.watchdog_counter) {
			const struct pmc__class *c =
				pmc__class_of(intel && ci.fixed > 1 ? PMC_CLASS_IAF : pmc__m.core);
			if (c)
				pmc__m.watchdog_row = c->first_row + (c->cls == PMC_CLASS_IAF);
		}
	}
	add_class(PMC_CLASS_SOFT,
		  PMC_CAP_INTERRUPT | PMC_CAP_READ | PMC_CAP_SYSTEM | PMC_CAP_USER | PMC_CAP_WRITE,
		  64, SOFT_ROWS);
	return 0;
}

const struct pmc__class *pmc__class_of(enum pmc_class cls)
{
	for (int i = 0; i < pmc__m.nclass; i++)
		if (pmc__m.classes[i].cls == cls)
			return &pmc__m.classes[i];
	return NULL;
}

bool pmc__cpu_online(int cpu)
{
	if (cpu == 0)
		return true; /* the boot CPU cannot go offline */
	char path[64], buf[8] = "";
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	FILE *f = fopen(path, "r");
	if (!f)
		return access("/sys/devices/system/cpu", F_OK) != 0; /* no sysfs: assume so */
	bool on = fgets(buf, sizeof(buf), f) && buf[0] == '1';
	fclose(f);
	return on;
}

/* ------------------------------------------------------------ admin state */

static const char *admin_file(void)
{
	const char *f = getenv("HWPMC_ADMIN_FILE");
	return f && *f ? f : ADMIN_FILE;
}

/* The disabled rows, as a bitmap [cpu * npmc + row]. */
static unsigned char *read_admin(void)
{
	size_t n = (size_t)pmc__m.ncpu * pmc__m.info.pm_npmc;
	unsigned char *map = calloc(n ? n : 1, 1);
	if (!map)
		return NULL;
	FILE *f = fopen(admin_file(), "r");
	if (!f)
		return map;
	char line[128];
	int cpu, row;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%d %d", &cpu, &row) == 2 && cpu >= 0 && cpu < pmc__m.ncpu &&
		    row >= 0 && row < (int)pmc__m.info.pm_npmc)
			map[(size_t)cpu * pmc__m.info.pm_npmc + (size_t)row] = 1;
	fclose(f);
	return map;
}

bool pmc__row_disabled(int cpu, int row)
{
	unsigned char *map = read_admin();
	bool off = map && map[(size_t)cpu * pmc__m.info.pm_npmc + (size_t)row];
	free(map);
	return off;
}

static int write_admin(const unsigned char *map)
{
	char dir[PATH_MAX];
	const char *path = admin_file();
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755); /* /run/hwc on first use; an error shows at the open */
	}
	/* A new file renamed over the old one: readers never see half of it,
	 * and no link at its name is followed. */
	hwc_output *o;
	FILE *f = NULL;
	int err = hwc_output_create(&o, path, 0);
	if (!err && !(f = hwc_output_stream(o))) {
		err = -errno;
		hwc_output_discard(o);
	}
	if (err)
		return pmc__fail(-err, "%s", hwc_errdetail());
	fprintf(f, "# libpmc: rows disabled by pmc_disable() (pmccontrol -d): cpu row\n");
	for (int c = 0; c < pmc__m.ncpu; c++)
		for (uint32_t r = 0; r < pmc__m.info.pm_npmc; r++)
			if (map[(size_t)c * pmc__m.info.pm_npmc + r])
				fprintf(f, "%d %u\n", c, r);
	if ((err = hwc_output_commit(o)) != 0)
		return pmc__fail(-err, "%s", hwc_errdetail());
	return 0;
}

/* The class of row ROW. */
static const struct pmc__class *class_of_row(int row)
{
	for (int i = 0; i < pmc__m.nclass; i++) {
		const struct pmc__class *c = &pmc__m.classes[i];
		if (row >= c->first_row && row < c->first_row + (int)c->num)
			return c;
	}
	return NULL;
}

/* Does one of this process's PMCs use a row of class CLS on CPU? */
static bool class_in_use(enum pmc_class cls, int cpu)
{
	for (size_t i = 0; i < PMC__MAX; i++) {
		const struct pmc__pmc *p = &pmc__pmcs[i];
		if (p->used && p->ev.cls == cls && (PMC_IS_VIRTUAL_MODE(p->mode) || p->cpu == cpu))
			return true;
	}
	return false;
}

static int admin(int cpu, int row, bool disable)
{
	pmc__call();
	if (!pmc__initialized)
		return pmc__fail(ENXIO, "pmc_init() has not succeeded");
	struct hwc_permissions perm;
	if (hwc_permissions(&perm) == 0 && !perm.privileged)
		return pmc__fail(EPERM, "enabling and disabling PMCs needs CAP_PERFMON or "
					"CAP_SYS_ADMIN (run as root)");
	if (cpu < 0 || cpu >= pmc__m.ncpu)
		return pmc__fail(EINVAL, "no CPU %d: CPUs are 0 to %d", cpu, pmc__m.ncpu - 1);
	if (!pmc__cpu_online(cpu))
		return pmc__fail(ENXIO, "CPU %d is offline", cpu);
	if (row < 0 || row >= (int)pmc__m.info.pm_npmc)
		return pmc__fail(EINVAL, "no PMC %d: rows are 0 to %u", row, pmc__m.info.pm_npmc - 1);
	pthread_mutex_lock(&pmc__lock);
	int rc = 0;
	if (disable && class_in_use(class_of_row(row)->cls, cpu)) {
		rc = pmc__fail(EBUSY, "PMC %d of CPU %d is in use by this process", row, cpu);
	} else {
		unsigned char *map = read_admin();
		if (!map) {
			rc = pmc__fail(ENOMEM, "out of memory");
		} else {
			map[(size_t)cpu * pmc__m.info.pm_npmc + (size_t)row] = disable;
			rc = write_admin(map);
			free(map);
		}
	}
	pthread_mutex_unlock(&pmc__lock);
	return rc;
}

PMC_EXPORT int pmc_disable(int cpu, int pmc)
{
	return admin(cpu, pmc, true);
}

PMC_EXPORT int pmc_enable(int cpu, int pmc)
{
	return admin(cpu, pmc, false);
}

/* ------------------------------------------------------------ queries */

PMC_EXPORT int pmc_cpuinfo(const struct pmc_cpuinfo **cpu_info)
{
	pmc__call();
	if (!cpu_info)
		return pmc__fail(EFAULT, "cpu_info is NULL");
	if (!pmc__initialized)
		return pmc__fail(ENXIO, "pmc_init() has not succeeded");
	*cpu_info = &pmc__m.info;
	return 0;
}

PMC_EXPORT int pmc_ncpu(void)
{
	pmc__call();
	if (!pmc__initialized)
		return pmc__fail(ENXIO, "pmc_init() has not succeeded");
	return (int)pmc__m.info.pm_ncpu;
}

PMC_EXPORT int pmc_npmc(int cpu)
{
	pmc__call();
	if (!pmc__initialized)
		return pmc__fail(ENXIO, "pmc_init() has not succeeded");
	if (cpu < 0 || cpu >= pmc__m.ncpu)
		return pmc__fail(EINVAL, "no CPU %d: CPUs are 0 to %d", cpu, pmc__m.ncpu - 1);
	return (int)pmc__m.info.pm_npmc;
}

PMC_EXPORT int pmc_pmcinfo(int cpu, struct pmc_pmcinfo **pmc_info)
{
	pmc__call();
	if (!pmc_info)
		return pmc__fail(EFAULT, "pmc_info is NULL");
	if (!pmc__initialized)
		return pmc__fail(ENXIO, "pmc_init() has not succeeded");
	if (cpu < 0 || cpu >= pmc__m.ncpu)
		return pmc__fail(EINVAL, "no CPU %d: CPUs are 0 to %d", cpu, pmc__m.ncpu - 1);
	if (!pmc__cpu_online(cpu))
		return pmc__fail(ENXIO, "CPU %d is offline", cpu);
	uint32_t n = pmc__m.info.pm_npmc;
	struct pmc_pmcinfo *pi = calloc(1, sizeof(*pi) + n * sizeof(pi->pm_pmcs[0]));
	unsigned char *off = read_admin();
	if (!pi || !off) {
		free(pi);
		free(off);
		return pmc__fail(ENOMEM, "out of memory");
	}
	pi->pm_cpu = cpu;
	for (int c = 0; c < pmc__m.nclass; c++) {
		const struct pmc__class *cl = &pmc__m.classes[c];
		for (uint32_t k = 0; k < cl->num; k++) {
			int row = cl->first_row + (int)k;
			struct pmc_info *r = &pi->pm_pmcs[row];
			snprintf(r->pm_name, sizeof(r->pm_name), "%s-%u", pmc_name_of_class(cl->cls), k);
			r->pm_class = cl->cls;
			r->pm_enabled = !off[(size_t)cpu * n + (size_t)row];
			r->pm_rowdisp = r->pm_enabled && row != pmc__m.watchdog_row ? PMC_DISP_FREE
										     : PMC_DISP_STANDALONE;
			r->pm_ownerpid = -1;
		}
	}
	/* This process's PMCs take the free rows of their class, in turn. */
	pthread_mutex_lock(&pmc__lock);
	for (size_t i = 0; i < PMC__MAX; i++) {
		const struct pmc__pmc *p = &pmc__pmcs[i];
		const struct pmc__class *cl = p->used ? pmc__class_of(p->ev.cls) : NULL;
		if (!cl || (PMC_IS_SYSTEM_MODE(p->mode) && p->cpu != cpu))
			continue;
		for (uint32_t k = 0; k < cl->num; k++) {
			struct pmc_info *r = &pi->pm_pmcs[cl->first_row + (int)k];
			if (r->pm_rowdisp != PMC_DISP_FREE)
				continue;
			r->pm_rowdisp = PMC_IS_VIRTUAL_MODE(p->mode) ? PMC_DISP_THREAD : PMC_DISP_STANDALONE;
			r->pm_ownerpid = getpid();
			r->pm_mode = p->mode;
			r->pm_event = p->ev.code;
			r->pm_flags = p->flags;
			r->pm_reloadcount = PMC_IS_SAMPLING_MODE(p->mode) ? p->count : 0;
			break;
		}
	}
	pthread_mutex_unlock(&pmc__lock);
	free(off);
	*pmc_info = pi;
	return 0;
}
