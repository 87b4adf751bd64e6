/* util.c - see util.h */
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int gv_verbose;
int gv_quiet;

void gv_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gpuvet: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int gv_errf(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int gv_fp_refuse(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(err, errlen, "fingerprint: ");
	if (n > 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

void gv_debug(const char *fmt, ...)
{
	va_list ap;
	if (!gv_verbose)
		return;
	va_start(ap, fmt);
	fputs("gpuvet: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void oom(size_t n)
{
	fprintf(stderr, "gpuvet: out of memory allocating %zu bytes\n", n);
	abort();
}

void *gv_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *gv_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *gv_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *gv_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = gv_malloc(n);
	memcpy(p, s, n);
	return p;
}

uint64_t gv_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

char *gv_asprintf(const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	char *p = gv_malloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

/* Whether S is spelled as a decimal number: digits, one sign, a point and an exponent; never hex, inf, nan or spaces. */
static int decimal_spelling(const char *s)
{
	return s && *s && strspn(s, "0123456789.eE+-") == strlen(s);
}

int gv_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;
	if (!decimal_spelling(s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int gv_parse_double(const char *s, double *out)
{
	char *end;
	double v;
	if (!decimal_spelling(s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int gv_parse_number(const char *s, double min, double max, int whole, double *out)
{
	double v;
	if (gv_parse_double(s, &v) || v < min || v > max || (whole && v != floor(v)))
		return -1;
	*out = v;
	return 0;
}

char *gv_read_file_max(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = gv_malloc(cap);
	while (n < max) {
		if (n + 1 >= cap) {
			cap *= 2;
			buf = gv_realloc(buf, cap);
		}
		size_t want = cap - n - 1 < max - n ? cap - n - 1 : max - n;
		ssize_t r = read(fd, buf + n, want);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *gv_read_file(const char *path, size_t *len)
{
	return gv_read_file_max(path, SIZE_MAX, len);
}

size_t gv_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);
	if (size) {
		size_t c = n < size - 1 ? n : size - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

void gv_iso8601(long t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void gv_uuid(char out[37])
{
	uint8_t b[16];
	size_t got = 0;
	while (got < sizeof b) {
		ssize_t r = getrandom(b + got, sizeof b - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* getrandom cannot fail otherwise on Linux >= 3.17; fall back to time */
			for (; got < sizeof b; got++)
				b[got] = (uint8_t)(rand() ^ (int)time(NULL));
			break;
		}
		got += (size_t)r;
	}
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		 b[12], b[13], b[14], b[15]);
}

int gv_progress_enabled(void)
{
	return !gv_quiet && isatty(STDERR_FILENO);
}

int gv_to_int(double v, int dflt)
{
	return v > (double)INT_MIN - 1 && v < (double)INT_MAX + 1 ? (int)v : dflt;
}

size_t gv_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[256];
	if (la > 255 || lb > 255)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *gv_closest(const char *s, const char *const *cands, size_t n)
{
	size_t limit = strlen(s) / 4 > 2 ? strlen(s) / 4 : 2, best = SIZE_MAX;
	const char *out = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t d = cands[i] ? gv_edit_distance(s, cands[i]) : SIZE_MAX;
		if (d < best) {
			best = d;
			out = cands[i];
		}
	}
	return best <= limit ? out : NULL;
}

/* Does a query parameter of this name carry a credential? */
static int secret_param(const char *name, size_t n)
{
	static const char *const words[] = { "accesskeyid", "signature", "credential", "security-token",
					     "securitytoken", "token", "secret", "password", "passwd", "apikey",
					     "api_key", "api-key", "key", "auth" };
	char low[64];
	if (n == 0 || n >= sizeof low)
		return 0;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[n] = '\0';
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strstr(low, words[i]))
			return 1;
	return 0;
}

static int url_stop(char c)
{
	return c == '\0' || c == '/' || c == '?' || c == '#' || c == ' ' || c == '\t' || c == '\n' || c == '"' ||
	       c == '\'' || c == '<' || c == '>';
}

const char *gv_redact(const char *text, char *out, size_t size)
{
	size_t o = 0;
	const char *s = text ? text : "";
/* c is evaluated once, whether or not there is room: PUT(*s++) must advance s */
#define PUT(c) do { char put_c = (c); if (o + 1 < size) out[o++] = put_c; } while (0)
	if (!size)
		return out;
	while (*s) {
		if (s[0] == ':' && s[1] == '/' && s[2] == '/') {
			/* scheme://[userinfo@]host: the userinfo is everything up to the last '@' of the authority */
			const char *a = s + 3, *e = a, *at = NULL;
			for (; !url_stop(*e); e++)
				if (*e == '@')
					at = e;
			for (const char *c = "://"; *c; c++)
				PUT(*c);
			s = a;
			if (at) {
				for (const char *c = "***@"; *c; c++)
					PUT(*c);
				s = at + 1;
			}
			continue;
		}
		if (*s == '?' || *s == '&') {
			/* a query parameter: name=value, the value hidden when the name carries a credential */
			PUT(*s++);
			size_t n = strcspn(s, "=&#? \t\n\"'<>");
			if (s[n] == '=' && secret_param(s, n)) {
				for (size_t i = 0; i <= n; i++)
					PUT(s[i]);
				for (const char *c = "***"; *c; c++)
					PUT(*c);
				s += n + 1;
				s += strcspn(s, "&# \t\n\"'<>");
			}
			continue;
		}
		PUT(*s++);
	}
#undef PUT
	out[o] = '\0';
	return out;
}
