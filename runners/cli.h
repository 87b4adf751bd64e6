/*
 * cli.h - the subcommand table (runners/main.c) and the commands' entry
 * points.  Adding a command: write runners/cmd_NAME.c with
 * `int cmd_NAME(int argc, char **argv, const struct gv_global *g)` and its
 * option table `const struct gv_cmd_doc cmd_NAME_doc` (runners/opts.h),
 * declare them, add one row to commands[] in main.c and the doc to
 * gv_cmd_docs[] (runners/manual.c), then `make docs`.
 *
 * A command gets argv with the global options (--db, -q, -v) already
 * removed; argv[0] is the command name.  Its table gives getopt_long its
 * options and prints its --help (gv_cmd_help); it returns an exit code from
 * enum gv_exit.
 */
#ifndef GPUVET_CLI_H
#define GPUVET_CLI_H

#include <jansson.h>
#include <stddef.h>

struct gv_global {
	const char *db_path;   /* --db, else NULL (store_default_path()) */
};

typedef int (*gv_cmd_fn)(int argc, char **argv, const struct gv_global *g);

int cmd_run(int argc, char **argv, const struct gv_global *g);
int cmd_inventory(int argc, char **argv, const struct gv_global *g);
int cmd_accept(int argc, char **argv, const struct gv_global *g);
int cmd_rank(int argc, char **argv, const struct gv_global *g);
int cmd_cost(int argc, char **argv, const struct gv_global *g);
int cmd_report(int argc, char **argv, const struct gv_global *g);
int cmd_prices(int argc, char **argv, const struct gv_global *g);
int cmd_results(int argc, char **argv, const struct gv_global *g);
int cmd_cluster(int argc, char **argv, const struct gv_global *g);

struct store;
/*
 * The one place the shipped price catalogs are loaded (pricing/catalog/NAME.csv,
 * on first use or after an upgrade): every command that reads prices calls
 * it on its store before reading.  Nothing is loaded into a read-only store.
 * 0, or -1 with err.  (runners/prices_ready.c)
 */
int gv_prices_ready(struct store *s, char *err, size_t errlen);
/*
 * A price outside its GPU model's plausible band in a listing (runners/price_marks.c; the band and its words:
 * pricing/catalog_band.c): the row's JSON field, "outside_band" (null when inside or no band; else the band in
 * USD per GPU-hour, the stored prices it is the median of, and the note), and under the table, on stderr, one
 * line per flagged (model, market): "gpuvet: ! marks a price per GPU-hour outside the plausible band of ...".
 */
struct price_band_hit;
struct price_band_set;
json_t *gv_band_json(const struct price_band_hit *h, int outside);
void gv_band_lines(const struct price_band_set *s);
/* `gpuvet prices cheapest` (runners/cmd_prices_cheapest.c), a subcommand of cmd_prices on its open store. */
int cmd_prices_cheapest(int argc, char **argv, struct store *s);

/*
 * How a command that only reads the store opens it: the one place this is
 * decided (runners/open_reading.c).  Read-only where that is enough (nothing
 * written, a shorter open-time check, an older schema read as it is).
 *   GV_READ_ROWS    list, export: read-only when the file exists; read-write
 *                   (creating it) otherwise or when read-only is refused.
 *   GV_READ_PRICED  rank: read-only only when the file is at the current
 *                   schema with the shipped catalogs loaded; read-write
 *                   otherwise, so gv_prices_ready() can load them (both
 *                   rank and report then show the same order).
 *   GV_READ_REPORT  report: as GV_READ_PRICED, but never creates the file.
 *   GV_READ_RECORD  accept: read-write (it records its verdict), never creates
 *                   the file.
 * Each of them reads the file read-only, as it is, when that is all it allows
 * (a read-only file or mount, or an older schema only a read-write open would
 * migrate): every question that only reads is answered; what would be
 * written is said not to be (accept prints its verdict, then exits 2).
 * 0 (-v says which way it opened), or the store's error printed and GV_EXIT_USAGE.
 */
enum gv_read_open { GV_READ_ROWS, GV_READ_PRICED, GV_READ_REPORT, GV_READ_RECORD };
int gv_open_reading(const struct gv_global *g, enum gv_read_open how, struct store **s);

/*
 * Opens the store for writing (store_open), after which any bench kept aside
 * while it was busy (results/store_pending.h) is stored.  A store_rc.
 */
int gv_store_open(const char *path, struct store **s);

/*
 * What every command calls, below them all (runners/cli_util.c): main.c
 * dispatches to the commands and is called by none of them.
 */
/* The database path a command should use. */
const char *gv_db_path(const struct gv_global *g);

/*
 * getopt_long error helper: prints "gpuvet: CMD: unknown option 'X'" style
 * errors itself (opterr is 0); returns GV_EXIT_USAGE.
 */
int gv_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0 when value (NULL: not given) is a valid identity (common/ident.h), else a usage error. */
int gv_check_identity(const char *cmd, const char *opt, const char *value);
/*
 * Prints entry i of an "unpriced" list (`cost`'s, `rank`'s: judge/unpriced.h) as a line under a table,
 * "  aws p5e.48xlarge (est.): why", and the entries after it that share its provider, why and kind
 * (estimate or measured) with it: "  lambda, 21 types (est. gpu_1x_a10...): why"; returns the index after them.
 */
size_t gv_print_unpriced(const json_t *list, size_t i);

/* A terminal table's widest line (docs: "Terminal tables stop at 160 columns"); --wide and --json have the rest. */
#define GV_TABLE_WIDTH 160
/* One line of a table, cut to GV_TABLE_WIDTH columns with "..." unless wide. */
void gv_table_line(const char *line, int wide);
/* A paragraph under a table, broken at spaces (and at its own newlines) to fit GV_TABLE_WIDTH columns. */
void gv_table_note(const char *text);
/* The same, its continuation lines indented by indent columns (an item of a list under a table). */
void gv_table_wrap(const char *text, int indent);

#endif
