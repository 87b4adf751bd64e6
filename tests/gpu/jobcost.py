#!/usr/bin/env python3
"""jobcost.py - what a real job does on this GPU, next to what gpuvet measured here.

Run ON a GPU machine (tests/gpu/session.sh jobcost). For --rounds rounds, the order flipping
each round because the GPU's power state drifts, it runs

    gpuvet --db <scratch> run --profile quick --bench gemm,memcpy --json

and, in a child python3 process (so that neither holds the other's GPU memory), a real PyTorch
workload on a Llama-shaped decoder (RMSNorm, rotary embeddings, grouped-query attention through
scaled_dot_product_attention, SwiGLU MLP, untied output layer), by default the shape of
Llama-3.2-1B (16 layers, hidden 2048, FFN 8192, 32 heads, 8 KV heads, vocabulary 128256):

  train   bf16 mixed precision as Hugging Face's Trainer and Lightning do it: fp32 weights,
          torch.autocast(bfloat16), fused AdamW, one optimiser step per micro-batch of
          --batch sequences of --seq tokens; tokens/s = batch * seq / step time
  lora    the same with every linear layer frozen in bf16 and a rank-16 adapter (fp32, alpha 32)
          beside each of them, as PEFT's target_modules="all-linear"
  decode  one new token for each of B sequences that already hold --context tokens in a static
          bf16 KV cache, the whole step (embedding to argmax) captured in a CUDA graph as vLLM and
          TensorRT-LLM do; tokens/s = B / step time, for each B of --decode-batches

Each step is timed with CUDA events after warm-up, median of the timed steps. Writes under
--out: fingerprint-N.json (gpuvet's), torch-N.json (the child's measurements) and jobcost.json
(the shape, every round, the medians). `--smoke` runs the child once on a 2-layer model first,
so that a broken script costs seconds, not a session.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

SHAPE_1B = dict(layers=16, hidden=2048, ffn=8192, heads=32, kv_heads=8, vocab=128256)


def build_model(torch, shape, dtype, lora_rank=0):
    nn = torch.nn
    F = torch.nn.functional
    L, d, f, H, KV, V = (shape[k] for k in ("layers", "hidden", "ffn", "heads", "kv_heads", "vocab"))
    hd = d // H

    class Lora(nn.Module):
        def __init__(self, base, r):
            super().__init__()
            self.base = base
            self.a = nn.Parameter(torch.randn(r, base.in_features, dtype=torch.float32) / math.sqrt(base.in_features))
            self.b = nn.Parameter(torch.zeros(base.out_features, r, dtype=torch.float32))
            self.scale = 32.0 / r

        def forward(self, x):
            return self.base(x) + F.linear(F.linear(x, self.a), self.b) * self.scale

    def lin(i, o):
        m = nn.Linear(i, o, bias=False, dtype=dtype)
        if lora_rank:
            m.weight.requires_grad_(False)
            return Lora(m, lora_rank)
        return m

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1 = nn.RMSNorm(d, eps=1e-5, dtype=dtype)
            self.n2 = nn.RMSNorm(d, eps=1e-5, dtype=dtype)
            self.q, self.k, self.v, self.o = lin(d, H * hd), lin(d, KV * hd), lin(d, KV * hd), lin(H * hd, d)
            self.gate, self.up, self.down = lin(d, f), lin(d, f), lin(f, d)

        def attn_qkv(self, x, cos, sin):
            b, s, _ = x.shape
            q = self.q(x).view(b, s, H, hd).transpose(1, 2)
            k = self.k(x).view(b, s, KV, hd).transpose(1, 2)
            v = self.v(x).view(b, s, KV, hd).transpose(1, 2)
            return rope(q, cos, sin), rope(k, cos, sin), v

        def mlp(self, x):
            return self.down(F.silu(self.gate(x)) * self.up(x))

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            q, k, v = self.attn_qkv(self.n1(x), cos, sin)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.o(a.transpose(1, 2).reshape(b, s, d))
            return x + self.mlp(self.n2(x))

    def rope(x, cos, sin):
        x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, d, dtype=dtype)
            self.blocks = nn.ModuleList(Block() for _ in range(L))
            self.norm = nn.RMSNorm(d, eps=1e-5, dtype=dtype)
            self.head = nn.Linear(d, V, bias=False, dtype=dtype)
            if lora_rank:
                for p in (*self.emb.parameters(), *self.norm.parameters(), *self.head.parameters()):
                    p.requires_grad_(False)
                for blk in self.blocks:
                    for p in (*blk.n1.parameters(), *blk.n2.parameters()):
                        p.requires_grad_(False)

        def forward(self, ids, cos, sin):
            x = self.emb(ids)
            for blk in self.blocks:
                x = blk(x, cos, sin)
            return self.head(self.norm(x))

    m = Model()
    m.hd = hd
    m.rope = rope
    return m


def rope_tables(torch, hd, positions, dev):
    inv = 1.0 / (500000.0 ** (torch.arange(0, hd // 2, device=dev, dtype=torch.float32) / (hd // 2)))
    ang = positions.to(torch.float32)[:, None] * inv[None, :]
    return ang.cos(), ang.sin()


def timed(torch, fn, warm, reps):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        ms.append(e0.elapsed_time(e1))
    return statistics.median(ms), ms


def measure_train(torch, shape, batch, seq, lora, warm, reps):
    dev = "cuda"
    torch.manual_seed(1)
    if lora:
        m = build_model(torch, shape, torch.bfloat16, lora_rank=16).to(dev)
    else:
        m = build_model(torch, shape, torch.float32).to(dev)
    params = [p for p in m.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
    ids = torch.randint(0, shape["vocab"], (batch, seq + 1), device=dev)
    cos, sin = rope_tables(torch, m.hd, torch.arange(seq, device=dev), dev)
    losses = []

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = m(ids[:, :-1], cos, sin)
        loss = torch.nn.functional.cross_entropy(logits.float().view(-1, shape["vocab"]), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())

    torch.cuda.reset_peak_memory_stats()
    med, ms = timed(torch, step, warm, reps)
    lf = [float(x) for x in losses]
    assert all(math.isfinite(x) for x in lf), "non-finite loss"
    n_all = sum(p.numel() for p in m.parameters())
    out = dict(task="lora" if lora else "train", batch=batch, seq=seq, step_ms=med, steps_ms=ms,
               tokens_per_s=batch * seq / (med / 1e3), params=n_all, trainable=sum(p.numel() for p in params),
               peak_mem_gib=torch.cuda.max_memory_allocated() / 2**30, loss_first=lf[0], loss_last=lf[-1])
    del m, opt, params
    torch.cuda.empty_cache()
    return out


def measure_decode(torch, shape, batches, context, warm, reps):
    dev = "cuda"
    F = torch.nn.functional
    torch.manual_seed(2)
    m = build_model(torch, shape, torch.bfloat16).to(dev).eval()
    L, KV, H = shape["layers"], shape["kv_heads"], shape["heads"]
    hd = m.hd
    out = []
    for B in batches:
        kc = torch.randn(L, B, KV, context + 1, hd, device=dev, dtype=torch.bfloat16)
        vc = torch.randn(L, B, KV, context + 1, hd, device=dev, dtype=torch.bfloat16)
        tok = torch.randint(0, shape["vocab"], (B, 1), device=dev)
        cos, sin = rope_tables(torch, hd, torch.tensor([context], device=dev), dev)

        def step():
            x = m.emb(tok)
            for i, blk in enumerate(m.blocks):
                q, k, v = blk.attn_qkv(blk.n1(x), cos, sin)
                kc[i, :, :, context:context + 1] = k
                vc[i, :, :, context:context + 1] = v
                a = F.scaled_dot_product_attention(q, kc[i], vc[i], enable_gqa=True)
                x = x + blk.o(a.transpose(1, 2).reshape(B, 1, H * hd))
                x = x + blk.mlp(blk.n2(x))
            tok.copy_(m.head(m.norm(x)).argmax(-1))

        with torch.inference_mode():
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    step()
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                step()
            med, ms = timed(torch, g.replay, warm, reps)
        wbytes = sum(p.numel() * p.element_size() for p in m.parameters()) - m.emb.weight.numel() * 2
        kvbytes = 2 * L * B * KV * (context + 1) * hd * 2
        out.append(dict(task="infer", batch=B, context=context, step_ms=med, steps_ms=ms,
                        tokens_per_s=B / (med / 1e3), weight_bytes=wbytes, kv_bytes=kvbytes,
                        bytes_per_step_gbps=(wbytes + kvbytes) / (med / 1e3) / 1e9))
        del kc, vc, g
        torch.cuda.empty_cache()
    return out


def child(a):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    shape = json.loads(a.shape)
    res = dict(torch=torch.__version__, device=torch.cuda.get_device_name(0), shape=shape, results=[])
    t0 = time.time()
    for lora in (False, True):
        res["results"].append(measure_train(torch, shape, a.batch, a.seq, lora, a.warm, a.reps))
    res["results"] += measure_decode(torch, shape, [int(b) for b in a.decode_batches.split(",")], a.context,
                                     a.warm * 3, a.reps * 5)
    res["seconds"] = time.time() - t0
    json.dump(res, sys.stdout)


def run_child(a, shape, path):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--shape", json.dumps(shape), "--batch",
           str(a.batch), "--seq", str(a.seq), "--context", str(a.context), "--decode-batches", a.decode_batches,
           "--warm", str(a.warm), "--reps", str(a.reps)]
    with open(path, "w") as f:
        subprocess.run(cmd, stdout=f, check=True)
    with open(path) as f:
        return json.load(f)


def run_gpuvet(a, db, path):
    with open(path, "w") as f:
        r = subprocess.run([a.gpuvet, "--db", db, "run", "--profile", "quick", "--bench", "gemm,memcpy", "--json"],
                           stdout=f)
    if r.returncode not in (0, 1):
        sys.exit(f"jobcost.py: gpuvet exited {r.returncode}")
    with open(path) as f:
        return json.load(f)


def headline(fp, name):
    for m in fp.get("metrics", []):
        if m.get("name") == name and m.get("gpu") in (0, -1) and m.get("value") is not None:
            return m["value"]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuvet", default="build/gpuvet")
    ap.add_argument("--out", default="jobcost-out")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4, help="training micro-batch, sequences (default 4)")
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--context", type=int, default=1024, help="tokens already in each decode sequence's cache")
    ap.add_argument("--decode-batches", default="1,16,64,256")
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--shape", default=json.dumps(SHAPE_1B))
    a = ap.parse_args()
    if a.child:
        return child(a)
    os.makedirs(a.out, exist_ok=True)
    shape = json.loads(a.shape)
    if a.smoke:
        small = dict(shape, layers=2)
        t0 = time.time()
        r = run_child(argparse.Namespace(**dict(vars(a), batch=1, seq=256, decode_batches="1", warm=1, reps=2)),
                      small, os.path.join(a.out, "smoke.json"))
        print(f"# smoke ok in {time.time() - t0:.1f} s: {[round(x['tokens_per_s']) for x in r['results']]}")
    db = os.path.join(tempfile.mkdtemp(), "j.db")
    rounds = []
    for i in range(1, a.rounds + 1):
        order = ("gpuvet", "torch") if i % 2 else ("torch", "gpuvet")
        rd = {"round": i, "order": list(order)}
        for what in order:
            t0 = time.time()
            if what == "gpuvet":
                fp = run_gpuvet(a, db, os.path.join(a.out, f"fingerprint-{i}.json"))
                rd["gpuvet"] = {k: headline(fp, k) for k in ("gemm.bf16.tflops", "gemm.fp8.tflops",
                                                             "memcpy.d2d.gbps", "memcpy.h2d.pinned.gbps")}
                rd["gpuvet"]["uuid"] = (fp.get("run") or {}).get("uuid")
            else:
                rd["torch"] = run_child(a, shape, os.path.join(a.out, f"torch-{i}.json"))["results"]
            print(f"# round {i} {what}: {time.time() - t0:.1f} s", flush=True)
        rounds.append(rd)
    summary = {"shape": shape, "rounds": rounds, "median": {}}
    for k in ("gemm.bf16.tflops", "memcpy.d2d.gbps"):
        summary["median"][k] = statistics.median(r["gpuvet"][k] for r in rounds if r["gpuvet"][k] is not None)
    for j, res in enumerate(rounds[0]["torch"]):
        key = f"{res['task']}" + (f".b{res['batch']}" if res["task"] == "infer" else "")
        summary["median"][key + ".tokens_per_s"] = statistics.median(r["torch"][j]["tokens_per_s"] for r in rounds)
    with open(os.path.join(a.out, "jobcost.json"), "w") as f:
        json.dump(summary, f, indent=1)
    for k, v in summary["median"].items():
        print(f"{k:32s} {v:12.1f}")


if __name__ == "__main__":
    main()
