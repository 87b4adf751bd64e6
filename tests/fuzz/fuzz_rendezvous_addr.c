/*
 * fuzz_rendezvous_addr.c - the rendezvous's HOST:PORT parser
 * (platform/rendezvous_addr.c) on any bytes.
 *
 * Invariants: a refusal says why in one line; an accepted address has a
 * port in 0..65535 and a host with no bracket, slash, space or control
 * byte, and what rdzv_format_hostport writes of it parses back to the same
 * host and port.
 *
 * Seeds (corpus/fuzz_rendezvous_addr/): the forms --rendezvous takes (IPv4,
 * [IPv6], a name, "*"), and a bare IPv6 address it refuses.
 */
#include "platform/rendezvous.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char *s = malloc(n + 1);
	if (!s)
		return 0;
	memcpy(s, d, n);
	s[n] = '\0';   /* the parser takes C text: an inner NUL ends it */
	char host[RDZV_HOST_MAX], err[256], buf[2 * RDZV_HOST_MAX + 16];
	int port = -1;
	err[0] = '\0';
	if (rdzv_parse_hostport(s, host, &port, err, sizeof err)) {
		if (!err[0] || strchr(err, '\n'))
			abort();
	} else {
		if (port < 0 || port > 65535 || strlen(host) >= RDZV_HOST_MAX || strpbrk(host, "[]/ \t\r\n"))
			abort();
		for (const char *p = host; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
				abort();
		int w = rdzv_format_hostport(host, port, buf, sizeof buf);
		char h2[RDZV_HOST_MAX];
		int p2 = -1;
		if (w < 0 || (size_t)w >= sizeof buf || rdzv_parse_hostport(buf, h2, &p2, err, sizeof err) ||
		    strcmp(h2, host) || p2 != port)
			abort();
	}
	free(s);
	return 0;
}
