/*
 * cost_predict.c - how many GPUs a training or LoRA job needs, in what
 * layout, and how fast it runs on one instance type under its stack
 * (cost_model.h); serving is cost_serve.c.  The conventions are at the top
 * of cost_model.c, every factor is a row of cost_consts[] or, per stack,
 * of cost_effs[] (cost_stack.c), and the band is the calibrated one.  What
 * it shares with cost_serve.c is below both, in cost_predict_util.c.
 */
#include "judge/cost_predict_int.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

/*
 * Bytes of the job's states: those every GPU of a model-parallel group holds, and those sharded over all
 * GPUs.  FSDP (PyTorch, or Megatron's when fsdp) shards everything; Megatron's distributed optimizer keeps
 * the bf16 weights and gradients on every copy and shards the 12 bytes of fp32 master weights and moments.
 */
static void states_of(const struct cost_job *j, int fsdp, double *per_group, double *sharded)
{
	double N = cost_shape_params(&j->shape);
	*per_group = *sharded = 0;
	if (j->task == COST_LORA)
		*(fsdp ? sharded : per_group) = N * cost_weight_bytes(j);
	else if (!fsdp)
		*per_group = 4 * N, *sharded = (cost_k(CK_TRAIN_BYTES_PER_PARAM) - 4) * N;
	else
		*sharded = cost_k(CK_TRAIN_BYTES_PER_PARAM) * N;
}

/* Training or LoRA tokens/s per GPU at one end of the band, for p's layout; *b the bound. */
static double train_rate(const struct cost_job *j, const struct cost_hw *h, const struct cost_pred *p, double eff,
			 enum cost_end e, enum cost_bound *b)
{
	enum cost_stack s = cost_job_stack(j->task, j->stack);
	double N = cost_shape_params(&j->shape), S = j->seq, t = p->tp, m = p->tp * p->pp * p->cp;
	double D = (double)p->gpus_used / m, gemm = cost_pick(h->gemm_tflops, h->gemm_lo, h->gemm_hi, e) * 1e12;
	/* seconds per token of one model-parallel group */
	double t_comp = p->flops_per_token * (p->checkpointing ? cost_k(CK_CKPT_TIME_FACTOR) : 1) / (m * eff * gemm);
	double bubble = p->pp > 1 ? (p->pp - 1) / (cost_k(CK_PIPELINE_MICROBATCHES) * cost_k(CK_PIPELINE_VIRTUAL)) : 0;
	if (p->pp > 1 && s != STACK_MEGATRON)
		t_comp /= cost_k(CK_TORCH_PIPELINE_FACTOR);
	double t_tp = 0, t_dp = 0;
	/* Megatron overlaps its tensor-parallel collectives with the GEMMs (tp_comm_overlap); torch's are exposed */
	if (t > 1 && s != STACK_MEGATRON && isfinite(h->busbw_gbps) && h->busbw_gbps > 0)
		t_tp = j->shape.layers / (double)p->pp * cost_k(CK_TP_COLLECTIVES_PER_LAYER) * 2 * (t - 1) / t * 2.0 *
		       j->shape.hidden / (h->busbw_gbps * 1e9) / p->cp;
	if (D > 1) {
		/* FSDP gathers twice and reduce-scatters per micro-batch; Megatron's distributed optimizer once a step */
		int fsdp = p->fsdp;
		double passes = j->task == COST_TRAIN ? (fsdp ? 3 : 2) : (fsdp && p->gpus_needed > m ? 2 : 0);
		double batch = fsdp ? fmax(S, cost_k(CK_FSDP_BATCH_TOKENS)) : S * cost_k(CK_PIPELINE_MICROBATCHES);
		double inter = cost_k_at(CK_INTER_NODE_GBPS_PER_GPU, e);
		double bw = p->instances > 1 ? (isfinite(h->busbw_gbps) && h->busbw_gbps < inter ? h->busbw_gbps : inter)
					     : h->busbw_gbps;
		if (passes > 0 && isfinite(bw) && bw > 0)
			t_dp = passes * 2 * N / (t * p->pp) * (D - 1) / D / (bw * 1e9) / batch;
	}
	double overlap = cost_k(CK_OVERLAP), exposed = t_tp + (t_dp > overlap * t_comp ? t_dp - overlap * t_comp : 0);
	double tps = 1 / ((t_comp * (1 + bubble) + exposed) * m);
	*b = exposed > t_comp ? BOUND_INTERCONNECT : BOUND_COMPUTE;
	double host = isfinite(h->h2d_gbps) && h->h2d_gbps > 0 ? h->h2d_gbps * 1e9 / cost_k(CK_TOKEN_BYTES) : INFINITY;
	if (tps > host) {
		*b = BOUND_HOST;
		return host;
	}
	return tps;
}

