#!/usr/bin/env python3
"""Runs gpuvet's test suite on every core, and says how long each part took (issue #46).

    python3 tests/suite.py full     # what `make test` runs: the plain suite, the same suite under
                                    # AddressSanitizer + UndefinedBehaviorSanitizer, the fuzz replay
    python3 tests/suite.py quick    # what `make check-quick` runs: the C unit tests and a slice of
                                    # the integration tests (every layer), plain build only

The parts run side by side where the cores allow: the builds at once (one make, one job server),
then the plain and the sanitizer suites, each spread over pytest-xdist workers, with the fuzz
replay beside them.  Every part's output goes to build/suite/PART.log; a part that fails has its
log's tail printed.  The last line adds up the two pytest suites' counts, in the form CI reads
("make test: N passed, N failed, N skipped"); a failed fuzz target counts as one failure.
"""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "build" / "suite"

# The slice `make check-quick` runs besides every C unit test and the static checks: at least one
# integration file per layer (common, platform, benches, results, pricing, judge, reports, runners),
# each chosen for being quick and for exercising the layer's main path through the real binary.
QUICK = [
    "tests/test_unit.py",                                   # every layer, in C
    "tests/test_layers.py", "tests/test_function_length.py", "tests/test_file_length.py",
    "tests/test_flag_codes.py", "tests/test_metric_rows.py", "tests/test_docs.py",
    "tests/integration/test_store_messages.py",             # common: jtree, outguard messages
    "tests/integration/test_inventory.py",                  # platform: inventory, metadata
    "tests/integration/test_harness.py",                    # benches: the harness, null bench
    "tests/integration/test_import_schema.py",              # results: import, the store
    "tests/integration/test_prices.py",                     # pricing: catalogs, feeds on loopback
    "tests/integration/test_accept.py",                     # judge: the gate
    "tests/integration/test_cost.py",                       # judge: job cost
    "tests/integration/test_report.py",                     # reports: the HTML report
    "tests/integration/test_manpage.py",                    # runners: option tables, --help, man
]


def nproc():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def workers():
    """pytest-xdist workers per suite: GPUVET_TEST_WORKERS, else twice the cores (most tests wait on
    a child process, a server or a deadline, not on a core)."""
    n = os.environ.get("GPUVET_TEST_WORKERS")
    return int(n) if n else 2 * nproc()


def pytest_cmd(build, paths):
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers()),
            "--dist", "worksteal", "--durations=15", *paths], {
        "GPUVET_BIN": str(ROOT / build / "gpuvet"),
        "GPUVET_TEST_DIR": str(ROOT / build / "tests"),
    }


class Part:
    def __init__(self, name, cmd, env=None):
        self.name, self.cmd = name, cmd
        self.log = LOGS / f"{name}.log"
        self.env = dict(os.environ, **(env or {}))
        self.proc = None
        self.t0 = self.seconds = None

    def start(self):
        self.t0 = time.monotonic()
        out = open(self.log, "w")
        self.proc = subprocess.Popen(self.cmd, cwd=ROOT, env=self.env, stdout=out,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        out.close()
        return self

    def wait(self):
        rc = self.proc.wait()
        self.seconds = time.monotonic() - self.t0
        return rc

    def counts(self):
        """passed, failed, skipped from pytest's closing line, or from the fuzz replay's."""
        text = self.log.read_text(errors="replace")
        last = [line for line in text.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
        got = {"passed": 0, "failed": 0, "skipped": 0}
        if last:
            for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?)", last[-1]):
                got["failed" if word.startswith("error") else word] += int(n)
        return got


def run_parts(parts):
    """Starts the parts together, waits for all (each timed to its own end); returns the failed ones."""
    for p in parts:
        p.start()
    failed, running = [], list(parts)
    while running:
        for p in [p for p in running if p.proc.poll() is not None]:
            rc = p.wait()
            running.remove(p)
            print(f"suite: {p.name:<11} {p.seconds:6.0f} s  rc {rc}", flush=True)
            if rc:
                failed.append(p)
        time.sleep(0.5)
    return failed


def show_failures(failed):
    for p in failed:
        lines = p.log.read_text(errors="replace").splitlines()
        print(f"---- {p.name}: last lines of {p.log.relative_to(ROOT)} ----")
        print("\n".join(lines[-60:]))


def main(mode):
    LOGS.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    make = ["make", "--no-print-directory", f"-j{nproc()}"]
    build = Part("build", make + (["test-build"] if mode == "full" else ["test-build-plain"]))
    failed = run_parts([build])
    if failed:
        show_failures(failed)
        return 1
    if mode == "full":
        suites = [Part("plain", *pytest_cmd("build", ["tests"])),
                  Part("sanitizers", *pytest_cmd("build-san", ["tests"])),
                  Part("fuzz", make[:2] + ["fuzz-replay-only"])]
    else:
        suites = [Part("quick", *pytest_cmd("build", QUICK))]
    failed = run_parts(suites)
    show_failures(failed)
    total = {"passed": 0, "failed": 0, "skipped": 0}
    for p in suites:
        c = p.counts()
        if p.name != "fuzz":
            print(f"suite: {p.name:<11} {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped")
            for k in total:
                total[k] += c[k]
    if any(p.name == "fuzz" for p in suites):
        fuzz = next(p for p in suites if p.name == "fuzz")
        ran = len(re.findall(r"^fuzz: ", fuzz.log.read_text(errors="replace"), re.M))
        print(f"suite: fuzz        {ran} target(s) replayed and fuzzed 10 s each, rc {fuzz.proc.returncode}")
    wall = time.monotonic() - t0
    print(f"suite: wall {wall / 60:.1f} min on {nproc()} core(s), {workers()} worker(s) per suite")
    if any(p.proc.returncode for p in suites) and total["failed"] == 0:
        total["failed"] = 1          # a part that died without a pytest summary still fails
    print(f"make test: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped"
          if mode == "full" else
          f"check-quick: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
    return 1 if failed or total["failed"] else 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("full", "quick"):
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
