/*
 * pmclog(3): reading the log hwpmc(4) writes.  On Linux the log is the
 * perf.data file that pmc_configure_logfile() writes (hwc-data(5)), and
 * pmclog_read() returns FreeBSD's records for what the file holds.
 */
#ifndef _PMCLOG_H_
#define _PMCLOG_H_

#include <limits.h>
#include <pmc.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef _UINTFPTR_T_DECLARED
#define _UINTFPTR_T_DECLARED
typedef uintptr_t uintfptr_t; /* an instruction address */
#endif

#ifndef MAXCOMLEN
#define MAXCOMLEN 19
#endif

enum pmclog_type {
	PMCLOG_TYPE_CLOSELOG = 1,
	PMCLOG_TYPE_DROPNOTIFY = 2,
	PMCLOG_TYPE_INITIALIZE = 3,
	PMCLOG_TYPE_PCSAMPLE = 4, /* a sample without a call chain */
	PMCLOG_TYPE_PMCALLOCATE = 5,
	PMCLOG_TYPE_PMCATTACH = 6,
	PMCLOG_TYPE_PMCDETACH = 7,
	PMCLOG_TYPE_PROCCSW = 8,
	PMCLOG_TYPE_PROCEXEC = 9,
	PMCLOG_TYPE_PROCEXIT = 10,
	PMCLOG_TYPE_PROCFORK = 11,
	PMCLOG_TYPE_SYSEXIT = 12,
	PMCLOG_TYPE_USERDATA = 13,
	PMCLOG_TYPE_MAP_IN = 14,
	PMCLOG_TYPE_MAP_OUT = 15,
	PMCLOG_TYPE_CALLCHAIN = 16,
	PMCLOG_TYPE_PMCALLOCATEDYN = 17,
	PMCLOG_TYPE_THR_CREATE = 18,
	PMCLOG_TYPE_THR_EXIT = 19,
	PMCLOG_TYPE_PROC_CREATE = 20,
};
/* So that programs can test for it as for FreeBSD's older headers. */
#define PMCLOG_TYPE_PCSAMPLE PMCLOG_TYPE_PCSAMPLE

#define PMC_CALLCHAIN_CPUFLAGS_TO_CPU(CF) (((CF) >> 16) & 0xFFFF)
#define PMC_CALLCHAIN_CPUFLAGS_TO_USERMODE(CF) ((CF) & PMC_CC_F_USERSPACE)
#define PMC_CALLCHAIN_TO_CPUFLAGS(CPU, FLAGS) (((CPU) << 16) | ((FLAGS) & 0xFFFF))

enum pmclog_state {
	PMCLOG_OK,
	PMCLOG_EOF,
	PMCLOG_REQUIRE_DATA,
	PMCLOG_ERROR,
};

struct pmclog_ev_callchain {
	uint32_t pl_pid;
	uint32_t pl_tid;
	uint32_t pl_pmcid;
	uint32_t pl_cpuflags; /* PMC_CALLCHAIN_TO_CPUFLAGS(cpu, PMC_CC_F_USERSPACE or 0) */
	uint32_t pl_cpuflags2;
	uint32_t pl_npc;
	uintfptr_t pl_pc[PMC_CALLCHAIN_DEPTH_MAX]; /* the sampled pc first */
};

struct pmclog_ev_dropnotify {
	int pl_unused;
};

struct pmclog_ev_closelog {
	int pl_unused;
};

struct pmclog_ev_initialize {
	uint32_t pl_version; /* PMC_VERSION of the writer */
	uint32_t pl_arch;    /* enum pmc_cputype */
	uint64_t pl_tsc_freq;
	struct timespec pl_ts; /* when the log was started */
	char pl_cpuid[PATH_MAX];
};

struct pmclog_ev_map_in {
	pid_t pl_pid;
	uintfptr_t pl_start;
	char pl_pathname[PATH_MAX];
};

struct pmclog_ev_map_out {
	pid_t pl_pid;
	uintfptr_t pl_start;
	uintfptr_t pl_end;
};

struct pmclog_ev_pcsample {
	uintfptr_t pl_pc;
	pid_t pl_pid;
	pid_t pl_tid;
	pmc_id_t pl_pmcid;
	uint32_t pl_flags;
	uint32_t pl_usermode;
};

