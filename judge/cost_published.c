/*
 * cost_published.c - the published check (cost_published.h): each case of
 * judge/published/cost_published.csv predicted on the reference figures of
 * its GPU model (common/gpus.c), exactly as `gpuvet cost --estimates` would
 * on an empty store, with the case's stack, GPUs, layout and settings.
 */
#include "judge/cost_published.h"
#include "judge/cost_stack.h"
#include "pricing/csvrows.h"
#include "common/embed.h"
#include "common/gpus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

GV_EMBED(gv_cost_published_csv, "judge/published/cost_published.csv");

/* Shapes of published models that are not presets (Hugging Face config.json; MPT: llm-foundry's yamls). */
#define HF(m) "Hugging Face " m "/config.json"
#define MPT "mosaicml/llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml (4x GELU MLP: --params from the table)"
static const struct cost_shape extra_shapes[] = {
	{ "llama-2-7b", 0, 32, 4096, 11008, 32, 32, 32000, 0, HF("meta-llama/Llama-2-7b-hf") },
	{ "llama-2-13b", 0, 40, 5120, 13824, 40, 40, 32000, 0, HF("meta-llama/Llama-2-13b-hf") },
	{ "llama-2-70b", 0, 80, 8192, 28672, 64, 8, 32000, 0, HF("meta-llama/Llama-2-70b-hf") },
	{ "qwen2.5-7b", 0, 28, 3584, 18944, 28, 4, 152064, 0, HF("Qwen/Qwen2.5-7B") },
	{ "mpt-1b", 0, 24, 2048, 8192, 16, 16, 50368, 1, MPT },
	{ "mpt-3b", 0, 32, 2560, 10240, 20, 20, 50368, 1, MPT },
	{ "mpt-7b", 0, 32, 4096, 16384, 32, 32, 50368, 1, MPT },
	{ "mpt-13b", 0, 40, 5120, 20480, 40, 40, 50368, 1, MPT },
	{ "mpt-30b", 0, 48, 7168, 28672, 56, 56, 50368, 1, MPT },
	{ "mpt-70b", 0, 80, 8192, 32768, 64, 64, 50368, 1, MPT },
};

static const struct cost_shape *shape_find(const char *name)
{
	const struct cost_shape *s = cost_preset_find(name);
	for (size_t i = 0; !s && i < sizeof extra_shapes / sizeof extra_shapes[0]; i++)
		if (!strcmp(extra_shapes[i].name, name))
			s = &extra_shapes[i];
	return s;
}

enum col { C_ID, C_TASK, C_STACK, C_MODEL, C_PARAMS, C_GPU, C_GPUS, C_PREC, C_SEQ, C_PROMPT, C_OUTPUT, C_CONC, C_BATCHING, C_TP,
	   C_PP, C_CP, C_PUB, C_FITTED, C_GROUP, C_SOURCE, C_NOTES, C_COUNT };

struct pub_ctx {
	json_t *rows;
	int header_seen;
	char err[256];
};

/* The reference figures of a GPU model for `gpus` GPUs in an instance, as judge/cost.c builds an estimate. */
static int ref_hw(const char *key, int gpus, int fp8, struct cost_hw *h)
{
	const struct gpu_ref *r = gpu_ref_find(key);
	const struct cost_const *hbm = &cost_consts[CK_HBM_COPY_FRACTION];
	memset(h, 0, sizeof *h);
	if (!r || gpu_reference_gemm(key, fp8 ? GPU_FP8 : gpu_headline_dtype(r), &h->gemm_tflops, NULL, NULL) < 0)
		return -1;
	h->gpus = gpus;
	h->mem_gib = r->mem_gib;
	/* the calibrated band carries the reference's own spread (cost_stack.c): no second one */
	h->gemm_lo = h->gemm_hi = h->gemm_tflops;
	h->mem_gbps = h->mem_lo = h->mem_hi = r->mem_bw_gbps * hbm->value;
	h->busbw_gbps = h->h2d_gbps = NAN;
	if (gpus > 1 && gpu_reference_floor(key, "allreduce.busbw.gbps", &h->busbw_gbps, NULL) < 0)
		h->busbw_gbps = r->nvlink_gbps / 2 * cost_k(CK_NVLINK_BUSBW_FRACTION);
	h->inter_gbps = cost_k(CK_INTER_NODE_GBPS_PER_GPU);
	return 0;
}

