/*
 * cost_model.c - the cost model's one table of constants, its model shapes
 * and its arithmetic (see cost_model.h; docs/cost.md derives each constant).
 *
 * Conventions, written down once:
 *   FLOPs     a multiply-add is 2 FLOPs.  N_mm = the parameters used in a
 *             matrix multiply per token (all but the input embedding lookup;
 *             a tied embedding counts once, as the output head).
 *   train     6 N_mm + 12 L d S per token: forward 2 N_mm, backward 4 N_mm;
 *             attention's QK^T and AV over the full S x S matrix, forward
 *             4 L d S, backward twice that.  The causal mask lets
 *             FlashAttention skip about half of it; the full count is the
 *             convention of PaLM (Chowdhery et al. 2022, app. B), MosaicML's
 *             llm-foundry MFU and NeMo 24.07's "model TFLOP/s", from whose
 *             tokens/s the efficiency below is derived, so it is kept.
 *   lora      4 N_mm + 12 L d S: the frozen weights get no weight-gradient
 *             GEMMs (the backward still computes activation gradients, 2
 *             N_mm); the adapters' FLOPs (rank << d) are left out.
 *   infer     decode: each step reads the weights once for the whole batch
 *             and each sequence's KV cache once; per token
 *             W/B + KV(C) bytes, 2 N_mm + 4 L d C FLOPs.  Prefill is compute
 *             bound at 2 N_mm + 4 L d C per prompt token.
 *   memory    train: 16 bytes per parameter (bf16 weights and gradients, fp32
 *             master weights, Adam's two fp32 moments), sharded over the job's
 *             GPUs (ZeRO-3 / FSDP); lora: the bf16 weights and the rank-16
 *             adapters with their gradients and AdamW states (16 bytes each);
 *             both plus one micro-batch's activations on each GPU (PyTorch 2
 *             sequences, Megatron 1).  infer: weights + B x C tokens of KV.
 *   comm      per sequence per GPU: DDP all-reduces the bf16 gradients
 *             (2 x 2 N (g-1)/g bytes of bus traffic), FSDP gathers the
 *             weights twice and reduce-scatters the gradients (3 x 2 N (g-1)/g),
 *             LoRA with sharded weights gathers them twice; over the all-reduce
 *             bus bandwidth (nccl-tests' busbw: time = bus bytes / busbw),
 *             hidden behind compute up to CK_OVERLAP of it.
 */
#include "judge/cost_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LLAMA3_PAPER "Llama Team, The Llama 3 Herd of Models (arXiv:2407.21783, 2024), table 4: 38-43 % BF16 MFU on H100"
#define NEMO2407 "NVIDIA NeMo docs/source/performance/performance_summary.md (NeMo 24.07, DGX-H100, FP8)"
#define FOUNDRY "mosaicml/llm-foundry scripts/train/benchmarking/README.md, H100 80GB BF16 table"
#define GPU1125 "gpuvet's job-cost step on an H100 80GB HBM3 (tests/fixtures/gpu/h100-2026-11-25/jobcost, PyTorch 2.11)"

