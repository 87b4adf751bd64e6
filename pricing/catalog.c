/* catalog.c - see catalog.h */
#include "pricing/catalog.h"
#include "pricing/catalog_import.h"
#include "pricing/csvrows.h"
#include "pricing/fx.h"
#include "common/util.h"
#include "results/store.h"

#include <sqlite3.h>
#include "common/ident.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- gpuvet's CSV format ---- */

enum col {
	C_PROVIDER, C_INSTANCE_TYPE, C_REGION, C_ZONE, C_GPU_MODEL, C_GPU_COUNT, C_GPU_MEMORY,
	C_VCPUS, C_MEMORY, C_MARKET, C_TERM, C_UPFRONT, C_PRICE, C_UNIT, C_CURRENCY, C_SOURCE,
	C_SOURCE_VERSION, C_CAPTURED_AT, C_COUNT
};

enum col_type { T_STR, T_NUM, T_INT };

/* Options as data: the column table drives the header check, the parse and the errors. */
static const struct col_def {
	const char *name;
	int required;
	enum col_type type;
	size_t off;   /* offset in struct price_rec */
	size_t size;  /* buffer size for strings */
} cols[C_COUNT] = {
#define S(f) T_STR, offsetof(struct price_rec, f), sizeof(((struct price_rec *)0)->f)
#define N(f) T_NUM, offsetof(struct price_rec, f), 0
	[C_PROVIDER] = { "provider", 1, S(provider) },
	[C_INSTANCE_TYPE] = { "instance_type", 1, S(instance_type) },
	[C_REGION] = { "region", 0, S(region) },
	[C_ZONE] = { "zone", 0, S(zone) },
	[C_GPU_MODEL] = { "gpu_model", 0, S(gpu_model) },
	[C_GPU_COUNT] = { "gpu_count", 0, N(gpu_count) },
	[C_GPU_MEMORY] = { "gpu_memory_gib", 0, N(gpu_memory_gib) },
	[C_VCPUS] = { "vcpus", 0, T_INT, offsetof(struct price_rec, vcpus), 0 },
	[C_MEMORY] = { "memory_gib", 0, N(memory_gib) },
	[C_MARKET] = { "market", 1, S(market) },
	[C_TERM] = { "term", 0, S(term) },
	[C_UPFRONT] = { "upfront", 0, N(upfront) },
	[C_PRICE] = { "price", 1, N(price) },
	[C_UNIT] = { "unit", 1, S(unit) },
	[C_CURRENCY] = { "currency", 1, S(currency) },
	[C_SOURCE] = { "source", 0, S(source) },
	[C_SOURCE_VERSION] = { "source_version", 0, S(source_version) },
	[C_CAPTURED_AT] = { "captured_at", 0, S(captured_at) },
#undef S
#undef N
};

struct catalog_parser {
	struct csvrows *rows;
	char *name;
	char *default_source;
	char *default_captured_at;
	catalog_row_fn fn;
	void *ud;
	int have_header;
	size_t nheader;
	int map[C_COUNT];   /* column index in the file, -1 absent */
	long nrows;
	int failed;
	char err[512];
};

void catalog_parser_fail(struct catalog_parser *p, long line, const char *fmt, ...)
{
	char where[320];
	va_list ap;
	if (line > 0)
		snprintf(where, sizeof where, "catalog '%s' line %ld", p->name, line);
	else
		snprintf(where, sizeof where, "catalog '%s'", p->name);
	va_start(ap, fmt);
	csvrows_first_error(&p->failed, p->err, sizeof p->err, where, fmt, ap);
	va_end(ap);
}

/* Copies a field trimmed of surrounding blanks; rejects control bytes and overlong text. */
static const char *take_str(char *dst, size_t size, const char *s, size_t len)
{
	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return "contains a control character";
	if (!ident_utf8_valid(s, len))
		return "is not valid utf-8";
	if (len >= size)
		return "is too long";
	memcpy(dst, s, len);
	dst[len] = '\0';
	return NULL;
}

