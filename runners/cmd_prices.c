/* cmd_prices.c - placeholder until issue 6 lands: says so and exits 2, never pretends. */
#include "runners/cli.h"
#include "runners/util.h"

#include <stdio.h>
#include <string.h>

int cmd_prices(int argc, char **argv, const struct gv_global *g)
{
	(void)g;
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: gpuvet prices\n\nnot built yet in this version of gpuvet.\n");
		return GV_EXIT_OK;
	}
	gv_err("'prices' is not built yet in this version");
	return GV_EXIT_USAGE;
}
