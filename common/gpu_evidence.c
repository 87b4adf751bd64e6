/*
 * gpu_evidence.c - a GPU's model from its name, memory and PCI device id
 * (gpu_evidence.h).
 *
 * The device ids are PCI's (the "Device Id" nvidia-smi -q prints, upper half;
 * vendor 0x10DE), from the PCI ID Repository's NVIDIA list (pci-ids.ucw.cz,
 * vendor 10de) and, for the two models gpuvet has captures of, nvidia-smi
 * itself (tests/fixtures/gpu/h100-2026-11-22/nvidia-smi-q.txt: 0x2330,
 * h200-2026-11-22/nvidia-smi-q.txt: 0x2335).  A model without ids here is
 * held to its memory only.  The memory sizes are the datasheets' (the
 * table's mem_gib), and a second size where the model ships with two
 * (V100 PCIe 16/32 GB, GH200 96/144 GB); NVML reports a little less than the
 * nominal size (an 80 GB H100: 79.6 GiB; a 24 GB L4: 22.5 GiB), so a size
 * within MEM_TOLERANCE of one of them is that size.
 */
#include "common/gpu_evidence.h"
#include "common/gpus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_TOLERANCE 0.15   /* NVML's size within 15 % of the datasheet's: 22.5 GiB of a 24 GB L4 is 0.94 */
#define MAX_IDS 4

static const struct {
	const char *key;
	long ids[MAX_IDS];        /* 0 ends the list */
	double more_gib;          /* a second memory size the model ships with, 0 none */
} evidence[] = {
	{ "V100-SXM2-16", { 0x1DB1 }, 0 },
	{ "V100-SXM2-32", { 0x1DB5 }, 0 },
	{ "V100-PCIE", { 0x1DB4, 0x1DB6 }, 32 },
	{ "T4", { 0x1EB8 }, 0 },
	{ "A10", { 0x2236 }, 0 },
	{ "A10G", { 0x2237 }, 0 },
	{ "L4", { 0x27B8 }, 0 },
	{ "L40S", { 0x26B9 }, 0 },
	{ "A100-40-SXM", { 0x20B0 }, 0 },
	{ "A100-80-SXM", { 0x20B2 }, 0 },
	{ "A100-40-PCIE", { 0x20B1, 0x20F1 }, 0 },
	{ "A100-80-PCIE", { 0x20B5 }, 0 },
	{ "H100-SXM", { 0x2330 }, 0 },
	{ "H100-PCIE", { 0x2331 }, 0 },
	{ "H200", { 0x2335 }, 0 },
	{ "GH200", { 0x2342 }, 144 },
};

static int row_of(const char *key)
{
	for (size_t i = 0; i < sizeof evidence / sizeof evidence[0]; i++)
		if (!strcmp(evidence[i].key, key))
			return (int)i;
	return -1;
}

/* The model whose ids hold this device id, or NULL. */
static const char *model_of_id(long id)
{
	for (size_t i = 0; i < sizeof evidence / sizeof evidence[0]; i++)
		for (int k = 0; k < MAX_IDS && evidence[i].ids[k]; k++)
			if (evidence[i].ids[k] == id)
				return evidence[i].key;
	return NULL;
}

static int mem_fits(double gib, double nominal, int vgpu)
{
	if (!(nominal > 0))
		return 1;
	if (gib > nominal * (1 + MEM_TOLERANCE))
		return 0;
	return vgpu || gib >= nominal * (1 - MEM_TOLERANCE);   /* a vGPU's framebuffer is a slice: never more */
}

enum gpu_evidence gpu_resolve_device(const char *name, double mem_bytes, long pci_device, int vgpu,
				     const struct gpu_ref **ref, char *why, size_t whylen)
{
	double gib = isfinite(mem_bytes) && mem_bytes > 0 && mem_bytes < 1e15 ? mem_bytes / (1024.0 * 1024 * 1024) : 0;
	*ref = NULL;
	if (!name || !*name) {
		snprintf(why, whylen, "the inventory names no device");
		return GPU_EV_UNKNOWN;
	}
	const struct gpu_ref *r = gpu_ref_match(name, gib);
	if (!r) {
		snprintf(why, whylen, "'%.60s' is no model of gpuvet's reference table", name);
		return GPU_EV_UNKNOWN;
	}
	int row = row_of(r->key);
	double more = row >= 0 ? evidence[row].more_gib : 0;
	if (gib > 0 && !mem_fits(gib, r->mem_gib, vgpu) && !(more > 0 && mem_fits(gib, more, vgpu))) {
		snprintf(why, whylen, "'%.60s' reads as model %s (%.0f GB%s), but the device has %.1f GiB", name, r->key,
			 r->mem_gib, more > 0 ? " or more" : "", gib);
		return GPU_EV_MISMATCH;
	}
	if (pci_device >= 0 && row >= 0 && evidence[row].ids[0]) {
		int hit = 0;
		for (int k = 0; k < MAX_IDS && evidence[row].ids[k]; k++)
			hit |= evidence[row].ids[k] == pci_device;
		if (!hit) {
			const char *other = model_of_id(pci_device);
			snprintf(why, whylen, "'%.60s' reads as model %s (pci device 0x%04lX), but its pci device id 0x%04lX is %s",
				 name, r->key, evidence[row].ids[0], pci_device, other ? other : "no model gpuvet knows");
			return GPU_EV_MISMATCH;
		}
	}
	*ref = r;
	return GPU_EV_RESOLVED;
}

long gpu_pci_device_id(const char *text, long long number)
{
	long long id = number;
	if (text) {
		char *end;
		id = strtoll(text, &end, 16);
		if (end == text || *end)
			return -1;
	}
	if (id > 0xffff && id <= 0xffffffffLL) {
		if ((id & 0xffff) != 0x10DE)
			return -1;   /* another vendor's device */
		id >>= 16;
	}
	return id > 0 && id <= 0xffff ? (long)id : -1;
}
