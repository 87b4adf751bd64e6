/*
 * version.h - which gpuvet this is: its version (GPUVET_VERSION, util.h), the
 * commit it was built from, when it was linked and whether it is a release
 * tarball (`make dist`) or a development build.  `gpuvet --version`, every
 * run's fingerprint (run.gpuvet_build, docs/fingerprint.md) and the report
 * say it in the one wording of gv_build_describe().
 *
 * The values are linked in: the Makefile writes $(BUILD)/gen/build_info.c
 * (packaging/build_info.sh) at every link of gpuvet, so the binary names its
 * own commit and link time; a program linked without it (the unit tests, the
 * fuzz targets) gets common/build_info.c's "unknown" development build.
 */
#ifndef GPUVET_VERSION_H
#define GPUVET_VERSION_H

#include <stddef.h>

struct gv_build {
	const char *commit;    /* git's abbreviated commit, "-dirty" when the tree had changes; "unknown" */
	const char *built_at;  /* ISO-8601 UTC, "2026-11-28T09:14:03Z"; "unknown" */
	int release;           /* 1: the binary of a release tarball or .deb (make dist) */
};

/* Defined by the build_info.c linked in (above). */
extern const struct gv_build gv_build_info;

/* This binary's build. */
const struct gv_build *gv_build(void);

/*
 * "commit 1a2b3c4d5e6f, built 2026-11-28T09:14:03Z, release tarball" (or ", development build");
 * a part missing (NULL or "") is left out.  Into buf; returns buf.
 */
const char *gv_build_describe(const char *commit, const char *built_at, int release, char *buf, size_t len);

/* "gpuvet 0.1.0 (commit ..., built ..., release tarball)": --version's line, the report's generator. */
const char *gv_version_line(void);

#endif
