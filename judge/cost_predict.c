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

/*
 * Activation bytes of one micro-batch on a GPU, kept for backward or with checkpointing: one sequence under
 * Megatron (NeMo's micro-batch 1), CK_TORCH_MICROBATCH under PyTorch (torchtitan's and Automodel's local batch).
 */
static double activations(const struct cost_job *j, int ckpt)
{
	const struct cost_shape *m = &j->shape;
	double d = m->hidden, L = m->layers, S = j->seq;
	double mb = cost_job_stack(j->task, j->stack) == STACK_PYTORCH ? cost_k(CK_TORCH_MICROBATCH) : 1;
	double logits = S * m->vocab * cost_k(CK_LOGIT_BYTES);
	if (!ckpt)
		return mb * (S * d * L * cost_k(CK_ACT_BYTES_PER_TOKEN_LAYER_PER_HIDDEN) + logits);
	return mb * (S * d * (L * cost_k(CK_CKPT_BYTES_PER_TOKEN_LAYER_PER_HIDDEN) +
			      cost_k(CK_ACT_BYTES_PER_TOKEN_LAYER_PER_HIDDEN)) + logits);
}

/*
 * LoRA's adapters on every linear layer (Q, K, V, O, gate, up, down): rank x (inputs + outputs) parameters
 * each, held with their gradients and AdamW states (train_bytes_per_param).
 */
static double adapter_bytes(const struct cost_job *j)
{
	const struct cost_shape *m = &j->shape;
	double d = m->hidden, kv = m->heads > 0 ? d / m->heads * m->kv_heads : d;
	return cost_k(CK_LORA_RANK) * m->layers * (9 * d + 2 * kv + 3.0 * m->ffn) * cost_k(CK_TRAIN_BYTES_PER_PARAM);
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
		*(fsdp ? sharded : per_group) = N * cost_weight_bytes(j) + adapter_bytes(j);
	else if (!fsdp)
		*per_group = 4 * N, *sharded = (cost_k(CK_TRAIN_BYTES_PER_PARAM) - 4) * N;
	else
		*sharded = cost_k(CK_TRAIN_BYTES_PER_PARAM) * N;
}

/* What checkpointing costs p's step in time (1: none). */
static double ckpt_time(const struct cost_job *j, const struct cost_pred *p)
{
	return !p->checkpointing ? 1 : cost_k(j->task == COST_LORA ? CK_LORA_CKPT_TIME_FACTOR : CK_CKPT_TIME_FACTOR);
}

/* Tokens per GPU between two data-parallel exchanges: FSDP's micro-batch, Megatron's step of micro-batches. */
static double dp_batch(const struct cost_job *j, const struct cost_pred *p)
{
	return p->fsdp ? fmax(j->seq, cost_k(CK_FSDP_BATCH_TOKENS)) : j->seq * cost_k(CK_PIPELINE_MICROBATCHES);
}

/*
 * The DRAM bytes a PyTorch step moves per token of a model-parallel group besides its GEMMs and attention: its
 * layers' elementwise kernels (norms, rotary, SwiGLU, residual adds, casts; recomputed with checkpointing), the loss
 * over the fp32 logits, and the optimizer over the trainable parameters (sharded over every GPU, once per micro-batch
 * of dp_batch tokens).  They weigh most where the GEMMs are small beside them: a small hidden size, a large
 * vocabulary, one GPU (docs/cost.md, "Small models on one GPU").
 */
static double torch_step_bytes(const struct cost_job *j, const struct cost_pred *p)
{
	double ckpt = ckpt_time(j, p), batch = dp_batch(j, p);
	const struct cost_shape *m = &j->shape;
	double trainable = j->task == COST_LORA ? adapter_bytes(j) / cost_k(CK_TRAIN_BYTES_PER_PARAM) : cost_shape_params(m);
	return ckpt * cost_k(CK_TORCH_LAYER_BYTES) * m->layers * m->hidden + cost_k(CK_LOSS_BYTES) * m->vocab +
	       cost_k(CK_OPTIMIZER_BYTES) * trainable * (p->tp * p->pp * p->cp) / p->gpus_used / batch;
}

/*
 * Training or LoRA tokens/s per GPU at one end of the band (the measured figures' spread; the constants at their
 * value), for p's layout; *b the bound.
 */
