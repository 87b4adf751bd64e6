/*
 * cmd_cost.c - `gpuvet cost`: what a described job costs on each priced
 * instance type.  The computation is judge/cost.c (the model in
 * judge/cost_model.c, docs/cost.md); this file parses the job and prints the
 * table or the JSON.
 */
#include "judge/cost.h"
#include "judge/derive.h"
#include "judge/rank.h"
#include "results/fprun.h"
#include "results/store.h"
#include "runners/cli.h"
#include "runners/cost_line.h"
#include "runners/opts.h"
#include "common/ident.h"
#include "common/util.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct gv_opt cost_opts[] = {
	{ .name = "model", .has_arg = required_argument, .val = 'M', .arg = "NAME",
	  .help = "a preset shape: llama-3.2-1b, llama-3.1-8b, mistral-7b, qwen2.5-32b, llama-3.1-70b (the flags "
		  "below change one of its figures)" },
	{ .name = "params", .has_arg = required_argument, .val = 'P', .arg = "N",
	  .help = "total parameters, within 10 % of the shape's own count (default: computed from the shape)" },
	{ .name = "layers", .has_arg = required_argument, .val = 'L', .arg = "L", .help = "transformer layers" },
	{ .name = "hidden", .has_arg = required_argument, .val = 'H', .arg = "D", .help = "hidden size" },
	{ .name = "ffn", .has_arg = required_argument, .val = 'F', .arg = "F", .help = "MLP (SwiGLU) intermediate size" },
	{ .name = "heads", .has_arg = required_argument, .val = 'A', .arg = "A", .help = "attention heads" },
	{ .name = "kv-heads", .has_arg = required_argument, .val = 'K', .arg = "K", .help = "key/value heads (grouped-query attention)" },
	{ .name = "vocab", .has_arg = required_argument, .val = 'V', .arg = "V", .help = "vocabulary size" },
	{ .name = "tied", .has_arg = no_argument, .val = 'T', .arg = NULL,
	  .help = "the input embedding is the output head (custom shapes; default untied)" },
	{ .name = "task", .has_arg = required_argument, .val = 't', .arg = "train|lora|infer",
	  .help = "full training with AdamW (default), LoRA fine-tuning, or inference (serving)" },
	{ .name = "stack", .has_arg = required_argument, .val = 'S', .arg = "NAME",
	  .help = "the software stack: pytorch (FSDP2, default for train and lora) or megatron (NeMo, tensor, "
		  "pipeline and context parallelism); vllm (default for infer) or tensorrt-llm" },
	{ .name = "seq", .has_arg = required_argument, .val = 's', .arg = "S",
	  .help = "training sequence length in tokens (default 4096)" },
	{ .name = "tokens", .has_arg = required_argument, .val = 'n', .arg = "T",
	  .help = "the job's size: tokens trained on, or generated (default 1e9)" },
	{ .name = "precision", .has_arg = required_argument, .val = 'p', .arg = "bf16|fp8",
	  .help = "GEMM precision (default bf16); fp8 inference also stores weights and KV cache in fp8" },
	{ .name = "gpus", .has_arg = required_argument, .val = 'g', .arg = "N",
	  .help = "use at most N GPUs: bigger types and jobs that need more do not fit" },
	{ .name = "prompt-tokens", .has_arg = required_argument, .val = 'I', .arg = "N",
	  .help = "serving: prompt tokens per request (default 1000)" },
	{ .name = "output-tokens", .has_arg = required_argument, .val = 'O', .arg = "N",
	  .help = "serving: output tokens per request (default 1000); --tokens counts these" },
	{ .name = "concurrency", .has_arg = required_argument, .val = 'C', .arg = "N",
	  .help = "serving: requests in flight per copy of the model (default: as many as the KV cache holds, up to "
		  "the stack's default)" },
	{ .name = "kv-dtype", .has_arg = required_argument, .val = 'D', .arg = "bf16|fp8",
	  .help = "serving: KV cache precision (default: the weights')" },
	{ .name = "batch", .has_arg = required_argument, .val = 'b', .arg = "B",
	  .help = "inference shorthand: decode alone, B sequences per copy at --context (the prompts not charged)" },
	{ .name = "context", .has_arg = required_argument, .val = 'c', .arg = "C",
	  .help = "inference shorthand: mean tokens of context per decode step (default --seq, else 2048)" },
	GV_OPT_ROW_MARKET('k'),
	GV_OPT_ROW_REGION('r'),
	{ .name = "run", .has_arg = required_argument, .val = 'R', .arg = "ID",
	  .help = "the job on one stored run's own figures (number or uuid prefix), named or not" },
	{ .name = "estimates", .has_arg = no_argument, .val = 'e', .arg = NULL,
	  .help = "also types never measured, from stored runs of the same GPU model or the reference, marked" },
	GV_OPT_ROW_INCLUDE_FLAGGED('f'),
	GV_OPT_ROW_MAX_AGE('a'),
	{ .name = "published", .has_arg = no_argument, .val = 'U', .arg = NULL,
	  .help = "the published throughputs the model is checked against, each predicted with its band (no store)" },
	{ .name = "markdown", .has_arg = no_argument, .val = 'm', .arg = NULL,
	  .help = "with --published: the table as Markdown (docs/cost.md's)" },
	{ .name = "wide", .has_arg = no_argument, .val = 'w', .arg = NULL,
	  .help = "every column (the bands, job hours), whole cells and each type the job does not fit on its own line; by "
		  "default lines stop at 160 columns" },
	{ .name = "json", .has_arg = no_argument, .val = 'j', .arg = NULL, .help = "the rows as JSON for scripts" },
	{ .name = "help", .has_arg = no_argument, .val = 'h', .arg = NULL, .help = "this text" },
	{ .name = NULL },
};

