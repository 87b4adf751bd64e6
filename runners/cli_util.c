/*
 * cli_util.c - see cli.h: what every command calls, below them all (the
 * store's path, a usage error said the one way, an identity checked).
 * main.c dispatches to the commands; nothing here calls up into them.
 */
#include "runners/cli.h"
#include "common/util.h"
#include "common/ident.h"
#include "results/store.h"

#include <stdarg.h>
#include <stdio.h>

const char *gv_db_path(const struct gv_global *g)
{
	return g->db_path ? g->db_path : store_default_path();
}

int gv_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "gpuvet: %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fputs(" (see 'gpuvet ", stderr);
	fputs(cmd, stderr);
	fputs(" --help')\n", stderr);
	va_end(ap);
	return GV_EXIT_USAGE;
}

int gv_check_identity(const char *cmd, const char *opt, const char *value)
{
	const char *why = value ? ident_check(value) : NULL;
	if (!why)
		return 0;
	char shown[4 * IDENT_MAX + 16];
	ident_escape(value, shown, sizeof shown);
	return gv_usage_error(cmd, "%s '%s' %s (printable utf-8, at most %d bytes)", opt, shown, why,
			      IDENT_MAX);
}