const struct cost_const cost_consts[CK_COUNT] = {
	[CK_TRAIN_GEMM_FRACTION] = { "train_gemm_fraction", 0.52, 0.44, 0.62, "of sustained GEMM TFLOP/s",
		"published tokens/s x model FLOPs/token (this convention) over the sustained GEMM rate of the same "
		"dtype (H100 reference: 746 bf16, 1565 fp8 TFLOP/s): " NEMO2407 " 0.445-0.529 (Llama 3 8B, Llama 2 "
		"7B pretrain, SFT, LoRA; Llama 3 70B, Llama 2 70B on 64 GPUs); " FOUNDRY " 0.48-0.62 (MFU 36-46 % x "
		"989.4 / 746); " LLAMA3_PAPER " = 0.50-0.57" },
	[CK_DECODE_BW_FRACTION] = { "decode_bw_fraction", 0.85, 0.75, 0.90, "of measured DRAM GB/s",
		"a decode step = its bytes over this fraction of the DRAM rate + decode_layer_us per layer. " GPU1125
		": a CUDA-graph decode of a 1.5 B Llama shape at batch 1, 16, 64, 256 (2.32-5.71 ms a step) fits "
		"0.85 and 84 us per layer; NVIDIA NIM LLM benchmarking (docs.nvidia.com/nim/benchmarking/llm, v1.8.0): "
		"Llama-3.3-70B-Instruct, 2x H100 80G fp8 TP2, concurrency 1, ITL 18.91 ms = 0.85 of the H100 "
		"reference DRAM rate with 65 us per layer" },
	[CK_REF_GEMM_SPREAD] = { "reference_gemm_spread", 0.90, 0.90, 1.00, "x reference",
		"the clean H100 captures (tests/fixtures/gpu/h100-2026-11-22) spread 673.5-746.0 bf16 TFLOP/s: the "
		"reference is the best of them, a GPU of the model may give 10 % less" },
	[CK_TRAIN_BYTES_PER_PARAM] = { "train_bytes_per_param", 16, 16, 16, "bytes",
		"Rajbhandari et al., ZeRO (SC 2020), sec. 3.1: mixed-precision Adam holds 2+2+12 bytes per parameter "
		"(fp16/bf16 weights and gradients, fp32 master weights, momentum and variance)" },
	[CK_ACT_BYTES_PER_TOKEN_LAYER_PER_HIDDEN] = { "activation_bytes_per_token_layer_hidden", 34, 34, 34, "bytes",
		"Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models (MLSys 2023), "
		"eq. 1: s b h (34 + 5 a s / h) per layer in 16-bit; the 5 a s / h term is the score matrix, which "
		"FlashAttention does not keep" },
	[CK_CKPT_BYTES_PER_TOKEN_LAYER_PER_HIDDEN] = { "checkpoint_bytes_per_token_layer_hidden", 2, 2, 2, "bytes",
		"Korthikanti et al. (as above), sec. 4: full recomputation keeps each layer's 16-bit input, 2 s b h "
		"per layer (plus one layer's activations while it is recomputed)" },
	[CK_CKPT_COMPUTE_FACTOR] = { "checkpoint_compute_factor", 4.0 / 3.0, 4.0 / 3.0, 4.0 / 3.0, "x",
		"one more forward pass (2 of 6 N): " FOUNDRY " HFU / MFU = 4/3 on its checkpointed rows" },
	[CK_CKPT_TIME_FACTOR] = { "checkpoint_time_factor", 1.12, 1.12, 1.12, "x step time",
		"fitted on the published record (cost_published.csv foundry-a100-30b-2k): llm-foundry's checkpointed "
		"rows reach a higher hardware utilization than their plain ones (A100 30B: MFU 55.3 %, HFU 73.7 %; "
		"7B without: MFU 64.2 %), so the 4/3 of the FLOPs costs less than 4/3 of the time; with PyTorch's DRAM traffic "
		"charged apart (torch_layer_bytes_per_token_hidden) that row is 0.97 of its prediction; not refitted, as "
		"Megatron's checkpointed 70B rows share it" },
	[CK_LOGIT_BYTES] = { "logit_bytes", 4, 4, 4, "bytes per token per vocabulary entry",
		"fp32 logits for the loss (Hugging Face transformers LlamaForCausalLM upcasts logits to float)" },
	[CK_USABLE_MEMORY_FRACTION] = { "usable_memory_fraction", 0.90, 0.90, 0.90, "of GPU memory",
		"vLLM's default gpu_memory_utilization (0.9): the rest is the CUDA context, the allocator's slack "
		"and workspaces" },
	[CK_OVERLAP] = { "comm_overlap", 1.0, 0.5, 1.0, "of compute time",
		"PyTorch FSDP (Zhao et al., VLDB 2023) prefetches the next all-gather and DDP buckets its "
		"all-reduce behind backward: the step takes the longer of the two; low end: half of it hidden" },
	[CK_NVLINK_BUSBW_FRACTION] = { "nvlink_busbw_fraction", 0.76, 0.76, 1.0, "of one NVLink direction",
		"the published 8-GPU all-reduce floors (gpuvet's GPU references): A100 228 GB/s of 300, H100 460 of 450 GB/s "
		"per direction; used where a model has neither a measurement nor a floor" },
	[CK_INTER_NODE_GBPS_PER_GPU] = { "inter_node_gbps_per_gpu", 50, 6.25, 50, "GB/s",
		"never measured by gpuvet: p5.48xlarge's 3200 Gbps EFA and DGX H100's 8x 400 Gb/s ConnectX-7 give "
		"50 GB/s per GPU; p4d.24xlarge's 400 Gbps over 8 A100 gives 6.25 (the low end)" },
	[CK_D2D_TRAFFIC_FACTOR] = { "d2d_traffic_factor", 2, 2, 2, "x",
		"gpuvet's memcpy bench: a device-to-device copy reports the bytes copied once; the GPU reads and writes "
		"each, 2x in DRAM traffic" },
	[CK_HBM_COPY_FRACTION] = { "hbm_copy_fraction", 0.89, 0.85, 0.90, "of datasheet GB/s",
		"gpuvet's H100 captures: memcpy.d2d 1493.5-1509.1 GB/s x 2 = 2987-3018 of 3350 GB/s (0.89-0.90); "
		"H200: the same within 1 %" },
	[CK_TOKEN_BYTES] = { "token_bytes", 8, 8, 8, "bytes",
		"a token id as PyTorch feeds it (int64); what the host must stage per trained token" },
	[CK_TP_COLLECTIVES_PER_LAYER] = { "tp_collectives_per_layer", 4, 4, 4, "all-reduces of 2 d bytes per token",
		"Narayanan et al., Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM (SC "
		"2021), sec. 3.2: tensor parallelism all-reduces a layer's activations twice forward and twice backward "
		"(sequence parallelism moves the same bytes as all-gathers and reduce-scatters, Korthikanti et al. "
		"2023); on the critical path, not overlapped" },
	[CK_CLUSTER_MIN_GPUS] = { "cluster_min_gpus", 8, 8, 8, "GPUs per instance",
		"a job spans instances only of full 8-GPU types, the ones sold with a cluster fabric (p5.48xlarge "
		"3200 Gbps EFA, p4d.24xlarge 400 Gbps EFA, Lambda's 8x types in 1-Click Clusters with InfiniBand); "
		"smaller types have ordinary Ethernet (g6e.xlarge: up to 20 Gbps), so the job must fit one of them" },
	[CK_DECODE_LAYER_US] = { "decode_layer_us", 75, 50, 90, "us per layer per step",
		"the time a decode step takes whatever its bytes (one launch after another of small kernels per "
		"layer, each with its own ramp and tail): " GPU1125 ": 84 us per layer (PyTorch's unfused kernels "
		"replayed from a CUDA graph); NIM's fused TensorRT-LLM kernels on Llama-3.3-70B: 65 us with "
		"decode_bw_fraction 0.85" },
	[CK_FSDP_BATCH_TOKENS] = { "fsdp_batch_tokens", 16384, 16384, 16384, "tokens per GPU",
		"FSDP gathers the weights and reduce-scatters the gradients once per micro-batch, not per sequence: "
		"pytorch/torchtitan docs/performance.md table 1 runs 2 x 8192 tokens per GPU, llm-foundry's H100 "
		"BF16 table 12,288-65,536 (micro-batch x sequence); short sequences are batched up to it, so a "
		"shorter sequence never costs more traffic per token (the 70B seq 2048/4096 inversion of issue 51)" },
	[CK_PIPELINE_MICROBATCHES] = { "pipeline_microbatches", 64, 64, 64, "per data-parallel copy per step",
		"NVIDIA/NeMo performance_summary.md (24.07) and Megatron-Bridge 25.09: global batch 128 sequences, "
		"micro-batch 1, 2 data-parallel copies on the 64-GPU 70B rows: 64 micro-batches; bubble = (PP - 1) / "
		"(micro-batches x virtual stages) (Narayanan et al., SC 2021, sec. 2.2.2)" },
	[CK_PIPELINE_VIRTUAL] = { "pipeline_virtual_stages", 5, 5, 5, "per stage",
		"NeMo 24.07 and Megatron-Bridge 25.09 Llama 3 70B rows: VP 5" },
	[CK_TORCH_MICROBATCH] = { "torch_microbatch", 2, 2, 2, "sequences per micro-batch",
		"what a PyTorch (FSDP2) step holds the activations of: pytorch/torchtitan docs/performance.md table 1 "
		"(local batch size 2), NVIDIA-NeMo/Automodel's LoRA benchmark recipes (local batch size 2, micro-batch "
		"2: examples/llm_finetune/llama3_3/custom_llama3_3_70b_instruct_peft_benchmark.yaml at 2013a4dd6); "
		"Megatron's NeMo rows run micro-batch 1" },
	[CK_LORA_CKPT_TIME_FACTOR] = { "lora_checkpoint_time_factor", 1.46, 1.46, 1.46, "x step time",
		"fitted on the published record (cost_published.csv automodel-70b-lora: NeMo Automodel's Llama 3 70B "
		"LoRA on 8x H100, FSDP2 + TP 2 + activation checkpointing, 1,091.85 tokens/s/GPU): a LoRA step has no "
		"weight-gradient GEMMs, so the recomputed forward (2 N of its 4 N) costs it more than full training's "
		"checkpoint_time_factor (2 N of 6 N); 1.34 before PyTorch's DRAM traffic was charged apart "
		"(torch_layer_bytes_per_token_hidden): the 8B LoRA the efficiency is fitted on carries more of it" },
	[CK_LORA_RANK] = { "lora_rank", 16, 16, 16, "",
		"the adapters' rank on every linear layer (NeMo Automodel's LoRA recipes: dim 16, match_all_linear); their "
		"weights, gradients and AdamW states are held at train_bytes_per_param, about 0.2 % of a 70B model" },
	[CK_MAX_CONCURRENCY_VLLM] = { "max_concurrency_vllm", 256, 256, 256, "requests",
		"vLLM EngineArgs max_num_seqs, 256 by default (vLLM 0.6-0.8 docs, engine arguments)" },
	[CK_MAX_CONCURRENCY_TRTLLM] = { "max_concurrency_trtllm", 2048, 2048, 2048, "requests",
		"TensorRT-LLM BuildConfig max_batch_size, 2048 by default; the perf-overview runs (v1.0) capture "
		"CUDA graphs up to 8192" },
	[CK_TORCH_LAYER_BYTES] = { "torch_layer_bytes_per_token_hidden", 250, 214, 286, "bytes per token per layer per hidden",
		"what a PyTorch step's elementwise kernels (norms, rotary, SwiGLU, residual adds, casts; forward and backward) "
		"move at the DRAM rate besides its GEMMs and attention. " GPU1125 " and the H200 of tests/fixtures/gpu/"
		"h200-2026-11-28: the same training step ran 9.4 % faster on the H200 at the same GEMM rate (679.6 against "
		"690.6 TFLOP/s) and 1.41x the DRAM rate, so a third of the H100's step is DRAM-bound: 22.8 MB per token, of "
		"which the loss and the optimizer (loss_bytes_per_token_vocab, optimizer_bytes_per_param) are 13.5; the rest "
		"over 16 layers x 2,048 is 286 (214 with the H100's other round; the H200's first read its GEMM rate low, "
		"645.9). Fused stacks (llm-foundry, torch.compile) move less: the stack's spread holds both" },
	[CK_LOSS_BYTES] = { "loss_bytes_per_token_vocab", 48, 48, 48, "bytes per token per vocabulary entry",
		"PyTorch's cross-entropy over upcast logits (transformers' LlamaForCausalLM, llm-foundry, gpuvet's step), "
		"counted in 4-byte fp32 elements: the upcast (2 read, 4 written), log_softmax (max, sum, then the output: 3 "
		"reads, 1 write), the loss gradient's zeros (1 write), log_softmax's backward (the gradient read twice, the "
		"output once, 1 write), the gradient back to bf16 (4 read, 2 written): 6 + 16 + 4 + 16 + 6" },
	[CK_OPTIMIZER_BYTES] = { "optimizer_bytes_per_param", 40, 40, 40, "bytes per trainable parameter per step",
		"PyTorch's fused AdamW (torch.optim.AdamW(fused=True)) reads the fp32 weight, gradient and two moments and "
		"writes the weight and moments (28), the bf16 gradient is widened to fp32 (2 + 4) and the weight cast to "
		"bf16 for the forward (4 + 2); sharded over the job's GPUs, once per fsdp_batch_tokens tokens per GPU" },
};