const struct gv_cmd_doc cmd_cost_doc = {
	.name = "cost",
	.synopsis = "cost (--model NAME | --layers L --hidden D --ffn F --heads A --kv-heads K --vocab V)\n"
		"                   [--task train|lora|infer] [--stack NAME] [--seq S] [--tokens T]\n"
		"                   [--precision bf16|fp8] [--gpus N] [--prompt-tokens N] [--output-tokens N]\n"
		"                   [--concurrency N] [--kv-dtype bf16|fp8] [--batch B] [--context C]\n"
		"                   [--market M] [--region R] [--estimates] [--max-age DAYS] [--wide] [--json]\n"
		"       gpuvet cost --published [--json | --markdown]",
	.about = "What a job costs on each priced instance type: whether it fits and how many GPUs\n"
		"and instances it needs, tokens per second per GPU and per instance, US dollars per\n"
		"million tokens, hours and dollars for the whole job, and what bounds it (compute,\n"
		"memory bandwidth, memory capacity, interconnect, host feed), each with a low-high\n"
		"band.  Predicted from what the type's runs measured (GEMM rate, device-memory\n"
		"bandwidth, all-reduce bus bandwidth, host copies); what they did not measure comes\n"
		"from the GPU model's reference and the row says so.  The types the job fits are\n"
		"ranked cheapest per million tokens first, measured and estimated together, each\n"
		"marked; the types it does not fit are listed with why, one line per reason.",
	.opts = cost_opts,
	.more = "The stacks, the model, its conventions, every constant's source and the published check: docs/cost.md.",
};

struct args {
	struct cost_opts o;
	const char *model, *task, *precision, *run, *stack, *kv;
	int json, markdown, published, wide, have[8], seq_given, context_given, batch_given, serve_given;
	unsigned char given[128];   /* by getopt's value: which options the line gave */
};

/* --params at most this far from the shape's own count (either way, as a fraction of the shape's): what the
 * formula leaves out (biases, norms, a head size other than hidden / heads) is a few percent (Qwen2.5-32B 0.9 %,
 * Gemma 7B 4 %); beyond it the count and the shape are two models, and the cost would take FLOPs and memory from
 * one and activations and the KV cache from the other (docs/cost.md). */
#define PARAMS_SHAPE_TOL 0.10

