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

#define REAL17_BUF 32   /* the longest %.17g of a double is 24 bytes */

/* printf("%.17g", v) into buf (REAL17_BUF bytes, NUL-terminated); its length. */
int real17_print(double v, char *buf);

/*
 * A checked JSON number's text s..end read as strtod reads it, exactly, when
 * its digits fit 2^53 and its power of ten is at most 22 (Clinger's fast path:
 * one multiplication or division of exact doubles rounds once, correctly):
 * 1 and *out, or 0 (the caller uses strtod).
 */
int real17_read_fast(const char *s, const char *end, double *out);

/* real17_read_fast, else strtod of the NUL-terminated s. */
double real17_read(const char *s, size_t n);

#endif
