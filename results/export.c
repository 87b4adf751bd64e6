/*
 * export.c - the store's runs as JSON (an array of fingerprints, streamed
 * run by run) and CSV (one row per metric, streamed from one statement);
 * see export.h.  The command that writes them is runners/cmd_results.c.
 */
#include "results/export.h"
#include "results/store.h"
#include "results/jcanon.h"
#include "common/util.h"
#include "common/ident.h"
#include "common/real17.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * CSV as libcsv's csv_fwrite writes it (every cell quoted, quotes doubled),
 * into one growing line buffer: a fleet's export is millions of cells.
 */
static void csv_quote(struct jc_buf *b, const char *s, size_t n)
{
	jc_put(b, "\"", 1);
	for (const char *q; (q = memchr(s, '"', n)); n -= (size_t)(q + 1 - s), s = q + 1) {
		jc_put(b, s, (size_t)(q + 1 - s));
		jc_put(b, "\"", 1);
	}
	jc_put(b, s, n);
	jc_put(b, "\"", 1);
}

/*
 * A text cell.  One a spreadsheet would read as a formula (= + - @, tab,
 * CR first: names from --sku or an imported file) gets a leading single
 * quote, as OWASP recommends against CSV injection.
 */
static void csv_text_slow(struct jc_buf *b, const char *v, size_t n, int last)
{
	const char *s = v ? v : "";
	char *shown = NULL;
	/* a control character from an imported fingerprint would reach whatever shows the file: escaped */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			shown = gv_malloc(4 * n + 16);
			ident_escape(s, shown, 4 * n + 16);
			s = shown;
			n = strlen(shown);
			break;
		}
	if (ident_csv_formula(s)) {
		char *q = gv_asprintf("'%.*s", (int)n, s);
		csv_quote(b, q, n + 1);
		free(q);
	} else {
		csv_quote(b, s, n);
	}
	free(shown);
	jc_put(b, last ? "\n" : ",", 1);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CSV_SWAR 1
#else
#define CSV_SWAR 0   /* the first flagged byte would be the highest bit: byte by byte */
#endif

/*
 * Which of 8 bytes (little-endian) are a control character (< 0x20, 0x7f) or
 * a quote: a high bit per byte.  The lowest set bit is exact (a borrow only
 * flags bytes above a true one), so it marks the first such byte.
 */
static inline uint64_t csv_special8(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	uint64_t q = x ^ (ones * '"'), del = x ^ (ones * 0x7f);
	return ((x - ones * 0x20) & ~x & high) | ((q - ones) & ~q & high) | ((del - ones) & ~del & high);
}

/*
 * The same cell in one pass for text with no control character and no
 * formula start (every cell gpuvet itself stores): quoted, quotes doubled,
 * straight into the line; anything else goes to csv_text_slow.
 */
static void csv_text(struct jc_buf *b, const char *s, size_t n, int last)
{
	if (!s || (n && ident_csv_formula(s))) {
		csv_text_slow(b, s, n, last);
		return;
	}
	if (b->len + 2 * n + 4 > b->cap)
		jc_grow(b, 2 * n + 3);
	char *o = b->p + b->len;
	*o++ = '"';
	for (size_t i = 0; i < n;) {
		if (CSV_SWAR && i + 8 <= n) {   /* 8 bytes at a time up to the next quote (room: 2n+3 reserved, 2i+1 used) */
			uint64_t x, m;
			memcpy(&x, s + i, 8);
			memcpy(o, &x, 8);
			if (!(m = csv_special8(x))) {
				o += 8;
				i += 8;
				continue;
			}
			size_t k = (size_t)__builtin_ctzll(m) / 8;
			o += k;
			i += k;
		}
		unsigned char c = (unsigned char)s[i++];
		if (c < 0x20 || c == 0x7f) {
			csv_text_slow(b, s, n, last);
			return;
		}
		if (c == '"')
			*o++ = '"';
		*o++ = (char)c;
	}
	*o++ = '"';
	*o++ = last ? '\n' : ',';
	*o = 0;
	b->len = (size_t)(o - b->p);
}

/* A stored text cell: empty where the fingerprint would have had none (NULL, or not UTF-8). */
static void csv_field(struct jc_buf *b, const char *v, int last)
{
	/* printable ASCII without a quote (uuids, times, names): UTF-8, nothing to escape, one scan */
	const unsigned char *p = (const unsigned char *)(v ? v : "");
	while (*p >= 0x20 && *p < 0x7f && *p != '"')
		p++;
	size_t n = (size_t)((const char *)p - (v ? v : ""));
	if (v && !*p) {
		csv_text(b, v, n, last);
		return;
	}
	if (v && !ident_utf8_valid(v, strlen(v)))   /* what json_string() would refuse */
		v = NULL;
	csv_text(b, v, v ? strlen(v) : 0, last);
}