/* The long name of the option getopt returned as C. */
static const char *opt_name(int c)
{
	for (const struct gv_opt *o = cost_opts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

/* One shape or size option into a; -1 with the usage error printed, naming the option and its range. */
static int take_num(struct args *a, int c, const char *v)
{
	struct cost_shape *m = &a->o.job.shape;
	int *ip = NULL;
	double max = 10000000, *dp = NULL, got;
	switch (c) {
	case 'L': ip = &m->layers; max = 100000; a->have[0] = 1; break;
	case 'H': ip = &m->hidden; a->have[1] = 1; break;
	case 'F': ip = &m->ffn; a->have[2] = 1; break;
	case 'A': ip = &m->heads; max = 100000; a->have[3] = 1; break;
	case 'K': ip = &m->kv_heads; max = 100000; a->have[4] = 1; break;
	case 'V': ip = &m->vocab; a->have[5] = 1; break;
	case 's': ip = &a->o.job.seq; a->seq_given = 1; break;
	case 'g': ip = &a->o.job.max_gpus; max = 100000; break;
	case 'b': ip = &a->o.job.batch; max = 1000000; a->batch_given = 1; break;
	case 'c': ip = &a->o.job.context; a->context_given = 1; break;
	case 'I': ip = &a->o.job.prompt_tokens; a->serve_given = 1; break;
	case 'O': ip = &a->o.job.output_tokens; a->serve_given = 1; break;
	case 'C': ip = &a->o.job.concurrency; max = 1000000; a->serve_given = 1; break;
	case 'P': dp = &m->params; max = 1e15; break;
	case 'n': dp = &a->o.job.tokens; max = 1e18; break;
	default: return -1;
	}
	if (gv_parse_number(v, 1, max, ip != NULL, &got)) {
		char hi[32];
		snprintf(hi, sizeof hi, max < 1e9 ? "%.0f" : "1e%.0f", max < 1e9 ? max : log10(max));
		gv_usage_error("cost", "--%s must be a %s from 1 to %s, not '%s'", opt_name(c),
			       ip ? "whole number" : "number", hi, v);
		return -1;
	}
	if (ip)
		*ip = (int)got;
	else
		*dp = got;
	return 0;
}

/* The shape: a preset, changed by the flags given, or every flag of a custom shape; -1 with the error printed. */
static int check_shape(struct args *a)
{
	struct cost_shape *m = &a->o.job.shape;
	if (a->model) {
		const struct cost_shape *p = cost_preset_find(a->model);
		if (!p)
			return gv_usage_error("cost", "unknown --model '%s' (llama-3.2-1b, llama-3.1-8b, mistral-7b, "
					      "qwen2.5-32b, llama-3.1-70b; or give the shape)", a->model), -1;
		struct cost_shape given = *m;
		*m = *p;
		int *f[] = { &m->layers, &m->hidden, &m->ffn, &m->heads, &m->kv_heads, &m->vocab };
		const int *g[] = { &given.layers, &given.hidden, &given.ffn, &given.heads, &given.kv_heads, &given.vocab };
		for (int i = 0; i < 6; i++)
			if (a->have[i])
				*f[i] = *g[i];
		if (given.params > 0)
			m->params = given.params;
		if (given.tied)
			m->tied = 1;
	} else {
		for (int i = 0; i < 6; i++)
			if (!a->have[i])
				return gv_usage_error("cost", "give --model NAME, or the whole shape: --layers --hidden "
						      "--ffn --heads --kv-heads --vocab"), -1;
		m->name = "custom";
		m->source = "given on the command line";
	}
	if (m->hidden % m->heads || m->kv_heads > m->heads || m->heads % m->kv_heads)
		return gv_usage_error("cost", "--heads must divide --hidden and --kv-heads divide --heads (%d, %d, %d)",
				      m->hidden, m->heads, m->kv_heads), -1;
	return 0;
}

/* --stack, the serving options and the decode-only shorthand; -1 with the error printed. */
static int check_serving(struct args *a)
{
	struct cost_job *j = &a->o.job;
	int st = a->stack ? cost_stack_from_name(a->stack, j->task) : STACK_DEFAULT;
	if (st == -1)
		return gv_usage_error("cost", "--stack must be pytorch, megatron, vllm or tensorrt-llm, not '%s'",
				      a->stack), -1;
	if (st == -2)
		return gv_usage_error("cost", "--stack %s is not a stack for --task %s (train, lora: pytorch, megatron; "
				      "infer: vllm, tensorrt-llm)", a->stack, cost_task_name(j->task)), -1;
	j->stack = st;
	if (a->kv && strcmp(a->kv, "bf16") && strcmp(a->kv, "fp8"))
		return gv_usage_error("cost", "--kv-dtype must be bf16 or fp8, not '%s'", a->kv), -1;
	j->kv_dtype = a->kv ? (!strcmp(a->kv, "fp8") ? 1 : 2) : 0;
	if (a->serve_given && (a->batch_given || a->context_given))
		return gv_usage_error("cost", "--batch/--context (decode alone) and --prompt-tokens/--output-tokens/"
				      "--concurrency (serving): choose one"), -1;
	j->decode_only = a->batch_given || a->context_given;
	if (!j->prompt_tokens)
		j->prompt_tokens = 1000;
	if (!j->output_tokens)
		j->output_tokens = 1000;
	return 0;
}

/* Options that cannot go together: any job's beside --published (which takes none), a serving option on a
 * training job, --markdown without --published; -1 with the error printed, naming the option. */
static int check_combination(const struct args *a)
{
	static const char serving[] = "IOCDbc";   /* --prompt-tokens ... --context: serving's, or decode's */
	for (const struct gv_opt *o = cost_opts; o->name; o++) {
		if (!a->given[o->val])
			continue;
		if (a->published && !strchr("Ujmh", o->val))
			return gv_usage_error("cost", "--published takes no job or store option, only --json or "
					      "--markdown: not --%s", o->name), -1;
		if (!a->published && strchr(serving, o->val) && a->o.job.task != COST_INFER)
			return gv_usage_error("cost", "--%s is for serving (--task infer), not --task %s", o->name,
					      cost_task_name(a->o.job.task)), -1;
	}
	if (a->markdown && !a->published)
		return gv_usage_error("cost", "--markdown is --published's table (the job's table has --json)"), -1;
	return 0;
}

/* --params beside the shape it describes: refused beyond PARAMS_SHAPE_TOL, naming both counts; -1 with the error. */
static int check_params(const struct args *a)
{
	const struct cost_shape *m = &a->o.job.shape;
	if (!a->given['P'])
		return 0;
	struct cost_shape bare = *m;
	bare.params = 0;
	double own = cost_shape_params(&bare);
	if (fabs(m->params - own) <= PARAMS_SHAPE_TOL * own)
		return 0;
	return gv_usage_error("cost", "--params %.4g B disagrees with the %s shape's %.4g B parameters (%d layers, hidden %d, "
			      "ffn %d, %d heads, %d kv-heads, vocab %d%s): more than %.0f %% apart (a 4x GELU MLP of "
			      "width F is --ffn 2F/3)", m->params / 1e9, m->name, own / 1e9, m->layers, m->hidden, m->ffn, m->heads,
			      m->kv_heads, m->vocab, m->tied ? ", tied" : "", PARAMS_SHAPE_TOL * 100), -1;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	struct option opts[48];
	gv_opts_getopt(cost_opts, opts, 48);
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c > 0 && c < (int)sizeof a->given)
			a->given[c] = 1;
		switch (c) {
		case 'M': a->model = optarg; break;
		case 'R': a->run = optarg; break;
		case 'T': a->o.job.shape.tied = 1; break;
		case 't': a->task = optarg; break;
		case 'p': a->precision = optarg; break;
		case 'S': a->stack = optarg; break;
		case 'D': a->kv = optarg; break;
		case 'U': a->published = 1; break;
		case 'm': a->markdown = 1; break;
		case 'k': a->o.market = optarg; break;
		case 'r': a->o.region = optarg; break;
		case 'e': a->o.include_estimates = 1; break;
		case 'f': a->o.include_flagged = 1; break;
		case 'a':
			if (gv_opt_max_age("cost", optarg, &a->o.max_age_days))
				return -1;
			break;
		case 'j': a->json = 1; break;
		case 'w': a->wide = 1; break;
		case 'h': gv_cmd_help(&cmd_cost_doc, stdout); return 1;
		case '?': return gv_opt_refused("cost", argc, argv, opts), -1;
		default:
			if (take_num(a, c, optarg) < 0)
				return -1;
		}
	}
	if (optind < argc)
		return gv_usage_error("cost", "unexpected argument '%s'", argv[optind]), -1;
	int task = cost_task_from_name(a->task ? a->task : "train");
	if (task < 0)
		return gv_usage_error("cost", "--task must be train, lora or infer, not '%s'", a->task), -1;
	a->o.job.task = task;
	if (a->precision && strcmp(a->precision, "bf16") && strcmp(a->precision, "fp8"))
		return gv_usage_error("cost", "--precision must be bf16 or fp8, not '%s'", a->precision), -1;
	a->o.job.fp8 = a->precision && !strcmp(a->precision, "fp8");
	const char *mk = a->o.market;
	if (mk && strcmp(mk, "on_demand") && strcmp(mk, "spot") && strcmp(mk, "reserved"))
		return gv_usage_error("cost", "--market must be on_demand, spot or reserved, not '%s'", mk), -1;
	if (!a->context_given)
		a->o.job.context = a->seq_given ? a->o.job.seq : 2048;
	if (check_combination(a) < 0)
		return -1;
	if (a->published)
		return a->markdown && a->json ? gv_usage_error("cost", "--markdown and --json: choose one"), -1 : 0;
	return check_serving(a) < 0 || check_shape(a) < 0 ? -1 : check_params(a);
}

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A stored name as a terminal may show it (common/ident.h); a ring of buffers, up to 8 in one printf. */
static const char *str(json_t *o, const char *k)
{
	static char ring[8][600];
	static unsigned next;
	const char *s = json_string_value(json_object_get(o, k));
	char *b = ring[next++ % 8];
	ident_escape(s ? s : "", b, sizeof ring[0]);
	return b;
}

