/* crypto.c - see crypto.h; every primitive is libcrypto's. */
#include "common/crypto.h"

#include <limits.h>
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <openssl/rand.h>
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

void gv_hmac_sha256_parts(const void *key, size_t klen, const void *const *part, const size_t *len, size_t n,
			  uint8_t out[32])
{
	static const uint8_t none[1];
	size_t olen = 0;
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
				OSSL_PARAM_construct_end() };
	int ok = ctx && EVP_MAC_init(ctx, klen ? key : none, klen, params);
	for (size_t i = 0; ok && i < n; i++)
		ok = !len[i] || EVP_MAC_update(ctx, part[i], len[i]);
	ok = ok && EVP_MAC_final(ctx, out, &olen, 32) && olen == 32;
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	if (!ok)
		abort();
}

void gv_hmac_sha256(const void *key, size_t klen, const void *data, size_t len, uint8_t out[32])
{
	const void *part[1] = { data };
	gv_hmac_sha256_parts(key, klen, part, &len, 1, out);
}

int gv_mem_equal(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

int gv_random_bytes(void *out, size_t n)
{
	return n > INT_MAX || RAND_bytes(out, (int)n) != 1 ? -1 : 0;
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
