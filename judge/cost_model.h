/*
 * cost_model.h - what a training, LoRA or inference job of a named model
 * needs and how fast it runs on one instance type, from that type's
 * measured (or reference) figures (issue 37; docs/cost.md is the user's
 * account).  Pure arithmetic: no store, no prices.  Every factor it uses is
 * one row of cost_consts[] with its source.
 */
#ifndef GPUVET_COST_MODEL_H
#define GPUVET_COST_MODEL_H

#include <stddef.h>

/* A transformer's shape (dense, decoder-only, SwiGLU MLP, grouped-query attention). */
struct cost_shape {
	const char *name;
	double params;          /* total parameters; 0: computed from the shape */
	int layers, hidden, ffn, heads, kv_heads, vocab;
	int tied;               /* input embedding shared with the output head */
	const char *source;     /* where the shape comes from */
};

extern const struct cost_shape cost_presets[];
extern const size_t cost_presets_count;
const struct cost_shape *cost_preset_find(const char *name);

/* Parameters: total, and those that take part in a matrix multiply per token (the input embedding lookup does not). */
double cost_shape_params(const struct cost_shape *m);
double cost_shape_matmul_params(const struct cost_shape *m);

/* The model's constants: value, the band it may lie in, its source (one table, cost_model.c). */
enum cost_k {
	CK_TRAIN_GEMM_FRACTION,   /* of the sustained GEMM rate a training step achieves */
	CK_DECODE_BW_FRACTION,    /* of the measured DRAM traffic rate a decode step achieves */
	CK_REF_GEMM_SPREAD,       /* a reference GEMM figure's downward spread */
	CK_TRAIN_BYTES_PER_PARAM, /* full training, bf16 mixed precision + AdamW */
	CK_ACT_BYTES_PER_TOKEN_LAYER_PER_HIDDEN, /* activations kept for backward */
	CK_CKPT_BYTES_PER_TOKEN_LAYER_PER_HIDDEN, /* with activation checkpointing */
	CK_CKPT_COMPUTE_FACTOR,   /* one more forward: 4/3 of the model FLOPs */
	CK_CKPT_TIME_FACTOR,      /* what that costs in step time (the recompute runs at a higher efficiency) */
	CK_LOGIT_BYTES,           /* per token per vocabulary entry */
	CK_USABLE_MEMORY_FRACTION,/* of a GPU's memory a job can hold */
	CK_OVERLAP,               /* of the step's compute time communication may hide behind */
	CK_NVLINK_BUSBW_FRACTION, /* all-reduce busbw over one direction of NVLink (no measurement, no floor) */
	CK_INTER_NODE_GBPS_PER_GPU, /* network between instances per GPU, GB/s (never measured here) */
	CK_D2D_TRAFFIC_FACTOR,    /* DRAM bytes per byte a device-to-device copy reports */
	CK_HBM_COPY_FRACTION,     /* of the datasheet bandwidth a copy reaches (no measurement) */
	CK_TOKEN_BYTES,           /* host bytes fed per training token */
	CK_TP_COLLECTIVES_PER_LAYER, /* tensor-parallel all-reduces per layer per token (forward and backward) */
	CK_CLUSTER_MIN_GPUS,      /* the fewest GPUs per instance of a type a job may span instances of */
	CK_DECODE_LAYER_US,       /* a decode step's fixed time per layer (kernel latencies), microseconds */
	CK_FSDP_BATCH_TOKENS,     /* tokens per GPU per FSDP gather (a micro-batch: sequences x length, at least this) */
	CK_PIPELINE_MICROBATCHES, /* micro-batches per step and data-parallel copy in a pipeline (its bubble) */
	CK_PIPELINE_VIRTUAL,      /* virtual stages per pipeline stage (interleaved 1F1B) */
	CK_TORCH_MICROBATCH,      /* sequences per micro-batch a PyTorch (FSDP) step holds the activations of */
	CK_LORA_CKPT_TIME_FACTOR, /* what activation checkpointing costs a LoRA step (its recomputed forward) */
	CK_LORA_RANK,             /* the adapters' rank (their state: weights, gradients, AdamW) */
	CK_MAX_CONCURRENCY_VLLM,  /* requests a vLLM engine runs at once by default */
	CK_MAX_CONCURRENCY_TRTLLM,/* requests a TensorRT-LLM engine runs at once by default */
	CK_TORCH_LAYER_BYTES,     /* PyTorch: DRAM bytes of a layer's elementwise kernels per token per hidden unit */
	CK_LOSS_BYTES,            /* PyTorch: DRAM bytes of the loss over fp32 logits per token per vocabulary entry */
	CK_OPTIMIZER_BYTES,       /* PyTorch: DRAM bytes per trainable parameter per optimizer step */
	CK_COUNT
};

struct cost_const {
	const char *name;
	double value, low, high;
	const char *unit, *source;
};

extern const struct cost_const cost_consts[CK_COUNT];
double cost_k(enum cost_k k);

enum cost_task { COST_TRAIN, COST_LORA, COST_INFER };
const char *cost_task_name(enum cost_task t);
int cost_task_from_name(const char *s);   /* -1 unknown */

/*
 * The software stack a job runs under (judge/cost_stack.c): each has its own
 * efficiency figures fitted on published tables of that stack, per GPU
 * generation, and a band calibrated on the published record.
 *   pytorch       FSDP2 with optional tensor parallelism (torchtitan, llm-foundry, NeMo Automodel)
 *   megatron      NeMo / Megatron-LM: tensor, pipeline and context parallelism, distributed optimizer
 *   vllm          continuous batching, paged KV cache
 *   tensorrt-llm  in-flight batching, paged KV cache, fused kernels
 */
