/*
 * fprun.h - a fingerprint decoded once into a typed run (issue 57): the run's
 * columns, its inventory's devices, its benches with their configs, its metric
 * rows with their parameters, its series as arrays of numbers, its flags and
 * verdicts.  The judge reads these fields, never a JSON tree asked by key.
 *
 * One reader fills it: fprun_decode() from the strict JSON reader's tree
 * (common/jtree.h: a file, an element of an import, a document of jansson's
 * written out once, fprun_from_json), and store_load_run() from the store's
 * rows (results/store_load_run.c), never through a JSON tree.  Its memory is
 * its rows: a metric is about 60 bytes and its parameters, a series 16
 * bytes a point, every name interned once in the run's arena.
 *
 * What gpuvet derives from the evidence (the GPU model, the one GPU count,
 * the percentages of a peak or a link, the soak's length, a bench's timing
 * class, the flags) is filled in by judge/derive.h's derive(), which owns
 * the rules; results/ only keeps the slots (struct fp_derived).
 */
#ifndef GPUVET_FPRUN_H
#define GPUVET_FPRUN_H

#include "common/jtree.h"
#include "common/mindex.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct gpu_ref;

/* A member of a params or config object, decoded by type. */
enum fp_vtype { FPV_NULL, FPV_FALSE, FPV_TRUE, FPV_NUM, FPV_STR, FPV_JSON };
struct fp_kv {
	const char *key;
	const char *str;      /* FPV_STR: the string; FPV_JSON (an object or array): its compact JSON text */
	double num;           /* FPV_NUM (FPV_TRUE 1, FPV_FALSE 0); NaN for anything else */
	uint8_t type;         /* enum fp_vtype */
	uint8_t is_int;       /* a number written without fraction or exponent (written back so) */
};
/* An object of members (a metric's params, a bench's config); present 0 when absent or null. */
struct fp_obj {
	const struct fp_kv *kv;
	uint32_t n;
	uint8_t present;
};

struct fp_head {
	long long id;          /* the store's run number; 0 when it has none (a file) */
	const char *uuid, *status, *profile, *version, *hostname, *started_at, *finished_at;
	const char *provider, *instance_type, *region;
	const char *gpu_model;   /* a label: never judged on (the model is derived from the devices) */
	int gpu_count;           /* as the file or the store says it; -1 when absent (fp_derived.ngpu is the one count) */
	int has_build;           /* run.gpuvet_build (issue 59): the build that measured it; 0 when the run has none */
	const char *build_commit, *build_at;   /* its commit and link time, NULL when unknown */
	int build_release;       /* 1: a release tarball's build */
};

/* One GPU of the inventory.  Numbers are NaN when the inventory does not give them. */
struct fp_gpu {
	int index;               /* its "index", else its place in the list */
	const char *name, *uuid, *vbios, *reference_model, *virt_mode, *ecc_current, *ecc_pending;
	double memory_bytes;
	long pci_device_id;      /* the PCI device id (0x2330 for an H100 SXM5), -1 when not given */
	double pcie_gen_max, pcie_width_max;   /* what GPU and slot can reach */
	double pcie_gen, pcie_width;           /* the link as trained when the inventory was taken */
	double max_sm_mhz;       /* max_clocks_mhz.sm: the SM clock it can reach (the report's clock chart) */
	double ecc_vol_unc, ecc_agg_unc, ecc_vol_cor;
	double remap_pending, remap_failure, retired_pending;
	double nvlink_active, nvlink_crc_flit, nvlink_crc_data, nvlink_recovery;
	const char *nvlink_errors;   /* the nvlink.errors object's JSON text, for evidence; NULL */
	int vgpu, mig;           /* a vGPU guest; MIG mode enabled (1), off (0) */
};

/* One hardware-log XID of inventory.xid_history.events; NaN for what it lacks. */
struct fp_xid {
	double xid, age_s, gpu;
};

struct fp_inventory {
	const char *text;        /* the inventory object as compact JSON (stored, and shown) */
	struct fp_gpu *gpus;
	size_t ngpus;
	const char *gpu_error, *driver_version;
	struct fp_xid *xids;
	size_t nxids;
	int has_xid_history;     /* inventory.xid_history.events is a list (the kernel log was read) */
};

struct fp_bench {
	const char *name, *status, *reason;
	double duration_s;       /* NaN: not given */
	struct fp_obj config;
	const char *timing;      /* derived (derive()): the class its figures were timed in, or NULL */
};

#define FPM_DERIVED 0x1u     /* computed by derive() from the run's evidence, never read from a file */
struct fp_metric {
	const char *bench, *name, *unit;
	int gpu;
	unsigned flags;          /* FPM_* */
	double value;            /* NaN: null, not measured */
	struct fp_obj params;
	const char *params_text; /* the params as read (compact JSON), written back as they were; NULL when derived */
	const char *of;          /* a derived figure: the metric it is a percentage of (its companion), or NULL */
};

struct fp_series {
	const char *bench, *name;
	int gpu;
	size_t n;
	double *xy;              /* x0, y0, x1, y1, ... in the order stored; NaN for a null */
};

struct fp_flag {
	const char *code, *severity, *message, *remediation;
	const char *evidence;    /* JSON text */
	int gpu;                 /* evidence.gpu, -1 for the instance */
};

struct fp_verdict {
	const char *verdict, *policy, *at, *digest, *source;
	const char *detail;      /* JSON text */
	int imported;
};

