"""A real H200's roofline beside the lab's: the ceiling, the expected step and what the GPU did.

``core/h200_roofline.json`` holds two runs of ``benchmarks/gpu_roofline.py`` on an NVIDIA H200 SXM:
STREAM-like bandwidth, BF16/FP8 GEMM peaks, decode attention, and the **bare decode chain**, the weight
GEMMs of one Llama-3-8B decode step (per layer QKV, output, gate-up, down; then the LM head) replayed as a
CUDA graph for batches B = 1 … 2048.  The chain is a decode step with nothing but its weight GEMMs: no
attention, no norms, no sampling, no engine.  So it measures the terms that sit between the ceiling and any
engine's step (bandwidth the part reaches, kernels below it, GEMM efficiency, the overlap near the ridge)
and none of an engine's own.

For each B this module gives the lab's ceiling for exactly those bytes and FLOPs
(``max(max(FLOP / P_peak, bytes / BW), launches)``, datasheet figures) and the lab's expected step for
them, both from :func:`core.expected.chain_step_times` (the ceiling is its first state), with the
sourced and fitted constants of ``core/efficiency.json`` (the engine terms, attention and per-step
overhead are zero because the chain has none).  Neither uses the measurement: the fitted constants come
from published engine measurements (``core/measurements.json``), so the H200 chain is an independent check
of them.

Its ``decode_step`` runs (``benchmarks/gpu_decode_step.py``) are a whole Llama-3-8B decode step written as
gpt-fast writes it (attention, norms, rotary, LM head and all), eager, as a CUDA graph and compiled as
gpt-fast compiles it: :func:`decode_steps` sets them beside the lab's ceiling and its expected step for the
``gpt-fast`` engine at the same batch and context.

Units SI: seconds, bytes, FLOP, bytes/s, FLOP/s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np

from . import overhead
from .expected import ChainInputs, ChainParams, chain_step_times, engine_parameters, expected_for_scenario
from .hardware import get_accelerator
from .scenario import Scenario

__all__ = [
    "MEASURED_PATH", "ChainPoint", "DecodePoint", "bare_chain", "chain_table", "decode_steps", "decode_table",
    "gemm_fraction", "load_measured", "stream_fraction",
]

MEASURED_PATH = Path(__file__).with_name("h200_roofline.json")
GPU_ID = "h200"


@cache
def load_measured(path: Path = MEASURED_PATH) -> dict:
    """The stored runs (``{"runs": [...], "core_measure": ...}``); see ``benchmarks/gpu_roofline.py``."""
    return json.loads(Path(path).read_text())


def stream_fraction(run: dict, kernel: str = "dot") -> float:
    """A run's STREAM-like bandwidth (``read``, ``dot`` or ``copy``, best repetition) ÷ the datasheet's."""
    return run["bandwidth"][kernel]["bytes_per_s"] / get_accelerator(GPU_ID).hbm_bandwidth


def gemm_fraction(run: dict, precision: str = "bf16", n: int = 8192) -> float:
    """A run's n³ GEMM rate (best repetition) ÷ the datasheet's dense peak for ``precision``."""
    return run["gemm"][precision][str(n)]["flop_per_s"] / get_accelerator(GPU_ID).dense_flop_per_s[precision]


@dataclass(frozen=True)
class ChainPoint:
    """One batch of the bare decode chain: measured, ceiling and expected step times, seconds.

    ``ceiling_fraction`` = ceiling ÷ measured (≤ 1 when the ceiling holds); ``speed_vs_expected`` =
    expected ÷ measured (the measured speed over the expected speed, as ``core/expected_spread.json``
    states its spread); ``speed_vs_max_only`` the same with the roofline's ``max`` in place of the fitted
    smooth maximum (what the overlap term explains).
    """

    B: int
    flop: float
    bytes: float
    measured_s: float
    eager_s: float
    ceiling_s: float
    expected_s: float
    max_only_s: float

    @property
    def intensity(self) -> float:
        return self.flop / self.bytes

    @property
    def ceiling_fraction(self) -> float:
        return self.ceiling_s / self.measured_s

    @property
    def speed_vs_expected(self) -> float:
        return self.expected_s / self.measured_s

    @property
    def speed_vs_max_only(self) -> float:
        return self.max_only_s / self.measured_s


def _params() -> ChainParams:
    """The expected step's constants for a bare cuBLAS chain on the H200 under CUDA graphs: the generic preset's
    (:func:`core.expected.engine_parameters`), with nothing of an engine's own (no GEMM factor below the library's,
    no per-step host work, one launch of the graph)."""
    base = engine_parameters(Scenario(model="llama-3-8b", gpu=GPU_ID).evaluate(), cuda_graphs=True).chain_params()
    return replace(base, gemm_engine_factor=1.0, launch_cpu_s=overhead.LAUNCH_LATENCY_S, step_overhead_s=0.0,
                   request_overhead_s=0.0)


def bare_chain(run: dict) -> list[ChainPoint]:
    """The run's bare decode chain, one :class:`ChainPoint` per batch, against the lab's ceiling and expected step.

    Bytes are the weights read once plus every activation read and written (BF16); FLOP = 2·B·weights.
    """
    gpu = get_accelerator(GPU_ID)
    peak, bw = gpu.dense_flop_per_s["bf16"], gpu.hbm_bandwidth
    ladder = run["ladder"]
    kernels = ladder["layers"] * len(ladder["matrices_per_layer"]) + 1
    launch = overhead.overhead_time(kernels, cuda_graphs=True)
    rows = ladder["rows"]
    flop = np.array([r["flop"] for r in rows])
    moved = np.array([r["weight_bytes"] + r["activation_bytes"] for r in rows])
    zero = np.zeros_like(flop)
    x = ChainInputs(
        compute_s=flop / peak, compute_attention_s=zero, memory_s=moved / bw, communication_s=zero,
        launch_s=zero + launch, bandwidth=bw, weight_bytes_lab=moved, weight_bytes_format=moved,
        weight_bytes_gathered=moved, kv_bytes=zero, flop_gemm=flop, flop_attention=zero, peak_lab=peak,
        peak_gemm=peak, peak_bf16=peak, allreduce_calls=zero, allreduce_bytes=zero, tp=zero + 1,
        communication_other_s=zero, kernels=zero + kernels, is_prefill=zero, grouped_kv=zero,
    )
    params = _params()
    ceiling, *_, expected = chain_step_times(x, params, ends_only=True)
    max_only = chain_step_times(x, replace(params, overlap_n=np.inf), ends_only=True)[-1]
    return [
        ChainPoint(B=r["B"], flop=float(f), bytes=float(m), measured_s=r["graph"]["min_s"],
                   eager_s=r["eager"]["min_s"], ceiling_s=float(c), expected_s=float(e), max_only_s=float(mo))
        for r, f, m, c, e, mo in zip(rows, flop, moved, ceiling, expected, max_only, strict=True)
    ]


def chain_table(run: dict) -> str:
    """The bare chain as a Markdown table: per batch the intensity, the measured step (CUDA graph and eager),
    the ceiling and its fraction, the expected step and the measured speed over it (``docs/measured-on-an-h200.md``
    prints this for the stored runs; a test checks it is this function's text)."""
    lines = [
        "| B | I (FLOP/byte) | measured, graph (ms) | eager (ms) | ceiling (ms) | ceiling ÷ measured "
        "| expected (ms) | measured speed ÷ expected | ÷ expected with max, not smooth max |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in bare_chain(run):
        lines.append(
            f"| {p.B:,} | {p.intensity:,.1f} | {p.measured_s * 1e3:.3f} | {p.eager_s * 1e3:.3f} "
            f"| {p.ceiling_s * 1e3:.3f} | {p.ceiling_fraction:.2f} | {p.expected_s * 1e3:.3f} "
            f"| {p.speed_vs_expected:.2f} | {p.speed_vs_max_only:.2f} |"
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class DecodePoint:
    """One whole decode step (``benchmarks/gpu_decode_step.py``) at batch ``B`` and context ``S``, seconds.

    ``ceiling_s`` and ``expected_s`` are the lab's for Llama-3-8B on the H200 in BF16 at that B and S, the
    expected step for the ``gpt-fast`` engine (whose way of compiling the step the benchmark copies).
    ``compiled_s`` is None where the run did not compile that point.
    """

    B: int
    S: int
    eager_s: float
    graph_s: float
    compiled_s: float | None
    ceiling_s: float
    expected_s: float

    @property
    def ceiling_fraction(self) -> float | None:
        """Ceiling ÷ the compiled step (the fraction of the ceiling it delivers)."""
        return None if self.compiled_s is None else self.ceiling_s / self.compiled_s

    @property
    def speed_vs_expected(self) -> float | None:
        """Expected ÷ the compiled step: its measured speed over the expected speed."""
        return None if self.compiled_s is None else self.expected_s / self.compiled_s


def decode_steps(run: dict, engine: str = "gpt-fast") -> list[DecodePoint]:
    """A run of the whole decode step against the lab's ceiling and its expected step for ``engine``."""
    points = []
    for r in run["rows"]:
        e = expected_for_scenario(Scenario(model="llama-3-8b", gpu=GPU_ID, batch=r["B"], context=r["S"]), engine)
        compiled = r.get("compiled", {}).get("min_s")
        points.append(DecodePoint(B=r["B"], S=r["S"], eager_s=r["eager"]["min_s"], graph_s=r["graph"]["min_s"],
                                  compiled_s=compiled, ceiling_s=e.ceiling_step_time_s,
                                  expected_s=e.expected_step_time_s))
    return points


def decode_table(run: dict) -> str:
    """A run of the whole decode step as a Markdown table (``docs/measured-on-an-h200.md`` prints it)."""
    lines = [
        "| B | S | eager (ms) | CUDA graph (ms) | compiled (ms) | ceiling (ms) | ceiling ÷ compiled "
        "| expected, gpt-fast (ms) | compiled speed ÷ expected |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in decode_steps(run):
        compiled = "—" if p.compiled_s is None else f"{p.compiled_s * 1e3:.3f}"
        frac = "—" if p.compiled_s is None else f"{p.ceiling_fraction:.2f}"
        speed = "—" if p.compiled_s is None else f"{p.speed_vs_expected:.2f}"
        lines.append(f"| {p.B} | {p.S:,} | {p.eager_s * 1e3:.3f} | {p.graph_s * 1e3:.3f} | {compiled} "
                     f"| {p.ceiling_s * 1e3:.3f} | {frac} | {p.expected_s * 1e3:.3f} | {speed} |")
    return "\n".join(lines)