static int num_field(const char *s, int dflt)
{
	return s && *s ? atoi(s) : dflt;
}

/* The case's job; -1 with why when its model or task is unknown. */
static int case_job(char **f, struct cost_job *j, char *why, size_t n)
{
	const struct cost_shape *s = shape_find(f[C_MODEL]);
	int task = cost_task_from_name(f[C_TASK]);
	int stack = task < 0 ? -1 : cost_stack_from_name(f[C_STACK], task);
	static const char *const precs[] = { "bf16", "fp8", "bf16+fp8kv", "fp8+bf16kv" };
	int prec = -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(f[C_PREC], precs[i]))
			prec = i;
	if (!s || task < 0 || stack < 0 || prec < 0) {
		snprintf(why, n, "case %s: unknown model, task, stack or precision", f[C_ID]);
		return -1;
	}
	memset(j, 0, sizeof *j);
	j->shape = *s;
	if (*f[C_PARAMS])
		j->shape.params = atof(f[C_PARAMS]);
	j->task = task;
	j->stack = stack;
	/* bf16+fp8kv: bf16 weights, an fp8 KV cache (vLLM's --kv-cache-dtype fp8); fp8+bf16kv: fp8 weights, the
	 * KV cache in bf16 (vLLM's default for an fp8 checkpoint) */
	j->fp8 = prec == 1 || prec == 3;
	j->kv_dtype = prec == 2 ? 1 : prec == 3 ? 2 : 0;
	j->seq = num_field(f[C_SEQ], 4096);
	j->tokens = 1e9;
	j->prompt_tokens = num_field(f[C_PROMPT], 0);
	j->output_tokens = num_field(f[C_OUTPUT], 0);
	j->concurrency = num_field(f[C_CONC], 0);
	/* how the publisher's benchmark ran its requests (TensorRT-LLM v0.9.0's gptSessionBenchmark: all start
	 * together, prefill then decode), not a layout: the workload measured */
	j->static_batching = !strcmp(f[C_BATCHING], "static");
	j->arch = cost_arch_of(f[C_GPU]);
	return 0;
}

/*
 * What the check runs, as a user's command would say it (the layout is cost's own choice, never the
 * publisher's), and what the publisher ran: its GPUs, layout and batching, for the reader.
 */
static void settings_of(char **f, const struct cost_job *j, char *b, size_t n)
{
	int w;
	if (j->task == COST_INFER)
		w = snprintf(b, n, "--prompt-tokens %d --output-tokens %d --precision %s%s", j->prompt_tokens,
			     j->output_tokens, j->fp8 ? "fp8" : "bf16",
			     j->kv_dtype == 1 ? " --kv-dtype fp8" : j->kv_dtype == 2 ? " --kv-dtype bf16" : "");
	else
		w = snprintf(b, n, "--seq %d --precision %s%s", j->seq, j->fp8 ? "fp8" : "bf16",
			     *f[C_PARAMS] ? " --params (the table's)" : "");
	if (w > 0 && (size_t)w < n && j->concurrency > 0)
		w += snprintf(b + w, n - w, " --concurrency %d%s", j->concurrency,
			      j->concurrency_per_gpu > 0 ? " (the published load per GPU)" : "");
	if (w > 0 && (size_t)w < n)
		snprintf(b + w, n - w, "; published: %s GPU(s), TP %s PP %s CP %s%s%s%s", f[C_GPUS], f[C_TP], f[C_PP], f[C_CP],
			 *f[C_CONC] ? ", concurrency " : "", f[C_CONC], j->static_batching ? ", static batches" : "");
}

/*
 * The case predicted on the reference figures of its GPU model, in an instance of the publisher's GPUs (at
 * most 8: a bigger job spans instances of 8, as cost chooses).  A serving case's requests in flight are the
 * publisher's per GPU (C on its G GPUs), in copies of the size cost chooses: the load measured, not its layout.
 */
