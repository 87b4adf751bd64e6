/*
 * html.h - the self-contained HTML report (issue 7): loaded by
 * reports/report_load.c (store, catalog, rankings), rendered by
 * reports/html.c (the page), sharing reports/report_int.h.
 *
 * One file, no external resource: inline CSS and one inline script, both
 * allowed by their SHA-256 in a Content-Security-Policy that forbids
 * everything else (default-src 'none'; img-src data:; no connect, no
 * frames, no forms).  Charts are inline SVG (reports/svg.h).  Every string
 * from the store or a catalog is HTML-escaped.  The page reads fully
 * without JavaScript; with it, tables sort (click a header) and filter
 * (text box), and "#sort=TABLE:COLUMN:asc|desc" in the URL sorts on load.
 *
 * Size rule for large stores: the runs table lists at most REPORT_ROWS_MAX
 * runs (report_int.h: the detailed, the newest flagged, the newest);
 * detail (flags with evidence, verdict, benches, metrics, inventory) is
 * written for the newest detail_per_sku runs of each instance type
 * (provider/instance type/region), newest first, at most detail_max in
 * all, and only while the file is under REPORT_BUDGET_BYTES; charts for
 * the newest REPORT_CHARTS_PER_SKU of each.  A run named with --run
 * always gets its detail and charts.
 */
#ifndef GPUVET_HTML_H
#define GPUVET_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

struct store;
struct policy;

#define REPORT_DETAIL_PER_SKU 3
#define REPORT_CHARTS_PER_SKU 1
#define REPORT_DETAIL_MAX 200
#define REPORT_BUDGET_BYTES (8 << 20)
#define REPORT_DEFAULT_FILE "gpuvet-report.html"

/*
 * What to do about a flag: the CLI passes judge/flags.c's
 * flags_remediation() so flags stored before remediations were (store
 * schema 1, imported captures) get the same line; NULL leaves them without.
 */
typedef const char *(*report_remedy_fn)(const char *code, const char *severity, int gpu, char *buf, size_t len);

struct report_opts {
	const int64_t *run_ids;   /* runs to report (all get detail); NULL/0: every run in the store */
	size_t n_run_ids;
	int detail_per_sku;       /* 0: REPORT_DETAIL_PER_SKU */
	int detail_max;           /* 0: REPORT_DETAIL_MAX */
	int no_estimates;         /* 1: leave reference-table estimates out of the ranking */
	size_t budget_bytes;      /* detail stops once the file is this big; 0: REPORT_BUDGET_BYTES */
	report_remedy_fn remedy;  /* remediation of flags stored without one; NULL: none */
	json_t *run_fp;           /* the fingerprint of run_ids[0] when the caller holds it (gpuvet run):
				     used as it is, not loaded again; NULL: loaded from the store */
	json_t *cost;             /* judge/cost.h cost_compute()'s result (or {"error":...}) for --job:
				     the "what your job costs" section; NULL: none */
	int max_age_days;         /* > 0: prices captured longer ago are left out of the rankings and prices */
	const struct policy *policy;   /* every verdict on the page is by this policy (judge/policy.h); NULL: built-in */
};

/*
 * Writes the report for the store's runs to out.  Returns 0, or -1 with a
 * one-line message in err (a run that cannot be loaded, a write error).
 * A missing price catalog or ranking is not an error: the report says so.
 */
int report_write(struct store *s, const struct report_opts *o, FILE *out, char *err, size_t errlen);

/*
 * Same, into path: written to a temporary file in the same directory,
 * flushed, then renamed over path, so a failure never leaves half a file
 * (and never clobbers an earlier report).
 */
int report_write_file(struct store *s, const struct report_opts *o, const char *path,
		      char *err, size_t errlen);

/* ---- rendering from data in memory (used by report_write, tests, benchmarks) ---- */

struct report_input {
	json_t *const *fps;       /* fingerprints (docs/fingerprint.md), oldest first */
	size_t n_fps;
	const unsigned char *detail;  /* per fingerprint: 1 forces full detail; NULL: by the size rule */
	json_t *rankings;         /* array of rank_compute() results: [0] sets the ranking order
				     (rank's defaults), the rest add columns; NULL: none */
	const char *rank_error;   /* shown when there is no ranking */
	json_t *prices;           /* array of price objects (provider, instance_type, region, market,
				     price, currency, source, captured_at); NULL: none */
	const char *prices_error;
	size_t runs_in_store;     /* for the scope line; 0: n_fps */
	int detail_per_sku, detail_max;
	const char *generated_at; /* NULL: now */
	report_remedy_fn remedy;  /* as report_opts.remedy */
};

int report_render(const struct report_input *in, FILE *out);

#endif
