/*
 * libpmc: FreeBSD's hardware performance counter library (pmc(3), hwpmc(4)),
 * as hwc implements it on Linux over perf_event_open(2).  The interface is
 * FreeBSD's: names, types, constants, -1 and errno.  pmc(3) lists where
 * Linux forces a difference (EDOOFUS, SIGIO's default action, classes, the
 * log format).
 */
#ifndef _PMC_H_
#define _PMC_H_

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FreeBSD's "programming error" errno has no Linux counterpart: a PMC that
 * must log was started with no log to write to, so "destination address
 * required". */
#ifndef EDOOFUS
#define EDOOFUS EDESTADDRREQ
#endif

#define PMC_MODULE_NAME "hwpmc"
#define PMC_NAME_MAX 64  /* a PMC row's name */
#define PMC_CLASS_MAX 8  /* classes a CPU may have */

/* Version of the interface and of the log, [MMmmpppp]. */
#define PMC_VERSION_MAJOR 0x09
#define PMC_VERSION_MINOR 0x03
#define PMC_VERSION_PATCH 0x0000
#define PMC_VERSION (PMC_VERSION_MAJOR << 24 | PMC_VERSION_MINOR << 16 | PMC_VERSION_PATCH)

/* CPUs: __PMC_CPU(symbol, value, description). */
#define __PMC_CPUS()                                                          \
	__PMC_CPU(AMD_K7, 0x00, "AMD K7")                                     \
	__PMC_CPU(AMD_K8, 0x01, "AMD K8")                                     \
	__PMC_CPU(INTEL_P5, 0x80, "Intel Pentium")                            \
	__PMC_CPU(INTEL_P6, 0x81, "Intel Pentium Pro")                        \
	__PMC_CPU(INTEL_CL, 0x82, "Intel Celeron")                            \
	__PMC_CPU(INTEL_PII, 0x83, "Intel Pentium II")                        \
	__PMC_CPU(INTEL_PIII, 0x84, "Intel Pentium III")                      \
	__PMC_CPU(INTEL_PM, 0x85, "Intel Pentium M")                          \
	__PMC_CPU(INTEL_PIV, 0x86, "Intel Pentium IV")                        \
	__PMC_CPU(INTEL_CORE, 0x87, "Intel Core Solo/Duo")                    \
	__PMC_CPU(INTEL_CORE2, 0x88, "Intel Core2")                           \
	__PMC_CPU(INTEL_CORE2EXTREME, 0x89, "Intel Core2 Extreme")            \
	__PMC_CPU(INTEL_ATOM, 0x8A, "Intel Atom")                             \
	__PMC_CPU(INTEL_COREI7, 0x8B, "Intel Core i7")                        \
	__PMC_CPU(INTEL_WESTMERE, 0x8C, "Intel Westmere")                     \
	__PMC_CPU(INTEL_SANDYBRIDGE, 0x8D, "Intel Sandy Bridge")              \
	__PMC_CPU(INTEL_IVYBRIDGE, 0x8E, "Intel Ivy Bridge")                  \
	__PMC_CPU(INTEL_SANDYBRIDGE_XEON, 0x8F, "Intel Sandy Bridge Xeon")    \
	__PMC_CPU(INTEL_IVYBRIDGE_XEON, 0x90, "Intel Ivy Bridge Xeon")        \
	__PMC_CPU(INTEL_HASWELL, 0x91, "Intel Haswell")                       \
	__PMC_CPU(INTEL_ATOM_SILVERMONT, 0x92, "Intel Atom Silvermont")       \
	__PMC_CPU(INTEL_NEHALEM_EX, 0x93, "Intel Nehalem Xeon 7500")          \
	__PMC_CPU(INTEL_WESTMERE_EX, 0x94, "Intel Westmere Xeon E7")          \
	__PMC_CPU(INTEL_HASWELL_XEON, 0x95, "Intel Haswell Xeon E5 v3")       \
	__PMC_CPU(INTEL_BROADWELL, 0x96, "Intel Broadwell")                   \
	__PMC_CPU(INTEL_BROADWELL_XEON, 0x97, "Intel Broadwell Xeon")         \
	__PMC_CPU(INTEL_SKYLAKE, 0x98, "Intel Skylake")                       \
	__PMC_CPU(INTEL_SKYLAKE_XEON, 0x99, "Intel Skylake Xeon")             \
	__PMC_CPU(INTEL_ATOM_GOLDMONT, 0x9A, "Intel Atom Goldmont")           \
	__PMC_CPU(INTEL_ICELAKE, 0x9B, "Intel Icelake")                       \
	__PMC_CPU(INTEL_ICELAKE_XEON, 0x9C, "Intel Icelake Xeon")             \
	__PMC_CPU(INTEL_ALDERLAKE, 0x9D, "Intel Alderlake")                   \
	__PMC_CPU(INTEL_ATOM_GOLDMONT_P, 0x9E, "Intel Atom Goldmont Plus")    \
	__PMC_CPU(INTEL_ATOM_TREMONT, 0x9F, "Intel Atom Tremont")             \
	__PMC_CPU(INTEL_EMERALD_RAPIDS, 0xA0, "Intel Emerald Rapids")         \
	__PMC_CPU(INTEL_ALDERLAKEN, 0xA1, "Intel AlderlakeN")                 \
	__PMC_CPU(INTEL_GRANITE_RAPIDS, 0xA2, "Intel Granite Rapids")         \
	__PMC_CPU(INTEL_METEOR_LAKE, 0xA3, "Intel Meteor Lake")               \
	__PMC_CPU(INTEL_SAPPHIRE_RAPIDS, 0xA4, "Intel Sapphire Rapids")       \
	__PMC_CPU(INTEL_XSCALE, 0x100, "Intel XScale")                        \
	__PMC_CPU(PPC_7450, 0x300, "PowerPC MPC7450")                         \
	__PMC_CPU(PPC_E500, 0x340, "PowerPC e500 Core")                       \
	__PMC_CPU(PPC_970, 0x380, "IBM PowerPC 970")                          \
	__PMC_CPU(PPC_POWER8, 0x390, "IBM POWER8")                            \
	__PMC_CPU(GENERIC, 0x400, "Generic")                                  \
	__PMC_CPU(ARMV7_CORTEX_A5, 0x500, "ARMv7 Cortex A5")                  \
	__PMC_CPU(ARMV7_CORTEX_A7, 0x501, "ARMv7 Cortex A7")                  \
	__PMC_CPU(ARMV7_CORTEX_A8, 0x502, "ARMv7 Cortex A8")                  \
	__PMC_CPU(ARMV7_CORTEX_A9, 0x503, "ARMv7 Cortex A9")                  \
	__PMC_CPU(ARMV7_CORTEX_A15, 0x504, "ARMv7 Cortex A15")                \
	__PMC_CPU(ARMV7_CORTEX_A17, 0x505, "ARMv7 Cortex A17")                \
	__PMC_CPU(ARMV8_CORTEX_A53, 0x600, "ARMv8 Cortex A53")                \
	__PMC_CPU(ARMV8_CORTEX_A57, 0x601, "ARMv8 Cortex A57")                \
	__PMC_CPU(ARMV8_CORTEX_A76, 0x602, "ARMv8 Cortex A76")