/* Three significant digits, whole numbers from 1000 up, "-" for none: never an exponent. */
static const char *human(char *buf, size_t size, double v)
{
	if (!isfinite(v))
		snprintf(buf, size, "-");
	else if (fabs(v) >= 1000)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.3g", v);
	return buf;
}

/* What a row stands on, in short (--wide: the fuller words): measured or est., a lowered request (before the layout,
 * so a 160-column table never cuts it), the layout, serving's latencies. */
static void row_basis(json_t *r, int wide, char *basis, size_t n)
{
	char b[24], c[24];
	size_t w;
	if (json_is_true(json_object_get(r, "estimate")))
		w = (size_t)snprintf(basis, n, "est.");
	else
		w = (size_t)snprintf(basis, n, "measured, %zu %s run(s)", json_array_size(json_object_get(r, "runs")),
				     str(r, "profile"));
	if (w < n && json_is_true(json_object_get(r, "concurrency_lowered")))   /* the machine lowered the request */
		w += (size_t)snprintf(basis + w, n - w, "; at most %.0f in flight (asked %.0f)", num(r, "concurrency"),
				      num(r, "concurrency_asked"));
	if (w < n && json_is_string(json_object_get(r, "layout")))   /* the layout the stack would choose */
		w += (size_t)snprintf(basis + w, n - w, "; %s", str(r, "layout"));
	if (w < n && isfinite(num(r, "itl_s"))) {   /* serving: the latencies a user sees */
		if (isfinite(num(r, "ttft_s")))
			w += (size_t)snprintf(basis + w, n - w, "; TTFT %s ms", human(b, sizeof b, num(r, "ttft_s") * 1e3));
		if (w < n)
			w += (size_t)snprintf(basis + w, n - w, "%s ITL %s ms", isfinite(num(r, "ttft_s")) ? "," : ";",
					      human(c, sizeof c, num(r, "itl_s") * 1e3));
	}
	if (w < n && json_is_string(json_object_get(r, "zone")))   /* spot: which zone, and that it is the lowest */
		w += (size_t)snprintf(basis + w, n - w, "; spot in %s, its region's lowest zone", str(r, "zone"));
	if (w < n && json_is_string(json_object_get(r, "band_note")))
		w += (size_t)snprintf(basis + w, n - w, "; wide band (no published fit)");
	if (w < n && wide)
		snprintf(basis + w, n - w, " (%s)", str(r, "basis"));
}

