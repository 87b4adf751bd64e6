/*
 * manual.c - every command's doc in the order of `gpuvet --help`, and the
 * whole manual from their tables (manual.h): the man page gpuvet.1 and
 * docs/options.md.  It names every command's table, so it stands above the
 * commands; only main.c (`gpuvet help`) calls it.
 */
#include "runners/manual.h"
#include "runners/opts.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

const struct gv_cmd_doc *const gv_cmd_docs[] = {
	&cmd_run_doc, &cmd_inventory_doc, &cmd_accept_doc, &cmd_rank_doc, &cmd_cost_doc, &cmd_report_doc,
	&cmd_results_doc, &cmd_prices_doc, &cmd_prices_list_doc, &cmd_prices_update_doc,
	&cmd_prices_import_doc, &cmd_prices_fx_doc, &cmd_prices_sources_doc, &cmd_prices_cheapest_doc, &cmd_cluster_doc,
	&cmd_cluster_run_doc, &cmd_cluster_show_doc, &cmd_cluster_import_doc, NULL,
};

/* ---- the man page (man(7)) ---- */

/* Text for roff: backslashes doubled, '-' as \-, a line never starting with '.' or '\''. */
static void roff(FILE *f, const char *s, int verbatim)
{
	int bol = 1;
	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		if (bol && !verbatim && *s == ' ') {   /* a leading space would break the filled line */
			while (s[1] == ' ')
				s++;
			continue;
		}
		bol = *s == '\n';
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

static void man_command(FILE *f, const struct gv_cmd_doc *d)
{
	fputs(".SS \"gpuvet ", f);
	roff(f, d->name, 1);
	fputs("\"\n.nf\n", f);
	fputs("gpuvet ", f);
	roff(f, d->synopsis, 1);
	fputs("\n.fi\n", f);
	if (d->about) {
		fputs(".PP\n", f);
		roff(f, d->about, 0);
		fputs("\n", f);
	}
	for (size_t i = 0; d->opts && d->opts[i].name; i++) {
		char left[96];
		gv_opt_words(&d->opts[i], left, sizeof left);
		fputs(".TP\n.B ", f);
		roff(f, left, 1);
		fputs("\n", f);
		roff(f, d->opts[i].help, 0);
		fputs("\n", f);
	}
	const char *more = d->more_fn ? d->more_fn() : d->more;
	if (more) {
		fputs(".PP\n.nf\n", f);
		roff(f, more, 1);
		fputs("\n.fi\n", f);
	}
}

void gv_man_page(FILE *f)
{
	fprintf(f, ".TH GPUVET 1 \"%s\" \"gpuvet %s\" \"User Commands\"\n", GV_MAN_DATE, GPUVET_VERSION);
	fputs(".SH NAME\ngpuvet \\- vet rented GPU instances: measure, store, rank by price, accept or reject\n"
	      ".SH SYNOPSIS\n.B gpuvet\n[\\fB\\-\\-db\\fR \\fIPATH\\fR] [\\fB\\-q\\fR] [\\fB\\-v\\fR] "
	      "\\fICOMMAND\\fR [\\fIARGS\\fR]\n"
	      ".SH DESCRIPTION\ngpuvet measures what a rented GPU machine delivers (GEMM, copies, all\\-reduce,\n"
	      "storage, object store, a soak under load), stores the fingerprint in an SQLite store,\n"
	      "flags what is wrong with the machine, ranks instance types by throughput per dollar\n"
	      "and gates provisioning scripts through its exit code.\n"
	      ".SH GLOBAL OPTIONS\n"
	      ".TP\n.B \\-\\-db PATH\nthe store (else $GPUVET_DB, else $XDG_DATA_HOME/gpuvet/gpuvet.db, else\n"
	      "~/.local/share/gpuvet/gpuvet.db)\n"
	      ".TP\n.B \\-q\nquiet: no progress, errors only\n"
	      ".TP\n.B \\-v\nverbose: the benches' logs\n"
	      ".TP\n.B \\-\\-version\nprint the version, the commit it was built from, the build date, and\n"
	      "whether it is a release tarball (make dist) or a development build\n"
	      ".SH COMMANDS\nEvery command takes \\fB\\-\\-help\\fR.\n", f);
	for (size_t i = 0; gv_cmd_docs[i]; i++)
		man_command(f, gv_cmd_docs[i]);
	fputs(".SH EXIT STATUS\n.TP\n.B 0\nok; the run accepted (\\fBaccept\\fR, \\fBrun \\-\\-accept\\fR)\n"
	      ".TP\n.B 1\nrejected by the acceptance policy\n"
	      ".TP\n.B 2\nusage or input error, a store that is not gpuvet's, a failed write\n"
	      ".TP\n.B 3\ncould not measure what the policy requires\n"
	      ".SH ENVIRONMENT\n.TP\n.B GPUVET_DB\nthe store, when \\fB\\-\\-db\\fR is not given\n"
	      ".TP\n.B GPUVET_NO_METADATA\n1: never ask the cloud metadata services\n"
	      ".TP\n.B GPUVET_DB_SYNC\nnormal (default) or full: whether every commit waits for an fsync\n"
	      ".SH SEE ALSO\nREADME.md and docs/ in the source tree; docs/options.md holds this page's\n"
	      "tables as Markdown.\n", f);
}

/* ---- docs/options.md ---- */

/* Text in a table cell: a '|' would end the cell, even inside a code span. */
static void md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

static void md_command(FILE *f, const struct gv_cmd_doc *d)
{
	fprintf(f, "### gpuvet %s\n\n```\ngpuvet %s\n```\n\n", d->name, d->synopsis);
	if (d->about)
		fprintf(f, "%s\n\n", d->about);
	if (d->opts && d->opts[0].name) {
		fputs("| option | meaning |\n| --- | --- |\n", f);
		for (size_t i = 0; d->opts[i].name; i++) {
			char left[96];
			gv_opt_words(&d->opts[i], left, sizeof left);
			fputs("| `", f);
			md_cell(f, left);
			fputs("` | ", f);
			md_cell(f, d->opts[i].help);
			fputs(" |\n", f);
		}
		fputs("\n", f);
	}
	const char *more = d->more_fn ? d->more_fn() : d->more;
	if (more)
		fprintf(f, "```\n%s\n```\n\n", more);
}

void gv_options_markdown(FILE *f)
{
	fputs("<!-- generated by `gpuvet help markdown` from the commands' option tables (runners/opts.h):\n"
	      "     do not edit below; `make docs` rewrites it -->\n## Every command's options\n\n", f);
	for (size_t i = 0; gv_cmd_docs[i]; i++)
		md_command(f, gv_cmd_docs[i]);
}

int gv_man_page_show(void)
{
	if (isatty(STDOUT_FILENO)) {
		FILE *p;
		fflush(stdout);
		/* man found and run: its own pager on the terminal; not found (127): the source below, with a word */
		if ((p = popen("command -v man >/dev/null 2>&1 && exec man -l -", "w"))) {
			gv_man_page(p);
			int st = pclose(p);
			if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
				return GV_EXIT_OK;
			if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) != 127)
				return GV_EXIT_USAGE;   /* man said why on the terminal */
		}
		fputs("gpuvet: man(1) is not installed here: the page's roff source follows (man -l FILE shows it)\n", stderr);
	}
	gv_man_page(stdout);
	return GV_EXIT_OK;
}
