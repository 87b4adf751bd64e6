/* accept_table.c - see accept_table.h. */
#include "runners/accept_table.h"
#include "common/ident.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TABLE_WIDTH 160   /* the terminal tables' width (docs/options.md, "one screen wide") */

static const char *jstr(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

/* "411.6 TFLOP/s": four significant digits, as the verdict's sentence prints them */
static void num_unit(const json_t *e, const char *key, char *buf, size_t size)
{
	const json_t *v = json_object_get(e, key);
	if (!json_is_number(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.4g %s", json_number_value(v), jstr(e, "unit"));
}

/* The threshold's source without what the table says already ("reference: " before the reference). */
static const char *source_of(const json_t *e)
{
	const char *s = jstr(e, "source");
	if (!strncmp(s, "reference: ", 11))
		s += 11;
	return *s ? s : *jstr(e, "reason") ? jstr(e, "reason") : "-";
}

static void row(FILE *out, const char *result, const json_t *e)
{
	char check[64], gpu[16], measured[48], needed[48], shown[512];
	const json_t *g = json_object_get(e, "gpu");
	int is_flag = json_object_get(e, "flag") != NULL;
	size_t room;

	snprintf(check, sizeof check, "%s%s", is_flag ? "flag " : "", is_flag ? jstr(e, "flag") : jstr(e, "metric"));
	if (!*check)
		snprintf(check, sizeof check, "a GPU");
	if (json_is_integer(g) && json_integer_value(g) >= 0)
		snprintf(gpu, sizeof gpu, "%lld", (long long)json_integer_value(g));
	else
		snprintf(gpu, sizeof gpu, "all");
	if (!strcmp(result, "NOT MEASURED")) {
		snprintf(measured, sizeof measured, "-");
		snprintf(needed, sizeof needed, "measured");
	} else if (is_flag) {
		snprintf(measured, sizeof measured, "%s", strcmp(result, "PASS") ? jstr(e, "severity") : "not raised");
		snprintf(needed, sizeof needed, "%s", strcmp(result, "TOLERATED") ? "not raised" : "tolerated by name");
	} else if (!strcmp(jstr(e, "kind"), "bench")) {
		snprintf(measured, sizeof measured, "bench failed");
		snprintf(needed, sizeof needed, "bench completes");
	} else {
		char t[40];
		num_unit(e, "value", measured, sizeof measured);
		num_unit(e, "threshold", t, sizeof t);
		snprintf(needed, sizeof needed, "%s %s", jstr(e, "op"), t);
	}
	ident_escape(strcmp(result, "TOLERATED") ? source_of(e) : jstr(e, "reason"), shown, sizeof shown);
	room = TABLE_WIDTH - (13 + 29 + 4 + 17 + 20);
	if (strlen(shown) > room)   /* the whole text: accept --json, and the lines above the table */
		memcpy(shown + room - 3, "...", 4);
	/* a stored run's strings may hold terminal escapes (an import): each cell made safe */
	char c_s[128], m_s[96], n_s[96];
	ident_escape(check, c_s, sizeof c_s);
	ident_escape(measured, m_s, sizeof m_s);
	ident_escape(needed, n_s, sizeof n_s);
	fprintf(out, "%-12s %-28s %-3s %-16s %-19s %s\n", result, c_s, gpu, m_s, n_s, shown);
}

void accept_table_print(const json_t *detail, FILE *out)
{
	static const struct { const char *key, *result; } parts[] = {
		{ "failed", "FAIL" }, { "unmeasurable", "NOT MEASURED" }, { "tolerated", "TOLERATED" }, { "passed", "PASS" },
	};
	size_t n = 0, i;
	const json_t *e;

	for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++)
		n += json_array_size(json_object_get(detail, parts[p].key));
	if (!n)
		return;
	fprintf(out, "\n%-12s %-28s %-3s %-16s %-19s %s\n", "RESULT", "CHECK", "GPU", "MEASURED", "NEEDED",
		"THRESHOLD SOURCE, OR WHY NOT MEASURED");
	for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++)
		json_array_foreach(json_object_get(detail, parts[p].key), i, e)
			row(out, parts[p].result, e);
}

const json_t *accept_table_newest(const json_t *fp, const char *digest)
{
	const json_t *vs = json_object_get(fp, "verdicts");
	for (size_t i = json_array_size(vs); i-- > 0;) {   /* oldest first, as stored: the last of it is newest */
		const json_t *v = json_array_get(vs, i);
		if (!json_is_true(json_object_get(v, "imported")) && !strcmp(jstr(v, "policy_digest"), digest))
			return json_object_get(v, "detail");
	}
	return NULL;
}
