/*
 * fuzz_fingerprint.c - `gpuvet results import` on arbitrary bytes: JSON
 * read by common/jtree.c, then the store's validation and insert into an
 * in-memory store.  Must never crash, leak or leave a half-imported run:
 * a rejected fingerprint leaves no run behind, alone or in a batch.  As
 * runners/main.c does, every import is checked against the benches'
 * declarations and decoded once into the typed run and derived
 * (results/fprun_decode.c, judge/derive.c): the one reader is fuzzed here.
 */
#include "results/store.h"
#include "results/fp_check.h"
#include "benches/bench.h"
#include "judge/derive.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t count_runs(struct store *s)
{
	int64_t *ids;
	size_t n;
	if (store_list_runs(s, &ids, &n))
		abort();
	free(ids);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Alone (its own transaction), or as `results import` does it (one part of a batch) by the first byte. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct store *s;
	if (!s) {
		fp_check_set_bench_check(bench_fp_check);
		store_set_derive(derive_import);
	}
	if (!s && store_open(":memory:", &s) != STORE_OK)
		abort();
	struct jtree t;
	if (jt_parse(&t, (const char *)data, size)) {
		jt_free(&t);
		return 0;
	}
	/* a complete run replaces an incomplete copy of itself: then the count stays */
	const char *uuid = jt_str(&t, jt_get(&t, jt_get(&t, 1, "run"), "uuid"));
	int64_t had;
	int replaces = uuid && strlen(uuid) == 36 && store_resolve_run(s, uuid, &had) == STORE_OK;
	size_t before = count_runs(s);
	int batch = size && data[0] % 2, rc;
	if (batch && (store_batch_begin(s) || store_batch_mark(s)))
		abort();
	int64_t id;
	rc = store_import_tree(s, &t, &id);
	if (batch && (store_batch_unmark(s, rc == STORE_OK) || store_batch_end(s, 1)))
		abort();
	if (count_runs(s) != before + (rc == STORE_OK && !replaces))
		abort();
	jt_free(&t);
	return 0;
}
