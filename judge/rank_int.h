/*
 * rank_int.h - what judge/rank.c (the steps of a ranking, in order) and
 * its parts share: the runs (rank_gather.c), the prices (rank_price.c), the
 * estimates streamed by type and the types without a price that could be
 * estimated (rank_estimates.c, over judge/unpriced.c), each entry's value
 * (rank_value.c), one row per type (rank_profile.c), the score and the JSON
 * (rank_rows.c), the entries by type (rank_index.c), and below them all the
 * helpers they share (rank_util.c).  The parts call down, never back into
 * rank.c.  Not for use outside judge/rank*.c.
 */
#ifndef GPUVET_RANK_INT_H
#define GPUVET_RANK_INT_H

#include "judge/rank.h"

#include <jansson.h>

#include <stddef.h>
#include <stdint.h>

struct store;
struct price_row;
typedef struct sqlite3 sqlite3;  /* the store's connection, for the price catalog */

/* read for the memory-bandwidth-per-dollar column */
#define MEMBW_METRIC "memcpy.d2d.gbps"

struct mvals {
	char *name;
	double *v;
	size_t n, cap;
};

struct sku {
	char *provider, *itype;
	char *profile;          /* of its runs; NULL: a priced SKU no run has claimed */
	/* price */
	int priced;
	int prio;
	char *region, *gpu_model, *source, *captured;
	double gpus;            /* NAN unknown */
	double gpu_mem_gib;     /* per GPU, NAN unknown */
	double usd_h;           /* NAN: the winning price's currency has no stored rate */
	char currency[4];       /* the winning price's own currency */
	double fx_rate;         /* its rate (USD per unit), NAN for USD */
	char fx_date[32];
	int other_priced, other_prio;   /* the other market (spot beside on-demand, or on-demand) */
	double other_usd_h;
	/* where (judge/rank_price.c) */
	char *run_region;       /* the region most of its runs were tagged with (the first such); NULL none */
	/* every region its runs came from, with how many (the first RANK_RUN_REGIONS; the rest counted in rr_more) */
#define RANK_RUN_REGIONS 6
	struct { char name[40]; int runs; } rr[RANK_RUN_REGIONS];
	int nrr, rr_more;
	char zone[64];          /* spot: the region's lowest zone the price is of */
	char price_note[192];   /* "priced at R2; no price in R" when not priced where it ran */
	char dearer_note[192];  /* ranking spot: the spot price is dearer than on-demand for the type (rank_price.c) */
	char band_note[256];    /* its price outside its GPU model's plausible band (rank_price_bands) */
	/* runs */
	long nhave;             /* runs of this SKU that have one of the metrics asked for */
	double run_gpus;        /* gpu count reported by the runs */
	char *run_gpu_model;
	struct mvals *m;
	size_t nm;
	char **flags;
	size_t nflags;
	/* results */
	int estimate;
	char basis[200];        /* an estimate's basis */
	const char *est_kind;   /* an estimate's source: the basis of the runs it scales ("sustained", "burst")
				   or the reference's kind (gpu_ref_kind_name); static text */
	int est_from_ref;       /* the estimate scales the model's reference, not stored runs */
	int32_t next_same;      /* index into ctx.s of the type's next entry (another profile); -1 none */
	long price_seq;         /* runs read first: when the type's first price row was read (its first entry); 0 none */
	struct sku **beside;    /* the type's other profiles, shown beside the ranked one (judge/rank_profile.c) */
	size_t nbeside;
	double value, vpd;
	json_t *components, *missing, *not_applicable;
};

/*
 * One stored run, as the ranking sees it (24 bytes, in id order): its SKU
 * entry, its flags and which of the gathered metrics it has (a bit each, the
 * gathered metric's index; past RANK_GATHER_BITS - 1 they share the last bit,
 * which only score.all, asking for every one, can reach).
 */
#define RANK_GATHER_BITS 16
struct runent {
	int64_t id;
	int32_t sku;            /* index into ctx.s; -1 when the run counts for no SKU */
	uint32_t fset;          /* its flags: 1 + index into ctx.fsets; 0 none */
	uint16_t rrow;          /* a rankable row of the metric (no SKU: any row, each counted once) */
	uint16_t has;           /* counts as having it: rankable, applicable, not left out for a critical flag */
	uint8_t named : 1;      /* has a provider and type, left out by --region */
	uint8_t critical : 1;   /* carries a critical flag */
};

/* A gathered metric: what every ranking over the same gather reads of it. */
struct gmetric {
	char *name;
	char *unit;             /* the first unit of a counted row, in run order; NULL none */
	int rankable;
	long unnamed, elsewhere;        /* runs with a row of it but no SKU: unnamed, or in another --region */
};

