/*
 * test_gpu_dl.c - cuBLASLt and NCCL are opened on first use, not linked:
 * with the toolkit's libraries present the forwarding entry points reach
 * the real ones (status names come from cuBLASLt itself); with a missing
 * library the calls fail cleanly and say why.  Runs in child processes so
 * each case gets a fresh loader state.
 */
#include "tests/unit/t.h"
#include "platform/gpu_dl.h"

#include <cublasLt.h>
#include <nccl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int in_child(int (*fn)(void))
{
	pid_t p = fork();
	if (p == 0)
		_exit(fn());
	int st = 0;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static int real_libraries(void)
{
	if (!gpu_dl_cublaslt_available())
		return 1;
	if (strcmp(cublasLtGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE"))
		return 2;
	if (!gpu_dl_nccl_available())
		return 3;
	/* the real NCCL's text for an invalid-argument result, not our fallback */
	const char *e = ncclGetErrorString(ncclInvalidArgument);
	if (!e || strstr(e, "not loaded") || strstr(e, "cannot load"))
		return 4;
	return 0;
}

static int missing_libraries(void)
{
	setenv("GPUVET_CUBLASLT_LIB", "/nonexistent/libcublasLt.so.13", 1);
	setenv("GPUVET_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
	if (gpu_dl_cublaslt_available() || gpu_dl_nccl_available())
		return 1;
	if (!gpu_dl_cublaslt_error() || !strstr(gpu_dl_cublaslt_error(), "cannot load /nonexistent/libcublasLt.so.13"))
		return 2;
	cublasLtHandle_t h;
	if (cublasLtCreate(&h) != CUBLAS_STATUS_NOT_INITIALIZED)
		return 3;
	ncclComm_t c;
	int dev = 0;
	if (ncclCommInitAll(&c, 1, &dev) != ncclSystemError)
		return 4;
	if (!strstr(ncclGetErrorString(ncclSystemError), "cannot load"))
		return 5;
	return 0;
}

static void test_real_libraries_are_reached(void)
{
	CHECK(in_child(real_libraries) == 0);
}

static void test_missing_libraries_fail_cleanly(void)
{
	CHECK(in_child(missing_libraries) == 0);
}

TEST_MAIN(T(test_real_libraries_are_reached), T(test_missing_libraries_fail_cleanly))
