"""Time a whole Llama decode step on a CUDA GPU, written the way gpt-fast writes it, for the lab's expected step.

A minimal PyTorch Llama (random BF16 weights shaped by a ``config.json``, default the lab's
``core/model_configs/llama-3-8b.json``): the input embedding gathered, then per layer RMSNorm, the fused QKV
projection, rotary embedding, the new K and V written into a static KV cache (slot S − 1), decode attention
over the S cached tokens (``scaled_dot_product_attention`` with ``enable_gqa``), the output projection, RMSNorm, the
fused gate-up projection, SiLU-and-multiply and the down projection; then the final norm, the LM head and a
greedy pick of the next token. One step for a batch of B sequences at context S, three ways:

* ``eager``: PyTorch dispatches every kernel from Python (the host's launches in the step);
* ``graph``: the same step captured once in a CUDA graph and replayed;
* ``compiled``: ``torch.compile(mode="reduce-overhead", fullgraph=True)``, as gpt-fast's ``generate.py``
  compiles its decode step (Inductor's fused kernels, replayed as CUDA graphs).

Each time is the best of the repetitions by CUDA events, after warm-up. The lab compares them with its
ceiling and its expected step for the ``gpt-fast`` engine (``core/measured_roofline.py``). Imports nothing of
the lab, so it runs on a bare GPU machine::

    python benchmarks/gpu_decode_step.py --out decode.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from gpu_roofline import CONFIG, timed  # the script beside this one (its folder is on sys.path when run)

POINTS = ((1, 1024), (1, 4096), (8, 1024), (32, 1024), (64, 2048))


def build(torch, config: dict, B: int, S: int, device: str):
    """The model (a ``torch.nn.Module``; its weights and KV cache are buffers, as gpt-fast keeps its cache) and
    its static inputs, for batch ``B`` at context ``S`` (the new token at position S − 1)."""
    F, nn = torch.nn.functional, torch.nn
    dt = torch.bfloat16
    h, inter, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    H = config["num_attention_heads"]
    KV = config.get("num_key_value_heads", H)
    d = config.get("head_dim") or h // H
    eps = config.get("rms_norm_eps", 1e-5)
    theta = config.get("rope_theta", 10000.0)

    def w(*shape):
        return (torch.randn(*shape, device=device, dtype=torch.float32) * 0.02).to(dt)

    def rms(x, weight):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(dt) * weight

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            for name, value in (("wqkv", w((H + 2 * KV) * d, h)), ("wo", w(h, H * d)), ("w13", w(2 * inter, h)),
                                ("w2", w(h, inter)), ("n1", torch.ones(h, device=device, dtype=dt)),
                                ("n2", torch.ones(h, device=device, dtype=dt)),
                                ("k", torch.randn(B, KV, S, d, device=device, dtype=dt)),
                                ("v", torch.randn(B, KV, S, d, device=device, dtype=dt))):
                self.register_buffer(name, value)

        def forward(self, x, cos, sin):
            q, k, v = F.linear(rms(x, self.n1), self.wqkv).split((H * d, KV * d, KV * d), dim=-1)
            q = rope(q.view(B, 1, H, d), cos, sin).transpose(1, 2)
            k = rope(k.view(B, 1, KV, d), cos, sin).transpose(1, 2)
            self.k[:, :, S - 1:S] = k
            self.v[:, :, S - 1:S] = v.view(B, 1, KV, d).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, self.k, self.v, enable_gqa=True)
            x = x + F.linear(y.transpose(1, 2).reshape(B, 1, H * d), self.wo)
            gate, up = F.linear(rms(x, self.n2), self.w13).chunk(2, dim=-1)
            return x + F.linear(F.silu(gate) * up, self.w2)

    def rope(x, cos, sin):  # x: [B, 1, heads, d]; cos, sin: [d / 2] at the new token's position
        xf = x.float().reshape(*x.shape[:-1], d // 2, 2)
        out = torch.stack((xf[..., 0] * cos - xf[..., 1] * sin, xf[..., 0] * sin + xf[..., 1] * cos), -1)
        return out.flatten(-2).to(dt)

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(config["num_hidden_layers"]))
            self.register_buffer("embed", w(vocab, h))
            self.register_buffer("lm_head", w(vocab, h))
            self.register_buffer("norm", torch.ones(h, device=device, dtype=dt))
            angle = (S - 1) / theta ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d)
            self.register_buffer("cos", angle.cos())
            self.register_buffer("sin", angle.sin())

        def forward(self, tokens):
            x = F.embedding(tokens, self.embed)  # [B, 1, h]
            for layer in self.layers:
                x = layer(x, self.cos, self.sin)
            return F.linear(rms(x, self.norm), self.lm_head).argmax(-1)

    return Llama(), torch.randint(0, vocab, (B, 1), device=device)


def measure_point(torch, config: dict, B: int, S: int, reps: int, compiled: bool) -> dict:
    """Eager and CUDA-graph times of one step (``compiled``: the ``torch.compile`` time alone), seconds."""
    model, tokens = build(torch, config, B, S, "cuda")
    row = {}
    with torch.inference_mode():
        if not compiled:
            row["eager"] = timed(torch, lambda: model(tokens), reps)
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                model(tokens)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                model(tokens)
            row["graph"] = timed(torch, graph.replay, reps)
            del graph
        else:
            began = time.perf_counter()
            try:
                fast = torch.compile(model, mode="reduce-overhead", fullgraph=True)
                for _ in range(3):
                    fast(tokens)
                torch.cuda.synchronize()
                row["compile_s"] = time.perf_counter() - began
                row["compiled"] = timed(torch, lambda: fast(tokens), reps)
            except Exception as exc:  # noqa: BLE001 - a compile this build cannot do is recorded, not fatal
                row["compiled_error"] = f"{type(exc).__name__}: {exc}"[:500]
            torch.compiler.reset()
    torch.cuda.empty_cache()  # the model's buffers go with this frame
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write (rewritten after each point)")
    parser.add_argument("--config", default=str(CONFIG), help="model config.json (default: Llama-3-8B)")
    parser.add_argument("--reps", type=int, default=20, help="timed repetitions per point (default 20)")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile (a minute or more per shape)")
    parser.add_argument("--compile-budget-s", type=float, default=240.0,
                        help="start no compile after this many seconds of the run (default 240)")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("gpu_decode_step: needs PyTorch", file=sys.stderr)
        return 2
    config = json.loads(Path(args.config).read_text())
    if not torch.cuda.is_available():
        print("gpu_decode_step: no CUDA device", file=sys.stderr)
        return 2
    result = {"about": __doc__.split("\n\n")[0], "device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "config": Path(args.config).name, "rows": []}
    began = time.perf_counter()
    rows = {}
    for (B, S), compiled in [(p, False) for p in POINTS] + [(p, True) for p in POINTS]:
        if compiled and (args.no_compile or time.perf_counter() - began > args.compile_budget_s):
            continue
        row = rows.setdefault((B, S), {"B": B, "S": S})
        row.update(measure_point(torch, config, B, S, args.reps, compiled))
        result["rows"] = list(rows.values())
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        shown = {k: f"{v['min_s'] * 1e3:.3f} ms" for k, v in row.items() if isinstance(v, dict)}
        print(B, S, shown, {k: v for k, v in row.items() if k in ("compile_s", "compiled_error")}, flush=True)
    ok = all(math.isfinite(r["graph"]["min_s"]) for r in result["rows"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