struct ctx {
	struct store *s_store;
	sqlite3 *db;            /* the store's connection, for the price catalog */
	const struct rank_opts *o;
	struct sku *s;
	size_t n, cap_s;        /* entries, and room for (rank_index_room) */
	char *err;
	size_t errlen;
	const char *metric;     /* the metric asked for (for the reason when nothing ranks) */
	struct runent *runs;    /* every stored run, sorted by id once read */
	size_t nruns, capruns;
	/* judge/rank_gather.c: the gathered metrics and the runs' distinct flag sets; owned by the gather */
	struct gmetric *gm;
	size_t ngm;
	char **fsets;
	size_t nfsets;
	uint32_t *fset_ix;      /* open addressing: 1 + index into fsets; 0 empty */
	size_t fset_cap;
	int gathered_elsewhere; /* runs, gm and fsets belong to a struct rank_gather: not freed with c */
	json_t *left;           /* the runs left out for a critical flag, listed (at most left_max) */
	size_t left_max;
	int last_sku;           /* index of the SKU the last run read belonged to; -1 none */
	long unnamed_with;      /* runs that have it but no provider or instance type */
	long elsewhere_with;    /* runs that have it in another region than --region */
	long left_out;          /* runs with a critical flag not counted (no include_flagged) */
	const char *first_component; /* the metric whose spread a row shows */
	int other;              /* loading the other market's prices */
	int runs_first;         /* runs read before prices: only their types are priced (judge/rank_price.c take_price) */
	int32_t *hidx;          /* judge/rank_index.c: (provider, itype) -> first index into s; -1 empty */
	size_t hcap, hused;
	size_t *profiled;       /* the entries of s that runs made (a profile), for the estimates */
	size_t nprofiled;
	long price_seq;         /* price rows read for entries (struct sku price_seq) */
};

/* The component metrics and their weights: the metric alone, a score's list, or every one a run has. */
struct components {
	const char **names;
	double *weights;
	size_t n;
};

/*
 * The types the catalog has no price for in the ranking's market that it could estimate (issue 48 item 8:
 * said, not dropped), each an entry of "unpriced" with "estimate": true, its value, basis and why; listed up to
 * max (0: every one), the others counted in left ("unpriced_left_out").
 */
struct rank_unpriced {
	json_t *list;
	size_t max;
	long left;
};

/* judge/rank_util.c: below every other rank file */
int rank_rankable(const char *m);
/* The metric's instance-level row is already per GPU (a link or a rank), not an instance total. */
int rank_per_gpu_scope(const char *m);
/*
 * The metric is the GPUs' (its bench needs a GPU: gemm, memcpy, allreduce, soak, ingest): another type's GPUs of
 * the same model, or the model's reference, estimate it.  Else it is the host's (host memory, JPEG decode, NVMe,
 * object store): no other instance type tells it, and it never scales with the GPU count (issue 58 item 9).
 */
int rank_of_the_gpus(const char *m);
double rank_sku_gpus(const struct sku *k);
const char *rank_sku_model(const struct sku *k);
double rank_per_price(const struct rank_opts *o, const struct sku *k);
int rank_median_of(struct sku *k, const char *metric, double *out);
const char *rank_market_of(const struct ctx *c);
/* qsort's order of the rows: catalogued before custom, then value per dollar (measured first on a tie), then names. */
int rank_cmp_rows(const void *a, const void *b);

/* judge/rank_value.c */
/* k's value per component into val (NAN none): its median, else its estimate; a SKU with any measured
 * component is measured (*meas), never an estimate (*est). */
void rank_shown_one(const struct ctx *c, const struct components *cp, int per_gpu, struct sku *k, double *val,
		    int *meas, int *est);
/* k valued per dollar (a row: 1), or said why not in unpriced or unranked (0); -1 when it has no value. */
int rank_value_one(struct ctx *c, const struct components *cp, const double *val, int meas, int est,
		   int composite, struct sku *k, json_t *unpriced, json_t *unranked);
/* An unmeasured k valued as rank.c's value_skus values it: 1 when it is a row (k->vpd set), else 0 (said in
 * unpriced or unranked when that is why). */
int rank_estimate_row(struct ctx *c, const struct components *cp, int per_gpu, int composite, struct sku *k,
		      json_t *unpriced, json_t *unranked);

/* judge/rank_gather.c: the runs, their flags and the metrics names[0..n) (n == 0: every one) into c */
int rank_gather_runs(struct ctx *c, const char *const *names, size_t n);
/* A ranking of the gathered metrics: c's entries copied from g (the metrics names[0..n) only) */
void rank_gather_copy(struct ctx *c, const struct ctx *g, const char *const *names, size_t n);
/* What the ranking asking for names[0..n) (extra: MEMBW_METRIC for its column only) counts: each SKU's runs
 * and flag codes, the runs left out, why none ranks */
