/* libpmc internals shared between its files; never installed. */
#ifndef PMC_IMPL_H
#define PMC_IMPL_H

#include "pmc.h"
#include "pmclog.h"

#include <hwc/hwc.h>
#include <hwc/sample.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PMC_EXPORT __attribute__((visibility("default")))
#define PMC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Room for element N of the array *ARRAY (a pointer to the array's
 * pointer) of elements of SIZE, holding *CAP: doubled when full, FIRST
 * to begin with.  False without memory, the array as it was. */
static inline bool pmc__room(void *array, size_t n, size_t *cap, size_t size, size_t first)
{
	if (n < *cap)
		return true;
	void *a;
	memcpy(&a, array, sizeof(a));
	size_t c = *cap ? *cap * 2 : first;
	a = realloc(a, c * size);
	if (!a)
		return false;
	memcpy(array, &a, sizeof(a));
	*cap = c;
	return true;
}

/* The hwpmc(4) tunables, read from the environment by pmc_init(). */
struct pmc_tunables {
	int callchaindepth; /* HWPMC_CALLCHAINDEPTH: frames per sample, 8 */
	int logbuffersize;  /* HWPMC_LOGBUFFERSIZE: KiB per log buffer, 4 */
	int nbuffers;       /* HWPMC_NBUFFERS: log buffers per CPU, 64 */
	int nsamples;       /* HWPMC_NSAMPLES: samples a CPU's buffer holds, 512 */
	int mincount;       /* HWPMC_MINCOUNT: smallest sampling rate, 1000 */
};
extern struct pmc_tunables pmc__tun;

/* ------------------------------------------------------------ errors.c */

/* Set errno to ERR, the thread's detail text, count a failed call; -1. */
int pmc__fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, for ERR (a -errno) from libhwc: its detail is kept. */
int pmc__fail_hwc(int err, const char *what);
/* A call begins: counted, and the detail cleared. */
void pmc__call(void);

/* The library's one lock: PMCs, the log and its writer. */
extern pthread_mutex_t pmc__lock;

/* ------------------------------------------------------------ events.c */

/* An event specification resolved. */
struct pmc__event {
	char name[PMC_NAME_MAX]; /* the specification's event name, as written */
	char spec[512];          /* what libhwc resolves */
	hwc_evlist *list;        /* one event, or a sum of events (PAGE_FAULT.READ) */
	enum pmc_class cls;
	enum pmc_event code;
	uint64_t divisor;        /* libhwc counts per count: 1, or ns per clock tick */
	bool can_sample;
};

/* Resolve a pmc_allocate() specification; -1 with errno (EINVAL unknown or
 * malformed, ENXIO absent hardware) and the detail set. */
int pmc__resolve(const char *ctrspec, struct pmc__event *out);
void pmc__event_free(struct pmc__event *ev);

/* ------------------------------------------------------------ machine.c */

struct pmc__class {
	enum pmc_class cls;
	uint32_t caps, width, num;
	int first_row;
};

struct pmc__machine {
	struct pmc_cpuinfo info;
	struct pmc__class classes[PMC_CLASS_MAX];
	int nclass;
	int ncpu;             /* CPUs configured: 0 .. ncpu - 1 */
	bool core_pmu;        /* the kernel exposes the CPU's own PMU */
	char core_pmu_name[32]; /* its name: cpu, cpu_core, armv8_pmuv3, ... */
	enum pmc_class core;  /* the class of its events */
	int watchdog_row;     /* the row the NMI watchdog holds, or -1 */
	char model[32];       /* libpfm4 model of this CPU, "" for none */
};
extern struct pmc__machine pmc__m;
extern bool pmc__initialized;

/* Fill pmc__m; 0 or -1 with errno. */
int pmc__machine_init(void);
const struct pmc__class *pmc__class_of(enum pmc_class cls);
/* Is CPU online?  Is it a CPU number at all? */
bool pmc__cpu_online(int cpu);
/* The administrative state: is row ROW of CPU disabled? */
bool pmc__row_disabled(int cpu, int row);
/* The class a libhwc event counts on. */
enum pmc_class pmc__class_for(const struct hwc_event *ev);

/* ------------------------------------------------------------ pmc.c */

struct pmc__target {
	pid_t pid;
	pid_t root;        /* the pid pmc_attach() named (itself, or an ancestor) */
	hwc_counters *c;   /* counting */
	hwc_sampler *s;    /* sampling, or the LOG_* records of a counting PMC */
};

struct pmc__pmc {
	bool used;
	pmc_id_t id;
	enum pmc_mode mode;
	uint32_t flags;
	int cpu;                 /* system modes */
	struct pmc__event ev;
	enum pmc_state state;    /* ALLOCATED, STOPPED or RUNNING */
	pmc_value_t count;       /* counting: the value at the last write; sampling: the rate */
	uint64_t saved;          /* counting: libhwc counts of targets detached since */
	bool msr;                /* pmc_get_msr() handed out its counter */
	struct pmc__target *t;   /* process modes */
	size_t nt, cap_t;
	hwc_counters *sys;       /* SC */
	hwc_sampler *ss;         /* SS, while running */
};

#define PMC__MAX 256
extern struct pmc__pmc pmc__pmcs[PMC__MAX];
/* Stop every running PMC that writes to the log (lock held). */
void pmc__stop_logging_pmcs(void);

/* ------------------------------------------------------------ log.c */

/* Is a log configured? */
bool pmc__have_log(void);
/* Add sampler S of PMC P (target PID, -1 for a CPU) to the log; called
 * with the lock held before S starts. */
int pmc__log_add_sampler(struct pmc__pmc *p, hwc_sampler *s, pid_t pid);
/* Move what S's buffers hold into the log (lock held). */
void pmc__log_drain(hwc_sampler *s);
/* Log an allocation, attach or detach (lock held; nothing without a log). */
void pmc__log_pmc(const struct pmc__pmc *p, uint32_t kind, pid_t pid);
/* A forked child drops the parent's log without touching it. */
void pmc__log_forget(void);
/* Take the sampler statistics of S into the driver statistics. */
void pmc__stats_sampler(hwc_sampler *s);
extern struct pmc_driverstats pmc__stats;

/* The user records libpmc writes into the log besides pmc_writelog()'s:
 * a fixed header, then a NUL-terminated text (see pmclog(3)). */
#define PMC__CTL_MAGIC "libpmc\0\1"
#define PMC__CTL_EVENTS 0x100 /* the log's events [first, first + count) are PMC pmcid's */
struct pmc__ctl {
	char magic[8];
	uint32_t kind;     /* PMCLOG_TYPE_INITIALIZE, _PMCALLOCATE, _PMCATTACH, _PMCDETACH,
			      _CLOSELOG, or PMC__CTL_EVENTS */
	uint32_t pmcid;
	uint32_t event;    /* INITIALIZE: enum pmc_cputype; ALLOCATE: enum pmc_event */
	uint32_t flags;    /* ALLOCATE: PMC_F_* */
	uint64_t rate;     /* INITIALIZE: TSC Hz; ALLOCATE: the sampling rate */
	uint64_t divisor;  /* ALLOCATE: recorded counts per count */
	int32_t pid;       /* ATTACH, DETACH, EVENTS: the target, -1 for a CPU */
	uint32_t first;    /* EVENTS */
	uint32_t count;    /* EVENTS */
	uint32_t mode;     /* ALLOCATE: enum pmc_mode */
	/* char text[]: ALLOCATE the event name, ATTACH the executable */
};

#endif
