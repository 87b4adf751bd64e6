/*
 * import_rows.h - private to results/: a fingerprint turned into the rows an
 * import writes (results/import_rows.c builds them, store_import.c writes them).
 *
 * Building touches no store, so `results import` does it in its parse-ahead
 * thread (common/jsplit.h) while the storing thread only binds and steps:
 * the checks (fp_check), the tree lookups, the texts of nested objects and the
 * packed points are off the thread that the import waits on.
 *
 * Strings point into the parsed tree, which lives as long as the rows.
 */
#ifndef GPUVET_IMPORT_ROWS_H
#define GPUVET_IMPORT_ROWS_H

#include "results/store.h"
#include "results/store_int.h"

#include <stddef.h>

struct ir_gpu {
	long long idx;
	const char *name, *uuid, *reference_model;
};

struct ir_bench {
	const char *name, *status, *reason;
	double duration_s;       /* NaN: absent or null */
	char *config;            /* compact JSON, or NULL */
};

struct ir_metric {
	const char *bench, *name, *unit;
	int gpu;
	double value;            /* NaN: null */
	char *params;
};

struct ir_series {
	const char *bench, *series;
	int gpu;
	unsigned char *blob;     /* STORE_POINT_BYTES a point; handed to the store when written */
	size_t n;
};

struct ir_flag {
	const char *code, *severity, *message, *remediation;
	char *evidence;
};

struct ir_verdict {
	struct sto_verdict v;
	char *detail;
};

struct store_import_rows {
	/*
	 * A refusal found while building: `early` ones (not a fingerprint, fp_check) are said
	 * before anything is written; a `late` one (an element without what it needs) once the
	 * run's own row is in, as the writes always found it (a stored uuid is "already present").
	 */
	int early, late;
	char err[512];
	const char *uuid, *status, *profile, *version, *hostname, *provider, *itype, *region, *gpu_model;
	const char *started, *finished;    /* as UTC instants when they parse, else the text as given */
	char started_utc[48], finished_utc[48];
	int gpu_count;
	int has_build, build_release;      /* run.gpuvet_build, when the fingerprint has one */
	const char *build_commit, *built_at;
	char *inventory;
	size_t ngpus, nbenches, nmetrics, nseries, nflags, nverdicts;
	struct ir_gpu *gpus;
	struct ir_bench *benches;
	struct ir_metric *metrics;
	struct ir_series *series;
	struct ir_flag *flags;
	struct ir_verdict *verdicts;
	struct fprun *run;         /* decoded and derived (store_set_derive): its metrics and flags are the rows */
};

#endif
