/*
 * rank_estimates.c - the estimates of a ranking that keeps at most
 * rank_opts.estimates_max of them (the report), in memory bounded by that
 * number, not by the priced types (rank_int.h rank_stream_estimates).
 *
 * The rules are judge/rank.c's; only the loading order differs.  The runs
 * are read and their types priced first (c->runs_first), so an estimate's
 * value (its GPU model and count, the stored runs of that model) is known as
 * soon as its type's prices are.  The prices of the ranking's market then
 * stream ordered by type (PRICE_ORDER_TYPE: a type's rows in stored order,
 * so the same row wins as in a pass in stored order); a type no run
 * measured gathers its winning price (rank_price_entry) while its rows pass,
 * and when the type changes it is valued (rank_estimate_row) and kept only
 * if it is among the best estimates_max so far in the final order
 * (rank_cmp_rows): a heap of that size, the worst on top, evicted and
 * counted when a better one comes.  A type without an estimate (a metric
 * no reference has) is listed in "unranked" while that list is under
 * estimates_max, then counted ("unranked_left_out").  A 1.1 M-type catalog
 * is then a few hundred entries, not a 1 KB entry per type.  The kept ones join c->s and
 * are valued and ordered with the measured ones as before.
 *
 * The same pass (judge/unpriced.c: the prices of every market, the
 * ranking's to take_row) finds the types the catalog has no price for in
 * the market; each one rank can estimate is listed in "unpriced" as an
 * estimate, with its value and why, while that list is under estimates_max,
 * then counted ("unpriced_left_out").  Without a bound (`rank --estimates`)
 * rank_list_unpriced lists every one, in a pass of its own.
 */
#include "judge/rank_int.h"
#include "judge/unpriced.h"
#include "pricing/catalog.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What valuing an unpriced type needs (rank_list_unpriced, and the stream's own pass). */
struct unpriced_est {
	struct ctx *c;
	const struct components *cp;
	int per_gpu, composite;
	struct rank_unpriced *u;
};

struct est_stream {
	struct ctx *c;
	const struct components *cp;
	int per_gpu, composite;
	json_t *unpriced, *unranked;
	struct unpriced_est un; /* the types without a price in the market, found in the same pass */
	json_t *said;           /* the type's unranked entry, if any (listed while the list is under max) */
	long unranked_left;     /* types without an estimate not listed */
	struct sku cur;         /* the type whose rows are streaming past; provider NULL: none */
	struct sku **heap;      /* the best so far, the worst at [0] (rank_cmp_rows: the greatest) */
	size_t n, max;
	long left;              /* valued estimates not kept */
};

static int worse(struct sku *a, struct sku *b)
{
	return rank_cmp_rows(&a, &b) > 0;
}

static void sift_down(struct est_stream *e, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		if (l < e->n && worse(e->heap[l], e->heap[w]))
			w = l;
		if (r < e->n && worse(e->heap[r], e->heap[w]))
			w = r;
		if (w == i)
			return;
		struct sku *t = e->heap[i];
		e->heap[i] = e->heap[w];
		e->heap[w] = t;
		i = w;
	}
}

