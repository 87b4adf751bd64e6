/*
 * fuzz_real17.c - common/real17.h against glibc.
 *
 * Invariants: the first 8 bytes, as a double, print with real17_print
 * exactly as printf("%.17g") prints them; the whole input, when it is a
 * JSON number (the checked form real17_read_fast is given), reads with
 * real17_read as the same double, bit for bit, as strtod reads it.
 *
 * Seeds (corpus/fuzz_real17/): doubles and numbers the export prints and
 * reads (a TFLOP/s value, a tie, a power of ten, a spread as stored).
 */
#include "common/real17.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

/* A JSON number, as jansson's lexer (and jcanon's) checks it. */
static int json_number(const char *s, size_t n)
{
	size_t i = 0;
	if (i < n && s[i] == '-')
		i++;
	if (i >= n || s[i] < '0' || s[i] > '9')
		return 0;
	if (s[i] == '0')
		i++;
	else
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	if (i < n && s[i] == '.') {
		if (++i >= n || s[i] < '0' || s[i] > '9')
			return 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || s[i] < '0' || s[i] > '9')
			return 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return i == n;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n >= 8) {
		double v;
		char want[64], got[REAL17_BUF];
		memcpy(&v, d, sizeof v);
		snprintf(want, sizeof want, "%.17g", v);
		if (real17_print(v, got) != (int)strlen(want) || strcmp(want, got))
			abort();
	}
	if (n < 64 && json_number((const char *)d, n)) {
		char t[64];
		memcpy(t, d, n);
		t[n] = 0;
		double want = strtod(t, NULL), got = real17_read(t, n);
		if (memcmp(&want, &got, sizeof want))
			abort();
	}
	return 0;
}
