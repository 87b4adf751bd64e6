/*
 * derive.h - raw in, derived here (issue 57): what can be computed from a
 * run's evidence is computed by gpuvet, once, by derive(), on `run`,
 * `results import`, `results merge` and a cluster's node imports (results/
 * calls it on every import: store_set_derive), and again when a stored run
 * is loaded to be judged (derive_load), so an old run gets a figure added
 * since.  Never read from a file:
 *
 *   the GPU model     its devices' name, memory and PCI device id (common/gpu_evidence.h)
 *   the GPU count     the inventory's GPUs, else run.gpu_count, else the highest index + 1
 *   pct_of_peak       gemm.<dtype>.tflops over the model's datasheet peak (common/gpus.h)
 *   pct_of_link       memcpy.h2d.pinned.gbps over the PCIe link it trained at: the copy's own
 *                     NVML reading (its row's gen and width), else the inventory's current link
 *   timing class      what a bench's rows show of how they were timed (timing_rows[] below)
 *   the flags         judge/flags.h flags_compute()
 *
 * A derived figure a file states otherwise (beyond rounding: DERIVE_REL_TOL, DERIVE_ABS_TOL) is refused at import,
 * naming the field, the file's value and gpuvet's; one gpuvet cannot derive (no model, no link) is
 * kept as not measured (null), never as the file says.  A percentage names the rate it is of
 * ("of" in its params: its companion), so nothing is matched by name.
 */
#ifndef GPUVET_DERIVE_H
#define GPUVET_DERIVE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct fprun;
struct store;

/*
 * Rounding: a file's figure within 1 % of gpuvet's, or 0.005 of it (two decimals), is
 * gpuvet's as printed (a hand-written 87 for 87.28); gpuvet itself writes %.17g.  The tolerance decides
 * only what is refused: what is stored and judged is gpuvet's own figure, never the file's.
 */
#define DERIVE_REL_TOL 0.01
#define DERIVE_ABS_TOL 0.005

#define DERIVE_REFUSE 0x1u    /* an import: a derived figure stated otherwise is refused */
#define DERIVE_FLAGS  0x2u    /* the flags too (the file's own replaced; its claims of codes the run has no evidence for kept) */

/* Derives r in place.  0, or -1 with one line in err (DERIVE_REFUSE only). */
int derive(struct fprun *r, unsigned how, char *err, size_t errlen);
/* What results/ calls on every import (store_set_derive): DERIVE_REFUSE | DERIVE_FLAGS. */
int derive_import(struct fprun *r, char *err, size_t errlen);
/*
 * A stored run as the judge and `cost --run` read it: loaded (store_load_run, parts as there) and
 * derived.  0 with *out (fprun_free it), or -1 with the store's error.
 */
int derive_load_run(struct store *s, int64_t run_id, unsigned parts, struct fprun **out);
/* The same written out as a fingerprint document (`run`'s in-hand fingerprint).  NULL with the store's error. */
json_t *derive_load(struct store *s, int64_t run_id, unsigned parts);
/* A fingerprint document decoded once into the typed run and derived (fprun_free it); NULL when not one. */
struct fprun *derive_from_json(const json_t *fp);
/* A fingerprint document derived (the in-memory one `run` holds): a new reference, NULL when not one. */
json_t *derive_json(const json_t *fp);
/*
 * The rate a derived percentage is of (its companion): "gemm.bf16.tflops" for
 * gemm.bf16.pct_of_peak, "memcpy.h2d.pinned.gbps" for memcpy.h2d.pct_of_link;
 * NULL when name is no derived figure.  Into buf.
 */
const char *derive_companion(const char *name, char *buf, size_t size);

#endif