enum pmc_cputype {
#undef __PMC_CPU
#define __PMC_CPU(S, V, D) PMC_CPU_##S = V,
	__PMC_CPUS()
};
#define PMC_CPU_FIRST PMC_CPU_AMD_K7
#define PMC_CPU_LAST PMC_CPU_ARMV8_CORTEX_A76

/* Classes of PMCs: __PMC_CLASS(symbol, value, description). */
#define __PMC_CLASSES()                                                        \
	__PMC_CLASS(TSC, 0x00, "CPU Timestamp counter")                        \
	__PMC_CLASS(K7, 0x01, "AMD K7 performance counters")                   \
	__PMC_CLASS(K8, 0x02, "AMD K8 performance counters")                   \
	__PMC_CLASS(P5, 0x03, "Intel Pentium counters")                        \
	__PMC_CLASS(P6, 0x04, "Intel Pentium Pro counters")                    \
	__PMC_CLASS(P4, 0x05, "Intel Pentium-IV counters")                     \
	__PMC_CLASS(IAF, 0x06, "Intel Core2/Atom, fixed function")             \
	__PMC_CLASS(IAP, 0x07, "Intel Core...Atom, programmable")              \
	__PMC_CLASS(UCF, 0x08, "Intel Uncore fixed function")                  \
	__PMC_CLASS(UCP, 0x09, "Intel Uncore programmable")                    \
	__PMC_CLASS(XSCALE, 0x0A, "Intel XScale counters")                     \
	__PMC_CLASS(MIPS24K, 0x0B, "MIPS 24K")                                 \
	__PMC_CLASS(OCTEON, 0x0C, "Cavium Octeon")                             \
	__PMC_CLASS(PPC7450, 0x0D, "Motorola MPC7450 class")                   \
	__PMC_CLASS(PPC970, 0x0E, "IBM PowerPC 970 class")                     \
	__PMC_CLASS(SOFT, 0x0F, "Software events")                             \
	__PMC_CLASS(ARMV7, 0x10, "ARMv7")                                      \
	__PMC_CLASS(ARMV8, 0x11, "ARMv8")                                      \
	__PMC_CLASS(MIPS74K, 0x12, "MIPS 74K")                                 \
	__PMC_CLASS(E500, 0x13, "Freescale e500 class")                        \
	__PMC_CLASS(BERI, 0x14, "MIPS BERI")                                   \
	__PMC_CLASS(POWER8, 0x15, "IBM POWER8 class")