double cost_k(enum cost_k k)
{
	return (unsigned)k < CK_COUNT ? cost_consts[k].value : NAN;
}

#define HF(m) "Hugging Face " m "/config.json (hidden_size, intermediate_size, num_hidden_layers, " \
	"num_attention_heads, num_key_value_heads, vocab_size, tie_word_embeddings)"

const struct cost_shape cost_presets[] = {
	{ "llama-3.2-1b", 0, 16, 2048, 8192, 32, 8, 128256, 1, HF("meta-llama/Llama-3.2-1B") },
	{ "llama-3.1-8b", 0, 32, 4096, 14336, 32, 8, 128256, 0, HF("meta-llama/Llama-3.1-8B") },
	{ "mistral-7b", 0, 32, 4096, 14336, 32, 8, 32000, 0, HF("mistralai/Mistral-7B-v0.1") },
	{ "qwen2.5-32b", 0, 64, 5120, 27648, 40, 8, 152064, 0, HF("Qwen/Qwen2.5-32B") },
	{ "llama-3.1-70b", 0, 80, 8192, 28672, 64, 8, 128256, 0, HF("meta-llama/Llama-3.1-70B") },
};
const size_t cost_presets_count = sizeof cost_presets / sizeof cost_presets[0];

const struct cost_shape *cost_preset_find(const char *name)
{
	for (size_t i = 0; name && i < cost_presets_count; i++)
		if (!strcmp(cost_presets[i].name, name))
			return &cost_presets[i];
	return NULL;
}

