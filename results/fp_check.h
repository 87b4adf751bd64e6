/*
 * fp_check.h - a fingerprint from outside (results import, merge) checked
 * against the fingerprint schema before anything of it is stored.
 */
#ifndef GPUVET_FP_CHECK_H
#define GPUVET_FP_CHECK_H

#include "common/jtree.h"

#include <stddef.h>
#include <stdint.h>

#define FP_MAX_GPU_INDEX 1023   /* a GPU index (metrics, samples, inventory) is -1..this */
#define FP_MAX_GPU_COUNT 1024
#define FP_MAX_STRING (1u << 20)  /* bytes of any one text field (a 100 MB field is refused, not stored) */

/*
 * 0 when the object fp of t follows the schema: run.status complete|incomplete|running,
 * started_at (and finished_at) ISO-8601 UTC times, gpu_count an integer
 * 0..FP_MAX_GPU_COUNT, identities (provider, instance_type, region,
 * hostname, gpu_model, profile) printable UTF-8 (common/ident.h), every
 * list a list, every GPU index in range, names of benches, metrics, series
 * and flags identities, no text longer than FP_MAX_STRING.  Else -1 with one
 * line in err naming the field.
 */
int fp_check(const struct jtree *t, uint32_t fp, char *err, size_t errlen);

/*
 * The same rules for the rows of a bench kept aside while the store was busy
 * (results/store_pending.c: {"t":"metric",name,gpu,value,unit,params} and
 * {"t":"sample",series,gpu,x,y}): every row an object, names identities,
 * GPU indexes in range, values numbers or null, no text longer than
 * FP_MAX_STRING.  0, or -1 with one line in err naming the row.
 */
int fp_check_kept_rows(const struct jtree *t, uint32_t rows, char *err, size_t errlen);

/*
 * The times (results/fp_time.c).  1 when s is "YYYY-MM-DDTHH:MM:SS[.fff]Z"
 * or with a +HH:MM / -HH:MM offset, with valid ranges.
 */
int fp_iso8601(const char *s);
/*
 * A time fp_iso8601 accepts, as the same instant in UTC ("...Z", its
 * fraction kept), so that stored times order as instants whatever offset
 * the writer used.  0, or -1 (out untouched) when s is not such a time.
 */
int fp_iso8601_utc(const char *s, char *out, size_t size);
/* A run's uuid: lowercase 8-4-4-4-12 hex digits, not the nil uuid. */
int fp_uuid_ok(const char *u);

/*
 * 0 when fp's rows agree (results/fp_rows.c): run.gpu_count equal to the
 * inventory's gpus when both are given; run.gpu_model and each GPU's
 * reference_model the model its device resolves to (fp_device_model), no
 * model named that no device shows; started_at and finished_at neither more
 * than FP_MAX_FUTURE_S ahead of this machine's clock nor before the model
 * was announced; then fp_check_benches.  Else -1 with one line in err.
 * fp_check() calls it last.
 */
int fp_check_rows(const struct jtree *t, uint32_t fp, char *err, size_t errlen);

/* How far ahead of this machine's clock a run may say it started: a day (clocks drift, zones differ). */
#define FP_MAX_FUTURE_S 86400

struct gpu_ref;
/*
 * One stored date (field names it: "run.started_at") that fp_iso8601 accepts, checked as a run's
 * are: not more than FP_MAX_FUTURE_S ahead of this machine's clock, not before model (NULL: any)
 * was announced.  0 (also for a text that is no such date: its syntax is checked apart), or -1
 * with one line in err.  fp_check_rows and `cluster import` (a cluster run's start) call it.
 */
int fp_check_time(const char *field, const char *s, const struct gpu_ref *model, char *err, size_t errlen);

/*
 * The model gpu (a node of inventory.gpus) is: its NVML name held to its
 * memory and PCI device id (common/gpu_evidence.h gpu_resolve_device, as
 * `gpuvet run` resolves it): an enum gpu_evidence, *ref set when resolved,
 * why in words otherwise.
 */
struct gpu_ref;
int fp_device_model(const struct jtree *t, uint32_t gpu, const struct gpu_ref **ref, char *why, size_t whylen);

/*
 * The checks that need what the benches declare (their metrics, bounds and
 * config values: benches/bench.h bench_fp_check), which results/ may not
 * read (benches are its peer): the program hands the function over once,
 * before any import (runners/main.c, the fuzz targets, unit tests that
 * import), and fp_check_rows() calls it last.  Unset, they are skipped.
 */
typedef int (*fp_bench_check_fn)(const struct jtree *t, uint32_t fp, char *err, size_t errlen);
void fp_check_set_bench_check(fp_bench_check_fn fn);
int fp_check_benches(const struct jtree *t, uint32_t fp, char *err, size_t errlen);

#endif
