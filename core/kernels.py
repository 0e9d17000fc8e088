"""The kernel atlas: FLOPs, bytes moved and arithmetic intensity of a transformer's kernels.

Every function returns a :class:`KernelCost` (FLOP, bytes of off-chip traffic,
the formula written out) that can be placed on any accelerator's roofline.
Units: FLOP, bytes, seconds; ``p`` is bytes per element (2 for BF16).

Sources:
* Article 000, "Where each transformer operation lands": GEMM ``2MKN`` FLOPs over
  ``(MK + KN + MN)·p`` bytes (``I ≈ n/3`` for square BF16, 1,365 at n = 4096);
  decode matrix-vector ``I = B`` at BF16; LayerNorm "4 bytes and on the order of
  10 FLOPs per element, I ≈ 2.5"; residual add; fusion.
* Dao et al. (2022), FlashAttention, arXiv:2205.14135: Algorithm 0 (standard
  attention writes S and P to HBM) and Algorithm 1 / Theorem 2 (HBM accesses
  ``Θ(N²d²/M)`` for SRAM of M elements, block sizes ``B_c = ⌈M/4d⌉``,
  ``B_r = min(⌈M/4d⌉, d)``).
* Article 000: decode attention over the KV cache does 2 FLOPs per cached
  element of 2 bytes, ``I ≈ 1`` whatever the batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .hardware import Accelerator


def _positive(name: str, value, integer: bool = False) -> float:
    """``value`` as a float, or a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v <= 0 or v > 1e15:
        raise ValueError(f"{name} must be a positive finite number up to 1e15, got {value!r}")
    if integer and v != int(v):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    return v


@dataclass(frozen=True)
class KernelCost:
    """Work and off-chip traffic of one kernel.

    Attributes:
        name: display name ("GEMM 4096×4096×4096").
        flop: floating-point operations, FLOP.
        bytes_moved: bytes read from and written to off-chip memory (HBM).
        formula: the counting, written out ("show your work").
        source: where the counting comes from.
    """

    name: str
    flop: float
    bytes_moved: float
    formula: str
    source: str

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOP/byte."""
        return self.flop / self.bytes_moved

    def compute_time(self, gpu: Accelerator, roof: str = "bf16") -> float:
        """``flop / P_peak`` in seconds on ``gpu``'s dense ``roof``."""
        return self.flop / gpu.dense_flop_per_s[roof]

    def memory_time(self, gpu: Accelerator) -> float:
        """``bytes / BW`` in seconds on ``gpu``'s DRAM bandwidth."""
        return self.bytes_moved / gpu.hbm_bandwidth

    def time(self, gpu: Accelerator, roof: str = "bf16") -> float:
        """Roofline time ``max(flop/P_peak, bytes/BW)``, seconds."""
        return max(self.compute_time(gpu, roof), self.memory_time(gpu))

    def bound(self, gpu: Accelerator, roof: str = "bf16") -> str:
        """``"compute"`` or ``"memory"``: which roof binds (intensity vs the ridge point)."""
        return "compute" if self.intensity >= gpu.ridge_point(roof) else "memory"

    def attainable_flop_per_s(self, gpu: Accelerator, roof: str = "bf16") -> float:
        """``min(P_peak, BW·I)``, FLOP/s."""
        return min(gpu.dense_flop_per_s[roof], gpu.hbm_bandwidth * self.intensity)


def gemm(m: int, k: int, n: int, bytes_per_element: float = 2.0) -> KernelCost:
    """``C = AB`` with A of M×K and B of K×N, every operand moved once.

    FLOPs ``2MKN``; bytes ``(MK + KN + MN)·p`` (best case: A and B read once, C
    written once).  Square ``n``: ``I = 2n/(3p)``, ``n/3`` at BF16.

    Raises:
        ValueError: a non-positive or non-integer shape, naming it.
    """
    m, k, n = (_positive(s, v, integer=True) for s, v in (("M", m), ("K", k), ("N", n)))
    p = _positive("bytes per element", bytes_per_element)
    flop = 2 * m * k * n
    elements = m * k + k * n + m * n
    return KernelCost(
        f"GEMM {m:,.0f}×{k:,.0f}×{n:,.0f}", flop, elements * p,
        f"FLOPs = 2·M·K·N = 2·{m:,.0f}·{k:,.0f}·{n:,.0f} = {flop:,.0f}; "
        f"bytes = (M·K + K·N + M·N)·p = {elements:,.0f}·{p:g} = {elements * p:,.0f}; "
        f"I = {flop / (elements * p):,.1f} FLOP/byte",
        "article 000, Where each transformer operation lands (matrix multiply)",
    )


