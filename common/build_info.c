/*
 * build_info.c - the build a program has when nothing better is linked in
 * (version.h): gpuvet itself links $(BUILD)/gen/build_info.c ahead of
 * libgpuvet.a, so this member is never taken into it; the unit tests and
 * fuzz targets, linked without one, are an unknown development build.
 */
#include "common/version.h"

const struct gv_build gv_build_info = { "unknown", "unknown", 0 };
