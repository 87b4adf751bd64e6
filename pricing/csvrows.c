/* csvrows.c - see csvrows.h */
#include "pricing/csvrows.h"
#include "common/util.h"

#include <csv.h>
#include <pthread.h>
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
	char *more[8];          /* further required needles */
	size_t more_len[8];
	size_t nmore;
	struct {                /* field prefilters, by ascending column */
		size_t col;
		char *value;
		size_t len;
	} ff[8];
	size_t nff;
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

static pthread_once_t impl_once = PTHREAD_ONCE_INIT;
static void pick_impl(void);

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
	pthread_once(&impl_once, pick_impl);
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
	for (size_t i = 0; i < r->nff; i++)
		free(r->ff[i].value);
	free(r->carry);
	free(r->arena);
	free(r->offs);
	free(r->lens);
	free(r->ptrs);
	free(r);
}

void csvrows_add_prefilter(struct csvrows *r, const char *needle)
{
	if (needle && *needle && r->nmore < sizeof r->more / sizeof r->more[0]) {
		r->more_len[r->nmore] = strlen(needle);
		r->more[r->nmore++] = gv_strdup(needle);
	}
}

int csvrows_add_field_prefilter(struct csvrows *r, size_t col, const char *value)
{
	if (!value || r->nff == sizeof r->ff / sizeof r->ff[0])
		return -1;
	for (size_t i = 0; i < r->nff; i++)
		if (r->ff[i].col == col)
			return -1;
	size_t i = r->nff;
	for (; i > 0 && r->ff[i - 1].col > col; i--)
		r->ff[i] = r->ff[i - 1];
	r->ff[i].col = col;
	r->ff[i].value = gv_strdup(value);
	r->ff[i].len = strlen(value);
	r->nff++;
	return 0;
}

/*
 * 1 when one of the field prefilters certainly fails on this line (content
 * without its terminator), 0 when all pass or the line is one this walk
 * cannot read with certainty: a quote inside a field ("" escapes, a newline
 * in quotes), a space or tab at an unquoted field's edge (libcsv trims
 * those), a bare CR (a record terminator to libcsv), or fewer fields than
 * the filters need.  Those lines go to libcsv like any other.
 */
static int fields_certainly_differ(const struct csvrows *r, const char *s, size_t n)
{
	size_t pos = 0, col = 0, fi = 0;
	if (memchr(s, '\r', n))
		return 0;
	while (fi < r->nff) {
		const char *val;
		size_t len, next;
		if (pos > n)
			return 0;
		if (pos < n && s[pos] == '"') {
			const char *q = memchr(s + pos + 1, '"', n - pos - 1);
			if (!q)
				return 0;
			size_t end = (size_t)(q - s) + 1;
			if (end < n && s[end] != ',')
				return 0;
			val = s + pos + 1;
			len = (size_t)(q - val);
			next = end + 1;
		} else {
			const char *c = memchr(s + pos, ',', n - pos);
			size_t end = c ? (size_t)(c - s) : n;
			val = s + pos;
			len = end - pos;
			if (memchr(val, '"', len))
				return 0;
			if (len && (val[0] == ' ' || val[0] == '\t' || val[len - 1] == ' ' || val[len - 1] == '\t'))
				return 0;
			next = end + 1;
		}
		if (col == r->ff[fi].col) {
			if (len != r->ff[fi].len || memcmp(val, r->ff[fi].value, len))
				return 1;
			fi++;
		}
		col++;
		pos = next;
	}
	return 0;
}

void csvrows_set_prefilter(struct csvrows *r, const char *needle)
{
	free(r->needle);
	r->needle = needle && *needle ? gv_strdup(needle) : NULL;
	r->needle_len = r->needle ? strlen(r->needle) : 0;
}

/*
 * The prefilter's two scans, the hot loop of a multi-GB price list: finding
 * the needle, and counting quotes and newlines.  On x86-64 they run 32 bytes
 * a step with AVX2 where the CPU has it (chosen once, at the first call) and
 * 16 with SSE2 otherwise; elsewhere memmem and an 8-byte SWAR loop.
 */
#if defined(__x86_64__) && defined(__SSE2__) && defined(__GNUC__)
#include <immintrin.h>
#define CSVROWS_X86 1

/* first/last-byte SIMD filter, then memcmp of the candidates (W. Mula's "SIMD-friendly" substring search) */
static const char *find_needle_sse2(const char *s, size_t n, const char *nd, size_t k)
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