static int predict_case(struct cost_job *j, const char *gpu, int gpus, struct cost_hw *h, struct cost_pred *p)
{
	if (j->task == COST_INFER && j->concurrency > 0 && gpus > 1)
		j->concurrency_per_gpu = (double)j->concurrency / gpus;
	if (ref_hw(gpu, gpus < 8 ? gpus : 8, j->fp8, h) < 0)
		return -1;
	int fits = cost_predict(j, h, p);
	if (fits && j->concurrency_per_gpu > 0)   /* what a user's command says for that copy */
		j->concurrency = (int)p->concurrency;
	return fits;
}

/* One case, predicted; NULL with err when it cannot be. */
static json_t *case_json(char **f, char *err, size_t errlen)
{
	struct cost_job j;
	struct cost_hw h;
	struct cost_pred p;
	char settings[240];
	if (case_job(f, &j, err, errlen) < 0)
		return NULL;
	int gpus = num_field(f[C_GPUS], 1), fits = predict_case(&j, f[C_GPU], gpus, &h, &p);
	if (fits < 0) {
		snprintf(err, errlen, "case %s: no reference for %s", f[C_ID], f[C_GPU]);
		return NULL;
	}
	double pub = atof(f[C_PUB]);
	settings_of(f, &j, settings, sizeof settings);
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:s,s:f,s:s,s:s,s:s,s:b}", "id", f[C_ID], "model", f[C_MODEL],
			      "task", f[C_TASK], "stack", f[C_STACK], "gpu_model", f[C_GPU], "gpus", gpus, "settings",
			      settings, "published", pub, "source", f[C_SOURCE], "source_group", f[C_GROUP], "notes",
			      f[C_NOTES], "fitted", !strcmp(f[C_FITTED], "1"));
	json_object_set_new(o, "fits", json_boolean(fits));
	json_object_set_new(o, "predicted", fits ? json_real(p.tps_gpu) : json_null());
	json_object_set_new(o, "low", fits ? json_real(p.tps_lo) : json_null());
	json_object_set_new(o, "high", fits ? json_real(p.tps_hi) : json_null());
	json_object_set_new(o, "ratio", fits ? json_real(p.tps_gpu / pub) : json_null());
	json_object_set_new(o, "inside", json_boolean(fits && p.tps_lo <= pub && pub <= p.tps_hi));
	json_object_set_new(o, "band_note", p.band_note ? json_string(p.band_note) : json_null());
	json_object_set_new(o, "why", fits ? json_null() : json_string(p.why));
	json_object_set_new(o, "tp", json_integer(p.tp));
	json_object_set_new(o, "pp", json_integer(p.pp));
	json_object_set_new(o, "cp", json_integer(p.cp));
	json_object_set_new(o, "dp", json_integer(p.dp));
	json_object_set_new(o, "layout", fits ? json_string(p.layout) : json_null());
	if (j.task == COST_INFER && fits) {
		json_object_set_new(o, "concurrency", json_real(p.concurrency));
		json_object_set_new(o, "itl_ms", json_real(p.itl_s * 1e3));
		json_object_set_new(o, "ttft_ms", json_real(p.ttft_s * 1e3));
	}
	return o;
}

