/*
 * cost.c - what a described job costs on each priced instance type (see
 * cost.h).  The instance types, their prices (market, region, currency)
 * and what their runs measured come from rank_compute, one call per
 * figure: the GEMM rate of the job's dtype (per GPU, with estimates when
 * asked), device-to-device copies, all-reduce bus bandwidth and pinned
 * host-to-device copies (measured only).  What a type's runs did not
 * measure comes from the reference (common/gpus.c) and its row says so.
 */
#include "judge/cost.h"
#include "judge/cost_int.h"
#include "judge/cluster.h"
#include "judge/rank.h"
#include "results/fprun.h"
#include "results/store.h"
#include "common/gpus.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct figs {
	json_t *gemm, *d2d, *busbw, *h2d;
	json_t *fp16;   /* bf16 jobs: the fp16 GEMM ranking, for GPU models without a bf16 path (T4, V100) */
};

/* A row of the fp16 ranking that stands in for bf16: its GPU model has fp16 but no bf16 path. */
static int fp16_stand_in(const json_t *row)
{
	const struct gpu_ref *ref = gpu_ref_find(json_string_value(json_object_get(row, "gpu_model")));
	return ref && !(ref->peak_tflops[GPU_BF16] > 0) && ref->peak_tflops[GPU_FP16] > 0;
}

/* The runs each measured row's median is of (rank_gather_runs_of), found by the row of the ranking it came from. */
struct rowruns {
	const json_t *row;      /* a row of figs gemm or fp16, which own it */
	int64_t *ids;
	size_t n;
};

struct runs {
	struct rowruns *r;
	size_t n;
};

/* What cost_compute reads from the store: the rankings and the runs, once for any jobs of the same options. */
struct cost_basis {
	struct figs f;
	struct runs r;
	int fp8;
};

/* The GEMM rate a job of this precision runs at. */
static const char *gemm_metric(int fp8)
{
	return fp8 ? "gemm.fp8.tflops" : "gemm.bf16.tflops";
}

static double num(const json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The ranking options of one figure per GPU. */
static struct rank_opts rank_opts_of(const struct cost_opts *o, const char *metric, int estimates)
{
	return (struct rank_opts){ .metric = metric, .market = o->market, .region = o->region, .per = "gpu",
				   .include_estimates = estimates, .include_flagged = o->include_flagged,
				   .max_age_days = o->max_age_days, .estimates_max = o->estimates_max,
				   .left_out_max = o->left_out_max };
}

/* The ranking of one figure over the gathered runs (g NULL: read alone); NULL (err set) when nothing ranks. */
static json_t *rank_of(struct store *s, const struct rank_gather *g, const struct rank_opts *ro, char *err, size_t errlen)
{
	json_t *r = NULL;
	int rc = g ? rank_compute_gathered(s, g, ro, &r, err, errlen) : rank_compute(s, ro, &r, err, errlen);
	return rc < 0 ? NULL : r;
}

/* The row of res for the same type and profile as row; NULL when none. */
static json_t *match(json_t *res, const json_t *row)
{
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(res, "rows"), i, x)
		if (same(str(x, "provider"), str(row, "provider")) && same(str(x, "instance_type"), str(row, "instance_type")) &&
		    same(str(x, "profile"), str(row, "profile")) && !json_is_true(json_object_get(x, "estimate")))
			return x;
	return NULL;
}

/* A measured row's value with its runs' min and max, scaled (per GPU for instance totals). */
static void measured(const json_t *x, double scale, double *v, double *lo, double *hi)
{
	json_t *sp = json_object_get(x, "spread");
	*v = num(x, "value") * scale;
	*lo = json_is_object(sp) ? num(sp, "min") * scale : *v;
	*hi = json_is_object(sp) ? num(sp, "max") * scale : *v;
}

/* DRAM bandwidth per GPU: 2x the measured D2D copy rate, else the datasheet x the copy fraction. */
static void dram(const json_t *row, const struct figs *f, const struct gpu_ref *ref, struct cost_hw *h, json_t *in)
{
	json_t *x = match(f->d2d, row);
	double tf = cost_k(CK_D2D_TRAFFIC_FACTOR);
	if (x) {
		measured(x, tf, &h->mem_gbps, &h->mem_lo, &h->mem_hi);
		json_object_set_new(in, "mem_source", json_string("measured: memcpy.d2d.gbps x 2 (read and write)"));
	} else if (ref && ref->mem_bw_gbps > 0) {
		h->mem_gbps = h->mem_lo = h->mem_hi = ref->mem_bw_gbps * cost_k(CK_HBM_COPY_FRACTION);
		json_object_set_new(in, "mem_source", json_string("reference: datasheet memory bandwidth x the copy rate "
								  "measured on H100 and H200"));
	} else {
		h->mem_gbps = h->mem_lo = h->mem_hi = NAN;
		json_object_set_new(in, "mem_source", json_null());
	}
	json_object_set_new(in, "mem_gbps_per_gpu", isfinite(h->mem_gbps) ? json_real(h->mem_gbps) : json_null());
}