/* One row: the ones that fit ranked, those that do not (--wide) with why and no rank. */
static void print_row(json_t *r, int wide)
{
	char gpus[48], rank[16] = "-", inst[16] = "-", a[24], b[24], c[24], d[24], e[24], f[24], g[64], basis[1200],
		line[2048];
	int fits = json_is_true(json_object_get(r, "fits"));
	snprintf(gpus, sizeof gpus, "%.0fx %s", num(r, "gpu_count"), str(r, "gpu_model"));
	if (fits) {
		snprintf(inst, sizeof inst, "%.0f", num(r, "instances"));
		snprintf(rank, sizeof rank, "%.0f", num(r, "rank"));
		row_basis(r, wide, basis, sizeof basis);
	} else {
		snprintf(basis, sizeof basis, "does not fit: %s", str(r, "why"));
	}
	const char *region = str(r, "region");
	size_t n = (size_t)snprintf(line, sizeof line, "%-4s %-8s %-23s %-14s %-15s %4s %9s", rank, str(r, "provider"),
				    str(r, "instance_type"), region[0] ? region : "(any)", gpus, inst,
				    human(a, sizeof a, num(r, "tokens_per_s_per_gpu")));
	if (wide)
		n += (size_t)snprintf(line + n, sizeof line - n, " %17s",
				      fits ? (snprintf(g, sizeof g, "%s-%s", human(b, sizeof b, num(r, "tokens_per_s_per_gpu_low")),
						       human(c, sizeof c, num(r, "tokens_per_s_per_gpu_high"))), g) : "-");
	n += (size_t)snprintf(line + n, sizeof line - n, " %8s", human(d, sizeof d, num(r, "usd_per_million_tokens")));
	if (wide)
		n += (size_t)snprintf(line + n, sizeof line - n, " %9s", human(e, sizeof e, num(r, "job_hours")));
	snprintf(line + n, sizeof line - n, " %9s %-16s %s", human(f, sizeof f, num(r, "job_usd")),
		 json_is_string(json_object_get(r, "bound")) ? str(r, "bound") : "-", basis);
	gv_table_line(line, wide);
}

