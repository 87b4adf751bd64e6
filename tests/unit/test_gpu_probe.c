/*
 * test_gpu_probe.c - the GPU benches' skip path, run for real: with no
 * CUDA device visible (this machine has none; CUDA_VISIBLE_DEVICES="" hides
 * any), probe() and run() of gemm, memcpy, allreduce, soak and ingest must
 * return BENCH_SKIP and send a reason naming the CUDA error over the
 * harness protocol, without touching files.  Also their registry entries
 * and deadlines.
 */
#include "tests/unit/t.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "benches/bench.h"
#include "benches/gpu_math.h"

static const char *const gpu_benches[] = { "gemm", "memcpy", "allreduce", "soak", "ingest" };

/* Everything the bench wrote on the pipe (NUL-terminated, static). */
static const char *drain(int fd)
{
	static char buf[65536];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return buf;
}

static void test_registered(void)
{
	for (size_t i = 0; i < sizeof gpu_benches / sizeof gpu_benches[0]; i++) {
		const struct bench *b = bench_find(gpu_benches[i]);
		CHECK(b != NULL);
		if (!b)
			continue;
		CHECK(b->flags & BENCH_NEEDS_GPU);
		CHECK(!(b->flags & BENCH_TEST_ONLY));
		CHECK(b->probe != NULL && b->run != NULL && b->deadline_s != NULL);
		CHECK(strstr(b->summary, "placeholder") == NULL);
		struct bench_config q = { .profile = PROFILE_QUICK }, s = { .profile = PROFILE_STANDARD },
				    f = { .profile = PROFILE_FULL };
		CHECK(b->deadline_s(&q) >= 60);
		CHECK(b->deadline_s(&s) >= b->deadline_s(&q));
		CHECK(b->deadline_s(&f) >= b->deadline_s(&s));
	}
	/* the soak's deadline follows its duration */
	const struct bench *soak = bench_find("soak");
	struct bench_config c = { .profile = PROFILE_QUICK, .soak_seconds = 3600 };
	CHECK(soak && soak->deadline_s(&c) > 3600);
}

static void test_skip_without_gpu(void)
{
	/* before any CUDA call in this process */
	setenv("CUDA_VISIBLE_DEVICES", "", 1);
	char dir[] = "/tmp/gpuvet-probe-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	for (size_t i = 0; i < sizeof gpu_benches / sizeof gpu_benches[0]; i++) {
		const struct bench *b = bench_find(gpu_benches[i]);
		if (!b)
			continue;
		int fds[2];
		CHECK(pipe(fds) == 0);
		struct bench_ctx *ctx = bench_ctx_new(fds[1], b->name);
		struct bench_config cfg = { .profile = PROFILE_QUICK, .nvme_dir = dir, .soak_seconds = 1 };
		CHECK(b->probe(ctx, &cfg) == BENCH_SKIP);
		/* run() alone (no probe first) must skip as well, not crash or fail */
		CHECK(b->run(ctx, &cfg) == BENCH_SKIP);
		bench_ctx_free(ctx);
		close(fds[1]);
		const char *out = drain(fds[0]);
		close(fds[0]);
		/* {"t":"reason","text":"no cuda device: cudaErrorNoDevice: ..."} (or InsufficientDriver without a driver) */
		CHECK(strstr(out, "\"t\":\"reason\"") != NULL);
		CHECK(strstr(out, "no cuda device: ") != NULL && strstr(out, "cudaError") != NULL);
		CHECK(strstr(out, "\"t\":\"metric\"") == NULL);
		if (!strstr(out, "no cuda device: "))
			fprintf(stderr, "%s wrote: %s\n", b->name, out);
	}
	/* ingest wrote nothing into the directory */
	CHECK(rmdir(dir) == 0);
}

TEST_MAIN(T(test_registered), T(test_skip_without_gpu))