static double train_rate(const struct cost_job *j, const struct cost_hw *h, const struct cost_pred *p, double eff,
			 enum cost_end e, enum cost_bound *b)
{
	enum cost_stack s = cost_job_stack(j->task, j->stack);
	double N = cost_shape_params(&j->shape), t = p->tp, m = p->tp * p->pp * p->cp;
	double D = (double)p->gpus_used / m, gemm = cost_pick(h->gemm_tflops, h->gemm_lo, h->gemm_hi, e) * 1e12;
	double ckpt = ckpt_time(j, p), mem = cost_pick(h->mem_gbps, h->mem_lo, h->mem_hi, e) * 1e9, batch = dp_batch(j, p);
	/* seconds per token of one model-parallel group: the GEMMs and attention, then (PyTorch) its other DRAM traffic */
	double t_comp = p->flops_per_token * ckpt / (m * eff * gemm);
	if (s == STACK_PYTORCH && isfinite(mem) && mem > 0)
		t_comp += torch_step_bytes(j, p) / (m * mem);
	double bubble = p->pp > 1 ? (p->pp - 1) / (cost_k(CK_PIPELINE_MICROBATCHES) * cost_k(CK_PIPELINE_VIRTUAL)) : 0;
	double t_tp = 0, t_dp = 0;
	/* Megatron overlaps its tensor-parallel collectives with the GEMMs (tp_comm_overlap); torch's are exposed */
	if (t > 1 && s != STACK_MEGATRON && isfinite(h->busbw_gbps) && h->busbw_gbps > 0)
		t_tp = j->shape.layers / (double)p->pp * cost_k(CK_TP_COLLECTIVES_PER_LAYER) * 2 * (t - 1) / t * 2.0 *
		       j->shape.hidden / (h->busbw_gbps * 1e9) / p->cp;
	if (D > 1) {
		/* FSDP gathers the weights twice and reduce-scatters the gradients per micro-batch (LoRA: the frozen
		 * weights gathered twice, sharded by FSDP2 over every GPU); Megatron's distributed optimizer once a step */
		int fsdp = p->fsdp;
		double passes = j->task == COST_TRAIN ? (fsdp ? 3 : 2) : (fsdp ? 2 : 0);
		double inter = isfinite(h->inter_gbps) && h->inter_gbps > 0 ? h->inter_gbps : cost_k(CK_INTER_NODE_GBPS_PER_GPU);
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

/*
 * Why no layout fits, for the row: the layout of the fewest GPUs the search tried (c; none when even checkpointed
 * activations outgrow a GPU), stated, and what stops it: --gpus, or instances of a type that are not spanned.
 */
static void train_why(const struct cost_job *j, const struct cost_hw *h, const struct cost_pred *c, struct cost_pred *p)
{
	double usable = h->mem_gib * COST_GIB * cost_k(CK_USABLE_MEMORY_FRACTION), grp, shard;
	int mb = cost_job_stack(j->task, j->stack) == STACK_PYTORCH ? (int)cost_k(CK_TORCH_MICROBATCH) : 1;
	char how[128];
	p->checkpointing = 1;
	if (!c->gpus_needed) {
		snprintf(p->why, sizeof p->why, "a micro-batch of %d x %d tokens needs %.1f GiB of activations even with "
			 "checkpointing, more than a GPU's usable %.1f GiB", mb, j->seq, activations(j, 1) / COST_GIB,
			 usable / COST_GIB);
		return;
	}
	struct cost_pred l = *c;
	l.gpus_used = c->gpus_needed, l.dp = c->gpus_needed / (c->tp * c->pp * c->cp);
	cost_layout_text(j, &l);
	snprintf(how, sizeof how, "as %.80s, activations %.1f of %.1f usable GiB a GPU", l.layout,
		 activations(j, c->checkpointing) / (c->tp * c->cp) / COST_GIB, usable / COST_GIB);
	p->gpus_needed = c->gpus_needed, p->checkpointing = c->checkpointing, p->fsdp = c->fsdp;
	p->tp = c->tp, p->pp = c->pp, p->cp = c->cp;
	states_of(j, c->fsdp, &grp, &shard);
	if (j->max_gpus > 0 && c->gpus_needed > j->max_gpus)
		snprintf(p->why, sizeof p->why, "needs %d GPUs of %.0f GiB for %.0f GiB of %s, more than --gpus %d; %s",
			 c->gpus_needed, h->mem_gib, (grp + shard) / COST_GIB,
			 j->task == COST_TRAIN ? "weights, gradients and AdamW states" : "weights", j->max_gpus, how);
	else
		cost_instances_for(j, h, c->gpus_needed, how, p);
}

/* The GPUs a layout needs (a multiple of its model-parallel group); 0: none. */
static int layout_gpus(const struct cost_job *j, const struct cost_hw *h, const struct cost_pred *c)
{
	double usable = h->mem_gib * COST_GIB * cost_k(CK_USABLE_MEMORY_FRACTION), grp, shard;
	int m = c->tp * c->pp * c->cp;
	states_of(j, c->fsdp, &grp, &shard);
	double fixed = grp / (c->tp * c->pp) + activations(j, c->checkpointing) / (c->tp * c->cp);
	int g = shard > 0 ? cost_gpus_for(usable, fixed, shard) : usable > fixed ? 1 : 0;
	if (!g)
		return 0;
	return g < m ? m : (g + m - 1) / m * m;
}

/* One candidate layout: fitted into c with its GPUs and instances; 0 when it does not fit. */
static int layout_try(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *c, int limit)
{
	int g = layout_gpus(j, h, c);
	c->gpus_needed = g;
	if (!g || g > limit || !(c->instances = cost_instances_for(j, h, g, NULL, c)))
		return 0;
	c->gpus_used = c->instances * h->gpus;
	c->dp = c->gpus_used / (c->tp * c->pp * c->cp);
	return 1;
}

/*
 * Whether c (tokens/s tps) is the layout the stack would take over best.  PyTorch: the least tensor
 * parallelism, then the fewest instances, then no checkpointing (FSDP2 scales out over more GPUs and
 * checkpoints before it splits a layer: llm-foundry never splits one, torchtitan adds TP for 70B and up at
 * hundreds of GPUs, NeMo Automodel its 70B pretraining on FSDP alone).  Megatron: the fewest instances, then
 * the fastest (NeMo's recipes split layers, pipelines and sequences freely, overlapped).
 */
static int layout_better(int meg, const struct cost_pred *c, double tps, const struct cost_pred *best, double best_tps)
{
	if (!best->instances)
		return 1;
	if (!meg && c->tp != best->tp)
		return c->tp < best->tp;
	if (c->instances != best->instances)
		return c->instances < best->instances;
	return meg ? tps > best_tps : c->checkpointing < best->checkpointing;
}

/*
 * Training and LoRA: the layout, of those that fit, as the stack would choose it (layout_better): PyTorch FSDP2
 * with tensor parallelism 1-8 inside an instance (dividing its GPUs and the heads); Megatron also pipeline (1-16
 * stages dividing the layers) and context parallelism (2 from 8192 tokens), its distributed optimizer or
 * Megatron FSDP; with or without activation checkpointing.  0 with why when none fits.
 */
static int train_fit(const struct cost_job *j, const struct cost_hw *h, double eff, struct cost_pred *p)
{
	int meg = cost_job_stack(j->task, j->stack) == STACK_MEGATRON, limit = j->max_gpus > 0 ? j->max_gpus : COST_MAX_GPUS;
	struct cost_pred best = { 0 }, fewest = { 0 }, c;
	double best_tps = 0;
	enum cost_bound b;
	for (int ck = 0; ck < 2; ck++)
		for (int fs = !meg; fs < 2; fs++)
			for (int t = 1; t <= (h->gpus < 8 ? h->gpus : 8); t *= 2)
				for (int pp = 1; pp <= (meg ? 16 : 1); pp *= 2)
					for (int cp = 1; cp <= (meg && j->seq >= 8192 ? 2 : 1); cp *= 2) {
						if (h->gpus % t || j->shape.heads % t ||
						    (j->shape.kv_heads % t && t % j->shape.kv_heads) || j->shape.layers % pp)
							continue;
						c = *p;
						c.tp = t, c.pp = pp, c.cp = cp, c.checkpointing = ck, c.fsdp = fs;
						if (!layout_try(j, h, &c, limit)) {
							if (c.gpus_needed && (!fewest.gpus_needed || c.gpus_needed < fewest.gpus_needed))
								fewest = c;
							continue;
						}
						double tps = train_rate(j, h, &c, eff, END_MID, &b);
						if (layout_better(meg, &c, tps, &best, best_tps))
							best = c, best_tps = tps;
					}
	double grp, shard;
	if (!best.instances) {
		train_why(j, h, &fewest, p);
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
	cost_band_of(e, covered, p, &lo, &hi);
	p->tps_lo = train_rate(j, h, p, eff, END_LO, &b) * lo;
	p->tps_hi = train_rate(j, h, p, eff, END_HI, &b) * hi;
	p->tps_gpu = train_rate(j, h, p, eff, END_MID, &b);
	p->bound = b;
	if (cost_job_stack(j->task, j->stack) == STACK_PYTORCH)
		p->bytes_per_token = torch_step_bytes(j, p);
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
	cost_layout_text(j, p);
	return 1;
}
