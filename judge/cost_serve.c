/*
 * cost_serve.c - a serving job as it runs (cost_predict_int.h): requests of
 * P prompt and O output tokens, C in flight on each copy of the model; the
 * prefill of new requests shares the GPUs with the decode of the running
 * ones (continuous batching, chunked prefill), each layer all-reduces its
 * activations across a tensor-parallel copy.  And the decode-only shorthand
 * (--batch B --context C): decode steps alone at that mean context.
 *
 * One step of a copy of g GPUs produces one token for each of its C
 * requests and, in steady state, prefills C x P / O prompt tokens:
 *   linear   max(weights / g over the DRAM rate, (C + C P / O) x 2 N_mm / g over the GEMM rate)
 *   attention  C x (P + O/2) tokens of KV read, and the prefill's causal attention (4 L d P/2 per token)
 *   tensor parallelism  2 all-reduces per layer of (C + C P / O) x d bf16 activations over the bus bandwidth
 *   fixed    decode_layer_us per layer (kernel launches and tails)
 * The GEMM rate is the stack's efficiency (cost_stack.c) x the sustained rate; the DRAM rate
 * decode_bw_fraction x the measured one.  The KV cache is paged (Kwon et al., SOSP 2023): a request
 * reads P + O/2 tokens on average; it holds P + O (TensorRT-LLM reserves its whole output) or P + O/2
 * (vLLM), so C is at most what the memory left after the weights holds, and the stack's ceiling.  Output tokens/s per GPU = C / step / g; inter-token latency = the step;
 * time to first token = the prompt's prefill on the copy, then one step.
 */
#include "judge/cost_predict_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Decode-only: GPUs for the weights and the batch's KV cache; 0 with why when it does not fit. */
static int decode_fit(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *p)
{
	double usable = h->mem_gib * COST_GIB * cost_k(CK_USABLE_MEMORY_FRACTION);
	double need = cost_shape_params(&j->shape) * cost_weight_bytes(j) +
		      (double)j->batch * j->context * cost_kv_bytes_per_token(j);
	int g = cost_gpus_for(usable, 0, need);
	p->gpus_needed = g;
	if (!g || (j->max_gpus > 0 && g > j->max_gpus)) {
		snprintf(p->why, sizeof p->why, "weights and the KV cache of %d x %d tokens need %.1f GiB: %d GPU(s) of "
			 "%.0f GiB%s", j->batch, j->context, need / COST_GIB, g, h->mem_gib,
			 g ? ", more than --gpus allows" : "");
		return 0;
	}
	if (!(p->instances = cost_instances_for(j, h, g, NULL, p)))
		return 0;
	p->gpus_used = p->instances * h->gpus;
	p->replica_gpus = g <= h->gpus ? g : p->gpus_used;
	p->tp = p->replica_gpus;
	p->dp = p->replica_gpus < h->gpus ? h->gpus / p->replica_gpus : 1;
	p->mem_gib_per_gpu = need / p->replica_gpus / COST_GIB;
	return 1;
}

/* Decode-only tokens/s per GPU at one end of the band: the slower of reading the bytes and doing the FLOPs. */
static double decode_rate(const struct cost_job *j, const struct cost_hw *h, const struct cost_pred *p,
			  enum cost_end e, enum cost_bound *b)
{
	double rg = p->replica_gpus, B = j->batch;
	double bw = cost_pick(h->mem_gbps, h->mem_lo, h->mem_hi, e) * 1e9 * cost_k_at(CK_DECODE_BW_FRACTION, e);
	double gemm = cost_pick(h->gemm_tflops, h->gemm_lo, h->gemm_hi, e) * 1e12 * cost_k_at(CK_TRAIN_GEMM_FRACTION, e);
	double t_mem = B * p->bytes_per_token / (rg * bw);
	double t_comp = B * p->flops_per_token / (rg * gemm);
	/* the fixed part of a step: the slow end of the band takes the longest per-layer time */
	double t_layers = j->shape.layers * 1e-6 *
			  (e == END_LO ? cost_consts[CK_DECODE_LAYER_US].high :
			   e == END_HI ? cost_consts[CK_DECODE_LAYER_US].low : cost_consts[CK_DECODE_LAYER_US].value);
	*b = t_mem >= t_comp ? BOUND_MEMBW : BOUND_COMPUTE;
	int replicas = p->replica_gpus < h->gpus ? h->gpus / p->replica_gpus : 1;
	double step = (t_mem >= t_comp ? t_mem : t_comp) + t_layers;
	double replica_tps = B / step;
	return replicas * replica_tps / (rg < h->gpus ? h->gpus : rg);
}

