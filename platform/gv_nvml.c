/*
 * gv_nvml.c - NVML through dlopen (see gv_nvml.h).
 *
 * One table of (symbol names, slot) drives the resolution: the first name
 * that the installed libnvidia-ml.so.1 exports wins, so a versioned entry
 * point (nvmlInit_v2) falls back to its older name on old drivers, and a
 * symbol that no name resolves leaves its pointer NULL.  The library is
 * loaded once; every caller gets the same table.
 *
 * fork: NVML's state is not inherited by a child (calls there fail with
 * "Uninitialized", geopm/geopm#3066), and the harness forks every bench
 * after the inventory initialised NVML in the parent.  So the process that
 * called Init is remembered, and a call from another process (a forked
 * child) calls Init again there before handing the table out.
 */
#include "platform/gv_nvml.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GV_NVML_SONAME "libnvidia-ml.so.1"

struct nvml_sym {
	size_t off;                 /* offsetof(struct gv_nvml, slot) */
	const char *names[3];       /* tried in order; NULL-terminated */
	int required;               /* the load fails without it */
};

#define SYM(slot, req, ...) { offsetof(struct gv_nvml, slot), { __VA_ARGS__, NULL }, req }

static const struct nvml_sym nvml_syms[] = {
	SYM(Init, 1, "nvmlInit_v2", "nvmlInit"),
	SYM(Shutdown, 1, "nvmlShutdown"),
	SYM(ErrorString, 0, "nvmlErrorString"),
	SYM(SystemGetDriverVersion, 0, "nvmlSystemGetDriverVersion"),
	SYM(SystemGetCudaDriverVersion, 0, "nvmlSystemGetCudaDriverVersion_v2",
	    "nvmlSystemGetCudaDriverVersion"),
	SYM(DeviceGetCount, 1, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"),
	SYM(DeviceGetHandleByIndex, 1, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"),
	SYM(DeviceGetName, 0, "nvmlDeviceGetName"),
	SYM(DeviceGetUUID, 0, "nvmlDeviceGetUUID"),
	SYM(DeviceGetSerial, 0, "nvmlDeviceGetSerial"),
	SYM(DeviceGetVbiosVersion, 0, "nvmlDeviceGetVbiosVersion"),
	SYM(DeviceGetMemoryInfo, 0, "nvmlDeviceGetMemoryInfo"),
	/* _v3 and _v2 fill the same nvmlPciInfo_t; _v3 leaves the legacy
	 * busIdLegacy field alone, which we do not read */
	SYM(DeviceGetPciInfo, 0, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"),
	SYM(DeviceGetCurrPcieLinkGeneration, 0, "nvmlDeviceGetCurrPcieLinkGeneration"),
	SYM(DeviceGetMaxPcieLinkGeneration, 0, "nvmlDeviceGetMaxPcieLinkGeneration"),
	SYM(DeviceGetGpuMaxPcieLinkGeneration, 0, "nvmlDeviceGetGpuMaxPcieLinkGeneration"),
	SYM(DeviceGetCurrPcieLinkWidth, 0, "nvmlDeviceGetCurrPcieLinkWidth"),
	SYM(DeviceGetMaxPcieLinkWidth, 0, "nvmlDeviceGetMaxPcieLinkWidth"),
	SYM(DeviceGetPcieThroughput, 0, "nvmlDeviceGetPcieThroughput"),
	SYM(DeviceGetNvLinkState, 0, "nvmlDeviceGetNvLinkState"),
	SYM(DeviceGetNvLinkErrorCounter, 0, "nvmlDeviceGetNvLinkErrorCounter"),
	SYM(DeviceGetEccMode, 0, "nvmlDeviceGetEccMode"),
	SYM(DeviceGetTotalEccErrors, 0, "nvmlDeviceGetTotalEccErrors"),
	SYM(DeviceGetRetiredPages, 0, "nvmlDeviceGetRetiredPages"),
	SYM(DeviceGetRetiredPagesPendingStatus, 0, "nvmlDeviceGetRetiredPagesPendingStatus"),
	SYM(DeviceGetRemappedRows, 0, "nvmlDeviceGetRemappedRows"),
	SYM(DeviceGetVirtualizationMode, 0, "nvmlDeviceGetVirtualizationMode"),
	SYM(DeviceGetMigMode, 0, "nvmlDeviceGetMigMode"),
	SYM(DeviceGetNumaNodeId, 0, "nvmlDeviceGetNumaNodeId"),
	SYM(DeviceGetClockInfo, 0, "nvmlDeviceGetClockInfo"),
	SYM(DeviceGetMaxClockInfo, 0, "nvmlDeviceGetMaxClockInfo"),
	SYM(DeviceGetTemperature, 0, "nvmlDeviceGetTemperature"),
	SYM(DeviceGetPowerUsage, 0, "nvmlDeviceGetPowerUsage"),
	SYM(DeviceGetEnforcedPowerLimit, 0, "nvmlDeviceGetEnforcedPowerLimit"),
	/* renamed in r535; same signature and bit meanings */
	SYM(DeviceGetCurrentClocksEventReasons, 0, "nvmlDeviceGetCurrentClocksEventReasons",
	    "nvmlDeviceGetCurrentClocksThrottleReasons"),
	SYM(DeviceGetViolationStatus, 0, "nvmlDeviceGetViolationStatus"),
	SYM(DeviceGetUtilizationRates, 0, "nvmlDeviceGetUtilizationRates"),
	/* _v3 and _v2 both take nvmlProcessInfo_v2_t (== nvmlProcessInfo_t);
	 * the unversioned one takes the smaller v1 struct: never used */
	SYM(DeviceGetComputeRunningProcesses, 0, "nvmlDeviceGetComputeRunningProcesses_v3",
	    "nvmlDeviceGetComputeRunningProcesses_v2"),
	SYM(EventSetCreate, 0, "nvmlEventSetCreate"),
	SYM(DeviceRegisterEvents, 0, "nvmlDeviceRegisterEvents"),
	/* _v2 fills nvmlEventData_t with the GPU/compute instance ids */
	SYM(EventSetWait, 0, "nvmlEventSetWait_v2"),
	SYM(EventSetFree, 0, "nvmlEventSetFree"),
};

static struct gv_nvml nvml_state;
static const struct gv_nvml *nvml_loaded;    /* &nvml_state once usable */
static char nvml_why[256];
static int nvml_attempted;
static pid_t nvml_init_pid;                  /* the process whose Init succeeded */
static pthread_mutex_t nvml_lock = PTHREAD_MUTEX_INITIALIZER;

/* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
static void nvml_set_slot(struct gv_nvml *n, size_t off, void *sym)
{
	typedef void (*fnptr)(void);
	fnptr f;
	memcpy(&f, &sym, sizeof f);
	memcpy((char *)n + off, &f, sizeof f);
}

static void nvml_do_load(void)
{
	const char *lib = getenv("GPUVET_NVML_LIB");
	struct gv_nvml *n = &nvml_state;
	nvmlReturn_t rc;

	if (!lib || !*lib)
		lib = GV_NVML_SONAME;
	dlerror();
	n->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl) {
		const char *e = dlerror();
		snprintf(nvml_why, sizeof nvml_why, "nvidia driver not found: %s",
			 e ? e : lib);
		return;
	}
	for (size_t i = 0; i < sizeof nvml_syms / sizeof nvml_syms[0]; i++) {
		const struct nvml_sym *s = &nvml_syms[i];
		void *p = NULL;
		for (int j = 0; !p && s->names[j]; j++)
			p = dlsym(n->dl, s->names[j]);
		if (!p && s->required) {
			snprintf(nvml_why, sizeof nvml_why,
				 "nvidia driver too old: %s lacks %s", lib, s->names[0]);
			goto fail;
		}
		nvml_set_slot(n, s->off, p);
	}
	rc = n->Init();
	if (rc != NVML_SUCCESS) {
		/* e.g. "Driver Not Loaded" when the library is there but the
		 * kernel module is not (container without the GPU passed in) */
		snprintf(nvml_why, sizeof nvml_why, "nvidia driver not usable: nvmlInit: %s",
			 gv_nvml_strerror(n, rc));
		goto fail;
	}
	nvml_loaded = n;
	nvml_init_pid = getpid();
	return;
fail:
	dlclose(n->dl);
	memset(n, 0, sizeof *n);
}

const struct gv_nvml *gv_nvml_load(char *why, size_t whylen)
{
	const struct gv_nvml *n;
	pthread_mutex_lock(&nvml_lock);
	if (!nvml_attempted) {
		nvml_attempted = 1;
		nvml_do_load();
	} else if (nvml_loaded && nvml_init_pid != getpid()) {
		nvmlReturn_t rc = nvml_state.Init();
		if (rc == NVML_SUCCESS) {
			nvml_init_pid = getpid();
		} else {
			snprintf(nvml_why, sizeof nvml_why, "nvidia driver not usable: nvmlInit: %s",
				 gv_nvml_strerror(&nvml_state, rc));
			nvml_loaded = NULL;
		}
	}
	n = nvml_loaded;
	if (!n && why && whylen)
		snprintf(why, whylen, "%s", nvml_why);
	pthread_mutex_unlock(&nvml_lock);
	return n;
}

const char *gv_nvml_strerror(const struct gv_nvml *n, nvmlReturn_t rc)
{
	static _Thread_local char buf[32];
	if (n && n->ErrorString) {
		const char *s = n->ErrorString(rc);
		if (s)
			return s;
	}
	snprintf(buf, sizeof buf, "nvml error %d", (int)rc);
	return buf;
}

void gv_nvml_steady_read(const struct gv_nvml *n, nvmlDevice_t dev, double t, struct gpu_reading *out)
{
	unsigned v = 0;
	unsigned long long mask = 0;
	out->t = t;
	out->sm_mhz = out->power_w = out->cap_w = out->temp_c = NAN;
	out->reasons = 0;
	out->have_reasons = 0;
	if (n->DeviceGetClockInfo && n->DeviceGetClockInfo(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
		out->sm_mhz = v;
	if (n->DeviceGetPowerUsage && n->DeviceGetPowerUsage(dev, &v) == NVML_SUCCESS)
		out->power_w = v / 1000.0;
	if (n->DeviceGetEnforcedPowerLimit && n->DeviceGetEnforcedPowerLimit(dev, &v) == NVML_SUCCESS)
		out->cap_w = v / 1000.0;
	if (n->DeviceGetTemperature && n->DeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
		out->temp_c = v;
	if (n->DeviceGetCurrentClocksEventReasons && n->DeviceGetCurrentClocksEventReasons(dev, &mask) == NVML_SUCCESS) {
		out->reasons = mask;
		out->have_reasons = 1;
	}
}
