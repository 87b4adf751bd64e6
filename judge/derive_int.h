/*
 * derive_int.h - private to judge/derive*.c: the table of derived figures
 * and the parts derive() calls down to (derive_pct.c: the percentages;
 * derive_flags: the flags).
 */
#ifndef GPUVET_DERIVE_INT_H
#define GPUVET_DERIVE_INT_H

#include <stddef.h>

struct fprun;

enum derive_rule { DERIVE_PCT_OF_PEAK = 1, DERIVE_PCT_OF_LINK };
/* A derived percentage: its name, the rate it is of (a '*' the same word in both), and its rule. */
struct derive_row {
	const char *name, *of;
	enum derive_rule rule;
};
extern const struct derive_row derive_rows[];   /* ended by { NULL } */

/* Every derived percentage of r computed from its rates; the file's rows of them checked (how) and replaced. */
int derive_percentages(struct fprun *r, unsigned how, char *err, size_t errlen);
/* r's flags computed (flags_compute), with the file's claims of codes it has no evidence for kept. */
void derive_flags(struct fprun *r);

#endif
