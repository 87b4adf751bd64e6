/* csvrows.c - see csvrows.h */
#include "pricing/csvrows.h"
#include "runners/util.h"

#include <csv.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct csvrows {
	struct csv_parser p;
	csvrows_row_fn fn;
	void *ud;
	char *needle;
	size_t needle_len;
	char *carry;            /* a line cut by a chunk boundary */
	size_t carry_len, carry_cap;
	char *arena;            /* the fields of the record being parsed, NUL-separated */
	size_t arena_len, arena_cap;
	size_t *offs, *lens;
	char **ptrs;
	size_t nfields, fields_cap;
	long line;              /* physical line being fed (1-based) */
	long cur_start;         /* line on which the unfinished input began */
	long rec_line;          /* line on which the current record began, 0: none */
	int at_boundary;        /* the last line ended exactly at the end of a record */
	long cb2_count;
	size_t rec_bytes;
	long lines, records, skipped;
	unsigned long long bytes;
	int failed;
	char err[256];
};

void csvrows_set_error(struct csvrows *r, long line, const char *fmt, ...)
{
	va_list ap;
	if (r->failed)
		return;
	r->failed = 1;
	int n = snprintf(r->err, sizeof r->err, "line %ld: ", line);
	if (n < 0 || (size_t)n >= sizeof r->err)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
	va_end(ap);
}

static void grow(char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap : 256;
	while (c < need)
		c *= 2;
	*buf = gv_realloc(*buf, c);
	*cap = c;
}

static void cb_field(void *s, size_t len, void *data)
{
	struct csvrows *r = data;
	if (r->failed)
		return;
	if (!r->rec_line)
		r->rec_line = r->cur_start;
	if (r->nfields >= CSVROWS_MAX_FIELDS) {
		csvrows_set_error(r, r->rec_line, "more than %d fields", CSVROWS_MAX_FIELDS);
		return;
	}
	if (r->nfields == r->fields_cap) {
		r->fields_cap = r->fields_cap ? r->fields_cap * 2 : 32;
		r->offs = gv_realloc(r->offs, r->fields_cap * sizeof *r->offs);
		r->lens = gv_realloc(r->lens, r->fields_cap * sizeof *r->lens);
		r->ptrs = gv_realloc(r->ptrs, (r->fields_cap + 1) * sizeof *r->ptrs);
	}
	grow(&r->arena, &r->arena_cap, r->arena_len + len + 1);
	if (len)
		memcpy(r->arena + r->arena_len, s, len);
	r->arena[r->arena_len + len] = '\0';
	r->offs[r->nfields] = r->arena_len;
	r->lens[r->nfields] = len;
	r->nfields++;
	r->arena_len += len + 1;
}

static void cb_row(int c, void *data)
{
	struct csvrows *r = data;
	(void)c;
	r->cb2_count++;
	if (r->failed)
		return;
	if (!r->rec_line)
		r->rec_line = r->cur_start;
	for (size_t i = 0; i < r->nfields; i++)
		r->ptrs[i] = r->arena + r->offs[i];
	r->ptrs[r->nfields] = NULL;
	r->records++;
	if (r->fn(r->ud, r->ptrs, r->lens, r->nfields, r->rec_line) != 0 && !r->failed)
		csvrows_set_error(r, r->rec_line, "rejected");
	r->nfields = 0;
	r->arena_len = 0;
	r->rec_line = 0;
}

struct csvrows *csvrows_new(csvrows_row_fn fn, void *ud)
{
	struct csvrows *r = gv_calloc(1, sizeof *r);
	if (csv_init(&r->p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
		free(r);
		return NULL;
	}
	r->fn = fn;
	r->ud = ud;
	r->at_boundary = 1;
	r->cur_start = 1;
	/* at least one slot so ptrs is never NULL for an empty record */
	r->fields_cap = 32;
	r->offs = gv_malloc(r->fields_cap * sizeof *r->offs);
	r->lens = gv_malloc(r->fields_cap * sizeof *r->lens);
	r->ptrs = gv_malloc((r->fields_cap + 1) * sizeof *r->ptrs);
	return r;
}

void csvrows_free(struct csvrows *r)
{
	if (!r)
		return;
	csv_free(&r->p);
	free(r->needle);
	free(r->carry);
	free(r->arena);
	free(r->offs);
	free(r->lens);
	free(r->ptrs);
	free(r);
}

void csvrows_set_prefilter(struct csvrows *r, const char *needle)
{
	free(r->needle);
	r->needle = needle && *needle ? gv_strdup(needle) : NULL;
	r->needle_len = r->needle ? strlen(r->needle) : 0;
}

/* Number of '"' bytes, eight at a time (exact zero-byte test per word). */
static size_t count_quotes(const char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL, high = ones * 0x80, low7 = ones * 0x7f;
	const uint64_t q = ones * (uint64_t)'"';
	size_t c = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		uint64_t x = w ^ q;
		uint64_t nonzero = (((x & low7) + low7) | x) & high;
		c += 8 - (size_t)__builtin_popcountll(nonzero);
	}
	for (; i < n; i++)
		c += s[i] == '"';
	return c;
}

