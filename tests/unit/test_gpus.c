/* test_gpus.c - the reference GPU table (common/gpus.c): contents, sources and NVML matching. */
#include "tests/unit/t.h"

#include <stdlib.h>

#include "common/gpus.h"
#include "pricing/catalog.h"

static void test_table_complete(void)
{
	static const char *const need[] = { "V100-SXM2-16", "V100-SXM2-32", "V100-PCIE", "T4", "A10", "A10G",
		"L4", "L40S", "A100-40-SXM", "A100-80-SXM", "A100-40-PCIE", "A100-80-PCIE", "H100-SXM",
		"H100-PCIE", "H100-NVL", "H200", "H20", "B200" };
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
		const struct gpu_ref *r = gpu_ref_find(need[i]);
		CHECK(r != NULL);
		if (r)
			CHECK_STR(r->key, need[i]);
	}
	CHECK(gpu_refs_count >= sizeof need / sizeof need[0]);
	CHECK(gpu_ref_find("nope") == NULL);
	CHECK(gpu_ref_find(NULL) == NULL);
}

static void test_rows_sane(void)
{
	for (size_t i = 0; i < gpu_refs_count; i++) {
		const struct gpu_ref *r = &gpu_refs[i];
		CHECK(r->key && r->name && r->nvml_match[0]);
		CHECK(r->source && strlen(r->source) > 10);       /* every row has its source */
		CHECK(r->mem_gib >= 16 && r->mem_gib <= 200);
		CHECK(r->mem_bw_gbps >= 300 && r->mem_bw_gbps <= 8000);
		CHECK(r->pcie_gen >= 3 && r->pcie_gen <= 6 && r->pcie_width == 16);
		CHECK(r->tdp_w >= 70 && r->tdp_w <= 1000);
		CHECK(r->peak_tflops[GPU_FP32] > 0 && r->peak_tflops[GPU_FP16] > r->peak_tflops[GPU_FP32]);
		/* dense tensor rates keep their ratios: BF16 = FP16, TF32 = FP16/2 (A10G and H20 too), FP8 = 2 BF16, within the
		 * datasheets' own rounding (L40S BF16 362.05 but FP8 733; B200 TF32 1100 but FP16 2250) */
		if (r->peak_tflops[GPU_BF16] > 0)
			CHECK_NEAR(r->peak_tflops[GPU_BF16], r->peak_tflops[GPU_FP16], 1e-9);
		if (r->peak_tflops[GPU_TF32] > 0)
			CHECK_NEAR(r->peak_tflops[GPU_TF32] * 2, r->peak_tflops[GPU_FP16], r->peak_tflops[GPU_FP16] * 0.03);
		if (r->peak_tflops[GPU_FP8] > 0)
			CHECK_NEAR(r->peak_tflops[GPU_FP8], 2 * r->peak_tflops[GPU_BF16], r->peak_tflops[GPU_BF16] * 0.03);
		/* keys unique */
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(gpu_refs[j].key, r->key) != 0);
	}
	/* spot values from the datasheets (dense) */
	const struct gpu_ref *h = gpu_ref_find("H100-SXM");
	CHECK_NEAR(h->peak_tflops[GPU_BF16], 989.4, 0.1);
	CHECK_NEAR(h->peak_tflops[GPU_FP8], 1978.9, 0.1);
	CHECK_NEAR(h->mem_bw_gbps, 3350, 0);
	CHECK(gpu_ref_find("A100-80-SXM")->peak_tflops[GPU_TF32] == 156);
	CHECK(gpu_ref_find("A100-80-SXM")->peak_tflops[GPU_FP8] == 0);   /* no FP8 on Ampere */
	CHECK(gpu_ref_find("T4")->peak_tflops[GPU_BF16] == 0);
	CHECK(gpu_ref_find("L4")->peak_tflops[GPU_FP8] > 0);
	CHECK(gpu_ref_find("H200")->mem_bw_gbps == 4800);
	CHECK(gpu_ref_find("B200")->pcie_gen == 6);
}

static void test_dtype_names(void)
{
	CHECK_STR(gpu_dtype_name(GPU_BF16), "bf16");
	CHECK_STR(gpu_dtype_name(GPU_DTYPE_COUNT), "?");
	CHECK(gpu_dtype_from_name("fp8") == GPU_FP8);
	CHECK(gpu_dtype_from_name("tf32") == GPU_TF32);
	CHECK(gpu_dtype_from_name("int8") == -1);
	CHECK(gpu_dtype_from_name(NULL) == -1);
}

#define MATCH(name, mem, want) do { const struct gpu_ref *m_ = gpu_ref_match(name, mem); \
	CHECK_STR(m_ ? m_->key : "(none)", want); } while (0)