/* A number cell: never neutralised (-1 is the instance-level gpu); %.17g as the fingerprint's number. */
static void csv_int(struct jc_buf *b, long long v, int last)
{
	char buf[32], *p = buf + sizeof buf;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	*--p = last ? '\n' : ',';
	*--p = '"';
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	*--p = '"';
	jc_put(b, p, (size_t)(buf + sizeof buf - p));
}

static void csv_real(struct jc_buf *b, int has, double v, int last)
{
	char buf[REAL17_BUF + 3];
	int n = 1;
	buf[0] = '"';
	if (has)
		n += real17_print(v, buf + 1);
	buf[n++] = '"';
	buf[n++] = last ? '\n' : ',';
	jc_put(b, buf, (size_t)n);
}

/* Rows go out CSV_FLUSH bytes at a time, past stdio's 4 KiB buffer: one write() per 64 KiB. */
#define CSV_FLUSH (64 * 1024)

struct csv_walk {
	FILE *out;
	struct jc_buf line, params;   /* line: the rows not yet written */
};

static int csv_flush(struct csv_walk *w)
{
	size_t n = w->line.len;
	w->line.len = 0;
	return fwrite(w->line.p, 1, n, w->out) != n;
}

/* The params cell: the stored object in jansson's compact sorted form, as the fingerprint printed it. */
static void csv_params(struct csv_walk *w, const struct store_metric_row *m)
{
	w->params.len = 0;
	if (m->params && jcanon_sorted(m->params, m->params_len, &w->params) == 0 && w->params.p[0] == '{') {
		csv_text(&w->line, w->params.p, w->params.len, 1);
		return;
	}
	/* anything the fast path does not take: jansson, as store_load_fingerprint reads it */
	json_t *p = m->params ? json_loads(m->params, JSON_DECODE_ANY, NULL) : NULL;
	char *t = json_is_object(p) ? json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	csv_field(&w->line, t ? t : "{}", 1);
	free(t);
	json_decref(p);
}

static int csv_row(void *ud, const struct store_metric_row *m)
{
	struct csv_walk *w = ud;
	const struct store_run_row *r = &m->run;
	csv_int(&w->line, r->id, 0);
	csv_field(&w->line, r->uuid, 0);
	csv_field(&w->line, r->started_at, 0);
	csv_field(&w->line, r->status, 0);
	csv_field(&w->line, r->provider, 0);
	csv_field(&w->line, r->instance_type, 0);
	csv_field(&w->line, r->region, 0);
	csv_field(&w->line, r->gpu_model, 0);
	csv_int(&w->line, r->gpu_count, 0);
	csv_field(&w->line, m->bench, 0);
	csv_field(&w->line, m->name, 0);
	csv_int(&w->line, m->gpu, 0);
	csv_real(&w->line, m->has_value, m->value, 0);
	csv_field(&w->line, m->unit, 0);
	csv_params(w, m);
	return w->line.len >= CSV_FLUSH ? csv_flush(w) : 0;
}

/* One row per metric, runs in started order (or run_id alone): one statement, streamed. */
int export_csv(struct store *s, int64_t run_id, FILE *out)
{
	static const char *const header[] = { "run_id", "run_uuid", "started_at", "status", "provider",
					      "instance_type", "region", "gpu_model", "gpu_count", "bench",
					      "metric", "gpu", "value", "unit", "params" };
	struct csv_walk w = { .out = out };
	for (size_t i = 0; i < sizeof header / sizeof header[0]; i++)
		csv_field(&w.line, header[i], i + 1 == sizeof header / sizeof header[0]);
	int began = store_read_begin(s);
	int rc = store_each_metric_row(s, run_id, csv_row, &w);
	store_read_end(s, began);
	if (w.line.len && csv_flush(&w))   /* the rows made before a failed read go out, as they did */
		rc = -1;
	free(w.line.p);
	free(w.params.p);
	return rc || ferror(out) ? -1 : 0;
}

int export_json(struct store *s, const int64_t *ids, size_t n, FILE *out)
{
	/* one document: an array of fingerprints, streamed run by run */
	fputs("[", out);
	for (size_t i = 0; i < n; i++) {
		json_t *fp;
		if (store_load_fingerprint(s, ids[i], &fp))
			return -1;
		fputs(i ? ",\n" : "\n", out);
		json_dumpf(fp, out, JSON_COMPACT | JSON_ENSURE_ASCII);
		json_decref(fp);
	}
	fputs("\n]\n", out);
	return 0;
}


