/*
 * host_util.c - what the host bench's parts share (host_int.h): the memory
 * the kernel says is available (or a test's stand-in for it) and the params
 * object as a metric row's JSON text.  host.c, host_decode.c and
 * host_staging.c call down into it; it calls none of them.
 */
#include "benches/host_int.h"
#include "common/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

long host_mem_test_bytes(void)
{
	const char *v = getenv("GPUVET_TEST_HOST_MEM_MB");
	char *end;
	if (!v || !*v || !bench_test_benches_allowed())
		return -1;
	long mb = strtol(v, &end, 10);
	return *end || mb < 1 || mb > (1L << 30) ? -1 : mb << 20;
}

long host_mem_available(void)
{
	long test = host_mem_test_bytes();
	if (test > 0)
		return test;
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long kb = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* The params object as bench_metric() takes it (JSON text, freed by the caller). */
char *host_params(const json_t *params)
{
	char *p = json_dumps(params, JSON_COMPACT);
	return p ? p : gv_strdup("{}");
}
