/* export_prom_stub.c - placeholder until the prometheus export lands (issue 8). */
#include "results/export.h"

#include <stdio.h>

int export_prometheus_runs(struct store *s, const int64_t *ids, size_t n, FILE *out, char *err, size_t errlen)
{
	(void)s; (void)ids; (void)n; (void)out;
	snprintf(err, errlen, "prometheus export is not built yet in this version");
	return -1;
}
