/*
 * real17.h - doubles read and printed exactly as strtod and printf("%.17g")
 * do, without their cost where the arithmetic fits 128-bit integers.
 *
 * `results export --format csv` prints a value and several params reals per
 * metric row (millions of rows): glibc's %.17g and strtod, which work in
 * multi-precision, were a quarter of its CPU.  These give the same double
 * and the same bytes (same digits, same rounding of a tie: to even), and
 * hand anything outside their range back to libc, so they can only be
 * faster, never different.  tests/unit/test_real17.c holds them to libc.
 */
#ifndef GPUVET_REAL17_H
#define GPUVET_REAL17_H

#include <stddef.h>
#include <stdint.h>

#define REAL17_BUF 32   /* the longest %.17g of a double is 24 bytes */

/* printf("%.17g", v) into buf (REAL17_BUF bytes, NUL-terminated); its length. */
int real17_print(double v, char *buf);

/*
 * The double strtod reads for (neg ? -1 : 1) * m * 10^e10, exactly: Clinger's fast path where m fits 2^53
 * and the power of ten is at most 22 (one multiplication or division of exact doubles rounds once), else
 * the product or quotient in 128-bit integers, rounded once to even (10^19 and below, 10^-21 and above):
 * 1 and *out, or 0 (the caller uses strtod).
 */
int real17_decimal(int neg, uint64_t m, int e10, double *out);

/*
 * A checked JSON number's text s..end read as strtod reads it, exactly, when it has at most 19
 * significant digits and real17_decimal takes its power of ten: 1 and *out, or 0 (the caller uses strtod).
 */
int real17_read_fast(const char *s, const char *end, double *out);

/* real17_read_fast, else strtod of the NUL-terminated s. */
double real17_read(const char *s, size_t n);

#endif