static int parse_part(struct csvrows *r, const char *s, size_t n)
{
	if (!n)
		return 0;
	if (csv_parse(&r->p, s, n, cb_field, cb_row, r) != n) {
		if (csv_error(&r->p) == CSV_EPARSE)
			csvrows_set_error(r, r->line, "malformed quoting");
		else
			csvrows_set_error(r, r->line, "%s", csv_strerror(csv_error(&r->p)));
		return -1;
	}
	return r->failed ? -1 : 0;
}

/* One physical line, with its terminator ("\n" or "\r\n") unless it is the last one. */
static int process_line(struct csvrows *r, const char *s, size_t n)
{
	size_t term = 0;
	if (n && s[n - 1] == '\n') {
		term = 1;
		if (n >= 2 && s[n - 2] == '\r')
			term = 2;
	}
	size_t content = n - term;
	r->line++;
	r->lines++;
	if (r->at_boundary) {
		r->cur_start = r->line;
		if (r->needle && !memmem(s, content, r->needle, r->needle_len) &&
		    count_quotes(s, content) % 2 == 0) {
			r->skipped++;
			return 0;
		}
		r->rec_bytes = 0;
	}
	r->rec_bytes += n;
	if (r->rec_bytes > CSVROWS_MAX_RECORD) {
		csvrows_set_error(r, r->rec_line ? r->rec_line : r->line,
				  "record longer than %u bytes", CSVROWS_MAX_RECORD);
		return -1;
	}
	if (parse_part(r, s, content) < 0)
		return -1;
	long before = r->cb2_count;
	if (parse_part(r, s + content, term) < 0)
		return -1;
	if (r->cb2_count != before)
		r->at_boundary = 1;
	else if (content)
		r->at_boundary = 0;
	return 0;
}

int csvrows_feed(struct csvrows *r, const void *buf, size_t len)
{
	const char *p = buf;
	if (r->failed)
		return -1;
	r->bytes += len;
	while (len) {
		const char *nl = memchr(p, '\n', len);
		if (!nl) {
			if (r->carry_len + len > CSVROWS_MAX_RECORD) {
				csvrows_set_error(r, r->line + 1, "line longer than %u bytes",
						  CSVROWS_MAX_RECORD);
				return -1;
			}
			grow(&r->carry, &r->carry_cap, r->carry_len + len);
			memcpy(r->carry + r->carry_len, p, len);
			r->carry_len += len;
			return 0;
		}
		size_t seg = (size_t)(nl - p) + 1;
		int rc;
		if (r->carry_len) {
			if (r->carry_len + seg > CSVROWS_MAX_RECORD) {
				csvrows_set_error(r, r->line + 1, "line longer than %u bytes",
						  CSVROWS_MAX_RECORD);
				return -1;
			}
			grow(&r->carry, &r->carry_cap, r->carry_len + seg);
			memcpy(r->carry + r->carry_len, p, seg);
			rc = process_line(r, r->carry, r->carry_len + seg);
			r->carry_len = 0;
		} else {
			rc = process_line(r, p, seg);
		}
		if (rc < 0)
			return -1;
		p += seg;
		len -= seg;
	}
	return 0;
}

int csvrows_finish(struct csvrows *r)
{
	if (r->failed)
		return -1;
	if (r->carry_len) {
		/* a last line without its newline is parsed, never skipped: a download cut
		 * in the middle of a row must show up as a short row, not vanish */
		char *needle = r->needle;
		r->needle = NULL;
		int rc = process_line(r, r->carry, r->carry_len);
		r->needle = needle;
		r->carry_len = 0;
		if (rc < 0)
			return -1;
	}
	if (csv_fini(&r->p, cb_field, cb_row, r) != 0) {
		csvrows_set_error(r, r->rec_line ? r->rec_line : r->line,
				  "unterminated quoted field");
		return -1;
	}
	return r->failed ? -1 : 0;
}

const char *csvrows_error(const struct csvrows *r) { return r->failed ? r->err : ""; }
long csvrows_lines(const struct csvrows *r) { return r->lines; }
long csvrows_records(const struct csvrows *r) { return r->records; }
long csvrows_skipped(const struct csvrows *r) { return r->skipped; }
unsigned long long csvrows_bytes(const struct csvrows *r) { return r->bytes; }
