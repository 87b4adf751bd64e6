/*
 * host_staging.c - the host bench's staging measurement (host.c has the plan
 * and the bench row): a file in /dev/shm (or the page cache) read into pinned
 * memory as a data loader stages it.
 */
#include "benches/host_int.h"
#include "common/util.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* ---- 3. staging: /dev/shm (or the page cache) into pinned memory ---- */

#define HOST_STAGE_SEED 0x686f737473686dull

static void host_stage_dir(size_t want, char *dir, size_t dlen, const char **source, size_t *bytes)
{
	struct statvfs sv;
	const char *tmp = getenv("TMPDIR");
	long avail = host_mem_available();
	size_t cap = avail > 0 ? (size_t)avail / 8 : want;
	size_t fr = 0;
	if (statvfs("/dev/shm", &sv) == 0 && access("/dev/shm", W_OK) == 0 &&
	    (fr = (size_t)sv.f_bavail * sv.f_frsize) / 4 >= HOST_STAGE_CHUNK) {
		snprintf(dir, dlen, "/dev/shm");
		*source = "/dev/shm";
	} else {
		snprintf(dir, dlen, "%s", tmp && *tmp ? tmp : "/tmp");
		*source = "page cache";
		fr = statvfs(dir, &sv) == 0 ? (size_t)sv.f_bavail * sv.f_frsize : 0;
	}
	if (fr / 4 < cap)
		cap = fr / 4;
	*bytes = (want < cap ? want : cap) / HOST_STAGE_CHUNK * HOST_STAGE_CHUNK;
}

/* Pinned buffers when CUDA has a device; else ordinary ones and why in why. */
static unsigned char *host_stage_buffers(size_t bytes, int *pinned, char *why, size_t wlen)
{
	int ndev = 0;
	void *p = NULL;
	cudaError_t e = cudaGetDeviceCount(&ndev);
	*pinned = 0;
	if (e == cudaSuccess && ndev > 0) {
		e = cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
		if (e == cudaSuccess) {
			*pinned = 1;
			return p;
		}
		snprintf(why, wlen, "cudaHostAlloc: %s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
	} else {
		snprintf(why, wlen, "no cuda device: %s: %s", e == cudaSuccess ? "cudaErrorNoDevice" : cudaGetErrorName(e),
			 e == cudaSuccess ? "no device" : cudaGetErrorString(e));
	}
	if (posix_memalign(&p, 4096, bytes))
		return NULL;
	return p;
}

static int host_stage_fill(int fd, unsigned char *buf, size_t bytes)
{
	for (size_t off = 0; off < bytes; off += HOST_STAGE_CHUNK) {
		uint64_t *w = (uint64_t *)(void *)buf;
		for (size_t i = 0; i < HOST_STAGE_CHUNK / 8; i++)
			w[i] = (off + i * 8) ^ HOST_STAGE_SEED;
		for (size_t done = 0; done < HOST_STAGE_CHUNK;) {
			ssize_t r = pwrite(fd, buf + done, HOST_STAGE_CHUNK - done, (off_t)(off + done));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return -1;
			done += (size_t)r;
		}
	}
	return 0;
}

/* One sequential pass; seconds, or -1 (errno) / -2 (wrong data). */
static double host_stage_pass(int fd, unsigned char *buf, size_t bytes)
{
	double t0 = bench_now();
	for (size_t off = 0, k = 0; off < bytes; off += HOST_STAGE_CHUNK, k++) {
		unsigned char *b = buf + (k % HOST_STAGE_NBUF) * HOST_STAGE_CHUNK;
		for (size_t done = 0; done < HOST_STAGE_CHUNK;) {
			ssize_t r = pread(fd, b + done, HOST_STAGE_CHUNK - done, (off_t)(off + done));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return -1;
			done += (size_t)r;
		}
		const uint64_t *w = (const uint64_t *)(const void *)b;
		size_t last = HOST_STAGE_CHUNK / 8 - 1;
		if (w[0] != (off ^ HOST_STAGE_SEED) || w[last] != ((off + last * 8) ^ HOST_STAGE_SEED))
			return -2;
	}
	return bench_now() - t0;
}

int host_staging(struct bench_ctx *ctx, hwloc_topology_t topo, const struct host_plan *pl, hwloc_obj_t node)
{
	char dir[512], path[600], why[256] = "";
	const char *source = "";
	size_t bytes = 0;
	int pinned = 0, fd = -1, rc = BENCH_FAIL, bound = 0;
	double best = -1;
	unsigned char *buf;
	host_stage_dir(pl->stage_bytes, dir, sizeof dir, &source, &bytes);
	if (bytes < HOST_STAGE_CHUNK) {
		bench_log(ctx, "staging: not enough free space or memory in '%s' for one %u MiB chunk", dir,
			  HOST_STAGE_CHUNK >> 20);
		return BENCH_OK;
	}
	if (node)
		bound = hwloc_set_cpubind(topo, node->cpuset, HWLOC_CPUBIND_THREAD) == 0;
	buf = host_stage_buffers((size_t)HOST_STAGE_NBUF * HOST_STAGE_CHUNK, &pinned, why, sizeof why);
	if (!buf) {
		bench_reason(ctx, "staging: out of memory");
		return BENCH_FAIL;
	}
	snprintf(path, sizeof path, "%s/gpuvet-host-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		bench_reason(ctx, "staging: cannot create a file in '%s': %s", dir, strerror(errno));
		goto out;
	}
	unlink(path);
	if (host_stage_fill(fd, buf, bytes)) {
		bench_reason(ctx, "staging: cannot write %zu bytes in '%s': %s", bytes, dir, strerror(errno));
		goto out;
	}
	for (int p = 0; p < pl->stage_passes; p++) {
		double t = host_stage_pass(fd, buf, bytes);
		if (t < 0) {
			bench_reason(ctx, "staging: %s", t == -2 ? "read back different data than written"
								  : strerror(errno));
			goto out;
		}
		if (best < 0 || t < best)
			best = t;
		bench_progress(ctx, 0.8 + 0.2 * (p + 1) / pl->stage_passes);
	}
	json_t *prm = json_pack("{s:s,s:s,s:I,s:I,s:i,s:i,s:i,s:i,s:f}", "source", source, "dir", dir, "bytes",
				(json_int_t)bytes, "chunk", (json_int_t)HOST_STAGE_CHUNK, "buffers", HOST_STAGE_NBUF,
				"passes", pl->stage_passes, "pinned", pinned, "numa_node",
				node && bound ? (int)node->os_index : -1, "seconds", best);
	if (!pinned)
		json_object_set_new(prm, "pinned_reason", json_string(why));
	char *ps = host_params(prm);
	bench_metric(ctx, "host.staging.shm.gbps", -1, (double)bytes / best / 1e9, "GB/s", ps);
	free(ps);
	json_decref(prm);
	rc = BENCH_OK;
out:
	if (fd >= 0)
		close(fd);
	if (pinned)
		cudaFreeHost(buf);
	else
		free(buf);
	return rc;
}