enum pmc_class {
#undef __PMC_CLASS
#define __PMC_CLASS(S, V, D) PMC_CLASS_##S = V,
	__PMC_CLASSES()
};
#define PMC_CLASS_FIRST PMC_CLASS_TSC
#define PMC_CLASS_LAST PMC_CLASS_POWER8

/* States: DISABLED and FREE describe hardware rows, the rest allocated PMCs. */
#define __PMC_HWSTATES() __PMC_STATE(DISABLED) __PMC_STATE(FREE)
#define __PMC_SWSTATES()                                                       \
	__PMC_STATE(ALLOCATED) __PMC_STATE(STOPPED) __PMC_STATE(RUNNING) __PMC_STATE(DELETED)
#define __PMC_STATES() __PMC_HWSTATES() __PMC_SWSTATES()

enum pmc_state {
#undef __PMC_STATE
#define __PMC_STATE(S) PMC_STATE_##S,
	__PMC_STATES()
	__PMC_STATE(MAX)
};
#define PMC_STATE_FIRST PMC_STATE_DISABLED
#define PMC_STATE_LAST PMC_STATE_DELETED

/* Modes: system or thread (process) scope, statistical sampling or counting. */
#define __PMC_MODES() __PMC_MODE(SS, 0) __PMC_MODE(SC, 1) __PMC_MODE(TS, 2) __PMC_MODE(TC, 3)

enum pmc_mode {
#undef __PMC_MODE
#define __PMC_MODE(M, N) PMC_MODE_##M = N,
	__PMC_MODES()
};
#define PMC_MODE_FIRST PMC_MODE_SS
#define PMC_MODE_LAST PMC_MODE_TC

#define PMC_IS_COUNTING_MODE(mode) ((mode) == PMC_MODE_SC || (mode) == PMC_MODE_TC)
#define PMC_IS_SYSTEM_MODE(mode) ((mode) == PMC_MODE_SS || (mode) == PMC_MODE_SC)
#define PMC_IS_SAMPLING_MODE(mode) ((mode) == PMC_MODE_SS || (mode) == PMC_MODE_TS)
#define PMC_IS_VIRTUAL_MODE(mode) ((mode) == PMC_MODE_TS || (mode) == PMC_MODE_TC)

/* Row dispositions (hwpmc(4)). */
#define __PMC_DISPOSITIONS(N)                                                  \
	__PMC_DISP(STANDALONE) __PMC_DISP(FREE) __PMC_DISP(THREAD) __PMC_DISP(UNKNOWN)

enum pmc_disp {
#undef __PMC_DISP
#define __PMC_DISP(D) PMC_DISP_##D,
	__PMC_DISPOSITIONS()
};
#define PMC_DISP_FIRST PMC_DISP_STANDALONE
#define PMC_DISP_LAST PMC_DISP_THREAD