/* All-reduce bus bandwidth inside the instance: measured, the model's published 8-GPU floor, else NVLink or PCIe. */
static void busbw(const json_t *row, const struct figs *f, const struct gpu_ref *ref, struct cost_hw *h, json_t *in)
{
	json_t *x = match(f->busbw, row);
	double v = NAN, lo, hi;
	const char *src = NULL;
	if (h->gpus < 2) {
		src = "none: one GPU per instance";
	} else if (x) {
		measured(x, 1, &v, &lo, &hi);
		src = "measured: allreduce.busbw.gbps";
	} else if (ref && gpu_reference_floor(ref->key, "allreduce.busbw.gbps", &v, NULL) == 0) {
		src = "reference: the GPU's published 8-GPU all-reduce floor";
	} else if (ref && ref->nvlink_gbps > 0) {
		v = ref->nvlink_gbps / 2 * cost_k(CK_NVLINK_BUSBW_FRACTION);
		src = "reference: one NVLink direction x the share the published all-reduce floors reach";
	} else if (ref) {
		v = gpu_pcie_link_gbps(ref->pcie_gen, ref->pcie_width) * cost_k(CK_NVLINK_BUSBW_FRACTION);
		src = "reference: the PCIe link x the share the published all-reduce floors reach of NVLink";
	}
	h->busbw_gbps = v;
	json_object_set_new(in, "allreduce_busbw_gbps", isfinite(v) ? json_real(v) : json_null());
	json_object_set_new(in, "allreduce_source", src ? json_string(src) : json_null());
}

static void h2d(const json_t *row, const struct figs *f, const struct gpu_ref *ref, struct cost_hw *h, json_t *in)
{
	json_t *x = match(f->h2d, row);
	double lo, hi;
	h->h2d_gbps = NAN;
	if (x) {
		measured(x, 1, &h->h2d_gbps, &lo, &hi);
	} else if (!ref || gpu_reference_metric(ref->key, "memcpy.h2d.pinned.gbps", &h->h2d_gbps, NULL, NULL) < 0) {
		h->h2d_gbps = NAN;
	}
	json_object_set_new(in, "h2d_gbps_per_gpu", isfinite(h->h2d_gbps) ? json_real(h->h2d_gbps) : json_null());
	json_object_set_new(in, "h2d_source", json_string(x ? "measured: memcpy.h2d.pinned.gbps" :
							  isfinite(h->h2d_gbps) ? "reference" : "none"));
}

/* The instance type's figures from the rankings; inputs (JSON) says where each came from. */
static void hw_of(const json_t *row, const struct figs *f, struct cost_hw *h, json_t *in)
{
	const struct gpu_ref *ref = gpu_ref_find(str(row, "gpu_model"));
	int est = json_is_true(json_object_get(row, "estimate"));
	memset(h, 0, sizeof *h);
	double gc = num(row, "gpu_count");
	h->gpus = gc >= 1 && gc <= 100000 ? (int)gc : 0;   /* an imported price may say anything */
	h->mem_gib = num(row, "gpu_memory_gib");
	if (!(h->mem_gib > 0) && ref)
		h->mem_gib = ref->mem_gib;
	if (est) {
		/* the calibrated band (judge/cost_stack.c) carries the reference's own spread */
		h->gemm_tflops = h->gemm_lo = h->gemm_hi = num(row, "value");
	} else {
		measured(row, h->gpus > 0 ? 1.0 / h->gpus : NAN, &h->gemm_tflops, &h->gemm_lo, &h->gemm_hi);
		h->gemm_tflops = num(row, "value"); /* already per GPU (rank --per gpu) */
	}
	json_object_set_new(in, "gemm_tflops_per_gpu", json_real(h->gemm_tflops));
	json_object_set_new(in, "gemm_source", json_string(est ? str(row, "estimate_basis") : "measured"));
	dram(row, f, ref, h, in);
	busbw(row, f, ref, h, in);
	h2d(row, f, ref, h, in);
	/* between instances: the type's stated network (judge/published/network.csv) over its GPUs, else assumed */
	double node_gbps;
	int stated = h->gpus > 0 && cluster_stated_rate(str(row, "provider"), str(row, "instance_type"), &node_gbps, NULL) == 0;
	h->inter_gbps = stated ? node_gbps / h->gpus : cost_k(CK_INTER_NODE_GBPS_PER_GPU);
	json_object_set_new(in, "inter_node_gbps_per_gpu", json_real(h->inter_gbps));
	json_object_set_new(in, "inter_node_source", json_string(stated ? "stated: the provider's network rate for the type "
							     "over its GPUs (never measured)" : "assumed: the EFA / InfiniBand of "
							     "p5.48xlarge and DGX H100 (not stated for the type; never measured)"));
}