def decode_matvec(n_out: int, k_in: int, batch: int = 1, bytes_per_weight: float = 2.0,
                  bytes_per_activation: float = 0.0) -> KernelCost:
    """``y = Wx`` in decode: W of N×K read once, x holding B columns (one per sequence).

    FLOPs ``2·N·K·B``; bytes ``N·K·p`` for the weights (the article's count,
    ``I = 2B/p``, exactly B at BF16), plus ``(K + N)·B·p_act`` for the
    activations when ``bytes_per_activation`` > 0.

    Raises:
        ValueError: a non-positive shape or batch, naming it.
    """
    n, k, b = (_positive(s, v, integer=True) for s, v in (("N", n_out), ("K", k_in), ("B", batch)))
    p = _positive("bytes per weight", bytes_per_weight)
    if isinstance(bytes_per_activation, bool) or not (0 <= float(bytes_per_activation) <= 8):
        raise ValueError(f"bytes per activation must be 0 to 8, got {bytes_per_activation!r}")
    flop = 2 * n * k * b
    weights = n * k * p
    acts = (k + n) * b * float(bytes_per_activation)
    show = f"bytes = N·K·p = {weights:,.0f}"
    if acts:
        show += f" + (K + N)·B·p_act = {acts:,.0f}"
    return KernelCost(
        f"decode matvec {n:,.0f}×{k:,.0f}, B = {b:,.0f}", flop, weights + acts,
        f"FLOPs = 2·N·K·B = {flop:,.0f}; {show}; I = 2·B/p = {flop / (weights + acts):,.3g} FLOP/byte",
        "article 000, Matrix-vector multiply, which is what decoding is",
    )


@dataclass(frozen=True)
class ElementwiseOp:
    """An elementwise or reduction op over a tensor, counted per element.

    Attributes:
        name: "LayerNorm", "GeLU", ...
        flop_per_element: FLOPs per element (special functions such as exp or erf
            counted as one operation each).
        inputs: full-size tensors read (a residual add reads two).
        outputs: full-size tensors written.
        counting: how the FLOPs were counted.
    """

    name: str
    flop_per_element: float
    inputs: int
    outputs: int
    counting: str

    def cost(self, elements: int, bytes_per_element: float = 2.0) -> KernelCost:
        """The op over ``elements`` elements, unfused: every input read and every output written once."""
        e = _positive("elements", elements, integer=True)
        p = _positive("bytes per element", bytes_per_element)
        moved = (self.inputs + self.outputs) * e * p
        flop = self.flop_per_element * e
        return KernelCost(
            f"{self.name} × {e:,.0f}", flop, moved,
            f"{self.flop_per_element:g} FLOP per element ({self.counting}); "
            f"({self.inputs} read + {self.outputs} written)·p = {(self.inputs + self.outputs) * p:g} bytes per "
            f"element; I = {flop / moved:.3g} FLOP/byte",
            "article 000, Elementwise and reduction operations",
        )


#: Elementwise ops and reductions.  LayerNorm's ~10 FLOPs per element is the
#: article's count; the others are counted here, one operation per arithmetic
#: step or special-function call.
ELEMENTWISE: dict[str, ElementwiseOp] = {
    op.name: op for op in (
        ElementwiseOp("LayerNorm", 10, 1, 1,
                      "article 000: mean, variance, normalise, scale and shift, 'on the order of 10'"),
        ElementwiseOp("softmax", 5, 1, 1, "max, subtract, exp, sum, divide"),
        ElementwiseOp("GeLU", 5, 1, 1, "0.5·x·(1 + erf(x/√2)): divide, erf, add, two multiplies"),
        ElementwiseOp("residual add", 1, 2, 1, "one add"),
        ElementwiseOp("dropout", 2, 1, 1, "compare a random number, multiply by mask/(1-p)"),
    )
}


@dataclass(frozen=True)
class Fusion:
    """A chain of elementwise ops, unfused (each op its own kernel) and fused (one kernel).

    Attributes:
        ops: op names in order.
        unfused: the chain as separate kernels (FLOPs summed, bytes summed).
        fused: one kernel: reads the chain's external inputs once, writes the last output.
    """

    ops: tuple[str, ...]
    unfused: KernelCost
    fused: KernelCost

    @property
    def bytes_saved(self) -> float:
        """Off-chip bytes fusion saves."""
        return self.unfused.bytes_moved - self.fused.bytes_moved

    @property
    def traffic_ratio(self) -> float:
        """Unfused bytes over fused bytes (fusion does not change the FLOPs)."""
        return self.unfused.bytes_moved / self.fused.bytes_moved