static void test_match(void)
{
	/* device names as NVML (nvidia-smi --query-gpu=name) prints them; memory in GiB */
	MATCH("Tesla V100-SXM2-16GB", 15.8, "V100-SXM2-16");
	MATCH("Tesla V100-SXM2-32GB", 31.7, "V100-SXM2-32");
	MATCH("Tesla V100-PCIE-16GB", 15.8, "V100-PCIE");
	MATCH("Tesla T4", 15.0, "T4");
	MATCH("NVIDIA A10", 22.5, "A10");
	MATCH("NVIDIA A10G", 22.5, "A10G");
	MATCH("NVIDIA L4", 22.5, "L4");
	MATCH("NVIDIA L40S", 45.0, "L40S");
	MATCH("NVIDIA A100-SXM4-40GB", 39.6, "A100-40-SXM");
	MATCH("NVIDIA A100-SXM4-80GB", 79.3, "A100-80-SXM");
	MATCH("NVIDIA A100-PCIE-40GB", 39.6, "A100-40-PCIE");
	MATCH("NVIDIA A100 80GB PCIe", 79.3, "A100-80-PCIE");
	MATCH("NVIDIA H100 80GB HBM3", 79.6, "H100-SXM");    /* 81559 MiB */
	MATCH("NVIDIA H100 PCIe", 79.6, "H100-PCIE");
	MATCH("NVIDIA H100 NVL", 93.6, "H100-NVL");
	MATCH("NVIDIA H200", 140.4, "H200");                  /* 143771 MiB */
	MATCH("NVIDIA H200 NVL", 140.4, "H200-NVL");
	MATCH("NVIDIA H20", 95.0, "H20");
	MATCH("NVIDIA B200", 179.1, "B200");
	/* without memory: still the name */
	MATCH("NVIDIA H100 80GB HBM3", 0, "H100-SXM");
	MATCH("nvidia a10g", 0, "A10G");                     /* case-insensitive */
	/* a word boundary is needed: no row for these */
	CHECK(gpu_ref_match("NVIDIA GeForce RTX 4090", 24) == NULL);
	CHECK(gpu_ref_match("NVIDIA L40", 45) == NULL);
	CHECK(gpu_ref_match("NVIDIA A1000", 8) == NULL);
	CHECK(gpu_ref_match("", 8) == NULL);
	CHECK(gpu_ref_match(NULL, 8) == NULL);
}

static void test_pcie_link(void)
{
	CHECK_NEAR(gpu_pcie_link_gbps(3, 16), 15.7538, 1e-4);
	CHECK_NEAR(gpu_pcie_link_gbps(4, 16), 31.5077, 1e-4);
	CHECK_NEAR(gpu_pcie_link_gbps(5, 16), 63.0154, 1e-4);
	CHECK_NEAR(gpu_pcie_link_gbps(2, 16), 8.0, 1e-9);
	CHECK_NEAR(gpu_pcie_link_gbps(1, 8), 2.0, 1e-9);
	CHECK_NEAR(gpu_pcie_link_gbps(-1, 16), 0, 0);
	/* a link trained at half width gives half */
	CHECK_NEAR(gpu_pcie_link_gbps(4, 8) * 2, gpu_pcie_link_gbps(4, 16), 1e-9);
}

/* The one percent-of-peak rule of the harness and the report (common/gpus.h). */
static void test_pct_of_peak_rule(void)
{
	const struct gpu_ref *h100 = gpu_ref_find("H100-SXM");
	char dt[16];
	double pct, peak, bf16;
	CHECK(h100);
	if (!h100)
		return;
	bf16 = h100->peak_tflops[GPU_BF16];
	/* a GPU row counts one GPU */
	CHECK(gpu_pct_of_peak(h100, "gemm.bf16.tflops", 3, bf16 / 2, 8, 8, dt, &pct, &peak) == 0);
	CHECK_NEAR(pct, 50, 1e-9);
	CHECK_STR(dt, "bf16");
	/* the instance row counts the GPUs the bench loaded, before the inventory's */
	CHECK(gpu_pct_of_peak(h100, "gemm.bf16.tflops", -1, bf16 * 2, 2, 8, dt, &pct, &peak) == 0);
	CHECK_NEAR(pct, 100, 1e-9);
	CHECK(gpu_pct_of_peak(h100, "gemm.bf16.tflops", -1, bf16 * 2, 0, 8, dt, &pct, &peak) == 0);
	CHECK_NEAR(pct, 25, 1e-9);
	CHECK(gpu_pct_of_peak(h100, "gemm.bf16.tflops", -1, bf16, 0, 0, dt, &pct, &peak) == 0);
	CHECK_NEAR(pct, 100, 1e-9);
	CHECK(gpu_pct_of_peak(h100, "gemm.bf16.pct_of_peak", -1, 1, 0, 8, dt, &pct, &peak) == -1);
	CHECK(gpu_pct_of_peak(h100, "nvme.seqread.gbps", -1, 1, 0, 8, dt, &pct, &peak) == -1);
	/* another figure of the dtype is not its throughput: no second gemm.fp8.pct_of_peak row (issue 34) */
	CHECK(gpu_pct_of_peak(h100, "gemm.fp8.best_shape.tflops", -1, 1, 0, 8, dt, &pct, &peak) == -1);
	CHECK(gpu_pct_of_peak(h100, "gemm.bf16.tflopsx", -1, 1, 0, 8, dt, &pct, &peak) == -1);
	CHECK(gpu_pct_of_peak(NULL, "gemm.bf16.tflops", -1, 1, 0, 8, dt, &pct, &peak) == -1);
}