/* per layer: Q and O (d x d each), K and V (d x kv x head_dim each), the SwiGLU MLP (3 d f) */
static double layer_params(const struct cost_shape *m)
{
	double d = m->hidden, hd = m->heads > 0 ? d / m->heads : 0;
	return 2 * d * d + 2 * d * m->kv_heads * hd + 3 * d * m->ffn;
}

double cost_shape_params(const struct cost_shape *m)
{
	if (m->params > 0)
		return m->params;
	return m->layers * layer_params(m) + (double)m->vocab * m->hidden * (m->tied ? 1 : 2);
}

double cost_shape_matmul_params(const struct cost_shape *m)
{
	return cost_shape_params(m) - (m->tied ? 0 : (double)m->vocab * m->hidden);
}

static const char *const task_names[] = { "train", "lora", "infer" };

const char *cost_task_name(enum cost_task t)
{
	return (unsigned)t < 3 ? task_names[t] : "?";
}

int cost_task_from_name(const char *s)
{
	for (int i = 0; s && i < 3; i++)
		if (!strcmp(s, task_names[i]))
			return i;
	return -1;
}

const char *cost_bound_name(enum cost_bound b)
{
	static const char *const n[] = { "compute", "memory bandwidth", "memory capacity", "interconnect", "host feed" };
	return (unsigned)b < 5 ? n[b] : NULL;
}

