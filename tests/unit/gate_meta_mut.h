/*
 * gate_meta_mut.h - the degradations, the mutations and one case of the
 * metamorphic test of the gate (tests/unit/gate_meta.h says what and why).
 */
#ifndef GPUVET_GATE_META_MUT_H
#define GPUVET_GATE_META_MUT_H

#include <math.h>

enum gm_degrade { GM_GEMM_HALVED, GM_SDC, GM_GEMM_FAILED, GM_BF16_NULL, GM_H2D_FLEET, GM_NDEGRADE };
static const char *const gm_degrade_names[] = { "gemm_halved", "sdc_flag", "gemm_failed", "bf16_null", "h2d_fleet" };

static const char *gm_name(const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? v : "";
}

static void gm_scale(json_t *fp, const char *prefix, const char *suffix, double f)
{
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		const char *n = json_string_value(json_object_get(m, "name"));
		json_t *v = json_object_get(m, "value");
		size_t ln = n ? strlen(n) : 0, ls = strlen(suffix);
		if (n && !strncmp(n, prefix, strlen(prefix)) && ln >= ls && !strcmp(n + ln - ls, suffix) && json_is_number(v))
			json_object_set_new(m, "value", json_real(json_number_value(v) * f));
	}
}

static void gm_list_bench(json_t *fp, const char *name, const char *status)
{
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(fp, "benches"), i, b)
		if (!strcmp(gm_name(b, "name"), name))
			return;
	json_array_append_new(json_object_get(fp, "benches"), json_pack("{s:s,s:s,s:n,s:f,s:{}}", "name", name, "status",
									 status, "reason", "duration_s", 1.0, "config"));
}

/* Drops every row (metric or series) whose name starts with one of a, b. */
static void gm_drop(json_t *fp, const char *list, const char *key, const char *a, const char *b)
{
	json_t *rows = json_object_get(fp, list);
	for (size_t i = json_array_size(rows); i-- > 0;) {
		const char *n = json_string_value(json_object_get(json_array_get(rows, i), key));
		if (n && (strstr(n, a) || strstr(n, b)))
			json_array_remove(rows, i);
	}
}

static void gm_degrade(json_t *fp, enum gm_degrade d)
{
	size_t i;
	json_t *b;
	switch (d) {
	case GM_GEMM_HALVED:   /* a slow GPU as it measures itself: its percentages of the peak with it */
		gm_scale(fp, "gemm.", ".tflops", 0.5);
		gm_scale(fp, "gemm.", ".pct_of_peak", 0.5);
		break;
	case GM_SDC:
		gm_drop(fp, "metrics", "name", "soak.sdc.mismatches", "soak.sdc.mismatches");
		json_array_append_new(json_object_get(fp, "metrics"),
			json_pack("{s:s,s:s,s:i,s:i,s:s,s:{}}", "bench", "soak", "name", "soak.sdc.mismatches", "gpu", 0,
				  "value", 5, "unit", "count", "params"));
		gm_list_bench(fp, "soak", "ok");
		break;
	case GM_GEMM_FAILED:
		gm_drop(fp, "metrics", "name", "gemm.bf16", "gemm.fp8");
		gm_drop(fp, "samples", "series", "bf16", "fp8");
		json_array_foreach(json_object_get(fp, "benches"), i, b)
			if (!strcmp(gm_name(b, "name"), "gemm")) {
				json_object_set_new(b, "status", json_string("failed"));
				json_object_set_new(b, "reason", json_string("bf16 result differs from the fp64 reference"));
			}
		break;
	case GM_BF16_NULL:
		json_array_foreach(json_object_get(fp, "metrics"), i, b)
			if (!strcmp(gm_name(b, "name"), "gemm.bf16.tflops"))
				json_object_set_new(b, "value", json_null());
		break;
	default:
		gm_scale(fp, "memcpy.h2d.p", "", 0.81);   /* memcpy.h2d.pinned.gbps, memcpy.h2d.pct_of_link */
		break;
	}
}

/* ---- the mutations ---- */

static const char *const gm_models[] = { "H100-SXM", "h100-sxm", "H100-SXM5", "H100-SXM ", "L4", "T4", "A10G",
					 "H200", "NVIDIA H100 80GB HBM3", "unknown", NULL };
static const char *const gm_benches[] = { "gemm", "memcpy", "soak", "harness", "allreduce", "aaa", "", "zzz",
					  "nvme", "ingest" };
/* spellings of the fleet's one SKU (another SKU has a fleet of its own, or none) */
static const char *const gm_itypes[] = { "p5.48xlarge", "P5.48XLARGE", "p5.48xlarge ", " p5.48xlarge", NULL };
#define GM_SKU "p5.48xlarge"

