/* cmd_run.c - placeholder. */
#include "runners/cli.h"
#include "runners/util.h"

int cmd_run(int argc, char **argv, const struct gv_global *g)
{
	(void)argc; (void)argv; (void)g;
	gv_err("'run' is not built yet in this version");
	return GV_EXIT_USAGE;
}
