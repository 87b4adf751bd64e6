/*
 * rendezvous_addr.c - "HOST:PORT" text of the rendezvous (platform/rendezvous.h):
 * parsed here, apart from the sockets, so it can be fuzzed
 * (tests/fuzz/fuzz_rendezvous_addr.c).
 */
#include "platform/rendezvous.h"

#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A host's characters: printable, no space, no brackets or slash (an address or a DNS name). */
static int host_ok(const char *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)h[i];
		if (c <= ' ' || c >= 0x7f || c == '[' || c == ']' || c == '/')
			return 0;
	}
	return 1;
}

static int port_parse(const char *p, int *port)
{
	size_t n = strlen(p);
	if (n == 0 || n > 5)
		return -1;
	long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	if (v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

/* s for a message: its first 64 bytes, anything unprintable as '?', so the error stays one line. */
static const char *shown(const char *s, char out[72])
{
	size_t i = 0;
	for (; s[i] && i < 64; i++)
		out[i] = (unsigned char)s[i] < ' ' || (unsigned char)s[i] >= 0x7f ? '?' : s[i];
	if (s[i])
		out[i++] = '.', out[i++] = '.', out[i++] = '.';
	out[i] = '\0';
	return out;
}

int rdzv_parse_hostport(const char *s, char host[RDZV_HOST_MAX], int *port, char *err, size_t errlen)
{
	char sh[72];
	if (!s || !*s)
		return gv_errf(err, errlen, "empty rendezvous address (want HOST:PORT)");
	size_t slen = strnlen(s, 2 * RDZV_HOST_MAX);
	if (slen >= 2 * RDZV_HOST_MAX)
		return gv_errf(err, errlen, "rendezvous address is too long");
	const char *h = s, *colon;
	size_t hlen;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close)
			return gv_errf(err, errlen, "rendezvous address %s: '[' without ']'", shown(s, sh));
		h = s + 1;
		hlen = (size_t)(close - h);
		if (hlen == 0 || !memchr(h, ':', hlen))
			return gv_errf(err, errlen, "rendezvous address %s: no IPv6 address in brackets", shown(s, sh));
		if (close[1] != ':')
			return gv_errf(err, errlen, "rendezvous address %s: want [IPV6]:PORT", shown(s, sh));
		colon = close + 1;
	} else {
		colon = strchr(s, ':');
		if (!colon)
			return gv_errf(err, errlen, "rendezvous address %s: no port (want HOST:PORT)", shown(s, sh));
		if (strchr(colon + 1, ':'))
			return gv_errf(err, errlen, "rendezvous address %s: write an IPv6 address as [ADDR]:PORT", shown(s, sh));
		hlen = (size_t)(colon - s);
	}
	if (hlen >= RDZV_HOST_MAX)
		return gv_errf(err, errlen, "rendezvous address %s: host is too long", shown(s, sh));
	if (!host_ok(h, hlen))
		return gv_errf(err, errlen, "rendezvous address %s: bad character in host", shown(s, sh));
	if (port_parse(colon + 1, port))
		return gv_errf(err, errlen, "rendezvous address %s: port must be 0 to 65535", shown(s, sh));
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (!strcmp(host, "*"))
		host[0] = '\0';
	return 0;
}

int rdzv_format_hostport(const char *host, int port, char *buf, size_t len)
{
	if (!host || !*host)
		return snprintf(buf, len, "*:%d", port);
	if (strchr(host, ':'))
		return snprintf(buf, len, "[%s]:%d", host, port);
	return snprintf(buf, len, "%s:%d", host, port);
}
