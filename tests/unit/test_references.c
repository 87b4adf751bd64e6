/*
 * test_references.c - every measured reference (common/gpus.c, kind
 * measured) is held to its captures (issue 58 item 3): the folders its row
 * names under tests/fixtures/gpu/ are read whole, every fingerprint of the
 * model on which gpuvet raises no critical flag now (flags_compute: a
 * hidden tenant's CONTENTION, a forced DATA_CORRUPTION) is a clean run, and
 * per dtype the reference is the median of those runs' per-GPU
 * gemm.<dtype>.tflops (the gemm bench's steady-state window), rounded to
 * 0.1; the pinned copies the median of the same runs' copies.  One
 * statistic for every measured model, so the H100-SXM and the H200 (one
 * GH100 die at the same clocks and 700 W cap) agree on GEMM.
 *
 * On c4fdb45 this failed: the H100-SXM's bf16 was the best of 6 burst-timed
 * runs (746.0), the H200's the best of 2 (823.1), while the H200 of
 * 2026-11-28 sustained 674-685 TFLOP/s.
 */
#include "judge/flags.h"
#include "results/fpq.h"
#include "common/gpus.h"
#include "common/stats.h"
#include "tests/unit/t.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GPUDIR "tests/fixtures/gpu/"
#define MAXV 256

/* The values of one reference's figures over its clean runs. */
struct sample {
	const char *key;
	double gemm[GPU_DTYPE_COUNT][MAXV], h2d[MAXV], d2h[MAXV];
	size_t ngemm[GPU_DTYPE_COUNT], nh2d, nd2h;
	int clean, dirty, other_model;
};

static int has_critical(json_t *fp)
{
	json_t *flags = flags_compute(fp), *f;
	size_t i;
	int crit = 0;
	json_array_foreach(flags, i, f)
		crit |= !strcmp(json_string_value(json_object_get(f, "severity")), "critical");
	json_decref(flags);
	return crit;
}

static void add(double *v, size_t *n, double x)
{
	if (*n < MAXV && x > 0)
		v[(*n)++] = x;
}

static void take_run(struct sample *s, json_t *fp)
{
	json_t *m;
	size_t i;
	if (fpq_gpu_ref(fp) != gpu_ref_find(s->key)) {
		s->other_model++;
		return;
	}
	if (has_critical(fp)) {
		s->dirty++;
		return;
	}
	s->clean++;
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		double v = json_number_value(json_object_get(m, "value"));
		char dt[16];
		int end = -1, d;
		if (!name || json_integer_value(json_object_get(m, "gpu")) < 0)   /* per GPU: each GPU one sample */
			continue;
		if (!strcmp(name, "memcpy.h2d.pinned.gbps"))
			add(s->h2d, &s->nh2d, v);
		else if (!strcmp(name, "memcpy.d2h.pinned.gbps"))
			add(s->d2h, &s->nd2h, v);
		else if (sscanf(name, "gemm.%15[a-z0-9].tflops%n", dt, &end) == 1 && end > 0 && !name[end] &&
			 (d = gpu_dtype_from_name(dt)) >= 0)
			add(s->gemm[d], &s->ngemm[d], v);
	}
}

static void walk(struct sample *s, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	CHECK(d != NULL);
	while (d && (e = readdir(d))) {
		char path[1024];
		struct stat st;
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(s, path);
			continue;
		}
		if (len < 5 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		json_t *fp = json_load_file(path, 0, NULL);
		const char *schema = json_string_value(json_object_get(fp, "schema"));
		if (schema && !strncmp(schema, "gpuvet.fingerprint/", 19))
			take_run(s, fp);
		json_decref(fp);
	}
	if (d)
		closedir(d);
}

static double median1(double *v, size_t n)
{
	return n ? round(gv_median_inplace(v, n) * 10) / 10 : NAN;
}

static void collect(struct sample *s, const struct gpu_reference *r)
{
	char *list = strdup(r->captures), *save = NULL;
	memset(s, 0, sizeof *s);
	s->key = r->key;
	for (char *tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char dir[512];
		snprintf(dir, sizeof dir, GPUDIR "%s", tok);
		walk(s, dir);
	}
	free(list);
}

/* Each measured reference is the median of its named captures' clean runs, dtype by dtype. */
static void test_measured_references_are_their_captures_median(void)
{
	int measured = 0;
	for (size_t i = 0; i < gpu_references_count; i++) {
		const struct gpu_reference *r = &gpu_references[i];
		static struct sample s;
		if (r->kind != GPU_REF_MEASURED) {
			CHECK(r->captures == NULL);
			continue;
		}
		measured++;
		CHECK(r->captures != NULL);
		if (!r->captures)
			continue;
		collect(&s, r);
		CHECK(s.clean >= 5);              /* a median of enough runs to mean something */
		CHECK(s.other_model == 0);        /* the folders hold this model only */
		CHECK(strstr(r->source, "median"));
		for (int d = 0; d < GPU_DTYPE_COUNT; d++) {
			double want = median1(s.gemm[d], s.ngemm[d]);
			if (!(fabs(r->given_tflops[d] - want) <= 0.05 + 1e-9))
				fprintf(stderr, "%s %s: reference %.1f, median of %zu clean runs %.2f\n", r->key,
					gpu_dtype_name(d), r->given_tflops[d], s.ngemm[d], want);
			CHECK(fabs(r->given_tflops[d] - want) <= 0.05 + 1e-9);
		}
		double h2d = median1(s.h2d, s.nh2d), d2h = median1(s.d2h, s.nd2h);
		if (!(fabs(r->h2d_gbps - h2d) <= 0.05 + 1e-9 && fabs(r->d2h_gbps - d2h) <= 0.05 + 1e-9))
			fprintf(stderr, "%s copies: reference %.1f / %.1f, median %.2f / %.2f\n", r->key, r->h2d_gbps,
				r->d2h_gbps, h2d, d2h);
		CHECK(fabs(r->h2d_gbps - h2d) <= 0.05 + 1e-9);
		CHECK(fabs(r->d2h_gbps - d2h) <= 0.05 + 1e-9);
		fprintf(stderr, "%s: %d clean runs, %d with a critical flag left out\n", r->key, s.clean, s.dirty);
	}
	CHECK(measured >= 2);
}

/*
 * The H100-SXM and the H200 are one GH100 die at the same clocks and 700 W cap: their GEMM references
 * agree within 5 % for every dtype (measured: the H200 1-3.5 % under the H100, its HBM3e taking a little
 * more of the cap), and so do their soaks.  Their memory differs (HBM3 3.35, HBM3e 4.8 TB/s): no claim.
 */
static void test_one_die_one_reference(void)
{
	for (int d = 0; d < GPU_DTYPE_COUNT; d++) {
		double a, b;
		CHECK(gpu_reference_gemm("H100-SXM", d, &a, NULL, NULL) == 0);
		CHECK(gpu_reference_gemm("H200", d, &b, NULL, NULL) == 0);
		if (!(b / a >= 0.95 && b / a <= 1.05))
			fprintf(stderr, "%s: H200 %.1f against H100-SXM %.1f\n", gpu_dtype_name(d), b, a);
		CHECK(b / a >= 0.95 && b / a <= 1.05);
	}
	double a, b;
	CHECK(gpu_reference_metric("H100-SXM", "soak.tflops", &a, NULL, NULL) == 0);
	CHECK(gpu_reference_metric("H200", "soak.tflops", &b, NULL, NULL) == 0);
	CHECK(b / a >= 0.95 && b / a <= 1.05);
}

TEST_MAIN(T(test_measured_references_are_their_captures_median), T(test_one_die_one_reference))