/* Capabilities: __PMC_CAP(name, bit, description). */
#define __PMC_CAPS()                                                           \
	__PMC_CAP(INTERRUPT, 0, "generate interrupts")                         \
	__PMC_CAP(USER, 1, "count user-mode events")                           \
	__PMC_CAP(SYSTEM, 2, "count system-mode events")                       \
	__PMC_CAP(EDGE, 3, "do edge detection of events")                      \
	__PMC_CAP(THRESHOLD, 4, "ignore events below a threshold")             \
	__PMC_CAP(READ, 5, "read PMC counter")                                 \
	__PMC_CAP(WRITE, 6, "reprogram PMC counter")                           \
	__PMC_CAP(INVERT, 7, "invert comparison sense")                        \
	__PMC_CAP(QUALIFIER, 8, "further qualify monitored events")            \
	__PMC_CAP(PRECISE, 9, "perform precise sampling")                      \
	__PMC_CAP(TAGGING, 10, "tag upstream events")                          \
	__PMC_CAP(CASCADE, 11, "cascade counters")

enum pmc_caps {
#undef __PMC_CAP
#define __PMC_CAP(NAME, VALUE, DESCR) PMC_CAP_##NAME = (1 << VALUE),
	__PMC_CAPS()
};
#define PMC_CAP_FIRST PMC_CAP_INTERRUPT
#define PMC_CAP_LAST PMC_CAP_CASCADE

/* Event codes.  TSC has its one event; the software class and the events
 * of the CPU's own PMU are numbered as this process first names them
 * (pmc_name_of_event() gives the name back): use names across processes. */
#define PMC_EV_DYN_COUNT 0x1000
enum pmc_event {
	PMC_EV_TSC_TSC = 0x01000,
	PMC_EV_SOFT_FIRST = 0x20000,
	PMC_EV_SOFT_LAST = PMC_EV_SOFT_FIRST + PMC_EV_DYN_COUNT - 1,
	PMC_EV_LINUX_FIRST = 0x30000, /* Linux: native and generic hardware events */
	PMC_EV_LINUX_LAST = PMC_EV_LINUX_FIRST + PMC_EV_DYN_COUNT - 1,
};
#define PMC_EV_TSC_FIRST PMC_EV_TSC_TSC
#define PMC_EV_TSC_LAST PMC_EV_TSC_TSC
#define PMC_EVENT_FIRST PMC_EV_TSC_TSC
#define PMC_EVENT_LAST PMC_EV_LINUX_LAST

/* hwpmc's operations, for programs that name them. */
#define __PMC_OPS()                                                            \
	__PMC_OP(CONFIGURELOG, "Set log file")                                 \
	__PMC_OP(FLUSHLOG, "Flush log file")                                   \
	__PMC_OP(GETCPUINFO, "Get system CPU information")                     \
	__PMC_OP(GETDRIVERSTATS, "Get driver statistics")                      \
	__PMC_OP(GETMODULEVERSION, "Get module version")                       \
	__PMC_OP(GETPMCINFO, "Get per-cpu PMC information")                    \
	__PMC_OP(PMCADMIN, "Set PMC state")                                    \
	__PMC_OP(PMCALLOCATE, "Allocate and configure a PMC")                  \
	__PMC_OP(PMCATTACH, "Attach a PMC to a process")                       \
	__PMC_OP(PMCDETACH, "Detach a PMC from a process")                     \
	__PMC_OP(PMCGETMSR, "Get a PMC's hardware address")                    \
	__PMC_OP(PMCRELEASE, "Release a PMC")                                  \
	__PMC_OP(PMCRW, "Read/Set a PMC")                                      \
	__PMC_OP(PMCSETCOUNT, "Set initial count/sampling rate")               \
	__PMC_OP(PMCSTART, "Start a PMC")                                      \
	__PMC_OP(PMCSTOP, "Stop a PMC")                                        \
	__PMC_OP(WRITELOG, "Write a cookie to the log file")                   \
	__PMC_OP(CLOSELOG, "Close log file")                                   \
	__PMC_OP(GETDYNEVENTINFO, "Get dynamic events list")

enum pmc_ops {
#undef __PMC_OP
#define __PMC_OP(N, D) PMC_OP_##N,
	__PMC_OPS()
};