/* What derive() found; results/ keeps the slots, judge/derive.c the rules. */
enum fp_model_state { FP_MODEL_NONE = 0, FP_MODEL_RESOLVED, FP_MODEL_UNKNOWN };
struct fp_derived {
	int done;
	enum fp_model_state model_state;   /* NONE: no device listed; UNKNOWN: a device gpuvet cannot resolve */
	const struct gpu_ref *model;       /* the model its devices resolve to (RESOLVED only) */
	char model_why[256];               /* UNKNOWN: why, in words */
	int ngpu;                          /* the one GPU count */
	double soak_s;                     /* the soak's length in seconds (its evidence), 0 when it has none */
};

struct fp_arena;
struct fprun {
	struct fp_head run;
	struct fp_inventory inv;
	struct fp_bench *benches;
	size_t nbenches;
	struct fp_metric *metrics;
	size_t nmetrics, capmetrics;
	struct fp_series *series;
	size_t nseries;
	struct fp_flag *flags;
	size_t nflags, capflags;
	struct fp_verdict *verdicts;
	size_t nverdicts, capverdicts;
	struct fp_derived d;
	/* private to results/fprun*.c */
	struct fp_arena *arena;
	struct mindex mx;
	size_t mx_n;             /* metrics the index holds (it is rebuilt when rows were added) */
};

/* ---- reading it (results/fprun.c) ---- */

/* The first metric row of (name, gpu), or NULL; a lookup in an index built once. */
const struct fp_metric *fprun_metric(struct fprun *r, const char *name, int gpu);
/* 0 and *v when that row exists with a value, -1 otherwise. */
int fprun_value(struct fprun *r, const char *name, int gpu, double *v);
/* The series (bench, name, gpu), or NULL.  bench NULL: any bench's, the first stored. */
const struct fp_series *fprun_series(const struct fprun *r, const char *bench, const char *name, int gpu);
/* The bench row named name, or NULL. */
const struct fp_bench *fprun_bench(const struct fprun *r, const char *name);
/* The inventory's GPU of this index (its "index", else its place), or NULL. */
const struct fp_gpu *fprun_gpu(const struct fprun *r, int index);
/*
 * A member of an object read as a number: numbers, booleans (1/0), the words
 * enabled/yes/true/on (1) and disabled/no/false/off/none (0), numeric strings.
 * 0 with *v, or -1 when absent or none of those.
 */
int fp_obj_num(const struct fp_obj *o, const char *key, double *v);
/* A member's string (FPV_STR), or NULL. */
const char *fp_obj_str(const struct fp_obj *o, const char *key);
/* The member itself, or NULL. */
const struct fp_kv *fp_obj_get(const struct fp_obj *o, const char *key);

/* ---- building it ---- */

struct fprun *fprun_new(void);
void fprun_free(struct fprun *r);
/* A copy of s in the run's arena (interned: one copy of each text); NULL for NULL. */
const char *fprun_str(struct fprun *r, const char *s);
/* A copy of s in the run's arena, not interned (a text of its own, a row's params); NULL for NULL. */
const char *fprun_copy(struct fprun *r, const char *s);
/* n bytes of the run's arena, zeroed; freed with the run. */
void *fprun_alloc(struct fprun *r, size_t n);
/* A metric row appended (its strings interned); returns it. */
struct fp_metric *fprun_add_metric(struct fprun *r, const char *bench, const char *name, int gpu, double value,
				   const char *unit);
/* A flag appended (strings interned, evidence as JSON text). */
void fprun_add_flag(struct fprun *r, const char *code, const char *severity, const char *message,
		    const char *remediation, const char *evidence, int gpu);
/* A verdict appended. */
void fprun_add_verdict(struct fprun *r, const struct fp_verdict *v);
/* An object from members (copied into the arena). */
struct fp_obj fprun_obj(struct fprun *r, const struct fp_kv *kv, uint32_t n);
/* Says the metric rows were rewritten in place (removed, reordered): the index is built again when next asked. */
void fprun_reindex(struct fprun *r);
/* Removes every flag (the flags derive() computes replace them). */
void fprun_clear_flags(struct fprun *r);

/* ---- decoding (results/fprun_decode.c) ---- */

/*
 * The fingerprint at node fp of t (fp_check has passed on it, or the caller
 * takes what a tree of any shape decodes to: a field of the wrong type reads
 * as absent).  A new run; never NULL.
 */
struct fprun *fprun_decode(const struct jtree *t, uint32_t fp);
/* The same from a jansson document (written out once and read back by the one reader); NULL when not an object. */
struct fprun *fprun_from_json(const json_t *fp);
/* An object's members decoded (a config, params). */
struct fp_obj fprun_decode_obj(struct fprun *r, const struct jtree *t, uint32_t o);

/* ---- writing it out (results/fprun_json.c) ---- */

/*
 * The run as a fingerprint document (the shape store_load_fingerprint gives); a new reference.
 * Where derive() ran, a bench's config says the timing class it derived, not the file's.
 */
json_t *fprun_to_json(const struct fprun *r);
/*
 * The run as a fingerprint document written to f a row at a time (`results show`): the same
 * document as fprun_to_json's, never whole in memory; a row a line.  0, or -1 on a write error.
 */
int fprun_write(const struct fprun *r, FILE *f);
/* An object's members as a JSON object (a new reference), json null when it is absent (the report shows it). */
json_t *fprun_obj_json(const struct fp_obj *o);
/* An object's members as compact JSON text (malloc'd), NULL when it is absent. */
char *fprun_obj_text(const struct fp_obj *o);

#endif