def fuse(op_names, elements: int, bytes_per_element: float = 2.0) -> Fusion:
    """Chain elementwise ops over one tensor of ``elements`` elements.

    Unfused, each op reads its inputs from HBM and writes its output back.  Fused,
    the intermediates stay on chip: the kernel reads the first op's inputs and
    every later op's extra inputs (a residual add's second operand), and writes
    only the final output.  FLOPs are unchanged (article 000: fusion "does not
    reduce the arithmetic at all").

    Raises:
        ValueError: an empty chain or an unknown op name (the accepted ones are listed).
    """
    names = tuple(op_names)
    if not names:
        raise ValueError("choose at least one op to fuse")
    for name in names:
        if name not in ELEMENTWISE:
            raise ValueError(f"unknown op {name!r}; accepted: {', '.join(ELEMENTWISE)}")
    e = _positive("elements", elements, integer=True)
    p = _positive("bytes per element", bytes_per_element)
    ops = [ELEMENTWISE[n] for n in names]
    parts = [op.cost(int(e), p) for op in ops]
    flop = sum(c.flop for c in parts)
    unfused_bytes = sum(c.bytes_moved for c in parts)
    tensors = ops[0].inputs + sum(op.inputs - 1 for op in ops[1:]) + ops[-1].outputs
    fused_bytes = tensors * e * p
    chain = " → ".join(names)
    unfused = KernelCost(
        f"{chain} (unfused)", flop, unfused_bytes,
        f"{len(ops)} kernels; bytes = Σ (reads + writes)·E·p = "
        f"{sum(op.inputs + op.outputs for op in ops)}·{e:,.0f}·{p:g} = {unfused_bytes:,.0f}",
        "article 000, Elementwise and reduction operations",
    )
    fused = KernelCost(
        f"{chain} (fused)", flop, fused_bytes,
        f"one kernel; bytes = (external inputs + 1 output)·E·p = {tensors}·{e:,.0f}·{p:g} = {fused_bytes:,.0f}; "
        f"saves {unfused_bytes - fused_bytes:,.0f} bytes ({unfused_bytes / fused_bytes:.2f}× less traffic)",
        "article 000; Ivanov et al. (2021), Data Movement Is All You Need, arXiv:2007.00072",
    )
    return Fusion(names, unfused, fused)


#: FLOPs per score element for the softmax in attention (max, subtract, exp, sum, divide).
SOFTMAX_FLOP_PER_SCORE = 5


def naive_attention(n: int, d: int, bytes_per_element: float = 2.0) -> KernelCost:
    """Standard attention for one head: S = QKᵀ, P = softmax(S), O = PV, S and P in HBM.

    Dao et al. (2022), Algorithm 0: read Q, K (write S), read S (write P),
    read P and V (write O).  FLOPs ``4N²d`` (two matmuls) ``+ 5N²`` (softmax);
    bytes ``(4Nd + 4N²)·p``.  Intensity ``≈ d/p`` FLOP/byte, about d FLOPs per
    element moved (article 000: "an intensity of about d").

    Raises:
        ValueError: a non-positive N or d.
    """
    n = _positive("sequence length N", n, integer=True)
    d = _positive("head dimension d", d, integer=True)
    p = _positive("bytes per element", bytes_per_element)
    flop = 4 * n * n * d + SOFTMAX_FLOP_PER_SCORE * n * n
    elements = 4 * n * d + 4 * n * n
    return KernelCost(
        f"attention, naive (N = {n:,.0f}, d = {d:,.0f})", flop, elements * p,
        f"FLOPs = 4N²d + 5N² = {flop:,.0f}; bytes = (Q, K, V read + O written = 4Nd; S written and read, P "
        f"written and read = 4N²)·p = {elements:,.0f}·{p:g} = {elements * p:,.0f}; I = {flop / (elements * p):,.1f}",
        "Dao et al. (2022), FlashAttention, arXiv:2205.14135, Algorithm 0",
    )


@dataclass(frozen=True)
class FlashTiling:
    """FlashAttention's tiling for an SRAM of ``sram_elements`` elements (Dao et al. 2022, Algorithm 1)."""

    sram_elements: int
    block_cols: int  # B_c = ceil(M / 4d)
    block_rows: int  # B_r = min(ceil(M / 4d), d)
    outer_passes: int  # T_c = ceil(N / B_c)


