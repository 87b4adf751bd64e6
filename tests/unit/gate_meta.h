/*
 * gate_meta.h - the metamorphic test of the gate (issue 52), shared by the
 * unit binary tests/unit/test_gate_metamorphic.c (a seeded walk of thousands
 * of cases, run by `make test` and by tests/integration/test_gate_metamorphic.py)
 * and the libFuzzer target tests/fuzz/fuzz_gate.c (the fuzzer's bytes pick).
 *
 * One case: a real capture of tests/fixtures/gpu/ degraded so that the
 * built-in policy must not accept it (its GEMM halved, a critical flag's
 * evidence added, the gemm bench failed, its BF16 figure nulled, or its H2D
 * at 0.81x under a fleet of three accepted clean copies), then changed by a
 * random combination of the "harmless" mutations a hostile file can make:
 * the model or SKU relabelled in any spelling, rows duplicated under any
 * bench and in any order, rows moved between benches, series timestamps
 * shifted or repeated, series thinned or padded with invalid points, the
 * run dated anywhere, flags and verdicts of its own, benches listed or
 * configured anew, the run merged through another store, runs accepted by
 * other policies stored before it; and (issue 57) any derived figure edited,
 * nulled or removed, any series or metric moved under another listed bench,
 * any config key dropped or added, the inventory's GPU names renamed, nulled
 * or removed, its memory sizes changed.  The victim is stored last, as a node
 * stores the run it has just measured, and judged as a plain `gpuvet
 * accept` judges (the run stored last, the built-in policy): its verdict
 * must never be ACCEPT.  A refused import (exit 2) is a pass.  Everything
 * runs in process (an in-memory store; a file store in $TMPDIR for a merge).
 */
#ifndef GPUVET_GATE_META_H
#define GPUVET_GATE_META_H

#include "benches/bench.h"
#include "judge/accept.h"
#include "judge/derive.h"
#include "judge/policy.h"
#include "results/fp_check.h"
#include "results/store.h"
#include "runners/hooks.h"

#include <dirent.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GM_MAX_CAPS 128
#define GM_MAX_MUTS 4

/* Where each choice comes from: the fuzzer's bytes (0 once they run out), else a seeded generator. */
struct gm_src {
	const uint8_t *data;
	size_t size, pos;
	uint64_t state;
};

static unsigned gm_pick(struct gm_src *s, unsigned n)
{
	if (n <= 1)
		return 0;
	if (s->data)
		return s->pos < s->size ? s->data[s->pos++] % n : 0;
	uint64_t z = (s->state += 0x9e3779b97f4a7c15ull);   /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (unsigned)((z ^ (z >> 31)) % n);
}

struct gm_world {
	json_t *caps[GM_MAX_CAPS];
	char *names[GM_MAX_CAPS];
	int clean_accepted[GM_MAX_CAPS];   /* -1 unknown, 0 no, 1 yes: whether the fleet degradation applies */
	size_t ncaps;
	struct policy *def, *smoke, *inference;
	FILE *sink;
	unsigned long uuids;
	char tmpdir[4096];
	int verbose;
};

static int gm_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file under dir ending in .json, sorted, appended to names. */
static void gm_scan(const char *dir, char **names, size_t *n, size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) && *n < cap) {
		char path[4096];
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR)
			gm_scan(path, names, n, cap);
		else if (len > 5 && !strcmp(e->d_name + len - 5, ".json"))
			names[(*n)++] = strdup(path);
	}
	if (d)
		closedir(d);
}

static const char GM_SMOKE[] = "name: smoke\nrules:\n  - metric: gemm.bf16.tflops\n    gpu: each\n    min: 1\n";

/* The captures and the policies; 0, or -1 said on stderr. */
static int gm_init(struct gm_world *w, const char *root)
{
	char *names[4 * GM_MAX_CAPS], err[512];
	size_t n = 0;
	memset(w, 0, sizeof *w);
	fp_check_set_bench_check(bench_fp_check);   /* as runners/main.c: every import checked as gpuvet's */
	store_set_derive(derive_import);            /* and derived as gpuvet's */
	gm_scan(root, names, &n, sizeof names / sizeof names[0]);
	qsort(names, n, sizeof names[0], gm_cmp);
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_load_file(names[i], 0, NULL);
		const char *schema = json_string_value(json_object_get(j, "schema"));
		if (j && schema && !strcmp(schema, "gpuvet.fingerprint/1") && json_is_array(json_object_get(j, "metrics")) &&
		    w->ncaps < GM_MAX_CAPS) {
			w->clean_accepted[w->ncaps] = -1;
			w->names[w->ncaps] = names[i];
			w->caps[w->ncaps++] = j;
		} else {
			json_decref(j);
			free(names[i]);
		}
	}
	if (policy_load(NULL, &w->def, err, sizeof err) ||
	    policy_parse(GM_SMOKE, strlen(GM_SMOKE), "smoke.yaml", &w->smoke, err, sizeof err) ||
	    policy_load("contrib/policies/inference-single-gpu.yaml", &w->inference, err, sizeof err)) {
		fprintf(stderr, "gate_meta: a policy: %s\n", err);
		return -1;
	}
	w->sink = fopen("/dev/null", "w");
	const char *tmp = getenv("TMPDIR");
	snprintf(w->tmpdir, sizeof w->tmpdir, "%s/gate-meta-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(w->tmpdir) || !w->sink || !w->ncaps) {
		fprintf(stderr, "gate_meta: %s\n", w->ncaps ? "no temporary directory" : "no capture under the root");
		return -1;
	}
	return 0;
}

static void gm_fini(struct gm_world *w)
{
	for (size_t i = 0; i < w->ncaps; i++) {
		json_decref(w->caps[i]);
		free(w->names[i]);
	}
	policy_free(w->def);
	policy_free(w->smoke);
	policy_free(w->inference);
	if (w->sink)
		fclose(w->sink);
	rmdir(w->tmpdir);
}

/* A copy of a capture with a uuid of its own and no verdicts. */
static json_t *gm_fresh(struct gm_world *w, size_t cap)
{
	char u[40];
	json_t *fp = json_deep_copy(w->caps[cap]);
	snprintf(u, sizeof u, "%08lx-0000-4000-8000-%012lx", (unsigned long)getpid() & 0xffffffffu, ++w->uuids);
	json_object_set_new(json_object_get(fp, "run"), "uuid", json_string(u));
	json_object_set_new(fp, "verdicts", json_array());
	return fp;
}

/* Imports fp into s (taken); the run's id, or -1 when refused. */
static int64_t gm_put(struct store *s, json_t *fp)
{
	int64_t id = -1;
	int rc = store_import_fingerprint(s, fp, &id);
	json_decref(fp);
	return rc == STORE_OK ? id : -1;
}

/* A stored run judged by p, as `gpuvet accept --run ID` would: its exit code. */
static int gm_judge(struct gm_world *w, struct store *s, int64_t id, const struct policy *p)
{
	json_t *fp = derive_load(s, id, STORE_RUN_ALL);   /* as accept_run loads it */
	if (!fp)
		return 2;
	int rc = accept_judge(s, id, p, fp, NULL, 1, w->sink);
	json_decref(fp);
	return rc;
}

#include "tests/unit/gate_meta_mut.h"

#endif
