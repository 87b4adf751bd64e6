/*
 * fp_rows.c - a fingerprint's rows agree with each other (fp_check.h
 * fp_check_rows): run.gpu_count equal to the inventory's GPUs when both are
 * given, since the GPUs judged one by one are counted from the inventory
 * and the fleet and the price from gpu_count.  Refused at import (exit 2),
 * nothing stored.  Two rows of one metric are not refused (gpuvet's own
 * captures hold some: a figure derived twice), the judge takes the worst
 * (judge/metric_dups.c).
 */
#include "results/fp_check.h"
#include <stdio.h>

int fp_check_rows(const struct jtree *t, uint32_t fp, char *err, size_t errlen)
{
	uint32_t gc = jt_get(t, jt_get(t, fp, "run"), "gpu_count");
	size_t ninv = jt_size(t, jt_get(t, jt_get(t, fp, "inventory"), "gpus"));
	if (ninv && gc && jt_is_int(t, gc) && jt_int(t, gc) != (long long)ninv) {
		snprintf(err, errlen, "run.gpu_count %lld disagrees with the inventory's %zu gpu(s)", jt_int(t, gc), ninv);
		return -1;
	}
	return 0;
}