static int decode_predict(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *p)
{
	const struct cost_shape *m = &j->shape;
	double C = j->context;
	enum cost_bound b;
	p->flops_per_token = 2 * cost_shape_matmul_params(m) + 4.0 * m->layers * m->hidden * C;
	p->bytes_per_token = (cost_shape_matmul_params(m) * cost_weight_bytes(j) + j->batch * C * cost_kv_bytes_per_token(j)) /
			     j->batch;
	if (!decode_fit(j, h, p))
		return 0;
	p->concurrency = j->batch;
	p->tps_lo = decode_rate(j, h, p, END_LO, &b);
	p->tps_hi = decode_rate(j, h, p, END_HI, &b);
	p->tps_gpu = decode_rate(j, h, p, END_MID, &b);
	p->bound = b;
	p->prefill_tps_gpu = h->gemm_tflops * 1e12 * cost_k(CK_TRAIN_GEMM_FRACTION) / p->flops_per_token;
	/* one step of the copy: B tokens of it */
	int replicas = p->replica_gpus < h->gpus ? h->gpus / p->replica_gpus : 1;
	double per_copy = p->replica_gpus < h->gpus ? (double)h->gpus / replicas : p->replica_gpus;
	p->itl_s = j->batch / (p->tps_gpu * per_copy);
	p->itl_lo = j->batch / (p->tps_hi * per_copy);
	p->itl_hi = j->batch / (p->tps_lo * per_copy);
	return 1;
}

/* The parts of one step of a copy (seconds) at one end of the band. */
struct step {
	double lin, attn, tp, fixed, total;
	int mem_bound;
};

static struct step serve_step(const struct cost_job *j, const struct cost_hw *h, double eff, int g, double C,
			      enum cost_end e)
{
	const struct cost_shape *m = &j->shape;
	double P = j->prompt_tokens, O = j->output_tokens, L = m->layers, d = m->hidden;
	double Nmm = cost_shape_matmul_params(m), W = Nmm * cost_weight_bytes(j);
	double bw = cost_pick(h->mem_gbps, h->mem_lo, h->mem_hi, e) * 1e9 * cost_k(CK_DECODE_BW_FRACTION);
	double rate = cost_pick(h->gemm_tflops, h->gemm_lo, h->gemm_hi, e) * 1e12 * eff;
	double pre = C * P / O, ctx = P + O / 2;
	struct step s = { 0 };
	double w_time = W / g / bw, f_time = (C + pre) * 2 * Nmm / g / rate;
	/* continuous batching hides the prefill's GEMMs in the weight reads of decode; static batches do not */
	s.lin = j->static_batching ? w_time + f_time * pre / (C + pre) + fmax(0, f_time * C / (C + pre) - w_time) :
				     fmax(w_time, f_time);
	double kv_time = C * ctx * cost_kv_bytes_per_token(j) / g / bw;
	s.attn = kv_time + (pre * 4 * L * d * P / 2 + C * 4 * L * d * ctx) / g / rate;
	if (g > 1 && isfinite(h->busbw_gbps) && h->busbw_gbps > 0)
		s.tp = L * 2 * (C + pre) * d * 2 * 2.0 * (g - 1) / g / (h->busbw_gbps * 1e9);
	s.fixed = L * cost_k(CK_DECODE_LAYER_US) * 1e-6;
	s.total = s.lin + s.attn + s.tp + s.fixed;
	s.mem_bound = w_time + kv_time > f_time + (s.attn - kv_time);
	return s;
}

/*
 * Of a request's output tokens, the share its KV cache holds while it runs: TensorRT-LLM's default
 * scheduler (capacity_scheduler_policy GUARANTEED_NO_EVICT) reserves all of them when it admits the
 * request; vLLM admits on the blocks in use and preempts when they run out: on average half.
 */
static double serve_reserved(const struct cost_job *j)
{
	return cost_job_stack(j->task, j->stack) == STACK_TRTLLM ? 1.0 : 0.5;
}

/* Requests a copy of g GPUs holds in flight: the KV cache left after the weights, the stack's ceiling. */
static double serve_concurrency(const struct cost_job *j, const struct cost_hw *h, int g)
{
	double usable = h->mem_gib * COST_GIB * cost_k(CK_USABLE_MEMORY_FRACTION) * g;
	double W = cost_shape_params(&j->shape) * cost_weight_bytes(j);
	double per = (j->prompt_tokens + j->output_tokens * serve_reserved(j)) * cost_kv_bytes_per_token(j);
	double cmax = floor((usable - W) / per);
	double ceiling = j->concurrency_per_gpu > 0 ? floor(j->concurrency_per_gpu * g + 1e-9) :
			 j->concurrency > 0 ? j->concurrency :
			 cost_k(cost_job_stack(j->task, j->stack) == STACK_TRTLLM ? CK_MAX_CONCURRENCY_TRTLLM :
										    CK_MAX_CONCURRENCY_VLLM);
	return cmax < 1 || ceiling < 1 ? 0 : fmin(cmax, ceiling);
}

