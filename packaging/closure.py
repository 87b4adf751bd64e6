#!/usr/bin/env python3
"""closure.py - the shared libraries a relocatable gpuvet carries, copied and then checked.

    closure.py copy  TREE ELF...   copies into TREE/lib every library the ELFs need, directly or
                                   through another library, except the C runtime; writes
                                   TREE/share/doc/gpuvet/licenses/ (each library's package and
                                   its Debian copyright file) and prints what it carried
    closure.py check TREE ELF...   fails (exit 1, each offender named) when an ELF or a library
                                   under TREE/lib needs a library that is neither the C runtime
                                   nor carried in TREE/lib, when an ELF does not look in
                                   $ORIGIN/../lib first, or when TREE/lib holds a C runtime library

The C runtime is what every Linux machine has, in a version at least as new as the build's:
glibc's libraries (libc6: libc, libm, libmvec, libdl, librt, libpthread, libresolv, libutil,
libanl, the loader...), libstdc++ and libgcc_s.  Carrying a piece of glibc would break on a newer
glibc (they call each other's GLIBC_PRIVATE symbols), so none is ever carried.

`copy` resolves names with ldd on the build machine; `check` trusts nothing of the build
machine's: it reads DT_NEEDED and DT_RPATH with readelf and resolves each name in TREE/lib alone,
as the loader will on a bare machine.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

C_RUNTIME = re.compile(r"^(ld-linux(-x86-64)?\.so\.\d+|linux-vdso\.so\.\d+|"
                       r"lib(c|m|mvec|dl|rt|pthread|resolv|util|anl|nsl|BrokenLocale|thread_db|c_malloc_debug)"
                       r"\.so\.\d+|libstdc\+\+\.so\.6|libgcc_s\.so\.1)$")
# the Debian packages that hold the C runtime (the .deb depends on these, nothing else)
RUNTIME_PACKAGES = ("libc6", "libstdc++6", "libgcc-s1")
DOC = Path("share/doc/gpuvet/licenses")


def die(msg):
    print(f"closure.py: {msg}", file=sys.stderr)
    sys.exit(1)


def ldd(elf):
    """{soname: path} of everything the loader maps for elf on this machine (transitively)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    out = subprocess.run(["ldd", str(elf)], capture_output=True, text=True, env=env)
    if out.returncode:
        die(f"ldd {elf}: {out.stderr.strip() or out.stdout.strip()}")
    libs, missing = {}, []
    for line in out.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if not m:
            continue
        if m.group(2) == "not":
            missing.append(m.group(1))
        else:
            libs[m.group(1)] = m.group(2)
    if missing:
        die(f"{elf} needs {', '.join(missing)}, not found on this machine")
    return libs


def dynamic(elf):
    """(needed sonames, rpath entries) from elf's dynamic section."""
    out = subprocess.run(["readelf", "-dW", str(elf)], capture_output=True, text=True)
    if out.returncode:
        die(f"readelf {elf}: {out.stderr.strip()}")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout)
    rpath = re.findall(r"\((?:RPATH|RUNPATH)\)\s+Library r(?:un)?path: \[([^\]]+)\]", out.stdout)
    runpath = "(RUNPATH)" in out.stdout
    return needed, [p for r in rpath for p in r.split(":")], runpath


def spellings(path):
    """The names dpkg may know a library file by: /lib and /usr/lib are one directory on a
    merged-/usr system, and a soname is a link to the real file."""
    real = os.path.realpath(path)
    return list(dict.fromkeys([path, real, re.sub(r"^/usr/lib/", "/lib/", real), re.sub(r"^/lib/", "/usr/lib/", real)]))