/* The rows that do not fit, one line per reason: the bound (memory capacity: too small) or the why's words. */
struct no_fit {
	char key[160], why[300], example[160], measured[200];
	int n, gmin, gmax;
	double mmin, mmax;
};

/* The why with its numbers taken out: rows that differ only in counts share a line. */
static void why_key(const char *why, char *key, size_t n)
{
	size_t k = 0;
	for (const char *p = why; *p && k + 1 < n; p++)
		if (!(*p >= '0' && *p <= '9') && !(*p == '.' && k && key[k - 1] == '#'))
			key[k++] = *p;
		else if (!k || key[k - 1] != '#')
			key[k++] = '#';
	key[k] = '\0';
}

static void print_no_fit(json_t *rows)
{
	struct no_fit g[16];
	size_t ng = 0, i, total = 0;
	json_t *r;
	json_array_foreach(rows, i, r) {
		char key[160];
		if (json_is_true(json_object_get(r, "fits")))
			continue;
		total++;
		if (!strcmp(str(r, "bound"), "memory capacity"))
			snprintf(key, sizeof key, "too small for the job (memory capacity)");
		else
			why_key(str(r, "why"), key, sizeof key);
		size_t k = 0;
		while (k < ng && strcmp(g[k].key, key))
			k++;
		if (k == ng && ng == sizeof g / sizeof g[0])
			k = ng - 1;   /* more kinds than lines: the last line takes the rest */
		else if (k == ng) {
			memset(&g[ng], 0, sizeof g[ng]);
			gv_strlcpy(g[ng].key, key, sizeof g[ng].key);
			gv_strlcpy(g[ng].why, str(r, "why"), sizeof g[ng].why);
			snprintf(g[ng].example, sizeof g[ng].example, "%s %s", str(r, "provider"), str(r, "instance_type"));
			g[ng].gmin = INT32_MAX;
			g[ng].mmin = INFINITY;
			ng++;
		}
		int gc = (int)num(r, "gpu_count");
		double mem = num(r, "gpu_memory_gib");
		if (!json_is_true(json_object_get(r, "estimate"))) {   /* a type the user measured is named, never counted away */
			size_t w = strlen(g[k].measured);
			snprintf(g[k].measured + w, sizeof g[k].measured - w, "%s%s %s", w ? ", " : "", str(r, "provider"),
				 str(r, "instance_type"));
		}
		g[k].n++;
		g[k].gmin = gc < g[k].gmin ? gc : g[k].gmin;
		g[k].gmax = gc > g[k].gmax ? gc : g[k].gmax;
		if (isfinite(mem)) {
			g[k].mmin = fmin(g[k].mmin, mem);
			g[k].mmax = fmax(g[k].mmax, mem);
		}
	}
	if (!total)
		return;
	printf("\n%zu instance type(s) do not fit, not ranked (--wide lists each, --json has each with why):\n", total);
	for (size_t k = 0; k < ng; k++) {
		char line[1024], gr[32], mr[48] = "";
		snprintf(gr, sizeof gr, g[k].gmin == g[k].gmax ? "%d" : "%d-%d", g[k].gmin, g[k].gmax);
		if (isfinite(g[k].mmin))
			snprintf(mr, sizeof mr, g[k].mmin == g[k].mmax ? " of %.0f GiB" : " of %.0f-%.0f GiB", g[k].mmin, g[k].mmax);
		size_t w;
		if (!strncmp(g[k].key, "too small", 9))
			w = (size_t)snprintf(line, sizeof line, "  %d type(s) too small: %s GPUs%s", g[k].n, gr, mr);
		else
			w = (size_t)snprintf(line, sizeof line, "  %d type(s) of %s GPUs%s", g[k].n, gr, mr);
		if (g[k].measured[0] && w < sizeof line)
			w += (size_t)snprintf(line + w, sizeof line - w, ", measured among them: %s", g[k].measured);
		if (w < sizeof line)
			snprintf(line + w, sizeof line - w, "; %s%s: %s", g[k].n > 1 ? "e.g. " : "", g[k].example, g[k].why);
		gv_table_line(line, 0);
	}
}

/* What the table leaves out, said: types without a price in the market, estimates not asked for. */
static void print_left_out(json_t *res)
{
	size_t i;
	json_t *un = json_object_get(res, "unpriced");
	if (json_array_size(un))
		printf("%zu instance type(s) not priced (%s; --json lists each):\n", json_array_size(un), str(res, "market"));
	for (i = 0; i < json_array_size(un);)   /* a provider's types with one why: one line */
		i = gv_print_unpriced(un, i);
	json_int_t more = json_integer_value(json_object_get(res, "estimates_that_fit"));
	if (more > 0)
		printf("%lld more type(s) fit as estimates: add --estimates\n", (long long)more);
}

