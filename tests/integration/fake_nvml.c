/*
 * fake_nvml.c - a FAKE libnvidia-ml for tests on machines without a GPU.
 *
 * Loaded by gpuvet only through GPUVET_NVML_LIB (tests/integration/
 * test_inventory.py compiles it with cc -shared).  It answers a fixed,
 * made-up description of two GPUs so that the mapping from NVML answers to
 * the inventory's JSON and text can be checked: every number here is
 * invented for the test, none is a measurement, and nothing reads it as one.
 *
 *   GPU 0  "NVIDIA H100 80GB HBM3": healthy, gen5 x16, 18 NVLinks up, ECC on,
 *          no page retirement (Hopper remaps rows), NUMA node from NVML
 *   GPU 1  the same part degraded: link trained at gen3 x8, 2 of 18 NVLinks
 *          down (5 CRC flit errors on each), ECC errors, a row remap pending, MIG enabled after reboot,
 *          running as a vGPU, no nvmlDeviceGetNumaNodeId (old driver)
 *
 * FAKE_NVML_INIT_FAIL=1 makes nvmlInit_v2 fail as with the module unloaded.
 * Like the real library after fork(), it answers "Uninitialized" in a
 * process that did not call nvmlInit itself (geopm/geopm#3066).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <nvml.h>

static pid_t fake_init_pid;

#define FAKE_DEV(d) ((int)(size_t)(d) - 1)   /* handles are index + 1 */

static int fake_dev(nvmlDevice_t d)
{
	int i = FAKE_DEV(d);
	return i == 0 || i == 1 ? i : -1;
}

static nvmlReturn_t put_str(char *buf, unsigned len, const char *s)
{
	if (strlen(s) + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void)
{
	const char *f = getenv("FAKE_NVML_INIT_FAIL");
	if (f && *f == '1')
		return NVML_ERROR_DRIVER_NOT_LOADED;
	fake_init_pid = getpid();
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }

const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	default: return "Unknown Error";
	}
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int n) { return put_str(v, n, "550.54.15"); }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 12040; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (fake_init_pid != getpid())
		return NVML_ERROR_UNINITIALIZED;
	*n = 2;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (fake_init_pid != getpid())
		return NVML_ERROR_UNINITIALIZED;
	if (i > 1)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = (nvmlDevice_t)(size_t)(i + 1);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *b, unsigned int n)
{
	return fake_dev(d) < 0 ? NVML_ERROR_INVALID_ARGUMENT : put_str(b, n, "NVIDIA H100 80GB HBM3");
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *b, unsigned int n)
{
	return put_str(b, n, fake_dev(d) ? "GPU-fake0001-0000-0000-0000-000000000001"
					 : "GPU-fake0000-0000-0000-0000-000000000000");
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *b, unsigned int n)
{
	return put_str(b, n, fake_dev(d) ? "FAKE000000001" : "FAKE000000000");
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *b, unsigned int n)
{
	(void)d;
	return put_str(b, n, "96.00.99.00.01");
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	(void)d;
	m->total = 85520809984ULL;   /* 79.6 GiB, what an 80 GB HBM3 part reports */
	m->free = m->total;
	m->used = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	memset(p, 0, sizeof *p);
	p->bus = fake_dev(d) ? 0x2a : 0x18;
	return put_str(p->busId, sizeof p->busId, fake_dev(d) ? "00000000:2A:00.0" : "00000000:18:00.0");
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { *v = fake_dev(d) ? 3 : 5; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { *v = fake_dev(d) ? 8 : 16; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { (void)d; *v = 5; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { (void)d; *v = 5; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { (void)d; *v = 16; return NVML_SUCCESS; }

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, nvmlEnableState_t *s)
{
	if (link >= 18)
		return NVML_ERROR_INVALID_ARGUMENT;
	*s = fake_dev(d) && link >= 16 ? NVML_FEATURE_DISABLED : NVML_FEATURE_ENABLED;
	return NVML_SUCCESS;
}

/* NVLink error counters summed by the inventory: GPU 1's two links down also logged CRC errors. */
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned int link, nvmlNvLinkErrorCounter_t c,
					     unsigned long long *v)
{
	if (link >= 18)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (c == NVML_NVLINK_ERROR_DL_ECC_DATA)
		return NVML_ERROR_NOT_SUPPORTED;
	*v = c == NVML_NVLINK_ERROR_DL_REPLAY ? 1 : fake_dev(d) && link >= 16 && c == NVML_NVLINK_ERROR_DL_CRC_FLIT ? 5 : 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, nvmlEnableState_t *c, nvmlEnableState_t *p)
{
	(void)d;
	*c = *p = NVML_FEATURE_ENABLED;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, nvmlMemoryErrorType_t t, nvmlEccCounterType_t c,
					 unsigned long long *n)
{
	*n = 0;
	if (fake_dev(d))
		*n = t == NVML_MEMORY_ERROR_TYPE_UNCORRECTED ? (c == NVML_VOLATILE_ECC ? 2 : 5)
							      : (c == NVML_VOLATILE_ECC ? 7 : 40);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, nvmlPageRetirementCause_t c, unsigned int *n,
				       unsigned long long *a)
{
	(void)d, (void)c, (void)n, (void)a;
	return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, nvmlEnableState_t *s)
{
	(void)d, (void)s;
	return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr, unsigned int *unc,
				       unsigned int *pend, unsigned int *fail)
{
	int i = fake_dev(d);
	*corr = i ? 3 : 0;
	*unc = i ? 1 : 0;
	*pend = i ? 1 : 0;
	*fail = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t d, nvmlGpuVirtualizationMode_t *m)
{
	*m = fake_dev(d) ? NVML_GPU_VIRTUALIZATION_MODE_VGPU : NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *c, unsigned int *p)
{
	*c = 0;
	*p = fake_dev(d) ? NVML_DEVICE_MIG_ENABLE : 0;
	return NVML_SUCCESS;
}

/* nvmlDeviceGetNumaNodeId: answered for GPU 0 only; GPU 1 goes to the sysfs fallback */
nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node)
{
	if (fake_dev(d))
		return NVML_ERROR_NOT_SUPPORTED;
	*node = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw)
{
	*mw = fake_dev(d) ? 500000 : 700000;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
	(void)d;
	*mhz = t == NVML_CLOCK_SM ? 1980 : t == NVML_CLOCK_MEM ? 2619 : 0;
	return NVML_SUCCESS;
}
