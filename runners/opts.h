/*
 * opts.h - every subcommand's options as one table (struct gv_cmd_doc): the
 * table gives getopt_long its options, prints --help, and writes the man
 * page gpuvet.1 and docs/options.md (`gpuvet help man`, `gpuvet help
 * markdown`: runners/manual.h), so the three cannot disagree.  A table row
 * may also say where and how its value is stored (type, off, min, max), for
 * gv_opts_parse.
 */
#ifndef GPUVET_OPTS_H
#define GPUVET_OPTS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

enum gv_opt_type { GV_OPT_NONE, GV_OPT_STR, GV_OPT_INT, GV_OPT_FLAG };

struct gv_opt {
	const char *name;      /* long name, without "--"; NULL ends the table */
	int has_arg;           /* no_argument, required_argument, optional_argument */
	int val;               /* what getopt_long returns for it (0: the row's index + 256) */
	const char *arg;       /* the value's name in --help ("FILE"), NULL for none */
	const char *help;      /* one line */
	char short_name;       /* a one-letter alias ('o' for -o), 0 for none */
	enum gv_opt_type type; /* for gv_opts_parse: where the value goes (GV_OPT_NONE: the caller's switch) */
	size_t off;
	long min, max;         /* GV_OPT_INT's range */
};

struct gv_cmd_doc {
	const char *name;      /* "run", "results export" */
	const char *synopsis;  /* after "usage: gpuvet ", one line or several */
	const char *about;     /* what it does, a paragraph (lines of at most 80 columns) */
	const struct gv_opt *opts;
	const char *more;      /* after the options: subcommands, exit codes (may be NULL) */
	const char *(*more_fn)(void);  /* the same built at run time (run's bench list), instead of more */
};

/* getopt_long's table from the rows (at most cap - 1 of them, plus the terminator). */
void gv_opts_getopt(const struct gv_opt *o, struct option *out, size_t cap);
/* The short options string of the rows ("ho:" style, with ':' for a value), into buf. */
const char *gv_opts_short(const struct gv_opt *o, char *buf, size_t len);
/* The --help text of a command. */
void gv_cmd_help(const struct gv_cmd_doc *d, FILE *f);
/* A row's words as --help, the man page and docs/options.md show them: "-o, --output FILE", into buf. */
void gv_opt_words(const struct gv_opt *o, char *buf, size_t len);
/*
 * Stores a typed row's value (type GV_OPT_STR/INT/FLAG) at base + off:
 * 0, or a usage error printed and GV_EXIT_USAGE.
 */
int gv_opts_store(const char *cmd, const struct gv_opt *o, const char *value, void *base);

/*
 * --max-age DAYS, in every command that takes it (rank, cost, report, prices
 * list, prices cheapest): 1 to 100000 days into *days, else a usage error
 * printed and GV_EXIT_USAGE.  One parser, one message.
 */
int gv_opt_max_age(const char *cmd, const char *value, int *days);
/*
 * What getopt_long refused (it returned '?' or ':'), said as a usage error naming the argument the
 * user wrote: an unknown option ('-2+3' whole, not its first letter), an option that needs a value,
 * one given a value it does not take, or a negative number where only options may begin with '-'.
 * ARGC, ARGV and LOPTS as given to getopt_long.  Returns GV_EXIT_USAGE.
 */
struct option;
int gv_opt_refused(const char *cmd, int argc, char **argv, const struct option *lopts);

/*
 * Rows that commands share word for word, written once (`rank` and `cost` choose prices and runs
 * alike; `prices list` leaves old prices out as they do).  Each takes the command's getopt key.
 */
#define GV_OPT_ROW_MARKET(key) { .name = "market", .has_arg = required_argument, .val = (key), .arg = "M", \
	.help = "on_demand (default), spot or reserved prices" }
#define GV_OPT_ROW_REGION(key) { .name = "region", .has_arg = required_argument, .val = (key), .arg = "R", \
	.help = "only prices and runs of region R (default: each type at its cheapest region)" }
#define GV_OPT_ROW_INCLUDE_FLAGGED(key) { .name = "include-flagged", .has_arg = no_argument, .val = (key), \
	.arg = NULL, .help = "count runs with critical flags too" }
#define GV_OPT_ROW_MAX_AGE(key) { .name = "max-age", .has_arg = required_argument, .val = (key), .arg = "DAYS", \
	.help = "leave out prices captured longer ago (those over 90 days are warned about)" }

/* Each command's table, beside its code (runners/cmd_*.c); gv_cmd_docs[] (runners/manual.h) lists them all. */
extern const struct gv_cmd_doc cmd_run_doc, cmd_inventory_doc, cmd_accept_doc, cmd_rank_doc, cmd_cost_doc, cmd_report_doc,
	cmd_results_doc, cmd_prices_doc, cmd_prices_list_doc, cmd_prices_update_doc, cmd_prices_import_doc,
	cmd_prices_fx_doc, cmd_prices_sources_doc, cmd_prices_cheapest_doc, cmd_cluster_doc, cmd_cluster_run_doc,
	cmd_cluster_show_doc, cmd_cluster_import_doc;

#endif
