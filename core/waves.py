"""Tile and wave quantisation: why GEMM throughput against shape is a staircase.

A GEMM kernel splits the M×N output into tiles of ``tile_m × tile_n``; each tile
is one thread block.  Blocks run in waves of (SM count × blocks per SM).  The
padding of the last tile and the idle SMs of the last wave are computed at full
cost.  Model: every tile costs the same time, ``2·tile_m·tile_n·K`` FLOPs at
``P_peak / SMs`` per SM (compute-bound GEMM, one block per SM unless told), so

    time = waves · 2·tile_m·tile_n·K / (P_peak / SMs)
    achieved FLOP/s = 2·M·N·K / time

Source: article 000, "Peak is not attainable, and the shortfall is structured"
(N = 257 on a 128-wide tile does the work of N = 384; 133 blocks on an H100's 132
SMs take two waves); NVIDIA, "Matrix Multiplication Background User's Guide",
sections on tile and wave quantization
(https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .hardware import CUSTOM_RANGES

#: Common CUTLASS / cuBLAS output tiles (tile_m, tile_n).
TILES = {"128×128": (128, 128), "256×128": (256, 128), "128×256": (128, 256), "128×64": (128, 64),
         "64×64": (64, 64)}


#: The highest peak a part may have, FLOP/s: the custom-GPU form's (:data:`core.hardware.CUSTOM_RANGES`), so every
#: GPU the lab accepts gets its staircase.
MAX_PEAK_FLOP_PER_S = CUSTOM_RANGES["peak"][1] * 1e12


def _count(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer)) or not math.isfinite(v):
        raise ValueError(f"{name} must be a whole number, got {v!r}")
    if v != int(v) or not 1 <= v <= 10**9:
        raise ValueError(f"{name} must be a whole number from 1 to 1e9, got {v!r}")
    return int(v)


def padded(dim: int, tile: int) -> int:
    """``dim`` rounded up to a multiple of ``tile``: the work the hardware does (257 on 128 → 384)."""
    dim, tile = _count("dimension", dim), _count("tile", tile)
    return math.ceil(dim / tile) * tile


def thread_blocks(m: int, n: int, tile_m: int, tile_n: int) -> int:
    """Output tiles, one thread block each: ``⌈M/tile_m⌉·⌈N/tile_n⌉``."""
    return math.ceil(_count("M", m) / _count("tile_m", tile_m)) * math.ceil(_count("N", n) / _count("tile_n", tile_n))


def waves(blocks: int, sm_count: int, blocks_per_sm: int = 1) -> int:
    """Waves of thread blocks, ``⌈blocks / (SMs·blocks_per_SM)⌉`` (133 blocks on 132 SMs: 2)."""
    return math.ceil(_count("blocks", blocks) / (_count("SM count", sm_count) * _count("blocks per SM", blocks_per_sm)))


@dataclass(frozen=True)
class GemmQuantisation:
    """One GEMM shape on one tile and SM count.

    Attributes:
        m, n, k: the GEMM (C is M×N).
        tile_m, tile_n: output tile.
        sm_count: SMs (or compute units).
        blocks: thread blocks launched.
        waves: waves they take.
        padded_m, padded_n: dimensions rounded up to the tile.
        useful_flop: ``2MNK``.
        executed_flop: FLOPs the SMs spend, ``waves·SMs·blocks_per_SM·2·tile_m·tile_n·K``
            (padding and idle SMs of the last wave included).
        efficiency: useful over executed (1.0 when shape fills whole tiles and waves).
        achieved_flop_per_s: ``efficiency · P_peak``.
        time_s: seconds.
    """

    m: int
    n: int
    k: int
    tile_m: int
    tile_n: int
    sm_count: int
    blocks_per_sm: int
    blocks: int
    waves: int
    padded_m: int
    padded_n: int
    useful_flop: float
    executed_flop: float
    efficiency: float
    achieved_flop_per_s: float
    time_s: float

    @property
    def tile_efficiency(self) -> float:
        """Useful share of the padded output, ``MN / (padded_M·padded_N)``."""
        return self.m * self.n / (self.padded_m * self.padded_n)

    @property
    def wave_efficiency(self) -> float:
        """Busy share of the SM slots over all waves, ``blocks / (waves·SMs·blocks_per_SM)``."""
        return self.blocks / (self.waves * self.sm_count * self.blocks_per_sm)


def gemm_quantisation(m: int, n: int, k: int, tile_m: int, tile_n: int, sm_count: int, peak_flop_per_s: float,
                      blocks_per_sm: int = 1) -> GemmQuantisation:
    """Tile and wave quantisation of a compute-bound GEMM (see the module docstring for the model).

    Raises:
        ValueError: a non-positive or non-integer shape, tile or SM count, or a peak that is not above 0 and at most
            :data:`MAX_PEAK_FLOP_PER_S`.
    """
    m, n, k = _count("M", m), _count("N", n), _count("K", k)
    tm, tn = _count("tile_m", tile_m), _count("tile_n", tile_n)
    sms, bps = _count("SM count", sm_count), _count("blocks per SM", blocks_per_sm)
    if isinstance(peak_flop_per_s, bool) or not (isinstance(peak_flop_per_s, (int, float))
                                                 and 0 < peak_flop_per_s <= MAX_PEAK_FLOP_PER_S):
        raise ValueError(f"peak FLOP/s must be a number above 0 and at most {MAX_PEAK_FLOP_PER_S:g} (the custom-GPU "
                         f"form's highest peak), got {peak_flop_per_s!r}")
    blocks = thread_blocks(m, n, tm, tn)
    w = waves(blocks, sms, bps)
    useful = 2.0 * m * n * k
    executed = w * sms * bps * 2.0 * tm * tn * k
    eff = useful / executed
    per_slot = peak_flop_per_s / (sms * bps)
    time = w * 2.0 * tm * tn * k / per_slot
    return GemmQuantisation(m, n, k, tm, tn, sms, bps, blocks, w, padded(m, tm), padded(n, tn), useful, executed,
                            eff, eff * peak_flop_per_s, time)


def staircase(n_values, m: int, k: int, tile_m: int, tile_n: int, sm_count: int, peak_flop_per_s: float,
              blocks_per_sm: int = 1) -> dict[str, np.ndarray]:
    """Achieved throughput against N (the article's chart: N from 240 to 400 on a 128-wide tile).

    Returns:
        arrays ``n``, ``achieved_flop_per_s``, ``efficiency``, ``waves``, ``blocks``, ``padded_n``.
    """
    rows = [gemm_quantisation(m, int(n), k, tile_m, tile_n, sm_count, peak_flop_per_s, blocks_per_sm)
            for n in n_values]
    return {
        "n": np.array([r.n for r in rows]),
        "achieved_flop_per_s": np.array([r.achieved_flop_per_s for r in rows]),
        "efficiency": np.array([r.efficiency for r in rows]),
        "waves": np.array([r.waves for r in rows]),
        "blocks": np.array([r.blocks for r in rows]),
        "padded_n": np.array([r.padded_n for r in rows]),
    }


#: SMs assumed where a part's count is unpublished or it is not a GPU: the H100 SXM's 132 (article 000's example).
ASSUMED_SMS = 132


def sm_count_for_waves(gpu) -> tuple[int, str]:
    """SMs (or AMD CUs) to run thread-block waves on for ``gpu``, and a note when it is assumed.

    TPUs and Gaudi do not run CUDA-style thread blocks, and some GPUs' SM counts
    are unpublished: those get :data:`ASSUMED_SMS` and a note saying so.
    """
    if gpu.is_gpu and gpu.sm_count:
        return int(gpu.sm_count), ""
    why = "is not a GPU (no thread-block waves)" if not gpu.is_gpu else "has no published SM count"
    return ASSUMED_SMS, f"{gpu.name} {why}: {ASSUMED_SMS} SMs (H100 SXM) assumed to illustrate"