/* Each measured row of a ranking of metric over g, with the runs its median is of. */
static int runs_of(struct runs *r, const struct rank_gather *g, const json_t *rank, const char *metric, int stand_ins)
{
	const json_t *rows = json_object_get(rank, "rows"), *x;
	size_t i;
	json_array_foreach(rows, i, x) {
		if (json_is_true(json_object_get(x, "estimate")) || (stand_ins && !fp16_stand_in(x)))
			continue;
		int64_t *ids;
		long n = rank_gather_runs_of(g, metric, str(x, "provider"), str(x, "instance_type"), str(x, "profile"), &ids);
		if (n < 0)
			return -1;
		r->r = gv_realloc(r->r, (r->n + 1) * sizeof *r->r);
		r->r[r->n++] = (struct rowruns){ .row = x, .ids = ids, .n = (size_t)n };
	}
	return 0;
}

/* The ids of the runs a measured row's median is of. */
static json_t *run_ids(const struct runs *r, const json_t *row)
{
	json_t *ids = json_array();
	for (size_t i = 0; i < r->n; i++)
		if (r->r[i].row == row)
			for (size_t j = 0; j < r->r[i].n; j++)
				json_array_append_new(ids, json_integer(r->r[i].ids[j]));
	return ids;
}

static void runs_free(struct runs *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->r[i].ids);
	free(r->r);
}

/* json_real, or null for what is not a finite number */
static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}


/* What the row's figures rest on, in words: the runs or the reference, and the reference each unmeasured figure took. */
static void basis_of(const json_t *row, const json_t *ids, const json_t *in, char *b, size_t n)
{
	size_t i, w = 0;
	json_t *x;
	if (json_is_true(json_object_get(row, "estimate"))) {
		w = (size_t)snprintf(b, n, "estimate, gemm %s", str(row, "estimate_basis"));
	} else {
		w = (size_t)snprintf(b, n, "measured: run(s) ");
		json_array_foreach(ids, i, x)
			if (w < n)
				w += (size_t)snprintf(b + w, n - w, "%s%lld", i ? "," : "", (long long)json_integer_value(x));
		if (w < n)
			w += (size_t)snprintf(b + w, n - w, " (%s) of %s %s: gemm %.1f TFLOP/s per GPU", str(row, "profile"),
					      str(row, "provider"), str(row, "instance_type"), num(row, "value"));
	}
	const char *ms = str(in, "mem_source"), *as = str(in, "allreduce_source");
	if (w < n)
		w += (size_t)snprintf(b + w, n - w, "; DRAM %s", ms ? ms : "unknown");
	if (w < n && as)
		snprintf(b + w, n - w, "; all-reduce %s", as);
}

static void band_json(json_t *o, const char *key, double v, double lo, double hi)
{
	char k[64];
	json_object_set_new(o, key, jnum(v));
	snprintf(k, sizeof k, "%s_low", key);
	json_object_set_new(o, k, jnum(lo));
	snprintf(k, sizeof k, "%s_high", key);
	json_object_set_new(o, k, jnum(hi));
}

/* The row's money: per million tokens and for the whole job, each with its band (a faster end is a cheaper one). */
static void money(json_t *o, const struct cost_opts *c, const struct cost_pred *p, double usd_gpu_h, int gpus)
{
	double m = 1e6 / 3600.0, tok = c->job.tokens;
	double u = usd_gpu_h / p->tps_gpu * m, ulo = usd_gpu_h / p->tps_hi * m, uhi = usd_gpu_h / p->tps_lo * m;
	double per_h = p->tps_gpu * gpus * p->instances * 3600.0;
	band_json(o, "tokens_per_s_per_instance", p->tps_gpu * gpus, p->tps_lo * gpus, p->tps_hi * gpus);
	band_json(o, "usd_per_million_tokens", u, ulo, uhi);
	band_json(o, "job_hours", tok / per_h, tok / (per_h * p->tps_hi / p->tps_gpu), tok / (per_h * p->tps_lo / p->tps_gpu));
	band_json(o, "job_usd", tok * u / 1e6, tok * ulo / 1e6, tok * uhi / 1e6);
}

/* The stack the row assumes, said in its basis, and why its band is wider when it is. */
static void stack_basis(const struct cost_job *j, const struct cost_pred *p, char *b, size_t n)
{
	size_t w = strlen(b);
	if (w < n)
		w += (size_t)snprintf(b + w, n - w, "; stack %s%s", cost_stack_name(cost_job_stack(j->task, j->stack)),
				      j->stack == STACK_DEFAULT ? " (the default)" : "");
	if (w < n && p->band_note)
		snprintf(b + w, n - w, "; %s", p->band_note);
}