/* Flags of pmc_allocate() (and of hwpmc's operations). */
#define PMC_F_FORCE 0x00000001        /* PMCADMIN: force */
#define PMC_F_DESCENDANTS 0x00000002  /* track the target's current and future descendants */
#define PMC_F_LOG_PROCCSW 0x00000004  /* log the count at every context switch */
#define PMC_F_LOG_PROCEXIT 0x00000008 /* log each target's count at its exit */
#define PMC_F_NEWVALUE 0x00000010     /* PMCRW: write a new value */
#define PMC_F_OLDVALUE 0x00000020     /* PMCRW: return the old value */
#define PMC_F_KGMON 0x00000040        /* kgmon(8) profiling: unimplemented */
#define PMC_F_CALLCHAIN 0x00000080    /* capture call chains with samples */
#define PMC_F_USERCALLCHAIN 0x00000100 /* call chains into user space */
/* Set by the library, shown by pmc_pmcinfo(). */
#define PMC_F_ATTACHED_TO_OWNER 0x00010000
#define PMC_F_NEEDS_LOGFILE 0x00020000
#define PMC_F_ATTACH_DONE 0x00040000

#define PMC_CALLCHAIN_DEPTH_MAX 512
#define PMC_CC_F_USERSPACE 0x01 /* a user-space call chain */

typedef uint32_t pmc_id_t;
typedef uint64_t pmc_value_t;

#define PMC_ID_INVALID (~(pmc_id_t)0)

/* A PMC id: CPU (12 bits), mode (8), class (4), row index (8). */
#define PMC_ID_TO_ROWINDEX(ID) ((ID) & 0xFF)
#define PMC_ID_TO_CLASS(ID) (((ID) & 0xF00) >> 8)
#define PMC_ID_TO_MODE(ID) (((ID) & 0xFF000) >> 12)
#define PMC_ID_TO_CPU(ID) (((ID) & 0xFFF00000) >> 20)
#define PMC_ID_MAKE_ID(CPU, MODE, CLASS, ROWINDEX)                                      \
	((((uint32_t)(CPU) & 0xFFF) << 20) | (((uint32_t)(MODE) & 0xFF) << 12) |          \
	 (((uint32_t)(CLASS) & 0xF) << 8) | ((uint32_t)(ROWINDEX) & 0xFF))

#define PMC_CPU_ANY ~0

/* The state of one PMC row of a CPU (pmc_pmcinfo()). */
struct pmc_info {
	char pm_name[PMC_NAME_MAX]; /* row name, e.g. "SOFT-3" */
	enum pmc_class pm_class;
	int pm_enabled;             /* not administratively disabled */
	enum pmc_disp pm_rowdisp;   /* FREE, THREAD or STANDALONE */
	pid_t pm_ownerpid;          /* owner, or -1 */
	enum pmc_mode pm_mode;
	enum pmc_event pm_event;
	uint32_t pm_flags;
	pmc_value_t pm_reloadcount; /* sampling PMCs */
};

struct pmc_classinfo {
	enum pmc_class pm_class;
	uint32_t pm_caps;  /* PMC_CAP_* */
	uint32_t pm_width; /* bits */
	uint32_t pm_num;   /* rows of the class */
};

/* Statistics (pmc_get_driver_stats()). */
struct pmc_driverstats {
	unsigned int pm_intr_ignored;           /* samples the kernel throttled away */
	unsigned int pm_intr_processed;         /* samples taken */
	unsigned int pm_intr_bufferfull;        /* samples lost to full buffers */
	unsigned int pm_syscalls;               /* library operations */
	unsigned int pm_syscall_errors;         /* ... that failed */
	unsigned int pm_buffer_requests;        /* records written to the log */
	unsigned int pm_buffer_requests_failed; /* records the log could not take */
	unsigned int pm_log_sweeps;             /* passes of the log writer */
};

struct pmc_cpuinfo {
	enum pmc_cputype pm_cputype;
	uint32_t pm_ncpu;   /* CPUs, numbered 0 to pm_ncpu - 1 */
	uint32_t pm_npmc;   /* PMC rows per CPU */
	uint32_t pm_nclass;
	struct pmc_classinfo pm_classes[PMC_CLASS_MAX];
};

struct pmc_pmcinfo {
	int32_t pm_cpu;
	struct pmc_info pm_pmcs[]; /* pmc_npmc() rows */
};

