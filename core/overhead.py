"""The third ceiling: overhead (kernel launches), and which regime binds.

Roofline has two ceilings; real systems have three (article 000, "The third
regime nobody plots"; He 2022, "Making Deep Learning Go Brrrr From First
Principles", https://horace.io/brrr_intro.html).  When a step is made of many
small kernels the GPU idles between them, waiting for the CPU to launch the
next.  Model (launches overlap the GPU's work, so the slowest of the three wins):

    t_compute  = FLOPs / P_peak
    t_memory   = bytes / BW
    t_overhead = kernels per step · launch latency
    step time  = max(t_compute, t_memory, t_overhead)

The overhead ceiling on a roofline is a horizontal line at ``FLOPs / t_overhead``
(FLOP/s): the most a step of that many kernels and that much work can reach.
CUDA graphs (one launch for the whole step) and fusion (fewer kernels) lift it.

Units: seconds, FLOP, bytes, FLOP/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .hardware import Accelerator

#: CPU-side cost of launching one kernel, seconds.  Article 000: "A launch costs a
#: few microseconds"; NVIDIA's "Getting Started with CUDA Graphs"
#: (https://developer.nvidia.com/blog/cuda-graphs/) measures a few µs per short
#: kernel launched from a stream.  4 µs is the lab's default; a slider moves it.
LAUNCH_LATENCY_S = 4e-6
LAUNCH_LATENCY_SOURCE = ("article 000, The third regime nobody plots ('a launch costs a few microseconds'); "
                         "NVIDIA, Getting Started with CUDA Graphs, https://developer.nvidia.com/blog/cuda-graphs/")

#: GPU-side gap between consecutive nodes of a captured CUDA graph, seconds.  An
#: assumption (the lab's, adjustable), not a datasheet figure: graphs remove the
#: CPU launch from the critical path but not every gap between kernels.
GRAPH_NODE_GAP_S = 1e-6

#: Kernels of one decoder layer in decode, unfused and fused: the counting the
#: overhead ceiling uses (a Llama-style layer: RMSNorm, QKV projection, RoPE,
#: attention, output projection, residual add, RMSNorm, gate/up projection,
#: SiLU·multiply, down projection, residual add).
KERNELS_PER_LAYER = {
    "unfused": ("RMSNorm", "QKV GEMM", "RoPE", "attention", "O GEMM", "residual add", "RMSNorm",
                "gate/up GEMM", "SiLU × up", "down GEMM", "residual add"),
    "fused": ("RMSNorm + QKV GEMM", "RoPE + attention", "O GEMM + residual add + RMSNorm",
              "gate/up GEMM + SiLU × up", "down GEMM + residual add"),
}
#: Kernels per step outside the layers: embedding lookup, final norm, LM head, sampling.
KERNELS_OUTSIDE_LAYERS = 4
#: The fusion level the lab's step counts (the hardware tour's fusion lever moves its own count only).
STEP_FUSION = "unfused"


def kernels_per_step(layers: int, fusion: str = STEP_FUSION) -> int:
    """Kernels one decode step launches: ``layers · per-layer + 4``.

    Raises:
        ValueError: unknown fusion level or a non-positive layer count.
    """
    if fusion not in KERNELS_PER_LAYER:
        raise ValueError(f"unknown fusion level {fusion!r}; accepted: {', '.join(KERNELS_PER_LAYER)}")
    if isinstance(layers, bool) or not isinstance(layers, int) or not 1 <= layers <= 100_000:
        raise ValueError(f"layers must be a whole number from 1 to 100,000, got {layers!r}")
    return layers * len(KERNELS_PER_LAYER[fusion]) + KERNELS_OUTSIDE_LAYERS


def overhead_time(n_kernels: int, launch_latency_s: float = LAUNCH_LATENCY_S, cuda_graphs: bool = False,
                  graph_node_gap_s: float = GRAPH_NODE_GAP_S) -> float:
    """Seconds a step waits on launches.

    Without graphs: ``kernels · launch latency``.  With CUDA graphs: one launch
    for the whole step plus a GPU-side gap per node, ``latency + kernels · gap``.

    Raises:
        ValueError: a negative or non-finite latency, or a kernel count below 1.
    """
    if isinstance(n_kernels, bool) or not isinstance(n_kernels, int) or not 1 <= n_kernels <= 10**7:
        raise ValueError(f"kernels per step must be a whole number from 1 to 1e7, got {n_kernels!r}")
    for name, v in (("launch latency", launch_latency_s), ("graph node gap", graph_node_gap_s)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and 0 <= v <= 1):
            raise ValueError(f"{name} must be 0 to 1 second, got {v!r}")
    if cuda_graphs:
        return launch_latency_s + n_kernels * graph_node_gap_s
    return n_kernels * launch_latency_s


#: The families of fixes for each regime (article 000, "At a Glance" and "The third regime").
FIXES = {
    "compute": ("better tiling", "tensor cores", "lower-precision math (FP8, FP4)"),
    "memory": ("fusion", "batching", "quantise weights and KV cache", "reuse the cache (GQA, MLA, prefix sharing)"),
    "overhead": ("CUDA graphs", "bigger, fused kernels", "less Python in the loop"),
}
#: Fixes that also help another regime: fusing kernels cuts a step's bytes (memory) and its launches (overhead);
#: batching gives each launch more work, which raises the overhead ceiling FLOPs / launch time (a verifying trial).
ALSO_HELPS = {"fusion": ("overhead",), "batching": ("overhead",), "bigger, fused kernels": ("memory",)}


def fixes_that_cannot_help(regime: str) -> dict[str, tuple[str, ...]]:
    """The other regimes' fixes (:data:`FIXES`), by regime, that do nothing for a ``regime``-bound step: fusion is
    never among them for a memory- or overhead-bound step, nor batching for an overhead-bound one (:data:`ALSO_HELPS`;
    a teacher's trial read "bigger, fused kernels" can help and "fusion" cannot, for one overhead-bound step).

    Raises:
        KeyError: ``regime`` is not one of :data:`FIXES`.

    >>> fixes_that_cannot_help("overhead")["memory"]
    ('quantise weights and KV cache', 'reuse the cache (GQA, MLA, prefix sharing)')
    """
    if regime not in FIXES:
        raise KeyError(regime)
    kept = {other: tuple(f for f in fixes if regime not in ALSO_HELPS.get(f, ()))
            for other, fixes in FIXES.items() if other != regime}
    return {other: fixes for other, fixes in kept.items() if fixes}


@dataclass(frozen=True)
class ThreeCeilings:
    """Compute, memory and overhead times of one step, and which binds.

    Attributes:
        flop: FLOPs of the step.
        bytes_moved: off-chip bytes of the step.
        n_kernels: kernels the step launches.
        compute_s, memory_s, overhead_s: the three times, seconds.
        peak_flop_per_s, bandwidth: the roofs used.
    """

    flop: float
    bytes_moved: float
    n_kernels: int
    compute_s: float
    memory_s: float
    overhead_s: float
    peak_flop_per_s: float
    bandwidth: float

    @property
    def step_s(self) -> float:
        """``max`` of the three times, seconds."""
        return max(self.compute_s, self.memory_s, self.overhead_s)

    @property
    def regime(self) -> str:
        """``"compute"``, ``"memory"`` or ``"overhead"``: the longest time."""
        times = {"compute": self.compute_s, "memory": self.memory_s, "overhead": self.overhead_s}
        return max(times, key=times.get)

    @property
    def fixes(self) -> tuple[str, ...]:
        """The family of fixes that can help in this regime (the others cannot)."""
        return FIXES[self.regime]

    @property
    def intensity(self) -> float:
        """FLOP/byte."""
        return self.flop / self.bytes_moved

    @property
    def overhead_ceiling_flop_per_s(self) -> float:
        """The overhead ceiling for this step, ``FLOPs / t_overhead`` (FLOP/s)."""
        return self.flop / self.overhead_s if self.overhead_s > 0 else math.inf

    @property
    def achieved_flop_per_s(self) -> float:
        """``FLOPs / step time``: below all three ceilings."""
        return self.flop / self.step_s


def three_ceilings(flop: float, bytes_moved: float, n_kernels: int, gpu: Accelerator, roof: str = "bf16",
                   launch_latency_s: float = LAUNCH_LATENCY_S, cuda_graphs: bool = False,
                   graph_node_gap_s: float = GRAPH_NODE_GAP_S) -> ThreeCeilings:
    """The three times of a step on ``gpu`` (see the module docstring).

    Raises:
        ValueError: non-positive FLOPs or bytes, an unknown roof, or a bad launch setting.
    """
    for name, v in (("FLOPs", flop), ("bytes", bytes_moved)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and 0 < v < 1e30):
            raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    if roof not in gpu.dense_flop_per_s:
        raise ValueError(f"{gpu.name} has no {roof!r} roof; accepted: {', '.join(gpu.dense_flop_per_s)}")
    peak = gpu.dense_flop_per_s[roof]
    t_over = overhead_time(n_kernels, launch_latency_s, cuda_graphs, graph_node_gap_s)
    return ThreeCeilings(float(flop), float(bytes_moved), n_kernels, flop / peak, bytes_moved / gpu.hbm_bandwidth,
                         t_over, peak, gpu.hbm_bandwidth)
