/*
 * gpu_evidence.h - a GPU's model from the evidence its inventory holds, hard to
 * fake by accident (issue 57): its NVML name resolved through the reference
 * table (common/gpus.h gpu_ref_match), then held to its memory size and, where
 * the inventory gives it, its PCI device id.  A name that disagrees with
 * either is not that model; a name that resolves to no row is a device gpuvet
 * cannot judge against a reference.  The one rule `run`, the import checks
 * (results/fp_rows.c) and the judge (results/fpq.c fpq_gpu_ref) read.
 */
#ifndef GPUVET_GPU_EVIDENCE_H
#define GPUVET_GPU_EVIDENCE_H

#include <stddef.h>

struct gpu_ref;

enum gpu_evidence {
	GPU_EV_RESOLVED = 0,   /* *ref is the model */
	GPU_EV_UNKNOWN,        /* no name, or a name no row matches: no model, said in why */
	GPU_EV_MISMATCH,       /* the name's model disagrees with the memory size or device id: said in why */
};

/*
 * name: NVML's device name; mem_bytes: its memory (NaN or <= 0 unknown);
 * pci_device: the PCI device id (0x2330), -1 unknown; vgpu: a vGPU guest,
 * whose memory may be a slice of the model's (never more).
 */
enum gpu_evidence gpu_resolve_device(const char *name, double mem_bytes, long pci_device, int vgpu,
				     const struct gpu_ref **ref, char *why, size_t whylen);

/*
 * The PCI device id an inventory gives, as nvidia-smi's "Device Id" text
 * ("0x233010DE": device, then NVIDIA's vendor id) or a number (the device
 * alone, or both); text NULL reads number (-1: none).  -1 when it names no
 * NVIDIA device.
 */
long gpu_pci_device_id(const char *text, long long number);

#endif
