/*
 * cost_predict_util.c - what the training prediction (cost_predict.c) and
 * the serving one (cost_serve.c) share (cost_predict_int.h): a constant or
 * a measured figure at one end of its band, the GPUs whose memory holds a
 * job, the instances they take, the calibrated band's multipliers.  It calls
 * neither file: cost_predict.c dispatches to cost_serve.c, both call down here.
 */
#include "judge/cost_predict_int.h"

#include <math.h>
#include <stdio.h>

double cost_k_at(enum cost_k k, enum cost_end e)
{
	return e == END_LO ? cost_consts[k].low : e == END_HI ? cost_consts[k].high : cost_consts[k].value;
}

double cost_pick(double mid, double lo, double hi, enum cost_end e)
{
	double v = e == END_LO ? lo : e == END_HI ? hi : mid;
	return isfinite(v) && v > 0 ? v : mid;
}

int cost_gpus_for(double usable, double fixed, double sharded)
{
	if (!(usable > fixed))
		return 0;
	double g = ceil(sharded / (usable - fixed));
	return g < 1 ? 1 : g > COST_MAX_GPUS ? 0 : (int)g;
}

int cost_instances_for(const struct cost_job *j, const struct cost_hw *h, int g, const char *how, struct cost_pred *p)
{
	int n = (g + h->gpus - 1) / h->gpus;
	const char *sep = how ? "; " : "";
	if (n > 1 && h->gpus < cost_k(CK_CLUSTER_MIN_GPUS)) {
		snprintf(p->why, sizeof p->why, "needs %d GPUs of %.0f GiB: more than one instance of %d, and only "
			 "%.0f-GPU types are spanned (cluster fabric)%s%s", g, h->mem_gib, h->gpus,
			 cost_k(CK_CLUSTER_MIN_GPUS), sep, how ? how : "");
		return 0;
	}
	if (j->max_gpus > 0 && (long)n * h->gpus > j->max_gpus) {
		snprintf(p->why, sizeof p->why, "needs %d GPU(s) (%d instance(s) of %d), more than --gpus %d%s%s", g, n,
			 h->gpus, j->max_gpus, sep, how ? how : "");
		return 0;
	}
	return n;
}

void cost_band_of(const struct cost_eff *e, int covered, struct cost_pred *p, double *lo, double *hi)
{
	*lo = e ? e->lo : cost_uncovered_lo;
	*hi = e ? e->hi : cost_uncovered_hi;
	if (covered)
		return;
	*lo *= cost_uncovered_lo;
	*hi *= cost_uncovered_hi;
	p->band_note = "outside the published record (no fitted figure for this stack, GPU generation and "
		       "precision): band widened";
}

void cost_layout_text(const struct cost_job *j, struct cost_pred *p)
{
	char *b = p->layout;
	size_t n = sizeof p->layout, w = 0;
	if (j->task == COST_INFER) {
		snprintf(b, n, "copies of %d GPU%s (TP %d), %d per instance, %.0f in flight each", p->replica_gpus,
			 p->replica_gpus > 1 ? "s" : "", p->tp, p->dp, p->concurrency);
		return;
	}
	if (cost_job_stack(j->task, j->stack) == STACK_PYTORCH || p->fsdp)
		w = (size_t)snprintf(b, n, "%s over %d GPU%s", p->fsdp && cost_job_stack(j->task, j->stack) != STACK_PYTORCH ?
				     "Megatron FSDP" : "FSDP2", p->gpus_used, p->gpus_used > 1 ? "s" : "");
	else
		w = (size_t)snprintf(b, n, "distributed optimizer, DP %d", p->dp);
	if (w < n && p->tp > 1)
		w += (size_t)snprintf(b + w, n - w, ", TP %d", p->tp);
	if (w < n && p->pp > 1)
		w += (size_t)snprintf(b + w, n - w, ", PP %d (VP %.0f)", p->pp, cost_k(CK_PIPELINE_VIRTUAL));
	if (w < n && p->cp > 1)
		w += (size_t)snprintf(b + w, n - w, ", CP %d", p->cp);
	if (w < n && p->checkpointing)
		snprintf(b + w, n - w, ", activation checkpointing");
}