/* Every GPU model a shipped catalog row names has a datasheet row and one reference, with its kind. */
static int model_row(void *ud, const struct price_rec *r, long line)
{
	int *rows = ud;
	(void)line;
	double v;
	enum gpu_ref_kind kind = GPU_REF_ESTIMATE;
	const char *src = NULL;
	const struct gpu_ref *ref = gpu_ref_find(r->gpu_model);
	if (!*r->gpu_model)
		return 0;
	(*rows)++;
	if (!ref)
		fprintf(stderr, "catalog model %s has no row in gpu_refs\n", r->gpu_model);
	CHECK(ref != NULL);
	if (!ref)
		return 0;
	CHECK(gpu_reference_gemm(ref->key, gpu_headline_dtype(ref), &v, &kind, &src) == 0);
	CHECK(v > 0 && v < ref->peak_tflops[gpu_headline_dtype(ref)]);
	CHECK(src && strlen(src) > 20);
	CHECK(kind <= GPU_REF_ESTIMATE);
	return 0;
}

static void test_every_catalog_model_has_a_reference(void)
{
	for (size_t i = 0; i < catalog_shipped_count; i++) {
		int rows = 0;
		struct catalog_parser *p = catalog_parser_new(catalog_shipped[i].file, "catalog", NULL, model_row, &rows);
		CHECK(catalog_parser_feed(p, catalog_shipped[i].data,
					  (size_t)(catalog_shipped[i].end - catalog_shipped[i].data)) == 0);
		CHECK(catalog_parser_finish(p) == 0);
		catalog_parser_free(p);
		CHECK(rows > 10);
	}
}

/* An estimate says so: derived dtypes, and models with nothing published, from their nearest architecture. */
static void test_reference_kinds(void)
{
	double v, w;
	enum gpu_ref_kind k;
	const struct gpu_ref *a10g = gpu_ref_find("A10G"), *a6000 = gpu_ref_find("RTX-A6000");
	CHECK(gpu_reference_gemm("A10G", GPU_BF16, &v, &k, NULL) == 0 && k == GPU_REF_ESTIMATE);
	CHECK(gpu_reference_gemm("RTX-A6000", GPU_BF16, &w, &k, NULL) == 0 && k == GPU_REF_BURST);
	if (a10g && a6000)
		CHECK_NEAR(v / a10g->peak_tflops[GPU_BF16], w / a6000->peak_tflops[GPU_BF16], 1e-12);
	CHECK(gpu_reference_gemm("B200", GPU_FP8, &v, &k, NULL) == 0 && k == GPU_REF_ESTIMATE);
	CHECK(gpu_reference_gemm("B200", GPU_BF16, &v, &k, NULL) == 0 && k == GPU_REF_BURST && v == 1745);
	CHECK(gpu_reference_gemm("T4", GPU_BF16, &v, &k, NULL) == -1);   /* no BF16 path */
	CHECK(gpu_reference_gemm("T4", GPU_FP16, &v, &k, NULL) == 0 && v == 42);
	CHECK(gpu_reference_gemm("nope", GPU_FP16, &v, &k, NULL) == -1);
	CHECK(!strcmp(gpu_ref_kind_name(GPU_REF_SUSTAINED), "sustained"));
}

/* The one "same model" rule (identity check, ranking estimates): by reference row, else by name. */
static void test_same_model(void)
{
	CHECK(gpu_same_model("H100-SXM", "H100-SXM"));                /* stored runs carry the row's key */
	CHECK(!gpu_same_model("H100-SXM", "h100-sxm"));               /* a key is exact: one known, one not */
	CHECK(!gpu_same_model("H100-SXM", "H200"));
	CHECK(!gpu_same_model("A10", "A10G"));                        /* "A10" is not "A10G" */
	CHECK(gpu_same_model("Unknown X1", "unknown x1"));            /* no row: by name */
	CHECK(!gpu_same_model("Unknown X1", "Unknown X2"));
	CHECK(!gpu_same_model(NULL, "H100") && !gpu_same_model("H100", NULL));
}

/* Every row says when its model was announced ("YYYY-MM"): imports refuse a run dated before it (issue 52). */
static void test_every_row_has_its_announcement(void)
{
	for (size_t i = 0; i < gpu_refs_count; i++) {
		const char *r = gpu_refs[i].released;
		CHECK(r && strlen(r) == 7 && r[4] == '-' && strncmp(r, "2016", 4) > 0 && strncmp(r, "2027", 4) < 0);
	}
}

TEST_MAIN(T(test_every_row_has_its_announcement), T(test_same_model), T(test_every_catalog_model_has_a_reference), T(test_reference_kinds), T(test_pct_of_peak_rule), T(test_table_complete), T(test_rows_sane), T(test_dtype_names), T(test_match), T(test_pcie_link))