/* The prediction's own fields of a row: the layout, the model's figures, serving's latencies. */
static void pred_fields(json_t *o, const struct cost_job *j, const struct cost_pred *p, int fits, int known)
{
	int inf = j->task == COST_INFER;
	json_object_set_new(o, "stack", json_string(cost_stack_name(cost_job_stack(j->task, j->stack))));
	json_object_set_new(o, "activation_checkpointing", json_boolean(fits && p->checkpointing));
	json_object_set_new(o, "tensor_parallel", fits ? json_integer(p->tp) : json_null());
	json_object_set_new(o, "pipeline_parallel", fits && !inf ? json_integer(p->pp) : json_null());
	json_object_set_new(o, "context_parallel", fits && !inf ? json_integer(p->cp) : json_null());
	json_object_set_new(o, "data_parallel", fits ? json_integer(p->dp) : json_null());
	json_object_set_new(o, "memory_gib_per_gpu", fits ? jnum(p->mem_gib_per_gpu) : json_null());
	json_object_set_new(o, "flops_per_token", known ? jnum(p->flops_per_token) : json_null());
	json_object_set_new(o, "bytes_per_token", known && inf ? jnum(p->bytes_per_token) : json_null());
	json_object_set_new(o, "prefill_tokens_per_s_per_gpu", fits && inf ? jnum(p->prefill_tps_gpu) : json_null());
	json_object_set_new(o, "concurrency", fits && inf ? jnum(p->concurrency) : json_null());
	/* a request the machine lowered (the KV cache holds fewer in flight than --concurrency asked): said */
	json_object_set_new(o, "concurrency_asked", inf && j->concurrency > 0 && !j->decode_only ?
			    json_integer(j->concurrency) : json_null());
	json_object_set_new(o, "concurrency_lowered", json_boolean(fits && inf && !j->decode_only && j->concurrency > 0 &&
								   p->concurrency < j->concurrency));
	band_json(o, "ttft_s", fits && inf ? p->ttft_s : NAN, fits && inf ? p->ttft_lo : NAN, fits && inf ? p->ttft_hi : NAN);
	band_json(o, "itl_s", fits && inf ? p->itl_s : NAN, fits && inf ? p->itl_lo : NAN, fits && inf ? p->itl_hi : NAN);
	json_object_set_new(o, "band_note", p->band_note ? json_string(p->band_note) : json_null());
	json_object_set_new(o, "layout", fits ? json_string(p->layout) : json_null());
}

static json_t *row_json(const struct cost_opts *c, const json_t *row, const struct figs *f, const struct runs *r)
{
	struct cost_hw h;
	struct cost_pred p;
	json_t *in = json_object(), *o = json_object();
	int est = json_is_true(json_object_get(row, "estimate"));
	hw_of(row, f, &h, in);
	struct cost_job j = c->job;
	const struct gpu_ref *ref = gpu_ref_find(str(row, "gpu_model"));
	j.arch = cost_arch_of(ref ? ref->key : str(row, "gpu_model"));
	cost_predict(&j, &h, &p);
	json_t *ids = est ? json_array() : run_ids(r, row);
	char basis[800];
	basis_of(row, ids, in, basis, sizeof basis);
	stack_basis(&j, &p, basis, sizeof basis);
	if (p.fits && j.task == COST_INFER && !j.decode_only && j.concurrency > 0 && p.concurrency < j.concurrency) {
		size_t w = strlen(basis);
		snprintf(basis + w, sizeof basis - w, "; at most %.0f in flight (--concurrency %d): the KV cache holds no more",
			 p.concurrency, j.concurrency);
	}
	double usd_gpu_h = num(row, "price_per_hour");
	json_object_set_new(o, "provider", json_string(str(row, "provider")));
	json_object_set_new(o, "instance_type", json_string(str(row, "instance_type")));
	json_object_set_new(o, "region", json_string(str(row, "region") ? str(row, "region") : ""));
	json_object_set_new(o, "zone", str(row, "zone") ? json_string(str(row, "zone")) : json_null());
	json_object_set_new(o, "gpu_model", json_is_string(json_object_get(row, "gpu_model")) ?
			    json_string(str(row, "gpu_model")) : json_null());
	json_object_set_new(o, "gpu_count", h.gpus > 0 ? json_integer(h.gpus) : json_null());
	json_object_set_new(o, "gpu_memory_gib", jnum(h.mem_gib));
	json_object_set_new(o, "price_per_hour", jnum(usd_gpu_h * h.gpus));
	json_object_set_new(o, "currency", json_string("USD"));
	json_object_set_new(o, "market", json_string(c->market ? c->market : "on_demand"));
	json_object_set_new(o, "interruptible", json_boolean(json_is_true(json_object_get(row, "interruptible"))));
	json_object_set_new(o, "fits", json_boolean(p.fits));
	json_object_set_new(o, "why", p.fits ? json_null() : json_string(p.why));
	json_object_set_new(o, "gpus_needed", p.gpus_needed > 0 ? json_integer(p.gpus_needed) : json_null());
	json_object_set_new(o, "instances", p.fits ? json_integer(p.instances) : json_null());
	json_object_set_new(o, "gpus_used", p.fits ? json_integer(p.gpus_used) : json_null());
	band_json(o, "tokens_per_s_per_gpu", p.tps_gpu, p.tps_lo, p.tps_hi);
	if (p.fits)
		money(o, c, &p, usd_gpu_h, h.gpus);
	else
		for (const char *const *k = (const char *const[]){ "tokens_per_s_per_instance", "usd_per_million_tokens",
								    "job_hours", "job_usd", NULL }; *k; k++)
			band_json(o, *k, NAN, NAN, NAN);
	const char *bound = cost_bound_name(p.bound);
	json_object_set_new(o, "bound", bound ? json_string(bound) : json_null());
	json_object_set_new(o, "basis", json_string(basis));
	json_object_set_new(o, "estimate", json_boolean(est));
	json_object_set_new(o, "profile", est ? json_null() : json_string(str(row, "profile")));
	json_object_set_new(o, "runs", ids);
	pred_fields(o, &j, &p, p.fits, 1);
	json_object_set_new(o, "inputs", in);
	return o;
}

