"""Generations and the memory wall: ridge points by generation, growth rates, the timeline.

Sources:
* Ridge point ``P_peak / BW``: Williams, Waterman & Patterson (2009); article 000
  (V100 139, A100 153, H100 295, B200 281, H200 206).
* Growth rates: Gholami, Yao, Kim, Hooper, Mahoney & Keutzer (2024), "AI and
  Memory Wall", IEEE Micro 44(3):33-39, arXiv:2403.14123: over about two decades
  peak server FLOP/s grew 3.0× every two years, DRAM bandwidth 1.6× and
  interconnect bandwidth 1.4× (quoted in article 000).
* The timeline: article 000, "How the Memory Wall Got Here".

Units: FLOP/s, bytes/s, FLOP/byte, years.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .hardware import Accelerator, get_accelerator

#: Growth per two years (Gholami et al. 2024).
GHOLAMI_RATES_PER_2Y = {"peak FLOP/s": 3.0, "DRAM bandwidth": 1.6, "interconnect bandwidth": 1.4}
GHOLAMI_SOURCE = "Gholami et al. (2024), AI and Memory Wall, IEEE Micro 44(3):33-39, arXiv:2403.14123"

#: The article's roofline chart: V100, A100, H100 and B200 (ridges 139, 153, 295, 281), with H200 (206)
#: and MI300X added.
GENERATIONS = ("v100", "a100-80gb", "h100-sxm", "h200", "b200", "mi300x")

#: NVIDIA's SXM data-centre flagships, one per step: the catalogue's own trend line.
FLAGSHIPS = ("v100", "a100-80gb", "h100-sxm", "h200", "b200")

#: The four workloads on the article's generations chart, FLOP/byte (article 000, figure caption).
ARTICLE_WORKLOADS = {"batch-1 decode": 1.0, "LayerNorm": 2.5, "batch-56 decode": 56.0, "training GEMM": 500.0}

#: The hardware tour's example kernel, FLOP/byte: between the V100's ridge (139) and the H100's (295), so compute-bound
#: on one and memory-bound on the other (article 000: "workloads that were compute-bound on a V100 can be
#: memory-bound on an H100 without a single line of code changing").
EXAMPLE_KERNEL_INTENSITY = 200.0


def growth(rate_per_2y: float, years: float) -> float:
    """Factor after ``years`` at ``rate_per_2y`` per two years, ``rate^(years/2)``.

    Raises:
        ValueError: a non-positive rate or non-finite years.
    """
    if not (isinstance(rate_per_2y, (int, float)) and rate_per_2y > 0 and math.isfinite(years)):
        raise ValueError(f"rate must be positive and years finite, got {rate_per_2y!r}, {years!r}")
    return float(rate_per_2y) ** (years / 2.0)


def ridge_growth_per_2y(flop_rate: float = 3.0, bandwidth_rate: float = 1.6) -> float:
    """How fast the ridge point ``P_peak / BW`` climbs per two years: ``3.0 / 1.6 = 1.875`` (Gholami et al.)."""
    return flop_rate / bandwidth_rate


def compounded_text(years: int = 20) -> str:
    """Gholami et al.'s rates compounded over ``years`` (article 004, section 02, "Two exponentials"), with the
    article's rounded figures beside the exact ones: every factor is ``rate^(years/2)`` (:func:`growth`).

    >>> print(compounded_text())  # doctest: +NORMALIZE_WHITESPACE
    Compounded over 20 years (article 004, section 02): peak FLOP/s 3.0^10 = 59,049× ("up 60,000×"), DRAM
    bandwidth 1.6^10 = 110× ("up 100×"), interconnect 1.4^10 = 28.9× ("up 30×"). The ridge point climbs as
    (3.0 / 1.6)^(t/2yr) = 1.875^(t/2yr): 1.875^10 = 537× more FLOP demanded per byte (the article's "60,000x /
    100x = 600x" divides its rounded factors).
    """
    flop, dram, link = GHOLAMI_RATES_PER_2Y.values()
    n = years / 2
    ridge = ridge_growth_per_2y(flop, dram)
    return (f"Compounded over {years} years (article 004, section 02): peak FLOP/s {flop:.1f}^{n:g} = "
            f"{growth(flop, years):,.0f}× (\"up 60,000×\"), DRAM bandwidth {dram:g}^{n:g} = "
            f"{growth(dram, years):,.0f}× (\"up 100×\"), interconnect {link:g}^{n:g} = {growth(link, years):,.1f}× "
            "(\"up 30×\"). The ridge point "
            f"climbs as ({flop:.1f} / {dram:g})^(t/2yr) = {ridge:g}^(t/2yr): {ridge:g}^{n:g} = "
            f"{growth(ridge, years):,.0f}× more FLOP demanded per byte (the article's \"60,000x / 100x = 600x\" "
            "divides its rounded factors).")


def fitted_rate_per_2y(years, values) -> float:
    """Least-squares growth per two years of ``values`` against ``years`` (a straight line in log space).

    Raises:
        ValueError: fewer than two distinct years or a non-positive value.
    """
    y = np.asarray(years, dtype=float)
    v = np.asarray(values, dtype=float)
    if len(set(y.tolist())) < 2 or (v <= 0).any() or len(y) != len(v):
        raise ValueError("need at least two distinct years and positive values")
    slope = np.polyfit(y, np.log(v), 1)[0]
    return float(np.exp(2.0 * slope))


def ridge_points(gpu_ids=GENERATIONS, roof: str = "bf16") -> dict[str, float]:
    """Ridge point, FLOP/byte, of each part (article 000: 139, 153, 295, 206, 281 for V100, A100 80GB, H100, H200,
    B200)."""
    return {g: get_accelerator(g).ridge_point(roof) for g in gpu_ids}


def bound_by_generation(intensity: float, gpu_ids=GENERATIONS, roof: str = "bf16") -> dict[str, str]:
    """``"compute"`` or ``"memory"`` for a kernel of ``intensity`` FLOP/byte on each part.

    A kernel at 200 FLOP/byte is compute-bound on a V100 (ridge 139) and memory-bound
    on an H100 (ridge 295) "without a single line of code changing" (article 000).
    """
    return {g: ("compute" if intensity >= r else "memory") for g, r in ridge_points(gpu_ids, roof).items()}


@dataclass(frozen=True)
class Trend:
    """The catalogue's parts by launch year, with their fitted growth per two years.

    Attributes:
        ids, years: the parts and their launch years.
        peak_flop_per_s: dense BF16 peaks, FLOP/s.
        dram_bandwidth: bytes/s.
        interconnect_bandwidth: scale-up link per GPU as printed, bytes/s (NaN where none is printed).
        rates: fitted growth per two years for each series (Gholami et al.'s names).
    """

    ids: tuple[str, ...]
    years: np.ndarray
    peak_flop_per_s: np.ndarray
    dram_bandwidth: np.ndarray
    interconnect_bandwidth: np.ndarray
    rates: dict[str, float]


def catalogue_trend(gpu_ids=FLAGSHIPS, roof: str = "bf16") -> Trend:
    """Peak FLOP/s, DRAM bandwidth and interconnect by year for ``gpu_ids``, and their fitted rates.

    Raises:
        ValueError: fewer than two distinct launch years among the parts.
    """
    gpus: list[Accelerator] = [get_accelerator(g) for g in gpu_ids]
    years = np.array([g.year for g in gpus], dtype=float)
    peak = np.array([g.dense_flop_per_s[roof] for g in gpus])
    bw = np.array([g.hbm_bandwidth for g in gpus])
    link = np.array([g.interconnect.bandwidth if g.interconnect and g.interconnect.bandwidth else np.nan
                     for g in gpus])
    rates = {"peak FLOP/s": fitted_rate_per_2y(years, peak), "DRAM bandwidth": fitted_rate_per_2y(years, bw)}
    ok = ~np.isnan(link)
    if len(set(years[ok].tolist())) >= 2:
        rates["interconnect bandwidth"] = fitted_rate_per_2y(years[ok], link[ok])
    return Trend(tuple(gpu_ids), years, peak, bw, link, rates)


@dataclass(frozen=True)
class SparseTrap:
    """A datasheet's 2:4-sparsity headline against the dense figure.

    Attributes:
        dense_ridge: ``dense peak / BW``, FLOP/byte.
        sparse_ridge: ``sparse headline / BW``: the ridge the headline implies.
        factor: ``sparse_ridge / dense_ridge`` (2 for 2:4 sparsity).
    """

    gpu: str
    roof: str
    dense_ridge: float
    sparse_ridge: float

    @property
    def factor(self) -> float:
        return self.sparse_ridge / self.dense_ridge


def sparse_headline(gpu_id: str, roof: str = "bf16") -> SparseTrap:
    """The sparse-headline trap: "The 2:4 structured sparsity numbers ... double the compute ceiling and leave
    bandwidth untouched, which raises the ridge point" (article 000).

    Raises:
        ValueError: the part prints no sparse figure for ``roof``.
    """
    g = get_accelerator(gpu_id)
    if roof not in g.sparse_flop_per_s:
        raise ValueError(f"{g.name} prints no 2:4-sparsity figure for {roof.upper()}")
    return SparseTrap(gpu_id, roof, g.ridge_point(roof), g.sparse_flop_per_s[roof] / g.hbm_bandwidth)


@dataclass(frozen=True)
class TimelineEvent:
    """One stop on the memory-wall timeline."""

    year: int
    title: str
    detail: str
    source: str


#: Article 000, "How the Memory Wall Got Here" (its timeline diagram and sources list).
MEMORY_WALL_TIMELINE: tuple[TimelineEvent, ...] = (
    TimelineEvent(1995, "Wulf and McKee name the memory wall",
                  "Compute and DRAM improve at different exponential rates, so the gap grows exponentially.",
                  "Wulf & McKee (1995), Hitting the Memory Wall, ACM SIGARCH CAN 23(1):20-24, "
                  "doi:10.1145/216585.216588"),
    TimelineEvent(2009, "The roofline model",
                  "Arithmetic intensity gets a picture; the ridge point becomes a design target.",
                  "Williams, Waterman & Patterson (2009), CACM 52(4):65-76, doi:10.1145/1498765.1498785"),
    TimelineEvent(2017, "Volta ships tensor cores",
                  "FP16 matmul throughput jumps about 8×; everything that is not a matmul becomes relatively "
                  "more expensive.", "article 000, How the Memory Wall Got Here"),
    TimelineEvent(2020, "Data Movement Is All You Need",
                  "Fusing memory-bound ops gives 1.30× on a BERT encoder layer (1.19× on full BERT training).",
                  "Ivanov et al. (2021), MLSys, arXiv:2007.00072"),
    TimelineEvent(2022, "FlashAttention makes attention IO-aware",
                  "2-4× faster with 5-20 % of the memory, by never writing the N×N matrix to HBM.",
                  "Dao et al. (2022), NeurIPS, arXiv:2205.14135"),
    TimelineEvent(2023, "PagedAttention and continuous batching",
                  "Serving reframed around memory capacity, not FLOPs.",
                  "Kwon et al. (2023), SOSP, arXiv:2309.06180"),
    TimelineEvent(2024, "AI and Memory Wall quantifies the divergence",
                  "FLOP/s 3.0× per 2 years against DRAM 1.6× and interconnect 1.4×.", GHOLAMI_SOURCE),
)
