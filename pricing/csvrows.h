/*
 * csvrows.h - a streaming CSV reader: libcsv underneath, whole rows out.
 *
 * Bytes are fed in chunks of any size (a libcurl write callback, a read()
 * loop); complete records come out through a callback with their fields
 * and the physical line on which they start.  Memory is bounded by the
 * longest record (CSVROWS_MAX_RECORD), never by the input: a 2 GB file is
 * read with the same few kilobytes as a 2 kB one.
 *
 * Parsing is strict (libcsv CSV_STRICT | CSV_STRICT_FINI): a stray quote or
 * an unterminated quoted field is an error naming the line.
 *
 * Optional prefilters let a caller skip lines cheaply: a line that starts at
 * a record boundary, has balanced quotes and lacks a needle (or certainly
 * fails a field prefilter) is counted but not parsed.  The AWS fetcher uses it to skip the millions
 * of non-GPU rows of the bulk price list without running libcsv on them.
 */
#ifndef GPUVET_CSVROWS_H
#define GPUVET_CSVROWS_H

#include <stdarg.h>
#include <stddef.h>

#define CSVROWS_MAX_RECORD (1u << 20)  /* bytes in one record (line or quoted multi-line) */
#define CSVROWS_MAX_FIELDS 4096

struct csvrows;

/*
 * One record: n fields, each NUL-terminated (lens[i] excludes the NUL).
 * Returns 0 to go on; anything else stops the feed, which then returns -1
 * (the callback sets its own message with csvrows_set_error()).
 */
typedef int (*csvrows_row_fn)(void *ud, char **fields, const size_t *lens, size_t n, long line);

struct csvrows *csvrows_new(csvrows_row_fn fn, void *ud);
void csvrows_free(struct csvrows *r);

/* Lines at a record boundary that lack needle (and have an even number of quotes) are skipped. NULL: off. */
void csvrows_set_prefilter(struct csvrows *r, const char *needle);
/* Further needles a line must also contain not to be skipped (checked per line, after the first). */
void csvrows_add_prefilter(struct csvrows *r, const char *needle);

/*
 * A line at a record boundary whose field col (0-based) certainly is not
 * value is skipped.  "Certainly": the line is read only when it is plain
 * (quoted fields without inner quotes, unquoted fields without quotes or
 * edge blanks, no bare CR); any other line is left to libcsv.  Up to 8, on
 * distinct columns.  0, or -1 when full or the column already has one.
 */
int csvrows_add_field_prefilter(struct csvrows *r, size_t col, const char *value);

/* The prefilter's scan code on this CPU: "avx2", "sse2" or "portable". */
const char *csvrows_simd(void);
/* Tests and fuzzing: use this scan code from now on, process-wide (not thread-safe). 0, or -1 when the CPU lacks it. */
int csvrows_force_simd(const char *name);

/* 0, or -1 with csvrows_error() set. */
int csvrows_feed(struct csvrows *r, const void *buf, size_t len);
/* End of input: flushes the last record (a missing final newline is fine). */
int csvrows_finish(struct csvrows *r);

/*
 * For a parser with a sticky failure flag and its own message: feeds buf
 * (buf NULL: finishes) unless *failed.  0 ok, else -1; when csvrows itself
 * fails (not the row callback, which words its own), *failed is set and
 * err gets "WHAT 'NAME' line N: what" ("WHAT line N: what" when name is NULL).
 */
int csvrows_step(struct csvrows *r, const void *buf, size_t len, int *failed, char *err, size_t errlen,
		 const char *what, const char *name);

/* "line N: what" of the first error (no file name). */
const char *csvrows_error(const struct csvrows *r);
void csvrows_set_error(struct csvrows *r, long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * A parser's first error, kept: unless *failed, sets it and writes "WHERE: message"
 * (fmt and ap) into err.  The catalog and the AWS parsers word their errors through it.
 */
void csvrows_first_error(int *failed, char *err, size_t errlen, const char *where, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

/* Physical lines seen, records delivered, lines skipped by the prefilter, bytes fed. */
long csvrows_lines(const struct csvrows *r);
long csvrows_records(const struct csvrows *r);
long csvrows_skipped(const struct csvrows *r);
unsigned long long csvrows_bytes(const struct csvrows *r);

#endif
