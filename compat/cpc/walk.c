/* libcpc's walkers: the generic events (generic_events(3CPC)) this
 * machine counts, its native and software events, and the attributes a
 * request may set. */
#include "cpc_impl.h"

#include <errno.h>

/* generic_events(3CPC): the names, in its order.  Each maps to a platform
 * event through hwc's presets; a walker lists those this machine counts. */
static const char *const generic_events[] = {
	"PAPI_br_cn",   "PAPI_br_ins",  "PAPI_br_msp",  "PAPI_br_ntk",  "PAPI_br_prc",
	"PAPI_br_tkn",  "PAPI_br_ucn",  "PAPI_bru_idl", "PAPI_btac_m",  "PAPI_ca_cln",
	"PAPI_ca_inv",  "PAPI_ca_itv",  "PAPI_ca_shr",  "PAPI_ca_snp",  "PAPI_csr_fal",
	"PAPI_csr_suc", "PAPI_csr_tot", "PAPI_fad_ins", "PAPI_fdv_ins", "PAPI_fma_ins",
	"PAPI_fml_ins", "PAPI_fnv_ins", "PAPI_fp_ins",  "PAPI_fp_ops",  "PAPI_fp_stal",
	"PAPI_fpu_idl", "PAPI_fsq_ins", "PAPI_ful_ccy", "PAPI_ful_icy", "PAPI_fxu_idl",
	"PAPI_hw_int",  "PAPI_int_ins", "PAPI_tot_cyc", "PAPI_tot_iis", "PAPI_tot_ins",
	"PAPI_vec_ins", "PAPI_l1_dca",  "PAPI_l1_dch",  "PAPI_l1_dcm",  "PAPI_l1_dcr",
	"PAPI_l1_dcw",  "PAPI_l1_ica",  "PAPI_l1_ich",  "PAPI_l1_icm",  "PAPI_l1_icr",
	"PAPI_l1_icw",  "PAPI_l1_ldm",  "PAPI_l1_stm",  "PAPI_l1_tca",  "PAPI_l1_tch",
	"PAPI_l1_tcm",  "PAPI_l1_tcr",  "PAPI_l1_tcw",  "PAPI_l2_dca",  "PAPI_l2_dch",
	"PAPI_l2_dcm",  "PAPI_l2_dcr",  "PAPI_l2_dcw",  "PAPI_l2_ica",  "PAPI_l2_ich",
	"PAPI_l2_icm",  "PAPI_l2_icr",  "PAPI_l2_icw",  "PAPI_l2_ldm",  "PAPI_l2_stm",
	"PAPI_l2_tca",  "PAPI_l2_tch",  "PAPI_l2_tcm",  "PAPI_l2_tcr",  "PAPI_l2_tcw",
	"PAPI_l3_dca",  "PAPI_l3_dch",  "PAPI_l3_dcm",  "PAPI_l3_dcr",  "PAPI_l3_dcw",
	"PAPI_l3_ica",  "PAPI_l3_ich",  "PAPI_l3_icm",  "PAPI_l3_icr",  "PAPI_l3_icw",
	"PAPI_l3_ldm",  "PAPI_l3_stm",  "PAPI_l3_tca",  "PAPI_l3_tch",  "PAPI_l3_tcm",
	"PAPI_l3_tcr",  "PAPI_l3_tcw",  "PAPI_ld_ins",  "PAPI_lst_ins", "PAPI_lsu_idl",
	"PAPI_mem_rcy", "PAPI_mem_scy", "PAPI_mem_wcy", "PAPI_prf_dm",  "PAPI_res_stl",
	"PAPI_sr_ins",  "PAPI_stl_ccy", "PAPI_stl_icy", "PAPI_syc_ins", "PAPI_tlb_dm",
	"PAPI_tlb_im",  "PAPI_tlb_sd",  "PAPI_tlb_tl",
};

static void walk_generic(cpc_t *cpc, void (*fn)(void *arg, const char *name), void *arg)
{
	if (cpc->m.hwpic == 0)
		return; /* each maps to a processor event, and there are none here */
	for (size_t i = 0; i < sizeof(generic_events) / sizeof(generic_events[0]); i++) {
		char detail[256];
		if (cpc__probe_accepts(cpc__probe(generic_events[i], detail, sizeof(detail))))
			fn(arg, generic_events[i]);
	}
}

CPC_EXPORT void cpc_walk_generic_events_all(cpc_t *cpc, void *arg,
					    void (*action)(void *arg, const char *event))
{
	walk_generic(cpc, action, arg);
}

struct pic_walk {
	uint_t picno;
	void *arg;
	void (*action)(void *arg, uint_t picno, const char *event);
};

static void pic_adapter(void *arg, const char *name)
{
	struct pic_walk *w = arg;
	w->action(w->arg, w->picno, name);
}

CPC_EXPORT void cpc_walk_generic_events_pic(cpc_t *cpc, uint_t picno, void *arg,
					    void (*action)(void *arg, uint_t picno,
							   const char *event))
{
	if (picno >= cpc->m.npic) {
		errno = EINVAL;
		return;
	}
	/* The kernel may schedule any event on any hardware counter; the pics
	 * above those count software events only. */
	struct pic_walk w = {picno, arg, action};
	if (picno < cpc->m.hwpic)
		walk_generic(cpc, pic_adapter, &w);
}

CPC_EXPORT void cpc_walk_events_all(cpc_t *cpc, void *arg,
				    void (*action)(void *arg, const char *event))
{
	if (cpc->m.hwpic)
		cpc__walk_native(action, arg);
	cpc__walk_software(action, arg);
}

CPC_EXPORT void cpc_walk_events_pic(cpc_t *cpc, uint_t picno, void *arg,
				    void (*action)(void *arg, uint_t picno, const char *event))
{
	if (picno >= cpc->m.npic) {
		errno = EINVAL;
		return;
	}
	/* Native events on the hardware counters; software events on every
	 * pic, so that a program that fills pics from this list takes them. */
	struct pic_walk w = {picno, arg, action};
	if (picno < cpc->m.hwpic)
		cpc__walk_native(pic_adapter, &w);
	cpc__walk_software(pic_adapter, &w);
}

CPC_EXPORT void cpc_walk_attrs(cpc_t *cpc, void *arg, void (*action)(void *arg, const char *attr))
{
	size_t n;
	const struct cpc_attr_def *defs = cpc__attrs(&cpc->m, &n);
	for (size_t i = 0; i < n; i++)
		action(arg, defs[i].name);
}