static int take_case(void *ud, char **fields, const size_t *lens, size_t n, long line)
{
	struct pub_ctx *c = ud;
	(void)lens;
	if (!c->header_seen) {
		c->header_seen = 1;
		return n == C_COUNT && !strcmp(fields[0], "id") ? 0 : -1;
	}
	if (n != C_COUNT) {
		snprintf(c->err, sizeof c->err, "line %ld: %zu fields, not %d", line, n, C_COUNT);
		return -1;
	}
	json_t *o = case_json(fields, c->err, sizeof c->err);
	if (!o)
		return -1;
	json_array_append_new(c->rows, o);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One task kind's summary: the cases not used to fit, their geometric-mean ratio and share inside. */
static json_t *kind_summary(const json_t *rows, const char *task)
{
	size_t i, n = 0, checked = 0, inside = 0;
	double logsum = 0, *w = malloc((json_array_size(rows) + 1) * sizeof *w);
	json_t *r;
	json_array_foreach(rows, i, r) {
		if (strcmp(json_string_value(json_object_get(r, "task")), task))
			continue;
		double lo = json_number_value(json_object_get(r, "low")), hi = json_number_value(json_object_get(r, "high"));
		if (lo > 0)
			w[n++] = hi / lo;
		if (json_is_true(json_object_get(r, "fitted")))
			continue;
		checked++;
		inside += json_is_true(json_object_get(r, "inside"));
		double ratio = json_number_value(json_object_get(r, "ratio"));
		logsum += ratio > 0 ? log(ratio) : 0;
	}
	qsort(w, n, sizeof *w, cmp_double);
	double med = n ? (n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2) : NAN;
	free(w);
	json_t *o = json_pack("{s:s,s:i,s:i,s:i}", "task", task, "cases", (json_int_t)n, "checked", (json_int_t)checked,
			      "inside", (json_int_t)inside);
	json_object_set_new(o, "share_inside", checked ? json_real((double)inside / checked) : json_null());
	json_object_set_new(o, "geomean_ratio", checked ? json_real(exp(logsum / checked)) : json_null());
	json_object_set_new(o, "median_high_over_low", isfinite(med) ? json_real(med) : json_null());
	return o;
}

static json_t *summary(const json_t *rows)
{
	json_t *groups = json_object(), *gpus = json_object(), *kinds = json_array(), *r;
	size_t i, inside = 0, checked = 0, nw = 0;
	double *w = calloc(json_array_size(rows) + 1, sizeof *w);
	json_array_foreach(rows, i, r) {
		const char *g = json_string_value(json_object_get(r, "gpu_model"));
		double lo = json_number_value(json_object_get(r, "low")), hi = json_number_value(json_object_get(r, "high"));
		if (lo > 0)
			w[nw++] = hi / lo;
		json_object_set_new(groups, json_string_value(json_object_get(r, "source_group")), json_true());
		json_object_set_new(gpus, g, json_integer(json_integer_value(json_object_get(gpus, g)) + 1));
		if (!json_is_true(json_object_get(r, "fitted")))
			checked++, inside += json_is_true(json_object_get(r, "inside"));
	}
	for (const char *const *t = (const char *const[]){ "train", "lora", "infer", NULL }; *t; t++)
		json_array_append_new(kinds, kind_summary(rows, *t));
	json_t *o = json_pack("{s:i,s:i,s:i,s:o,s:o}", "cases", (json_int_t)json_array_size(rows), "checked",
			      (json_int_t)checked, "inside", (json_int_t)inside, "by_gpu", gpus, "kinds", kinds);
	json_object_set_new(o, "share_inside", checked ? json_real((double)inside / checked) : json_null());
	qsort(w, nw, sizeof *w, cmp_double);
	json_object_set_new(o, "median_high_over_low", nw ? json_real(nw % 2 ? w[nw / 2] : (w[nw / 2 - 1] + w[nw / 2]) / 2) :
								json_null());
	json_object_set_new(o, "max_high_over_low", nw ? json_real(w[nw - 1]) : json_null());
	free(w);
	json_object_set_new(o, "sources", json_integer((json_int_t)json_object_size(groups)));
	json_object_set_new(o, "source_groups", json_pack("[]"));
	const char *k;
	json_t *v;
	json_object_foreach(groups, k, v)
		json_array_append_new(json_object_get(o, "source_groups"), json_string(k));
	json_decref(groups);
	return o;
}

json_t *cost_published_json(char *err, size_t errlen)
{
	struct pub_ctx c = { .rows = json_array() };
	struct csvrows *r = csvrows_new(take_case, &c);
	size_t len = (size_t)(gv_cost_published_csv_end - gv_cost_published_csv);
	if (csvrows_feed(r, gv_cost_published_csv, len) < 0 || csvrows_finish(r) < 0) {
		snprintf(err, errlen, "judge/published/cost_published.csv: %s", c.err[0] ? c.err : csvrows_error(r));
		csvrows_free(r);
		json_decref(c.rows);
		return NULL;
	}
	csvrows_free(r);
	json_t *o = json_object();
	json_object_set_new(o, "summary", summary(c.rows));
	json_object_set_new(o, "rows", c.rows);
	return o;
}
