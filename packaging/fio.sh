#!/bin/sh
# fio.sh - prints the path of a fio built from Debian's source package of a pinned version, with
# only what gpuvet's nvme bench needs (benches/nvme.c: the psync, libaio and io_uring engines;
# io_uring is fio's own, with no library), building it once into the cache when it is not there.
#
# The source: fio_$FIO_DEBIAN.dsc from the Debian mirror this machine's apt uses (lib.sh), checked
# against the SHA-256 pinned here, then every file the .dsc lists checked against the .dsc's own
# Checksums-Sha256, unpacked with Debian's patches applied (dpkg-source -x).  The pin was taken
# from apt's signed chain (InRelease -> Sources -> the .dsc: packaging/README.md says how), so a
# mirror cannot hand over anything else.  Offline with an empty cache: a clear error, exit 1.
#
# The build: configure with every optional library engine off (no rbd, rdma, gfapi, http, nfs,
# pmem, numa, tcmalloc, dfs, xnvme, zbc; no lex/yacc), -march not native; linked with
# DT_RPATH $ORIGIN/../lib, so the libraries it needs beyond the C runtime (libaio, zlib) are the
# ones the tarball carries beside it (packaging/dist.sh copies them).  The cache key names the
# version and the configure line, so changing either builds anew; `make clean` keeps it.
set -eu
GV_ME=fio.sh
# shellcheck source=packaging/lib.sh
. "$(dirname "$0")/lib.sh"

FIO_UPSTREAM=3.33
FIO_DEBIAN=3.33-3
FIO_DSC_SHA256=c2f0b96e94e7484369d4010b083b022a5f831bc688d92e4e517c20137947dfbc
FIO_CONFIGURE="--disable-native --disable-numa --disable-rdma --disable-rados --disable-rbd --disable-http \
--disable-gfapi --disable-libnfs --disable-lex --disable-pmem --disable-xnvme --disable-libzbc \
--disable-tcmalloc --disable-dfs"

cache=$(gv_cache_dir)
key=$(printf '%s %s' "$FIO_DEBIAN" "$FIO_CONFIGURE" | sha256sum | cut -c1-12)
out=$cache/fio-$FIO_DEBIAN-$key
if [ -x "$out/fio" ]; then
	printf '%s\n' "$out/fio"
	exit 0
fi

src=$cache/src
pool=$(gv_debian_mirror)/pool/main/f/fio
dsc=$src/fio_$FIO_DEBIAN.dsc
if [ ! -f "$dsc" ]; then
	gv_fetch "$pool/fio_$FIO_DEBIAN.dsc" "$dsc" || exit 1
fi
gv_sha256_ok "$dsc" "$FIO_DSC_SHA256" || exit 1
# the files of the .dsc, each with its SHA-256 from its Checksums-Sha256 field
sed -n '/^Checksums-Sha256:/,/^[^ ]/s/^ \([0-9a-f]\{64\}\) [0-9]* \(.*\)$/\1 \2/p' "$dsc" >"$src/fio.sums"
[ -s "$src/fio.sums" ] || { echo "$GV_ME: $dsc lists no file" >&2; exit 1; }
while read -r sum name; do
	if [ ! -f "$src/$name" ]; then
		gv_fetch "$pool/$name" "$src/$name" || exit 1
	fi
	gv_sha256_ok "$src/$name" "$sum" || exit 1
done <"$src/fio.sums"

work=$cache/fio-$FIO_DEBIAN-$key.build
rm -rf "$work"
mkdir -p "$work"
# every file is checked above; --no-check: the maintainer's signature needs a keyring we do not carry
dpkg-source --no-check -x "$dsc" "$work/src" >"$work/unpack.log" 2>&1 ||
	{ echo "$GV_ME: dpkg-source -x failed:" >&2; tail -n 5 "$work/unpack.log" >&2; exit 1; }
cd "$work/src"
# shellcheck disable=SC2086  # FIO_CONFIGURE is a list of options
./configure $FIO_CONFIGURE >"$work/configure.log" 2>&1 ||
	{ echo "$GV_ME: configure failed:" >&2; tail -n 5 "$work/configure.log" >&2; exit 1; }
grep -q '^Linux AIO support *yes' "$work/configure.log" ||
	{ echo "$GV_ME: configure found no libaio (install libaio-dev: make deps-dist)" >&2; exit 1; }
# \$$ORIGIN: make makes $$ a $, the recipe's shell keeps \$ a $; DT_RPATH (not RUNPATH) so that
# the carried libraries' own needs are found beside them too
# shellcheck disable=SC2016
make -j"${GPUVET_JOBS:-2}" fio LDFLAGS='-Wl,--disable-new-dtags -Wl,-rpath,\$$ORIGIN/../lib' \
	>"$work/build.log" 2>&1 || { echo "$GV_ME: make failed:" >&2; tail -n 20 "$work/build.log" >&2; exit 1; }
engines=$(./fio --enghelp 2>&1)
for e in psync libaio io_uring; do
	printf '%s\n' "$engines" | grep -qx "[[:space:]]*$e" ||
		{ echo "$GV_ME: the fio built lacks the $e engine" >&2; exit 1; }
done
mkdir -p "$out.tmp"
strip -o "$out.tmp/fio" fio
cp COPYING "$out.tmp/COPYING"
{
	echo "fio $FIO_DEBIAN, built by gpuvet's packaging/fio.sh from Debian's source package:"
	echo "  $pool/fio_$FIO_DEBIAN.dsc (SHA-256 $FIO_DSC_SHA256)"
	while read -r sum name; do echo "  $pool/$name (SHA-256 $sum)"; done <"$src/fio.sums"
	echo "kept for good at http://snapshot.debian.org/package/fio/$FIO_DEBIAN/"
	echo "upstream: https://github.com/axboe/fio (tag fio-$FIO_UPSTREAM)"
	echo "Debian's patches applied (debian/patches/series): $(tr '\n' ' ' <debian/patches/series)"
	echo "configured: ./configure $FIO_CONFIGURE"
	echo "linked: -Wl,--disable-new-dtags -Wl,-rpath,\$ORIGIN/../lib; stripped"
	echo "engines of this build: $(printf '%s\n' "$engines" | sed -n 's/^[[:space:]]\{1,\}//p' | tr '\n' ' ')"
} >"$out.tmp/SOURCE"
rm -rf "$out"
mv "$out.tmp" "$out"
cd /
rm -rf "$work"
printf '%s\n' "$out/fio"
