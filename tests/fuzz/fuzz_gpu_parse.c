/*
 * fuzz_gpu_parse.c - the GPU benches' small parsers: sysfs cpulists
 * (cpulist_parse), PCI bus ids from NVML and CUDA (pci_busid_equal) and
 * NVML device names matched against the reference table (gpu_ref_match).
 * Input: the bytes as one string, split at the first '|' into two bus ids.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "benches/gpu_math.h"
#include "common/gpus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	unsigned long long mask[16] = { 0 };
	int n = cpulist_parse(s, mask, 16);
	if (n > 1024)
		abort();   /* cannot set more CPUs than the mask holds */

	const struct gpu_ref *r = gpu_ref_match(s, (double)size);
	if (r && !r->key)
		abort();

	char *bar = strchr(s, '|');
	if (bar) {
		*bar = '\0';
		int eq = pci_busid_equal(s, bar + 1);
		if (eq != pci_busid_equal(bar + 1, s))
			abort();   /* equality is symmetric */
	} else if (pci_busid_equal(s, s) && !strchr(s, ':')) {
		abort();   /* a bus id has at least bus:device.function */
	}
	free(s);
	return 0;
}