/*
 * Fitting rows first, cheapest per million tokens first, measured and estimated together (each marked: rank 1
 * is the cheapest row, whatever its basis; a tie goes to the measured one), then the ones that do not fit.
 */
static int cmp_rows(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	int fx = json_is_true(json_object_get(x, "fits")), fy = json_is_true(json_object_get(y, "fits"));
	if (fx != fy)
		return fy - fx;
	double ux = num(x, "usd_per_million_tokens"), uy = num(y, "usd_per_million_tokens");
	if (fx && ux != uy)
		return ux < uy ? -1 : 1;
	int ex = json_is_true(json_object_get(x, "estimate")), ey = json_is_true(json_object_get(y, "estimate"));
	if (fx && ex != ey)
		return ex - ey;
	int c = strcmp(str(x, "provider"), str(y, "provider"));
	return c ? c : strcmp(str(x, "instance_type"), str(y, "instance_type"));
}

static json_t *job_json(const struct cost_opts *o)
{
	const struct cost_job *j = &o->job;
	const struct cost_shape *m = &j->shape;
	json_t *sh = json_pack("{s:s?,s:f,s:f,s:i,s:i,s:i,s:i,s:i,s:i,s:b,s:s?}", "name", m->name, "params",
			       cost_shape_params(m), "matmul_params", cost_shape_matmul_params(m), "layers", m->layers,
			       "hidden", m->hidden, "ffn", m->ffn, "heads", m->heads, "kv_heads", m->kv_heads, "vocab",
			       m->vocab, "tied_embeddings", m->tied, "source", m->source);
	json_t *jj = json_pack("{s:o,s:s,s:i,s:f,s:s,s:i}", "model", sh, "task", cost_task_name(j->task), "seq", j->seq,
			       "tokens", j->tokens, "precision", j->fp8 ? "fp8" : "bf16", "max_gpus", j->max_gpus);
	json_object_set_new(jj, "stack", json_string(cost_stack_name(cost_job_stack(j->task, j->stack))));
	if (j->task == COST_INFER) {
		json_object_set_new(jj, "decode_only", json_boolean(j->decode_only));
		json_object_set_new(jj, "batch", j->decode_only ? json_integer(j->batch) : json_null());
		json_object_set_new(jj, "context", j->decode_only ? json_integer(j->context) : json_null());
		json_object_set_new(jj, "prompt_tokens", j->decode_only ? json_null() : json_integer(j->prompt_tokens));
		json_object_set_new(jj, "output_tokens", j->decode_only ? json_null() : json_integer(j->output_tokens));
		json_object_set_new(jj, "concurrency", j->decode_only || !j->concurrency ? json_null() :
				    json_integer(j->concurrency));
		json_object_set_new(jj, "kv_dtype", json_string(cost_kv_elem_bytes(j) == 1 ? "fp8" : "bf16"));
		json_object_set_new(jj, "kv_bytes_per_token", json_real(cost_kv_bytes_per_token(j)));
	}
	return jj;
}

static json_t *constants_json(void)
{
	json_t *a = json_array();
	for (int k = 0; k < CK_COUNT; k++) {
		const struct cost_const *c = &cost_consts[k];
		json_array_append_new(a, json_pack("{s:s,s:f,s:f,s:f,s:s,s:s}", "name", c->name, "value", c->value, "low",
						   c->low, "high", c->high, "unit", c->unit, "source", c->source));
	}
	return a;
}

