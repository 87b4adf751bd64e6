/*
 * cli_util.c - see cli.h: what every command calls, below them all (the
 * store's path, a usage error said the one way, an identity checked, the
 * unpriced types cost and rank list under their tables).
 * main.c dispatches to the commands; nothing here calls up into them.
 */
#include "runners/cli.h"
#include "common/util.h"
#include "common/ident.h"
#include "results/store.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The entry's field as a terminal may show it (stored names come from imported price files). */
static const char *shown(const json_t *e, const char *k, char *buf, size_t size)
{
	const char *s = json_string_value(json_object_get(e, k));
	ident_escape(s ? s : "", buf, size);
	return buf;
}

static int same_field(const json_t *a, const json_t *b, const char *k)
{
	const char *x = json_string_value(json_object_get(a, k)), *y = json_string_value(json_object_get(b, k));
	return !strcmp(x ? x : "", y ? y : "");
}

size_t gv_print_unpriced(const json_t *list, size_t i)
{
	const json_t *r = json_array_get(list, i);
	int est = json_is_true(json_object_get(r, "estimate"));
	size_t k = i + 1;
	while (k < json_array_size(list) && same_field(json_array_get(list, k), r, "provider") &&
	       same_field(json_array_get(list, k), r, "why") &&
	       json_is_true(json_object_get(json_array_get(list, k), "estimate")) == est)
		k++;
	char p[4 * IDENT_MAX + 16], t[4 * IDENT_MAX + 16], why[2048];
	/* an entry without "estimate" (rank's unranked types) is neither: no kind said */
	const char *kind = est ? "est. " : json_object_get(r, "estimate") ? "measured " : "";
	shown(r, "provider", p, sizeof p);
	shown(r, "instance_type", t, sizeof t);
	shown(r, "why", why, sizeof why);
	char *line;
	if (k - i == 1)
		line = gv_asprintf("  %s %s%s%.*s%s: %s", p, t, *kind ? " (" : "", (int)(*kind ? strlen(kind) - 1 : 0), kind,
				   *kind ? ")" : "", why);
	else
		line = gv_asprintf("  %s, %zu types (%s%s...): %s", p, k - i, kind, t, why);
	gv_table_wrap(line, 4);
	free(line);
	return k;
}

void gv_table_line(const char *line, int wide)
{
	size_t n = strlen(line), cut = GV_TABLE_WIDTH - 3;
	if (wide || n <= GV_TABLE_WIDTH) {
		printf("%s\n", line);
		return;
	}
	while (cut > 0 && ((unsigned char)line[cut] & 0xC0) == 0x80)   /* never inside a UTF-8 character */
		cut--;
	printf("%.*s...\n", (int)cut, line);
}

void gv_table_wrap(const char *text, int indent)
{
	const char *p = text, *nl;
	int first = 1;
	size_t width = GV_TABLE_WIDTH;
	while ((nl = strchr(p, '\n')) && (size_t)(nl - p) <= width) {
		printf("%*s%.*s\n", first ? 0 : indent, "", (int)(nl - p), p);
		p = nl + 1;
	}
	while (strlen(p) > width) {
		const char *sp = p + width;
		while (sp > p && *sp != ' ')
			sp--;
		if (sp == p)
			break;
		printf("%*s%.*s\n", first ? 0 : indent, "", (int)(sp - p), p);
		p = sp + 1;
		if (first)
			width -= (size_t)indent;
		first = 0;
	}
	printf("%*s%s\n", first ? 0 : indent, "", p);
}

void gv_table_note(const char *text)
{
	gv_table_wrap(text, 0);
}