static json_t *gm_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *gm_any(struct gm_src *src, json_t *arr)
{
	size_t n = json_array_size(arr);
	return n ? json_array_get(arr, gm_pick(src, (unsigned)n)) : NULL;
}

static void gm_relabel(struct gm_src *src, json_t *fp, int sku)
{
	json_t *run = json_object_get(fp, "run"), *g;
	size_t i;
	if (sku) {
		json_object_set_new(run, "instance_type", gm_str_or_null(gm_itypes[gm_pick(src, 5)]));
		json_object_set_new(run, "provider", json_string(gm_pick(src, 2) ? "aws" : "AWS"));
		return;
	}
	char was[64];   /* a copy: the run's own label is freed when replaced */
	snprintf(was, sizeof was, "%s", gm_name(run, "gpu_model"));
	const char *m = gm_pick(src, 2) ? (*was ? was : NULL) :   /* as it was */
			gm_models[gm_pick(src, sizeof gm_models / sizeof gm_models[0])];
	json_object_set_new(run, "gpu_model", gm_str_or_null(m));
	if (gm_pick(src, 2))
		json_array_foreach(json_object_get(json_object_get(fp, "inventory"), "gpus"), i, g)
			json_object_set_new(g, "reference_model", gm_str_or_null(m));
}

/* What the built-in policy and its flags read: a row the mutations aim at half the time. */
static const char *const gm_judged[] = { "gemm.bf16.tflops", "gemm.fp16.tflops", "memcpy.h2d.pinned.gbps",
					 "memcpy.h2d.pct_of_link", "soak.sdc.mismatches" };

static json_t *gm_row(struct gm_src *src, json_t *ms)
{
	const char *want = gm_judged[gm_pick(src, sizeof gm_judged / sizeof gm_judged[0])];
	size_t i, n = 0;
	json_t *m, *hits[64];
	if (gm_pick(src, 2))
		return gm_any(src, ms);
	json_array_foreach(ms, i, m)
		if (!strcmp(gm_name(m, "name"), want) && n < 64)
			hits[n++] = m;
	return n ? hits[gm_pick(src, (unsigned)n)] : gm_any(src, ms);
}

/*
 * A copy of a metric row that looks better (higher, or 0 for a lower-is-better
 * count), under any bench, first or anywhere in the list; or the row moved to
 * another bench.
 */
static void gm_dup_row(struct gm_src *src, json_t *fp, int move)
{
	json_t *ms = json_object_get(fp, "metrics"), *m = gm_row(src, ms);
	const char *bench = gm_benches[gm_pick(src, sizeof gm_benches / sizeof gm_benches[0])];
	if (!m)
		return;
	if (move) {
		json_object_set_new(m, "bench", json_string(bench));
		return;
	}
	json_t *c = json_deep_copy(m);
	json_t *v = json_object_get(c, "value");
	const struct metric_info *mi = metric_info_find(gm_name(m, "name"));
	if (mi && (mi->flags & METRIC_LOWER_IS_BETTER))
		json_object_set_new(c, "value", json_integer(0));
	else if (json_is_number(v))
		json_object_set_new(c, "value", json_real(json_number_value(v) * (1.0 + gm_pick(src, 4))));
	if (gm_pick(src, 3) == 0)
		json_object_set_new(c, "bench", json_string(bench));
	if (gm_pick(src, 3) == 0)
		gm_list_bench(fp, bench, "ok");
	json_array_insert_new(ms, gm_pick(src, 2) ? 0 : gm_pick(src, (unsigned)json_array_size(ms) + 1), c);
}

/* A series' timestamps shifted, scaled or repeated; its points thinned or padded with invalid ones. */
static void gm_series(struct gm_src *src, json_t *fp, unsigned how)
{
	json_t *s = gm_any(src, json_object_get(fp, "samples")), *pts = json_object_get(s, "points"), *p;
	size_t i, n = json_array_size(pts);
	double off = (double)gm_pick(src, 2000) - 1000.0;
	json_array_foreach(pts, i, p) {
		json_t *x = json_array_get(p, 0);
		if (how == 0 && json_is_number(x))
			json_array_set_new(p, 0, json_real(json_number_value(x) + off));
		if (how == 1 && gm_pick(src, 3) == 0)
			json_array_set_new(p, 1, json_null());
	}
	for (i = 0; how == 2 && i < n; i++)   /* every timestamp repeated */
		json_array_append(pts, json_array_get(pts, i));
	/* invalid readings: nulls, and -1 where NVML gives it for a reading it has not (the soak's series) */
	int nvml = !strncmp(gm_name(s, "series"), "soak.", 5);
	for (i = 0; how == 3 && i < 1 + gm_pick(src, 40); i++)
		json_array_insert_new(pts, gm_pick(src, (unsigned)json_array_size(pts) + 1),
				      json_pack("[f,o]", (double)gm_pick(src, 100),
						nvml && gm_pick(src, 2) ? json_real(-1) : json_null()));
}

