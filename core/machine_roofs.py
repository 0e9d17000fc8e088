"""``python -m core measure``: a short empirical roofline of the machine it runs on.

Two ceilings, each timed by repetition within a time budget:

* **bandwidth**: a streaming copy of a large array (``dst[:] = src``), which
  reads and writes every byte once: bytes/s = 2 × size / time (the STREAM
  "copy" kernel, McCalpin 1995);
* **compute**: a large matrix multiply, 2·n³ FLOP per product, of random operands: constant ones or
  zeros toggle fewer bits, draw less power and hold higher clocks, so they overstate the peak (on an
  H200 this command read 869 TFLOP/s multiplying ones, 782 multiplying random data: ``core/h200_roofline.json``).

NumPy on the CPU (FP32 matmul); a GPU through PyTorch when one is present
(BF16 matmul, device-to-device copy).  The best of the repetitions is kept,
as STREAM does.  The result is a custom accelerator for the lab.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Roofs:
    """Measured ceilings: FLOP/s and bytes/s, the memory size in bytes, and what was measured."""

    device: str
    flops: float
    bandwidth: float
    flops_kind: str
    memory_bytes: float


def _progress(fraction: float, label: str, stream=sys.stderr) -> None:
    fraction = min(max(fraction, 0.0), 1.0)
    filled = int(30 * fraction)
    stream.write(f"\rmeasure [{'#' * filled}{'.' * (30 - filled)}] {100 * fraction:3.0f}% {label:<24}")
    stream.flush()


def _best_rate(work: float, run, budget_s: float, start: float, total_s: float, label: str) -> float:
    """Repeat ``run`` within ``budget_s``; the best of the repetitions as work per second."""
    best, began = 0.0, time.perf_counter()
    while True:
        t0 = time.perf_counter()
        run()
        dt = time.perf_counter() - t0
        best = max(best, work / dt)
        elapsed = time.perf_counter() - began
        _progress((time.perf_counter() - start) / total_s, label)
        if elapsed >= budget_s:
            return best


def measure_numpy(seconds: float = 30.0, copy_bytes: int = 256 * 2**20, n: int = 2048) -> Roofs:
    """CPU roofs with NumPy within about ``seconds``."""
    start = time.perf_counter()
    src = np.ones(copy_bytes // 8)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # touch every page once: the first copy pays for page faults, not bandwidth
    bandwidth = _best_rate(2.0 * src.nbytes, lambda: np.copyto(dst, src), seconds / 2, start, seconds,
                           "bandwidth (copy)")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    flops = _best_rate(2.0 * n**3, lambda: a @ b, seconds / 2, start, seconds, "compute (FP32 matmul)")
    _progress(1.0, "done")
    sys.stderr.write("\n")
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else 0
    # (bytes; the CLI writes it in GiB, the lab's default reading of a "GB" capacity)
    return Roofs("CPU (NumPy)", flops, bandwidth, "FP32 matmul", float(memory))


def measure_torch(seconds: float = 30.0, n: int = 8192) -> Roofs | None:
    """GPU roofs through PyTorch, or None when no CUDA device is present."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    start = time.perf_counter()
    src = torch.ones(2**28, dtype=torch.float32, device="cuda")  # 1 GiB
    dst = torch.empty_like(src)

    def copy():
        dst.copy_(src)
        torch.cuda.synchronize()

    bandwidth = _best_rate(2.0 * src.numel() * 4, copy, seconds / 2, start, seconds, "bandwidth (copy)")
    a = torch.randn((n, n), dtype=torch.bfloat16, device="cuda")
    b = torch.randn((n, n), dtype=torch.bfloat16, device="cuda")

    def matmul():
        a @ b
        torch.cuda.synchronize()

    flops = _best_rate(2.0 * n**3, matmul, seconds / 2, start, seconds, "compute (BF16 matmul)")
    _progress(1.0, "done")
    sys.stderr.write("\n")
    memory = torch.cuda.get_device_properties(0).total_memory
    return Roofs(torch.cuda.get_device_name(), flops, bandwidth, "BF16 matmul", float(memory))


def measure(seconds: float = 30.0) -> Roofs:
    """The GPU's roofs if PyTorch sees one, else the CPU's."""
    return measure_torch(seconds) or measure_numpy(seconds)
