#!/bin/sh
# deb.sh VERSION TREE OUT - OUT/gpuvet_VERSION_amd64.deb from the tarball's tree (dist.sh):
# TREE as /opt/gpuvet, /usr/bin/gpuvet a link to /opt/gpuvet/bin/gpuvet (which finds lib/ and
# libexec/fio through /proc/self/exe, so the link changes nothing), the man page where man looks.
# Depends names the C runtime only, at the versions this build's binaries need: dpkg-shlibdeps
# reads their symbols against the symbols files of libc6, libstdc++6 and libgcc-s1; every other
# library it names is carried in /opt/gpuvet/lib (dist.sh has checked), so it is left out.
set -eu
GV_ME=deb.sh
version=$1
tree=$(cd "$2" && pwd)
out=$(cd "$3" && pwd)
pkg=$out/work/deb
root=$pkg/root
rm -rf "$pkg"
mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/doc/gpuvet"
cp -R "$tree" "$root/opt/gpuvet"
ln -s /opt/gpuvet/bin/gpuvet "$root/usr/bin/gpuvet"
gzip -9n <"$tree/share/man/man1/gpuvet.1" >"$root/usr/share/man/man1/gpuvet.1.gz"
ln -s /opt/gpuvet/share/doc/gpuvet/licenses "$root/usr/share/doc/gpuvet/licenses"

mkdir -p "$pkg/shlibs/debian"
printf 'Source: gpuvet\n\nPackage: gpuvet\nArchitecture: any\n' >"$pkg/shlibs/debian/control"
o=$root/opt/gpuvet
if ! (cd "$pkg/shlibs" && dpkg-shlibdeps -O "$o/bin/gpuvet" "$o/libexec/fio" "$o"/lib/*) >"$pkg/shlibs.out" 2>"$pkg/shlibs.log"; then
	echo "$GV_ME: dpkg-shlibdeps failed:" >&2
	tail -n 5 "$pkg/shlibs.log" >&2
	exit 1
fi
depends=$(sed -n 's/^shlibs:Depends=//p' "$pkg/shlibs.out" | tr ',' '\n' | sed 's/^ *//' |
	grep -E '^(libc6|libstdc\+\+6|libgcc-s1)( |$)' | sort | paste -sd, - | sed 's/,/, /g')
for p in libc6 libstdc++6 libgcc-s1; do
	printf '%s\n' "$depends" | grep -q "$p" || { echo "$GV_ME: no dependency on $p found ($depends)" >&2; exit 1; }
done
size=$(du -sk "$root/opt" "$root/usr" | awk '{ s += $1 } END { print s }')
cat >"$root/DEBIAN/control" <<EOT
Package: gpuvet
Version: $version
Architecture: amd64
Maintainer: gpuvet maintainers <gpuvet@localhost>
Installed-Size: $size
Depends: $depends
Section: utils
Priority: optional
Description: vet rented GPU instances: measure, gate, rank per dollar
 gpuvet measures what a GPU machine delivers (GEMM, host-device copies,
 NCCL, local NVMe through fio, object storage, sustained load), stores the
 fingerprint, gates the machine against what a healthy one of its model does
 and ranks instance types by throughput per dollar.
 .
 Installed under /opt/gpuvet with the libraries it links and its own fio;
 NVML, cuBLASLt, NCCL and libfabric come from the machine at run time.
EOT
dpkg-deb --root-owner-group -Zgzip -z9 --build "$root" "$out/gpuvet_${version}_amd64.deb" >/dev/null
rm -rf "$pkg"