/* The rows in order, from the GEMM ranking's rows. */
static json_t *rows_of(const struct cost_opts *o, const struct figs *f, const struct runs *r)
{
	json_t *rows = json_object_get(f->gemm, "rows"), *r16 = json_object_get(f->fp16, "rows"), *x;
	size_t n = 0, i;
	json_t **v = gv_malloc((json_array_size(rows) + json_array_size(r16) + 1) * sizeof *v);
	json_array_foreach(rows, i, x)
		v[n++] = row_json(o, x, f, r);
	json_array_foreach(r16, i, x) {
		if (!fp16_stand_in(x))
			continue;
		v[n] = row_json(o, x, f, r);
		json_object_set_new(json_object_get(v[n], "inputs"), "gemm_metric", json_string("gemm.fp16.tflops"));
		json_object_set_new(v[n], "basis", json_pack("s++", "fp16 GEMM (no bf16 path); ",
							     json_string_value(json_object_get(v[n], "basis")), ""));
		n++;
	}
	qsort(v, n, sizeof *v, cmp_rows);
	json_t *out = json_array();
	for (i = 0; i < n; i++) {   /* a rank for the rows that fit; the others are listed, not ranked */
		json_object_set_new(v[i], "rank", json_is_true(json_object_get(v[i], "fits")) ?
				    json_integer((json_int_t)i + 1) : json_null());
		json_array_append_new(out, v[i]);
	}
	free(v);
	return out;
}

/* rank's measured types without a price; the unpriced ones that could be estimated are cost's own to list, by its
   rule (cost_more.c: its GPU has a reference, over the same walk, judge/unpriced.c) */
static json_t *measured_unpriced(json_t *un)
{
	json_t *out = json_array(), *x;
	size_t i;
	json_array_foreach(un, i, x)
		if (!json_is_true(json_object_get(x, "estimate")))
			json_array_append(out, x);
	return out;
}

/* rank's types without a GEMM figure, their why in this command's words (no --metric here: --precision) */
static json_t *unranked_json(json_t *un, int fp8, const json_t *r16)
{
	json_t *out = json_array(), *x, *y;
	size_t i, k;
	json_array_foreach(un, i, x) {
		int ranked = 0;
		json_array_foreach(json_object_get(r16, "rows"), k, y)
			ranked |= fp16_stand_in(y) && same(str(y, "provider"), str(x, "provider")) &&
				  same(str(y, "instance_type"), str(x, "instance_type"));
		if (ranked)
			continue;   /* listed with its fp16 rate */
		json_t *c = json_deep_copy(x);
		const char *why = str(x, "why");
		if (why && strstr(why, " has no ") && strstr(why, " path"))
			json_object_set_new(c, "why", json_string(fp8 ? "its GPU has no fp8 path: use --precision bf16"
								      : "its GPU has no bf16 or fp16 reference"));
		json_array_append_new(out, c);
	}
	return out;
}

/*
 * What the table res leaves out, said (cost_more.c): with estimates, the
 * types without a price here; without, how many estimates would fit (the
 * table made again with them; 0 when it cannot be).  0, or -1 with err set.
 */
static int say_left_out(struct store *s, const struct cost_opts *o, json_t *res, char *err, size_t errlen)
{
	struct cost_opts e = *o;
	char ignored[256];
	json_t *with = NULL;
	if (o->include_estimates)
		return cost_list_unpriced(s, o, res, err, errlen);
	e.include_estimates = 1;
	e.say_left_out = 0;
	(void)cost_compute(s, &e, &with, ignored, sizeof ignored);   /* with stays NULL when it fails */
	json_object_set_new(res, "estimates_that_fit", json_integer(cost_estimates_that_fit(with)));
	json_decref(with);
	return 0;
}

static void figs_free(struct figs *f)
{
	json_decref(f->gemm);
	json_decref(f->d2d);
	json_decref(f->busbw);
	json_decref(f->h2d);
	json_decref(f->fp16);
}

void cost_basis_free(struct cost_basis *b)
{
	if (!b)
		return;
	figs_free(&b->f);
	runs_free(&b->r);
	free(b);
}

size_t cost_rank_opts(const struct cost_opts *o, struct rank_opts *ro)
{
	ro[0] = rank_opts_of(o, gemm_metric(o->job.fp8), o->include_estimates);
	ro[1] = rank_opts_of(o, "memcpy.d2d.gbps", 0);
	ro[2] = rank_opts_of(o, "allreduce.busbw.gbps", 0);
	ro[3] = rank_opts_of(o, "memcpy.h2d.pinned.gbps", 0);
	ro[4] = rank_opts_of(o, "gemm.fp16.tflops", o->include_estimates);   /* bf16 jobs only */
	return o->job.fp8 ? 4 : 5;
}

