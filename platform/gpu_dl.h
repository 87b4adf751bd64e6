/*
 * gpu_dl.h - cuBLASLt and NCCL are opened with dlopen on first use
 * (platform/gpu_dl.c defines their entry points), so gpuvet starts without
 * them.  A bench's probe can ask whether they load and why not.
 */
#ifndef GPUVET_GPU_DL_H
#define GPUVET_GPU_DL_H

#ifdef __cplusplus
extern "C" {
#endif

int gpu_dl_cublaslt_available(void);
int gpu_dl_nccl_available(void);
/* Why the library could not be loaded, or NULL. */
const char *gpu_dl_cublaslt_error(void);
const char *gpu_dl_nccl_error(void);

#ifdef __cplusplus
}
#endif
#endif
