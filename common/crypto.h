/*
 * crypto.h - the digests, MAC and encoding gpuvet needs, through libcrypto
 * (OpenSSL, already linked through libcurl): SHA-1 and HMAC-SHA1 for
 * Alibaba Cloud request signing (pricing/fetch_alibaba.c), SHA-256 and
 * base64 for the report's Content-Security-Policy (reports/sha256.c);
 * HMAC-SHA256, a constant-time comparison and random bytes for the cluster
 * rendezvous' per-job secret (platform/rendezvous_wire.c).
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
/* HMAC-SHA256 (RFC 2104) of data under key; a key of length 0 is allowed (an unauthenticated run). */
void gv_hmac_sha256(const void *key, size_t klen, const void *data, size_t len, uint8_t out[32]);
/* The same over the concatenation of n parts (part[i], len[i]), without copying them into one. */
void gv_hmac_sha256_parts(const void *key, size_t klen, const void *const *part, const size_t *len, size_t n,
			  uint8_t out[32]);
/* 1 when the n bytes of a and b are equal, in a time that does not depend on where they differ. */
int gv_mem_equal(const void *a, const void *b, size_t n);
/* n bytes from the system's cryptographic random source (libcrypto's RAND_bytes); -1 when it has none. */
int gv_random_bytes(void *out, size_t n);
/* RFC 4648 base64 with padding of n bytes into out (at least 4*((n+2)/3)+1 bytes); returns strlen(out). */
size_t gv_base64(const uint8_t *in, size_t n, char *out);

#ifdef __cplusplus
}
#endif
#endif