/* Output tokens/s per GPU of the instance for copies of g GPUs. */
static double serve_tps(const struct cost_job *j, const struct cost_hw *h, double eff, int g, double C, enum cost_end e)
{
	struct step s = serve_step(j, h, eff, g, C, e);
	int copies = h->gpus / g;
	return copies * C / s.total / h->gpus;
}

/* The copy's size: of 1-8 GPUs (dividing the instance's) the fastest per GPU. */
static int serve_fit(const struct cost_job *j, const struct cost_hw *h, double eff, struct cost_pred *p)
{
	int best = 0;
	double best_tps = 0;
	for (int g = 1; g <= 8 && g <= h->gpus; g *= 2) {
		if (h->gpus % g)
			continue;
		double C = serve_concurrency(j, h, g);
		if (!(C >= 1) || (j->max_gpus > 0 && g > j->max_gpus))
			continue;
		double tps = serve_tps(j, h, eff, g, C, END_MID);
		if (tps > best_tps)
			best = g, best_tps = tps;
	}
	if (!best) {
		double need = cost_shape_params(&j->shape) * cost_weight_bytes(j) +
			      (j->prompt_tokens + j->output_tokens / 2.0) * cost_kv_bytes_per_token(j);
		p->gpus_needed = cost_gpus_for(h->mem_gib * COST_GIB * cost_k(CK_USABLE_MEMORY_FRACTION), 0, need);
		snprintf(p->why, sizeof p->why, "the weights and one request's KV cache (%d + %d tokens) need %.1f GiB: "
			 "more than %d GPU(s) of %.0f GiB hold in one copy", j->prompt_tokens, j->output_tokens,
			 need / COST_GIB, h->gpus < 8 ? h->gpus : 8, h->mem_gib);
		return 0;
	}
	p->tp = p->replica_gpus = p->gpus_needed = best;
	p->instances = 1;
	p->gpus_used = h->gpus;
	p->dp = h->gpus / best;
	p->concurrency = serve_concurrency(j, h, best);
	return 1;
}

int cost_serve(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *p)
{
	if (j->decode_only || j->output_tokens < 1)   /* no request described: decode alone at --batch, --context */
		return decode_predict(j, h, p);
	const struct cost_shape *m = &j->shape;
	int covered;
	const struct cost_eff *e = cost_eff_find(cost_job_stack(j->task, j->stack), COST_INFER, j->arch, j->fp8, &covered);
	double eff = e ? e->value : 0.5, lo, hi, P = j->prompt_tokens;
	if (!serve_fit(j, h, eff, p))
		return 0;
	int g = p->replica_gpus;
	double C = p->concurrency, Nmm = cost_shape_matmul_params(m);
	cost_band_of(e, covered, p, &lo, &hi);
	struct step mid = serve_step(j, h, eff, g, C, END_MID), slow = serve_step(j, h, eff, g, C, END_LO),
		    fast = serve_step(j, h, eff, g, C, END_HI);
	p->tps_gpu = serve_tps(j, h, eff, g, C, END_MID);
	p->tps_lo = serve_tps(j, h, eff, g, C, END_LO) * lo;
	p->tps_hi = serve_tps(j, h, eff, g, C, END_HI) * hi;
	p->itl_s = mid.total, p->itl_lo = fast.total / hi, p->itl_hi = slow.total / lo;
	double rate = h->gemm_tflops * 1e12 * eff * g, pf = 2 * Nmm + 4.0 * m->layers * m->hidden * P / 2;
	p->ttft_s = P * pf / rate + mid.total;
	p->ttft_lo = (P * pf / (rate * (h->gemm_hi > 0 ? h->gemm_hi / h->gemm_tflops : 1)) + fast.total) / hi;
	p->ttft_hi = (P * pf / (rate * (h->gemm_lo > 0 ? h->gemm_lo / h->gemm_tflops : 1)) + slow.total) / lo;
	p->prefill_tps_gpu = rate / g / pf;
	p->flops_per_token = 2 * Nmm + 4.0 * m->layers * m->hidden * (P + j->output_tokens / 2.0) + P / j->output_tokens * pf;
	p->bytes_per_token = (Nmm * cost_weight_bytes(j) + C * (P + j->output_tokens / 2.0) * cost_kv_bytes_per_token(j)) / C;
	p->mem_gib_per_gpu = (cost_shape_params(m) * cost_weight_bytes(j) +
			      C * (P + j->output_tokens / 2.0) * cost_kv_bytes_per_token(j)) / g / COST_GIB;
	p->bound = mid.mem_bound ? BOUND_MEMBW : BOUND_COMPUTE;
	return 1;
}
