/* csvrows.c - see csvrows.h */
#include "pricing/csvrows.h"
#include "runners/util.h"

#include <csv.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

struct csvrows {
	struct csv_parser p;
	csvrows_row_fn fn;
	void *ud;
	char *needle;
	size_t needle_len;
	char *more[4];          /* further required needles */
	size_t nmore;
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
	int last_line;          /* the final line, without newline: never skipped */
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
	for (size_t i = 0; i < r->nmore; i++)
		free(r->more[i]);
	free(r->carry);
	free(r->arena);
	free(r->offs);
	free(r->lens);
	free(r->ptrs);
	free(r);
}

void csvrows_add_prefilter(struct csvrows *r, const char *needle)
{
	if (needle && *needle && r->nmore < sizeof r->more / sizeof r->more[0])
		r->more[r->nmore++] = gv_strdup(needle);
}

void csvrows_set_prefilter(struct csvrows *r, const char *needle)
{
	free(r->needle);
	r->needle = needle && *needle ? gv_strdup(needle) : NULL;
	r->needle_len = r->needle ? strlen(r->needle) : 0;
}

/*
 * The prefilter's two scans, the hot loop of a multi-GB price list: finding
 * the needle, and counting quotes and newlines.  SSE2 (every x86-64) does
 * 16 bytes a step; elsewhere memmem and an 8-byte SWAR loop.
 */
#if defined(__SSE2__)
/* first/last-byte SIMD filter, then memcmp of the candidates (W. Mula's "SIMD-friendly" substring search) */
static const char *find_needle(const char *s, size_t n, const char *nd, size_t k)
{
	if (k < 2 || n < k)
		return memmem(s, n, nd, k);
	const __m128i first = _mm_set1_epi8(nd[0]), last = _mm_set1_epi8(nd[k - 1]);
	size_t i = 0;
	for (; i + (k - 1) + 16 <= n; i += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + k - 1));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last)));
		while (m) {
			unsigned bit = (unsigned)__builtin_ctz(m);
			if (!memcmp(s + i + bit + 1, nd + 1, k - 2))
				return s + i + bit;
			m &= m - 1;
		}
	}
	return memmem(s + i, n - i, nd, k);
}

static size_t sum_bytes(__m128i acc)
{
	__m128i s = _mm_sad_epu8(acc, _mm_setzero_si128());
	return (size_t)_mm_cvtsi128_si64(s) + (size_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s));
}

/* byte counters (cmpeq gives -1 per match), folded every 255 steps; no popcount instruction needed */
static void count_quotes_newlines(const char *s, size_t n, size_t *quotes, size_t *newlines)
{
	const __m128i q = _mm_set1_epi8('"'), nl = _mm_set1_epi8('\n');
	__m128i aq = _mm_setzero_si128(), an = _mm_setzero_si128();
	size_t cq = 0, cn = 0, i = 0;
	int steps = 0;
	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		aq = _mm_sub_epi8(aq, _mm_cmpeq_epi8(v, q));
		an = _mm_sub_epi8(an, _mm_cmpeq_epi8(v, nl));
		if (++steps == 255) {
			cq += sum_bytes(aq);
			cn += sum_bytes(an);
			aq = an = _mm_setzero_si128();
			steps = 0;
		}
	}
	cq += sum_bytes(aq);
	cn += sum_bytes(an);
	for (; i < n; i++) {
		cq += s[i] == '"';
		cn += s[i] == '\n';
	}
	*quotes = cq;
	*newlines = cn;
}
#else
static const char *find_needle(const char *s, size_t n, const char *nd, size_t k)
{
	return memmem(s, n, nd, k);
}

static void count_quotes_newlines(const char *s, size_t n, size_t *quotes, size_t *newlines)
{
	const uint64_t ones = 0x0101010101010101ULL, high = ones * 0x80, low7 = ones * 0x7f;
	const uint64_t q = ones * (uint64_t)'"', nl = ones * (uint64_t)'\n';
	size_t cq = 0, cn = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w, x, y;
		memcpy(&w, s + i, 8);
		x = w ^ q;
		y = w ^ nl;
		cq += 8 - (size_t)__builtin_popcountll((((x & low7) + low7) | x) & high);
		cn += 8 - (size_t)__builtin_popcountll((((y & low7) + low7) | y) & high);
	}
	for (; i < n; i++) {
		cq += s[i] == '"';
		cn += s[i] == '\n';
	}
	*quotes = cq;
	*newlines = cn;
}
#endif

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
		size_t quotes, lines;
		int lacks = r->needle && !find_needle(s, content, r->needle, r->needle_len);
		for (size_t i = 0; r->needle && !lacks && i < r->nmore; i++)
			lacks = !memmem(s, content, r->more[i], strlen(r->more[i]));
		if (lacks && !r->last_line && (count_quotes_newlines(s, content, &quotes, &lines), quotes % 2 == 0)) {
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
	int spans = 1;
	if (r->failed)
		return -1;
	r->bytes += len;
	while (len) {
		/*
		 * Prefilter fast path: from a record boundary, every whole line before the
		 * next occurrence of the needle is skipped at once when the span has an even
		 * number of quotes (it then ends outside any quoted field).  One memmem and
		 * one counting pass per span instead of per line.  An odd span (a quoted
		 * newline) turns the fast path off for the rest of this chunk.
		 */
		if (spans && r->needle && r->at_boundary && !r->carry_len) {
			const char *hit = find_needle(p, len, r->needle, r->needle_len);
			size_t upto = hit ? (size_t)(hit - p) : len;
			const char *last = upto ? memrchr(p, '\n', upto) : NULL;
			if (last) {
				size_t span = (size_t)(last - p) + 1, quotes, lines;
				count_quotes_newlines(p, span, &quotes, &lines);
				if (quotes % 2 == 0) {
					r->line += (long)lines;
					r->lines += (long)lines;
					r->skipped += (long)lines;
					p += span;
					len -= span;
					continue;
				}
				spans = 0;
			}
		}
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
		r->last_line = 1;
		int rc = process_line(r, r->carry, r->carry_len);
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
