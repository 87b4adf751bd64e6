/*
 * cost_stack.c - the software stacks a job runs under and their figures
 * (cost_model.h): each stack's efficiency per task, GPU generation and
 * precision, fitted on the published tables of that stack (the fitting
 * cases are marked in judge/cost_published.csv and named here), and the
 * band each task kind's prediction carries, calibrated on the whole
 * published record (`gpuvet cost --published`, docs/cost.md).
 */
#include "judge/cost_stack.h"

#include <stddef.h>
#include <string.h>

static const char *const stack_names[STACK_COUNT] = { "default", "pytorch", "megatron", "vllm", "tensorrt-llm" };

const char *cost_stack_name(enum cost_stack s)
{
	return (unsigned)s < STACK_COUNT ? stack_names[s] : "?";
}

int cost_stack_from_name(const char *s, enum cost_task t)
{
	for (int i = 1; s && i < STACK_COUNT; i++)
		if (!strcmp(s, stack_names[i])) {
			int serving = i == STACK_VLLM || i == STACK_TRTLLM;
			return serving == (t == COST_INFER) ? i : -2;
		}
	return -1;
}

enum cost_stack cost_job_stack(enum cost_task t, enum cost_stack s)
{
	if (s != STACK_DEFAULT)
		return s;
	return t == COST_INFER ? STACK_VLLM : STACK_PYTORCH;
}

static const char *const arch_names[ARCH_COUNT] = { "other", "Ampere", "Ada", "Hopper", "Blackwell" };

const char *cost_arch_name(enum cost_arch a)
{
	return (unsigned)a < ARCH_COUNT ? arch_names[a] : "other";
}

/* From a GPU reference key (common/gpus.c) or a model name as a catalog gives it. */
enum cost_arch cost_arch_of(const char *k)
{
	static const struct { const char *prefix; enum cost_arch a; } map[] = {
		{ "A100", ARCH_AMPERE }, { "A10", ARCH_AMPERE }, { "RTX-A6000", ARCH_AMPERE }, { "A40", ARCH_AMPERE },
		{ "L40", ARCH_ADA }, { "L4", ARCH_ADA }, { "RTX6000-ADA", ARCH_ADA },
		{ "H100", ARCH_HOPPER }, { "H200", ARCH_HOPPER }, { "H20", ARCH_HOPPER }, { "GH200", ARCH_HOPPER },
		{ "B200", ARCH_BLACKWELL }, { "GB200", ARCH_BLACKWELL }, { "B300", ARCH_BLACKWELL },
		{ "GB300", ARCH_BLACKWELL },
	};
	for (size_t i = 0; k && i < sizeof map / sizeof map[0]; i++)
		if (!strncmp(k, map[i].prefix, strlen(map[i].prefix)))
			return map[i].a;
	return ARCH_OTHER;
}

#define TITAN "pytorch/torchtitan docs/performance.md"
#define FOUNDRY "mosaicml/llm-foundry scripts/train/benchmarking/README.md"
#define NEMO "NVIDIA/NeMo docs/source/performance/performance_summary.md (NeMo 24.07)"
#define MBRIDGE "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md (25.09)"
#define AUTOMODEL "NVIDIA-NeMo/Automodel docs/performance-summary.md (2013a4dd6, 2026-04-10)"
#define TRT10 "NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md (v1.0)"
#define TRT09 "NVIDIA/TensorRT-LLM docs/source/performance.md (v0.9.0)"
#define VLLMSM "simon-mo/vLLM-Benchmark README.md (b2f80f2, vLLM 0.8.2)"

/*
 * Of the sustained GEMM rate of the job's dtype (the reference of common/gpus.c, or what the type's runs
 * measured) a step achieves, in the FLOPs convention of cost_model.c.  Each row: its fitting cases (ids of
 * judge/cost_published.csv, marked fitted there), the value being the geometric mean of what they need; and
 * its own spread, the band of every prediction made with it: the lowest and highest published / predicted of
 * the stack's cases of the task in the record (`gpuvet cost --published`, the cases known to fall outside
 * left out, each with its reason in tests/unit/test_cost_model.c).  Megatron's LoRA, 3 cases, takes its
 * training's spread with them.  Fitted against the median references of issue 58 (H100-SXM 688.9 bf16 / 1314.5
 * fp8, H200 680.3 / 1280.6).  PyTorch's rows are of its GEMMs and attention alone: the step's other DRAM traffic
 * (torch_layer_bytes_per_token_hidden, loss_bytes_per_token_vocab, optimizer_bytes_per_param in cost_model.c) is
 * charged apart, at the DRAM rate; Megatron's and the serving stacks' rows hold everything.
 */
