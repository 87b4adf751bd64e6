/*
 * sha256.h - SHA-256 (FIPS 180-4) and base64, for the report's
 * Content-Security-Policy: the inline <style> and <script> are allowed by
 * their hashes ('sha256-BASE64'), so nothing else can run or style the page.
 */
#ifndef GPUVET_SHA256_H
#define GPUVET_SHA256_H

#include <stddef.h>
#include <stdint.h>

void sha256_digest(const void *data, size_t n, uint8_t out[32]);
/* Standard base64 with padding; out needs 4*ceil(n/3)+1 bytes. Returns strlen(out). */
size_t sha256_base64(const uint8_t *data, size_t n, char *out, size_t cap);
/* "sha256-BASE64" of data into out (>= 52 bytes). */
void sha256_csp_source(const char *data, size_t n, char *out, size_t cap);

#endif