static void gm_date(struct gm_src *src, json_t *fp)
{
	char t[40];
	/* half the time within the life of the captures' GPUs (2024 to 2026), else anywhere from 1990 to 2289 */
	unsigned y = gm_pick(src, 2) ? 2024 + gm_pick(src, 3) : 1990 + gm_pick(src, 300);
	unsigned mo = 1 + gm_pick(src, y == 2026 ? 11 : 12), d = 1 + gm_pick(src, 28);
	snprintf(t, sizeof t, "%04u-%02u-%02uT%02u:00:00%s", y, mo, d, gm_pick(src, 24), gm_pick(src, 2) ? "Z" : "+05:30");
	json_t *run = json_object_get(fp, "run");
	json_object_set_new(run, "started_at", json_string(t));
	json_object_set_new(run, "finished_at", gm_pick(src, 2) ? json_null() : json_string(t));
}

/* Its own flags gone, an accept of the built-in policy claimed, a bench listed or configured anew, rows reordered. */
static void gm_claims(struct gm_world *w, struct gm_src *src, json_t *fp, unsigned how)
{
	json_t *b, *ms = json_object_get(fp, "metrics");
	if (how == 0) {
		json_object_set_new(fp, "flags", json_array());
		json_array_append_new(json_object_get(fp, "verdicts"),
			json_pack("{s:s,s:s,s:s,s:s,s:{}}", "verdict", "accept", "policy", "default", "policy_digest",
				  w->def->digest, "at", "2026-11-22T00:00:00Z", "detail"));
	} else if (how == 1) {
		gm_list_bench(fp, gm_benches[gm_pick(src, sizeof gm_benches / sizeof gm_benches[0])],
			      gm_pick(src, 2) ? "ok" : "failed");
	} else if (how == 2 && (b = gm_any(src, json_object_get(fp, "benches")))) {
		if (!json_is_object(json_object_get(b, "config")))
			json_object_set_new(b, "config", json_object());
		json_object_set_new(json_object_get(b, "config"), "timing",
				    json_string(gm_pick(src, 2) ? "other" : "steady"));
	} else {
		for (size_t i = json_array_size(ms); i > 1; i--) {   /* Fisher-Yates */
			size_t j = gm_pick(src, (unsigned)i);
			json_t *a = json_incref(json_array_get(ms, i - 1));
			json_array_set(ms, i - 1, json_array_get(ms, j));
			json_array_set_new(ms, j, a);
		}
	}
}

/* ---- issue 57: what a file may claim that gpuvet derives ---- */

/* Any derived figure (a percentage of a peak or a link) edited: up, down, nulled or removed. */
static void gm_edit_derived(struct gm_src *src, json_t *fp)
{
	json_t *ms = json_object_get(fp, "metrics");
	for (size_t i = json_array_size(ms); i-- > 0;) {
		json_t *m = json_array_get(ms, i);
		if (!strstr(gm_name(m, "name"), ".pct_of_") || gm_pick(src, 2))
			continue;
		switch (gm_pick(src, 4)) {
		case 0: json_object_set_new(m, "value", json_real(99.0)); break;
		case 1: json_object_set_new(m, "value", json_real(1.0 + gm_pick(src, 98))); break;
		case 2: json_object_set_new(m, "value", json_null()); break;
		default: json_array_remove(ms, i); break;
		}
	}
}

/* Any series (or metric) moved under another bench the run lists, a copy of it left behind or not. */
static void gm_move_series(struct gm_src *src, json_t *fp, int metric)
{
	json_t *rows = json_object_get(fp, metric ? "metrics" : "samples"), *r = gm_any(src, rows);
	json_t *b = gm_any(src, json_object_get(fp, "benches"));
	if (!r || !b)
		return;
	if (gm_pick(src, 2))
		json_array_append_new(rows, json_deep_copy(r));   /* the original stays, a copy elsewhere */
	json_object_set_new(r, "bench", json_string(gm_name(b, "name")));
}

