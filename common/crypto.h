/*
 * crypto.h - the digests, MAC and encoding gpuvet needs, through libcrypto
 * (OpenSSL, already linked through libcurl): SHA-1 and HMAC-SHA1 for
 * Alibaba Cloud request signing (pricing/fetch_alibaba.c), SHA-256 and
 * base64 for the report's Content-Security-Policy (reports/sha256.c).
 * No hand-written cryptography on a credential path.
 */
#ifndef GPUVET_CRYPTO_H
#define GPUVET_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void gv_sha1(const void *data, size_t len, uint8_t out[20]);
void gv_sha256(const void *data, size_t len, uint8_t out[32]);
/* HMAC-SHA1 (RFC 2104) of data under key. */
void gv_hmac_sha1(const void *key, size_t klen, const void *data, size_t len, uint8_t out[20]);
/* RFC 4648 base64 with padding of n bytes into out (at least 4*((n+2)/3)+1 bytes); returns strlen(out). */
size_t gv_base64(const uint8_t *in, size_t n, char *out);

#ifdef __cplusplus
}
#endif
#endif