static int header_row(struct catalog_parser *p, char **f, const size_t *lens, size_t n, long line)
{
	for (int c = 0; c < C_COUNT; c++)
		p->map[c] = -1;
	for (size_t i = 0; i < n; i++) {
		char name[64];
		if (take_str(name, sizeof name, f[i], lens[i]))
			continue; /* an unknown, odd column: ignored like any unknown one */
		for (char *q = name; *q; q++)
			*q = (char)tolower((unsigned char)*q);
		for (int c = 0; c < C_COUNT; c++) {
			if (strcmp(name, cols[c].name))
				continue;
			if (p->map[c] >= 0) {
				catalog_parser_fail(p, line, "column '%s' appears twice", cols[c].name);
				return -1;
			}
			p->map[c] = (int)i;
		}
	}
	for (int c = 0; c < C_COUNT; c++)
		if (cols[c].required && p->map[c] < 0) {
			catalog_parser_fail(p, line, "missing column '%s' in the header", cols[c].name);
			return -1;
		}
	p->nheader = n;
	p->have_header = 1;
	return 0;
}

static int data_row(struct catalog_parser *p, char **f, const size_t *lens, size_t n, long line)
{
	struct price_rec r;
	char buf[256];

	if (n != p->nheader) {
		catalog_parser_fail(p, line, "expected %zu fields as in the header, found %zu",
				    p->nheader, n);
		return -1;
	}
	price_rec_init(&r);
	for (int c = 0; c < C_COUNT; c++) {
		int i = p->map[c];
		if (i < 0)
			continue;
		const struct col_def *d = &cols[c];
		char *dst = (char *)&r + d->off;
		if (d->type == T_STR) {
			const char *why = take_str(dst, d->size, f[i], lens[i]);
			if (why) {
				catalog_parser_fail(p, line, "%s %s", d->name, why);
				return -1;
			}
			continue;
		}
		char num[64];
		if (take_str(num, sizeof num, f[i], lens[i])) {
			catalog_parser_fail(p, line, "%s is not a number", d->name);
			return -1;
		}
		if (!num[0])
			continue; /* unknown */

		if (d->type == T_INT) {
			long v;
			if (gv_parse_long(num, 0, 1L << 30, &v) < 0) {
				catalog_parser_fail(p, line, "%s '%s' is not a non-negative integer", d->name, num);
				return -1;
			}
			memcpy(dst, &v, sizeof v);
		} else {
			double v;
			if (gv_parse_double(num, &v) < 0) {   /* the one parser: decimal, never hex, inf or nan */
				catalog_parser_fail(p, line, "%s '%s' is not a decimal number", d->name, num);
				return -1;
			}
			if (v < 0) {
				catalog_parser_fail(p, line, "%s '%s' is negative", d->name, num);
				return -1;
			}
			memcpy(dst, &v, sizeof v);
		}
	}
	if (!r.source[0])
		gv_strlcpy(r.source, p->default_source, sizeof r.source);
	if (!r.captured_at[0])
		gv_strlcpy(r.captured_at, p->default_captured_at, sizeof r.captured_at);
	const char *why = price_rec_check(&r, buf, sizeof buf);
	if (why) {
		catalog_parser_fail(p, line, "%s", why);
		return -1;
	}
	p->nrows++;
	if (p->fn(p->ud, &r, line) != 0) {
		catalog_parser_fail(p, line, "rejected");
		return -1;
	}
	return 0;
}

static int on_row(void *ud, char **f, const size_t *lens, size_t n, long line)
{
	struct catalog_parser *p = ud;
	if (p->failed)
		return -1;
	if (n == 0 || (n == 1 && lens[0] == 0))
		return 0;
	/* a byte-order mark before the first line (spreadsheets write one) */
	if (line <= 1 && lens[0] >= 3 && !memcmp(f[0], "\xef\xbb\xbf", 3)) {
		size_t *l2 = gv_malloc(n * sizeof *l2);
		memcpy(l2, lens, n * sizeof *l2);
		l2[0] -= 3;
		f[0] += 3;
		int rc = on_row(ud, f, l2, n, line + 1000000000L); /* once: the mark is gone */
		free(l2);
		return rc;
	}
	if (line > 1000000000L)
		line -= 1000000000L;
	/* comments: first field starting with '#' (leading blanks allowed) */
	const char *s = f[0];
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '#')
		return 0;
	return p->have_header ? data_row(p, f, lens, n, line) : header_row(p, f, lens, n, line);
}

