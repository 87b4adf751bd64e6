/*
 * rank_profile.c - one row per instance type, and what its figure is (issue 40).
 *
 * The rule, written down once (docs/ranking.md holds it for users):
 *
 *   basis    a profile's figures are "sustained" (standard, full: the GPU
 *            settled at its power limit before the window was timed) or
 *            "burst" (quick, or a profile gpuvet does not know: not shown to
 *            equal the settled figure on a GPU; older quick captures were
 *            timed before the GPU settled); a value never measured on the
 *            type is an "estimate", from the stored runs of its GPU model
 *            (their basis) or from the model's reference (its kind).
 *   one row  runs of different profiles are never in one median
 *            (judge/rank.c keeps an entry per profile), but a buyer compares
 *            instance types: each type has one row per market, valued by
 *            its most sustained profile (standard, then full, then quick),
 *            the others shown beside it ("other_profiles"), labelled.
 *
 * Not for use outside judge/rank*.c.
 */
#include "judge/rank_int.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which profile of a type ranks: the lowest number. */
int rank_profile_pref(const char *profile)
{
	if (!profile)
		return 4;
	if (!strcmp(profile, "standard"))
		return 0;
	if (!strcmp(profile, "full"))
		return 1;
	if (!strcmp(profile, "quick"))
		return 2;
	return 3;
}

const char *rank_profile_basis(const char *profile)
{
	return rank_profile_pref(profile) <= 1 ? "sustained" : "burst";
}

/* a measured entry before an estimate, then the most sustained profile */
static int group_key(const struct sku *k)
{
	return (k->estimate ? 100 : 0) + rank_profile_pref(k->profile);
}

/*
 * Collapses the valued entries of order to one per instance type: the
 * entry that ranks keeps its place, the type's other measured profiles go
 * to its beside list; an estimate of a type measured otherwise is dropped.
 */
static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/*
 * The positions in order of the entries of order[i]'s type, ascending, into *at: found through the
 * type's chain (judge/rank_index.c), not a scan of order (quadratic over a large catalog).
 */
static size_t type_positions(const struct ctx *c, const long *pos, const struct sku *k, long **at, size_t *cap)
{
	size_t m = 0;
	for (long e = rank_index_first(c, k->provider, k->itype); e >= 0; e = c->s[e].next_same) {
		if (pos[e] < 0)
			continue;
		if (m == *cap) {
			*cap = *cap ? *cap * 2 : 8;
			*at = gv_realloc(*at, *cap * sizeof **at);
		}
		(*at)[m++] = pos[e];
	}
	qsort(*at, m, sizeof **at, cmp_long);
	return m;
}

void rank_group_profiles(const struct ctx *c, struct sku **order, size_t *nrows)
{
	size_t n = *nrows, w = 0, cap = 0;
	long *pos = gv_malloc((c->n ? c->n : 1) * sizeof *pos), *at = NULL;
	for (size_t e = 0; e < c->n; e++)
		pos[e] = -1;
	for (size_t i = 0; i < n; i++)
		pos[order[i] - c->s] = (long)i;
	for (size_t i = 0; i < n; i++) {
		struct sku *best = order[i];
		if (!best)
			continue;
		/* every entry of the type is at i or after: an earlier one would have taken this one */
		size_t m = type_positions(c, pos, best, &at, &cap);
		for (size_t x = 0; x < m; x++)
			if (at[x] > (long)i && order[at[x]] && group_key(order[at[x]]) < group_key(best))
				best = order[at[x]];
		for (size_t x = 0; x < m; x++) {
			struct sku *o = at[x] >= (long)i ? order[at[x]] : NULL;
			if (!o)
				continue;
			if (o != best && !o->estimate) {
				best->beside = gv_realloc(best->beside, (best->nbeside + 1) * sizeof *best->beside);
				best->beside[best->nbeside++] = o;
			}
			order[at[x]] = NULL;
		}
		order[w++] = best;
	}
	free(pos);
	free(at);
	*nrows = w;
}

