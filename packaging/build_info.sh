#!/bin/sh
# build_info.sh OUT.c RELEASE - the build gpuvet names in --version, its fingerprints and its
# reports (common/version.h): the commit of the source tree (git's abbreviated hash, "-dirty"
# when tracked files differ from it; "unknown" outside a git checkout), the time of this link
# in UTC ($SOURCE_DATE_EPOCH when set, for a reproducible build) and RELEASE (1: make dist).
set -eu
out=$1
release=$2
root=$(cd "$(dirname "$0")/.." && pwd)
commit=unknown
if git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1; then
	commit=$(git -C "$root" rev-parse --short=12 HEAD)
	git -C "$root" diff --quiet HEAD -- 2>/dev/null || commit=$commit-dirty
fi
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
	built=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
else
	built=$(date -u +%Y-%m-%dT%H:%M:%SZ)
fi
mkdir -p "$(dirname "$out")"
cat >"$out.tmp" <<EOC
/* written by packaging/build_info.sh at link time: see common/version.h */
#include "common/version.h"

const struct gv_build gv_build_info = { "$commit", "$built", $release };
EOC
mv "$out.tmp" "$out"
