/*
 * cost_predict.c - how many GPUs a job needs and how fast it runs on one
 * instance type (cost_model.h); the conventions are at the top of
 * cost_model.c and every factor is a row of cost_consts[].
 */
#include "judge/cost_model.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define GIB 1073741824.0
#define MAX_GPUS 100000

/* The band's end a prediction is made at: the central value, or the low or high end of every factor. */
enum end { MID, LO, HI };

static double kv_at(enum cost_k k, enum end e)
{
	return e == LO ? cost_consts[k].low : e == HI ? cost_consts[k].high : cost_consts[k].value;
}

static double pick(double mid, double lo, double hi, enum end e)
{
	double v = e == LO ? lo : e == HI ? hi : mid;
	return isfinite(v) && v > 0 ? v : mid;
}

/* GPUs whose usable memory holds `sharded` bytes spread over them plus `fixed` bytes each; 0 when none can. */
static int gpus_for(double usable, double fixed, double sharded)
{
	if (!(usable > fixed))
		return 0;
	double g = ceil(sharded / (usable - fixed));
	return g < 1 ? 1 : g > MAX_GPUS ? 0 : (int)g;
}

/* Activation bytes of one sequence on a GPU: kept for backward, or with checkpointing. */
static double activations(const struct cost_job *j, int ckpt)
{
	const struct cost_shape *m = &j->shape;
	double d = m->hidden, L = m->layers, S = j->seq;
	double logits = S * m->vocab * cost_k(CK_LOGIT_BYTES);
	if (!ckpt)
		return S * d * L * cost_k(CK_ACT_BYTES_PER_TOKEN_LAYER_PER_HIDDEN) + logits;
	return S * d * (L * cost_k(CK_CKPT_BYTES_PER_TOKEN_LAYER_PER_HIDDEN) +
			cost_k(CK_ACT_BYTES_PER_TOKEN_LAYER_PER_HIDDEN)) + logits;
}

/* Instances of h for g GPUs within --gpus; 0 with why when they exceed it. */
static int instances_for(const struct cost_job *j, const struct cost_hw *h, int g, struct cost_pred *p)
{
	int n = (g + h->gpus - 1) / h->gpus;
	if (n > 1 && h->gpus < cost_k(CK_CLUSTER_MIN_GPUS)) {
		snprintf(p->why, sizeof p->why, "needs %d GPUs of %.0f GiB: more than one instance of %d, and only "
			 "%.0f-GPU types are spanned (cluster fabric)", g, h->mem_gib, h->gpus, cost_k(CK_CLUSTER_MIN_GPUS));
		return 0;
	}
	if (j->max_gpus > 0 && (long)n * h->gpus > j->max_gpus) {
		snprintf(p->why, sizeof p->why, "needs %d GPU(s) (%d instance(s) of %d), more than --gpus %d", g, n,
			 h->gpus, j->max_gpus);
		return 0;
	}
	return n;
}

/* Training or LoRA tokens/s per GPU at one end of the band, for p's layout (tp, checkpointing, GPUs); *b the bound. */
static double train_rate(const struct cost_job *j, const struct cost_hw *h, const struct cost_pred *p, enum end e,
			 enum cost_bound *b)
{
	double N = cost_shape_params(&j->shape), S = j->seq, t = p->tp, G = p->gpus_used, D = G / t;
	double gemm = pick(h->gemm_tflops, h->gemm_lo, h->gemm_hi, e) * 1e12;
	/* seconds per token of one tensor-parallel group */
	double t_comp = p->flops_per_token * (p->checkpointing ? cost_k(CK_CKPT_COMPUTE_FACTOR) : 1) /
			(t * kv_at(j->task == COST_LORA ? CK_LORA_GEMM_FRACTION : CK_TRAIN_GEMM_FRACTION, e) * gemm);
	double t_tp = 0, t_dp = 0;
	if (t > 1 && isfinite(h->busbw_gbps) && h->busbw_gbps > 0)
		t_tp = j->shape.layers * cost_k(CK_TP_COLLECTIVES_PER_LAYER) * 2 * (t - 1) / t * 2.0 * j->shape.hidden /
		       (h->busbw_gbps * 1e9);
	if (D > 1) {
		/* FSDP gathers twice and reduce-scatters; DDP all-reduces; LoRA gathers sharded weights only */
		int sharded = p->gpus_needed > p->tp;
		double passes = j->task == COST_TRAIN ? (sharded ? 3 : 2) : (sharded ? 2 : 0);
		double inter = kv_at(CK_INTER_NODE_GBPS_PER_GPU, e);
		double bw = p->instances > 1 ? (isfinite(h->busbw_gbps) && h->busbw_gbps < inter ? h->busbw_gbps : inter)
					     : h->busbw_gbps;
		if (passes > 0 && isfinite(bw) && bw > 0)
			t_dp = passes * 2 * N / t * (D - 1) / D / (bw * 1e9) / S;
	}
	double overlap = kv_at(CK_OVERLAP, e), exposed = t_tp + (t_dp > overlap * t_comp ? t_dp - overlap * t_comp : 0);
	double tps = 1 / ((t_comp + exposed) * t);
	*b = exposed > t_comp ? BOUND_INTERCONNECT : BOUND_COMPUTE;
	double host = isfinite(h->h2d_gbps) && h->h2d_gbps > 0 ? h->h2d_gbps * 1e9 / cost_k(CK_TOKEN_BYTES) : INFINITY;
	if (tps > host) {
		*b = BOUND_HOST;
		return host;
	}
	return tps;
}