/* Any config key of any bench dropped, or one added (timing, duration_s, gpus, a word of its own). */
static void gm_config_key(struct gm_src *src, json_t *fp)
{
	static const char *const keys[] = { "timing", "duration_s", "gpus", "window_s", "profile", "zzz" };
	json_t *b = gm_any(src, json_object_get(fp, "benches")), *c = json_object_get(b, "config");
	if (!b)
		return;
	if (json_is_object(c) && json_object_size(c) && gm_pick(src, 2)) {
		const char *k;
		json_t *v;
		unsigned want = gm_pick(src, (unsigned)json_object_size(c)), n = 0;
		json_object_foreach(c, k, v)
			if (n++ == want) {
				json_object_del(c, k);
				break;
			}
		return;
	}
	if (!json_is_object(c))
		json_object_set_new(b, "config", c = json_object());
	const char *k = keys[gm_pick(src, sizeof keys / sizeof keys[0])];
	json_object_set_new(c, k, gm_pick(src, 2) ? json_integer(1 + gm_pick(src, 600)) : json_string("steady"));
}

/* The inventory's GPU names renamed (another model, a look-alike), nulled or removed; memory sizes changed. */
static void gm_inventory(struct gm_src *src, json_t *fp, int memory)
{
	static const char *const names[] = { "NVIDIA L4", "NVIDIA H200", "NVIDIA A100-SXM4-40GB", "Tesla T4",
					     "NVIDIA H100 PCIe", "NVIDIA Mystery 9000", "" };
	size_t i;
	json_t *g;
	json_array_foreach(json_object_get(json_object_get(fp, "inventory"), "gpus"), i, g) {
		if (memory) {
			static const double gib[] = { 16, 24, 40, 141, 192, 0.5 };
			json_object_set_new(g, "memory_bytes",
					    json_integer((json_int_t)(gib[gm_pick(src, 6)] * 1073741824.0)));
			continue;
		}
		unsigned how = gm_pick(src, 3);
		if (how == 0)
			json_object_set_new(g, "name", json_string(names[gm_pick(src, sizeof names / sizeof names[0])]));
		else if (how == 1)
			json_object_set_new(g, "name", json_null());
		else
			json_object_del(g, "name");
		if (gm_pick(src, 2))
			json_object_del(g, "reference_model");
	}
}

#define GM_NMUT 21
static const char *const gm_mut_names[GM_NMUT] = { "relabel_model", "relabel_sku", "dup_row", "move_row",
	"shift_times", "thin_series", "repeat_times", "pad_series", "date_run", "own_flags_verdicts", "list_bench",
	"bench_timing", "reorder_rows", "dup_row_again", "edit_derived", "move_series", "move_metric", "config_key",
	"gpu_names", "gpu_memory", "edit_derived_again" };

static void gm_mutate(struct gm_world *w, struct gm_src *src, json_t *fp, unsigned k)
{
	switch (k) {
	case 0: case 1: gm_relabel(src, fp, (int)k); break;
	case 2: case 13: gm_dup_row(src, fp, 0); break;
	case 3: gm_dup_row(src, fp, 1); break;
	case 4: case 5: case 6: case 7: gm_series(src, fp, k - 4); break;
	case 8: gm_date(src, fp); break;
	case 14: case 20: gm_edit_derived(src, fp); break;
	case 15: case 16: gm_move_series(src, fp, k == 16); break;
	case 17: gm_config_key(src, fp); break;
	case 18: case 19: gm_inventory(src, fp, k == 19); break;
	default: gm_claims(w, src, fp, k - 9); break;
	}
}

/* ---- one case ---- */

struct gm_case {
	size_t cap;
	enum gm_degrade degrade;
	unsigned muts[GM_MAX_MUTS], nmuts, npre;
	int merged, imported, verdict;
};

static void gm_say(const struct gm_world *w, const struct gm_case *c, FILE *out)
{
	fprintf(out, "capture %s, degraded %s, %u other run(s) first, mutations", w->names[c->cap],
		gm_degrade_names[c->degrade], c->npre);
	for (unsigned i = 0; i < c->nmuts; i++)
		fprintf(out, " %s", gm_mut_names[c->muts[i]]);
	fprintf(out, "%s: %s\n", c->merged ? ", merged through another store" : "",
		!c->imported ? "import refused" : c->verdict == 0 ? "ACCEPT" : c->verdict == 1 ? "REJECT" :
		c->verdict == 3 ? "UNMEASURABLE" : "error");
}

/* Whether a clean copy of the capture is accepted by the built-in policy (the fleet degradation needs three). */
static int gm_clean_accepted(struct gm_world *w, size_t cap)
{
	struct store *s;
	if (w->clean_accepted[cap] < 0 && store_open(":memory:", &s) == STORE_OK) {
		int64_t id = gm_put(s, gm_fresh(w, cap));
		w->clean_accepted[cap] = id > 0 && gm_judge(w, s, id, w->def) == 0;
		store_close(s);
	}
	return w->clean_accepted[cap] == 1;
}

