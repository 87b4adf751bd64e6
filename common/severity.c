/*
 * severity.c - the names of a flag's severities, in their one order
 * (common/severity.h).
 */
#include "common/severity.h"

#include <string.h>

static const char *const names[GV_SEVERITIES] = { "info", "warning", "critical" };

int gv_severity_rank(const char *name)
{
	for (int i = 0; name && i < GV_SEVERITIES; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

const char *gv_severity_name(int rank)
{
	return rank >= 0 && rank < GV_SEVERITIES ? names[rank] : "?";
}
