/*
 * fp_check.c - the fingerprint schema, checked on import (see fp_check.h).
 */
#include "results/fp_check.h"
#include "common/ident.h"

#include "common/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fp_uuid_ok(const char *u)
{
	int nonzero = 0;
	if (!u || strlen(u) != 36)
		return 0;
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (u[i] != '-')
				return 0;
		} else if (!isdigit((unsigned char)u[i]) && !(u[i] >= 'a' && u[i] <= 'f')) {
			return 0;
		} else {
			nonzero |= u[i] != '0';
		}
	}
	return nonzero;
}

/* An optional identity field of o, where (the object's place) said as where[at] when at is not -1: absent or null is fine. */
static int opt_ident_at(const struct jtree *t, uint32_t o, const char *key, const char *where, long at, char *err,
			size_t errlen)
{
	uint32_t v = jt_get(t, o, key);
	if (!v || jt_type(t, v) == JT_NULL)
		return 0;
	const char *s = jt_str(t, v);
	const char *why = s ? ident_check(s) : "is not a string";
	if (!why)
		return 0;
	char shown[4 * IDENT_MAX + 16] = "", place[64];
	if (s)
		ident_escape(s, shown, 96);
	snprintf(place, sizeof place, at < 0 ? "%s" : "%s[%ld]", where, at);   /* said only when refused */
	return gv_fp_refuse(err, errlen, "%s.%s '%s' %s", place, key, shown, why);
}

static int opt_ident(const struct jtree *t, uint32_t o, const char *key, const char *where, char *err, size_t errlen)
{
	return opt_ident_at(t, o, key, where, -1, err, errlen);
}

/* An optional list: absent, null or an array. */
static int opt_list(const struct jtree *t, uint32_t fp, const char *key, char *err, size_t errlen)
{
	int ty = jt_type(t, jt_get(t, fp, key));
	if (ty != JT_ABSENT && ty != JT_NULL && ty != JT_ARR)
		return gv_fp_refuse(err, errlen, "%s is not a list", key);
	return 0;
}

/* An integer v within lo..hi. */
static int int_in(const struct jtree *t, uint32_t v, long long lo, long long hi)
{
	return jt_is_int(t, v) && jt_int(t, v) >= lo && jt_int(t, v) <= hi;
}

/* An optional GPU index: absent, or an integer -1..FP_MAX_GPU_INDEX. */
static int opt_gpu(const struct jtree *t, uint32_t o, const char *key, const char *where, size_t i, char *err,
		   size_t errlen)
{
	uint32_t v = jt_get(t, o, key);
	if (v && !int_in(t, v, -1, FP_MAX_GPU_INDEX))
		return gv_fp_refuse(err, errlen, "%s[%zu].%s is not a gpu index (-1 to %d)", where, i, key, FP_MAX_GPU_INDEX);
	return 0;
}

/*
 * run.gpuvet_build (issue 59), absent from fingerprints written before: null, or an object with
 * commit (an identifier) and built_at (an ISO-8601 time), each optional, and release (a boolean).
 */
static int check_build(const struct jtree *t, uint32_t run, char *err, size_t errlen)
{
	uint32_t b = jt_get(t, run, "gpuvet_build");
	if (!b || jt_type(t, b) == JT_NULL)
		return 0;
	if (jt_type(t, b) != JT_OBJ)
		return gv_fp_refuse(err, errlen, "run.gpuvet_build is not an object {commit, built_at, release}");
	if (opt_ident(t, b, "commit", "run.gpuvet_build", err, errlen))
		return -1;
	uint32_t at = jt_get(t, b, "built_at");
	if (at && jt_type(t, at) != JT_NULL && !fp_iso8601(jt_str(t, at)))
		return gv_fp_refuse(err, errlen, "run.gpuvet_build.built_at is not an iso-8601 time (2026-11-22T04:00:00Z)");
	int rel = jt_type(t, jt_get(t, b, "release"));
	if (rel != JT_ABSENT && rel != JT_TRUE && rel != JT_FALSE)
		return gv_fp_refuse(err, errlen, "run.gpuvet_build.release is not true or false");
	return 0;
}