void rank_gather_count(struct ctx *c, const char *const *names, size_t n, int extra);
/* The runs of the entry (provider, itype, profile) that have metric as rank_gather_count counts them (a row's
 * "runs"), in id order: their number, ids malloc'd (NULL for none); -1 when metric was not gathered on a bit of
 * its own */
long rank_gather_ids(const struct ctx *c, const char *metric, const char *provider, const char *itype,
		     const char *profile, int64_t **ids);
void rank_gather_free(struct ctx *c);

/* judge/rank_index.c: a type's first entry in c->s (-1 none), the others through next_same */
long rank_index_first(const struct ctx *c, const char *provider, const char *itype);
/* Indexes the entry just appended at c->s[idx] (after its provider and itype are set). */
void rank_index_add(struct ctx *c, size_t idx);
void rank_index_free(struct ctx *c);
/* Room in c->s for one entry more (the capacity doubles). */
void rank_index_room(struct ctx *c);
/* Lists the entries runs made (a profile) in c->profiled, for the estimates. */
void rank_index_profiled(struct ctx *c);
/* A new entry's zeroed fields and names (rank_index.c owns the entries' making), and what it holds freed. */
void rank_sku_init(struct sku *k, const char *provider, const char *itype);
void rank_sku_free(struct sku *k);
/* The type's first entry; with create, a new one indexed when there is none (else NULL). */
struct sku *rank_sku_get(struct ctx *c, const char *provider, const char *itype, int create);
/* judge/rank_price.c: a price row for k (c->other: of the other market), kept when it is the better
 * (the source, then USD/h) */
int rank_price_entry(struct ctx *c, struct sku *k, const struct price_row *row);
/* Every entry's price in the ranking's market, then the other market's; 0, or -1 with c->err set. */
int rank_load_prices(struct ctx *c);
/* judge/rank_profile.c: one row per instance type, the sustained profile ranking */
int rank_profile_pref(const char *profile);
const char *rank_profile_basis(const char *profile);
void rank_group_profiles(const struct ctx *c, struct sku **order, size_t *nrows);
void rank_basis_columns(const struct sku *k, json_t *row);
void rank_group_unpriced(json_t *unpriced);
/* judge/rank_estimates.c: with o->estimates_max > 0 (runs read and priced first), the types no run measured,
 * streamed by type: each valued once its prices are read, the best estimates_max kept as entries of c->s, the
 * others counted in *left and freed; types without an estimate listed in unranked up to estimates_max, the others
 * counted in *unranked_left; -1 on a read error (said in c->err). */
int rank_stream_estimates(struct ctx *c, const struct components *cp, int per_gpu, int composite, json_t *unpriced,
			  json_t *unranked, struct rank_unpriced *un, long *left, long *unranked_left);
/* With estimates asked for and the prices read first: every type the catalog has no price for in the market that
 * rank can estimate (judge/unpriced.c finds them), listed in un (rank_stream_estimates lists them in its own pass);
 * 0, or -1 with c->err set. */
int rank_list_unpriced(struct ctx *c, const struct components *cp, int per_gpu, int composite,
		       struct rank_unpriced *un);
/* With the runs read first and estimates on: the order c->s would have had with the prices read first (a
 * type's first entry where its first price row is, the market's then the other's, then the entries runs
 * made, in their order), which the unpriced list keeps; a permutation of 0..c->n-1, to free. */
size_t *rank_prices_first_order(const struct ctx *c);
/* judge/rank_price.c */
/* Prices each measured SKU in its runs' region (catalog_choose_price), and the other market in the same region. */
int rank_price_places(struct ctx *c);
/* The ordered rows kept: every measured one, and the best o->estimates_max estimates (all when 0),
 * each with its other market's price; returns how many estimates were left out, -1 on a read error. */
long rank_keep_rows(struct ctx *c, struct sku **order, size_t *nrows);
/* The prices the ranked rows use that are older than PRICE_STALE_DAYS: one {provider, source, captured_at,
 * age_days} per provider and capture date ("stale_prices": warned about once by the CLI and the report). */
json_t *rank_stale_json(struct sku *const *order, size_t n);
json_t *rank_undated_json(struct sku *const *order, size_t n);
/* The kept rows' prices against their GPU models' plausible bands (band_note); 0, or -1 with c->err. */
int rank_price_bands(struct ctx *c, struct sku *const *order, size_t n);

/* judge/rank_rows.c */
/* k's value: the metric's, or the score over the components that apply (fixed units). */
void rank_score_sku(struct sku *k, const struct components *cp, const double *val, int composite);
json_t *rank_unranked_json(const struct sku *k, const char *metric);
json_t *rank_row_json(struct ctx *c, const struct sku *k, size_t rank, int composite);
json_t *rank_result_json(const struct rank_opts *o, const char *metric, const char *market, const char *per,
			 const char *unit, const struct components *cp, int composite, json_t *rows,
			 json_t *unpriced, long left_out, json_t *left);

#endif
