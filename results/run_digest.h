/*
 * run_digest.h - one uuid, one run: what a run measured, as a digest, so
 * that an import or merge can tell a second copy of a stored run from a
 * different run under the same uuid (a cloned image, a replayed or edited
 * file).
 *
 * The digest is SHA-256 over sorted lines: the run's identity (uuid,
 * hostname, provider, instance type, region, GPU model and count, profile,
 * start time in UTC) and, when whole, each bench (name, status) and each
 * metric (bench, name, GPU, value to 17 digits, unit).  It leaves out what
 * a store adds or judges on its own (the run's id and status, the finish
 * time, flags, verdicts, tags, the percentages gpuvet derives: *.pct_of_*)
 * and the samples.  Computed on the fly from a
 * fingerprint (as store_load_fingerprint gives it or as a file holds it):
 * nothing of it is stored.
 */
#ifndef GPUVET_RUN_DIGEST_H
#define GPUVET_RUN_DIGEST_H

#include <jansson.h>

#define RUN_DIGEST_HEX 65   /* 64 hex digits and a NUL */

void run_digest(const json_t *fp, int whole, char out[RUN_DIGEST_HEX]);

#endif
