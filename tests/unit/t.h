/*
 * t.h - a minimal unit-test harness: CHECK() records a failure with
 * file:line and goes on; TEST_MAIN runs the listed functions and prints
 * "N passed, N failed", exiting 1 on any failure.  Each tests/unit/test_*.c
 * becomes one binary, run by tests/test_unit.py (plain and under ASan+UBSan).
 */
#ifndef GPUVET_T_H
#define GPUVET_T_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int t_failed_checks;
static int t_cur_failed;

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
	t_failed_checks++; t_cur_failed = 1; } } while (0)
#define CHECK_STR(a, b) do { const char *t_a = (a), *t_b = (b); \
	if (!t_a || !t_b || strcmp(t_a, t_b)) { \
	fprintf(stderr, "%s:%d: check failed: %s == %s ('%s' vs '%s')\n", __FILE__, __LINE__, \
		#a, #b, t_a ? t_a : "(null)", t_b ? t_b : "(null)"); \
	t_failed_checks++; t_cur_failed = 1; } } while (0)
#define CHECK_NEAR(a, b, eps) do { double t_a = (a), t_b = (b); \
	if (!(fabs(t_a - t_b) <= (eps))) { \
	fprintf(stderr, "%s:%d: check failed: %s ~= %s (%g vs %g)\n", __FILE__, __LINE__, \
		#a, #b, t_a, t_b); t_failed_checks++; t_cur_failed = 1; } } while (0)

typedef void (*t_fn)(void);
struct t_case { const char *name; t_fn fn; };
#define T(fn) { #fn, fn }

#define TEST_MAIN(...) \
int main(void) { \
	static const struct t_case cases[] = { __VA_ARGS__ }; \
	int passed = 0, failed = 0; \
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) { \
		t_cur_failed = 0; cases[i].fn(); \
		if (t_cur_failed) { failed++; fprintf(stderr, "FAIL %s\n", cases[i].name); } \
		else passed++; \
	} \
	printf("%d passed, %d failed\n", passed, failed); \
	return failed ? 1 : 0; \
}

#endif
