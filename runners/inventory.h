/*
 * inventory.h - what machine is this.  Collected once per run, stored with
 * it, and shown by `gpuvet inventory`.  GPUs come from NVML loaded with
 * dlopen (platform/gv_nvml.h), topology from hwloc, the rest from /proc and
 * /sys, the cloud identity from the instance metadata services (each with a
 * short timeout) unless overridden.  The JSON shape is documented in
 * README.md ("Inventory").
 */
#ifndef GPUVET_INVENTORY_H
#define GPUVET_INVENTORY_H

#include <jansson.h>

struct inventory_opts {
	const char *provider;   /* --provider: overrides the metadata */
	const char *sku;        /* --sku */
	const char *region;     /* --region */
	int no_metadata;        /* skip the metadata services (tests, air-gapped) */
	int metadata_timeout_ms;/* per service; 0: default (300 ms connect, 1 s total) */
};

/*
 * Collects the inventory.  Never fails as a whole: a part that cannot be
 * read is recorded with its reason ("gpus": [], "gpu_error": "...").  The
 * metadata base URLs can be redirected for tests with GPUVET_IMDS_AWS,
 * GPUVET_IMDS_ALIBABA (base URLs); GPUVET_NO_METADATA=1 skips them.
 */
json_t *inventory_collect(const struct inventory_opts *o);

/* Convenience readers of a collected inventory. */
int inventory_gpu_count(const json_t *inv);
/* Why there is no GPU ("no nvidia driver: ..."), or NULL when there are GPUs. */
const char *inventory_gpu_error(const json_t *inv);
/* Reference model key of GPU 0 ("H100-SXM"), or NULL. */
const char *inventory_gpu_model(const json_t *inv);
const char *inventory_provider(const json_t *inv);
const char *inventory_instance_type(const json_t *inv);
const char *inventory_region(const json_t *inv);

/* Human-readable summary on f. */
void inventory_print(const json_t *inv, FILE *f);

#endif
