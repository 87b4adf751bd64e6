/*
 * opts.c - the commands' option tables as getopt_long tables, --help, the
 * man page and docs/options.md (opts.h).
 */
#include "runners/opts.h"
#include "runners/cli.h"
#include "common/util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

const struct gv_cmd_doc *const gv_cmd_docs[] = {
	&cmd_run_doc, &cmd_inventory_doc, &cmd_accept_doc, &cmd_rank_doc, &cmd_cost_doc, &cmd_report_doc,
	&cmd_results_doc, &cmd_prices_doc, &cmd_prices_list_doc, &cmd_prices_update_doc,
	&cmd_prices_import_doc, &cmd_prices_fx_doc, &cmd_prices_sources_doc, &cmd_prices_cheapest_doc, &cmd_cluster_doc,
	&cmd_cluster_run_doc, &cmd_cluster_show_doc, NULL,
};

static int opt_val(const struct gv_opt *o, size_t i)
{
	return o[i].val ? o[i].val : (int)i + 256;
}

void gv_opts_getopt(const struct gv_opt *o, struct option *out, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; o[i].name && k + 1 < cap; i++)
		out[k++] = (struct option){ o[i].name, o[i].has_arg, NULL, opt_val(o, i) };
	out[k] = (struct option){ 0 };
}

const char *gv_opts_short(const struct gv_opt *o, char *buf, size_t len)
{
	size_t k = 0;
	if (len)
		buf[0] = 0;
	for (size_t i = 0; o[i].name && k + 3 < len; i++) {
		if (!o[i].short_name)
			continue;
		buf[k++] = o[i].short_name;
		if (o[i].has_arg == required_argument)
			buf[k++] = ':';
		buf[k] = 0;
	}
	return buf;
}

/* "-o, --output FILE" */
static void opt_words(const struct gv_opt *o, char *buf, size_t len)
{
	char s[8] = "";
	if (o->short_name)
		snprintf(s, sizeof s, "-%c, ", o->short_name);
	snprintf(buf, len, "%s--%s%s%s%s%s", s, o->name, o->arg ? " " : "",
		 o->has_arg == optional_argument && o->arg ? "[" : "", o->arg ? o->arg : "",
		 o->has_arg == optional_argument && o->arg ? "]" : "");
}

/* text as lines of at most width columns, each but the first indented to indent (the first is at col) */
static void wrap(FILE *f, const char *text, int col, int indent, int width)
{
	const char *p = text;
	int at = col;
	if (col < indent) {
		fprintf(f, "%*s", indent - col, "");
		at = indent;
	}
	int first = 1;
	while (*p) {
		size_t w = strcspn(p, " ");
		if (!first && at + 1 + (int)w > width) {
			fprintf(f, "\n%*s", indent, "");
			at = indent;
			first = 1;
		}
		if (!first) {
			fputc(' ', f);
			at++;
		}
		fwrite(p, 1, w, f);
		at += (int)w;
		first = 0;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

void gv_cmd_help(const struct gv_cmd_doc *d, FILE *f)
{
	fprintf(f, "usage: gpuvet %s\n", d->synopsis);
	if (d->about)
		fprintf(f, "\n%s\n", d->about);
	if (d->opts && d->opts[0].name) {
		fputs("\noptions:\n", f);
		for (size_t i = 0; d->opts[i].name; i++) {
			char left[96];
			opt_words(&d->opts[i], left, sizeof left);
			int own_line = strlen(left) > 22;   /* a long name has its text on the next lines */
			if (own_line)
				fprintf(f, "  %s\n", left);
			else
				fprintf(f, "  %-22s  ", left);
			wrap(f, d->opts[i].help, own_line ? 0 : 26, 26, 79);
		}
	}
	const char *more = d->more_fn ? d->more_fn() : d->more;
	if (more)
		fprintf(f, "\n%s\n", more);
}

int gv_opts_store(const char *cmd, const struct gv_opt *o, const char *value, void *base)
{
	char *field = (char *)base + o->off;
	long v;
	switch (o->type) {
	case GV_OPT_FLAG:
		*(int *)field = 1;
		return 0;
	case GV_OPT_STR:
		if (!value || !*value)
			return gv_usage_error(cmd, "option '--%s' needs a value", o->name);
		*(const char **)field = value;
		return 0;
	case GV_OPT_INT:
		if (!value || gv_parse_long(value, o->min, o->max, &v))
			return gv_usage_error(cmd, "option '--%s' takes a number from %ld to %ld, not '%s'", o->name,
					      o->min, o->max, value ? value : "");
		*(int *)field = (int)v;
		return 0;
	case GV_OPT_NONE:
	default:
		return 0;
	}
}

int gv_opt_max_age(const char *cmd, const char *value, int *days)
{
	long v;
	if (!value || gv_parse_long(value, 1, 100000, &v) < 0)
		return gv_usage_error(cmd, "--max-age '%s' is not a number of days from 1 to 100000", value ? value : "");
	*days = (int)v;
	return 0;
}

int gv_opt_refused(const char *cmd, int argc, char **argv, const struct option *lopts)
{
	const char *el = optind >= 1 && optind - 1 < argc ? argv[optind - 1] : "";
	/* getopt stops inside a group of short options ('-2+3') without moving on: that whole word */
	if (optopt > 0 && optind < argc && argv[optind][0] == '-' && argv[optind][1] != '-' &&
	    strchr(argv[optind] + 1, optopt))
		el = argv[optind];
	double v;
	if (!gv_parse_double(el, &v))
		return gv_usage_error(cmd, "'%s' is not an option, and no value here may be negative", el);
	const char *lname = el[0] == '-' && el[1] == '-' ? el + 2 : NULL;
	size_t n = lname ? strcspn(lname, "=") : 0;
	for (const struct option *o = lopts; lname && o && o->name; o++) {
		if (strlen(o->name) != n || strncmp(o->name, lname, n))
			continue;
		if (o->has_arg == required_argument && !lname[n])
			return gv_usage_error(cmd, "option '--%s' needs a value", o->name);
		if (o->has_arg == no_argument && lname[n])
			return gv_usage_error(cmd, "option '--%s' takes no value, not '%s'", o->name, lname + n + 1);
	}
	if (el[0] == '-' && el[1] && el[1] != '-' && !el[2] && optopt > 0) {
		for (const struct option *o = lopts; o && o->name; o++)
			if (o->val == optopt && o->has_arg == required_argument)
				return gv_usage_error(cmd, "option '%s' needs a value", el);
	}
	return gv_usage_error(cmd, "unknown option '%s'", el);
}

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
		opt_words(&d->opts[i], left, sizeof left);
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
	      ".TP\n.B \\-\\-version\nprint the version\n"
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
			opt_words(&d->opts[i], left, sizeof left);
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
