/*
 * catalog_data.c - the shipped price catalogs (pricing/catalog/NAME.csv),
 * embedded in the binary (common/embed.h) so an installed
 * gpuvet carries its list prices without a data directory.  The paths are
 * relative to the repository root, where make compiles; the Makefile makes
 * this object depend on the CSV files.
 */
#include "pricing/catalog.h"
#include "common/embed.h"

#include <stdio.h>
#include <string.h>

GV_EMBED(gv_catalog_aws, "pricing/catalog/aws.csv");
GV_EMBED(gv_catalog_lambda, "pricing/catalog/lambda.csv");
GV_EMBED(gv_catalog_alibaba, "pricing/catalog/alibaba.csv");
GV_EMBED(gv_catalog_fx, "pricing/catalog/fx.csv");

/* aws.csv and lambda.csv: SkyPilot snapshots whose commit dates are not known to us (pricing/catalog/README.md):
   their captured_at is the day the rows were copied.  alibaba.csv's is its generator's own date. */
const struct catalog_shipped catalog_shipped[] = {
	{ "aws", "aws.csv", gv_catalog_aws, gv_catalog_aws_end, 1 },
	{ "lambda", "lambda.csv", gv_catalog_lambda, gv_catalog_lambda_end, 1 },
	{ "alibaba", "alibaba.csv", gv_catalog_alibaba, gv_catalog_alibaba_end, 0 },
};
const size_t catalog_shipped_count = sizeof catalog_shipped / sizeof catalog_shipped[0];

const struct catalog_shipped catalog_shipped_fx = { "fx", "fx.csv", gv_catalog_fx, gv_catalog_fx_end, 0 };

int price_source_dated(const char *source)
{
	if (!source || strncmp(source, "catalog:", 8))
		return 1;   /* a fetch is dated when it ran; an import by its own captured_at */
	for (size_t i = 0; i < catalog_shipped_count; i++)
		if (!strcmp(source + 8, catalog_shipped[i].name))
			return !catalog_shipped[i].undated;
	return 1;
}

const char *price_date_words(const char *source, const char *captured_at, char *buf, size_t n)
{
	if (!captured_at || !*captured_at)
		snprintf(buf, n, "date unknown");
	else if (!price_source_dated(source))
		snprintf(buf, n, "copied %.10s, source date unknown", captured_at);
	else
		snprintf(buf, n, "captured %s", captured_at);
	return buf;
}

long price_source_age_days(const char *source, const char *captured_at, time_t now)
{
	return price_source_dated(source) ? price_age_days(captured_at, now) : -1;
}