/* Why no layout fits: the plain one's reason, for the row. */
static void train_why(const struct cost_job *j, const struct cost_hw *h, double usable, double states,
		      struct cost_pred *p)
{
	int limit = j->max_gpus > 0 ? j->max_gpus : COST_MAX_GPUS;
	int g = cost_gpus_for(usable, activations(j, 1), states);
	p->gpus_needed = g ? g : cost_gpus_for(usable, activations(j, 0), states);
	p->checkpointing = 1;
	if (!g)
		snprintf(p->why, sizeof p->why, "one sequence of %d tokens needs %.1f GiB of activations even with "
			 "checkpointing, more than a GPU's usable %.1f GiB", j->seq, activations(j, 1) / COST_GIB,
			 usable / COST_GIB);
	else if (j->gpus > 0)
		snprintf(p->why, sizeof p->why, "does not fit %d GPUs of %.0f GiB in the layout given", j->gpus, h->mem_gib);
	else if (g > limit)
		snprintf(p->why, sizeof p->why, "needs %d GPUs of %.0f GiB (%.0f GiB of %s), more than --gpus %d", g,
			 h->mem_gib, states / COST_GIB,
			 j->task == COST_TRAIN ? "weights, gradients and AdamW states" : "weights", j->max_gpus);
	else
		cost_instances_for(j, h, g, p);
}

/* The GPUs a layout needs (a multiple of its group, or exactly --gpus given to the published check); 0: none. */
static int layout_gpus(const struct cost_job *j, const struct cost_hw *h, const struct cost_pred *c)
{
	double usable = h->mem_gib * COST_GIB * cost_k(CK_USABLE_MEMORY_FRACTION), grp, shard;
	int m = c->tp * c->pp * c->cp;
	states_of(j, c->fsdp, &grp, &shard);
	double fixed = grp / (c->tp * c->pp) + activations(j, c->checkpointing) / (c->tp * c->cp);
	int g = shard > 0 ? cost_gpus_for(usable, fixed, shard) : usable > fixed ? 1 : 0;
	if (!g)
		return 0;
	g = g < m ? m : (g + m - 1) / m * m;
	if (j->gpus > 0)
		return j->gpus >= g && j->gpus % m == 0 ? j->gpus : 0;
	return g;
}

/* A layout's dimension: the one given, else every power of two up to max the test allows. */
#define FOR_DIM(v, given, max) for (int v = (given) > 0 ? (given) : 1; v <= ((given) > 0 ? (given) : (max)); v *= 2)

/*
 * Training and LoRA: the layout, of those that fit, with the fewest instances, then the fastest:
 * tensor parallelism (1-8 inside an instance, dividing its GPUs and the heads), for Megatron also
 * pipeline (1-16 stages dividing the layers) and context parallelism (2 from 8192 tokens), with or
 * without activation checkpointing.  0 with why when none fits.
 */
