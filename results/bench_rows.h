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

/*
 * The same in two steps, so that the rows are read before the store's write
 * lock is taken: bench_rows_prepare groups the samples by (series, gpu)
 * through a hash, in time linear in the rows (borrowing their strings: rows
 * outlive the result); bench_rows_put writes them in one transaction.  gate,
 * when not NULL, is called inside that transaction before anything is
 * written: 0 goes on; any other value (a store_rc with store_errmsg() set,
 * or a negative value of the caller's) writes nothing and is returned.
 */
struct bench_prepared;
struct bench_prepared *bench_rows_prepare(const json_t *rows);   /* NULL: out of memory */
void bench_rows_free(struct bench_prepared *p);
int bench_rows_put(struct store *s, int64_t run_id, const char *bench, const struct bench_prepared *p,
		   const struct bench_outcome *o, int (*gate)(struct store *s, void *arg), void *arg);

#endif
