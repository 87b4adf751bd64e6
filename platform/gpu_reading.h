/*
 * gpu_reading.h - one NVML reading of a GPU under load (SM clock, power,
 * power cap, temperature, clock-event reasons), as platform/gv_nvml.c takes
 * it and the benches' steady-state rule (benches/steady.h) reads it.
 */
#ifndef GPUVET_GPU_READING_H
#define GPUVET_GPU_READING_H

/* One NVML reading; NAN where unknown. t: seconds since the warm-up began. */
struct gpu_reading {
	double t, sm_mhz, power_w, cap_w, temp_c;
	unsigned long long reasons;
	int have_reasons;
};

#endif
