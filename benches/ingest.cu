/*
 * ingest.cu - storage-to-GPU throughput: what a data loader can feed the
 * GPU from local disk.
 *
 * A file (ingest_file_bytes(profile): 1/4/16 GiB, at most half the free
 * space) is written with a known pattern into a new temporary file in
 * --nvme-dir (default /var/tmp, else /tmp), synced, then opened with
 * O_DIRECT and unlinked at once, so nothing is left behind even if the
 * deadline kills us.  Only a regular file made by mkstemp() is ever
 * written: never a block device.  A file system without O_DIRECT (tmpfs)
 * is read through the page cache after POSIX_FADV_DONTNEED, and the
 * params say "direct":0.
 *
 * The pipeline, on GPU 0 with the thread and buffers on its NUMA node:
 * three pinned buffers of 32 MiB; chunk i is read with pread() into buffer
 * i % 3 once that buffer's previous copy has completed (its event), then
 * copied to the device with cudaMemcpyAsync and checked there by a kernel
 * (every 8-byte word must equal its file offset ^ seed), so reading chunk
 * i+1 overlaps copying chunk i.
 *
 *   ingest.gbps = file bytes / (first read start .. last copy done) / 1e9
 */
#include "benches/gpu_common.cuh"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>


#define INGEST_CHUNK (32u << 20)
#define INGEST_NBUF 3
#define INGEST_SEED 0x6770757665746eull

static int ingest_deadline(const struct bench_config *cfg)
{
	switch (cfg->profile) {
	case PROFILE_STANDARD: return 600;
	case PROFILE_FULL: return 1800;
	case PROFILE_QUICK:
	default: return 240;
	}
}

static int ingest_probe(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	(void)cfg;
	int n;
	return gv_probe_gpus(ctx, &n);
}

__global__ static void ingest_verify_kernel(const unsigned long long *p, size_t nwords, unsigned long long first_off,
					    unsigned long long *bad)
{
	unsigned long long local = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nwords; i += (size_t)gridDim.x * blockDim.x)
		if (p[i] != ((first_off + i * 8) ^ INGEST_SEED))
			local++;
	if (local)
		atomicAdd(bad, local);
}

/* Writes `size` bytes of pattern to a new file in dir; its path into path. 0 or -1 with errno. */
static int ingest_write_file(const char *dir, size_t size, char *path, size_t plen, char *why, size_t wlen)
{
	unsigned long long *buf = NULL;
	int fd;
	snprintf(path, plen, "%s/gpuvet-ingest-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		snprintf(why, wlen, "cannot create a file in '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (posix_memalign((void **)&buf, 4096, INGEST_CHUNK)) {
		snprintf(why, wlen, "out of memory");
		goto fail;
	}
	for (size_t off = 0; off < size; off += INGEST_CHUNK) {
		size_t n = size - off < INGEST_CHUNK ? size - off : INGEST_CHUNK;
		for (size_t i = 0; i < n / 8; i++)
			buf[i] = (unsigned long long)(off + i * 8) ^ INGEST_SEED;
		size_t done = 0;
		while (done < n) {
			ssize_t w = pwrite(fd, (const char *)buf + done, n - done, (off_t)(off + done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				snprintf(why, wlen, "cannot write '%s': %s", path, w < 0 ? strerror(errno) : "short write");
				goto fail;
			}
			done += (size_t)w;
		}
	}
	if (fsync(fd)) {
		snprintf(why, wlen, "cannot sync '%s': %s", path, strerror(errno));
		goto fail;
	}
	/* what we wrote must not be served from the page cache */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	free(buf);
	close(fd);
	return 0;
fail:
	free(buf);
	close(fd);
	unlink(path);
	return -1;
}

/* The directory (given, else /var/tmp, else /tmp) and the file's size: what fits in half its free space
 * (64 MiB at least), whole chunks.  BENCH_OK, or the status with the reason said. */
static int ingest_where(struct bench_ctx *ctx, const struct bench_config *cfg, const char **dirp, size_t *sizep)
{
	const char *dir = cfg->nvme_dir;
	struct stat st;
	struct statvfs vfs;
	size_t size;
	if (!dir)
		dir = access("/var/tmp", W_OK) == 0 ? "/var/tmp" : "/tmp";
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		bench_reason(ctx, "ingest directory '%s' is not a directory", dir);
		return BENCH_FAIL;
	}
	if (statvfs(dir, &vfs)) {
		bench_reason(ctx, "cannot stat the file system of '%s': %s", dir, strerror(errno));
		return BENCH_FAIL;
	}
	size = ingest_file_bytes(cfg->profile);
	while (size > (64u << 20) && (double)size > 0.5 * (double)vfs.f_bavail * (double)vfs.f_frsize)
		size /= 2;
	if ((double)size > 0.5 * (double)vfs.f_bavail * (double)vfs.f_frsize) {
		bench_reason(ctx, "not enough free space in '%s' for a 64 MiB ingest file", dir);
		return BENCH_SKIP;
	}
	size -= size % INGEST_CHUNK;
	if (size == 0)
		size = INGEST_CHUNK;

	*dirp = dir;
	*sizep = size;
	return BENCH_OK;
}

