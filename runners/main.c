/*
 * main.c - the gpuvet command: global options and the subcommand table.
 */
#include "runners/cli.h"
#include "runners/opts.h"
#include "runners/manual.h"
#include "common/outfile.h"
#include "common/util.h"
#include "common/version.h"
#include "judge/flags.h"
#include "results/fp_check.h"
#include "results/store.h"
#include "judge/derive.h"
#include "benches/bench.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

struct cmd_struct {
	const char *name;
	gv_cmd_fn fn;
	const char *summary;
};

static const struct cmd_struct commands[] = {
	{ "run", cmd_run, "inventory + benches, store one run, print a summary" },
	{ "inventory", cmd_inventory, "what machine is this: GPUs, driver, PCIe, CPU, NUMA, disks, cloud" },
	{ "accept", cmd_accept, "gate a stored run against an acceptance policy" },
	{ "rank", cmd_rank, "instance types ordered by a metric per dollar" },
	{ "cost", cmd_cost, "what a training or inference job costs on each instance type" },
	{ "report", cmd_report, "self-contained HTML report" },
	{ "prices", cmd_prices, "price catalog: list, update, import" },
	{ "results", cmd_results, "the store: list, show, export, merge, import" },
	{ "cluster", cmd_cluster, "vet many machines at once: every node, every node pair, the bad ones named" },
};

static const struct cmd_struct *get_command(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gpuvet [--db PATH] [-q] [-v] COMMAND [ARGS]\n\n"
		   "gpuvet vets rented GPU instances: it measures what the machine delivers,\n"
		   "stores the fingerprint, ranks instance types by throughput per dollar and\n"
		   "gates provisioning scripts.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nglobal options:\n"
		   "  --db PATH    store (else $GPUVET_DB, else $XDG_DATA_HOME/gpuvet/gpuvet.db)\n"
		   "  -q           quiet: no progress, errors only\n"
		   "  -v           verbose\n"
		   "  --help       this text; `gpuvet COMMAND --help` for a command, `gpuvet help man`\n"
		   "               for the whole manual (installed as gpuvet(1) by make install)\n"
		   "  --version    the version, the commit, the build date, and release tarball or development build\n\n"
		   "exit codes: 0 ok/accepted, 1 rejected, 2 usage or input error, 3 could not measure\n");
}

/*
 * `gpuvet help [COMMAND [SUBCOMMAND]]`: a command's --help; `gpuvet help man`
 * and `gpuvet help markdown`: the man page gpuvet.1 and docs/options.md's
 * tables, from the same option tables (runners/opts.h); `gpuvet help flags`:
 * docs/flags.md's table of flag codes, from judge/flags_table.c.
 */
static int help(int argc, char **argv)
{
	char name[64] = "";
	if (argc < 2) {
		usage(stdout);
		return GV_EXIT_OK;
	}
	if (!strcmp(argv[1], "man") && argc == 2)   /* paged on a terminal, the roff source in a pipe */
		return gv_man_page_show();
	if (!strcmp(argv[1], "markdown") && argc == 2) {
		gv_options_markdown(stdout);
		return GV_EXIT_OK;
	}
	if (!strcmp(argv[1], "flags") && argc == 2) {   /* docs/flags.md's table, from judge/flags_table.c */
		flags_table_markdown(stdout);
		return GV_EXIT_OK;
	}
	snprintf(name, sizeof name, "%s%s%s", argv[1], argc > 2 ? " " : "", argc > 2 ? argv[2] : "");
	for (size_t i = 0; gv_cmd_docs[i]; i++)
		if (!strcmp(gv_cmd_docs[i]->name, name) && argc <= 3) {
			gv_cmd_help(gv_cmd_docs[i], stdout);
			return GV_EXIT_OK;
		}
	gv_err("help: no command '%s' (see 'gpuvet --help'; 'gpuvet help man' for the whole manual)", name);
	return GV_EXIT_USAGE;
}

/*
 * Removes the global options from argv wherever they stand (before or
 * after the command), so `gpuvet run --db x` and `gpuvet --db x run` agree.
 * Stops at "--".  Returns -1 on a global option missing its value.
 */
static int strip_globals(int *argc, char **argv, struct gv_global *g)
{
	int out = 1;
	for (int i = 1; i < *argc; i++) {
		char *a = argv[i];
		if (!strcmp(a, "--")) {
			for (; i < *argc; i++)
				argv[out++] = argv[i];
			break;
		}
		if (!strcmp(a, "--db")) {
			if (i + 1 >= *argc) {
				gv_err("option '--db' needs a path");
				return -1;
			}
			g->db_path = argv[++i];
		} else if (!strncmp(a, "--db=", 5)) {
			g->db_path = a + 5;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			gv_quiet = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			gv_verbose++;
		} else {
			argv[out++] = a;
		}
	}
	*argc = out;
	argv[out] = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	struct gv_global g = { 0 };

	/* a file size limit (ulimit -f) is then an EFBIG error, said with the file's name, never a silent kill */
	signal(SIGXFSZ, SIG_IGN);
	fp_check_set_bench_check(bench_fp_check);   /* every import and merge checks rows against the benches' declarations */
	store_set_derive(derive_import);   /* and derives what can be derived, refusing a file that says otherwise */
	if (strip_globals(&argc, argv, &g) < 0)
		return GV_EXIT_USAGE;
	if (g.db_path && !*g.db_path) {
		gv_err("option '--db' needs a path");
		return GV_EXIT_USAGE;
	}
	/* SQLite's special name keeps nothing: a user's store is a file (in-memory stores are for tests) */
	if (!strcmp(gv_db_path(&g), ":memory:")) {
		gv_err("database ':memory:' is not a file path: a store must persist (name a file)");
		return GV_EXIT_USAGE;
	}
	/* a device (/dev/null), a pipe or a directory cannot hold a store nor its journal: said, not "disk I/O error" */
	struct stat dbst;
	if (!stat(gv_db_path(&g), &dbst) && !S_ISREG(dbst.st_mode)) {
		gv_err("database '%s' is not a regular file: a store is a file of its own", gv_db_path(&g));
		return GV_EXIT_USAGE;
	}
	gv_outfile_guard(gv_db_path(&g));   /* no -o, --report or export is ever the store (common/outfile.h) */
	if (argc < 2) {
		usage(stderr);
		return GV_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))  {
		usage(stdout);
		return GV_EXIT_OK;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version")) {
		printf("%s\n", gv_version_line());
		return GV_EXIT_OK;
	}
	if (argv[1][0] == '-') {
		gv_err("unknown option '%s' (see 'gpuvet --help')", argv[1]);
		return GV_EXIT_USAGE;
	}
	const struct cmd_struct *c = get_command(argv[1]);
	if (!c) {
		gv_err("unknown command '%s' (see 'gpuvet --help')", argv[1]);
		return GV_EXIT_USAGE;
	}
	opterr = 0;
	optind = 1;
	int rc = c->fn(argc - 1, argv + 1, &g);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		gv_err("cannot write to standard output");
		return rc ? rc : GV_EXIT_USAGE;
	}
	return rc;
}
