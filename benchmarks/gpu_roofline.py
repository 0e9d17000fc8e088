"""Measure a real roofline on a CUDA GPU: HBM bandwidth, GEMM peak, and a decode step's batch ladder.

Writes one JSON file (``--out``) that ``benchmarks/results/`` keeps and ``tests/unit/test_gpu_roofline.py``
checks against the lab's ceilings (``core``) and its sourced efficiency terms (``core/efficiency.json``).
Needs PyTorch with a CUDA device; it imports nothing from the lab, so it runs on a bare GPU machine.

What it measures, each timed with CUDA events (``min`` and ``median`` of the repetitions, after warm-up):

* **bandwidth**: three STREAM-like kernels over 2 GiB float32 arrays (35 × an H200's 60 MB L2):
  ``read`` (``x.sum()``: bytes = size), ``dot`` (``torch.dot(a, b)``: two read streams, BabelStream's
  *Dot*, the pattern ``core/efficiency.json``'s ``hbm_stream_fraction`` cites) and ``copy``
  (``b.copy_(a)``: bytes = 2 × size, the STREAM convention).
* **gemm**: square BF16 matrix products (2·n³ FLOP) on random data, n = 4096, 8192, 16384, and FP8 (E4M3,
  per-tensor scales, ``torch._scaled_mm``) at n = 8192 where the build supports it; and BF16 at n = 8192
  on operands of ones (``bf16_ones``), to show how constant data overstates the peak.
* **ladder**: the weight GEMMs of one decode step of a model read from its ``config.json``
  (default: the lab's ``core/model_configs/llama-3-8b.json``): per layer the fused QKV, output, fused
  gate-up and down projections, then the LM head, all BF16, for a batch of B tokens (k = 1). The input
  embedding is a gather of B rows and is not timed. The step is captured in a CUDA graph and replayed
  (no host launch cost), and also run eagerly (one host launch per GEMM). Bytes = the weights once
  plus every activation read and written; FLOP = 2·B·(weights' elements).
* **attention**: decode attention of one layer (GQA, one query token per sequence, S cached tokens)
  through ``torch.nn.functional.scaled_dot_product_attention`` (``enable_gqa``, the backend PyTorch
  picks); bytes = the K and V read (2·B·S·h_kv·d_head·2).

Usage (on the GPU machine)::

    python benchmarks/gpu_roofline.py --out h200.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import statistics
import subprocess
import sys
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[1] / "core" / "model_configs" / "llama-3-8b.json"
BATCHES = (1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048)


def timed(torch, fn, reps: int, warmup: int = 3) -> dict:
    """Seconds per call of ``fn`` by CUDA events: min, median and every repetition."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return {"min_s": min(times), "median_s": statistics.median(times), "reps": len(times)}


def rate(t: dict, work: float, unit: str) -> dict:
    """A timed point with its work and its rate at the best and the median repetition."""
    return {unit: work, **t, f"{unit}_per_s": work / t["min_s"], f"{unit}_per_s_median": work / t["median_s"]}


def bandwidth(torch, reps: int) -> dict:
    n = 2**29  # float32 elements: 2 GiB per array
    a = torch.rand(n, device="cuda")
    b = torch.rand(n, device="cuda")
    size = a.numel() * a.element_size()
    kernels = {"read": (lambda: a.sum(), size), "dot": (lambda: torch.dot(a, b), 2 * size),
               "copy": (lambda: b.copy_(a), 2 * size)}
    out = {name: rate(timed(torch, fn, reps), moved, "bytes") for name, (fn, moved) in kernels.items()}
    kernels.clear()
    torch.cuda.empty_cache()
    return out