const struct cost_eff cost_effs[] = {
	{ STACK_PYTORCH, COST_TRAIN, ARCH_HOPPER, 0, 0.695, 0.86, 1.11, "foundry-h100-7b-2k, foundry-h100-13b-2k",
	  FOUNDRY " (H100 80GB BF16, 8 GPUs); gpuvet's own 1.5 B training step 1.01-1.02 of its prediction on an H100 "
	  "(tests/fixtures/gpu/h100-2026-11-25), 1.04-1.07 on an H200 (h200-2026-11-28)" },
	{ STACK_PYTORCH, COST_TRAIN, ARCH_HOPPER, 1, 0.484, 0.86, 1.11, "titan-h100-8b-fp8",
	  TITAN " table 1 (FSDP + torch.compile + Float8, Llama 3.1 8B, 8 GPUs, checkpointing): Float8 only on "
	  "nn.Linear" },
	{ STACK_PYTORCH, COST_TRAIN, ARCH_AMPERE, 0, 0.779, 0.86, 1.11, "foundry-a100-7b-2k, foundry-a100-13b-2k",
	  FOUNDRY " (A100 80GB BF16, 8 GPUs)" },
	/* the low end reaches gpuvet's own plain PyTorch LoRA step (unfused adapters, no torch.compile): 0.80-0.81 of
	 * the centre on an H100 (tests/fixtures/gpu/h100-2026-11-25), 0.83-0.87 on an H200 (h200-2026-11-28); NeMo
	 * Automodel's fused recipes 0.89-1.02 */
	{ STACK_PYTORCH, COST_LORA, ARCH_HOPPER, 0, 0.789, 0.78, 1.02, "automodel-8b-lora",
	  AUTOMODEL " (LoRA, DGX-H100 BF16, 1 GPU); its FSDP2 rows on 8 and 16 GPUs check it with "
	  "lora_checkpoint_time_factor" },
	{ STACK_MEGATRON, COST_TRAIN, ARCH_HOPPER, 1, 0.605, 0.87, 1.15, "nemo-llama2-7b, mbridge-8b",
	  NEMO " and " MBRIDGE ", DGX-H100 FP8" },
	{ STACK_MEGATRON, COST_TRAIN, ARCH_BLACKWELL, 1, 0.498, 0.87, 1.15, "mbridge-b200-8b", MBRIDGE ", DGX-B200 FP8" },
	{ STACK_MEGATRON, COST_LORA, ARCH_HOPPER, 1, 0.631, 0.87, 1.15, "nemo-llama2-7b-lora", NEMO " (finetuning, LoRA FP8)" },
	{ STACK_TRTLLM, COST_INFER, ARCH_HOPPER, 1, 0.779, 0.82, 1.20, "trt10-h100-8b-128-128, trt10-h200-8b-1000-1000",
	  TRT10 " (FP8, trtllm-bench max throughput)" },
	{ STACK_TRTLLM, COST_INFER, ARCH_AMPERE, 0, 0.75, 0.82, 1.20, "trt09-a100-mistral-128-128", TRT09 " (A100 FP16)" },
	{ STACK_VLLM, COST_INFER, ARCH_HOPPER, 1, 0.649, 0.85, 1.03, "vllm-sm-h200-8b-10000-500",
	  VLLMSM " (H200, Llama 3.1 8B FP8 weights, 50 requests of 10,000 + 500 tokens)" },
	{ STACK_VLLM, COST_INFER, ARCH_HOPPER, 0, 0.714, 0.85, 1.03, "vllm-sm-h200-32b-10000-500",
	  VLLMSM " (2x H200, QwQ-32B BF16 TP2, 50 requests of 10,000 + 500 tokens)" },
};
const size_t cost_effs_count = sizeof cost_effs / sizeof cost_effs[0];

/*
 * The row for a job: the exact one, else (not covered: the band widens and says so) the same stack and
 * task on another precision, then another generation, then the task's first stack with a row.
 */
const struct cost_eff *cost_eff_find(enum cost_stack s, enum cost_task t, enum cost_arch a, int fp8, int *covered)
{
	const struct cost_eff *best = NULL;
	int score = -1;
	for (size_t i = 0; i < cost_effs_count; i++) {
		const struct cost_eff *e = &cost_effs[i];
		if (e->task != t)
			continue;
		int sc = (e->stack == s) * 8 + (e->arch == a) * 4 + (e->fp8 == fp8) * 2 + (e->arch == ARCH_HOPPER);
		if (sc > score) {
			score = sc;
			best = e;
		}
	}
	*covered = best && best->stack == s && best->arch == a && best->fp8 == fp8;
	return best;
}

/* Outside what the record covers, each end of the band moves out by these. */
const double cost_uncovered_lo = 0.80, cost_uncovered_hi = 1.25;