int cost_basis_load(struct store *s, const struct rank_gather *given, const struct cost_opts *o, struct cost_basis **out,
		    char *err, size_t errlen)
{
	struct cost_basis *b = gv_calloc(1, sizeof *b);
	char ignored[256];
	*out = NULL;
	b->fp8 = o->job.fp8;
	/* the five figures' rankings over one read of the runs and their metric rows (rank_gather) */
	struct rank_opts ro[COST_RANKINGS];
	size_t nro = cost_rank_opts(o, ro);
	struct rank_gather *own = given ? NULL : rank_gather_new(s, ro, nro, ignored, sizeof ignored);
	const struct rank_gather *g = given ? given : own;
	if (!g) {
		snprintf(err, errlen, "%s", ignored);
		free(b);
		return -1;
	}
	if (!(b->f.gemm = rank_of(s, g, &ro[0], err, errlen))) {
		rank_gather_delete(own);
		free(b);
		return -1;
	}
	b->f.d2d = rank_of(s, g, &ro[1], ignored, sizeof ignored);
	b->f.busbw = rank_of(s, g, &ro[2], ignored, sizeof ignored);
	b->f.h2d = rank_of(s, g, &ro[3], ignored, sizeof ignored);
	if (nro > 4)
		b->f.fp16 = rank_of(s, g, &ro[4], ignored, sizeof ignored);
	/* the runs of each measured row, from the gather its median was counted on */
	int rc = runs_of(&b->r, g, b->f.gemm, gemm_metric(b->fp8), 0) ||
		 (b->f.fp16 && runs_of(&b->r, g, b->f.fp16, "gemm.fp16.tflops", 1));
	rank_gather_delete(own);
	if (rc) {
		snprintf(err, errlen, "the runs of a %s row were not read with it", gemm_metric(b->fp8));
		cost_basis_free(b);
		return -1;
	}
	*out = b;
	return 0;
}

int cost_compute_on(struct store *s, const struct cost_basis *b, const struct cost_opts *o, json_t **out, char *err,
		    size_t errlen)
{
	*out = NULL;
	if (!b->fp8 != !o->job.fp8)
		return gv_errf(err, errlen, "a job of another precision than the figures read for it");
	json_t *res = json_object();
	json_object_set_new(res, "job", job_json(o));
	json_object_set_new(res, "metric", json_string(gemm_metric(b->fp8)));
	json_object_set_new(res, "market", json_string(o->market ? o->market : "on_demand"));
	json_object_set_new(res, "region", o->region ? json_string(o->region) : json_null());
	json_object_set_new(res, "rows", rows_of(o, &b->f, &b->r));
	json_object_set_new(res, "unranked", unranked_json(json_object_get(b->f.gemm, "unranked"), o->job.fp8, b->f.fp16));
	json_object_set_new(res, "unpriced", measured_unpriced(json_object_get(b->f.gemm, "unpriced")));
	json_object_set(res, "runs_left_out", json_object_get(b->f.gemm, "runs_left_out"));
	json_object_set_new(res, "constants", constants_json());
	if (o->say_left_out && say_left_out(s, o, res, err, errlen) < 0) {
		json_decref(res);
		res = NULL;
	}
	*out = res;
	return res ? 0 : -1;
}

int cost_compute(struct store *s, const struct cost_opts *o, json_t **out, char *err, size_t errlen)
{
	struct cost_basis *b = NULL;
	*out = NULL;
	if (cost_basis_load(s, NULL, o, &b, err, errlen))
		return -1;
	int rc = cost_compute_on(s, b, o, out, err, errlen);
	cost_basis_free(b);
	return rc;
}

/* A run's instance-level (gpu -1) value of a metric; NAN when it has none. */
static double run_metric(struct fprun *r, const char *name)
{
	double v;
	return fprun_value(r, name, -1, &v) ? NAN : v;
}

