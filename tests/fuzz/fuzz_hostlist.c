/*
 * fuzz_hostlist.c - Slurm's compressed host lists (platform/hostlist.h) on
 * any bytes.
 *
 * Invariants: a list that is one names between 1 and HOSTLIST_MAX hosts;
 * every host up to the count (the first 64, and the last) comes out, a
 * printable name without a bracket, comma or space; the host past the end
 * does not; a list made of two lists joined by a comma names the sum of
 * both, the second's hosts after the first's.
 *
 * Seeds (corpus/fuzz_hostlist/): the lists Slurm prints (ranges, padding,
 * several brackets in one name, several items) and malformed ones.
 */
#include "platform/hostlist.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void host_ok(const char *h)
{
	if (!h[0])
		abort();
	for (const char *p = h; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || strchr("[],", *p))
			abort();
}

static void check(const char *s, long *count)
{
	char h[512];
	*count = hostlist_count(s);
	if (*count == -1) {
		if (!hostlist_nth(s, 0, h, sizeof h))
			abort();
		return;
	}
	if (*count < 1 || *count > HOSTLIST_MAX)
		abort();
	for (long i = 0; i < *count && i < 64; i++)
		if (!hostlist_nth(s, i, h, sizeof h))
			host_ok(h);
	if (!hostlist_nth(s, *count - 1, h, sizeof h))
		host_ok(h);
	if (!hostlist_nth(s, *count, h, sizeof h) || !hostlist_nth(s, -1, h, sizeof h))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n > 4096)
		return 0;
	char *s = malloc(2 * n + 2);
	if (!s)
		return 0;
	memcpy(s, d, n);
	s[n] = '\0';   /* C text: an inner NUL ends it */
	long a, b, ab;
	check(s, &a);
	size_t l = strlen(s);
	char *t = malloc(2 * l + 2);
	if (t) {
		memcpy(t, s, l);
		t[l] = ',';
		memcpy(t + l + 1, s, l + 1);
		check(t, &ab);
		b = a;
		if (a > 0 && a <= HOSTLIST_MAX / 2 && ab != a + b)
			abort();
		char x[512], y[512];
		if (a > 0 && ab == 2 * a && !hostlist_nth(s, 0, x, sizeof x) && (hostlist_nth(t, a, y, sizeof y) || strcmp(x, y)))
			abort();
		free(t);
	}
	free(s);
	return 0;
}