def gemm(torch, reps: int) -> dict:
    out = {"bf16": {}, "fp8": {}, "bf16_ones": {}}
    for kind, n in (("bf16", 4096), ("bf16", 8192), ("bf16", 16384), ("bf16_ones", 8192)):
        make = torch.ones if kind == "bf16_ones" else torch.randn
        a, b = (make(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        out[kind][str(n)] = rate(timed(torch, lambda a=a, b=b: a @ b, reps), 2.0 * n**3, "flop")
    try:
        n = 8192
        a, b = (torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn) for _ in range(2))
        one = torch.tensor(1.0, device="cuda")

        def fp8():
            return torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

        out["fp8"][str(n)] = rate(timed(torch, fp8, reps), 2.0 * n**3, "flop")
    except Exception as exc:  # noqa: BLE001 - an FP8 path this build lacks is recorded, not fatal
        out["fp8"]["error"] = f"{type(exc).__name__}: {exc}"[:300]
    torch.cuda.empty_cache()
    return out


def shapes(config: dict) -> tuple[list[tuple[int, int]], tuple[int, int], int]:
    """(out, in) of each layer's weight matrices, of the LM head, and the layer count."""
    h = config["hidden_size"]
    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    d = config.get("head_dim") or h // heads
    inter = config["intermediate_size"]
    layer = [((heads + 2 * kv) * d, h), (h, heads * d), (2 * inter, h), (h, inter)]
    return layer, (config["vocab_size"], h), config["num_hidden_layers"]


def ladder(torch, config: dict, reps: int) -> dict:
    layer, head, n_layers = shapes(config)
    weights = [[torch.randn(o, i, device="cuda", dtype=torch.bfloat16) * 0.02 for o, i in layer]
               for _ in range(n_layers)]
    w_head = torch.randn(*head, device="cuda", dtype=torch.bfloat16) * 0.02
    elements = n_layers * sum(o * i for o, i in layer) + head[0] * head[1]
    rows = []
    for B in BATCHES:
        xs = {i: torch.randn(B, i, device="cuda", dtype=torch.bfloat16) for _, i in layer + [head]}

        def step(xs=xs):
            for ws in weights:
                for (_, i), w in zip(layer, ws, strict=True):
                    torch.matmul(xs[i], w.t())
            torch.matmul(xs[head[1]], w_head.t())

        eager = timed(torch, step, reps)
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            step()  # warm cuBLAS's workspace outside the capture
        torch.cuda.current_stream().wait_stream(stream)
        with torch.cuda.graph(graph):
            step()
        replay = timed(torch, graph.replay, reps)
        activations = n_layers * sum(B * (o + i) for o, i in layer) + B * (head[0] + head[1])
        rows.append({
            "B": B, "flop": 2.0 * B * elements, "weight_bytes": 2.0 * elements, "activation_bytes": 2.0 * activations,
            "graph": replay, "eager": eager,
        })
        del graph
    weights.clear()
    torch.cuda.empty_cache()
    return {"matrices_per_layer": [list(s) for s in layer], "lm_head": list(head), "layers": n_layers,
            "weight_elements": elements, "rows": rows}


def attention(torch, config: dict, reps: int) -> dict:
    import torch.nn.functional as F

    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    d = config.get("head_dim") or config["hidden_size"] // heads
    rows = []
    for B, S in ((1, 8192), (1, 32768), (8, 8192), (32, 8192), (64, 8192), (128, 4096), (256, 2048)):
        q = torch.randn(B, heads, 1, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(B, kv, S, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(B, kv, S, d, device="cuda", dtype=torch.bfloat16)
        moved = 2.0 * B * kv * S * d * 2
        try:
            t = timed(torch, lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), reps)
            rows.append({"B": B, "S": S, **rate(t, moved, "bytes")})
        except Exception as exc:  # noqa: BLE001
            rows.append({"B": B, "S": S, "error": f"{type(exc).__name__}: {exc}"[:300]})
    torch.cuda.empty_cache()
    return {"heads": heads, "kv_heads": kv, "head_dim": d, "rows": rows}


def device_facts(torch) -> dict:
    p = torch.cuda.get_device_properties(0)
    facts = {"name": torch.cuda.get_device_name(), "sm_count": p.multi_processor_count,
             "memory_bytes": p.total_memory, "l2_bytes": getattr(p, "L2_cache_size", None),
             "torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
             "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}
    try:
        facts["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,clocks.max.mem,power.limit",
             "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        facts["nvidia_smi"] = f"unavailable: {exc}"
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--config", default=str(CONFIG), help="model config.json for the ladder and attention")
    parser.add_argument("--reps", type=int, default=20, help="timed repetitions per point (default 20)")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("gpu_roofline: needs PyTorch", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gpu_roofline: no CUDA device", file=sys.stderr)
        return 2
    config = json.loads(Path(args.config).read_text())
    result = {"about": __doc__.split("\n\n")[0], "device": device_facts(torch), "config": Path(args.config).name}
    for name, run in (("bandwidth", lambda: bandwidth(torch, args.reps)), ("gemm", lambda: gemm(torch, args.reps)),
                      ("ladder", lambda: ladder(torch, config, args.reps)),
                      ("attention", lambda: attention(torch, config, args.reps))):
        result[name] = run()
        print(name, "done", flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    bw = result["bandwidth"]
    print({k: f"{v['bytes_per_s'] / 1e12:.3f} TB/s" for k, v in bw.items()})
    print({k: f"{v['flop_per_s'] / 1e12:.1f} TFLOP/s" for k, v in result["gemm"]["bf16"].items()})
    for row in result["ladder"]["rows"]:
        graph, eager = row["graph"]["min_s"], row["eager"]["min_s"]
        print(f"B={row['B']:5d} graph {graph * 1e3:8.3f} ms  eager {eager * 1e3:8.3f} ms")
    return 0 if all(math.isfinite(v["bytes_per_s"]) for v in bw.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
