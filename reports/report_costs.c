/*
 * report_costs.c - the first screen's "most per dollar" for the workloads a
 * buyer rents for (issue 58 item 2): each a named reference job priced by
 * `gpuvet cost` (judge/cost.h, its public cost_compute, the serving model for
 * serving), so the page's dollars per million tokens are the figures the
 * command it names prints.  GEMM per dollar stays on the page as what it is,
 * "BF16 matrix multiply per $/h" (html_answer.c).
 */
#include "reports/report_int.h"
#include "judge/cost.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>

/* The reference jobs, in the order of the page: what each is, and the command that prints the same figures. */
static const struct {
	const char *label, *model;
	enum cost_task task;
	int seq;
} jobs[] = {
	{ "Training Llama 3.1 8B (seq 8192)", "llama-3.1-8b", COST_TRAIN, 8192 },
	{ "Serving Llama 3.1 8B (1000 + 1000 tokens a request)", "llama-3.1-8b", COST_INFER, 0 },
	{ "Serving Llama 3.1 70B (1000 + 1000 tokens a request)", "llama-3.1-70b", COST_INFER, 0 },
};

/* One job as `gpuvet cost` builds it from the command it names (runners/cmd_cost.c's defaults). */
static int job_of(size_t i, struct cost_opts *co)
{
	const struct cost_shape *m = cost_preset_find(jobs[i].model);
	if (!m)
		return -1;
	co->job = (struct cost_job){ .shape = *m, .task = jobs[i].task, .seq = jobs[i].seq ? jobs[i].seq : 4096,
				     .tokens = 1e9, .batch = 32, .context = jobs[i].seq ? jobs[i].seq : 2048,
				     .stack = STACK_DEFAULT };
	if (jobs[i].task == COST_INFER)
		co->job.prompt_tokens = co->job.output_tokens = 1000;
	return 0;
}

/* The options every reference job shares: bounded as the page's rankings are, so its memory does not grow with
 * the catalog; all three jobs are bf16, so one read of the store serves them. */
static struct cost_opts base_opts(const struct report_opts *o)
{
	return (struct cost_opts){ .include_estimates = !o->no_estimates, .max_age_days = o->max_age_days,
				   .estimates_max = REPORT_ESTIMATES_MAX, .left_out_max = -1 };
}

size_t rep_workload_rank_opts(const struct report_opts *o, struct rank_opts *ro)
{
	const struct cost_opts base = base_opts(o);
	return cost_rank_opts(&base, ro);
}

struct cost_basis *rep_workload_basis(struct store *s, const struct rank_gather *g, const struct report_opts *o,
				      char *err, size_t errlen)
{
	const struct cost_opts base = base_opts(o);
	struct cost_basis *b = NULL;
	return cost_basis_load(s, g, &base, &b, err, errlen) ? NULL : b;
}

json_t *rep_workload_costs(struct store *s, const struct report_opts *o, const struct cost_basis *b, const char *berr)
{
	json_t *out = json_array();
	for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
		struct cost_opts co = base_opts(o);
		char err[512] = "", cmd[256];
		json_t *r = NULL;
		snprintf(cmd, sizeof cmd, "gpuvet cost --model %s --task %s%s%s", jobs[i].model, cost_task_name(jobs[i].task),
			 jobs[i].seq ? " --seq 8192" : "", o->no_estimates ? "" : " --estimates");
		if (!b)
			snprintf(err, sizeof err, "%s", berr && berr[0] ? berr : "the store's figures could not be read");
		if (!b || job_of(i, &co) || cost_compute_on(s, b, &co, &r, err, sizeof err) < 0)
			r = json_pack("{s:s}", "error", err[0] ? err : "no such preset");
		json_array_append_new(out, json_pack("{s:s,s:s,s:o}", "label", jobs[i].label, "command", cmd, "result", r));
	}
	return out;
}