def flash_tiling(n: int, d: int, sram_bytes: float, bytes_per_element: float = 2.0) -> FlashTiling:
    """Block sizes of FlashAttention's Algorithm 1 for SRAM of ``sram_bytes`` bytes.

    Raises:
        ValueError: SRAM too small for one row of Q, K, V and O (M < 4d).
    """
    n = int(_positive("sequence length N", n, integer=True))
    d = int(_positive("head dimension d", d, integer=True))
    m = int(_positive("SRAM size", sram_bytes) // _positive("bytes per element", bytes_per_element))
    if m < 4 * d:
        raise ValueError(f"SRAM of {m:,} elements cannot hold one row each of Q, K, V and O (4d = {4 * d:,})")
    bc = math.ceil(m / (4 * d))
    return FlashTiling(m, bc, min(bc, d), math.ceil(n / bc))


def flash_attention(n: int, d: int, sram_bytes: float, bytes_per_element: float = 2.0) -> KernelCost:
    """FlashAttention (forward, one head) with the on-chip SRAM of one SM.

    Dao et al. (2022), Algorithm 1: the outer loop walks ``T_c = ⌈N/B_c⌉`` blocks
    of K and V (each read once, ``2Nd``); each pass reads all of Q and O and
    writes O back (``3Nd``) with the softmax statistics ℓ and m (``4N``).  HBM
    elements ``2Nd + T_c·(3Nd + 4N)``, which is ``Θ(N²d²/M)`` (``T_c ≈ 4Nd/M``).
    FLOPs: the naive count plus the online-softmax rescaling of O, about
    ``4·N·d`` per pass: more FLOPs than naive, far fewer bytes.

    Args:
        n: sequence length N.
        d: head dimension.
        sram_bytes: on-chip SRAM available to one thread block, bytes (shared
            memory per SM from the catalogue).
        bytes_per_element: p.

    Raises:
        ValueError: non-positive inputs, or SRAM smaller than 4d elements.
    """
    t = flash_tiling(n, d, sram_bytes, bytes_per_element)
    n, d, p = float(n), float(d), float(bytes_per_element)
    flop = 4 * n * n * d + SOFTMAX_FLOP_PER_SCORE * n * n + t.outer_passes * 4 * n * d
    elements = 2 * n * d + t.outer_passes * (3 * n * d + 4 * n)
    return KernelCost(
        f"attention, FlashAttention (N = {n:,.0f}, d = {d:,.0f})", flop, elements * p,
        f"M = {t.sram_elements:,} elements of SRAM; B_c = ⌈M/4d⌉ = {t.block_cols}, T_c = ⌈N/B_c⌉ = "
        f"{t.outer_passes}; bytes = (2Nd + T_c·(3Nd + 4N))·p = {elements:,.0f}·{p:g} = {elements * p:,.0f} "
        f"(Θ(N²d²/M)); FLOPs = 4N²d + 5N² + T_c·4Nd = {flop:,.0f}; I = {flop / (elements * p):,.1f}",
        "Dao et al. (2022), FlashAttention, arXiv:2205.14135, Algorithm 1 and Theorem 2",
    )


def attention_compulsory_bytes(n: int, d: int, bytes_per_element: float = 2.0) -> float:
    """The least any attention kernel moves for one head: Q, K, V read once and O written once, ``4Nd·p``."""
    return 4 * _positive("N", n) * _positive("d", d) * _positive("bytes per element", bytes_per_element)


def attention_score_bytes(n: int, bytes_per_element: float = 2.0) -> float:
    """Capacity the naive kernel needs for one head's N×N score matrix, ``N²·p`` bytes (FlashAttention: none)."""
    return _positive("N", n) ** 2 * _positive("bytes per element", bytes_per_element)


def decode_attention(context: int, h_kv: int, d_head: int, batch: int = 1, queries_per_kv_head: int = 1,
                     bytes_per_kv_element: float = 2.0) -> KernelCost:
    """Decode attention of one layer over the KV cache.

    Each sequence reads its own ``2·S·h_kv·d_head`` cached elements (K and V);
    each cached element does one multiply-accumulate (2 FLOPs) per query head
    that reads it, ``queries_per_kv_head`` (the GQA group size; 1 for MHA).
    ``I = 2·g / p_kv``, about 1 at BF16 for MHA, and independent of the batch:
    every cached element belongs to exactly one sequence (article 000).

    Raises:
        ValueError: a non-positive argument, naming it.
    """
    s, hk, dh, b, g = (_positive(name, v, integer=True) for name, v in (
        ("context S", context), ("h_kv", h_kv), ("d_head", d_head), ("B", batch), ("query heads per KV head",
                                                                                     queries_per_kv_head)))
    p = _positive("bytes per KV element", bytes_per_kv_element)
    cached = 2 * s * hk * dh * b
    flop = 2 * cached * g
    return KernelCost(
        f"decode attention, S = {s:,.0f}, B = {b:,.0f}", flop, cached * p,
        f"cached elements = 2·S·h_kv·d_head·B = {cached:,.0f}; FLOPs = 2·g per element, g = {g:,.0f} query "
        f"head{'' if g == 1 else 's'} per KV head: {2 * g:,.0f} × {cached:,.0f} = {flop:,.0f}; "
        f"bytes = elements·p_kv = {cached:,.0f} × {p:g} = {cached * p:,.0f}; "
        f"I = 2·g/p_kv = {2 * g:,.0f} / {p:g} = {flop / (cached * p):g}, whatever B",
        "article 000, Attention (the KV cache during decoding)",
    )