__attribute__((target("avx2")))
static const char *find_needle_avx2(const char *s, size_t n, const char *nd, size_t k)
{
	if (k < 2 || n < k)
		return memmem(s, n, nd, k);
	const __m256i first = _mm256_set1_epi8(nd[0]), last = _mm256_set1_epi8(nd[k - 1]);
	size_t i = 0;
	for (; i + (k - 1) + 32 <= n; i += 32) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
		__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + k - 1));
		unsigned m = (unsigned)_mm256_movemask_epi8(
			_mm256_and_si256(_mm256_cmpeq_epi8(a, first), _mm256_cmpeq_epi8(b, last)));
		while (m) {
			unsigned bit = (unsigned)__builtin_ctz(m);
			if (!memcmp(s + i + bit + 1, nd + 1, k - 2))
				return s + i + bit;
			m &= m - 1;
		}
	}
	return find_needle_sse2(s + i, n - i, nd, k);
}

static size_t sum_bytes(__m128i acc)
{
	__m128i s = _mm_sad_epu8(acc, _mm_setzero_si128());
	return (size_t)_mm_cvtsi128_si64(s) + (size_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s));
}

/* byte counters (cmpeq gives -1 per match), folded every 255 steps; no popcount instruction needed */
static void count_sse2(const char *s, size_t n, size_t *quotes, size_t *newlines)
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

__attribute__((target("avx2")))
static size_t sum_bytes256(__m256i acc)
{
	__m256i s = _mm256_sad_epu8(acc, _mm256_setzero_si256());
	return (size_t)_mm256_extract_epi64(s, 0) + (size_t)_mm256_extract_epi64(s, 1) +
	       (size_t)_mm256_extract_epi64(s, 2) + (size_t)_mm256_extract_epi64(s, 3);
}

__attribute__((target("avx2")))
static void count_avx2(const char *s, size_t n, size_t *quotes, size_t *newlines)
{
	const __m256i q = _mm256_set1_epi8('"'), nl = _mm256_set1_epi8('\n');
	__m256i aq = _mm256_setzero_si256(), an = _mm256_setzero_si256();
	size_t cq = 0, cn = 0, i = 0;
	int steps = 0;
	for (; i + 32 <= n; i += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
		aq = _mm256_sub_epi8(aq, _mm256_cmpeq_epi8(v, q));
		an = _mm256_sub_epi8(an, _mm256_cmpeq_epi8(v, nl));
		if (++steps == 255) {
			cq += sum_bytes256(aq);
			cn += sum_bytes256(an);
			aq = an = _mm256_setzero_si256();
			steps = 0;
		}
	}
	cq += sum_bytes256(aq);
	cn += sum_bytes256(an);
	size_t tq, tn;
	count_sse2(s + i, n - i, &tq, &tn);
	*quotes = cq + tq;
	*newlines = cn + tn;
}
/*
 * The span scan in one pass: the first needle in s[0..n), with the quotes and
 * newlines before it (or in all of s when there is none) counted on the way.
 */
__attribute__((target("avx2")))
static const char *scan_avx2(const char *s, size_t n, const char *nd, size_t k, size_t *quotes, size_t *newlines)
{
	const __m256i first = _mm256_set1_epi8(nd[0]), last = _mm256_set1_epi8(nd[k - 1]);
	const __m256i q = _mm256_set1_epi8('"'), nl = _mm256_set1_epi8('\n');
	__m256i aq = _mm256_setzero_si256(), an = _mm256_setzero_si256();
	size_t cq = 0, cn = 0, i = 0, tq, tn;
	const char *hit = NULL;
	int steps = 0;
	if (k >= 2) {
		for (; i + (k - 1) + 32 <= n; i += 32) {
			__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
			__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + k - 1));
			unsigned m = (unsigned)_mm256_movemask_epi8(
				_mm256_and_si256(_mm256_cmpeq_epi8(a, first), _mm256_cmpeq_epi8(b, last)));
			while (m) {
				unsigned bit = (unsigned)__builtin_ctz(m);
				if (!memcmp(s + i + bit + 1, nd + 1, k - 2)) {
					hit = s + i + bit;
					goto found;
				}
				m &= m - 1;
			}
			aq = _mm256_sub_epi8(aq, _mm256_cmpeq_epi8(a, q));
			an = _mm256_sub_epi8(an, _mm256_cmpeq_epi8(a, nl));
			if (++steps == 255) {
				cq += sum_bytes256(aq);
				cn += sum_bytes256(an);
				aq = an = _mm256_setzero_si256();
				steps = 0;
			}
		}
	}
	hit = find_needle_sse2(s + i, n - i, nd, k);
