/*
 * sdc_kernel.cu - see sdc_gpu.cuh.  The checksum is the wrapping 64-bit sum
 * of sdc_term() over the output's 32-bit words (benches/sdc.h, where
 * sdc_checksum_host() is its definition on the host).  Integer addition is
 * associative, so the atomics that combine blocks give the same sum every time.
 */
#include "benches/sdc_gpu.cuh"

#include <stdio.h>
#include <stdlib.h>

#define SDC_THREADS 256
#define SDC_BLOCKS 1024

__global__ void gv_sdc_checksum_kernel(const unsigned *w, size_t nw, const unsigned char *tail, int ntail,
				       unsigned long long *acc)
{
	__shared__ unsigned long long part[SDC_THREADS / 32];
	unsigned long long s = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nw; i += (size_t)gridDim.x * blockDim.x)
		s += sdc_term(w[i], i);
	if (blockIdx.x == 0 && threadIdx.x == 0)
		for (int k = 0; k < ntail; k++)
			s += sdc_term(tail[k], nw + (size_t)k);
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x >> 5] = s;
	__syncthreads();
	if (threadIdx.x == 0) {
		unsigned long long b = 0;
		for (int k = 0; k < SDC_THREADS / 32; k++)
			b += part[k];
		atomicAdd(acc, b);
	}
}

/* Tests only (GPUVET_TEST_SDC_FLIP): one bit of one word flipped on the device, as a bad SM or HBM cell would. */
__global__ static void gv_sdc_flip_kernel(unsigned *w, size_t i)
{
	w[i] ^= 1u << 7;
}

void gv_sdc_open(struct gv_sdc *c)
{
	const char *flip = getenv("GPUVET_TEST_SDC_FLIP");
	memset(c, 0, sizeof *c);
	c->t0 = bench_now();
	c->flip_at = flip && *flip ? strtoll(flip, NULL, 10) : -1;
	if (cudaMalloc((void **)&c->acc, SDC_RING * sizeof *c->acc) != cudaSuccess ||
	    cudaHostAlloc((void **)&c->host, SDC_RING * sizeof *c->host, cudaHostAllocDefault) != cudaSuccess) {
		cudaGetLastError();   /* clear it: the soak runs on without the check */
		gv_sdc_close(c);
		return;
	}
	c->ready = 1;
}

void gv_sdc_close(struct gv_sdc *c)
{
	if (c->acc)
		cudaFree(c->acc);
	if (c->host)
		cudaFreeHost(c->host);
	c->acc = NULL;
	c->host = NULL;
	c->ready = 0;
}

int gv_sdc_enqueue(struct gv_sdc *c, const struct gv_gemm *g, unsigned long long iter, struct gv_gerr *err)
{
	if (!c->ready || !sdc_due(iter))
		return 0;
	int k = sdc_slot(iter);
	size_t bytes = (size_t)g->sh.m * (size_t)g->sh.n * (size_t)gv_d_size(g->dt);
	if (c->flip_at >= 0 && iter >= (unsigned long long)c->flip_at && bytes >= 4) {
		gv_sdc_flip_kernel<<<1, 1, 0, g->stream>>>((unsigned *)g->D, bytes / 8);
		c->flip_at = -1;
	}
	GV_CUDA(err, cudaMemsetAsync(&c->acc[k], 0, sizeof *c->acc, g->stream));
	gv_sdc_checksum_kernel<<<SDC_BLOCKS, SDC_THREADS, 0, g->stream>>>(
		(const unsigned *)g->D, bytes / 4, (const unsigned char *)g->D + bytes / 4 * 4, (int)(bytes % 4), &c->acc[k]);
	GV_CUDA(err, cudaGetLastError());
	GV_CUDA(err, cudaMemcpyAsync(&c->host[k], &c->acc[k], sizeof *c->acc, cudaMemcpyDeviceToHost, g->stream));
	return 0;
fail:
	return -1;
}

void gv_sdc_collect(struct gv_sdc *c, unsigned long long iter)
{
	if (c->ready && sdc_due(iter))
		sdc_record(&c->st, iter, c->host[sdc_slot(iter)], bench_now() - c->t0);
}

void gv_sdc_report(struct bench_ctx *ctx, const struct gv_sdc *c, int gpu)
{
	char params[160];
	snprintf(params, sizeof params, "{\"checked\":%llu,\"every\":%d,\"first_iteration\":%lld}", c->st.checked,
		 SDC_EVERY, c->st.kept ? (long long)c->st.iters[0] : -1LL);
	bench_metric(ctx, "soak.sdc.mismatches", gpu, (double)c->st.mismatches, "count", params);
	for (int k = 0; k < c->st.kept; k++) {
		bench_sample(ctx, "soak.sdc.mismatch", gpu, c->st.at_s[k], (double)c->st.iters[k]);
		bench_log(ctx, "gpu %d: gemm result %llu differs from the first one", gpu, c->st.iters[k]);
	}
}