/* Why no layout fits: the plain one's reason (no tensor parallelism), for the row. */
static void train_why(const struct cost_job *j, const struct cost_hw *h, double usable, double states,
		      struct cost_pred *p)
{
	int limit = j->max_gpus > 0 ? j->max_gpus : MAX_GPUS;
	int g = gpus_for(usable, activations(j, 1), states);
	p->gpus_needed = g ? g : gpus_for(usable, activations(j, 0), states);
	p->checkpointing = 1;
	if (!g)
		snprintf(p->why, sizeof p->why, "one sequence of %d tokens needs %.1f GiB of activations even with "
			 "checkpointing, more than a GPU's usable %.1f GiB", j->seq, activations(j, 1) / GIB, usable / GIB);
	else if (g > limit)
		snprintf(p->why, sizeof p->why, "needs %d GPUs of %.0f GiB (%.0f GiB of %s), more than --gpus %d", g,
			 h->mem_gib, states / GIB, j->task == COST_TRAIN ? "weights, gradients and AdamW states" : "weights",
			 j->max_gpus);
	else
		instances_for(j, h, g, p);
}

/*
 * Training and LoRA: the layout, of those that fit, with the fewest instances, then the fastest:
 * tensor parallelism t = 1, 2, 4 or 8 inside an instance (dividing its GPUs and the heads; with
 * sequence parallelism it divides the activations by t), with or without activation
 * checkpointing; the weights' states sharded over every GPU used.  0 with why when none fits.
 */
static int train_fit(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *p)
{
	double usable = h->mem_gib * GIB * cost_k(CK_USABLE_MEMORY_FRACTION);
	double states = cost_shape_params(&j->shape) *
			(j->task == COST_TRAIN ? cost_k(CK_TRAIN_BYTES_PER_PARAM) : cost_weight_bytes(j));
	int limit = j->max_gpus > 0 ? j->max_gpus : MAX_GPUS;
	struct cost_pred best = { 0 }, c;
	double best_tps = 0;
	enum cost_bound b;
	for (int ck = 0; ck < 2; ck++)
		for (int t = 1; t <= 8 && t <= h->gpus; t *= 2) {
			if (h->gpus % t || j->shape.heads % t || j->shape.kv_heads % t)
				continue;
			int g = gpus_for(usable, activations(j, ck) / t, states);
			g = (g + t - 1) / t * t;
			c = *p;
			c.tp = t;
			c.checkpointing = ck;
			c.gpus_needed = g;
			if (!g || g > limit || !(c.instances = instances_for(j, h, g, &c)))
				continue;
			c.gpus_used = c.instances * h->gpus;
			double tps = train_rate(j, h, &c, MID, &b);
			if (!best.instances || c.instances < best.instances || (c.instances == best.instances && tps > best_tps)) {
				best = c;
				best_tps = tps;
			}
		}
	if (!best.instances) {
		train_why(j, h, usable, states, p);
		return 0;
	}
	*p = best;
	p->mem_gib_per_gpu = (states / p->gpus_used + activations(j, p->checkpointing) / p->tp) / GIB;
	return 1;
}

