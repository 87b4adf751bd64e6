#!/bin/sh
# gv - gpuvet from a bundle (tests/gpu/bundle.sh): the bundled libraries first, then the
# directories of this machine's cuBLASLt (libcublasLt.so.13) and NCCL (libnccl.so.2),
# looked up once in python3's site-packages and /usr/local/cuda and cached in .cudalibs.
D=$(cd "$(dirname "$0")" && pwd)
if [ ! -s "$D/.cudalibs" ]; then
	python3 - > "$D/.cudalibs" <<'PY' || : > "$D/.cudalibs"
import glob, os, site
dirs = []
bases = site.getsitepackages() + ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
for pat in ("libcublasLt.so.13*", "libnccl.so.2*"):
    for base in bases:
        hits = glob.glob(os.path.join(base, "**", pat), recursive=True)
        if hits:
            d = os.path.dirname(hits[0])
            if d not in dirs:
                dirs.append(d)
            break
print(":".join(dirs))
PY
fi
LD_LIBRARY_PATH="$D/lib:$(cat "$D/.cudalibs")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$D/gpuvet" "$@"
