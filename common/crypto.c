/* crypto.c - see crypto.h; every primitive is libcrypto's. */
#include "common/crypto.h"

#include <limits.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>

/* A digest failure means libcrypto itself is broken (no provider): there is nothing sane to go on with. */
static void digest(const EVP_MD *md, const void *data, size_t len, uint8_t *out)
{
	if (!EVP_Digest(data, len, out, NULL, md, NULL))
		abort();
}

void gv_sha1(const void *data, size_t len, uint8_t out[20])
{
	digest(EVP_sha1(), data, len, out);
}

void gv_sha256(const void *data, size_t len, uint8_t out[32])
{
	digest(EVP_sha256(), data, len, out);
}

void gv_hmac_sha1(const void *key, size_t klen, const void *data, size_t len, uint8_t out[20])
{
	uint8_t kd[20];
	unsigned int n = 20;
	/* RFC 2104: a key longer than the block is hashed first (libcrypto does it too; this keeps klen in int range) */
	if (klen > INT_MAX) {
		gv_sha1(key, klen, kd);
		key = kd;
		klen = sizeof kd;
	}
	if (!HMAC(EVP_sha1(), key, (int)klen, data, len, out, &n) || n != 20)
		abort();
}

size_t gv_base64(const uint8_t *in, size_t n, char *out)
{
	/* EVP_EncodeBlock takes an int: whole groups of 3 bytes at a time encode the same as all at once */
	enum { CHUNK = 3 * (1 << 20) };
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n; i += CHUNK) {
		int len = (int)(n - i < CHUNK ? n - i : CHUNK);
		o += (size_t)EVP_EncodeBlock((unsigned char *)out + o, in + i, len);
	}
	return o;
}
