/*
 * test_host_starved.c - HOST_STARVED (judge/flags_host.c) on both sides of
 * its thresholds: decode images/s per GPU against what a GPU of the run's
 * model trains ResNet-50 at, and triad GB/s per GPU on the GPUs' node
 * against the bytes its loader moves.  The fingerprints are built here,
 * synthetic, one number away from each edge.
 */
#include "judge/flags.h"
#include "results/fpq.h"
#include "common/gpus.h"
#include "tests/unit/t.h"

#include <jansson.h>

/* A run of `gpus` GPUs of `model` with the host bench's metrics (values < 0: absent). */
static json_t *fp_with(const char *model, int gpus, double ips, double ips_per_gpu, double triad, int on_node)
{
	json_t *m = json_array();
	if (ips >= 0)
		json_array_append_new(m, json_pack("{s:s,s:s,s:i,s:f,s:s,s:{}}", "bench", "host", "name",
						   "host.decode.images_per_s", "gpu", -1, "value", ips, "unit",
						   "images/s", "params"));
	if (ips_per_gpu >= 0)
		json_array_append_new(m, json_pack("{s:s,s:s,s:i,s:f,s:s,s:{}}", "bench", "host", "name",
						   "host.decode.images_per_s_per_gpu", "gpu", -1, "value", ips_per_gpu,
						   "unit", "images/s", "params"));
	if (triad >= 0)
		json_array_append_new(m, json_pack("{s:s,s:s,s:i,s:f,s:s,s:{s:i}}", "bench", "host", "name",
						   "host.membw.triad.gbps", "gpu", -1, "value", triad, "unit", "GB/s",
						   "params", "gpus_on_node", on_node));
	/* the model as its devices show it (issue 52: the judge reads the devices, never run.gpu_model) */
	const struct gpu_ref *ref = model ? gpu_ref_find(model) : NULL;
	json_t *inv = json_array();
	char name[64];
	snprintf(name, sizeof name, "NVIDIA %s", ref ? ref->nvml_match[0] : "");
	for (int g = 0; ref && g < gpus; g++)
		json_array_append_new(inv, json_pack("{s:i,s:s,s:I}", "index", g, "name", name, "memory_bytes",
						     (json_int_t)(ref->mem_gib * 1073741824.0)));
	return json_pack("{s:s,s:{s:s?,s:i},s:{s:o},s:[],s:o,s:[]}", "schema", "gpuvet.fingerprint/1", "run",
			 "gpu_model", model, "gpu_count", gpus, "inventory", "gpus", inv, "benches", "metrics", m,
			 "samples");
}

static const json_t *starved(const json_t *flags)
{
	size_t i;
	json_t *f;
	json_array_foreach(flags, i, f)
		if (!strcmp(json_string_value(json_object_get(f, "code")), "HOST_STARVED"))
			return f;
	return NULL;
}

/* 1 when flags_compute raises HOST_STARVED (checking its shape), 0 when not. */
static int raised(json_t *fp)
{
	json_t *flags = flags_compute(fp);
	const json_t *f = starved(flags);
	int r = f != NULL;
	if (f) {
		CHECK_STR(json_string_value(json_object_get(f, "severity")), "warning");
		const json_t *ev = json_object_get(f, "evidence");
		CHECK(json_integer_value(json_object_get(ev, "gpu")) == -1);
		CHECK(json_is_object(json_object_get(ev, "thresholds")));
		CHECK(strstr(json_string_value(json_object_get(ev, "source")), "DeepLearningExamples") != NULL);
	}
	json_decref(flags);
	json_decref(fp);
	return r;
}

static void test_need_per_model(void)
{
	/* the measured anchor: 15977 img/s / 8 A100 80GB */
	CHECK_NEAR(flags_host_need_ips(gpu_ref_find("A100-80-SXM")), 1997.0, 1e-9);
	/* H100 SXM: memory bandwidth is the smaller ratio (3350/2039 < 989.4/312) */
	CHECK_NEAR(flags_host_need_ips(gpu_ref_find("H100-SXM")), 1997.0 * 3350.0 / 2039.0, 1e-6);
	/* V100: the FP16 ratio is the smaller; 800 against the 951 NVIDIA measured */
	CHECK_NEAR(flags_host_need_ips(gpu_ref_find("V100-SXM2-16")), 1997.0 * 125.0 / 312.0, 1e-6);
	CHECK(flags_host_need_ips(NULL) < 0);
}

