/*
 * jsplit.c - streams the elements of a top-level JSON array (jsplit.h).
 */
#include "common/jsplit.h"
#include "common/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void jsplit_init(struct jsplit *j, FILE *f)
{
	memset(j, 0, sizeof *j);
	j->f = f;
}

void jsplit_free(struct jsplit *j)
{
	free(j->buf);
	free(j->rb);
	j->buf = j->rb = NULL;
	j->len = j->cap = j->rpos = j->rlen = 0;
}

static int fail(struct jsplit *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct jsplit *j, const char *fmt, ...)
{
	char what[96];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (j->is_array)
		snprintf(j->err, sizeof j->err, "element %zu at byte %lld: %s", j->index, j->offset, what);
	else
		snprintf(j->err, sizeof j->err, "at byte %lld: %s", j->offset, what);
	j->state = 2;
	return -1;
}

/* The next chunk of the file into rb; 0 at its end (or a read error: ferror says which). */
static int refill(struct jsplit *j)
{
	if (!j->rb)
		j->rb = gv_malloc(JSPLIT_READ);
	j->rpos = 0;
	j->rlen = fread(j->rb, 1, j->rsize && j->rsize < JSPLIT_READ ? j->rsize : JSPLIT_READ, j->f);
	return j->rlen > 0;
}

static int next_char(struct jsplit *j)
{
	if (j->rpos == j->rlen && !refill(j))
		return EOF;
	j->offset++;
	return (unsigned char)j->rb[j->rpos++];
}

