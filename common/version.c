/* version.c - which gpuvet this is (version.h) */
#include "common/version.h"
#include "common/util.h"

#include <stdio.h>

const struct gv_build *gv_build(void)
{
	return &gv_build_info;
}

const char *gv_build_describe(const char *commit, const char *built_at, int release, char *buf, size_t len)
{
	int n = 0;
	if (!len)
		return buf;
	buf[0] = '\0';
	if (commit && *commit)
		n = snprintf(buf, len, "commit %s, ", commit);
	if (n >= 0 && (size_t)n < len && built_at && *built_at)
		n += snprintf(buf + n, len - (size_t)n, "built %s, ", built_at);
	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%s", release ? "release tarball" : "development build");
	return buf;
}

const char *gv_version_line(void)
{
	static char line[256];
	char build[200];
	const struct gv_build *b = gv_build();
	snprintf(line, sizeof line, "gpuvet %s (%s)", GPUVET_VERSION,
		 gv_build_describe(b->commit, b->built_at, b->release, build, sizeof build));
	return line;
}