static int check_run(const struct jtree *t, uint32_t run, char *err, size_t errlen)
{
	static const char *const ids[] = { "provider", "instance_type", "region", "hostname", "gpu_model",
					   "profile", "gpuvet_version" };
	const char *uuid = jt_str(t, jt_get(t, run, "uuid"));
	if (!fp_uuid_ok(uuid))
		return gv_fp_refuse(err, errlen, "run.uuid missing or not a lowercase uuid (8-4-4-4-12 hex digits, not all zero)");
	uint32_t jst = jt_get(t, run, "status");   /* absent: stored as incomplete */
	const char *st = jt_str(t, jst);
	if (jst && (!st || (strcmp(st, "complete") && strcmp(st, "incomplete") && strcmp(st, "running"))))
		return gv_fp_refuse(err, errlen, "run.status is not complete, incomplete or running");
	if (!fp_iso8601(jt_str(t, jt_get(t, run, "started_at"))))
		return gv_fp_refuse(err, errlen, "run.started_at is not an iso-8601 time (2026-11-22T04:00:00Z)");
	uint32_t fin = jt_get(t, run, "finished_at");
	if (fin && jt_type(t, fin) != JT_NULL && !fp_iso8601(jt_str(t, fin)))
		return gv_fp_refuse(err, errlen, "run.finished_at is not an iso-8601 time (2026-11-22T04:00:00Z)");
	char a[48], b[48];
	if (fin && jt_type(t, fin) != JT_NULL && !fp_iso8601_utc(jt_str(t, jt_get(t, run, "started_at")), a, sizeof a) &&
	    !fp_iso8601_utc(jt_str(t, fin), b, sizeof b) && strncmp(b, a, 19) < 0)
		return gv_fp_refuse(err, errlen, "run.finished_at is before run.started_at");
	uint32_t gc = jt_get(t, run, "gpu_count");
	if (gc && jt_type(t, gc) != JT_NULL && !int_in(t, gc, 0, FP_MAX_GPU_COUNT))
		return gv_fp_refuse(err, errlen, "run.gpu_count is not a whole number from 0 to %d", FP_MAX_GPU_COUNT);
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
		if (opt_ident(t, run, ids[i], "run", err, errlen))
			return -1;
	return check_build(t, run, err, errlen);
}

static int check_inventory(const struct jtree *t, uint32_t inv, char *err, size_t errlen)
{
	if (!inv || jt_type(t, inv) == JT_NULL)
		return 0;
	if (jt_type(t, inv) != JT_OBJ)
		return gv_fp_refuse(err, errlen, "inventory is not an object");
	uint32_t gpus = jt_get(t, inv, "gpus"), g;
	int ty = jt_type(t, gpus);
	if (ty != JT_ABSENT && ty != JT_NULL && ty != JT_ARR)
		return gv_fp_refuse(err, errlen, "inventory.gpus is not a list");
	size_t i;
	jt_foreach(t, gpus, i, g) {
		uint32_t ix = jt_get(t, g, "index");
		if (jt_type(t, g) != JT_OBJ)
			return gv_fp_refuse(err, errlen, "inventory.gpus[%zu] is not an object", i);
		if (ix && !int_in(t, ix, 0, FP_MAX_GPU_INDEX))
			return gv_fp_refuse(err, errlen, "inventory.gpus[%zu].index is not a gpu index (0 to %d)", i,
				    FP_MAX_GPU_INDEX);
	}
	return 0;
}

/* Named entries of a list: the name an identity, the gpu in range. */
static int check_named(const struct jtree *t, uint32_t fp, const char *list, const char *namekey, char *err,
		       size_t errlen)
{
	size_t i;
	uint32_t e;
	jt_foreach(t, jt_get(t, fp, list), i, e) {
		if (jt_type(t, e) != JT_OBJ)
			return gv_fp_refuse(err, errlen, "%s[%zu] is not an object", list, i);
		if (!jt_get(t, e, namekey))
			return gv_fp_refuse(err, errlen, "%s[%zu].%s missing", list, i, namekey);
		if (opt_ident_at(t, e, namekey, list, (long)i, err, errlen) || opt_gpu(t, e, "gpu", list, i, err, errlen))
			return -1;
		const char *bench = jt_str(t, jt_get(t, e, "bench"));
		if ((!strcmp(list, "metrics") || !strcmp(list, "samples")) && !(bench && !*bench))
			if (opt_ident_at(t, e, "bench", list, (long)i, err, errlen))
				return -1;
	}
	return 0;
}

