"""`accept --all` and `accept --since DATE` (issue 58 item 11): every run the policy has not judged yet
gated in one process, oldest first, a line each and the counts, the exit code the worst verdict; on the
real H100 captures of tests/fixtures/gpu/h100-2026-11-22 (14 runs: 2 accepted, 7 rejected for
CONTENTION, 5 unmeasurable).  On c4fdb45 a fleet took one process per run (`accept RUN`): --all and
--since were unknown options."""
import json

from conftest import FIXTURES

H100 = FIXTURES / "gpu" / "h100-2026-11-22"


def fleet(gpuvet):
    gpuvet("results", "import", H100, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1", check=0)
    return {r["id"]: r for r in gpuvet.json("results", "list", "--json")}


def test_all_gates_every_run_not_yet_judged_in_one_process(gpuvet):
    runs = fleet(gpuvet)
    gpuvet("accept", "4", check=1)                    # judged before: not again
    p = gpuvet("accept", "--all", check=1)            # a reject among them: exit 1
    lines = p.stdout.splitlines()
    judged = [ln for ln in lines if ln.startswith("run ")]
    assert len(judged) == len(runs) - 1 and not any(ln.startswith("run 4 (") for ln in judged)
    # oldest first, as the runs were taken
    started = [runs[int(ln.split()[1])]["started_at"] for ln in judged]
    assert started == sorted(started)
    assert lines[-1] == "13 run(s) not yet judged by policy default: 2 accepted, 6 rejected, 5 unmeasurable"
    assert all(len(ln) <= 160 for ln in lines)
    assert any(" on host vm, aws p5.4xlarge: REJECT: flag CONTENTION" in ln for ln in judged)
    after = gpuvet.json("results", "list", "--json")
    assert all(r["verdict"] in ("accept", "reject", "unmeasurable") for r in after)
    again = gpuvet("accept", "--all", check=0)
    assert again.stdout.startswith("0 run(s) not yet judged")


def test_since_takes_the_runs_started_from_a_date_and_json_lists_each(gpuvet):
    runs = fleet(gpuvet)
    since = "2026-11-22T21:30:00Z"
    want = sorted(i for i, r in runs.items() if r["started_at"] >= since)
    res = json.loads(gpuvet("accept", "--since", since, "--json", check=1).stdout)
    assert sorted(r["run"]["id"] for r in res) == want and len(want) < len(runs)
    assert {r["verdict"] for r in res} <= {"accept", "reject", "unmeasurable"}
    assert all(r["exit_code"] in (0, 1, 3) for r in res)


def test_all_with_a_run_or_a_bad_date_is_a_usage_error(gpuvet):
    fleet(gpuvet)
    assert "choose one" in gpuvet("accept", "3", "--all", check=2).stderr
    assert "--since must be a date" in gpuvet("accept", "--since", "yesterday", check=2).stderr