struct catalog_parser *catalog_parser_new(const char *name, const char *default_source,
					  const char *default_captured_at, catalog_row_fn fn, void *ud)
{
	struct catalog_parser *p = gv_calloc(1, sizeof *p);
	p->rows = csvrows_new(on_row, p);
	if (!p->rows) {
		free(p);
		return NULL;
	}
	p->name = gv_strdup(name);
	p->default_source = gv_strdup(default_source ? default_source : "");
	p->default_captured_at = gv_strdup(default_captured_at ? default_captured_at : "");
	p->fn = fn;
	p->ud = ud;
	return p;
}

void catalog_parser_free(struct catalog_parser *p)
{
	if (!p)
		return;
	csvrows_free(p->rows);
	free(p->name);
	free(p->default_source);
	free(p->default_captured_at);
	free(p);
}

int catalog_parser_feed(struct catalog_parser *p, const void *buf, size_t len)
{
	return csvrows_step(p->rows, buf, len, &p->failed, p->err, sizeof p->err, "catalog", p->name);
}

int catalog_parser_finish(struct catalog_parser *p)
{
	if (csvrows_step(p->rows, NULL, 0, &p->failed, p->err, sizeof p->err, "catalog", p->name) < 0)
		return -1;
	if (!p->have_header) {
		catalog_parser_fail(p, 0, "empty file, no header row");
		return -1;
	}
	return 0;
}

const char *catalog_parser_error(const struct catalog_parser *p) { return p->failed ? p->err : ""; }
long catalog_parser_rows(const struct catalog_parser *p) { return p->nrows; }

/* ---- loading into the store ---- */

struct load_source {
	char *source;
	char *provider;
	long rows;
};

struct catalog_load {
	sqlite3 *db;
	sqlite3_stmt *ins, *del, *fx;
	struct load_source *src;
	size_t nsrc;
	char **fx_ok;
	size_t nfx;
	long rows;
	int any_currency;  /* shipped catalogs: keep the source's currency even without a stored rate */
};

static void db_err(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	char msg[256];
	const char *file = sqlite3_db_filename(db, "main");
	snprintf(err, errlen, "cannot %s in the store '%s': %s", what, file && *file ? file : "(memory)",
		 store_sqlite_msg(db, msg, sizeof msg));
}

static const char ins_sql[] =
	"INSERT INTO prices (provider, instance_type, region, zone, gpu_model, gpu_count,"
	" gpu_memory_gib, vcpus, memory_gib, market, term, upfront, price, unit, currency, source,"
	" source_version, captured_at) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18)"
	" ON CONFLICT (provider, instance_type, region, zone, market, term, source) DO UPDATE SET"
	" gpu_model=excluded.gpu_model, gpu_count=excluded.gpu_count,"
	" gpu_memory_gib=excluded.gpu_memory_gib, vcpus=excluded.vcpus, memory_gib=excluded.memory_gib,"
	" upfront=excluded.upfront, price=excluded.price, unit=excluded.unit,"
	" currency=excluded.currency, source_version=excluded.source_version,"
	" captured_at=excluded.captured_at";