def owners(paths):
    """{path: (package, version)} from dpkg's database, asked once (dpkg-query reads all of it per
    call); a path no package owns is left out."""
    names = [s for p in paths for s in spellings(p)]
    q = subprocess.run(["dpkg-query", "-S", *names], capture_output=True, text=True)
    by_file = {}
    for line in q.stdout.splitlines():
        pkg, _, f = line.partition(": ")
        by_file[f.strip()] = pkg.split(":")[0].strip()   # "libssl3:amd64" -> libssl3
    pkgs = sorted(set(by_file.values()))
    vers = {}
    if pkgs:
        v = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", *pkgs], capture_output=True, text=True)
        vers = dict(line.split(" ", 1) for line in v.stdout.splitlines() if " " in line)
    out = {}
    for p in paths:
        pkg = next((by_file[s] for s in spellings(p) if s in by_file), None)
        if pkg:
            out[p] = (pkg, vers.get(pkg, "-"))
    return out


def copy(tree, elfs):
    lib = tree / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    carried = {}
    for elf in elfs:
        for name, path in ldd(elf).items():
            if not C_RUNTIME.match(name) and name not in carried:
                carried[name] = path
    doc = tree / DOC
    doc.mkdir(parents=True, exist_ok=True)
    rows = []
    own = owners(list(carried.values()))
    for name, path in sorted(carried.items()):
        dst = lib / name
        if not (dst.exists() and os.path.samefile(path, dst)):   # found in the tree already: kept
            shutil.copyfile(path, dst)    # the file itself, under its soname (links followed)
        dst.chmod(0o644)
        pkg, ver = own.get(path, (None, None))
        if pkg:
            cr = Path("/usr/share/doc") / pkg / "copyright"
            if not cr.is_file():
                die(f"{name}: package {pkg} has no {cr}")
            shutil.copyfile(cr, doc / f"{pkg}.copyright")
        rows.append((name, pkg or "(no package)", ver or "-", os.path.realpath(path)))
    with open(doc / "LIBRARIES", "w") as f:
        f.write("Libraries carried in lib/, each from the Debian package named; its licence is\n"
                "PACKAGE.copyright here (Debian's /usr/share/doc/PACKAGE/copyright).\n\n")
        for r in rows:
            f.write(f"{r[0]:<28} {r[1]:<24} {r[2]:<28} {r[3]}\n")
    for r in rows:
        print(f"carried {r[0]} ({r[1]} {r[2]})")


def check(tree, elfs):
    lib = tree / "lib"
    bad = [f"{lib / n}: a C runtime library must not be carried" for n in os.listdir(lib) if C_RUNTIME.match(n)]
    seen, todo = set(), [Path(e) for e in elfs]
    for elf in elfs:
        needed, rpath, runpath = dynamic(elf)
        want = "$ORIGIN/../lib"
        if not rpath or rpath[0] != want:
            bad.append(f"{elf}: looks in {rpath or 'no rpath'} first, not {want}")
        if runpath:
            bad.append(f"{elf}: DT_RUNPATH (the carried libraries' own needs would not be found there): "
                       "link with -Wl,--disable-new-dtags")
    while todo:
        elf = todo.pop()
        if elf in seen:
            continue
        seen.add(elf)
        needed, _, _ = dynamic(elf)
        for n in needed:
            if C_RUNTIME.match(n):
                continue
            if (lib / n).is_file():
                todo.append(lib / n)
            else:
                bad.append(f"{elf.relative_to(tree) if elf.is_relative_to(tree) else elf}: needs {n}, "
                           "neither the C runtime nor carried in lib/")
    if bad:
        die("the tree is not self-contained:\n  " + "\n  ".join(bad))
    print(f"closure.py: {len(elfs)} program(s) and {len(seen) - len(elfs)} carried librar(ies) need "
          "nothing beyond lib/ and the C runtime")


def main(argv):
    if len(argv) < 4 or argv[1] not in ("copy", "check"):
        die("usage: closure.py copy|check TREE ELF...")
    tree = Path(argv[2])
    elfs = [Path(a) for a in argv[3:]]
    (copy if argv[1] == "copy" else check)(tree, elfs)


if __name__ == "__main__":
    main(sys.argv)