static int is_ws(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int skip_ws(struct jsplit *j)
{
	int c;
	while ((c = next_char(j)) != EOF && is_ws(c))
		;
	return c;
}

static int push(struct jsplit *j, int c)
{
	if (j->len + 2 > j->cap) {
		if (j->cap >= JSPLIT_MAX_ELEMENT)
			return fail(j, "element larger than %u MiB", JSPLIT_MAX_ELEMENT >> 20);
		j->cap = j->cap ? j->cap * 2 : 4096;
		j->buf = gv_realloc(j->buf, j->cap);
	}
	j->buf[j->len++] = (char)c;
	return 0;
}

/* A NUL byte is never JSON text: refused where it is met (`import /dev/zero` reads one byte, not 512 MiB). */
static int nul_byte(struct jsplit *j)
{
	return fail(j, "a NUL byte: not JSON text");
}

/* The whole (non-array) document starting with c as one element. */
static int whole_document(struct jsplit *j, int c, const char **elem, size_t *len)
{
	for (; c != EOF; c = next_char(j))
		if ((c == 0 && nul_byte(j)) || push(j, c))
			return -1;
	if (ferror(j->f))
		return fail(j, "read error");
	j->buf[j->len] = 0;
	while (j->len && is_ws((unsigned char)j->buf[j->len - 1]))
		j->buf[--j->len] = 0;
	j->state = 2;
	j->index = 1;
	*elem = j->buf;
	*len = j->len;
	return 1;
}

/* After the closing ']': only white space may follow. */
static int end_of_array(struct jsplit *j)
{
	int c = skip_ws(j);
	j->state = 2;
	if (c != EOF)
		return fail(j, "text after the closing ']'");
	return ferror(j->f) ? fail(j, "read error") : 0;
}

/* n more bytes of the element; the buffer grows by doubling up to JSPLIT_MAX_ELEMENT. */
static int append(struct jsplit *j, const char *p, size_t n)
{
	if (j->len + n + 2 > j->cap) {
		size_t cap = j->cap ? j->cap : 4096;
		while (j->len + n + 2 > cap) {
			if (cap >= JSPLIT_MAX_ELEMENT)
				return fail(j, "element larger than %u MiB", JSPLIT_MAX_ELEMENT >> 20);
			cap *= 2;
		}
		j->buf = gv_realloc(j->buf, cap);
		j->cap = cap;
	}
	memcpy(j->buf + j->len, p, n);
	j->len += n;
	return 0;
}

struct scan {
	int depth, in_str, esc;
};

/*
 * The bytes scan_byte() must see, by where the scan is (one table lookup a byte: the scan of an import's
 * text was a sixth of its parse-ahead thread): in a string its quote, a backslash and NUL; outside,
 * a quote, a bracket and NUL, and at depth 0 the ',' that ends an element.
 */
enum { STOP_STR = 1, STOP_NESTED = 2, STOP_TOP = 4 };
static const unsigned char stops[256] = {
	[0] = STOP_STR | STOP_NESTED | STOP_TOP, ['"'] = STOP_STR | STOP_NESTED | STOP_TOP, ['\\'] = STOP_STR,
	['{'] = STOP_NESTED | STOP_TOP, ['['] = STOP_NESTED | STOP_TOP, ['}'] = STOP_NESTED | STOP_TOP,
	[']'] = STOP_NESTED | STOP_TOP, [','] = STOP_TOP,
};

/*
 * One byte outside a string's plain run: 0 part of the element, 1 the ',' or ']' that ends it
 * (not part of it), -1 an error (said).
 */
static int scan_byte(struct jsplit *j, struct scan *sc, char c)
{
	if (c == 0)
		return nul_byte(j);
	if (sc->in_str) {
		if (sc->esc)
			sc->esc = 0;
		else if (c == '\\')
			sc->esc = 1;
		else if (c == '"')
			sc->in_str = 0;
	} else if (c == '"') {
		sc->in_str = 1;
	} else if (c == '{' || c == '[') {
		if (++sc->depth > 4096)
			return fail(j, "nested too deep");
	} else if (c == '}' || c == ']') {
		if (sc->depth == 0 && c == ']')
			return 1;
		if (sc->depth == 0)
			return fail(j, "unexpected '}'");
		sc->depth--;
	} else if (c == ',' && sc->depth == 0) {
		return 1;
	}
	return 0;
}

/*
 * One element's bytes up to the ',' or ']' that ends it at depth 0, a chunk of the read buffer
 * at a time: the bytes of a string between its quotes and escapes are skipped in a tight loop
 * and every span is copied at once.  j->offset counts the bytes taken, the closer's too.
 */
static int scan_element(struct jsplit *j, int c, int *closer)
{
	struct scan sc = { 0, 0, 0 };
	(void)c;
	j->rpos--;   /* c again, from the buffer next_char took it from */
	j->offset--;
	for (;;) {
		if (j->rpos == j->rlen && !refill(j))
			return fail(j, ferror(j->f) ? "read error" : "unterminated array");
		const char *from = j->rb + j->rpos, *p = from, *end = j->rb + j->rlen;
		long long base = j->offset;
		int r = 0;
		for (; p < end; p++) {
			unsigned char stop = sc.in_str ? STOP_STR : sc.depth ? STOP_NESTED : STOP_TOP;
			if (!sc.esc)
				while (p < end && !(stops[(unsigned char)*p] & stop))
					p++;
			if (p == end)
				break;
			j->offset = base + (p - from) + 1;   /* this byte taken, as an error names it */
			if ((r = scan_byte(j, &sc, *p)))
				break;
		}
		if (r < 0)
			return -1;
		if (append(j, from, (size_t)(p - from)))
			return -1;
		if (r == 1) {
			*closer = (unsigned char)*p;
			j->rpos = (size_t)(p - j->rb) + 1;
			return 0;
		}
		j->offset = base + (end - from);
		j->rpos = j->rlen;
	}
}

int jsplit_next(struct jsplit *j, const char **elem, size_t *len)
{
	if (j->state == 2)
		return 0;
	j->len = 0;
	int c;
	if (j->state == 0) {
		c = skip_ws(j);
		if (c == EOF)
			return fail(j, ferror(j->f) ? "read error" : "empty document");
		if (c == 0 || !strchr("{[\"-0123456789tfn", c))
			return fail(j, "not JSON text (it begins with byte 0x%02x)", (unsigned)c);
		if (c != '[')
			return whole_document(j, c, elem, len);
		j->is_array = 1;
		j->state = 1;
		c = skip_ws(j);
		if (c == ']')
			return end_of_array(j);
	} else {
		c = skip_ws(j);
	}
	if (c == ',' || c == ']')
		return fail(j, "empty element");
	if (c == EOF)
		return fail(j, ferror(j->f) ? "read error" : "unterminated array");
	int closer = 0;
	if (scan_element(j, c, &closer))
		return -1;
	while (j->len && is_ws((unsigned char)j->buf[j->len - 1]))
		j->len--;
	if (push(j, 0))
		return -1;
	j->len--;
	j->index++;
	if (closer == ']' && end_of_array(j)) {
		j->index--;
		return -1;
	}
	*elem = j->buf;
	*len = j->len;
	return 1;
}

/* ---- parsed ahead in a thread ---- */

/* Splits and parses the next element into it. */
static void produce(struct jsplit_ahead *a, struct jsplit_item *it)
{
	const char *e;
	size_t len;
	memset(it, 0, sizeof *it);
	it->kind = jsplit_next(&a->j, &e, &len);
	it->index = a->j.index ? a->j.index - 1 : 0;
	if (it->kind == 1) {
		it->t = gv_malloc(sizeof *it->t);
		if (jt_parse(it->t, e, len))
			it->kind = -2;
		else if (a->prep.make) {
			it->made = a->prep.make(it->t, a->prep.arg);
			it->drop = a->prep.drop;
		}
	}
}

static void *ahead_main(void *arg)
{
	struct jsplit_ahead *a = arg;
	for (int kind = 1; kind == 1 || kind == -2;) {   /* a parse error: the caller decides to go on */
		struct jsplit_item it;
		produce(a, &it);
		kind = it.kind;
		pthread_mutex_lock(&a->mu);
		while (a->count == JSPLIT_AHEAD && !a->stop)
			pthread_cond_wait(&a->not_full, &a->mu);
		if (a->stop) {
			pthread_mutex_unlock(&a->mu);
			jsplit_item_free(&it);
			break;
		}
		a->ring[(a->head + a->count++) % JSPLIT_AHEAD] = it;
		pthread_cond_signal(&a->not_empty);
		pthread_mutex_unlock(&a->mu);
	}
	return NULL;
}

void jsplit_item_free(struct jsplit_item *it)
{
	if (it->made && it->drop)
		it->drop(it->made);
	it->made = NULL;
	if (it->t) {
		jt_free(it->t);
		free(it->t);
		it->t = NULL;
	}
}

void jsplit_ahead_start(struct jsplit_ahead *a, FILE *f, const struct jsplit_prep *prep)
{
	memset(a, 0, sizeof *a);
	if (prep)
		a->prep = *prep;
	jsplit_init(&a->j, f);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->not_empty, NULL);
	pthread_cond_init(&a->not_full, NULL);
	a->threaded = pthread_create(&a->thread, NULL, ahead_main, a) == 0;
}

int jsplit_ahead_next(struct jsplit_ahead *a, struct jsplit_item *it)
{
	if (!a->threaded) {
		produce(a, it);
		return it->kind;
	}
	pthread_mutex_lock(&a->mu);
	while (a->count == 0)
		pthread_cond_wait(&a->not_empty, &a->mu);
	*it = a->ring[a->head];
	a->head = (a->head + 1) % JSPLIT_AHEAD;
	a->count--;
	pthread_cond_signal(&a->not_full);
	pthread_mutex_unlock(&a->mu);
	return it->kind;
}

void jsplit_ahead_stop(struct jsplit_ahead *a)
{
	if (a->threaded) {
		pthread_mutex_lock(&a->mu);
		a->stop = 1;
		pthread_cond_broadcast(&a->not_full);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thread, NULL);
		for (; a->count; a->count--, a->head = (a->head + 1) % JSPLIT_AHEAD)
			jsplit_item_free(&a->ring[a->head]);
	}
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->not_empty);
	pthread_cond_destroy(&a->not_full);
	jsplit_free(&a->j);
}
