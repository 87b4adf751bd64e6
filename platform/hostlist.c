/*
 * hostlist.c - Slurm's compressed host lists (platform/hostlist.h): parsed
 * afresh on each call (a job's list is short), never expanded whole.
 */
#include "platform/hostlist.h"
#include "common/util.h"

#include <ctype.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define MAX_SETS 8      /* bracketed sets in one name */
#define MAX_DIGITS 9    /* a bound's digits: under 10^9, no overflow */

/* One bracketed set: its text between '[' and ']'. */
struct set {
	const char *s;
	size_t n;
};

/* A range "lo" or "lo-hi" of a set at *p (advanced past it): 0, or -1 when malformed. */
static int range(const char **p, const char *end, unsigned long *lo, unsigned long *hi, int *width)
{
	const char *q = *p;
	size_t d = 0;
	*lo = *hi = 0;
	while (q < end && isdigit((unsigned char)*q) && d < MAX_DIGITS)
		*lo = *lo * 10 + (unsigned long)(*q++ - '0'), d++;
	if (!d || (q < end && isdigit((unsigned char)*q)))
		return -1;
	*width = (int)d;
	*hi = *lo;
	if (q < end && *q == '-') {
		q++;
		d = 0;
		*hi = 0;
		while (q < end && isdigit((unsigned char)*q) && d < MAX_DIGITS)
			*hi = *hi * 10 + (unsigned long)(*q++ - '0'), d++;
		if (!d || (q < end && isdigit((unsigned char)*q)) || *hi < *lo)
			return -1;
	}
	if (q < end && *q != ',')
		return -1;
	*p = q < end ? q + 1 : q;
	return q < end && q + 1 == end ? -1 : 0;   /* a trailing comma */
}

/* How many numbers a set names (-1 malformed); with want >= 0, the want-th as text into out. */
static long set_walk(const struct set *st, long want, char *out, size_t outlen)
{
	const char *p = st->s, *end = st->s + st->n;
	long total = 0;
	if (!st->n)
		return -1;
	while (p < end) {
		unsigned long lo, hi;
		int width;
		if (range(&p, end, &lo, &hi, &width))
			return -1;
		long k = (long)(hi - lo + 1);
		if (want >= total && want < total + k) {
			int w = snprintf(out, outlen, "%0*lu", width, lo + (unsigned long)(want - total));
			return w < 0 || (size_t)w >= outlen ? -1 : total + k;
		}
		total += k;
		if (total > HOSTLIST_MAX)
			return -1;
	}
	return total;
}

/* One item (no comma outside brackets): its sets and how many hosts it names; -1 malformed. */
static long item_sets(const char *s, size_t n, struct set *sets, int *nsets)
{
	long count = 1;
	*nsets = 0;
	if (!n || s[0] == '[')
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == ']' || c <= ' ' || c >= 0x7f)
			return -1;
		if (c != '[')
			continue;
		const char *close = memchr(s + i, ']', n - i);
		if (!close || *nsets == MAX_SETS || memchr(s + i + 1, '[', (size_t)(close - s - i - 1)))
			return -1;
		struct set *st = &sets[(*nsets)++];
		st->s = s + i + 1;
		st->n = (size_t)(close - st->s);
		char tmp[16];
		long k = set_walk(st, -1, tmp, sizeof tmp);
		if (k < 1 || count > HOSTLIST_MAX / k)
			return -1;
		count *= k;
		i = (size_t)(close - s);
	}
	return count;
}

/* The want-th host of one item into out: the literal parts and each set's number, the last set fastest. */
static int item_host(const char *s, size_t n, const struct set *sets, int nsets, long want, char *out, size_t outlen)
{
	long idx[MAX_SETS];
	for (int k = nsets - 1; k >= 0; k--) {
		char tmp[16];
		long c = set_walk(&sets[k], -1, tmp, sizeof tmp);
		idx[k] = want % c;
		want /= c;
	}
	size_t o = 0;
	int k = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '[') {
			char num[16];
			if (set_walk(&sets[k], idx[k], num, sizeof num) < 0)
				return -1;
			size_t l = strlen(num);
			if (o + l >= outlen)
				return -1;
			memcpy(out + o, num, l);
			o += l;
			i = (size_t)(sets[k].s + sets[k].n - s);   /* its ']' */
			k++;
			continue;
		}
		if (o + 1 >= outlen)
			return -1;
		out[o++] = s[i];
	}
	out[o] = '\0';
	return 0;
}

/* Walks the items: the total (-1 malformed), and with want >= 0 that host into out. */
static long walk(const char *list, long want, char *out, size_t outlen, int *found)
{
	long total = 0;
	*found = 0;
	if (!list || !*list)
		return -1;
	for (const char *p = list;;) {
		const char *q = p;
		int depth = 0;
		while (*q && (depth || *q != ','))
			depth += *q == '[' ? 1 : *q == ']' ? -1 : 0, q++;
		struct set sets[MAX_SETS];
		int nsets;
		long k = item_sets(p, (size_t)(q - p), sets, &nsets);
		if (k < 0 || total > HOSTLIST_MAX - k)
			return -1;
		if (want >= total && want < total + k && !*found) {
			if (item_host(p, (size_t)(q - p), sets, nsets, want - total, out, outlen))
				return -1;
			*found = 1;
		}
		total += k;
		if (!*q)
			return total;
		p = q + 1;
	}
}

long hostlist_count(const char *list)
{
	char tmp[2];
	int found;
	return walk(list, -1, tmp, sizeof tmp, &found);
}

int hostlist_nth(const char *list, long n, char *out, size_t outlen)
{
	int found;
	if (n < 0 || !outlen)
		return -1;
	return walk(list, n, out, outlen, &found) < 0 || !found ? -1 : 0;
}

int hostlist_resolves_to(const char *host, const char *addr, char *seen, size_t seenlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
	if (seenlen)
		seen[0] = '\0';
	if (!host || !*host || getaddrinfo(host, NULL, &hints, &res))
		return -1;
	int match = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		char h[NI_MAXHOST];
		if (getnameinfo(ai->ai_addr, ai->ai_addrlen, h, sizeof h, NULL, 0, NI_NUMERICHOST))
			continue;
		const char *t = !strncmp(h, "::ffff:", 7) && strchr(h, '.') ? h + 7 : h;
		match |= !strcmp(t, addr);
		size_t l = strlen(seen);
		if (!strstr(seen, t) && l + strlen(t) + 2 < seenlen)
			snprintf(seen + l, seenlen - l, "%s%s", l ? "," : "", t);
	}
	freeaddrinfo(res);
	return match;
}