static void print_table(json_t *res, int wide)
{
	json_t *job = json_object_get(res, "job"), *m = json_object_get(job, "model"), *rows = json_object_get(res, "rows");
	char t[24];
	char jl[1024], conc[40];
	size_t w = (size_t)snprintf(jl, sizeof jl, "job: %s %s, %.3g B parameters, seq %.0f, %s tokens, %s, stack %s",
				    str(job, "task"), str(m, "name"), num(m, "params") / 1e9, num(job, "seq"),
				    human(t, sizeof t, num(job, "tokens")), str(job, "precision"), str(job, "stack"));
	/* no --concurrency: as many as the KV cache holds, up to the stack's default */
	snprintf(conc, sizeof conc, json_is_number(json_object_get(job, "concurrency")) ? "%.0f" : "as many as fit",
		 num(job, "concurrency"));
	if (w < sizeof jl && !strcmp(str(job, "task"), "infer") && json_is_true(json_object_get(job, "decode_only")))
		w += (size_t)snprintf(jl + w, sizeof jl - w, ", decode alone: batch %.0f, context %.0f", num(job, "batch"),
				      num(job, "context"));
	else if (w < sizeof jl && !strcmp(str(job, "task"), "infer"))
		w += (size_t)snprintf(jl + w, sizeof jl - w, ", %.0f prompt + %.0f output tokens per request, concurrency %s, "
				      "KV cache %s", num(job, "prompt_tokens"), num(job, "output_tokens"), conc,
				      str(job, "kv_dtype"));
	if (w < sizeof jl)
		snprintf(jl + w, sizeof jl - w, "; %s prices%s", str(res, "market"),
			 !strcmp(str(res, "market"), "spot") ? " (" RANK_SPOT_NOTE ")" : "");
	gv_table_note(jl);
	printf("\n");
	char head[512];
	size_t n = (size_t)snprintf(head, sizeof head, "%-4s %-8s %-23s %-14s %-15s %4s %9s", "RANK", "PROVIDER",
				    "INSTANCE TYPE", "REGION", "GPUS", "INST", "TOK/S/GPU");
	if (wide)
		n += (size_t)snprintf(head + n, sizeof head - n, " %17s", "(LOW-HIGH)");
	n += (size_t)snprintf(head + n, sizeof head - n, " %8s", "$/Mtok");
	if (wide)
		n += (size_t)snprintf(head + n, sizeof head - n, " %9s", "JOB HOURS");
	snprintf(head + n, sizeof head - n, " %9s %-16s %s", "JOB $", "BOUND", "BASIS");
	gv_table_line(head, 1);
	size_t i, nfit = 0;
	json_t *r;
	json_array_foreach(rows, i, r) {   /* ranked: the rows that fit, cheapest first, measured and estimated together */
		if (json_is_true(json_object_get(r, "fits")))
			nfit++;
		if (json_is_true(json_object_get(r, "fits")) || wide)
			print_row(r, wide);
	}
	if (!wide)
		print_no_fit(rows);
	if (!json_array_size(rows))
		printf("(no instance type has both a %s price and a %s figure%s)\n", str(res, "market"), str(res, "metric"),
		       strcmp(str(res, "market"), "on_demand") ? ": gpuvet prices update or gpuvet prices import FILE" : "");
	else if (!nfit)
		printf("(the job fits no priced instance type: see why below)\n");
	printf("\n");
	gv_table_note("RANK: the types the job fits, cheapest per million tokens first, measured and estimated together; "
		      "TOK/S/GPU: tokens per second per GPU of the instances used; $/Mtok: US dollars per million tokens; "
		      "INST: instances of the type the job needs; measured = from the type's runs, est. = estimate from the "
		      "GPU model's runs or reference (--wide: every column, the bands and each row's basis in full; --json: "
		      "everything)");
	json_t *un = json_object_get(res, "unranked");
	if (json_array_size(un))
		printf("%zu priced instance type(s) without a %s figure:\n", json_array_size(un), str(res, "metric"));
	json_array_foreach(un, i, r)
		printf("  %s %s: %s\n", str(r, "provider"), str(r, "instance_type"), str(r, "why"));
	print_left_out(res);
}

