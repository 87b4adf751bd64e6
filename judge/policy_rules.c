/*
 * policy_rules.c - which metric a policy rule judges, and when it cannot
 * (policy_int.h).  No fallback past a failure: a rule is judged on its first
 * metric; a later alternative only where the GPU model has no path for the
 * earlier one (FP16 on a model without BF16: common/gpus.c gpu_has_dtype).
 * A metric whose bench failed is a failed check; one whose bench timed out,
 * was skipped or did not report it, or whose value is null or not finite,
 * is not measured.  Never judged on an alternative the run happened to
 * report instead (docs/acceptance.md "Fail closed").
 */
#include "judge/policy_int.h"
#include "results/fprun.h"
#include "common/gpus.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* 1 when the run's GPU model is known to have no path for metric m (a GEMM dtype without a peak). */
static int model_lacks(const struct fprun *fp, const char *m)
{
	char dt[16];
	int d;
	if (sscanf(m, "gemm.%15[a-z0-9].", dt) != 1 || (d = gpu_dtype_from_name(dt)) < 0)
		return 0;
	return gpu_has_dtype(fp->d.model, (enum gpu_dtype)d) == 0;
}

const struct fp_metric *policy_rule_metric(const struct policy_rule *r, int gpu, struct fprun *fp, const char **name,
					   char *why, size_t whylen, int *failed)
{
	int i = 0;
	*failed = 0;
	while (i + 1 < r->nmetrics && model_lacks(fp, r->metrics[i]))
		i++;
	const char *m = r->metrics[i];
	char bench[32];
	size_t bl = strcspn(m, ".");
	snprintf(bench, sizeof bench, "%.*s", (int)(bl < sizeof bench ? bl : sizeof bench - 1), m);
	const struct fp_bench *b = fprun_bench(fp, bench);
	const char *st = b ? b->status : NULL, *reason = b ? b->reason : NULL;
	const struct fp_metric *row = fprun_metric(fp, m, gpu);
	*name = m;
	if (st && strcmp(st, "ok")) {
		*failed = !strcmp(st, "failed");
		snprintf(why, whylen, "bench %s %s%s%s", bench, st, reason ? ": " : "", reason ? reason : "");
	} else if (!st && !row) {
		snprintf(why, whylen, "bench %s did not run", bench);
	} else if (!row) {
		snprintf(why, whylen, "bench %s ran but did not report it", bench);
	} else if (!isfinite(row->value)) {
		snprintf(why, whylen, "%s is null: the bench reported no finite value", m);
	} else {
		return row;
	}
	return NULL;
}
