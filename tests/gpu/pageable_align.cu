/*
 * pageable_align.cu - does the host buffer's alignment change a pageable copy's rate?
 * Built and run on a GPU machine by `tests/gpu/session.sh pageable`:
 * 256 MiB copies (4 per batch, host clock around the batch and a stream sync, as
 * benches/memcpy.cu times them) to and from one malloc'd buffer at offsets 16 (what
 * malloc gives a large block), 64 (PyTorch's CPU allocator alignment) and 4096 from a
 * page boundary, interleaved over 7 rounds; prints the median GB/s of each.
 */
#include <cuda_runtime.h>
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)

int main(void)
{
	const size_t n = 256u << 20;
	const int offs[3] = { 16, 64, 4096 }, rounds = 7, copies = 4;
	double d2h[3][rounds], h2d[3][rounds];
	char *base = (char *)aligned_alloc(4096, n + 8192);
	void *dev;
	cudaStream_t s;
	if (!base)
		return 2;
	memset(base, 1, n + 8192);
	CK(cudaMalloc(&dev, n));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int w = 0; w < 3; w++)   /* warm */
		CK(cudaMemcpyAsync(base + offs[w], dev, n, cudaMemcpyDeviceToHost, s));
	CK(cudaStreamSynchronize(s));
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < 3; k++) {
			int o = (r + k) % 3;
			double t0 = now();
			for (int i = 0; i < copies; i++)
				CK(cudaMemcpyAsync(base + offs[o], dev, n, cudaMemcpyDeviceToHost, s));
			CK(cudaStreamSynchronize(s));
			d2h[o][r] = (double)n * copies / (now() - t0) / 1e9;
			t0 = now();
			for (int i = 0; i < copies; i++)
				CK(cudaMemcpyAsync(dev, base + offs[o], n, cudaMemcpyHostToDevice, s));
			CK(cudaStreamSynchronize(s));
			h2d[o][r] = (double)n * copies / (now() - t0) / 1e9;
		}
	for (int o = 0; o < 3; o++) {
		std::sort(d2h[o], d2h[o] + rounds);
		std::sort(h2d[o], h2d[o] + rounds);
		printf("offset %4d: d2h pageable median %6.2f GB/s (min %6.2f max %6.2f), h2d pageable median %6.2f GB/s\n",
		       offs[o], d2h[o][rounds / 2], d2h[o][0], d2h[o][rounds - 1], h2d[o][rounds / 2]);
	}
	return 0;
}
