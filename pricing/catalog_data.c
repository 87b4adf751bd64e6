/*
 * catalog_data.c - the shipped price catalogs (pricing/catalog/NAME.csv),
 * embedded in the binary (common/embed.h) so an installed
 * gpuvet carries its list prices without a data directory.  The paths are
 * relative to the repository root, where make compiles; the Makefile makes
 * this object depend on the CSV files.
 */
#include "pricing/catalog.h"
#include "common/embed.h"

GV_EMBED(gv_catalog_aws, "pricing/catalog/aws.csv");
GV_EMBED(gv_catalog_lambda, "pricing/catalog/lambda.csv");
GV_EMBED(gv_catalog_alibaba, "pricing/catalog/alibaba.csv");
GV_EMBED(gv_catalog_fx, "pricing/catalog/fx.csv");

const struct catalog_shipped catalog_shipped[] = {
	{ "aws", "aws.csv", gv_catalog_aws, gv_catalog_aws_end },
	{ "lambda", "lambda.csv", gv_catalog_lambda, gv_catalog_lambda_end },
	{ "alibaba", "alibaba.csv", gv_catalog_alibaba, gv_catalog_alibaba_end },
};
const size_t catalog_shipped_count = sizeof catalog_shipped / sizeof catalog_shipped[0];

const struct catalog_shipped catalog_shipped_fx = { "fx", "fx.csv", gv_catalog_fx, gv_catalog_fx_end };