enum cost_stack { STACK_DEFAULT, STACK_PYTORCH, STACK_MEGATRON, STACK_VLLM, STACK_TRTLLM, STACK_COUNT };
const char *cost_stack_name(enum cost_stack s);
/* -1 unknown, -2 not a stack of that task (megatron serving, vllm training) */
int cost_stack_from_name(const char *s, enum cost_task t);
/* The stack a job runs under: its own, else the task's default (pytorch for training and LoRA, vllm for serving). */
enum cost_stack cost_job_stack(enum cost_task t, enum cost_stack s);

/* GPU generations the efficiency figures are fitted per. */
enum cost_arch { ARCH_OTHER, ARCH_AMPERE, ARCH_ADA, ARCH_HOPPER, ARCH_BLACKWELL, ARCH_COUNT };
enum cost_arch cost_arch_of(const char *gpu_key);
const char *cost_arch_name(enum cost_arch a);

struct cost_job {
	struct cost_shape shape;
	enum cost_task task;
	int seq;                /* training sequence length */
	double tokens;          /* the job: tokens trained on, or generated */
	int fp8;                /* fp8 GEMMs (and fp8 weights and KV cache for inference) */
	int batch;              /* inference: concurrent sequences */
	int context;            /* inference: tokens of context each decode step attends to (mean) */
	int max_gpus;           /* 0: no limit */
	enum cost_stack stack;  /* STACK_DEFAULT: the task's default */
	/* serving: a request's prompt and output tokens, requests in flight (0: as many as the KV cache holds) */
	int prompt_tokens, output_tokens, concurrency;
	int decode_only;        /* --batch/--context: decode steps alone at that context, the prompts not charged */
	int static_batching;    /* the published check's older runs: a batch prefills, then decodes, no overlap */
	double concurrency_per_gpu; /* > 0 (the published check): the publisher's requests in flight per GPU, in copies
				       of whatever size the stack chooses (instead of concurrency per copy) */
	int kv_dtype;           /* KV cache bytes per element: 0 as the weights (fp8 with --precision fp8), 1, 2 */
	enum cost_arch arch;    /* the GPU generation of the instance type; ARCH_OTHER: unknown */
};

/* One instance type's figures, per GPU; a band (lo, hi) around each.  NAN: none. */
struct cost_hw {
	int gpus;               /* per instance */
	double mem_gib;         /* per GPU */
	double gemm_tflops, gemm_lo, gemm_hi;
	double mem_gbps, mem_lo, mem_hi;   /* DRAM traffic GB/s (2x the D2D copy rate) */
	double busbw_gbps;      /* all-reduce bus bandwidth inside the instance */
	double inter_gbps;      /* network between instances, per GPU (the prediction's centre: never measured) */
	double h2d_gbps;        /* pinned host to device */
};

enum cost_bound { BOUND_COMPUTE, BOUND_MEMBW, BOUND_CAPACITY, BOUND_INTERCONNECT, BOUND_HOST, BOUND_NONE };
/* NULL for BOUND_NONE (a type left out by --gpus or for want of figures, not by the job) */
const char *cost_bound_name(enum cost_bound b);

struct cost_pred {
	int fits;
	char why[240];
	int gpus_needed;        /* the fewest GPUs the job's memory needs */
	int instances;          /* of this type */
	int gpus_used;
	int replica_gpus;       /* inference: GPUs one copy of the weights spans */
	int checkpointing;      /* activation checkpointing needed to fit */
	int fsdp;               /* weights, gradients and optimizer states sharded over every GPU (FSDP) */
	int tp;                 /* tensor-parallel GPUs per copy (1: none) */
	int pp, cp, dp;         /* pipeline stages, context-parallel GPUs, data-parallel copies */
	double concurrency;     /* serving: requests in flight per copy */
	double ttft_s, ttft_lo, ttft_hi;  /* serving: time to first token, seconds */
	double itl_s, itl_lo, itl_hi;     /* serving: inter-token latency, seconds */
	const char *band_note;  /* NULL, or why the band is wider: outside what the published record covers */
	char layout[120];       /* the layout chosen, in words (FSDP / TP / PP / CP / checkpointing; serving: the copies) */
	double mem_gib_per_gpu; /* what the job holds on each GPU */
	double flops_per_token; /* model FLOPs (docs/cost.md convention) */
	double bytes_per_token; /* inference decode: DRAM bytes read per generated token; PyTorch training and LoRA: the
				   step's DRAM bytes per token besides its GEMMs and attention (cost_predict.c) */
	double tps_gpu, tps_lo, tps_hi;   /* tokens/s per GPU of the instances used (idle GPUs counted) */
	double prefill_tps_gpu;           /* inference: prompt tokens/s per GPU, compute-bound */
	enum cost_bound bound;
};

/* Predict; returns p->fits. */
int cost_predict(const struct cost_job *j, const struct cost_hw *h, struct cost_pred *p);

/*
 * A job as "MODEL:TASK:TOKENS[:SEQ]" (report --job, run --job): a preset,
 * train|lora|infer, the job's tokens ("2e9") and the sequence (inference: the
 * context); the rest at cost's defaults (seq 4096, batch 32, context 2048,
 * bf16).  0, or -1 with a one-line message.
 */
int cost_job_parse(const char *spec, struct cost_job *j, char *err, size_t errlen);

/* Bytes per element of the KV cache. */
double cost_kv_elem_bytes(const struct cost_job *j);
/* Bytes per parameter of the weights the job reads (2 bf16, 1 fp8). */
double cost_weight_bytes(const struct cost_job *j);
/* KV cache bytes per token of context, whole model. */
double cost_kv_bytes_per_token(const struct cost_job *j);

#endif