found:
	cq += sum_bytes256(aq);
	cn += sum_bytes256(an);
	count_sse2(s + i, (size_t)((hit ? hit : s + n) - (s + i)), &tq, &tn);
	*quotes = cq + tq;
	*newlines = cn + tn;
	return hit;
}
#else
static const char *find_needle_portable(const char *s, size_t n, const char *nd, size_t k)
{
	return memmem(s, n, nd, k);
}

static void count_portable(const char *s, size_t n, size_t *quotes, size_t *newlines)
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

typedef const char *(*find_fn)(const char *, size_t, const char *, size_t);
typedef void (*count_fn)(const char *, size_t, size_t *, size_t *);
typedef const char *(*scan_fn)(const char *, size_t, const char *, size_t, size_t *, size_t *);
static find_fn find_impl;
static count_fn count_impl;
static scan_fn scan_impl;

/* the span scan in two passes, from the two scans above */
static const char *scan_twopass(const char *s, size_t n, const char *nd, size_t k, size_t *quotes, size_t *newlines)
{
	const char *hit = find_impl(s, n, nd, k);
	count_impl(s, (size_t)((hit ? hit : s + n) - s), quotes, newlines);
	return hit;
}

/* the best the CPU has */
static void pick_impl(void)
{
#if defined(CSVROWS_X86)
	int avx2 = __builtin_cpu_supports("avx2");
	find_impl = avx2 ? find_needle_avx2 : find_needle_sse2;
	count_impl = avx2 ? count_avx2 : count_sse2;
	scan_impl = avx2 ? scan_avx2 : scan_twopass;
#else
	find_impl = find_needle_portable;
	count_impl = count_portable;
	scan_impl = scan_twopass;
#endif
}

int csvrows_force_simd(const char *name)
{
	pthread_once(&impl_once, pick_impl);
#if defined(CSVROWS_X86)
	if (!strcmp(name, "sse2")) {
		find_impl = find_needle_sse2;
		count_impl = count_sse2;
		scan_impl = scan_twopass;
		return 0;
	}
	if (!strcmp(name, "avx2") && __builtin_cpu_supports("avx2")) {
		find_impl = find_needle_avx2;
		count_impl = count_avx2;
		scan_impl = scan_avx2;
		return 0;
	}
	return -1;
#else
	return strcmp(name, "portable") ? -1 : 0;
#endif
}

static const char *find_needle(const char *s, size_t n, const char *nd, size_t k)
{
	return find_impl(s, n, nd, k);
}

static void count_quotes_newlines(const char *s, size_t n, size_t *quotes, size_t *newlines)
{
	count_impl(s, n, quotes, newlines);
}

const char *csvrows_simd(void)
{
	pthread_once(&impl_once, pick_impl);
#if defined(CSVROWS_X86)
	return find_impl == find_needle_avx2 ? "avx2" : "sse2";
#else
	return "portable";
#endif
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
		size_t quotes, lines;
		int lacks = r->needle && !find_needle(s, content, r->needle, r->needle_len);
		for (size_t i = 0; r->needle && !lacks && i < r->nmore; i++)
			lacks = !find_needle(s, content, r->more[i], r->more_len[i]);
		if (!lacks && r->nff)
			lacks = fields_certainly_differ(r, s, content);
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
			size_t quotes, lines;
			const char *hit = scan_impl(p, len, r->needle, r->needle_len, &quotes, &lines);
			size_t upto = hit ? (size_t)(hit - p) : len;
			const char *last = upto ? memrchr(p, '\n', upto) : NULL;
			if (last) {
				/* the counts ran to the hit; the span ends at the newline before it */
				size_t span = (size_t)(last - p) + 1, tail_quotes, tail_lines;
				count_quotes_newlines(last + 1, upto - span, &tail_quotes, &tail_lines);
				quotes -= tail_quotes;
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

int csvrows_step(struct csvrows *r, const void *buf, size_t len, int *failed, char *err, size_t errlen,
		 const char *what, const char *name)
{
	if (*failed)
		return -1;
	if ((buf ? csvrows_feed(r, buf, len) : csvrows_finish(r)) == 0)
		return 0;
	if (*failed)
		return -1;
	*failed = 1;
	if (name)
		snprintf(err, errlen, "%s '%s' %s", what, name, csvrows_error(r));
	else
		snprintf(err, errlen, "%s %s", what, csvrows_error(r));
	return -1;
}

void csvrows_first_error(int *failed, char *err, size_t errlen, const char *where, const char *fmt, va_list ap)
{
	char msg[384];
	if (*failed)
		return;
	vsnprintf(msg, sizeof msg, fmt, ap);
	*failed = 1;
	snprintf(err, errlen, "%s: %s", where, msg);
}
