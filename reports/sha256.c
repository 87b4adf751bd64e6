/* sha256.c - see sha256.h; the digest and the encoding are libcrypto's (common/crypto.h). */
#include "reports/sha256.h"
#include "common/crypto.h"

#include <stdio.h>

void sha256_digest(const void *data, size_t n, uint8_t out[32])
{
	gv_sha256(data, n, out);
}

size_t sha256_base64(const uint8_t *d, size_t n, char *out, size_t cap)
{
	if (cap < 4 * ((n + 2) / 3) + 1) {
		if (cap)
			out[0] = 0;
		return 0;
	}
	return gv_base64(d, n, out);
}

void sha256_csp_source(const char *data, size_t n, char *out, size_t cap)
{
	uint8_t dg[32];
	char b64[48];

	sha256_digest(data, n, dg);
	sha256_base64(dg, sizeof dg, b64, sizeof b64);
	snprintf(out, cap, "sha256-%s", b64);
}