int pmc_allocate(const char *_ctrspec, enum pmc_mode _mode, uint32_t _flags, int _cpu,
		 pmc_id_t *_pmcid, uint64_t _count);
int pmc_attach(pmc_id_t _pmcid, pid_t _pid);
int pmc_capabilities(pmc_id_t _pmc, uint32_t *_caps);
int pmc_configure_logfile(int _fd);
int pmc_flush_logfile(void);
int pmc_close_logfile(void);
int pmc_detach(pmc_id_t _pmcid, pid_t _pid);
int pmc_disable(int _cpu, int _pmc);
int pmc_enable(int _cpu, int _pmc);
int pmc_get_driver_stats(struct pmc_driverstats *_gms);
int pmc_get_msr(pmc_id_t _pmc, uint32_t *_msr);
int pmc_init(void);
int pmc_read(pmc_id_t _pmc, pmc_value_t *_value);
int pmc_release(pmc_id_t _pmc);
int pmc_rw(pmc_id_t _pmc, pmc_value_t _newvalue, pmc_value_t *_oldvalue);
int pmc_set(pmc_id_t _pmc, pmc_value_t _value);
int pmc_start(pmc_id_t _pmc);
int pmc_stop(pmc_id_t _pmc);
int pmc_width(pmc_id_t _pmc, uint32_t *_width);
int pmc_write(pmc_id_t _pmc, pmc_value_t _value);
int pmc_writelog(uint32_t _udata);

int pmc_ncpu(void);
int pmc_npmc(int _cpu);
int pmc_cpuinfo(const struct pmc_cpuinfo **_cpu_info);
int pmc_pmcinfo(int _cpu, struct pmc_pmcinfo **_pmc_info);

const char *pmc_name_of_capability(enum pmc_caps _c);
const char *pmc_name_of_class(enum pmc_class _pc);
const char *pmc_name_of_cputype(enum pmc_cputype _cp);
const char *pmc_name_of_disposition(enum pmc_disp _pd);
const char *pmc_name_of_event(enum pmc_event _pe);
const char *pmc_name_of_mode(enum pmc_mode _pm);
const char *pmc_name_of_state(enum pmc_state _ps);

int pmc_event_names_of_class(enum pmc_class _cl, const char ***_eventnames, int *_nevents);

/* FreeBSD 12+'s table-driven events (pmc(3), "EVENT TABLES"): the table is
 * the event list of this machine, an event's index its place in it. */
union pmc_md_op_pmcallocate {
	struct {
		uint32_t pm_type;   /* perf_event_attr's type, config, config1, config2 */
		uint32_t pm_unused;
		uint64_t pm_config, pm_config1, pm_config2;
	} pm_linux;
	uint64_t __pad[4];
};

struct pmc_op_pmcallocate {
	uint32_t pm_caps;         /* PMC_CAP_* */
	uint32_t pm_cpu;          /* CPU number or PMC_CPU_ANY */
	enum pmc_class pm_class;  /* class of PMC desired */
	enum pmc_event pm_ev;     /* pmc_pmu_pmcallocate(): the event's index */
	uint32_t pm_flags;        /* PMC_F_* */
	enum pmc_mode pm_mode;
	pmc_id_t pm_pmcid;
	pmc_value_t pm_count;     /* initial or sampling count */
	union pmc_md_op_pmcallocate pm_md; /* the machine's encoding */
};

int pmc_pmu_enabled(void);
void pmc_pmu_print_counters(const char *_event_name);
void pmc_pmu_print_counter_desc(const char *_event_name);
void pmc_pmu_print_counter_desc_long(const char *_event_name);
void pmc_pmu_print_counter_full(const char *_event_name);
uint64_t pmc_pmu_sample_rate_get(const char *_event_name);
int pmc_pmu_pmcallocate(const char *_event_name, struct pmc_op_pmcallocate *_pm);
const char *pmc_pmu_event_get_by_idx(const char *_cpuid, int _idx);
int pmc_pmu_idx_get_by_event(const char *_cpuid, const char *_event);
int pmc_pmu_stat_mode(const char ***_counters);

/* Linux: what the calling thread's last failing libpmc call found, with the
 * hint needed to fix it ("" when nothing failed yet). */
const char *pmc_errdetail(void);

#ifdef __cplusplus
}
#endif
#endif