int cost_of_run(struct fprun *r, const struct cost_job *j, struct cost_hw *h, struct cost_pred *p, char *why,
		size_t whylen)
{
	const struct gpu_ref *ref = r->d.done && r->d.model_state == FP_MODEL_RESOLVED ? r->d.model : NULL;
	const char *metric = gemm_metric(j->fp8);
	double mem = r->inv.ngpus ? r->inv.gpus[0].memory_bytes : NAN;
	struct cost_job jj = *j;
	memset(h, 0, sizeof *h);
	memset(p, 0, sizeof *p);   /* a run not costed still has its row written from p (no band note, no layout) */
	h->gpus = r->d.ngpu;
	h->mem_gib = mem > 0 ? mem / 1073741824.0 : ref ? ref->mem_gib : NAN;
	h->gemm_tflops = h->gemm_lo = h->gemm_hi = h->gpus > 0 ? run_metric(r, metric) / h->gpus : NAN;
	if (h->gemm_tflops > 0 && !ref) {   /* the devices, never the run's label, name the model costed */
		snprintf(why, whylen, "not costed: %s (a run is costed as the GPU model its devices show, never as its "
			 "label says)", !r->d.done ? "the run was not derived" : r->d.model_state == FP_MODEL_NONE ?
			 "the inventory lists no gpu" : r->d.model_why);
		return -1;
	}
	if (!(h->gemm_tflops > 0) || !(h->mem_gib > 0)) {
		snprintf(why, whylen, "the run measured no %s (or names no GPUs): nothing to predict from", metric);
		return -1;
	}
	jj.arch = cost_arch_of(ref->key);
	double d2d = run_metric(r, "memcpy.d2d.gbps");
	const struct cost_const *c = &cost_consts[CK_HBM_COPY_FRACTION];
	if (d2d > 0) {
		h->mem_gbps = h->mem_lo = h->mem_hi = d2d * cost_k(CK_D2D_TRAFFIC_FACTOR);
	} else {
		h->mem_gbps = ref->mem_bw_gbps * c->value;
		h->mem_lo = ref->mem_bw_gbps * c->low;
		h->mem_hi = ref->mem_bw_gbps * c->high;
	}
	double bus = run_metric(r, "allreduce.busbw.gbps");
	h->busbw_gbps = h->gpus > 1 && bus > 0 ? bus : NAN;
	if (h->gpus > 1 && !(bus > 0) && gpu_reference_floor(ref->key, "allreduce.busbw.gbps", &bus, NULL) == 0)
		h->busbw_gbps = bus;
	h->h2d_gbps = run_metric(r, "memcpy.h2d.pinned.gbps");
	h->inter_gbps = cost_k(CK_INTER_NODE_GBPS_PER_GPU);
	return cost_predict(&jj, h, p);
}

json_t *cost_run_json(struct fprun *fp, int64_t run_id, const struct cost_opts *o)
{
	struct cost_hw h;
	struct cost_pred p;
	char why[400], basis[600];
	int rc = cost_of_run(fp, &o->job, &h, &p, why, sizeof why);
	json_t *r = json_object(), *in = json_object();
	json_object_set_new(r, "run", json_integer(run_id));
	json_object_set_new(r, "gpu_model", fp->d.done && fp->d.model_state == FP_MODEL_RESOLVED ?
			    json_string(fp->d.model->key) : json_null());
	json_object_set_new(r, "gpu_count", h.gpus > 0 ? json_integer(h.gpus) : json_null());
	json_object_set_new(r, "gpu_memory_gib", jnum(h.mem_gib));
	json_object_set_new(r, "fits", json_boolean(rc == 1));
	json_object_set_new(r, "why", rc == 1 ? json_null() : json_string(rc < 0 ? why : p.why));
	json_object_set_new(r, "gpus_needed", rc >= 0 && p.gpus_needed > 0 ? json_integer(p.gpus_needed) : json_null());
	json_object_set_new(r, "instances", rc == 1 ? json_integer(p.instances) : json_null());
	band_json(r, "tokens_per_s_per_gpu", rc == 1 ? p.tps_gpu : NAN, rc == 1 ? p.tps_lo : NAN, rc == 1 ? p.tps_hi : NAN);
	const char *bound = rc >= 0 ? cost_bound_name(p.bound) : NULL;
	json_object_set_new(r, "bound", bound ? json_string(bound) : json_null());
	snprintf(basis, sizeof basis, "measured: run %lld's own figures (DRAM %s; all-reduce %s)", (long long)run_id,
		 run_metric(fp, "memcpy.d2d.gbps") > 0 ? "measured" : "reference",
		 run_metric(fp, "allreduce.busbw.gbps") > 0 ? "measured" : h.gpus > 1 ? "reference" : "none");
	stack_basis(&o->job, &p, basis, sizeof basis);
	json_object_set_new(r, "basis", json_string(basis));
	json_object_set_new(r, "estimate", json_false());
	pred_fields(r, &o->job, &p, rc == 1, rc >= 0);
	json_object_set_new(in, "gemm_tflops_per_gpu", jnum(h.gemm_tflops));
	json_object_set_new(in, "mem_gbps_per_gpu", jnum(h.mem_gbps));
	json_object_set_new(in, "allreduce_busbw_gbps", jnum(h.busbw_gbps));
	json_object_set_new(in, "h2d_gbps_per_gpu", jnum(h.h2d_gbps));
	json_object_set_new(in, "inter_node_gbps_per_gpu", jnum(h.inter_gbps));
	json_object_set_new(r, "inputs", in);
	json_t *res = json_object();
	json_object_set_new(res, "job", job_json(o));
	json_object_set_new(res, "run", json_integer(run_id));
	json_object_set_new(res, "rows", json_pack("[o]", r));
	json_object_set_new(res, "constants", constants_json());
	return res;
}