static int train_fit(const struct cost_job *j, const struct cost_hw *h, double eff, struct cost_pred *p)
{
	enum cost_stack s = cost_job_stack(j->task, j->stack);
	int meg = s == STACK_MEGATRON, limit = j->max_gpus > 0 ? j->max_gpus : COST_MAX_GPUS;
	struct cost_pred best = { 0 }, c;
	double best_tps = 0;
	enum cost_bound b;
	for (int ck = 0; ck < 2; ck++)
	for (int fs = !meg; fs < 2; fs++)
		FOR_DIM(t, j->tp, h->gpus < 8 ? h->gpus : 8)
			FOR_DIM(pp, j->pp, meg ? 16 : 1)
				FOR_DIM(cp, j->cp, meg && j->seq >= 8192 ? 2 : 1) {
					if (!j->tp && (h->gpus % t || j->shape.heads % t || (j->shape.kv_heads % t && t % j->shape.kv_heads)))
						continue;
					if (!j->pp && j->shape.layers % pp)
						continue;
					c = *p;
					c.tp = t, c.pp = pp, c.cp = cp, c.checkpointing = ck, c.fsdp = fs;
					int g = layout_gpus(j, h, &c);
					c.gpus_needed = g;
					if (!g || g > limit || !(c.instances = cost_instances_for(j, h, g, &c)))
						continue;
					c.gpus_used = j->gpus > 0 ? j->gpus : c.instances * h->gpus;
					c.dp = c.gpus_used / (t * pp * cp);
					double tps = train_rate(j, h, &c, eff, END_MID, &b);
					if (!best.instances || c.instances < best.instances ||
					    (c.instances == best.instances && tps > best_tps))
						best = c, best_tps = tps;
				}
	double grp, shard;
	if (!best.instances) {
		double usable = h->mem_gib * COST_GIB * cost_k(CK_USABLE_MEMORY_FRACTION);
		states_of(j, 1, &grp, &shard);
		train_why(j, h, usable, grp + shard, p);
		return 0;
	}
	*p = best;
	states_of(j, p->fsdp, &grp, &shard);
	p->mem_gib_per_gpu = (grp / (p->tp * p->pp) + shard / p->gpus_used +
			      activations(j, p->checkpointing) / (p->tp * p->cp)) / COST_GIB;
	return 1;
}

/* Training and LoRA: fits, layout, rate with its calibrated band. */
static int train_predict(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *p)
{
	int covered;
	const struct cost_eff *e = cost_eff_find(cost_job_stack(j->task, j->stack), j->task, j->arch, j->fp8, &covered);
	double eff = e ? e->value : 0.5, lo, hi;
	enum cost_bound b;
	p->flops_per_token = (j->task == COST_TRAIN ? 6 : 4) * cost_shape_matmul_params(&j->shape) +
			     12.0 * j->shape.layers * j->shape.hidden * j->seq;
	if (!train_fit(j, h, eff, p))
		return 0;
	cost_band_of(j, covered, p, &lo, &hi);
	p->tps_lo = train_rate(j, h, p, eff, END_LO, &b) * lo;
	p->tps_hi = train_rate(j, h, p, eff, END_HI, &b) * hi;
	p->tps_gpu = train_rate(j, h, p, eff, END_MID, &b);
	p->bound = b;
	return 1;
}

/* Under a thousandth of a TFLOP/s (a 1990s CPU) a GPU measured nothing. */
#define COST_MIN_TFLOPS 1e-3

int cost_predict(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *p)
{
	memset(p, 0, sizeof *p);
	p->tp = p->pp = p->cp = p->dp = 1;
	p->bound = BOUND_CAPACITY;
	p->tps_gpu = p->tps_lo = p->tps_hi = p->prefill_tps_gpu = NAN;
	p->ttft_s = p->ttft_lo = p->ttft_hi = p->itl_s = p->itl_lo = p->itl_hi = p->concurrency = NAN;
	/* a GEMM rate of 0 or next to it (1e-300) measured nothing: said so, never priced at $1e22/Mtok (issue 57) */
	if (!(h->gemm_tflops >= COST_MIN_TFLOPS)) {
		snprintf(p->why, sizeof p->why, "not measured: its GEMM rate is %g TFLOP/s per GPU, nothing to price",
			 h->gemm_tflops);
		p->bound = BOUND_NONE;
		return 0;
	}
	if (h->gpus < 1 || !(h->mem_gib > 0)) {
		snprintf(p->why, sizeof p->why, "the catalog gives no GPU count or memory for it");
		p->bound = BOUND_NONE;
		return 0;
	}
	if (j->max_gpus > 0 && h->gpus > j->max_gpus) {
		snprintf(p->why, sizeof p->why, "has %d GPUs, more than --gpus %d", h->gpus, j->max_gpus);
		p->bound = BOUND_NONE;
		return 0;
	}
	if (j->task == COST_INFER) {
		if (!(h->mem_gbps > 0)) {
			snprintf(p->why, sizeof p->why, "no device-memory bandwidth, measured or in the reference");
			p->bound = BOUND_NONE;
			return 0;
		}
		if (!cost_serve(j, h, p))
			return 0;
	} else if (!train_predict(j, h, p)) {
		return 0;
	}
	p->fits = 1;
	return 1;
}
