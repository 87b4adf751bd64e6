/*
 * gv_nvml.h - NVML loaded with dlopen at run time, so one binary starts on
 * a machine without a driver.  Shared by the inventory (runners/) and the
 * benches that sample the GPU (soak, memcpy).  Types and constants come
 * from nvml.h (PyPI nvidia-nvml-dev); no symbol is linked.
 *
 * Every function pointer may be NULL when the installed driver's NVML lacks
 * the symbol: check before calling.  gv_nvml_load() resolves the versioned
 * names (nvmlInit_v2, nvmlDeviceGetHandleByIndex_v2, ...) and calls Init.
 */
#ifndef GPUVET_GV_NVML_H
#define GPUVET_GV_NVML_H

#include <stddef.h>
#include <nvml.h>

#include "platform/gpu_reading.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gv_nvml {
	void *dl;
	nvmlReturn_t (*Init)(void);
	nvmlReturn_t (*Shutdown)(void);
	const char *(*ErrorString)(nvmlReturn_t);
	nvmlReturn_t (*SystemGetDriverVersion)(char *, unsigned int);
	nvmlReturn_t (*SystemGetCudaDriverVersion)(int *);
	nvmlReturn_t (*DeviceGetCount)(unsigned int *);
	nvmlReturn_t (*DeviceGetHandleByIndex)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*DeviceGetName)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetUUID)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetSerial)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetVbiosVersion)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*DeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*DeviceGetPciInfo)(nvmlDevice_t, nvmlPciInfo_t *);
	nvmlReturn_t (*DeviceGetCurrPcieLinkGeneration)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetMaxPcieLinkGeneration)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetGpuMaxPcieLinkGeneration)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetCurrPcieLinkWidth)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetMaxPcieLinkWidth)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetPcieThroughput)(nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned int *);
	nvmlReturn_t (*DeviceGetNvLinkState)(nvmlDevice_t, unsigned int, nvmlEnableState_t *);
	nvmlReturn_t (*DeviceGetNvLinkErrorCounter)(nvmlDevice_t, unsigned int, nvmlNvLinkErrorCounter_t,
						    unsigned long long *);
	nvmlReturn_t (*DeviceGetEccMode)(nvmlDevice_t, nvmlEnableState_t *, nvmlEnableState_t *);
	nvmlReturn_t (*DeviceGetTotalEccErrors)(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
						unsigned long long *);
	nvmlReturn_t (*DeviceGetRetiredPages)(nvmlDevice_t, nvmlPageRetirementCause_t, unsigned int *,
					      unsigned long long *);
	nvmlReturn_t (*DeviceGetRetiredPagesPendingStatus)(nvmlDevice_t, nvmlEnableState_t *);
	nvmlReturn_t (*DeviceGetRemappedRows)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *,
					      unsigned int *);
	nvmlReturn_t (*DeviceGetVirtualizationMode)(nvmlDevice_t, nvmlGpuVirtualizationMode_t *);
	nvmlReturn_t (*DeviceGetMigMode)(nvmlDevice_t, unsigned int *, unsigned int *);
	nvmlReturn_t (*DeviceGetNumaNodeId)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetClockInfo)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
	nvmlReturn_t (*DeviceGetMaxClockInfo)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
	nvmlReturn_t (*DeviceGetTemperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int *);
	nvmlReturn_t (*DeviceGetPowerUsage)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetEnforcedPowerLimit)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*DeviceGetCurrentClocksEventReasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*DeviceGetViolationStatus)(nvmlDevice_t, nvmlPerfPolicyType_t, nvmlViolationTime_t *);
	nvmlReturn_t (*DeviceGetUtilizationRates)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*DeviceGetComputeRunningProcesses)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
	nvmlReturn_t (*EventSetCreate)(nvmlEventSet_t *);
	nvmlReturn_t (*DeviceRegisterEvents)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
	nvmlReturn_t (*EventSetWait)(nvmlEventSet_t, nvmlEventData_t *, unsigned int);
	nvmlReturn_t (*EventSetFree)(nvmlEventSet_t);
};

/*
 * dlopen()s libnvidia-ml.so.1 (or $GPUVET_NVML_LIB, for tests), resolves
 * the symbols and calls Init.  Returns NULL and a one-line reason in why
 * ("nvidia driver not found: libnvidia-ml.so.1: cannot open shared object
 * file") when NVML is not usable.  The result is process-wide; calling it
 * again returns the same one.
 */
const struct gv_nvml *gv_nvml_load(char *why, size_t whylen);

/*
 * One reading for the steady-state rule (benches/steady.h) at time t: SM
 * clock, power and its enforced cap, temperature, clock-event reasons;
 * NAN (have_reasons 0) for what NVML does not give.
 */
void gv_nvml_steady_read(const struct gv_nvml *n, nvmlDevice_t dev, double t, struct gpu_reading *out);

/* nvmlErrorString if available, else a number. */
const char *gv_nvml_strerror(const struct gv_nvml *n, nvmlReturn_t rc);

#ifdef __cplusplus
}
#endif
#endif
