/*
 * price_marks.c - see cli.h: how `prices list` and `prices cheapest` show a
 * price outside its GPU model's plausible band (pricing/catalog_band.c owns
 * the band and its words): the JSON field of the row, and the line under the
 * table that says each flagged band once.
 */
#include "runners/cli.h"
#include "pricing/catalog.h"

#include <jansson.h>
#include <stdio.h>

json_t *gv_band_json(const struct price_band_hit *h, int outside)
{
	if (!outside)
		return json_null();
	return json_pack("{s:f,s:f,s:f,s:I,s:s}", "low_usd_per_gpu_hour", h->low, "high_usd_per_gpu_hour", h->high,
			 "median_usd_per_gpu_hour", h->median, "prices", (json_int_t)h->prices, "note", h->note);
}

void gv_band_lines(const struct price_band_set *s)
{
	char words[200];
	if (s->nflagged)
		fflush(stdout);   /* under the table, also when both go to one pipe */
	for (size_t i = 0; i < s->nflagged; i++)
		fprintf(stderr, "gpuvet: ! marks a price per GPU-hour outside %s: check it before you rely on it\n",
			price_band_words(&s->flagged[i], words, sizeof words));
}
