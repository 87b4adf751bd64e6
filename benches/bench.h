/*
 * bench.h - the contract between the run harness and a bench.
 *
 * A bench is one file in benches/ that exports one `struct bench` (an ops
 * table, as fio's ioengines) and is listed in benches/registry.c.  The
 * harness (runners/run.c) runs every bench in its own child process with a
 * deadline; inside the child the bench reports through the bench_* calls
 * below, which write JSON lines to a pipe that the parent reads and commits
 * to the store.  A bench never prints the final table and never touches the
 * database, pricing or reports.
 *
 * Adding a bench: write benches/NAME.c (or .cu), fill a `struct bench` with
 * designated initialisers at the bottom of the file, its metric rows
 * (struct metric_info) in .metrics, add one line to benches/registry.c, and
 * one test.  The Makefile picks the file up by wildcard.
 */
#ifndef GPUVET_BENCH_H
#define GPUVET_BENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes of probe() and run(). */
enum bench_status {
	BENCH_OK = 0,        /* measured */
	BENCH_SKIP = 1,      /* cannot run here (no GPU, no fio, no endpoint); reason given */
	BENCH_FAIL = 2,      /* tried and failed (CUDA error, wrong result); reason given */
};

/* struct bench.flags */
#define BENCH_NEEDS_GPU   0x1u  /* skipped when no GPU is visible */
#define BENCH_TEST_ONLY   0x2u  /* only selectable with GPUVET_TEST_BENCHES=1; never a measurement */
#define BENCH_DEFAULT_OFF 0x4u  /* not in a profile's default set; only by --bench */

enum bench_profile { PROFILE_QUICK = 0, PROFILE_STANDARD = 1, PROFILE_FULL = 2 };

/* Everything a bench may be configured with (from `gpuvet run` flags). */
struct bench_config {
	enum bench_profile profile;
	int soak_seconds;               /* 0: the profile's default */
	const char *nvme_dir;           /* NULL: choose */
	const char *nvme_device;        /* NULL: never touch a block device */
	int nvme_allow_destructive;
	const char *objstore_url;       /* s3://bucket/key or http(s)://... ; NULL: skip */
	const char *objstore_endpoint;  /* S3-compatible endpoint URL, NULL: AWS */
	int objstore_concurrency;       /* 0: default */
	int verbose;
};

struct bench_ctx;   /* opaque; owned by the harness */

/*
 * What a metric is, declared once beside the bench that makes it (fio's
 * options-as-data): rank, the report, the acceptance policy read these
 * rows instead of lists of their own.  A name may hold one '*' standing for
 * one dotted word ("gemm.*.tflops": any dtype).
 */
#define METRIC_RANKABLE        0x1u  /* a throughput: ranked per dollar */
#define METRIC_PER_GPU         0x2u  /* the instance row (gpu -1) is per GPU or link (a median), not a total */
#define METRIC_LOWER_IS_BETTER 0x4u  /* latencies, error counts, drops */
/*
 * Its spread from one run to the next on one machine is known to be small (measured: GEMM's CV
 * under 1 %, pinned H2D/D2H 0.8 to 4.8 %, tests/fixtures/gpu/h100-2026-11-26): a figure a node can
 * be called a straggler on (judge/cluster_nodes.c).  Other figures count there only when their
 * params say they were measured more than once.
 */
#define METRIC_LOW_SPREAD      0x8u

/* What a metric is compared with in the GPU reference table (common/gpus.h). */
enum metric_peak {
	METRIC_PEAK_NONE = 0,
	METRIC_PEAK_GEMM,        /* the dtype's dense peak x GPUs (gpu_pct_of_peak) */
	METRIC_PEAK_PCIE,        /* the PCIe link rate, one direction */
	METRIC_PEAK_PCIE_BIDIR,  /* the PCIe link rate, both directions */
	METRIC_PEAK_NVLINK,      /* NVLink bandwidth per direction */
	METRIC_PEAK_PERCENT,     /* already a percent of a reference: 100 */
};

