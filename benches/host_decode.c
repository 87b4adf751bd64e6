/*
 * host_decode.c - the host bench's JPEG decode (host.c has the plan and the
 * other measurements): libjpeg-turbo's TurboJPEG on every PU, each thread
 * cycling over the embedded decode set (benches/host_jpeg/, provenance in
 * its README).
 */
#include "benches/host_int.h"
#include "common/embed.h"
#include "common/util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <unistd.h>

/* ---- the decode set, embedded (benches/host_jpeg/README.md) ---- */

GV_EMBED(gv_host_jpeg_chelsea, "benches/host_jpeg/chelsea.jpg");
GV_EMBED(gv_host_jpeg_coffee, "benches/host_jpeg/coffee.jpg");
GV_EMBED(gv_host_jpeg_rocket, "benches/host_jpeg/rocket.jpg");
GV_EMBED(gv_host_jpeg_astronaut, "benches/host_jpeg/astronaut.jpg");

static const struct host_jpeg {
	const char *name;
	const unsigned char *data, *end;
} host_jpegs[] = {
	{ "chelsea", (const unsigned char *)gv_host_jpeg_chelsea, (const unsigned char *)gv_host_jpeg_chelsea_end },
	{ "coffee", (const unsigned char *)gv_host_jpeg_coffee, (const unsigned char *)gv_host_jpeg_coffee_end },
	{ "rocket", (const unsigned char *)gv_host_jpeg_rocket, (const unsigned char *)gv_host_jpeg_rocket_end },
	{ "astronaut", (const unsigned char *)gv_host_jpeg_astronaut, (const unsigned char *)gv_host_jpeg_astronaut_end },
};
#define HOST_NJPEG (sizeof host_jpegs / sizeof host_jpegs[0])

/* ---- 2. JPEG decode on every PU ---- */

struct host_img {
	int w, h, subsamp;
};

struct host_decode {
	hwloc_topology_t topo;
	const struct host_img *img;
	size_t maxpix;
	pthread_barrier_t bar;
	atomic_int stop;
};

struct host_dec_thread {
	struct host_decode *d;
	int tid;
	hwloc_obj_t pu;
	long count;
	double t_end;
	int bound;
	char err[200];
};

static void *host_decode_worker(void *arg)
{
	struct host_dec_thread *t = arg;
	struct host_decode *d = t->d;
	unsigned char *out = malloc(d->maxpix * 3);
	tjhandle h = tjInitDecompress();
	t->bound = t->pu && hwloc_set_cpubind(d->topo, t->pu->cpuset, HWLOC_CPUBIND_THREAD) == 0;
	/* one warm-up decode of each image, outside the timed region */
	for (size_t i = 0; out && h && i < HOST_NJPEG && !t->err[0]; i++)
		if (tjDecompress2(h, host_jpegs[i].data, (unsigned long)(host_jpegs[i].end - host_jpegs[i].data),
				  out, d->img[i].w, 0, d->img[i].h, TJPF_RGB, 0) &&
		    tjGetErrorCode(h) == TJERR_FATAL)
			snprintf(t->err, sizeof t->err, "%s: %s", host_jpegs[i].name, tjGetErrorStr2(h));
	if (!out || !h)
		snprintf(t->err, sizeof t->err, "%s", !out ? "out of memory" : tjGetErrorStr2(NULL));
	pthread_barrier_wait(&d->bar);
	for (size_t k = (size_t)t->tid; !t->err[0] && !atomic_load_explicit(&d->stop, memory_order_relaxed); k++) {
		size_t i = k % HOST_NJPEG;
		if (tjDecompress2(h, host_jpegs[i].data, (unsigned long)(host_jpegs[i].end - host_jpegs[i].data),
				  out, d->img[i].w, 0, d->img[i].h, TJPF_RGB, 0) &&
		    tjGetErrorCode(h) == TJERR_FATAL) {
			snprintf(t->err, sizeof t->err, "%s: %s", host_jpegs[i].name, tjGetErrorStr2(h));
			break;
		}
		t->count++;
		t->t_end = bench_now();
	}
	if (h)
		tjDestroy(h);
	free(out);
	return NULL;
}

