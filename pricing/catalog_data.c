/*
 * catalog_data.c - the shipped price catalogs (pricing/catalog/NAME.csv),
 * embedded in the binary with the assembler's .incbin so an installed
 * gpuvet carries its list prices without a data directory.  The paths are
 * relative to the repository root, where make compiles; the Makefile makes
 * this object depend on the CSV files.
 */
#include "pricing/catalog.h"

#define CATALOG_INCBIN(name, file)                                   \
	__asm__(".pushsection .rodata\n"                             \
		".balign 16\n"                                       \
		".globl gv_catalog_" #name "_data\n"                 \
		"gv_catalog_" #name "_data:\n"                       \
		".incbin \"pricing/catalog/" file "\"\n"             \
		".globl gv_catalog_" #name "_end\n"                  \
		"gv_catalog_" #name "_end:\n"                        \
		".byte 0\n"                                          \
		".popsection\n");                                    \
	extern const char gv_catalog_##name##_data[], gv_catalog_##name##_end[]

CATALOG_INCBIN(aws, "aws.csv");
CATALOG_INCBIN(lambda, "lambda.csv");
CATALOG_INCBIN(alibaba, "alibaba.csv");
CATALOG_INCBIN(fx, "fx.csv");

const struct catalog_shipped catalog_shipped[] = {
	{ "aws", "aws.csv", gv_catalog_aws_data, gv_catalog_aws_end },
	{ "lambda", "lambda.csv", gv_catalog_lambda_data, gv_catalog_lambda_end },
	{ "alibaba", "alibaba.csv", gv_catalog_alibaba_data, gv_catalog_alibaba_end },
};
const size_t catalog_shipped_count = sizeof catalog_shipped / sizeof catalog_shipped[0];

const struct catalog_shipped catalog_shipped_fx = { "fx", "fx.csv", gv_catalog_fx_data, gv_catalog_fx_end };
