/*
 * fuzz_cluster_json.c - a cluster run's JSON reader (common/cluster_json.c)
 * on arbitrary bytes: what rank 0 receives from a rank and what the store
 * gives back.  Must never crash or leak; whatever it reads, the writer
 * writes and the reader reads again to the same document (one shape), and
 * the streaming writer prints it byte for byte as json_dumps does.  Then
 * what `cluster import` does with it (runners/cluster_verify.c: its figures
 * and dates checked, its verdict derived again by the analysis), which must
 * either refuse it with a reason or leave a judged run (#56).
 * Seeds (corpus/fuzz_cluster_json/): the document test_cluster_json.c's
 * sample writes, and hand-made edge cases.
 */
#include "common/cluster.h"
#include "runners/cluster_show.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* gv_cluster_write_json(c) == json_dumps(w) + "\n", or abort. */
static void same_when_streamed(const struct gv_cluster *c, const json_t *w)
{
	char *buf = NULL, *whole = json_dumps(w, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || !whole)
		abort();
	int rc = gv_cluster_write_json(c, f);
	fclose(f);
	size_t n = strlen(whole);
	if (rc || len != n + 1 || memcmp(buf, whole, n) || buf[n] != '\n')
		abort();
	free(buf);
	free(whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (!j)
		return 0;
	char err[200];
	struct gv_cluster *c = gv_cluster_from_json(j, err, sizeof err);
	if (c) {
		json_t *w = gv_cluster_to_json(c);
		struct gv_cluster *d = w ? gv_cluster_from_json(w, err, sizeof err) : NULL;
		json_t *w2 = d ? gv_cluster_to_json(d) : NULL;
		if (w && (!d || !w2 || !json_equal(w, w2)))
			abort();
		if (w)
			same_when_streamed(c, w);
		json_decref(w2);
		json_decref(w);
		gv_cluster_free(d);
		err[0] = 0;
		if (cluster_verify(j, c, NULL, err, sizeof err) ? !err[0] : (c->verdict != 0 && c->verdict != 1 && c->verdict != 3))
			abort();
	}
	gv_cluster_free(c);
	json_decref(j);
	return 0;
}