/*
 * No text of a fingerprint is longer than FP_MAX_STRING: the longest gpuvet
 * writes is a flag message (512 bytes) or a config echo's value; a 100 MB
 * field would only cost memory in every later reader (report, export).
 */
static int check_strings(const struct jtree *t, uint32_t fp, char *err, size_t errlen)
{
	if (t->maxstr <= FP_MAX_STRING)   /* no string of the whole text is too long: no node to visit */
		return 0;
	for (uint32_t v = fp; v < t->nodes[fp].end; v++) {
		if (t->nodes[v].type != JT_STR || t->nodes[v].n <= FP_MAX_STRING)
			continue;
		int line = 1;
		for (uint32_t i = 0; i < t->nodes[v].src && i < t->srclen; i++)
			line += t->src[i] == '\n';
		return gv_fp_refuse(err, errlen, "a text of %.1f MiB at line %d; no field of a fingerprint is longer than %u KiB",
			    t->nodes[v].n / 1048576.0, line, FP_MAX_STRING / 1024);
	}
	return 0;
}

/* An optional number of row i: absent, null or a number. */
static int opt_number(const struct jtree *t, uint32_t o, const char *key, size_t i, char *err, size_t errlen)
{
	int ty = jt_type(t, jt_get(t, o, key));
	if (ty != JT_ABSENT && ty != JT_NULL && ty != JT_INT && ty != JT_REAL)
		return gv_fp_refuse(err, errlen, "rows[%zu].%s is not a number", i, key);
	return 0;
}

int fp_check_kept_rows(const struct jtree *t, uint32_t rows, char *err, size_t errlen)
{
	size_t i;
	uint32_t e;
	if (jt_type(t, rows) != JT_ARR)
		return gv_fp_refuse(err, errlen, "rows is not a list");
	if (check_strings(t, rows, err, errlen))
		return -1;
	jt_foreach(t, rows, i, e) {
		const char *kind = jt_str(t, jt_get(t, e, "t"));
		int metric = kind && !strcmp(kind, "metric"), smp = kind && !strcmp(kind, "sample");
		const char *key = metric ? "name" : "series";
		if (jt_type(t, e) != JT_OBJ)
			return gv_fp_refuse(err, errlen, "rows[%zu] is not an object", i);
		if (!metric && !smp)
			continue;
		if (!jt_get(t, e, key))
			return gv_fp_refuse(err, errlen, "rows[%zu].%s missing", i, key);
		if (opt_ident_at(t, e, key, "rows", (long)i, err, errlen) || opt_gpu(t, e, "gpu", "rows", i, err, errlen) ||
		    opt_number(t, e, metric ? "value" : "x", i, err, errlen) ||
		    opt_number(t, e, metric ? "value" : "y", i, err, errlen) ||
		    (metric && jt_str(t, jt_get(t, e, "unit")) && *jt_str(t, jt_get(t, e, "unit")) &&
		     opt_ident_at(t, e, "unit", "rows", (long)i, err, errlen)))
			return -1;
	}
	return 0;
}

int fp_check(const struct jtree *t, uint32_t fp, char *err, size_t errlen)
{
	static const char *const lists[] = { "benches", "metrics", "samples", "flags", "verdicts" };
	uint32_t run = jt_get(t, fp, "run");
	if (jt_type(t, fp) == JT_OBJ && check_strings(t, fp, err, errlen))
		return -1;
	if (jt_type(t, run) != JT_OBJ)
		return gv_fp_refuse(err, errlen, "run missing");
	if (check_run(t, run, err, errlen) || check_inventory(t, jt_get(t, fp, "inventory"), err, errlen))
		return -1;
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
		if (opt_list(t, fp, lists[i], err, errlen))
			return -1;
	if (check_named(t, fp, "benches", "name", err, errlen) || check_named(t, fp, "metrics", "name", err, errlen) ||
	    check_named(t, fp, "samples", "series", err, errlen) || check_named(t, fp, "flags", "code", err, errlen))
		return -1;
	return fp_check_rows(t, fp, err, errlen);
}