struct metric_info {
	const char *name;        /* "nvme.seqread.gbps", "gemm.*.tflops"; NULL ends a table */
	const char *unit;        /* as bench_metric() reports it */
	const char *label;       /* a few words for tables and charts */
	unsigned flags;          /* METRIC_* */
	enum metric_peak peak;
};

struct bench {
	const char *name;      /* "gemm" */
	const char *summary;   /* one line for --help */
	unsigned flags;        /* BENCH_* */
	/* Deadline in seconds for this configuration; the harness kills the child after it. */
	int (*deadline_s)(const struct bench_config *cfg);
	/*
	 * Optional, runs in the child before run(): BENCH_OK if the bench can
	 * run here, else BENCH_SKIP with a reason through bench_reason().
	 */
	int (*probe)(struct bench_ctx *ctx, const struct bench_config *cfg);
	/* Measures; BENCH_OK, BENCH_SKIP or BENCH_FAIL (with bench_reason()). */
	int (*run)(struct bench_ctx *ctx, const struct bench_config *cfg);
	/* Every metric (not series) the bench reports, ended by { NULL } (see struct metric_info). */
#ifdef __cplusplus
	const struct metric_info *metrics = nullptr;  /* a .cu bench may leave it out without a warning */
	const char *const *words = nullptr;
	const char *const *series = nullptr;
#else
	const struct metric_info *metrics;
	/*
	 * What the '*' of its metric patterns may stand for, NULL-terminated
	 * (gemm: its dtypes "fp32" ... "fp8"); NULL: any dotted word.  A name
	 * outside it is no metric: a policy rule on gemm.bf99.tflops is refused
	 * at load (exit 2), not left unmeasured on every machine.
	 */
	const char *const *words;
	/*
	 * Every series (bench_sample) the bench reports, NULL-terminated, a '*'
	 * standing for one dotted word as in metric rows: a series belongs under
	 * the bench that declares it and no other (an import refuses a soak series
	 * under gemm, bench_fp_check), and the judge reads it there only.
	 */
	const char *const *series;
#endif
};

/* ---- reporting, callable only inside run()/probe() ---- */

/*
 * One metric.  name is stable, dotted and unit-suffixed
 * ("gemm.bf16.tflops"); gpu is the GPU index or -1 for the instance-level
 * value (the headline that rank and accept use); unit is human readable
 * ("TFLOP/s", "GB/s", "%", "kIOPS", "us", "ms", "s", "count");
 * params_json is a JSON object text with the parameters (sizes, dtype,
 * repetitions, spread) or NULL.
 */
void bench_metric(struct bench_ctx *ctx, const char *name, int gpu, double value,
		  const char *unit, const char *params_json);

/*
 * One point of a time series or curve.  Series names follow metric names
 * ("soak.sm_clock.mhz", "memcpy.h2d.pinned.gbps").  x is seconds since the
 * start of the bench for soak series, bytes for size sweeps.
 */
void bench_sample(struct bench_ctx *ctx, const char *series, int gpu, double x, double y);