/* Inference: GPUs for the weights and the batch's KV cache; 0 with why when it does not fit. */
static int infer_fit(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *p)
{
	double usable = h->mem_gib * GIB * cost_k(CK_USABLE_MEMORY_FRACTION);
	double need = cost_shape_params(&j->shape) * cost_weight_bytes(j) +
		      (double)j->batch * j->context * cost_kv_bytes_per_token(j);
	int g = gpus_for(usable, 0, need);
	p->gpus_needed = g;
	if (!g || (j->max_gpus > 0 && g > j->max_gpus)) {
		snprintf(p->why, sizeof p->why, "weights and the KV cache of %d x %d tokens need %.1f GiB: %d GPU(s) of "
			 "%.0f GiB%s", j->batch, j->context, need / GIB, g, h->mem_gib, g ? ", more than --gpus allows" : "");
		return 0;
	}
	if (!(p->instances = instances_for(j, h, g, p)))
		return 0;
	p->gpus_used = p->instances * h->gpus;
	p->replica_gpus = g <= h->gpus ? g : p->gpus_used;
	p->mem_gib_per_gpu = need / p->replica_gpus / GIB;
	return 1;
}

/* Decode tokens/s per GPU at one end of the band: the slower of reading the bytes and doing the FLOPs. */
static double infer_rate(const struct cost_job *j, const struct cost_hw *h, const struct cost_pred *p, enum end e,
			 enum cost_bound *b)
{
	double rg = p->replica_gpus, B = j->batch;
	double bw = pick(h->mem_gbps, h->mem_lo, h->mem_hi, e) * 1e9 * kv_at(CK_DECODE_BW_FRACTION, e);
	double gemm = pick(h->gemm_tflops, h->gemm_lo, h->gemm_hi, e) * 1e12 * kv_at(CK_TRAIN_GEMM_FRACTION, e);
	double t_mem = B * p->bytes_per_token / (rg * bw);
	double t_comp = B * p->flops_per_token / (rg * gemm);
	/* the fixed part of a step: the slow end of the band takes the longest per-layer time */
	double t_layers = j->shape.layers * 1e-6 *
			  (e == LO ? cost_consts[CK_DECODE_LAYER_US].high : e == HI ? cost_consts[CK_DECODE_LAYER_US].low
									: cost_consts[CK_DECODE_LAYER_US].value);
	*b = t_mem >= t_comp ? BOUND_MEMBW : BOUND_COMPUTE;
	int replicas = p->replica_gpus < h->gpus ? h->gpus / p->replica_gpus : 1;
	double replica_tps = B / ((t_mem >= t_comp ? t_mem : t_comp) + t_layers);
	return replicas * replica_tps / (p->replica_gpus < h->gpus ? h->gpus : p->gpus_used);
}

int cost_predict(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *p)
{
	const struct cost_shape *m = &j->shape;
	double Nmm = cost_shape_matmul_params(m), L = m->layers, d = m->hidden;
	memset(p, 0, sizeof *p);
	p->tp = 1;
	p->bound = BOUND_CAPACITY;
	p->tps_gpu = p->tps_lo = p->tps_hi = p->prefill_tps_gpu = NAN;
	if (h->gpus < 1 || !(h->mem_gib > 0) || !(h->gemm_tflops > 0)) {
		snprintf(p->why, sizeof p->why, "the catalog gives no GPU count or memory for it");
		p->bound = BOUND_NONE;
		return 0;
	}
	if (j->max_gpus > 0 && h->gpus > j->max_gpus) {
		snprintf(p->why, sizeof p->why, "has %d GPUs, more than --gpus %d", h->gpus, j->max_gpus);
		p->bound = BOUND_NONE;
		return 0;
	}
	enum cost_bound b;
	if (j->task == COST_INFER) {
		double C = j->context;
		p->flops_per_token = 2 * Nmm + 4 * L * d * C;
		p->bytes_per_token = (Nmm * cost_weight_bytes(j) + j->batch * C * cost_kv_bytes_per_token(j)) / j->batch;
		if (!(h->mem_gbps > 0)) {
			snprintf(p->why, sizeof p->why, "no device-memory bandwidth, measured or in the reference");
			p->bound = BOUND_NONE;
			return 0;
		}
		if (!infer_fit(j, h, p))
			return 0;
		p->tps_lo = infer_rate(j, h, p, LO, &b);
		p->tps_hi = infer_rate(j, h, p, HI, &b);
		p->tps_gpu = infer_rate(j, h, p, MID, &b);
		p->prefill_tps_gpu = h->gemm_tflops * 1e12 * cost_k(CK_TRAIN_GEMM_FRACTION) / p->flops_per_token;
	} else {
		p->flops_per_token = (j->task == COST_TRAIN ? 6 : 4) * Nmm + 12 * L * d * j->seq;
		if (!train_fit(j, h, p))
			return 0;
		p->tps_lo = train_rate(j, h, p, LO, &b);
		p->tps_hi = train_rate(j, h, p, HI, &b);
		p->tps_gpu = train_rate(j, h, p, MID, &b);
	}
	p->bound = b;
	p->fits = 1;
	return 1;
}
