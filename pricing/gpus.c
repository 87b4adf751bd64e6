/* gpus.c - placeholder table until issue 3 fills it. */
#include "pricing/gpus.h"

#include <string.h>

const struct gpu_ref gpu_refs[] = { { .key = NULL } };
const size_t gpu_refs_count = 0;

static const char *const dtype_names[GPU_DTYPE_COUNT] = { "fp32", "tf32", "fp16", "bf16", "fp8" };

const char *gpu_dtype_name(enum gpu_dtype d) { return (unsigned)d < GPU_DTYPE_COUNT ? dtype_names[d] : "?"; }
int gpu_dtype_from_name(const char *s)
{
	for (int i = 0; i < GPU_DTYPE_COUNT; i++)
		if (!strcmp(s, dtype_names[i]))
			return i;
	return -1;
}
const struct gpu_ref *gpu_ref_find(const char *key) { (void)key; return NULL; }
const struct gpu_ref *gpu_ref_match(const char *n, double m) { (void)n; (void)m; return NULL; }
double pcie_link_gbps(int gen, int width) { (void)gen; (void)width; return 0; }