/* The file written, then opened for reading (O_DIRECT where the file system allows) and unlinked:
 * the descriptor, or -1 with the reason said. */
static int ingest_open(struct bench_ctx *ctx, const char *dir, size_t size, int *direct)
{
	char path[4096], why[4700] = "";
	int fd;
	bench_log(ctx, "writing a %zu MiB file in '%s'", size >> 20, dir);
	if (ingest_write_file(dir, size, path, sizeof path, why, sizeof why)) {
		bench_reason(ctx, "%s", why);
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0 && errno == EINVAL) {
		*direct = 0;
		bench_log(ctx, "'%s' does not support O_DIRECT: reading through the page cache", dir);
		fd = open(path, O_RDONLY);
		if (fd >= 0)
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	if (fd < 0) {
		snprintf(why, sizeof why, "cannot open '%s': %s", path, strerror(errno));
		unlink(path);
		bench_reason(ctx, "%s", why);
		return -1;
	}
	unlink(path);   /* the open descriptor keeps the data; nothing is left behind */
	return fd;
}

static int ingest_run(struct bench_ctx *ctx, const struct bench_config *cfg)
{
	struct gv_gerr err;
	struct gv_numa_saved saved = { 0, { 0 } };
	const char *dir = NULL;
	char params[1024];
	size_t size = 0;
	int n = 0, fd = -1, direct = 1, node, rc = BENCH_FAIL;
	void *hbuf[INGEST_NBUF] = { NULL }, *dbuf[INGEST_NBUF] = { NULL };
	cudaEvent_t ev[INGEST_NBUF] = { NULL };
	cudaStream_t stream = NULL;
	unsigned long long *dbad = NULL, hbad = 0;
	double t0 = 0, secs = 0;

	memset(&err, 0, sizeof err);
	if (gv_probe_gpus(ctx, &n) != BENCH_OK)
		return BENCH_SKIP;
	if ((rc = ingest_where(ctx, cfg, &dir, &size)) != BENCH_OK)
		return rc;
	rc = BENCH_FAIL;
	node = gv_dev_numa_node(0);
	if (node >= 0 && gv_numa_bind(node, &saved) == 0)
		bench_log(ctx, "ingest thread and buffers on numa node %d", node);
	fd = ingest_open(ctx, dir, size, &direct);
	if (fd < 0) {
		gv_numa_unbind(&saved);
		return BENCH_FAIL;
	}
	GV_CUDA(&err, cudaSetDevice(0));
	GV_CUDA(&err, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	GV_CUDA(&err, cudaMalloc(&dbad, sizeof *dbad));
	GV_CUDA(&err, cudaMemsetAsync(dbad, 0, sizeof *dbad, stream));
	for (int b = 0; b < INGEST_NBUF; b++) {
		GV_CUDA(&err, cudaHostAlloc(&hbuf[b], INGEST_CHUNK, cudaHostAllocDefault));
		GV_CUDA(&err, cudaMalloc(&dbuf[b], INGEST_CHUNK));
		GV_CUDA(&err, cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming));
	}
	GV_CUDA(&err, cudaStreamSynchronize(stream));

	t0 = bench_now();
	for (size_t off = 0, i = 0; off < size; off += INGEST_CHUNK, i++) {
		int b = (int)(i % INGEST_NBUF);
		size_t len = size - off < INGEST_CHUNK ? size - off : INGEST_CHUNK, got = 0;
		if (i >= INGEST_NBUF)
			GV_CUDA(&err, cudaEventSynchronize(ev[b]));
		while (got < len) {
			ssize_t r = pread(fd, (char *)hbuf[b] + got, len - got, (off_t)(off + got));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				gv_gerr_set(&err, "cannot read the ingest file at offset %zu: %s", off + got,
					    r < 0 ? strerror(errno) : "unexpected end of file");
				goto fail;
			}
			got += (size_t)r;
		}
		GV_CUDA(&err, cudaMemcpyAsync(dbuf[b], hbuf[b], len, cudaMemcpyHostToDevice, stream));
		ingest_verify_kernel<<<256, 256, 0, stream>>>((const unsigned long long *)dbuf[b], len / 8, off, dbad);
		GV_CUDA(&err, cudaGetLastError());
		GV_CUDA(&err, cudaEventRecord(ev[b], stream));
		bench_progress(ctx, (double)(off + len) / size);
	}
	GV_CUDA(&err, cudaStreamSynchronize(stream));
	secs = bench_now() - t0;
	GV_CUDA(&err, cudaMemcpy(&hbad, dbad, sizeof hbad, cudaMemcpyDeviceToHost));
	if (hbad) {
		gv_gerr_set(&err, "data on the gpu differs from the file: %llu of %zu words", hbad, size / 8);
		goto fail;
	}
	snprintf(params, sizeof params,
		 "{\"bytes\":%zu,\"chunk\":%u,\"buffers\":%d,\"direct\":%d,\"seconds\":%.6g,\"numa_node\":%d,"
		 "\"checked\":1}",
		 size, INGEST_CHUNK, INGEST_NBUF, direct, secs, node);
	bench_metric(ctx, "ingest.gbps", -1, bw_gbps((double)size, secs), "GB/s", params);
	snprintf(params, sizeof params, "{\"profile\":\"%s\",\"bytes\":%zu,\"direct\":%d,\"gpu\":0}",
		 bench_profile_name(cfg->profile), size, direct);
	bench_config_echo(ctx, params);
	rc = BENCH_OK;
	goto out;
fail:
	bench_reason(ctx, "%s", err.text);
	rc = BENCH_FAIL;
out:
	if (stream)
		cudaStreamSynchronize(stream);
	for (int b = 0; b < INGEST_NBUF; b++) {
		if (ev[b])
			cudaEventDestroy(ev[b]);
		cudaFreeHost(hbuf[b]);
		cudaFree(dbuf[b]);
	}
	cudaFree(dbad);
	if (stream)
		cudaStreamDestroy(stream);
	close(fd);
	gv_numa_unbind(&saved);
	return rc;
}

#define R METRIC_RANKABLE
#define G METRIC_PER_GPU
#define L METRIC_LOWER_IS_BETTER

/* The metrics this bench reports (struct metric_info, benches/bench.h). */
static const struct metric_info ingest_metrics[] = {
	{ "ingest.gbps", "GB/s", "file to GPU", R, METRIC_PEAK_NONE },
	{ NULL, NULL, NULL, 0, METRIC_PEAK_NONE },
};

#undef R
#undef G
#undef L

extern "C" const struct bench bench_ingest = {
	.name = "ingest",
	.summary = "file -> O_DIRECT -> pinned buffers -> GPU pipeline GB/s (what a data loader can feed)",
	.flags = BENCH_NEEDS_GPU,
	.deadline_s = ingest_deadline,
	.probe = ingest_probe,
	.run = ingest_run,
	.metrics = ingest_metrics,
};