static void sift_up(struct est_stream *e, size_t i)
{
	while (i > 0 && worse(e->heap[i], e->heap[(i - 1) / 2])) {
		struct sku *t = e->heap[i];
		e->heap[i] = e->heap[(i - 1) / 2];
		e->heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static void drop(struct sku *k)
{
	rank_sku_free(k);
	free(k);
}

/* The streamed type is complete: valued, then kept among the best, or counted (or said why it has no row). */
static void finish_type(struct est_stream *e)
{
	if (!e->cur.provider)
		return;
	struct sku *k = gv_malloc(sizeof *k);
	*k = e->cur;
	e->cur.provider = NULL;
	int row = rank_estimate_row(e->c, e->cp, e->per_gpu, e->composite, k, e->unpriced, e->said);
	if (json_array_size(e->said)) {
		/* a metric no reference has (nvme, all-reduce): every priced type is one, listed up to max */
		if (json_array_size(e->unranked) < e->max)
			json_array_extend(e->unranked, e->said);
		else
			e->unranked_left++;
		json_array_clear(e->said);
	}
	if (!row) {
		drop(k);
		return;
	}
	if (e->n < e->max) {
		e->heap[e->n++] = k;
		sift_up(e, e->n - 1);
		return;
	}
	e->left++;
	if (!worse(e->heap[0], k)) {
		drop(k);
		return;
	}
	drop(e->heap[0]);
	e->heap[0] = k;
	sift_down(e, 0);
}

static int take_row(void *ud, const struct price_row *row)
{
	struct est_stream *e = ud;
	const char *p = row->rec.provider, *t = row->rec.instance_type;
	if (rank_index_first(e->c, p, t) >= 0)
		return 0;   /* measured: priced with the runs' entries (rank_load_prices) */
	if (e->cur.provider && (strcmp(e->cur.provider, p) || strcmp(e->cur.itype, t)))
		finish_type(e);
	if (!e->cur.provider)
		rank_sku_init(&e->cur, p, t);
	rank_price_entry(e->c, &e->cur, row);
	return 0;
}

/*
 * A type without a price in the ranking's market (judge/unpriced.c): listed as an estimate with its value,
 * basis and why when rank can estimate the metric for it, unless runs measured it for the metric
 * (rank_value_one lists those, with their runs' value).
 */
static int list_unpriced(struct unpriced_est *x, const struct price_rec *p, const char *why)
{
	struct ctx *c = x->c;
	for (long i = rank_index_first(c, p->provider, p->instance_type); i >= 0; i = c->s[i].next_same)
		for (size_t j = 0; j < x->cp->n; j++)
			if (rank_median_of(&c->s[i], x->cp->names[j], &(double){ 0 }) == 0)
				return 0;
	struct sku k;
	rank_sku_init(&k, p->provider, p->instance_type);
	k.gpu_model = p->gpu_model[0] ? gv_strdup(p->gpu_model) : NULL;
	k.gpus = p->gpu_count;
	k.gpu_mem_gib = p->gpu_memory_gib;
	double *val = gv_malloc((x->cp->n ? x->cp->n : 1) * sizeof *val);
	int meas = 0, est = 0, have = 0;
	rank_shown_one(c, x->cp, x->per_gpu, &k, val, &meas, &est);
	for (size_t j = 0; j < x->cp->n; j++)
		have |= !isnan(val[j]);
	if (have && x->u->max && json_array_size(x->u->list) >= x->u->max) {
		x->u->left++;
	} else if (have) {
		rank_score_sku(&k, x->cp, val, x->composite);
		k.estimate = 1;
		json_t *e = json_pack("{s:s,s:s,s:s?,s:o,s:i,s:s,s:b,s:o,s:s}", "provider", k.provider, "instance_type",
				      k.itype, "gpu_model", k.gpu_model, "gpu_count",
				      isnan(k.gpus) ? json_null() : json_real(k.gpus), "runs", 0, "why", why, "estimate", 1,
				      "value", isfinite(k.value) ? json_real(k.value) : json_null(), "estimate_basis",
				      k.basis);
		rank_basis_columns(&k, e);
		json_array_append_new(x->u->list, e);
	}
	free(val);
	rank_sku_free(&k);
	return 0;
}

static int take_unpriced(void *ud, const struct price_rec *p, const char *why)
{
	return list_unpriced(ud, p, why);
}

int rank_list_unpriced(struct ctx *c, const struct components *cp, int per_gpu, int composite,
		       struct rank_unpriced *u)
{
	struct unpriced_est x = { .c = c, .cp = cp, .per_gpu = per_gpu, .composite = composite, .u = u };
	struct price_filter f = { .market = rank_market_of(c), .region = c->o->region,
				  .max_age_days = c->o->max_age_days };
	return unpriced_walk(c->db, &f, NULL, take_unpriced, &x, c->err, c->errlen);
}

/* The stream's pass finds them too: its walk's ud is the stream. */
static int take_unpriced_streamed(void *ud, const struct price_rec *p, const char *why)
{
	return list_unpriced(&((struct est_stream *)ud)->un, p, why);
}

struct seq_at {
	long seq;
	size_t at;
};

static int cmp_seq(const void *a, const void *b)
{
	const struct seq_at *x = a, *y = b;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

size_t *rank_prices_first_order(const struct ctx *c)
{
	struct seq_at *k = gv_malloc((c->n ? c->n : 1) * sizeof *k);
	size_t *perm = gv_malloc((c->n ? c->n : 1) * sizeof *perm);
	for (size_t i = 0; i < c->n; i++)   /* unpriced entries (price_seq 0) after every priced one, in their order */
		k[i] = (struct seq_at){ .seq = c->s[i].price_seq ? c->s[i].price_seq : c->price_seq + 1, .at = i };
	qsort(k, c->n, sizeof *k, cmp_seq);
	for (size_t i = 0; i < c->n; i++)
		perm[i] = k[i].at;
	free(k);
	return perm;
}

int rank_stream_estimates(struct ctx *c, const struct components *cp, int per_gpu, int composite, json_t *unpriced,
			  json_t *unranked, struct rank_unpriced *un, long *left, long *unranked_left)
{
	const struct rank_opts *o = c->o;
	struct est_stream e = { .c = c, .cp = cp, .per_gpu = per_gpu, .composite = composite, .unpriced = unpriced,
				.unranked = unranked, .said = json_array(), .max = (size_t)o->estimates_max,
				.un = { .c = c, .cp = cp, .per_gpu = per_gpu, .composite = composite, .u = un } };
	struct price_filter f = { .market = rank_market_of(c), .region = o->region, .max_age_days = o->max_age_days };
	e.heap = gv_malloc((e.max ? e.max : 1) * sizeof *e.heap);
	int rc = unpriced_walk(c->db, &f, take_row, take_unpriced_streamed, &e, c->err, c->errlen);
	if (rc == 0)
		finish_type(&e);
	else if (e.cur.provider)
		rank_sku_free(&e.cur);
	/* the kept ones join the entries: valued again (the same rules, the same figures) and ordered with the rest */
	for (size_t i = 0; i < e.n; i++) {
		if (rc == 0) {
			rank_index_room(c);
			c->s[c->n] = *e.heap[i];
			rank_index_add(c, c->n++);
			free(e.heap[i]);
		} else {
			drop(e.heap[i]);
		}
	}
	free(e.heap);
	json_decref(e.said);
	*left = e.left;
	*unranked_left = e.unranked_left;
	return rc;
}