/* Why the bench skipped or failed: one lowercase line, no trailing period. */
void bench_reason(struct bench_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Progress in [0,1] for the terminal bar; cheap, call as often as you like. */
void bench_progress(struct bench_ctx *ctx, double fraction);

/* A log line, shown with -v. */
void bench_log(struct bench_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A directory the bench has just made for its work files (its last path
 * component starts with "gpuvet-"), said before anything is written in it:
 * the harness removes it and its files when the bench process ends, however
 * it ends (crash, deadline, a stop, gpuvet itself killed).
 */
void bench_workdir(struct bench_ctx *ctx, const char *path);

/*
 * Makes the work directory PARENT/gpuvet-KIND-<16 random letters and
 * digits> (mode 0700) into out, and says it (bench_workdir) before it
 * exists: a bench killed at any instant, even between the mkdir and the
 * telling, leaves no directory the harness does not know of.  The name is
 * from getrandom(2), so no one can foresee or meet it by chance.  0, or -1
 * with errno (nothing made).
 */
int bench_mkworkdir(struct bench_ctx *ctx, const char *parent, const char *kind, char *out, size_t outlen);

/* Echo of the configuration the bench actually used (JSON object text). */
void bench_config_echo(struct bench_ctx *ctx, const char *json_object);

/* ---- shared timing helpers (benches/timing.c) ---- */

/* Monotonic clock in seconds. */
double bench_now(void);

/* Summary of repeated measurements. */
struct bench_stats {
	int n;
	double median, min, max, mean;
	double spread;      /* (max - min) / median, 0 when n < 2 */
	double stddev;
};

/* Sorts a copy of v[0..n) and fills st; n may be 0 (all fields 0). */
void bench_stats(const double *v, int n, struct bench_stats *st);

/* Repetitions per profile: warm-up and timed iterations. */
struct bench_reps { int warmup; int reps; };
struct bench_reps bench_reps_for(enum bench_profile p);

const char *bench_profile_name(enum bench_profile p);

/* ---- registry (benches/registry.c) ---- */

/* NULL-terminated list of every bench, in run order. */
extern const struct bench *const bench_registry[];

/* Find by name; NULL when unknown. Test-only benches only when allowed. */
const struct bench *bench_find(const char *name);

/* A bench's metric rows ({ NULL }-ended; never NULL). */
const struct metric_info *bench_metrics(const struct bench *b);
/* The row that describes a metric name, from every bench's rows; NULL when none does. */
const struct metric_info *metric_info_find(const char *name);
/*
 * The metric's label: its row's, with the word its '*' stands for in capitals
 * in front ("gemm.bf16.tflops": "BF16 GEMM"); the name itself when no row
 * describes it.  Returns buf.
 */
const char *metric_label(const char *name, char *buf, size_t size);
/*
 * The bench that declares a metric ("harness" for the rows the harness adds
 * to every run, runners/run.c); NULL when none does.  A metric row of a
 * fingerprint belongs under that bench and no other (bench_fp_check).
 */
const char *metric_owner(const char *name);
/* The bench that declares a series ("harness" for host.cpu_steal.pct); NULL when none does. */
const char *series_owner(const char *name);
/*
 * Whether a value of a metric or series is physically possible
 * (benches/metric_bounds.c, the table of bounds beside these rows): a rate
 * never negative, a GEMM at most twice the fastest known GPU's datasheet
 * peak for its dtype (times gpus for an instance row, gpu -1), a percent of
 * a link at most 100, NVML temperatures, clocks, PCIe generation and power
 * within range.  NaN (null: not measured) passes.  0, or -1 with one line in
 * err naming the metric, the value and the bound.
 */
int metric_bound_check(const char *name, int gpu, double value, int gpus, char *err, size_t errlen);
/*
 * The checks of an imported fingerprint (node fp of t) that need what the
 * benches declare, for results/fp_check.c to call (it may not read benches/:
 * the program hands this function to fp_check_set_bench_check): every metric
 * under the bench that declares it and that the fingerprint lists, every
 * series under a listed bench, every value and point within its bounds
 * (metric_bound_check), every config value the judge reads what its bench
 * declares.  0, or -1 with one line in err.
 */
struct jtree;
int bench_fp_check(const struct jtree *t, uint32_t fp, char *err, size_t errlen);
/* Does name match a row's pattern (one '*' standing for one dotted word)? */
int metric_name_matches(const char *pattern, const char *name);

/* True when test-only benches may be selected (GPUVET_TEST_BENCHES=1). */
int bench_test_benches_allowed(void);

/* ---- harness side (runners/run.c), not for benches ---- */

/* A context that writes the bench's reports as JSON lines to fd. */
struct bench_ctx *bench_ctx_new(int fd, const char *bench_name);
/* The pipe to the bench's keeper, told of work directories (bench_workdir). */
void bench_ctx_set_keeper(struct bench_ctx *ctx, int keeper_fd);
void bench_ctx_free(struct bench_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