double cost_weight_bytes(const struct cost_job *j)
{
	return j->fp8 && j->task == COST_INFER ? 1 : 2;
}

double cost_kv_elem_bytes(const struct cost_job *j)
{
	return j->kv_dtype == 1 || j->kv_dtype == 2 ? j->kv_dtype : cost_weight_bytes(j);
}

double cost_kv_bytes_per_token(const struct cost_job *j)
{
	const struct cost_shape *m = &j->shape;
	double hd = m->heads > 0 ? (double)m->hidden / m->heads : 0;
	return 2.0 * m->layers * m->kv_heads * hd * cost_kv_elem_bytes(j);
}

int cost_job_parse(const char *spec, struct cost_job *j, char *err, size_t errlen)
{
	char model[64], task[16], tokens[32], seq[16] = "", *end;
	const struct cost_shape *m;
	memset(j, 0, sizeof *j);
	int nf = spec ? sscanf(spec, "%63[^:]:%15[^:]:%31[^:]:%15s", model, task, tokens, seq) : 0;
	if (nf < 3) {
		snprintf(err, errlen, "--job must be MODEL:TASK:TOKENS[:SEQ] (llama-3.1-8b:train:2e9), not '%s'",
			 spec ? spec : "");
		return -1;
	}
	if (!(m = cost_preset_find(model))) {
		snprintf(err, errlen, "unknown model '%s' in --job (llama-3.2-1b, llama-3.1-8b, mistral-7b, qwen2.5-32b, "
			 "llama-3.1-70b)", model);
		return -1;
	}
	int t = cost_task_from_name(task);
	if (t < 0) {
		snprintf(err, errlen, "unknown task '%s' in --job (train, lora or infer)", task);
		return -1;
	}
	errno = 0;
	double n = strtod(tokens, &end);
	if (*end || errno || !isfinite(n) || n < 1 || n > 1e18) {
		snprintf(err, errlen, "the tokens of --job must be a number from 1 to 1e18, not '%s'", tokens);
		return -1;
	}
	long s = 4096;
	if (nf == 4 && (s = strtol(seq, &end, 10), *end || s < 1 || s > 10000000)) {
		snprintf(err, errlen, "the sequence of --job must be a whole number from 1 to 10000000, not '%s'", seq);
		return -1;
	}
	*j = (struct cost_job){ .shape = *m, .task = t, .seq = (int)s, .tokens = n, .batch = 32,
				.context = nf == 4 ? (int)s : 2048, .decode_only = 1, .arch = ARCH_OTHER };
	return 0;
}
