/*
 * run_digest.c - what a run measured, as one SHA-256, so that two copies of
 * a uuid can be told the same run or two runs (run_digest.h).
 */
#include "results/run_digest.h"
#include "results/fp_check.h"
#include "common/crypto.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct lines {
	char **v;
	size_t n, cap;
};

static void add(struct lines *l, char *s)
{
	if (l->n == l->cap)
		l->v = gv_realloc(l->v, (l->cap = l->cap ? 2 * l->cap : 64) * sizeof *l->v);
	l->v[l->n++] = s;
}

/* A value as JSON text ("null" for absent), so that no tab or newline of it splits a line. */
static char *jtext(const json_t *v)
{
	char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	return s ? s : gv_strdup("null");
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The run's identity: what says which machine, when and how. */
static void run_lines(const json_t *run, struct lines *l)
{
	static const char *const keys[] = { "uuid", "hostname", "provider", "instance_type", "region", "gpu_model",
					    "profile" };
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		char *t = jtext(json_object_get(run, keys[i]));
		add(l, gv_asprintf("run\t%s\t%s", keys[i], t));
		free(t);
	}
	char utc[48];
	const char *at = json_string_value(json_object_get(run, "started_at"));
	add(l, gv_asprintf("run\tstarted_at\t%s", at && !fp_iso8601_utc(at, utc, sizeof utc) ? utc : at ? at : ""));
	add(l, gv_asprintf("run\tgpu_count\t%lld", (long long)json_integer_value(json_object_get(run, "gpu_count"))));
}

/* The benches (name, status) and metrics (bench, name, gpu, value, unit) of fp. */
static void row_lines(const json_t *fp, struct lines *l)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(fp, "benches"), i, e) {
		char *n = jtext(json_object_get(e, "name")), *st = jtext(json_object_get(e, "status"));
		add(l, gv_asprintf("bench\t%s\t%s", n, st));
		free(n);
		free(st);
	}
	json_array_foreach(json_object_get(fp, "metrics"), i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		if (name && strstr(name, ".pct_of_"))
			continue;   /* a percentage gpuvet derives (judge/derive_pct.c, every one *.pct_of_*): never a file's */
		char *b = jtext(json_object_get(e, "bench")), *n = jtext(json_object_get(e, "name"));
		char *u = jtext(json_object_get(e, "unit"));
		json_t *g = json_object_get(e, "gpu"), *v = json_object_get(e, "value");
		double d = json_is_number(v) ? json_number_value(v) : NAN;
		char val[40];
		if (isnan(d))
			snprintf(val, sizeof val, "null");
		else
			snprintf(val, sizeof val, "%.17g", d);
		add(l, gv_asprintf("metric\t%s\t%s\t%lld\t%s\t%s", b, n, g ? (long long)json_integer_value(g) : -1LL, val,
				   u));
		free(b);
		free(n);
		free(u);
	}
}

void run_digest(const json_t *fp, int whole, char out[RUN_DIGEST_HEX])
{
	struct lines l = { 0 };
	run_lines(json_object_get(fp, "run"), &l);
	if (whole)
		row_lines(fp, &l);
	qsort(l.v, l.n, sizeof *l.v, by_text);
	size_t len = 0;
	for (size_t i = 0; i < l.n; i++)
		len += strlen(l.v[i]) + 1;
	char *all = gv_malloc(len + 1), *p = all;
	for (size_t i = 0; i < l.n; i++) {
		size_t k = strlen(l.v[i]);
		memcpy(p, l.v[i], k);
		p[k] = '\n';
		p += k + 1;
		free(l.v[i]);
	}
	free(l.v);
	uint8_t h[32];
	gv_sha256(all, len, h);
	free(all);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}