/* "sustained", "burst", "estimate: reference, measured", "estimate: sustained runs" */
static void basis_label(const struct sku *k, char *buf, size_t size)
{
	if (!k->estimate)
		snprintf(buf, size, "%s", rank_profile_basis(k->profile));
	else if (k->est_from_ref)
		snprintf(buf, size, "estimate: reference, %s", k->est_kind ? k->est_kind : "?");
	else
		snprintf(buf, size, "estimate: %s runs", k->est_kind ? k->est_kind : "?");
}

/*
 * What a row's figures are: "basis" (sustained, burst or estimate), the
 * estimate's source and the reference's kind, a label for people, and the
 * type's other profiles with their own value and value per dollar.
 */
void rank_basis_columns(const struct sku *k, json_t *row)
{
	char label[96];
	basis_label(k, label, sizeof label);
	json_object_set_new(row, "basis", json_string(k->estimate ? "estimate" : rank_profile_basis(k->profile)));
	json_object_set_new(row, "basis_label", json_string(label));
	json_object_set_new(row, "estimate_source", !k->estimate ? json_null() :
			    json_string(k->est_from_ref ? "reference" : "runs"));
	json_object_set_new(row, "reference_kind", k->estimate && k->est_from_ref && k->est_kind ?
			    json_string(k->est_kind) : json_null());
	json_t *others = json_array();
	for (size_t i = 0; i < k->nbeside; i++) {
		const struct sku *o = k->beside[i];
		json_t *flags = json_array();
		for (size_t f = 0; f < o->nflags; f++)
			json_array_append_new(flags, json_string(o->flags[f]));
		json_array_append_new(others, json_pack("{s:s?,s:s,s:I,s:f,s:f,s:o}", "profile", o->profile, "basis",
							rank_profile_basis(o->profile), "runs", (json_int_t)o->nhave,
							"value", o->value, "value_per_dollar", o->vpd, "flags", flags));
	}
	json_object_set_new(row, "other_profiles", others);
}

static int same_json_type(json_t *a, json_t *b)
{
	const char *p = json_string_value(json_object_get(a, "provider"));
	const char *q = json_string_value(json_object_get(b, "provider"));
	const char *t = json_string_value(json_object_get(a, "instance_type"));
	const char *u = json_string_value(json_object_get(b, "instance_type"));
	return p && q && t && u && !strcmp(p, q) && !strcmp(t, u);
}

static int json_pref(json_t *e)
{
	return (json_is_true(json_object_get(e, "estimate")) ? 100 : 0) +
	       rank_profile_pref(json_string_value(json_object_get(e, "profile")));
}

/* The measured types the ranking could not price, one entry per type: the rule above, with "basis". */
void rank_group_unpriced(json_t *unpriced)
{
	for (size_t i = 0; i < json_array_size(unpriced); i++) {
		json_t *best = json_array_get(unpriced, i);
		size_t bi = i;
		for (size_t j = i + 1; j < json_array_size(unpriced); j++) {
			json_t *e = json_array_get(unpriced, j);
			if (same_json_type(e, best) && json_pref(e) < json_pref(best)) {
				best = e;
				bi = j;
			}
		}
		json_incref(best);
		json_t *others = json_array();
		for (size_t j = json_array_size(unpriced); j-- > i;) {
			json_t *e = json_array_get(unpriced, j);
			if (!same_json_type(e, best))
				continue;
			const char *pf = json_string_value(json_object_get(e, "profile"));
			if (j != bi && !json_is_true(json_object_get(e, "estimate")))
				json_array_insert_new(others, 0, json_pack("{s:s?,s:s,s:O,s:O?}", "profile", pf, "basis",
									  rank_profile_basis(pf), "runs",
									  json_object_get(e, "runs"), "value",
									  json_object_get(e, "value")));
			json_array_remove(unpriced, j);
		}
		const char *pf = json_string_value(json_object_get(best, "profile"));
		json_object_set_new(best, "basis", json_string(json_is_true(json_object_get(best, "estimate")) ?
							       "estimate" : rank_profile_basis(pf)));
		json_object_set_new(best, "other_profiles", others);
		json_array_insert_new(unpriced, i, best);
	}
}
