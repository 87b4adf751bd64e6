#!/bin/sh
# bare_root.sh - prints the path of a minimal Debian root, as a tar, for the bare-system test
# (tests/integration/test_dist.py): `mmdebstrap --variant=minbase` of this machine's Debian release
# from the mirror its apt uses (lib.sh), so nothing but Debian's essential packages and apt: no
# compiler, no -dev package, no fio, no curl.  Made once into the cache (GPUVET_CACHE, which
# `make clean` keeps) and made again only when missing; a test unpacks its own copy.  Root only
# (mmdebstrap's root mode); two callers at once wait for one another (flock).
set -eu
GV_ME=bare_root.sh
# shellcheck source=packaging/lib.sh
. "$(dirname "$0")/lib.sh"
suite=$(. /etc/os-release && printf '%s\n' "${VERSION_CODENAME:-}")
[ -n "$suite" ] || { echo "$GV_ME: /etc/os-release names no release (VERSION_CODENAME)" >&2; exit 1; }
dir=$(gv_cache_dir)/bare-root
out=$dir/debian-$suite-minbase.tar
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [ ! -s "$out" ]; then
	command -v mmdebstrap >/dev/null || { echo "$GV_ME: mmdebstrap is not installed (make deps-test)" >&2; exit 1; }
	mirror=$(gv_debian_mirror)
	if ! mmdebstrap --quiet --mode=root --format=tar --variant=minbase "$suite" "$out.part" "$mirror" >"$dir/mmdebstrap.log" 2>&1; then
		echo "$GV_ME: mmdebstrap --variant=minbase $suite from $mirror failed (offline?):" >&2
		tail -n 5 "$dir/mmdebstrap.log" >&2
		rm -f "$out.part"
		exit 1
	fi
	mv "$out.part" "$out"
fi
printf '%s\n' "$out"
