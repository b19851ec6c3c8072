/* perf's built-in event names (generic hardware, cache, software) and the
 * PAPI / illumos generic_events(3CPC) presets mapped onto them. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct named {
	const char *name;
	uint64_t config;
	const char *desc;
	bool alias; /* perf names the config otherwise (hwc__table_name) */
};

static const struct named hardware[] = {
	{"cpu-cycles", PERF_COUNT_HW_CPU_CYCLES, "CPU cycles", true},
	{"cycles", PERF_COUNT_HW_CPU_CYCLES, "CPU cycles", false},
	{"instructions", PERF_COUNT_HW_INSTRUCTIONS, "retired instructions", false},
	{"cache-references", PERF_COUNT_HW_CACHE_REFERENCES, "last-level cache accesses", false},
	{"cache-misses", PERF_COUNT_HW_CACHE_MISSES, "last-level cache misses", false},
	{"branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "retired branch instructions", true},
	{"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "retired branch instructions", false},
	{"branch-misses", PERF_COUNT_HW_BRANCH_MISSES, "mispredicted branches", false},
	{"bus-cycles", PERF_COUNT_HW_BUS_CYCLES, "bus cycles", false},
	{"stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles stalled in the front end", false},
	{"idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles stalled in the front end", true},
	{"stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles stalled in the back end", false},
	{"idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles stalled in the back end", true},
	{"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES, "reference cycles, unaffected by frequency scaling", false},
};

static const struct named software[] = {
	{"cpu-clock", PERF_COUNT_SW_CPU_CLOCK, "CPU clock, a high-resolution per-CPU timer (ns)", false},
	{"task-clock", PERF_COUNT_SW_TASK_CLOCK, "time the task ran on a CPU (ns)", false},
	{"page-faults", PERF_COUNT_SW_PAGE_FAULTS, "page faults", false},
	{"faults", PERF_COUNT_SW_PAGE_FAULTS, "page faults", true},
	{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches", false},
	{"cs", PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches", true},
	{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "migrations to another CPU", false},
	{"migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "migrations to another CPU", true},
	{"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, "page faults served without I/O", false},
	{"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, "page faults that needed I/O", false},
	{"alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS, "alignment faults fixed up by the kernel", false},
	{"emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS, "instructions emulated by the kernel", false},
	{"dummy", PERF_COUNT_SW_DUMMY, "counts nothing; carries side-band records", false},
	{"bpf-output", PERF_COUNT_SW_BPF_OUTPUT, "output of BPF programs", false},
	{"cgroup-switches", 11 /* PERF_COUNT_SW_CGROUP_SWITCHES */, "switches between cgroups", false},
};

/* Cache events, in perf's grammar: a cache name, then up to two words, each
 * an operation or a result, in either order; the operation defaults to
 * load and the result to access ("LLC-misses" is LLC-load-misses).  The
 * words and aliases are perf's (tools/perf/util/evsel.c); matching ignores
 * case. */
static const char *const caches[][5] = {
	{"L1-dcache", "l1-d", "l1d", "L1-data"},
	{"L1-icache", "l1-i", "l1i", "L1-instruction"},
	{"LLC", "L2"},
	{"dTLB", "d-tlb", "Data-TLB"},
	{"iTLB", "i-tlb", "Instruction-TLB"},
	{"branch", "branches", "bpu", "btb", "bpc"},
	{"node"},
};
static const char *const cache_ops[][4] = {
	{"load", "loads", "read"},
	{"store", "stores", "write"},
	{"prefetch", "prefetches", "speculative-read", "speculative-load"},
};
static const char *const cache_results[][4] = {
	{"refs", "Reference", "ops", "access"},
	{"misses", "miss"},
};
/* The canonical spelling, for listings and messages: loads, stores, prefetches. */
static const char *const cache_op_plural[] = {"loads", "stores", "prefetches"};

/* Which (cache, op) pairs exist: perf's validity table. */
static bool cache_op_valid(int cache, int op)
{
	switch (cache) {
	case PERF_COUNT_HW_CACHE_L1I:
		return op != PERF_COUNT_HW_CACHE_OP_WRITE;
	case PERF_COUNT_HW_CACHE_ITLB:
	case PERF_COUNT_HW_CACHE_BPU:
		return op == PERF_COUNT_HW_CACHE_OP_READ;
	default:
		return true;
	}
}

/* The longest of WORDS (rows of N aliases) that starts S and ends at '-' or
 * the end; returns its row and sets *LEN, or -1. */
static int match_word(const char *s, const char *const (*words)[4], size_t rows, size_t *len)
{
	int best = -1;
	*len = 0;
	for (size_t r = 0; r < rows; r++)
		for (size_t i = 0; i < 4 && words[r][i]; i++) {
			size_t n = strlen(words[r][i]);
			if (n > *len && strncasecmp(s, words[r][i], n) == 0 && (!s[n] || s[n] == '-')) {
				best = (int)r;
				*len = n;
			}
		}
	return best;
}

static int resolve_cache(const char *base, struct hwc__ev *ev)
{
	int cache = -1;
	size_t len = 0;
	for (size_t c = 0; c < HWC_ARRAY_SIZE(caches); c++)
		for (size_t i = 0; i < 5 && caches[c][i]; i++) {
			size_t n = strlen(caches[c][i]);
			if (n > len && strncasecmp(base, caches[c][i], n) == 0 &&
			    (!base[n] || base[n] == '-')) {
				cache = (int)c;
				len = n;
			}
		}
	if (cache < 0)
		return HWC__NOT_MINE;
	int op = -1, result = -1;
	for (const char *p = base + len; *p;) {
		p++; /* the '-' */
		size_t n;
		int w = match_word(p, cache_ops, HWC_ARRAY_SIZE(cache_ops), &n);
		if (w >= 0 && op < 0) {
			op = w;
		} else if ((w = match_word(p, cache_results, HWC_ARRAY_SIZE(cache_results), &n)) >= 0 &&
			   result < 0) {
			result = w;
		} else {
			/* Not a cache event after all ("L1-dcache-foo"), or a word
			 * given twice, which perf would silently ignore. */
			if (w < 0 && match_word(p, cache_ops, HWC_ARRAY_SIZE(cache_ops), &n) < 0)
				return HWC__NOT_MINE;
			return hwc__fail(-EINVAL,
					 "malformed cache event '%s': '%.*s' repeats the %s (write "
					 "<cache>-<operation>-<result>, e.g. %s-loads or %s-load-misses)",
					 base, (int)n, p, w >= 0 ? "result" : "operation", caches[cache][0],
					 caches[cache][0]);
		}
		p += n;
	}
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (result < 0)
		result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	if (!cache_op_valid(cache, op))
		return hwc__fail(-EINVAL, "'%s' does not exist: %s has no %s (perf and the kernel "
					  "define only %s-loads%s)",
				 base, caches[cache][0], cache_op_plural[op], caches[cache][0],
				 cache == PERF_COUNT_HW_CACHE_L1I ? " and -prefetches" : "");
	ev->pub.source = HWC_SRC_CACHE;
	snprintf(ev->pmu, sizeof(ev->pmu), "%s", hwc__core_pmu_label());
	ev->pub.attr.type = PERF_TYPE_HW_CACHE;
	ev->pub.attr.config = (uint64_t)cache | ((uint64_t)op << 8) | ((uint64_t)result << 16);
	return 0;
}

int hwc__resolve_table(const char *base, struct hwc__ev *ev)
{
	for (size_t i = 0; i < HWC_ARRAY_SIZE(hardware); i++)
		if (strcmp(base, hardware[i].name) == 0) {
			ev->pub.source = HWC_SRC_GENERIC;
			snprintf(ev->pmu, sizeof(ev->pmu), "%s", hwc__core_pmu_label());
			ev->pub.attr.type = PERF_TYPE_HARDWARE;
			ev->pub.attr.config = hardware[i].config;
			return 0;
		}
	for (size_t i = 0; i < HWC_ARRAY_SIZE(software); i++)
		if (strcmp(base, software[i].name) == 0) {
			ev->pub.source = HWC_SRC_SOFTWARE;
			snprintf(ev->pmu, sizeof(ev->pmu), "software");
			ev->pub.attr.type = PERF_TYPE_SOFTWARE;
			ev->pub.attr.config = software[i].config;
			if (ev->pub.attr.config == PERF_COUNT_SW_CPU_CLOCK ||
			    ev->pub.attr.config == PERF_COUNT_SW_TASK_CLOCK) {
				snprintf(ev->unit, sizeof(ev->unit), "msec");
				ev->pub.scale = 1e-6;
			}
			return 0;
		}
	return resolve_cache(base, ev);
}

/* PAPI presets (which include illumos generic_events(3CPC)) and what they
 * become here.  Candidates are tried in order; the first one the resolver
 * accepts wins.  Intel core and AMD Zen libpfm4 names cover what perf has
 * no generic event for.  Presets without candidates are known names that
 * hwc cannot map on any platform yet. */
static const struct preset {
	const char *name;
	const char *desc;
	const char *candidates[5];
} presets[] = {
	{"PAPI_TOT_CYC", "total cycles", {"cycles"}},
	{"PAPI_TOT_INS", "instructions completed", {"instructions"}},
	{"PAPI_REF_CYC", "reference clock cycles", {"ref-cycles"}},
	{"PAPI_BR_INS", "branch instructions", {"branches"}},
	{"PAPI_BR_MSP", "conditional branches mispredicted", {"branch-misses"}},
	{"PAPI_BR_CN", "conditional branch instructions",
	 {"BR_INST_RETIRED:CONDITIONAL", "BR_INST_RETIRED:COND",
	  "RETIRED_CONDITIONAL_BRANCH_INSTRUCTIONS"}},
	/* Skylake's NEAR_TAKEN and Zen's RETIRED_TAKEN_BRANCH_INSTRUCTIONS
	 * count unconditional branches too: no mapping there. */
	{"PAPI_BR_TKN", "conditional branches taken", {"BR_INST_RETIRED:COND_TAKEN"}},
	{"PAPI_BR_NTK", "conditional branches not taken",
	 {"BR_INST_RETIRED:NOT_TAKEN", "BR_INST_RETIRED:COND_NTAKEN"}},
	{"PAPI_L1_DCM", "level 1 data cache misses", {"L1-dcache-load-misses"}},
	{"PAPI_L1_DCA", "level 1 data cache accesses", {"L1-dcache-loads"}},
	{"PAPI_L1_LDM", "level 1 load misses", {"L1-dcache-load-misses"}},
	{"PAPI_L1_STM", "level 1 store misses", {"L1-dcache-store-misses"}},
	{"PAPI_L1_ICM", "level 1 instruction cache misses", {"L1-icache-load-misses"}},
	{"PAPI_L1_ICA", "level 1 instruction cache accesses", {"L1-icache-loads"}},
	/* Requests that miss L2 are the ones the last-level cache sees. */
	{"PAPI_L2_TCM", "level 2 cache misses",
	 {"L2_RQSTS:MISS", "LONGEST_LAT_CACHE:REFERENCES", "LONGEST_LAT_CACHE:REFERENCE",
	  "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C:IC_FILL_MISS"}},
	{"PAPI_L2_TCA", "level 2 cache accesses",
	 {"L2_RQSTS:REFERENCES", "L2_RQSTS:ALL_DEMAND_REFERENCES"}},
	{"PAPI_L3_TCM", "level 3 (last level) cache misses", {"cache-misses"}},
	{"PAPI_L3_TCA", "level 3 (last level) cache accesses", {"cache-references"}},
	{"PAPI_L3_LDM", "level 3 load misses", {"LLC-load-misses"}},
	{"PAPI_TLB_DM", "data TLB misses", {"dTLB-load-misses"}},
	{"PAPI_TLB_IM", "instruction TLB misses", {"iTLB-load-misses"}},
	/* Arm's LD_RETIRED/ST_RETIRED (0x06/0x07, PAPI's arm_ac53 mapping) are
	 * optional: cores without them (Neoverse N1) have no mapping. */
	{"PAPI_LD_INS", "load instructions",
	 {"MEM_INST_RETIRED:ALL_LOADS", "MEM_UOPS_RETIRED:ALL_LOADS", "LS_DISPATCH:LD_DISPATCH",
	  "LD_RETIRED"}},
	{"PAPI_SR_INS", "store instructions",
	 {"MEM_INST_RETIRED:ALL_STORES", "MEM_UOPS_RETIRED:ALL_STORES",
	  "LS_DISPATCH:STORE_DISPATCH", "ST_RETIRED"}},
	/* Intel kernels have no generic stalled-cycles events since Sandy
	 * Bridge: the native event comes first where there is one. */
	{"PAPI_STL_ICY", "cycles with no instruction issue",
	 {"IDQ_UOPS_NOT_DELIVERED:CYCLES_0_UOPS_DELIV_CORE", "stalled-cycles-frontend"}},
	{"PAPI_RES_STL", "cycles stalled on any resource",
	 {"RESOURCE_STALLS:ANY", "stalled-cycles-backend"}},
	{"PAPI_HW_INT", "hardware interrupts", {"HW_INTERRUPTS:RECEIVED", "INTERRUPT_TAKEN"}},
	/* Every width and precision, so each FP instruction counts once.
	 * Zen counts FLOPs, not instructions: that is PAPI_FP_OPS. */
	{"PAPI_FP_INS", "floating point instructions",
	 {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE:SCALAR_SINGLE:128B_PACKED_DOUBLE:128B_PACKED_SINGLE:"
	  "256B_PACKED_DOUBLE:256B_PACKED_SINGLE:512B_PACKED_DOUBLE:512B_PACKED_SINGLE"}},
	{"PAPI_FP_OPS", "floating point operations", {"RETIRED_SSE_AVX_FLOPS"}},
	{"PAPI_TOT_IIS", "instructions issued", {"UOPS_ISSUED:ANY"}},
#define UNMAPPED(n, d) {n, d, {NULL}}
	UNMAPPED("PAPI_L1_TCM", "level 1 cache misses"),
	UNMAPPED("PAPI_L2_DCM", "level 2 data cache misses"),
	UNMAPPED("PAPI_L2_ICM", "level 2 instruction cache misses"),
	UNMAPPED("PAPI_L3_DCM", "level 3 data cache misses"),
	UNMAPPED("PAPI_L3_ICM", "level 3 instruction cache misses"),
	UNMAPPED("PAPI_CA_SNP", "requests for a snoop"),
	UNMAPPED("PAPI_CA_SHR", "requests for exclusive access to a shared cache line"),
	UNMAPPED("PAPI_CA_CLN", "requests for exclusive access to a clean cache line"),
	UNMAPPED("PAPI_CA_INV", "requests for cache line invalidation"),
	UNMAPPED("PAPI_CA_ITV", "requests for cache line intervention"),
	UNMAPPED("PAPI_L3_STM", "level 3 store misses"),
	UNMAPPED("PAPI_BRU_IDL", "cycles the branch units are idle"),
	UNMAPPED("PAPI_FXU_IDL", "cycles the integer units are idle"),
	UNMAPPED("PAPI_FPU_IDL", "cycles the floating point units are idle"),
	UNMAPPED("PAPI_LSU_IDL", "cycles the load/store units are idle"),
	UNMAPPED("PAPI_TLB_TL", "total TLB misses"),
	UNMAPPED("PAPI_L2_LDM", "level 2 load misses"),
	UNMAPPED("PAPI_L2_STM", "level 2 store misses"),
	UNMAPPED("PAPI_BTAC_M", "branch target address cache misses"),
	UNMAPPED("PAPI_PRF_DM", "data prefetch cache misses"),
	UNMAPPED("PAPI_L3_DCH", "level 3 data cache hits"),
	UNMAPPED("PAPI_TLB_SD", "TLB shootdowns"),
	UNMAPPED("PAPI_CSR_FAL", "failed store conditional instructions"),
	UNMAPPED("PAPI_CSR_SUC", "successful store conditional instructions"),
	UNMAPPED("PAPI_CSR_TOT", "total store conditional instructions"),
	UNMAPPED("PAPI_MEM_SCY", "cycles stalled waiting for memory accesses"),
	UNMAPPED("PAPI_MEM_RCY", "cycles stalled waiting for memory reads"),
	UNMAPPED("PAPI_MEM_WCY", "cycles stalled waiting for memory writes"),
	UNMAPPED("PAPI_STL_CCY", "cycles with no instruction completed"),
	UNMAPPED("PAPI_FUL_ICY", "cycles with maximum instruction issue"),
	UNMAPPED("PAPI_FUL_CCY", "cycles with maximum instructions completed"),
	UNMAPPED("PAPI_BR_UCN", "unconditional branch instructions"),
	UNMAPPED("PAPI_BR_PRC", "conditional branches correctly predicted"),
	UNMAPPED("PAPI_FMA_INS", "fused multiply-add instructions"),
	UNMAPPED("PAPI_INT_INS", "integer instructions"),
	UNMAPPED("PAPI_LST_INS", "load and store instructions"),
	UNMAPPED("PAPI_SYC_INS", "synchronization instructions"),
	UNMAPPED("PAPI_L1_DCH", "level 1 data cache hits"),
	UNMAPPED("PAPI_L2_DCH", "level 2 data cache hits"),
	UNMAPPED("PAPI_L2_DCA", "level 2 data cache accesses"),
	UNMAPPED("PAPI_L3_DCA", "level 3 data cache accesses"),
	UNMAPPED("PAPI_L1_DCR", "level 1 data cache reads"),
	UNMAPPED("PAPI_L2_DCR", "level 2 data cache reads"),
	UNMAPPED("PAPI_L3_DCR", "level 3 data cache reads"),
	UNMAPPED("PAPI_L1_DCW", "level 1 data cache writes"),
	UNMAPPED("PAPI_L2_DCW", "level 2 data cache writes"),
	UNMAPPED("PAPI_L3_DCW", "level 3 data cache writes"),
	UNMAPPED("PAPI_L1_ICH", "level 1 instruction cache hits"),
	UNMAPPED("PAPI_L2_ICH", "level 2 instruction cache hits"),
	UNMAPPED("PAPI_L3_ICH", "level 3 instruction cache hits"),
	UNMAPPED("PAPI_L2_ICA", "level 2 instruction cache accesses"),
	UNMAPPED("PAPI_L3_ICA", "level 3 instruction cache accesses"),
	UNMAPPED("PAPI_L1_ICR", "level 1 instruction cache reads"),
	UNMAPPED("PAPI_L2_ICR", "level 2 instruction cache reads"),
	UNMAPPED("PAPI_L3_ICR", "level 3 instruction cache reads"),
	UNMAPPED("PAPI_L1_TCH", "level 1 cache hits"),
	UNMAPPED("PAPI_L2_TCH", "level 2 cache hits"),
	UNMAPPED("PAPI_L1_TCA", "level 1 cache accesses"),
	UNMAPPED("PAPI_L1_TCR", "level 1 cache reads"),
	UNMAPPED("PAPI_L2_TCR", "level 2 cache reads"),
	UNMAPPED("PAPI_L3_TCR", "level 3 cache reads"),
	UNMAPPED("PAPI_L1_TCW", "level 1 cache writes"),
	UNMAPPED("PAPI_L2_TCW", "level 2 cache writes"),
	UNMAPPED("PAPI_L3_TCW", "level 3 cache writes"),
	UNMAPPED("PAPI_FML_INS", "floating point multiply instructions"),
	UNMAPPED("PAPI_FAD_INS", "floating point add instructions"),
	UNMAPPED("PAPI_FDV_INS", "floating point divide instructions"),
	UNMAPPED("PAPI_FSQ_INS", "floating point square root instructions"),
	UNMAPPED("PAPI_FNV_INS", "floating point inverse instructions"),
	UNMAPPED("PAPI_VEC_INS", "vector/SIMD instructions"),
	UNMAPPED("PAPI_SP_OPS", "single precision floating point operations"),
	UNMAPPED("PAPI_DP_OPS", "double precision floating point operations"),
	UNMAPPED("PAPI_VEC_SP", "single precision vector/SIMD instructions"),
	UNMAPPED("PAPI_VEC_DP", "double precision vector/SIMD instructions"),
	UNMAPPED("PAPI_STL_SCY", "cycles with no instruction issue, stalled"),
#undef UNMAPPED
};

const char *const *hwc__preset_candidates(const char *base, const char **label, size_t *n)
{
	for (size_t i = 0; i < HWC_ARRAY_SIZE(presets); i++) {
		if (strcasecmp(base, presets[i].name) != 0)
			continue;
		*label = presets[i].name;
		*n = 0;
		while (*n < HWC_ARRAY_SIZE(presets[i].candidates) && presets[i].candidates[*n])
			(*n)++;
		return presets[i].candidates;
	}
	return NULL;
}

static const char *perf_name(const struct named *t, size_t n, uint64_t config)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].config == config && !t[i].alias)
			return t[i].name;
	return NULL;
}

const char *hwc__table_name(uint32_t type, uint64_t config)
{
	if (type == PERF_TYPE_HARDWARE)
		return perf_name(hardware, HWC_ARRAY_SIZE(hardware), config);
	if (type == PERF_TYPE_SOFTWARE)
		return perf_name(software, HWC_ARRAY_SIZE(software), config);
	return NULL;
}

void hwc__table_names(hwc__name_fn fn, void *arg)
{
	for (size_t i = 0; i < HWC_ARRAY_SIZE(hardware); i++)
		fn(hardware[i].name, arg);
	for (size_t i = 0; i < HWC_ARRAY_SIZE(software); i++)
		fn(software[i].name, arg);
	char name[64];
	for (size_t c = 0; c < HWC_ARRAY_SIZE(caches); c++)
		for (size_t o = 0; o < HWC_ARRAY_SIZE(cache_ops); o++) {
			if (!cache_op_valid((int)c, (int)o))
				continue;
			snprintf(name, sizeof(name), "%s-%s", caches[c][0], cache_op_plural[o]);
			fn(name, arg);
			snprintf(name, sizeof(name), "%s-%s-misses", caches[c][0], cache_ops[o][0]);
			fn(name, arg);
		}
	for (size_t i = 0; i < HWC_ARRAY_SIZE(presets); i++)
		fn(presets[i].name, arg);
}

/* The listing of one category, as public event infos. */
static int walk_named(const struct named *t, size_t n, enum hwc_source src, const char *pmu,
		      hwc_event_walk_fn fn, void *arg)
{
	for (size_t i = 0; i < n; i++) {
		struct hwc_event_info ev = {.name = t[i].name, .spec = t[i].name, .pmu = pmu,
					    .source = src, .desc = t[i].desc, .code = t[i].config};
		int r = fn(&ev, arg);
		if (r)
			return r;
	}
	return 0;
}

/* How listings spell and describe the caches and operations, in the
 * kernel's PERF_COUNT_HW_CACHE_* order (the resolver accepts more). */
static const struct {
	const char *name, *desc;
} cache_listing[] = {
	{"L1-dcache", "level 1 data cache"},  {"L1-icache", "level 1 instruction cache"},
	{"LLC", "last-level cache"},          {"dTLB", "data TLB"},
	{"iTLB", "instruction TLB"},          {"branch", "branch prediction unit"},
	{"node", "local NUMA node memory"},
};
static const struct {
	const char *one, *many;
} op_listing[] = {{"load", "loads"}, {"store", "stores"}, {"prefetch", "prefetches"}};

static int walk_caches(hwc_event_walk_fn fn, void *arg)
{
	char name[64], desc[128];
	for (int c = 0; c < (int)HWC_ARRAY_SIZE(cache_listing); c++)
		for (int o = 0; o < (int)HWC_ARRAY_SIZE(op_listing); o++) {
			if (!cache_op_valid(c, o))
				continue;
			for (int miss = 0; miss <= 1; miss++) {
				snprintf(name, sizeof(name), "%s-%s%s", cache_listing[c].name,
					 miss ? op_listing[o].one : op_listing[o].many,
					 miss ? "-misses" : "");
				snprintf(desc, sizeof(desc), "%s: %s%s", cache_listing[c].desc,
					 miss ? op_listing[o].one : op_listing[o].many,
					 miss ? " misses" : "");
				int result = miss ? PERF_COUNT_HW_CACHE_RESULT_MISS
						  : PERF_COUNT_HW_CACHE_RESULT_ACCESS;
				struct hwc_event_info ev = {
					.name = name, .spec = name, .pmu = "cache",
					.source = HWC_SRC_CACHE, .desc = desc,
					.code = (uint64_t)c | ((uint64_t)o << 8) | ((uint64_t)result << 16)};
				int r = fn(&ev, arg);
				if (r)
					return r;
			}
		}
	return 0;
}

int hwc__table_walk(enum hwc_source which, hwc_event_walk_fn fn, void *arg)
{
	switch (which) {
	case HWC_SRC_GENERIC:
		return walk_named(hardware, HWC_ARRAY_SIZE(hardware), HWC_SRC_GENERIC, "generic",
				  fn, arg);
	case HWC_SRC_SOFTWARE:
		return walk_named(software, HWC_ARRAY_SIZE(software), HWC_SRC_SOFTWARE, "software",
				  fn, arg);
	case HWC_SRC_CACHE:
		return walk_caches(fn, arg);
	default:
		return 0;
	}
}

int hwc__preset_walk(int (*fn)(const char *name, const char *desc, void *arg), void *arg)
{
	for (size_t i = 0; i < HWC_ARRAY_SIZE(presets); i++) {
		int r = fn(presets[i].name, presets[i].desc, arg);
		if (r)
			return r;
	}
	return 0;
}