int catalog_load_begin(sqlite3 *db, struct catalog_load **out, char *err, size_t errlen)
{
	struct catalog_load *l = gv_calloc(1, sizeof *l);
	l->db = db;
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		db_err(db, "start a transaction", err, errlen);
		free(l);
		return -1;
	}
	if (sqlite3_prepare_v2(db, ins_sql, -1, &l->ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "DELETE FROM prices WHERE source = ?1", -1, &l->del, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT 1 FROM fx_rates WHERE currency = ?1", -1, &l->fx, NULL) != SQLITE_OK) {
		db_err(db, "prepare the price statements", err, errlen);
		catalog_load_abort(l);
		return -1;
	}
	*out = l;
	return 0;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_num_or_null(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

static int currency_known(struct catalog_load *l, const char *cur)
{
	if (!strcmp(cur, "USD"))
		return 1;
	for (size_t i = 0; i < l->nfx; i++)
		if (!strcmp(l->fx_ok[i], cur))
			return 1;
	sqlite3_reset(l->fx);
	sqlite3_bind_text(l->fx, 1, cur, -1, SQLITE_TRANSIENT);
	int ok = sqlite3_step(l->fx) == SQLITE_ROW;
	sqlite3_reset(l->fx);
	if (ok) {
		l->fx_ok = gv_realloc(l->fx_ok, (l->nfx + 1) * sizeof *l->fx_ok);
		l->fx_ok[l->nfx++] = gv_strdup(cur);
	}
	return ok;
}

int catalog_load_put(struct catalog_load *l, const struct price_rec *r, char *err, size_t errlen)
{
	char buf[256];
	const char *why = price_rec_check(r, buf, sizeof buf);
	if (why) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (!l->any_currency && !currency_known(l, r->currency)) {
		snprintf(err, errlen,
			 "unknown currency '%s' (no exchange rate stored: gpuvet prices fx %s RATE)",
			 r->currency, r->currency);
		return -1;
	}
	struct load_source *s = NULL;
	for (size_t i = 0; i < l->nsrc; i++)
		if (!strcmp(l->src[i].source, r->source))
			s = &l->src[i];
	if (!s) {
		/* first row of this source: its previous rows go, inside the transaction */
		sqlite3_reset(l->del);
		sqlite3_bind_text(l->del, 1, r->source, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(l->del) != SQLITE_DONE) {
			db_err(l->db, "replace the prices of a source", err, errlen);
			sqlite3_reset(l->del);
			return -1;
		}
		sqlite3_reset(l->del);
		l->src = gv_realloc(l->src, (l->nsrc + 1) * sizeof *l->src);
		s = &l->src[l->nsrc++];
		s->source = gv_strdup(r->source);
		s->provider = gv_strdup(r->provider);
		s->rows = 0;
	}
	sqlite3_stmt *st = l->ins;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_bind_text(st, 1, r->provider, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, r->instance_type, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, r->region, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, r->zone, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 5, r->gpu_model);
	bind_num_or_null(st, 6, r->gpu_count);
	bind_num_or_null(st, 7, r->gpu_memory_gib);
	if (r->vcpus >= 0)
		sqlite3_bind_int64(st, 8, r->vcpus);
	bind_num_or_null(st, 9, r->memory_gib);
	sqlite3_bind_text(st, 10, r->market, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 11, r->term, -1, SQLITE_TRANSIENT);
	bind_num_or_null(st, 12, r->upfront);
	sqlite3_bind_double(st, 13, r->price);
	sqlite3_bind_text(st, 14, r->unit, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 15, r->currency, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 16, r->source, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 17, r->source_version);
	sqlite3_bind_text(st, 18, r->captured_at, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_err(l->db, "store a price", err, errlen);
		sqlite3_reset(st);
		return -1;
	}
	sqlite3_reset(st);
	s->rows++;
	l->rows++;
	return 0;
}

static void now_iso(char *buf, size_t size)
{
	gv_iso8601((long)time(NULL), buf, size);
}

static int upsert_source(sqlite3 *db, const char *source, const char *provider, const char *status,
			 const char *message, long rows)
{
	static const char sql[] =
		"INSERT INTO price_sources (source, provider, fetched_at, status, message, rows)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (source) DO UPDATE SET"
		" provider = COALESCE(excluded.provider, provider), fetched_at = excluded.fetched_at,"
		" status = excluded.status, message = excluded.message,"
		" rows = COALESCE(excluded.rows, rows)";
	sqlite3_stmt *st;
	char now[32];
	now_iso(now, sizeof now);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, source, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 2, provider);
	sqlite3_bind_text(st, 3, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, status, -1, SQLITE_TRANSIENT);
	/* the last guard: a stored message never holds a credential, whoever built it */
	char safe[1024];
	bind_text_or_null(st, 5, message ? gv_redact(message, safe, sizeof safe) : NULL);
	if (rows >= 0)
		sqlite3_bind_int64(st, 6, rows);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
	sqlite3_finalize(st);
	return rc;
}

static void load_free(struct catalog_load *l)
{
	sqlite3_finalize(l->ins);
	sqlite3_finalize(l->del);
	sqlite3_finalize(l->fx);
	for (size_t i = 0; i < l->nsrc; i++) {
		free(l->src[i].source);
		free(l->src[i].provider);
	}
	free(l->src);
	for (size_t i = 0; i < l->nfx; i++)
		free(l->fx_ok[i]);
	free(l->fx_ok);
	free(l);
}

int catalog_load_commit(struct catalog_load *l, const char *provider, const char *message,
			char *err, size_t errlen)
{
	for (size_t i = 0; i < l->nsrc; i++)
		if (upsert_source(l->db, l->src[i].source, provider ? provider : l->src[i].provider, "ok",
				  message, l->src[i].rows) < 0) {
			db_err(l->db, "record the price source", err, errlen);
			catalog_load_abort(l);
			return -1;
		}
	sqlite3_finalize(l->ins);
	sqlite3_finalize(l->del);
	sqlite3_finalize(l->fx);
	l->ins = l->del = l->fx = NULL;
	if (sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		db_err(l->db, "commit the prices", err, errlen);
		catalog_load_abort(l);
		return -1;
	}
	load_free(l);
	return 0;
}

void catalog_load_abort(struct catalog_load *l)
{
	if (!l)
		return;
	sqlite3_finalize(l->ins);
	sqlite3_finalize(l->del);
	sqlite3_finalize(l->fx);
	l->ins = l->del = l->fx = NULL;
	sqlite3_exec(l->db, "ROLLBACK", NULL, NULL, NULL);
	load_free(l);
}

long catalog_load_rows(const struct catalog_load *l) { return l->rows; }

void catalog_note_failure(sqlite3 *db, const char *source, const char *provider, const char *message)
{
	if (upsert_source(db, source, provider, "failed", message, -1) < 0)
		gv_debug("cannot record the failure of '%s': %s", source, sqlite3_errmsg(db));
}

/* ---- import ---- */

struct import_ctx {
	struct catalog_load *load;
	struct catalog_parser *p;
	struct import_checks *checks;   /* a user's file (catalog_import.h), else NULL */
};

static int import_row(void *ud, const struct price_rec *r, long line)
{
	struct import_ctx *c = ud;
	char err[320];
	struct price_rec whole = *r;
	if (c->checks)
		import_checks_complete(c->checks, &whole);
	r = &whole;
	if ((c->checks && import_checks_row(c->checks, r, line, err, sizeof err)) ||
	    catalog_load_put(c->load, r, err, sizeof err) < 0 ||
	    (c->checks && import_checks_stored(c->checks, r, line, err, sizeof err))) {
		catalog_parser_fail(c->p, line, "%s", err);
		return -1;
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* strerror with a lowercase first letter, as the project's messages are */
static void lower_strerror(int e, char *buf, size_t size)
{
	snprintf(buf, size, "%s", e == ENOENT ? "no such file" : strerror(e));
	buf[0] = (char)tolower((unsigned char)buf[0]);
}

typedef int (*chunk_fn)(void *ud, struct catalog_parser *p);

static int run_import(sqlite3 *db, const char *name, const char *default_source, const char *message,
		      int allow_empty, int any_currency, chunk_fn feed, void *feed_ud, long *rows,
		      char *err, size_t errlen)
{
	struct import_ctx c = { 0 };
	char now[32];
	now_iso(now, sizeof now);
	if (catalog_load_begin(db, &c.load, err, errlen) < 0)
		return -1;
	c.load->any_currency = any_currency;
	c.p = catalog_parser_new(name, default_source, now, import_row, &c);
	if (!allow_empty)   /* a user's file (catalog_import_file): one price per key, the latest import wins */
		c.checks = import_checks_new(db, name);
	if (!c.p || (!allow_empty && !c.checks)) {
		catalog_parser_free(c.p);
		snprintf(err, errlen, "out of memory");
		catalog_load_abort(c.load);
		return -1;
	}
	int rc = feed(feed_ud, c.p);
	if (rc == 0)
		rc = catalog_parser_finish(c.p);
	if (rc == 0 && !allow_empty && catalog_load_rows(c.load) == 0) {
		catalog_parser_fail(c.p, 0, "no price rows");
		rc = -1;
	}
	if (rc < 0) {
		if (catalog_parser_error(c.p)[0])
			snprintf(err, errlen, "%s", catalog_parser_error(c.p));
		else if (!err[0])
			snprintf(err, errlen, "catalog '%s': cannot be read", name);
		catalog_parser_free(c.p);
		import_checks_free(c.checks);
		catalog_load_abort(c.load);
		return -1;
	}
	long n = catalog_load_rows(c.load);
	catalog_parser_free(c.p);
	import_checks_free(c.checks);
	if (catalog_load_commit(c.load, NULL, message, err, errlen) < 0)
		return -1;
	if (rows)
		*rows = n;
	return 0;
}

struct file_feed {
	int fd;
	const char *path;
	char *err;
	size_t errlen;
};

static int feed_file(void *ud, struct catalog_parser *p)
{
	struct file_feed *f = ud;
	enum { CHUNK = 1 << 16 };
	char *buf = gv_malloc(CHUNK);
	int rc = 0;
	for (;;) {
		ssize_t n = read(f->fd, buf, CHUNK);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			char e[128];
			lower_strerror(errno, e, sizeof e);
			snprintf(f->err, f->errlen, "cannot read catalog '%s': %s", f->path, e);
			rc = -1;
			break;
		}
		if (n == 0)
			break;
		if (catalog_parser_feed(p, buf, (size_t)n) < 0) {
			rc = -1;
			break;
		}
	}
	free(buf);
	return rc;
}

int catalog_import_file(sqlite3 *db, const char *path, const char *default_source, long *rows,
			char *err, size_t errlen)
{
	char src[160];
	err[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		char e[128];
		lower_strerror(errno, e, sizeof e);
		snprintf(err, errlen, "cannot open catalog '%s': %s", path, e);
		return -1;
	}
	if (!default_source) {
		snprintf(src, sizeof src, "import:%.120s", base_name(path));
		default_source = src;
	}
	struct file_feed f = { fd, path, err, errlen };
	int rc = run_import(db, path, default_source, "imported", 0, 0, feed_file, &f, rows, err, errlen);
	close(fd);
	return rc;
}

struct buf_feed {
	const char *buf;
	size_t len;
};

static int feed_buf(void *ud, struct catalog_parser *p)
{
	struct buf_feed *b = ud;
	return catalog_parser_feed(p, b->buf, b->len);
}

int catalog_import_buffer(sqlite3 *db, const char *name, const void *buf, size_t len,
			  const char *default_source, const char *message, long *rows,
			  char *err, size_t errlen)
{
	struct buf_feed b = { buf, len };
	err[0] = '\0';
	return run_import(db, name, default_source, message, 1, 0, feed_buf, &b, rows, err, errlen);
}

/*
 * A shipped catalog keeps the currency its source quotes (Alibaba's list
 * prices are in CNY) whether or not a rate for it is stored: the shipped
 * rates (fx.csv) cover the shipped catalogs, and a row whose currency has
 * no rate is listed and ranked marked "no rate".  Imports and fetches
 * still refuse an unknown currency.
 */
static int import_shipped(sqlite3 *db, const char *name, const void *buf, size_t len,
			  const char *source, const char *message, char *err, size_t errlen)
{
	struct buf_feed b = { buf, len };
	err[0] = '\0';
	return run_import(db, name, source, message, 1, 1, feed_buf, &b, NULL, err, errlen);
}

/* ---- shipped catalogs ---- */

static void fnv64_hex(const char *s, size_t n, char out[24])
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	snprintf(out, 24, "fnv64:%016llx", (unsigned long long)h);
}

/* 1 when the store holds this shipped file at this version (tag) already, 0 not, -1 error */
static int shipped_same(sqlite3 *db, const char *source, const char *tag, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int same = 0;
	if (sqlite3_prepare_v2(db, "SELECT message FROM price_sources WHERE source = ?1 AND status = 'ok'",
			       -1, &st, NULL) != SQLITE_OK) {
		db_err(db, "read the price sources", err, errlen);
		return -1;
	}
	sqlite3_bind_text(st, 1, source, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *m = sqlite3_column_text(st, 0);
		same = m && !strcmp((const char *)m, tag);
	}
	sqlite3_finalize(st);
	return same;
}

struct fx_load {
	sqlite3 *db;
	char *err;
	size_t errlen;
};

static int fx_load_row(void *ud, const char *currency, double usd_per_unit, const char *captured_at,
		       const char *source)
{
	struct fx_load *l = ud;
	return fx_set_shipped(l->db, currency, usd_per_unit, captured_at, source, l->err, l->errlen);
}

/*
 * The shipped exchange rates (pricing/catalog/fx.csv), in one transaction
 * with their price_sources row "catalog:fx"; a user's rate is kept.
 */
static int ensure_shipped_fx(sqlite3 *db, int force, char *err, size_t errlen)
{
	const struct catalog_shipped *c = &catalog_shipped_fx;
	char tag[24], rerr[256] = "";
	long rows = 0;
	fnv64_hex(c->data, (size_t)(c->end - c->data), tag);
	if (!force) {
		int same = shipped_same(db, "catalog:fx", tag, err, errlen);
		if (same)
			return same < 0 ? -1 : 0;
	}
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		db_err(db, "start a transaction", err, errlen);
		return -1;
	}
	struct fx_load l = { db, rerr, sizeof rerr };
	if (fx_parse_csv("pricing/catalog/fx.csv", c->data, (size_t)(c->end - c->data), fx_load_row, &l, &rows,
			 err, errlen) < 0 ||
	    upsert_source(db, "catalog:fx", NULL, "ok", tag, rows) < 0 ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		if (!err[0])
			snprintf(err, errlen, "%s", rerr[0] ? rerr : "cannot store the shipped exchange rates");
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

int catalog_shipped_current(sqlite3 *db)
{
	char tag[24], err[256];
	fnv64_hex(catalog_shipped_fx.data, (size_t)(catalog_shipped_fx.end - catalog_shipped_fx.data), tag);
	if (shipped_same(db, "catalog:fx", tag, err, sizeof err) != 1)
		return 0;
	for (size_t i = 0; i < catalog_shipped_count; i++) {
		const struct catalog_shipped *c = &catalog_shipped[i];
		char source[64];
		snprintf(source, sizeof source, "catalog:%s", c->name);
		fnv64_hex(c->data, (size_t)(c->end - c->data), tag);
		if (shipped_same(db, source, tag, err, sizeof err) != 1)
			return 0;
	}
	return 1;
}

int catalog_ensure_shipped(sqlite3 *db, int force, int *loaded, char *err, size_t errlen)
{
	int n = 0;
	if (ensure_shipped_fx(db, force, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < catalog_shipped_count; i++) {
		const struct catalog_shipped *c = &catalog_shipped[i];
		char source[64], tag[24], name[96];
		snprintf(source, sizeof source, "catalog:%s", c->name);
		fnv64_hex(c->data, (size_t)(c->end - c->data), tag);
		if (!force) {
			int same = shipped_same(db, source, tag, err, errlen);
			if (same < 0)
				return -1;
			if (same)
				continue;
		}
		snprintf(name, sizeof name, "pricing/catalog/%s", c->file);
		if (import_shipped(db, name, c->data, (size_t)(c->end - c->data), source, tag, err, errlen) < 0)
			return -1;
		n++;
	}
	if (loaded)
		*loaded = n;
	return 0;
}
