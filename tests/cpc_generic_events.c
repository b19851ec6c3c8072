/* generic_events(3CPC): every generic event of the page either maps to an
 * event this machine counts (and the generic walker lists it) or is refused
 * with CPC_INVALID_EVENT and a reason -- never silently wrong. */
#include "cpc_test.h"

static const char *const page[] = {
	"PAPI_br_cn",   "PAPI_br_ins",  "PAPI_br_msp",  "PAPI_br_ntk",  "PAPI_br_prc",
	"PAPI_br_ucn",  "PAPI_bru_idl", "PAPI_btac_m",  "PAPI_ca_cln",  "PAPI_ca_inv",
	"PAPI_ca_itv",  "PAPI_ca_shr",  "PAPI_ca_snp",  "PAPI_csr_fal", "PAPI_csr_suc",
	"PAPI_csr_tot", "PAPI_fad_ins", "PAPI_fdv_ins", "PAPI_fma_ins", "PAPI_fml_ins",
	"PAPI_fnv_ins", "PAPI_fp_ops",  "PAPI_fp_stal", "PAPI_fpu_idl", "PAPI_fsq_ins",
	"PAPI_ful_ccy", "PAPI_ful_icy", "PAPI_fxu_idl", "PAPI_hw_int",  "PAPI_int_ins",
	"PAPI_tot_cyc", "PAPI_tot_iis", "PAPI_tot_ins", "PAPI_vec_ins", "PAPI_l1_dca",
	"PAPI_l1_dch",  "PAPI_l1_dcm",  "PAPI_l1_dcr",  "PAPI_l1_dcw",  "PAPI_l1_ica",
	"PAPI_l1_ich",  "PAPI_l1_icm",  "PAPI_l1_icr",  "PAPI_l1_icw",  "PAPI_l1_ldm",
	"PAPI_l1_stm",  "PAPI_l1_tca",  "PAPI_l1_tch",  "PAPI_l1_tcm",  "PAPI_l1_tcr",
	"PAPI_l1_tcw",  "PAPI_l2_dca",  "PAPI_l2_dch",  "PAPI_l2_dcm",  "PAPI_l2_dcr",
	"PAPI_l2_dcw",  "PAPI_l2_ica",  "PAPI_l2_ich",  "PAPI_l2_icm",  "PAPI_l2_icr",
	"PAPI_l2_icw",  "PAPI_l2_ldm",  "PAPI_l2_stm",  "PAPI_l2_tca",  "PAPI_l2_tch",
	"PAPI_l2_tcm",  "PAPI_l2_tcr",  "PAPI_l2_tcw",  "PAPI_l3_dca",  "PAPI_l3_dch",
	"PAPI_l3_dcm",  "PAPI_l3_dcr",  "PAPI_l3_dcw",  "PAPI_l3_ica",  "PAPI_l3_ich",
	"PAPI_l3_icm",  "PAPI_l3_icr",  "PAPI_l3_icw",  "PAPI_l3_ldm",  "PAPI_l3_stm",
	"PAPI_l3_tca",  "PAPI_l3_tch",  "PAPI_l3_tcm",  "PAPI_l3_tcr",  "PAPI_l3_tcw",
	"PAPI_ld_ins",  "PAPI_lst_ins", "PAPI_lsu_idl", "PAPI_mem_rcy", "PAPI_mem_scy",
	"PAPI_mem_wcy", "PAPI_prf_dm",  "PAPI_res_stl", "PAPI_sr_ins",  "PAPI_stl_ccy",
	"PAPI_syc_ins", "PAPI_tlb_dm",  "PAPI_tlb_im",  "PAPI_tlb_sd",  "PAPI_tlb_tl",
};

struct listed {
	char name[256][32];
	int n;
};

static void collect(void *arg, const char *name)
{
	struct listed *l = arg;
	if (l->n < 256)
		snprintf(l->name[l->n++], sizeof(l->name[0]), "%s", name);
}

static bool listed(const struct listed *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->name[i], name) == 0)
			return true;
	return false;
}

static void test_each_generic_event(void)
{
	cpc_t *cpc = open_cpc();
	static struct listed walk;
	cpc_walk_generic_events_all(cpc, &walk, collect);
	int mapped = 0;
	for (size_t i = 0; i < sizeof(page) / sizeof(page[0]); i++) {
		cpc_set_t *set = cpc_set_create(cpc);
		last_subcode = 0;
		last_msg[0] = '\0';
		int r = cpc_set_add_request(cpc, set, page[i], 0, CPC_COUNT_USER, 0, NULL);
		if (r == 0) {
			mapped++;
			CHECK(listed(&walk, page[i]));
			CHECK_INT(cpc_bind_curlwp(cpc, set, 0), ==, 0);
		} else {
			CHECK_INT(errno, ==, EINVAL);
			CHECK_INT(last_subcode, ==, CPC_INVALID_EVENT);
			CHECK(!listed(&walk, page[i]));
			/* The reason names the event and what is missing. */
			CHECK(strstr(last_msg, page[i]) != NULL ||
			      strstr(last_msg, "no hardware PMU") != NULL);
		}
		cpc_set_destroy(cpc, set);
	}
	fprintf(stderr, "%d of %zu generic events count on this machine (%s)\n", mapped,
		sizeof(page) / sizeof(page[0]), cpc_cciname(cpc));
	if (strstr(cpc_cciname(cpc), "no hardware PMU"))
		CHECK_INT(mapped, ==, 0);
	cpc_close(cpc);
}

int main(void)
{
	RUN(test_each_generic_event);
	return check_exit();
}
