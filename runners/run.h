/*
 * run.h - run orchestration: inventory, benches in child processes with
 * deadlines, results streamed to the store and committed per bench.
 */
#ifndef GPUVET_RUN_H
#define GPUVET_RUN_H

#include <stdint.h>
#include <jansson.h>

#include "benches/bench.h"
#include "runners/inventory.h"

struct store;

struct run_request {
	struct bench_config cfg;
	const struct bench **benches;   /* NULL-terminated selection */
	struct inventory_opts inv;
	int progress;                   /* draw progress on stderr */
	int custom;                     /* --custom: the name is not checked against the catalog */
};

/*
 * Runs the selection and stores one run.  Returns 0 with *run_id set (the
 * run is stored even when benches failed), or -1 when nothing could be
 * stored (message already printed): among the reasons, a name (given or
 * read from instance metadata) that the catalog refuses, said before any
 * bench runs (runners/naming.h).  *interrupted is set when SIGINT or
 * SIGTERM cut the run short (the run is stored as incomplete).
 */
int run_execute(struct store *s, const struct run_request *rq, int64_t *run_id, int *interrupted);

/* A profile's name (NULL: quick) into *out; -1 when it is not quick, standard or full. */
int run_parse_profile(const char *name, enum bench_profile *out);
/* Parses "a,b,c" into a NULL-terminated malloc'd selection; NULL + message on an unknown name. */
const struct bench **run_parse_selection(const char *list, char *err, size_t errlen);
/* The default selection of a profile: every bench but test-only and default-off ones. */
const struct bench **run_default_selection(void);

struct gpu_ref;
/*
 * gemm.<dtype>.pct_of_peak for a gemm.<dtype>.tflops metric: 0 with the
 * dtype, percent and peak used, -1 when the metric has no reference.
 */
int run_pct_of_peak(const struct gpu_ref *ref, const char *name, int gpu, double value,
		    const json_t *params, int inventory_gpus, char dtype[16], double *pct, double *peak);

/* Steal time: fraction of CPU time stolen by the hypervisor between two /proc/stat reads. */
struct cpu_times { unsigned long long total, steal; };
int run_read_cpu_times(const char *proc_stat_text, struct cpu_times *out);

#endif
