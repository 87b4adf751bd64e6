/*
 * bench_rows.h - one finished bench into the store, from the rows its
 * process reported (benches/ctx.c protocol: {"t":"metric",...},
 * {"t":"sample","series",gpu,x,y}, ...): every metric, one series row per
 * (series, gpu), and the bench row, in one transaction.  The harness
 * (runners/run.c) writes a bench this way, and so does the replay of a bench
 * kept aside while the store was busy (results/store_pending.c).
 */
#ifndef GPUVET_BENCH_ROWS_H
#define GPUVET_BENCH_ROWS_H

#include <jansson.h>
#include <stdint.h>

struct store;

struct bench_outcome {
	const char *status;   /* "ok", "skipped", "failed", "timed_out" */
	const char *reason;   /* NULL for none */
	double duration_s;
	const char *config;   /* the config echo (JSON object text), NULL for none */
};

/* 0, or a store_rc with store_errmsg() set and nothing of the bench written. */
int store_put_bench_rows(struct store *s, int64_t run_id, const char *bench, const json_t *rows,
			 const struct bench_outcome *o);

#endif