/* Runs stored before the victim: clean copies judged by another policy, any date; a fleet for GM_H2D_FLEET. */
static void gm_others(struct gm_world *w, struct gm_src *src, struct store *s, struct gm_case *c)
{
	const struct policy *pols[] = { w->smoke, w->inference, w->def };
	for (unsigned i = 0; i < c->npre; i++) {
		json_t *fp = gm_fresh(w, c->cap);
		int low = gm_pick(src, 2);
		if (gm_pick(src, 2))
			gm_date(src, fp);
		if (low)
			gm_degrade(fp, c->degrade);   /* the same low machine, accepted by a looser policy */
		int64_t id = gm_put(s, fp);
		if (id > 0)
			gm_judge(w, s, id, pols[gm_pick(src, low ? 2 : 3)]);
	}
	for (int i = 0; c->degrade == GM_H2D_FLEET && i < 3; i++) {
		json_t *fp = gm_fresh(w, c->cap);
		json_object_set_new(json_object_get(fp, "run"), "instance_type", json_string(GM_SKU));
		int64_t id = gm_put(s, fp);
		if (id > 0)
			gm_judge(w, s, id, w->def);
	}
}

/* The victim into s, directly or merged from a store of its own; its id, or -1 when refused. */
static int64_t gm_store_victim(struct gm_world *w, struct store *s, json_t *fp, int merge)
{
	char path[4200], uuid[40];
	struct store *o;
	int64_t id = -1;
	int added = 0, skipped = 0, live = 0;
	if (!merge)
		return gm_put(s, fp);
	snprintf(uuid, sizeof uuid, "%s", json_string_value(json_object_get(json_object_get(fp, "run"), "uuid")));
	snprintf(path, sizeof path, "%s/other-%lu.db", w->tmpdir, ++w->uuids);
	if (store_open(path, &o) != STORE_OK) {
		json_decref(fp);
		return -1;
	}
	int ok = gm_put(o, fp) > 0;
	store_close(o);
	/* as `gpuvet results merge` does: the merged run derived here (store_set_derive), the other store's flags never copied */
	if (ok && store_merge(s, path, NULL, &added, &skipped, &live) == STORE_OK && added == 1 &&
	    store_resolve_run(s, uuid, &id) != STORE_OK)
		id = -1;
	unlink(path);
	for (const char *x = "-wal\0-shm\0-journal\0"; *x; x += strlen(x) + 1) {
		char side[4300];
		snprintf(side, sizeof side, "%s%s", path, x);
		unlink(side);
	}
	return id;
}

/*
 * One case from src; 0 when the victim was not accepted, 1 when it was (said on stderr), -1 on an
 * error of the harness itself.
 */
static int gm_run_case(struct gm_world *w, struct gm_src *src, struct gm_case *c)
{
	struct store *s;
	int64_t latest = -1;
	memset(c, 0, sizeof *c);
	c->cap = gm_pick(src, (unsigned)w->ncaps);
	c->degrade = (enum gm_degrade)gm_pick(src, GM_NDEGRADE);
	if (c->degrade == GM_H2D_FLEET && !gm_clean_accepted(w, c->cap))
		c->degrade = GM_GEMM_HALVED;
	c->npre = gm_pick(src, 4);
	c->nmuts = 1 + gm_pick(src, GM_MAX_MUTS);
	c->merged = gm_pick(src, 10) == 0;
	if (store_open(":memory:", &s) != STORE_OK)
		return -1;
	gm_others(w, src, s, c);
	json_t *fp = gm_fresh(w, c->cap);
	gm_degrade(fp, c->degrade);
	if (c->degrade == GM_H2D_FLEET)
		json_object_set_new(json_object_get(fp, "run"), "instance_type", json_string(GM_SKU));
	for (unsigned i = 0; i < c->nmuts; i++)
		gm_mutate(w, src, fp, c->muts[i] = gm_pick(src, GM_NMUT));
	int64_t id = gm_store_victim(w, s, fp, c->merged);
	c->imported = id > 0;
	if (c->imported && (store_latest_run(s, &latest) != STORE_OK || latest != id)) {
		fprintf(stderr, "gate_meta: the run stored last is %lld, not the victim %lld\n", (long long)latest,
			(long long)id);
		store_close(s);
		return 1;
	}
	c->verdict = c->imported ? gm_judge(w, s, id, w->def) : 2;
	store_close(s);
	if (w->verbose || c->verdict == 0)
		gm_say(w, c, stderr);
	return c->verdict == 0;
}

#endif