static void test_decode_edges(void)
{
	double need = flags_host_need_ips(gpu_ref_find("H100-SXM"));
	/* the bench's per-GPU figure */
	CHECK(raised(fp_with("H100-SXM", 8, -1, need - 0.5, -1, 0)) == 1);
	CHECK(raised(fp_with("H100-SXM", 8, -1, need + 0.5, -1, 0)) == 0);
	/* only the instance figure: divided by the run's 8 GPUs */
	CHECK(raised(fp_with("H100-SXM", 8, 8 * (need - 0.5), -1, -1, 0)) == 1);
	CHECK(raised(fp_with("H100-SXM", 8, 8 * (need + 0.5), -1, -1, 0)) == 0);
	/* the same rate is plenty for a T4 */
	CHECK(raised(fp_with("T4", 8, -1, need - 0.5, -1, 0)) == 0);
}

static void test_membw_edges(void)
{
	double need_bw = flags_host_need_ips(gpu_ref_find("H100-SXM")) * FLAG_HOST_BYTES_PER_IMAGE / 1e9;
	/* 4 GPUs on the measured node share its bandwidth */
	CHECK(raised(fp_with("H100-SXM", 8, -1, 1e6, 4 * (need_bw - 0.01), 4)) == 1);
	CHECK(raised(fp_with("H100-SXM", 8, -1, 1e6, 4 * (need_bw + 0.01), 4)) == 0);
	/* no gpus_on_node: every GPU of the run counts */
	CHECK(raised(fp_with("H100-SXM", 8, -1, 1e6, 8 * (need_bw - 0.01), 0)) == 1);
	CHECK(raised(fp_with("H100-SXM", 8, -1, 1e6, 8 * (need_bw + 0.01), 0)) == 0);
}

static void test_both_short_one_flag(void)
{
	json_t *fp = fp_with("A100-80-SXM", 8, -1, 100, 8.0, 4);
	json_t *flags = flags_compute(fp);
	size_t i, n = 0;
	json_t *f;
	json_array_foreach(flags, i, f)
		n += !strcmp(json_string_value(json_object_get(f, "code")), "HOST_STARVED");
	CHECK(n == 1);
	const json_t *ev = json_object_get(starved(flags), "evidence");
	CHECK_NEAR(json_real_value(json_object_get(ev, "decode_images_per_s_per_gpu")), 100, 1e-9);
	CHECK_NEAR(json_real_value(json_object_get(ev, "membw_triad_gbps_per_gpu")), 2.0, 1e-9);
	CHECK_NEAR(json_real_value(json_object_get(ev, "need_images_per_s")), 1997, 1e-9);
	const char *msg = json_string_value(json_object_get(starved(flags), "message"));
	CHECK(msg && strstr(msg, "jpeg decode 100 images/s per gpu") && strstr(msg, "memory bandwidth 2.0 GB/s"));
	json_decref(flags);
	json_decref(fp);
}

static void test_not_judged(void)
{
	const char *why;
	/* a model without a reference row, or no GPU: nothing to compare with */
	CHECK(raised(fp_with("NoSuchGPU", 8, -1, 1, 0.1, 4)) == 0);
	CHECK(raised(fp_with("H100-SXM", 0, 10, -1, 0.1, 0)) == 0);
	json_t *fp = fp_with("NoSuchGPU", 8, -1, 1, 0.1, 4);
	CHECK(flags_measurable(fp, "HOST_STARVED", &why) == 0 && why && strstr(why, "host bench"));
	json_decref(fp);
	fp = fp_with("H100-SXM", 8, -1, -1, -1, 0);
	CHECK(flags_measurable(fp, "HOST_STARVED", &why) == 0);
	json_decref(fp);
	fp = fp_with("H100-SXM", 8, 1000, -1, -1, 0);
	CHECK(flags_measurable(fp, "HOST_STARVED", &why) == 1);
	json_decref(fp);
	CHECK(flags_code_known("HOST_STARVED"));
}

TEST_MAIN(T(test_need_per_model), T(test_decode_edges), T(test_membw_edges), T(test_both_short_one_flag),
	  T(test_not_judged))
