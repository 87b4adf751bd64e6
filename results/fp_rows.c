/*
 * fp_rows.c - a fingerprint's rows agree with each other (fp_check.h
 * fp_check_rows): one metric row per (bench, name, gpu), since a policy, a
 * flag or a ranking reading "the" value of a metric would otherwise read
 * whichever row came first; and run.gpu_count equal to the inventory's GPUs
 * when both are given, since the GPUs judged one by one are counted from
 * the inventory and the fleet and the price from gpu_count.  Refused at
 * import (exit 2), nothing stored.
 */
#include "results/fp_check.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mrow {
	const char *bench, *name;
	long long gpu;
	size_t idx;
};

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_mrow(const void *pa, const void *pb)
{
	const struct mrow *a = pa, *b = pb;
	int c = cmp_str(a->bench, b->bench);
	if (!c)
		c = cmp_str(a->name, b->name);
	if (!c)
		c = (a->gpu > b->gpu) - (a->gpu < b->gpu);
	if (!c)
		c = (a->idx > b->idx) - (a->idx < b->idx);
	return c;
}

static int duplicate_metrics(const struct jtree *t, uint32_t fp, char *err, size_t errlen)
{
	uint32_t ms = jt_get(t, fp, "metrics"), e;
	size_t n = jt_size(t, ms), i, k = 0;
	int rc = 0;
	if (n < 2)
		return 0;
	struct mrow *rows = gv_malloc(n * sizeof *rows);
	jt_foreach(t, ms, i, e) {
		uint32_t g = jt_get(t, e, "gpu");
		rows[k++] = (struct mrow){ jt_str(t, jt_get(t, e, "bench")), jt_str(t, jt_get(t, e, "name")),
					   g && jt_is_int(t, g) ? jt_int(t, g) : -1, i };
	}
	qsort(rows, k, sizeof *rows, cmp_mrow);
	for (i = 1; i < k && !rc; i++)
		if (!cmp_str(rows[i].bench, rows[i - 1].bench) && !cmp_str(rows[i].name, rows[i - 1].name) &&
		    rows[i].gpu == rows[i - 1].gpu) {
			snprintf(err, errlen, "metrics[%zu] repeats metrics[%zu] (%s, gpu %lld): a fingerprint holds one row "
				 "per metric and gpu", rows[i].idx, rows[i - 1].idx, rows[i].name ? rows[i].name : "?",
				 rows[i].gpu);
			rc = -1;
		}
	free(rows);
	return rc;
}

int fp_check_rows(const struct jtree *t, uint32_t fp, char *err, size_t errlen)
{
	uint32_t gc = jt_get(t, jt_get(t, fp, "run"), "gpu_count");
	size_t ninv = jt_size(t, jt_get(t, jt_get(t, fp, "inventory"), "gpus"));
	if (ninv && gc && jt_is_int(t, gc) && jt_int(t, gc) != (long long)ninv) {
		snprintf(err, errlen, "run.gpu_count %lld disagrees with the inventory's %zu gpu(s)", jt_int(t, gc), ninv);
		return -1;
	}
	return duplicate_metrics(t, fp, err, errlen);
}
