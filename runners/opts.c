/*
 * opts.c - the commands' option tables as getopt_long tables, --help, and
 * the option helpers every command calls (opts.h).  The man page and
 * docs/options.md, from every command's table, are manual.c's, above.
 */
#include "runners/opts.h"
#include "runners/cli.h"
#include "common/util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

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

void gv_opt_words(const struct gv_opt *o, char *buf, size_t len)
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
			gv_opt_words(&d->opts[i], left, sizeof left);
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
