/*
 * sdc_gpu.cuh - the device side of the soak's silent-data-corruption check
 * (benches/sdc.h): a checksum kernel over a GEMM's output, enqueued on the
 * GEMM's stream right after it, its 64-bit sum copied into pinned memory,
 * and the compare step once that GEMM's completion event has fired.
 */
#ifndef GPUVET_SDC_GPU_CUH
#define GPUVET_SDC_GPU_CUH

#include "benches/gpu_common.cuh"
#include "benches/sdc.h"

struct gv_sdc {
	struct sdc_state st;
	unsigned long long *acc;    /* device, SDC_RING sums */
	unsigned long long *host;   /* pinned, SDC_RING sums */
	double t0;                  /* bench_now() at open: mismatch times are relative to it */
	int ready;                  /* 0: buffers missing, nothing is checked (reported as checked 0) */
	long long flip_at;          /* tests: GPUVET_TEST_SDC_FLIP=N flips one bit of the first checked
	                               result at or after GEMM N, as a faulty GPU would; -1 off */
};

/* Buffers on the current device; on failure the check is off (ready 0), the soak goes on. */
void gv_sdc_open(struct gv_sdc *c);
void gv_sdc_close(struct gv_sdc *c);
/* After GEMM number iter was enqueued on g->stream: its checksum, when due. */
int gv_sdc_enqueue(struct gv_sdc *c, const struct gv_gemm *g, unsigned long long iter, struct gv_gerr *err);
/* Once GEMM number iter (and so its checksum) has completed: the compare step. */
void gv_sdc_collect(struct gv_sdc *c, unsigned long long iter);
/* soak.sdc.mismatches (params: checked, every, first_iteration) and one soak.sdc.mismatch point each. */
void gv_sdc_report(struct bench_ctx *ctx, const struct gv_sdc *c, int gpu);

#endif
