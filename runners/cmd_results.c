/* cmd_results.c - placeholder. */
#include "runners/cli.h"
#include "runners/util.h"

int cmd_results(int argc, char **argv, const struct gv_global *g)
{
	(void)argc; (void)argv; (void)g;
	gv_err("'results' is not built yet in this version");
	return GV_EXIT_USAGE;
}