struct pmclog_ev_pmcallocate {
	const char *pl_evname;
	uint64_t pl_rate;
	uint32_t pl_event;
	uint32_t pl_flags;
	pmc_id_t pl_pmcid;
};

struct pmclog_ev_pmcallocatedyn {
	char pl_evname[PMC_NAME_MAX];
	uint32_t pl_event;
	uint32_t pl_flags;
	pmc_id_t pl_pmcid;
};

struct pmclog_ev_pmcattach {
	pmc_id_t pl_pmcid;
	pid_t pl_pid;
	char pl_pathname[PATH_MAX];
};

struct pmclog_ev_pmcdetach {
	pmc_id_t pl_pmcid;
	pid_t pl_pid;
};

struct pmclog_ev_proccsw {
	pid_t pl_pid;
	pid_t pl_tid;
	pmc_id_t pl_pmcid;
	pmc_value_t pl_value;
};

struct pmclog_ev_proccreate {
	pid_t pl_pid;
	uint32_t pl_flags;
	char pl_pcomm[MAXCOMLEN + 1];
};

/* FreeBSD 14's: the load bias of the program interpreter (pl_dynaddr
 * without one) and of the executable (0 for ET_EXEC). */
struct pmclog_ev_procexec {
	pid_t pl_pid;
	pmc_id_t pl_pmcid;
	uintfptr_t pl_baseaddr;
	uintfptr_t pl_dynaddr;
	char pl_pathname[PATH_MAX];
};

struct pmclog_ev_procexit {
	uint32_t pl_pid;
	pmc_id_t pl_pmcid;
	pmc_value_t pl_value;
};

struct pmclog_ev_procfork {
	pid_t pl_oldpid;
	pid_t pl_newpid;
};

struct pmclog_ev_sysexit {
	pid_t pl_pid;
};

struct pmclog_ev_threadcreate {
	pid_t pl_tid;
	pid_t pl_pid;
	uint32_t pl_flags;
	char pl_tdname[MAXCOMLEN + 1];
};

struct pmclog_ev_threadexit {
	pid_t pl_tid;
};

struct pmclog_ev_userdata {
	uint32_t pl_userdata;
};

struct pmclog_ev {
	enum pmclog_state pl_state; /* after pmclog_read() */
	off_t pl_offset;            /* file offset of the record it came from */
	size_t pl_count;            /* records returned so far */
	struct timespec pl_ts;      /* when it happened (CLOCK_REALTIME) */
	enum pmclog_type pl_type;
	void *pl_data;              /* the perf record it came from, NULL when made up */
	int pl_len;                 /* its size in bytes */
	union {
		struct pmclog_ev_callchain pl_cc;
		struct pmclog_ev_closelog pl_cl;
		struct pmclog_ev_dropnotify pl_dn;
		struct pmclog_ev_initialize pl_i;
		struct pmclog_ev_map_in pl_mi;
		struct pmclog_ev_map_out pl_mo;
		struct pmclog_ev_pcsample pl_s;
		struct pmclog_ev_pmcallocate pl_a;
		struct pmclog_ev_pmcallocatedyn pl_ad;
		struct pmclog_ev_pmcattach pl_t;
		struct pmclog_ev_pmcdetach pl_d;
		struct pmclog_ev_proccsw pl_c;
		struct pmclog_ev_proccreate pl_pc;
		struct pmclog_ev_procexec pl_x;
		struct pmclog_ev_procexit pl_e;
		struct pmclog_ev_procfork pl_f;
		struct pmclog_ev_sysexit pl_se;
		struct pmclog_ev_threadcreate pl_tc;
		struct pmclog_ev_threadexit pl_te;
		struct pmclog_ev_userdata pl_u;
	} pl_u;
};

#define PMCLOG_FD_NONE (-1)

void *pmclog_open(int _fd);
int pmclog_feed(void *_cookie, char *_data, int _len);
int pmclog_read(void *_cookie, struct pmclog_ev *_ev);
void pmclog_close(void *_cookie);

#ifdef __cplusplus
}
#endif
#endif