/* --run: the job on that run's own figures (a line, or the JSON with one row); closes s. */
static int one_run(struct store *s, const struct args *a)
{
	int64_t id;
	struct fprun *fp = NULL;
	/* typed and derived as `accept RUN` loads it (less its series and flags, which cost never reads): the model
	 * and count from its devices, never its label */
	if (store_resolve_run(s, a->run, &id) || derive_load_run(s, id, STORE_RUN_NO_SERIES | STORE_RUN_NO_FLAGS, &fp)) {
		gv_err("cost: %s", store_errmsg(s));
		store_close(s);
		return GV_EXIT_USAGE;
	}
	if (a->json) {
		json_t *r = cost_run_json(fp, id, &a->o);
		char *t = json_dumps(r, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		if (t)
			puts(t);
		free(t);
		json_decref(r);
	} else {
		cost_print_run_line(s, id, fp, &a->o.job, stdout);
	}
	fprun_free(fp);
	store_close(s);
	return GV_EXIT_OK;
}

int cmd_cost(int argc, char **argv, const struct gv_global *g)
{
	struct args a = { .o.job = { .seq = 4096, .tokens = 1e9, .batch = 32 } };
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc > 0 ? GV_EXIT_OK : GV_EXIT_USAGE;
	if (a.published)
		return cost_published_print(a.json, a.markdown);
	struct store *s;
	char err[512];
	if (gv_open_reading(g, GV_READ_PRICED, &s))
		return GV_EXIT_USAGE;
	if (a.run)
		return one_run(s, &a);
	a.o.say_left_out = 1;
	json_t *r = NULL;
	rc = gv_prices_ready(s, err, sizeof err);
	if (rc == 0)
		rc = cost_compute(s, &a.o, &r, err, sizeof err);
	store_close(s);
	if (rc < 0) {
		gv_err("cost: %s", err);
		return GV_EXIT_USAGE;
	}
	if (a.json) {
		char *t = json_dumps(r, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		if (t)
			puts(t);
		free(t);
	} else {
		print_table(r, a.wide);
	}
	json_decref(r);
	return GV_EXIT_OK;
}

/* The instance price of the type the run is stored as (a row of cost_compute whose runs include it); NAN when none. */
static double run_price(struct store *s, int64_t run_id, const struct cost_job *j, char *name, size_t size)
{
	struct cost_opts o = { .job = *j };
	char err[512];
	json_t *res = NULL, *r, *id;
	double price = NAN;
	size_t i, k;
	if (gv_prices_ready(s, err, sizeof err) < 0 || cost_compute(s, &o, &res, err, sizeof err) < 0)
		return NAN;
	json_array_foreach(json_object_get(res, "rows"), i, r)
		json_array_foreach(json_object_get(r, "runs"), k, id)
			if (json_integer_value(id) == run_id && isnan(price)) {
				price = num(r, "price_per_hour");
				snprintf(name, size, "%s %s's %s", str(r, "provider"), str(r, "instance_type"), str(r, "market"));
			}
	json_decref(res);
	return price;
}

void cost_print_run_line(struct store *s, int64_t run_id, struct fprun *fp, const struct cost_job *j, FILE *out)
{
	struct cost_hw h;
	struct cost_pred p;
	char why[400], name[256] = "", t[24];
	fprintf(out, "job %s %s, %s tokens, on the machine of run %lld: ", j->shape.name, cost_task_name(j->task),
		human(t, sizeof t, j->tokens), (long long)run_id);
	int rc = cost_of_run(fp, j, &h, &p, why, sizeof why);
	if (rc < 0 || !p.fits) {
		fprintf(out, "%s\n", rc < 0 ? why : p.why);
		return;
	}
	char a[24], b[24], c[24];
	fprintf(out, "fits %d GPU(s) x %d instance(s), %s tokens/s per GPU (%s-%s), bound by %s", h.gpus, p.instances,
		human(a, sizeof a, p.tps_gpu), human(b, sizeof b, p.tps_lo), human(c, sizeof c, p.tps_hi),
		cost_bound_name(p.bound) ? cost_bound_name(p.bound) : "-");
	double price = run_price(s, run_id, j, name, sizeof name);
	if (isfinite(price) && price > 0) {
		double usd_m = price / (p.tps_gpu * h.gpus * 3600.0) * 1e6;
		fprintf(out, "; at %s $%.4g/h: $%s per million tokens, $%s for the job\n", name, price,
			human(a, sizeof a, usd_m), human(b, sizeof b, j->tokens * usd_m / 1e6));
	} else {
		fprintf(out, "; no price for it (name the run: gpuvet results tag %lld --provider P --sku TYPE)\n",
			(long long)run_id);
	}
}
