#!/bin/sh
# dist.sh VERSION BIN MAN OUT CUDA - the relocatable tarball `make dist` makes (packaging/README.md):
#
#   OUT/gpuvet-VERSION-linux-x86_64.tar.gz   one folder, gpuvet-VERSION-linux-x86_64/:
#       bin/gpuvet            BIN stripped: looks in $ORIGIN/../lib first (DT_RPATH)
#       lib/                  every library bin/gpuvet and libexec/fio need but the C runtime
#       libexec/fio           fio built from Debian's source (packaging/fio.sh); gpuvet runs it
#       share/man/man1/gpuvet.1, share/doc/gpuvet/ (README, docs/, BUILD, licenses/),
#       share/gpuvet/policies/ (the built-in policy and the examples), share/gpuvet/deploy/
#   OUT/gpuvet_VERSION_amd64.deb             the same tree under /opt/gpuvet (packaging/deb.sh)
#   OUT/SHA256SUMS                           of both, as sha256sum -c reads it
#   OUT/work/                                the tree staged, what was carried, the .deb's root
#
# Fails when the tree needs a library outside itself but the C runtime (closure.py check) or when
# the carried gpuvet and fio do not start with an empty environment.
set -eu
GV_ME=dist.sh
version=$1
bin=$2
man=$3
mkdir -p "$4"
out=$(cd "$4" && pwd)
cuda=$5
root=$(cd "$(dirname "$0")/.." && pwd)
[ "$(uname -m)" = x86_64 ] || { echo "$GV_ME: builds linux-x86_64 only (this is $(uname -m))" >&2; exit 1; }
name=gpuvet-$version-linux-x86_64
stage=$out/work/stage
top=$stage/$name
fio=$(sh "$root/packaging/fio.sh")
fiodir=$(dirname "$fio")

rm -rf "$stage" "$out/$name.tar.gz" "$out/gpuvet_${version}_amd64.deb" "$out/SHA256SUMS"
mkdir -p "$top/bin" "$top/libexec" "$top/share/man/man1" "$top/share/doc/gpuvet/licenses" "$top/share/gpuvet"
strip -o "$top/bin/gpuvet" "$bin"
cp "$fio" "$top/libexec/fio"
chmod 0755 "$top/bin/gpuvet" "$top/libexec/fio"
python3 "$root/packaging/closure.py" copy "$top" "$top/bin/gpuvet" "$top/libexec/fio" >"$out/work/carried.txt"

doc=$top/share/doc/gpuvet
lic=$doc/licenses
cp "$fiodir/COPYING" "$lic/fio.COPYING"
cp "$fiodir/SOURCE" "$lic/fio.SOURCE"
# bin/gpuvet links NVIDIA's CUDA runtime statically (libcudart_static.a): its licence, from the toolkit
cudalic=
for f in "$cuda"/dist-info/nvidia_cuda_runtime*/licenses/License.txt "$cuda"/EULA.txt; do
	[ -f "$f" ] && cudalic=$f && break
done
if [ -n "$cudalic" ]; then
	cp "$cudalic" "$lic/cuda-runtime.License.txt"
else
	echo "the CUDA runtime linked into bin/gpuvet is under NVIDIA's CUDA Toolkit EULA:" \
		"https://docs.nvidia.com/cuda/eula/" >"$lic/cuda-runtime.License.txt"
fi
cat >"$lic/README" <<EOT
Licences of what this tarball carries

- libexec/fio: fio $(sed -n 's/^fio \([^,]*\),.*/\1/p' "$fiodir/SOURCE"), GPL-2.0 (fio.COPYING). Where its source is, how it
  was built and with which options: fio.SOURCE.
- lib/: each library's Debian package and licence, LIBRARIES and PACKAGE.copyright.
- bin/gpuvet: gpuvet, with NVIDIA's CUDA runtime linked in statically (cuda-runtime.License.txt).
  cuBLASLt, NCCL, NVML and libfabric are not carried: gpuvet opens the machine's own at run time.
EOT
install -m 0644 "$man" "$top/share/man/man1/gpuvet.1"
install -m 0644 "$root/README.md" "$doc/README.md"
cp -R "$root/docs" "$doc/docs"
mkdir -p "$top/share/gpuvet/policies"
install -m 0644 "$root/judge/policies/default.yaml" "$top/share/gpuvet/policies/default.yaml"
install -m 0644 "$root"/contrib/policies/*.yaml "$root/contrib/policies/README.md" "$top/share/gpuvet/policies/"
cp -R "$root/contrib/deploy" "$top/share/gpuvet/deploy"

# nothing outside the tree but the C runtime, then the programs start with nothing set
python3 "$root/packaging/closure.py" check "$top" "$top/bin/gpuvet" "$top/libexec/fio"
line=$(env -i "$top/bin/gpuvet" --version)
case $line in
*"release tarball)") ;;
*) echo "$GV_ME: the carried gpuvet says '$line', not a release tarball" >&2; exit 1 ;;
esac
fiov=$(env -i "$top/libexec/fio" --version)
glibc=$(for f in "$top/bin/gpuvet" "$top/libexec/fio" "$top"/lib/*; do objdump -T "$f"; done |
	grep -o 'GLIBC_2\.[0-9]*' | sort -u -t. -k2,2n | tail -n 1 | sed 's/GLIBC_//')
cat >"$doc/BUILD" <<EOT
$line
fio: libexec/fio, $fiov (licenses/fio.SOURCE)
needs: Linux x86_64 with glibc $glibc or newer (the newest GLIBC_ symbol version the tree uses),
libstdc++ and libgcc_s; everything else is in lib/:
$(sed 's/^carried /  /' "$out/work/carried.txt")
not carried, opened at run time from the machine when present: cuBLASLt, NCCL, NVML, libfabric
EOT
find "$top" -type d -exec chmod 0755 {} +
find "$top" -type f ! -perm -u+x -exec chmod 0644 {} +

# a reproducible archive: names sorted, owner root, times the commit's
mtime=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -cf - "$name" |
	gzip -9n >"$out/$name.tar.gz.part"
mv "$out/$name.tar.gz.part" "$out/$name.tar.gz"
sh "$root/packaging/deb.sh" "$version" "$top" "$out" "$glibc"
(cd "$out" && sha256sum "$name.tar.gz" "gpuvet_${version}_amd64.deb" >SHA256SUMS)
size=$(du -k "$out/$name.tar.gz" | cut -f1)
echo "dist: $out/$name.tar.gz ($((size / 1024)).$((size % 1024 * 10 / 1024)) MiB), $out/gpuvet_${version}_amd64.deb, $out/SHA256SUMS"
echo "dist: $line"
