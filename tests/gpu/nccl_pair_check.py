"""nccl_pair_check.py - judges what tests/gpu/session.sh's `nccl-pair` and `cluster` steps wrote
(issue 49; written before any machine with 2 GPUs was lent, so never run yet).

  nccl_pair_check.py drive DIR     nccl_pair_drive's JSON: the pair, the lone rank, the all-reduces
  nccl_pair_check.py cluster DIR   `gpuvet cluster run --json` of rank 0 (two ranks, one GPU each)

Beside either, nccl-tests' sendrecv_perf at 64 MiB (DIR/sendrecv_perf.txt) when the machine had
it: printed as gpuvet's slower direction over its busbw.  sendrecv_perf's ranks send and receive
at once (a ring), gpuvet's pair one direction at a time, so the ratio is reported, not judged.
Writes DIR/summary.json; exit 0 as expected, 1 an expectation failed."""
import json
import sys
from pathlib import Path

LONE_TIMEOUT_S = 5.0          # session.sh's deadline for the rank whose peer never comes


def load(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        return {"error": f"{path}: {e}"}


def sendrecv_busbw(d, size=67108864):
    """busbw (GB/s, out of place) of sendrecv_perf's row for `size` bytes, or None."""
    p = Path(d) / "sendrecv_perf.txt"
    if not p.exists():
        return None
    for line in p.read_text().splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == str(size):
            try:
                return float(f[7])
            except ValueError:
                return None
    return None


def check_drive(d, out, fails):
    r0, r1 = load(d / "pair-rank0.json"), load(d / "pair-rank1.json")
    out["pair"] = {"rank0": r0, "rank1": r1}
    if "error" in r0 or "error" in r1:
        fails.append(f"pair failed: {r0.get('error') or r1.get('error')}")
    else:
        if (r0["gbps_ab"], r0["gbps_ba"]) != (r1["gbps_ab"], r1["gbps_ba"]):
            fails.append("the two ranks of the pair report different figures")
        if not (r0["gbps_ab"] > 0 and r0["gbps_ba"] > 0):
            fails.append("a pair direction is not positive")
        if not r0.get("net"):
            fails.append("no transport named from NCCL's log")
    lone = load(d / "pair-alone.json")
    out["lone"] = lone
    if "timed out" not in lone.get("error", "") or lone.get("seconds", 1e9) > LONE_TIMEOUT_S + 10:
        fails.append(f"a rank without its peer did not end at its deadline: {lone}")
    a0, a1, one = load(d / "ar-2proc-rank0.json"), load(d / "ar-2proc-rank1.json"), load(d / "ar-1proc.json")
    out["allreduce"] = {"2proc_rank0": a0, "2proc_rank1": a1, "1proc": one}
    for name, a in (("2 processes", a0), ("2 processes, rank 1", a1), ("1 process", one)):
        if "error" in a:
            fails.append(f"all-reduce over {name} failed: {a['error']}")
        elif not a.get("points"):
            fails.append(f"all-reduce over {name}: no points")
        elif any(abs(p["busbw_gbps"] - p["algbw_gbps"]) > 1e-6 * p["algbw_gbps"] for p in a["points"]):
            fails.append(f"all-reduce over {name}: busbw != algbw with 2 ranks (factor 2(n-1)/n = 1)")
    if "error" not in a0 and "error" not in a1 and a0.get("points") != a1.get("points"):
        fails.append("the two processes of the all-reduce report different curves")
    return None if "error" in r0 else min(r0["gbps_ab"], r0["gbps_ba"])


def check_cluster(d, out, fails):
    doc = load(d / "rank0.json")
    rc = (d / "rank0.rc").read_text().strip() if (d / "rank0.rc").exists() else "?"
    out["rank0_exit"], out["verdict"] = rc, doc.get("verdict")
    if rc not in ("0", "1", "3"):
        fails.append(f"rank 0 exit {rc}: {(d / 'rank0.err').read_text()[-400:] if (d / 'rank0.err').exists() else ''}")
    pairs = doc.get("pairs") or []
    out["pairs"], out["nccl_net"] = pairs, doc.get("nccl_net")
    if len(pairs) != 1:
        fails.append(f"{len(pairs)} pairs for 2 ranks, expected 1")
        return None
    p = pairs[0]
    if not isinstance(p.get("nccl_gbps_ab"), (int, float)) or not isinstance(p.get("nccl_gbps_ba"), (int, float)):
        fails.append(f"the NCCL pair was not measured: {p.get('why')}")
        return None
    if not doc.get("nccl_net"):
        fails.append("no NCCL transport named")
    points = (doc.get("allreduce") or {}).get("points") or []
    out["allreduce_points"] = len(points)
    if not points:
        fails.append(f"no cluster all-reduce: {(doc.get('allreduce') or {}).get('why')}")
    return min(p["nccl_gbps_ab"], p["nccl_gbps_ba"])


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("drive", "cluster"):
        print(__doc__, file=sys.stderr)
        return 2
    d = Path(sys.argv[2])
    out, fails = {}, []
    ours = (check_drive if sys.argv[1] == "drive" else check_cluster)(d, out, fails)
    ref = sendrecv_busbw(d)
    out["sendrecv_perf_busbw_64MiB"] = ref
    if ours is not None and ref:
        out["ratio_to_sendrecv_perf"] = ours / ref
        print(f"pair, slower direction {ours:.2f} GB/s; sendrecv_perf busbw {ref:.2f} GB/s; ratio {ours / ref:.3f}")
    out["failures"] = fails
    (d / "summary.json").write_text(json.dumps(out, indent=1))
    for f in fails:
        print("FAIL", f)
    print("as expected" if not fails else f"{len(fails)} expectation(s) failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
