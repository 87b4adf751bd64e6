/*
 * util.h - small helpers shared by runners, results, pricing and reports:
 * error reporting in the project's one-line style, checked allocation,
 * strict number parsing (no atoi), file reading.
 */
#ifndef GPUVET_UTIL_H
#define GPUVET_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes of the gpuvet command (DESIGN.md). */
enum gv_exit {
	GV_EXIT_OK = 0,            /* ok / accepted */
	GV_EXIT_REJECT = 1,        /* rejected by the acceptance policy */
	GV_EXIT_USAGE = 2,         /* usage or input error */
	GV_EXIT_UNMEASURABLE = 3,  /* could not measure what the policy requires */
};

#define GPUVET_VERSION "0.1.0"

extern int gv_verbose;  /* -v */
extern int gv_quiet;    /* -q */

/* "gpuvet: <message>\n" on stderr; message lowercase, no trailing period. */
void gv_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, only with -v. */
void gv_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Abort with a message on allocation failure. */
void *gv_malloc(size_t n);
void *gv_calloc(size_t n, size_t size);
void *gv_realloc(void *p, size_t n);
char *gv_strdup(const char *s);
/* FNV-1a of a string, for hash tables keyed by text. */
uint64_t gv_hash_str(const char *s);
/* malloc'd printf. */
char *gv_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message into err[errlen] (err may be NULL); returns -1, for `return gv_errf(err, errlen, ...)`. */
int gv_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "fingerprint: " and the message into err[errlen] (an imported fingerprint refused); returns -1. */
int gv_fp_refuse(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * The one number parser of every command and input: the whole string, in decimal (digits, a sign,
 * a point, an exponent: "8192", "1e9", "-2.5"), never hex, inf, nan or spaces; 0 on success, -1
 * otherwise.  gv_parse_long: an integer in [min, max], no exponent; gv_parse_double: any finite
 * number; gv_parse_number: one in [min, max], and whole when WHOLE ("1e9" is whole).
 */
int gv_parse_long(const char *s, long min, long max, long *out);
int gv_parse_double(const char *s, double *out);
int gv_parse_number(const char *s, double min, double max, int whole, double *out);
/* v truncated to an int, or dflt when it is NaN or out of int's range (a plain cast would be undefined). */
int gv_to_int(double v, int dflt);

/* Reads a whole file (NUL-terminated); NULL with errno set on failure. */
char *gv_read_file(const char *path, size_t *len);
/* The same, stopping after max bytes (a /dev/zero or a pipe ends there). */
char *gv_read_file_max(const char *path, size_t max, size_t *len);

/* Copies at most size-1 bytes and terminates; returns strlen(src). */
size_t gv_strlcpy(char *dst, const char *src, size_t size);

/*
 * text with its credentials hidden, for every message that may quote a URL
 * (errors, stored price-source messages, the report): the userinfo of any
 * scheme://user:pass@host, and the value of every query parameter that
 * carries a credential (AccessKeyId, Signature, X-Amz-Credential,
 * X-Amz-Signature, X-Amz-Security-Token, SecurityToken, token, key, secret,
 * password, api_key, and any name holding one of those words), each
 * replaced by "***".  Returns out (truncated to size); out may not be text.
 */
const char *gv_redact(const char *text, char *out, size_t size);

/* Levenshtein distance, case-insensitive, for "did you mean" hints; SIZE_MAX when a string exceeds 255 bytes. */
size_t gv_edit_distance(const char *a, const char *b);
/* Of cands[0..n), the one closest to s by gv_edit_distance, when within max(2, strlen(s) / 4); else NULL. */
const char *gv_closest(const char *s, const char *const *cands, size_t n);

/* ISO 8601 UTC "2026-11-21T04:22:28Z" of a time_t into buf (>= 21 bytes). */
void gv_iso8601(long t, char *buf, size_t size);

/* Random UUID v4 text (37 bytes with NUL). */
void gv_uuid(char out[37]);

/* True when stderr is a terminal and -q was not given: show progress. */
int gv_progress_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
