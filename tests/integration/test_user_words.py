"""User-facing text names what a user knows (issue 48 item 7): a published source, a policy and its
rule by metric, never a source file, a C constant or a line of the policy file. Every command a user
reads, on the store the README builds from the real captures of tests/fixtures/gpu/h100-2026-11-22/
(README there), and the HTML report, are searched; JSON field names may stay machine names, the
human text inside them (a row's basis, a figure's source, a threshold's source) may not."""
import json
import re
import uuid

from conftest import FIXTURES

H100 = FIXTURES / "gpu" / "h100-2026-11-22"
# a file of the tree (common/gpus.c, benches/memcpy.cu, common/gpus.h), a C constant of the cost
# model, a line of a policy file in a threshold's source
JARGON = re.compile(r"\b[\w/]+\.(?:c|h|cu)\b|\b(?:hbm_copy|nvlink_busbw)_fraction\b|\bline \d+\b|"
                    r"inter_node_gbps_per_gpu \(")


def found(text):
    return sorted({m.group(0) for m in JARGON.finditer(text)})


def example_store(gpuvet):
    gpuvet("results", "import", H100, "--provider", "aws", "--sku", "p5.4xlarge", "--region", "us-east-1",
           check=None)


def test_7_no_source_file_constant_or_line_in_what_a_user_reads(gpuvet, tmp_path):
    example_store(gpuvet)
    runs = [r["id"] for r in gpuvet.json("results", "list", "--json")]
    standard = str(max(runs))                                       # the standard-profile capture, imported last
    outs = {}
    for args in (("rank", "--estimates"), ("rank", "--estimates", "--wide"),
                 ("cost", "--model", "llama-3.1-8b", "--estimates"),
                 ("cost", "--model", "llama-3.1-70b", "--estimates", "--gpus", "8"),
                 ("cost", "--model", "llama-3.1-8b", "--run", standard),
                 ("prices", "cheapest", "--gpu", "H100")):
        outs[" ".join(args)] = gpuvet(*args, check=None).stdout
    for r in runs:
        p = gpuvet("accept", str(r), "-v", check=None)
        outs[f"accept {r}"] = p.stdout + p.stderr
    page = tmp_path / f"r-{uuid.uuid4().hex[:8]}.html"
    gpuvet("report", "-o", page, "--job", "llama-3.1-8b:train:1e9", check=None)
    outs["report"] = page.read_text()
    for what, text in outs.items():
        assert text and not found(text), (what, found(text))
    # the human text inside the JSON: each cost row's basis and its figures' sources
    res = gpuvet.json("cost", "--model", "llama-3.1-70b", "--estimates", "--json")
    words = [r["basis"] for r in res["rows"]] + [v for r in res["rows"] for k, v in r["inputs"].items()
                                                if k.endswith("_source") and isinstance(v, str)]
    words += [c["source"] for c in res["constants"]]
    assert words and not found("\n".join(words)), found("\n".join(words))
    # a threshold's source names the policy and the rule by its metric
    acc = json.loads(gpuvet("accept", standard, "--json", check=None).stdout)
    srcs = [c.get("source", "") for k in ("passed", "failed") for c in acc.get(k, [])]
    assert any("policy default, rule gemm.bf16.tflops min_fraction_of_reference 0.75" in s for s in srcs), srcs
    assert not found("\n".join(srcs))