int host_decode(struct bench_ctx *ctx, hwloc_topology_t topo, const struct host_plan *pl, const struct host_gpus *g)
{
	struct host_img img[HOST_NJPEG];
	struct host_decode d = { .topo = topo, .img = img };
	double pix = 0;
	json_t *names = json_array();
	tjhandle h = tjInitDecompress();
	if (!h) {
		bench_reason(ctx, "turbojpeg: %s", tjGetErrorStr2(NULL));
		json_decref(names);
		return BENCH_FAIL;
	}
	for (size_t i = 0; i < HOST_NJPEG; i++) {
		if (tjDecompressHeader3(h, host_jpegs[i].data, (unsigned long)(host_jpegs[i].end - host_jpegs[i].data),
					&img[i].w, &img[i].h, &img[i].subsamp, &(int){ 0 })) {
			bench_reason(ctx, "turbojpeg: %s: %s", host_jpegs[i].name, tjGetErrorStr2(h));
			tjDestroy(h);
			json_decref(names);
			return BENCH_FAIL;
		}
		if ((size_t)img[i].w * (size_t)img[i].h > d.maxpix)
			d.maxpix = (size_t)img[i].w * (size_t)img[i].h;
		pix += (double)img[i].w * img[i].h;
		json_array_append_new(names, json_pack("{s:s,s:i,s:i,s:I}", "name", host_jpegs[i].name, "w", img[i].w,
						       "h", img[i].h, "bytes",
						       (json_int_t)(host_jpegs[i].end - host_jpegs[i].data)));
	}
	tjDestroy(h);

	int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU), n = npu > 0 ? npu : 1;
	const char *env = getenv("GPUVET_HOST_DECODE_THREADS");
	long lim;
	if (env && gv_parse_long(env, 1, 4096, &lim) == 0 && lim < n)
		n = (int)lim;
	struct host_dec_thread *th = gv_calloc((size_t)n, sizeof *th);
	pthread_t *tid = gv_calloc((size_t)n, sizeof *tid);
	pthread_barrier_init(&d.bar, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		th[i] = (struct host_dec_thread){ .d = &d, .tid = i,
			.pu = npu > 0 ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i) : NULL };
		if (pthread_create(&tid[i], NULL, host_decode_worker, &th[i]))
			abort();  /* the barrier would wait forever; the harness records the crash */
	}
	pthread_barrier_wait(&d.bar);
	double t0 = bench_now();
	while (bench_now() - t0 < pl->decode_s) {
		usleep(20000);
		bench_progress(ctx, 0.5 + 0.3 * (bench_now() - t0) / pl->decode_s);
	}
	atomic_store(&d.stop, 1);
	long total = 0;
	double t1 = t0;
	int bound = 0, rc = BENCH_OK;
	for (int i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		total += th[i].count;
		bound += th[i].bound;
		if (th[i].t_end > t1)
			t1 = th[i].t_end;
		if (th[i].err[0] && rc == BENCH_OK) {
			bench_reason(ctx, "jpeg decode: %s", th[i].err);
			rc = BENCH_FAIL;
		}
	}
	pthread_barrier_destroy(&d.bar);
	free(th);
	free(tid);
	if (rc != BENCH_OK || total <= 0 || !(t1 > t0)) {
		if (rc == BENCH_OK)
			bench_reason(ctx, "jpeg decode: no image decoded");
		json_decref(names);
		return BENCH_FAIL;
	}
	double ips = (double)total / (t1 - t0);
	json_t *p = json_pack("{s:o,s:f,s:i,s:i,s:i,s:I,s:f,s:s,s:s,s:i}", "images", names, "mean_pixels",
			      pix / HOST_NJPEG, "threads", n, "pus", npu, "threads_bound", bound, "decoded",
			      (json_int_t)total, "seconds", t1 - t0, "library", "libjpeg-turbo turbojpeg " "(tjDecompress2)",
			      "pixel_format", "rgb", "gpus", g->count);
	if (g->count <= 0)
		json_object_set_new(p, "per_gpu", json_sprintf("omitted: %s", g->why[0] ? g->why : "no gpu visible"));
	char *ps = host_params(p);
	bench_metric(ctx, "host.decode.images_per_s", -1, ips, "images/s", ps);
	if (g->count > 0)
		bench_metric(ctx, "host.decode.images_per_s_per_gpu", -1, ips / g->count, "images/s", ps);
	free(ps);
	bench_log(ctx, "jpeg decode: %ld images in %.2f s on %d threads: %.0f images/s", total, t1 - t0, n, ips);
	json_decref(p);
	return BENCH_OK;
}

