"""The expected step beside the ceiling: what a real engine delivers, term by term.

The roofline step of :mod:`core.scenario` is a ceiling (article 000: "a ceiling rather than a loose one";
measured decode lands well under it).  This module builds the *expected* step on top of a
:class:`~core.scenario.ScenarioResult` as the ceiling plus named terms, each with its seconds, the formula
and the source of every constant it uses (``core/efficiency.json``):

====================  ======================================================================================
term                  what changes in the step (applied in this order, each on top of the ones before)
====================  ======================================================================================
weight format         weight bytes become the format's real bytes: scales and zeros, 16-bit embedding/head
input embedding       a decode step gathers B·k rows of the embedding table, not the table (the articles
                      count the whole table read every step: ``embedding="article"`` keeps that convention)
HBM attainable        memory time ÷ the part's measured STREAM-like fraction of datasheet bandwidth
decode kernels        weight-read time ÷ the engine's weight-streaming kernel efficiency (fitted)
KV-cache reads        KV-read time ÷ the engine's attention kernels' efficiency (fitted)
dequantisation        weight-read time ÷ the engine's extra factor for its quantised format (fitted)
GEMM attainable       GEMM FLOPs at the format's real compute roof × the measured fraction of its peak ×
                      the engine's factor (fitted)
attention in BF16     attention FLOPs at the BF16 roof × FlashAttention's measured fraction
collectives           each all-reduce ``α + bytes·2(n−1)/n / busbw`` (α per call fitted per engine and link)
kernel launches       with CUDA graphs one launch and a GPU gap per kernel; without, the host launches every
                      kernel (fitted per engine) while the GPU idles a gap between them (gaps fitted)
overlap               every ``max`` becomes the smooth maximum ``(aⁿ + bⁿ)^(1/n)`` (n fitted): compute with
                      memory, the GPU's work with the host's launches
engine overhead       host work per decode step (scheduling, sampling) or per prefill (request setup),
                      fitted per engine
====================  ======================================================================================

Each term is the difference of the step time before and after its change, so the terms add up to the
expected step exactly: ``expected = ceiling + Σ terms`` (``math.fsum``).  The step time of a state is
``smax(smax(C, M) + communication + gaps, host launches) + overhead``; with the ceiling's state (max, the
lab's communication and launches, no gaps, no overhead) it is the ceiling itself,
``max(max(compute, memory) + communication, t_launch)`` (:func:`core.scenario.step_ladder`).

The ideal roofline stays the ceiling: nothing here changes :mod:`core.scenario`.  Units SI: seconds,
bytes, FLOP, bytes/s, FLOP/s.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from functools import cache, cached_property
from pathlib import Path

import numpy as np

from . import overhead
from .precision import roof_mix
from .scenario import ScenarioResult
from .units import (
    GB,
    SECONDS_PER,
    TB,
    fmt_bandwidth,
    fmt_bytes_gb,
    fmt_flop,
    fmt_flops_rate,
    fmt_rate,
    fmt_seconds,
    fmt_seconds_change,
    fmt_seconds_into,
    fmt_share,
    fmt_sig,
    rate_digits,
    seconds_value,
    sum_digits,
)

__all__ = [
    "EMBEDDING_CONVENTIONS",
    "TERM_NAMES",
    "ChainInputs",
    "ChainParams",
    "EngineParameters",
    "ExpectedStep",
    "Term",
    "chain_inputs",
    "chain_step_times",
    "engine_label",
    "engine_names",
    "engine_parameters",
    "expected_for_scenario",
    "expected_quantities",
    "expected_step",
    "link_kind",
    "load_efficiency",
    "to_json",
    "waterfall_text",
]

EFFICIENCY_PATH = Path(__file__).with_name("efficiency.json")

#: How the input embedding is counted in a decode step: "gathered" (B·k rows read, what an engine does)
#: or "article" (the whole table read every step, as articles 000 and 004 count it for their figures).
EMBEDDING_CONVENTIONS = ("gathered", "article")

#: The terms in chain order: (key, name shown in the waterfall).
#: The terms before the launches' and overlap's: each changes the GPU's time, and the step is
#: ``max(GPU time, launches)`` while they apply (:func:`chain_step_times`).
GPU_TERMS = frozenset({"format", "embedding", "hbm", "kernels", "kv", "dequant", "gemm", "attention", "collectives"})
#: The terms that change the memory time (bytes read, and the fractions of bandwidth reached).
MEMORY_TERMS = frozenset({"format", "embedding", "hbm", "kernels", "kv", "dequant"})

TERM_NAMES = (
    ("format", "weight format: real bytes per weight"),
    ("embedding", "input embedding: B·k rows gathered, not the table"),
    ("hbm", "HBM: attainable fraction of datasheet bandwidth"),
    ("kernels", "weight-streaming kernels below stream bandwidth"),
    ("kv", "KV-cache reads below stream bandwidth (attention kernels)"),
    # Fitted per format class, it is what a quantised format's kernels do to the weight read beside a 16-bit one's:
    # dequantisation for weight-only INT4 and INT8, and for FP8 (W8A8, none to undo) a factor that can be a gain.
    ("dequant", "quantised kernels: dequantisation and their weight read, fitted per format class"),
    ("gemm", "GEMM: attainable fraction of the format's peak"),
    ("attention", "attention in BF16 at FlashAttention's rate"),
    ("collectives", "collectives: α–β per all-reduce"),
    ("launches", "kernel launches and gaps"),
    ("overlap", "imperfect overlap of compute, memory and launches"),
    ("engine", "engine per-step overhead"),
)


@cache
def load_efficiency(path: Path = EFFICIENCY_PATH) -> dict:
    """The efficiency terms as shipped (``core/efficiency.json``): sources, formats, engines, fitted constants."""
    return json.loads(Path(path).read_text())


def engine_names() -> tuple[str, ...]:
    """The engine presets a source gives figures for (``--engine`` accepts these)."""
    return tuple(k for k in load_efficiency()["engines"] if not k.startswith("_"))

#: Each term's name in a few words (the readouts' show-your-work).
TERM_SHORT = {"format": "format", "embedding": "embedding", "hbm": "HBM", "kernels": "kernels", "kv": "KV reads",
              "dequant": "quantised kernels", "gemm": "GEMM", "attention": "attention", "collectives": "collectives",
              "launches": "launches", "overlap": "overlap", "engine": "engine"}


# -- the chain: one formula, on scalars or numpy arrays ------------------------------------------------------------
@dataclass(frozen=True)
class ChainInputs:
    """What the expected step needs from one :class:`ScenarioResult` (scalars, or arrays of one length).

    Attributes (SI units):
        compute_s, compute_attention_s: the ceiling's compute time (``FLOP / P_peak``) and its attention part.
        memory_s, communication_s, launch_s: the ceiling's memory, communication and launch times.
        bandwidth: datasheet bytes/s; weight_bytes_lab, weight_bytes_format, weight_bytes_gathered: the
            weight bytes one step reads as the lab counts them, in the real format, and with the embedding
            gathered; kv_bytes: the KV cache (and fixed state) one step moves (``memory_s`` counts both).
        flop_gemm, flop_attention: FLOPs of the weight GEMMs and of attention.
        peak_lab, peak_gemm, peak_bf16: the lab's roof, the format's compute roof and the BF16 roof, FLOP/s.
        allreduce_calls, allreduce_bytes, tp: TP all-reduces per step, one message's bytes, the TP degree.
        communication_other_s: the lab's communication that is not TP all-reduce (PP sends, EP all-to-all).
        kernels: kernels one step launches under the engine's fusion (every collective call included).
        other_calls: the collective calls that are not TP all-reduces (EP all-to-all, PP sends), each a kernel.
        is_prefill: 1 for a prefill step (the engine's per-request overhead applies), 0 for decode.
        grouped_kv: 1 when several query heads share each KV head (GQA/MQA/MLA), 0 for multi-head attention.
    """

    compute_s: float
    compute_attention_s: float
    memory_s: float
    communication_s: float
    launch_s: float
    bandwidth: float
    weight_bytes_lab: float
    weight_bytes_format: float
    weight_bytes_gathered: float
    kv_bytes: float
    flop_gemm: float
    flop_attention: float
    peak_lab: float
    peak_gemm: float
    peak_bf16: float
    allreduce_calls: float
    allreduce_bytes: float
    tp: float
    communication_other_s: float
    kernels: float
    is_prefill: float
    grouped_kv: float
    other_calls: float = 0.0

    @staticmethod
    def stack(items: list[ChainInputs]) -> ChainInputs:
        """One :class:`ChainInputs` of arrays from a list of scalar ones."""
        return ChainInputs(**{f.name: np.array([getattr(x, f.name) for x in items], float)
                              for f in fields(ChainInputs)})


@dataclass(frozen=True)
class ChainParams:
    """The constants of the expected step (scalars, or arrays broadcasting against :class:`ChainInputs`).

    Attributes:
        stream_fraction: attainable fraction of datasheet HBM bandwidth (measured, ``hbm_stream_fraction``).
        kernel_efficiency: the engine's weight-streaming kernels' fraction of that (fitted).
        kv_efficiency: the engine's attention kernels' fraction of it for KV-cache reads (fitted).
        grouped_kv_factor: a further factor on KV reads of grouped-query models (fitted; an engine whose
            decode kernel does not share one KV read across a group's query heads reads more).
        dequant_factor: extra factor for the engine's kernels of a quantised format (fitted; 1 for 16-bit).
        gemm_fraction, attention_fraction: attainable fractions of the GEMM and BF16 peaks (measured).
        gemm_engine_factor: the engine's GEMMs against the library microbenchmark (fitted).
        overlap_n: exponent of the smooth maximum (fitted; ``inf`` is the roofline's max).
        allreduce_alpha_s, bus_bandwidth: the α–β model of one all-reduce: its latency (fitted per engine and
            link; constant in the GPU count, which scored better in leave-one-out than the ring's 2(n−1) steps)
            and the bus bandwidth (measured).
        cuda_graphs: 1 with CUDA graphs, 0 without.
        launch_cpu_s, graph_gap_s, stream_gap_s: host time per kernel without graphs (fitted per engine: C++
            runtimes launch in microseconds, eager Python dispatches in tens), GPU gap per graph node, GPU gap
            per stream launch (fitted).
        step_overhead_s, request_overhead_s: the engine's host work per decode step and per prefill (fitted).
    """

    stream_fraction: float
    kernel_efficiency: float
    kv_efficiency: float
    grouped_kv_factor: float
    dequant_factor: float
    gemm_fraction: float
    gemm_engine_factor: float
    attention_fraction: float
    overlap_n: float
    allreduce_alpha_s: float
    bus_bandwidth: float
    cuda_graphs: float
    launch_cpu_s: float
    graph_gap_s: float
    stream_gap_s: float
    step_overhead_s: float
    request_overhead_s: float


def _smooth_max(c, m, n):
    """``(cⁿ + mⁿ)^(1/n)``, the roofline's ``max(c, m)`` at ``n = inf`` (numerically safe; broadcasts)."""
    c, m, n = np.asarray(c, float), np.asarray(m, float), np.asarray(n, float)
    top = np.maximum(c, m)
    safe = np.where(top > 0, top, 1.0)
    finite = np.isfinite(n)
    n_safe = np.where(finite, n, 1.0)
    soft = top * ((c / safe) ** n_safe + (m / safe) ** n_safe) ** (1.0 / n_safe)
    return np.where(finite & (top > 0), soft, top)


def _step(c, m, n, comm, gaps, cpu, extra):
    """The step time of one state: ``smax(smax(C, M) + communication + gaps, host launches) + overhead``.

    ``smax`` is the smooth maximum of exponent ``n`` (the roofline's ``max`` at ``n = inf``): the GPU's work and
    the host's launches overlap as imperfectly as compute and memory do.
    """
    return _smooth_max(_smooth_max(c, m, n) + comm + gaps, cpu, n) + extra


def _gemm_s(x: ChainInputs, p: ChainParams):
    """The GEMMs' time at the format's roof and the attainable fraction of it, s."""
    return np.asarray(x.flop_gemm, float) / (np.asarray(x.peak_gemm) * p.gemm_fraction * p.gemm_engine_factor)


def _attention_s(x: ChainInputs, p: ChainParams):
    """Attention's time at FlashAttention's fraction of the BF16 peak, s."""
    return np.asarray(x.flop_attention, float) / (np.asarray(x.peak_bf16) * p.attention_fraction)


def _communication_s(x: ChainInputs, p: ChainParams):
    """The step's communication with the α–β all-reduces: the ceiling's other communication + calls × (α + wire)."""
    tp = np.asarray(x.tp, float)
    wire = np.asarray(x.allreduce_bytes, float) * 2.0 * (tp - 1.0) / np.maximum(tp, 1.0) / p.bus_bandwidth
    return np.asarray(x.communication_other_s, float) + x.allreduce_calls * (p.allreduce_alpha_s + wire)


def chain_step_times(x: ChainInputs, p: ChainParams, embedding: str = "gathered",
                     ends_only: bool = False, reads: list | None = None) -> list[np.ndarray]:
    """Step times of the chain's states: the ceiling first, then after each term of :data:`TERM_NAMES`.

    Elementwise over ``x`` and ``p`` (scalars or arrays).  Returns ``len(TERM_NAMES) + 1`` arrays, seconds;
    consecutive differences are the terms (``ends_only``: the ceiling and the expected step alone, for a fit
    that evaluates the chain many times).  ``embedding`` is one of :data:`EMBEDDING_CONVENTIONS`.  ``reads``: a
    list that gets each state's ``(weight-read time, KV-read time, GPU time, compute time, communication and
    gaps, host launches)`` in seconds, which the terms' formulas print (not with ``ends_only``); the GPU time is
    ``smax(C, M) + communication + gaps``, the step before the host's launches and the engine's overhead.

    Raises:
        ValueError: an unknown embedding convention.
    """
    if embedding not in EMBEDDING_CONVENTIONS:
        raise ValueError(f"unknown embedding convention {embedding!r}; accepted: {', '.join(EMBEDDING_CONVENTIONS)}")
    inf = np.inf
    c_attn0 = np.asarray(x.compute_attention_s, float)
    c = np.asarray(x.compute_s, float)
    m_kv = np.asarray(x.kv_bytes, float) / x.bandwidth
    m_w = np.asarray(x.memory_s, float) - m_kv
    comm, cpu = np.asarray(x.communication_s, float), np.asarray(x.launch_s, float)
    gaps = extra = np.zeros_like(m_w)
    states = [_step(c, m_w + m_kv, inf, comm, gaps, cpu, extra)]
    if reads is not None:
        reads.append((m_w, m_kv, _smooth_max(c, m_w + m_kv, inf) + comm + gaps, c, comm + gaps, cpu))

    def record(*state):
        states.append(None if ends_only else _step(*state))
        if reads is not None:  # this state's reads, as the enclosing lines last set them, and its GPU time
            reads.append((m_w, m_kv, _smooth_max(*state[:3]) + state[3] + state[4], state[0], state[3] + state[4],
                          state[5]))

    # Bytes first (at datasheet bandwidth), then the fractions of bandwidth the part and the kernels reach.
    m_w = m_w + (np.asarray(x.weight_bytes_format) - x.weight_bytes_lab) / x.bandwidth
    record(c, m_w + m_kv, inf, comm, gaps, cpu, extra)
    if embedding == "gathered":
        m_w = m_w + (np.asarray(x.weight_bytes_gathered) - x.weight_bytes_format) / x.bandwidth
    record(c, m_w + m_kv, inf, comm, gaps, cpu, extra)
    m_w, m_kv = m_w / p.stream_fraction, m_kv / p.stream_fraction
    record(c, m_w + m_kv, inf, comm, gaps, cpu, extra)
    m_w = m_w / p.kernel_efficiency
    record(c, m_w + m_kv, inf, comm, gaps, cpu, extra)
    m_kv = m_kv / (p.kv_efficiency * np.where(np.asarray(x.grouped_kv) > 0, p.grouped_kv_factor, 1.0))
    record(c, m_w + m_kv, inf, comm, gaps, cpu, extra)
    m_w = m_w / p.dequant_factor
    m = m_w + m_kv
    record(c, m, inf, comm, gaps, cpu, extra)
    # Compute: the GEMMs at the format's own roof and attainable fraction, attention at BF16.
    c_gemm = _gemm_s(x, p)
    c = c_gemm + c_attn0
    record(c, m, inf, comm, gaps, cpu, extra)
    c = c_gemm + _attention_s(x, p)
    record(c, m, inf, comm, gaps, cpu, extra)
    comm = _communication_s(x, p)
    record(c, m, inf, comm, gaps, cpu, extra)
    graphs = np.asarray(p.cuda_graphs, float)
    kernels = np.asarray(x.kernels, float)
    gaps = kernels * np.where(graphs > 0, p.graph_gap_s, p.stream_gap_s)
    cpu = np.where(graphs > 0, p.launch_cpu_s, kernels * p.launch_cpu_s)
    record(c, m, inf, comm, gaps, cpu, extra)
    n = p.overlap_n
    record(c, m, n, comm, gaps, cpu, extra)
    extra = np.zeros_like(m) + np.where(np.asarray(x.is_prefill) > 0, p.request_overhead_s, p.step_overhead_s)
    record(c, m, n, comm, gaps, cpu, extra)
    if ends_only:
        states[-1] = _step(c, m, n, comm, gaps, cpu, extra)
    return states


# -- engine parameters from the shipped data -----------------------------------------------------------------------
@dataclass(frozen=True)
class Constant:
    """One constant of the expected step, with where it comes from."""

    value: float
    source: str


@dataclass(frozen=True)
class EngineParameters:
    """The constants one scenario's expected step uses, each with its source (see :class:`ChainParams`).

    Attributes:
        engine: the preset's name, or None (generic: the fitted constants' median over engines).
        weight_format: the key of ``efficiency.json`` ``formats`` whose bytes and compute roof apply.
        format_class: "16-bit", "8-bit", "fp8" or "4-bit" (groups formats for the fitted kernel efficiency).
        link: the interconnect kind whose α–β figures apply (``collectives``), or None on one GPU.
        fusion: "fused" or "unfused" (:data:`core.overhead.KERNELS_PER_LAYER`).
    """

    engine: str | None
    weight_format: str
    format_class: str
    link: str | None
    fusion: str
    stream_fraction: Constant
    kernel_efficiency: Constant
    kv_efficiency: Constant
    grouped_kv_factor: Constant
    dequant_factor: Constant
    gemm_fraction: Constant
    gemm_engine_factor: Constant
    attention_fraction: Constant
    overlap_n: Constant
    allreduce_alpha_s: Constant
    bus_bandwidth: Constant
    cuda_graphs: Constant
    launch_cpu_s: Constant
    graph_gap_s: Constant
    stream_gap_s: Constant
    step_overhead_s: Constant
    request_overhead_s: Constant

    def chain_params(self) -> ChainParams:
        """The numbers alone, for :func:`chain_step_times`."""
        return ChainParams(**{f.name: getattr(self, f.name).value for f in fields(ChainParams)})


def _entry_text(entry: dict) -> str:
    where = f" ({entry['where']})" if entry.get("where") else ""
    checked = f"; checked: {entry['checked']}" if entry.get("checked") else ""
    return f"{entry.get('source', '')}{where}{checked}"


def _per_gpu(table: dict, gpu_id: str, what: str) -> Constant:
    entry = table.get(gpu_id) or table["default"]
    label = gpu_id if gpu_id in table else "no measurement for this part: default"
    return Constant(float(entry["value"]), f"{what} {fmt_sig(entry['value'], 3)} [{label}]: {_entry_text(entry)}")


def link_kind(result: ScenarioResult, interconnect: str | None = None) -> str | None:
    """The ``collectives`` entry that applies to ``result``'s GPU (``interconnect`` overrides; None at TP = 1)."""
    if result.tp <= 1:
        return None
    collectives = load_efficiency()["collectives"]
    if interconnect:
        if interconnect not in collectives:
            raise ValueError(f"unknown interconnect {interconnect!r}; accepted: "
                             f"{', '.join(k for k in collectives if not k.startswith('_'))}")
        return interconnect
    for kind, entry in collectives.items():
        if not kind.startswith("_") and result.gpu.id in entry.get("parts", ()):
            return kind
    link = result.gpu.interconnect
    return "pcie4" if link is None or "PCIe" in link.kind else "nvlink4"


def _fitted(engine: str | None, *path: str) -> tuple[float, str] | None:
    """A fitted constant for ``engine`` (the engines' median when None or absent), with its provenance."""
    fitted = load_efficiency().get("fitted")
    if not fitted:
        return None
    table = fitted
    for key in path:
        table = table.get(key, {}) if isinstance(table, dict) else {}
    on = fitted.get("fitted_on", "the calibration set")
    if engine is not None and engine in table:
        value = table[engine]
        points = value["points"]
        return (float(value["value"]),
                f"fitted for {engine} on {points} calibration measurement{'s' if points != 1 else ''} of {on}")
    generic = table.get("_generic") if isinstance(table, dict) else None
    if generic is None:
        return None
    if "engines" not in generic:  # a constant every engine shares
        return float(generic["value"]), f"fitted on {generic['points']} calibration measurements of {on}"
    # Per format or per link, the engine may have measurements of others only (vLLM's are on NVLink 3 and Infinity
    # Fabric, none on NVLink 4: an engineer's trial read "no calibration measurement of vLLM" beside "fitted for vLLM
    # on 3").
    which = f" with {path[-1]}" if len(path) > 1 else ""
    why = "generic preset" if engine is None else f"no calibration measurement of {engine}{which}: the generic value"
    # The engine a lone value is of is named: on NVLink 4 it is TensorRT-LLM's (v0.5-0.6, without CUDA graphs), not
    # the custom all-reduce vLLM cites.
    alone = [name for name in table if not name.startswith("_")] if generic["engines"] == 1 else []
    engines = (f"the one engine with a fitted value, {alone[0]}'s" if len(alone) == 1
               else "the one engine with a fitted value" if generic["engines"] == 1
               else f"the median of {generic['engines']} engines' fitted values")
    return float(generic["value"]), f"{why}, {engines} ({on})"


def stored_weight_format(model) -> str:
    """The ``efficiency.json`` format an engine runs a checkpoint "as stored" in: its ``quantization_config``'s
    method and bits (AWQ and GPTQ 4-bit: their group-128 kernels; a weight-only 8-bit format: gpt-fast's INT8
    weight-only; an FP4 or FP8 main format: FP4 / FP8 W8A8; other 8- and 4-bit: INT8 / INT4), BF16 for an
    unquantised or unread one, or one whose every weight its config leaves 16-bit."""
    q = model.quantization
    if q is None or not q.modelled or model.stores_every_weight_16_bit():
        return "bf16"
    if q.bits == 4 and q.method in ("awq", "gptq"):
        return f"{q.method}-int4-g128"
    if q.bits == 8 and q.main_format.weight_only:  # W8A16: gpt-fast's weight-only INT8 kernels
        return "gptfast-int8"
    main = q.main_format.name.upper()
    if main.startswith(("FP4", "MXFP4", "NVFP4")):
        return "fp4"
    if main.startswith("FP8"):
        return "fp8"
    return {8: "int8", 4: "int4"}.get(q.bits, "bf16")


def engine_parameters(result: ScenarioResult, engine: str | None = None, *, weight_format: str | None = None,
                      cuda_graphs: bool | None = None, interconnect: str | None = None,
                      collective: str | None = None) -> EngineParameters:
    """The constants of ``result``'s expected step under ``engine``'s preset, each with its source.

    Args:
        result: the scenario (its GPU, weight lever, TP).
        engine: a preset of :func:`engine_names`, or None for the generic preset.
        weight_format: a ``formats`` key of ``efficiency.json``; None: the engine's format for the weight lever
            (its ``formats`` map), else the lever's default (``lever_defaults``); "as stored": the checkpoint's
            own (:func:`stored_weight_format`).
        cuda_graphs: overrides the engine's (generic: the scenario's ``cuda_graphs`` lever, read from its
            launch overhead).
        interconnect: a ``collectives`` key overriding the GPU's own link (e.g. ``"pcie4"`` for parts run
            without their bridge).
        collective: a named all-reduce implementation whose α was fitted on its own (e.g. ``"nccl"``).

    Raises:
        ValueError: an unknown engine, format or interconnect.
    """
    eff = load_efficiency()
    engines = eff["engines"]
    if engine is not None and engine not in engines:
        raise ValueError(f"unknown engine {engine!r}; accepted: {', '.join(engine_names())}")
    preset = engines.get(engine, {}) if engine else {}
    formats = eff["formats"]
    lever = result.weight_dtype
    if weight_format is None:
        weight_format = (preset.get("formats", {}).get(lever)
                         or (stored_weight_format(result.model) if lever == "stored"
                             else formats["lever_defaults"].get(lever, "bf16")))
    if weight_format not in formats or weight_format in ("lever_defaults",) or weight_format.startswith("_"):
        raise ValueError(f"unknown weight format {weight_format!r}; accepted: "
                         f"{', '.join(k for k in formats if not k.startswith('_') and k != 'lever_defaults')}")
    fmt = formats[weight_format]
    cls = fmt["class"]
    compute = fmt["compute"]
    gpu = result.gpu.id
    priors = eff["priors"]

    def fitted_or(path: tuple[str, ...], prior: float, prior_source: str, fit_prior: str = "") -> Constant:
        """The fitted value of ``path`` (else ``prior``); ``fit_prior``: the key of the prior the fit shrank it toward
        (``efficiency.json`` ``priors``), whose value a fitted one within 2 % of is said to be mostly that prior (an
        engineer's trial: vLLM's "fitted" 0.7976 KV efficiency is the assumed 0.8, moved 0.3 % by three points)."""
        got = _fitted(engine, *path)
        if not got:
            return Constant(prior, prior_source)
        value, source = got
        assumed = priors.get(fit_prior) if fit_prior else None
        if assumed and assumed["value"] and abs(value / assumed["value"] - 1) < 0.02:
            shown = fmt_seconds(assumed["value"]) if path[0].endswith("_s") else fmt_sig(assumed["value"])
            source += (f"; within 2 % of its prior {shown} ({assumed['source']}): the measurements hardly move it, "
                       "so it is that assumption more than a measured value")
        return Constant(value, source)

    kernel = fitted_or(("kernel_efficiency",), priors["kernel_efficiency"]["value"],
                       f"prior {priors['kernel_efficiency']['value']}: {priors['kernel_efficiency']['source']}",
                       "kernel_efficiency")
    kv = fitted_or(("kv_efficiency",), priors["kv_efficiency"]["value"],
                   f"prior {priors['kv_efficiency']['value']}: {priors['kv_efficiency']['source']}", "kv_efficiency")
    grouped = fitted_or(("grouped_kv_factor",), 1.0, f"prior 1: {priors['grouped_kv_factor']['source']}",
                        "grouped_kv_factor")
    launch_cpu = fitted_or(("launch_cpu_s",), overhead.LAUNCH_LATENCY_S, overhead.LAUNCH_LATENCY_SOURCE)
    if cls == "16-bit":
        dequant = Constant(1.0, "16-bit weights: nothing to dequantise")
    else:
        dequant = fitted_or(("dequant_factor", weight_format), 1.0, f"prior 1: {priors['dequant_factor']['source']}",
                            "dequant_factor")
    gemm_table = eff["gemm_fraction"]
    per_gpu = gemm_table.get(gpu, {})
    roof = compute if compute in result.gpu.dense_flop_per_s else "bf16"
    gemm_entry = per_gpu.get(roof) or gemm_table["default"]
    # As stored in two formats, the chain's GEMMs run on the lab's mix of the two roofs (chain_inputs): the format's
    # measured fraction is taken for the 16-bit matrices too.
    mix = roof_mix(result.compute_roof, result.sixteen_bit_flop_share) if (
        result.weight_dtype == "stored" and roof == result.compute_roof) else ""
    gemm = Constant(float(gemm_entry["value"]),
                    f"GEMM fraction {fmt_sig(gemm_entry['value'], 3)} of the {roof.upper()} peak "
                    f"[{gpu if roof in per_gpu else 'no measurement: default'}]: {_entry_text(gemm_entry)}"
                    + (f"; taken for the checkpoint's {mix} (its 16-bit matrices too)" if mix else ""))
    if not result.gpu.measured:
        stream = _per_gpu(eff["hbm_stream_fraction"], gpu, "HBM stream fraction")
    else:  # its roofs are this machine's own copy and matrix product: a datasheet fraction would count a loss twice
        stream = Constant(1.0, f"HBM stream fraction 1 [{result.gpu.name}]: its bandwidth was measured on the "
                               "machine (python -m core measure's streaming copy), nothing to take off")
        if roof == "bf16":
            gemm = Constant(1.0, f"GEMM fraction 1 of the BF16 peak [{result.gpu.name}]: its BF16 roof was measured on "
                                 "the machine (python -m core measure's matrix product), nothing to take off")
    gemm_engine = fitted_or(("gemm_engine_factor",), 1.0, f"prior 1: {priors['gemm_engine_factor']['source']}",
                            "gemm_engine_factor")
    link = link_kind(result, interconnect)
    coll = eff["collectives"][link] if link else None
    if link:
        group = f"{engine} ({collective})" if engine and collective else engine
        got = _fitted(group, "allreduce_alpha_s", link)
        # One measurement per link, used for every part on it: said (an engineer's trial found an H200's bus bandwidth
        # sourced from an H100 machine's table, unexplained).
        shared = f"the {link} figure, used for {', '.join(coll.get('parts', ()))}: "
        alpha = Constant(*got) if got else Constant(
            float(coll["alpha_s"]), f"prior {fmt_seconds(coll['alpha_s'])} per call (measured at {coll['gpus']} "
                                    f"GPUs): {shared}{_entry_text(coll)}")
        busbw = Constant(float(coll["bus_bandwidth"]), f"bus bandwidth {coll['bus_bandwidth'] / 1e9:,.0f} GB/s, "
                                                       f"{shared}{_entry_text(coll)}")
    else:
        alpha = Constant(0.0, "one GPU: no all-reduce")
        busbw = Constant(1.0, "one GPU: no all-reduce")
    if cuda_graphs is None:
        lever = bool(result.deployment.cuda_graphs)
        cuda_graphs = preset.get("cuda_graphs") if engine else None
        # The engine's own choice, said as such where the lab's lever says otherwise (a trial read "CUDA graphs: one
        # launch" beside cuda-graphs=false in the link).
        graphs_source = ((f"{engine} {'captures CUDA graphs' if cuda_graphs else 'runs without CUDA graphs'}, "
                          f"whatever the lab's CUDA-graphs lever ({'on' if lever else 'off'}): "
                          if cuda_graphs is not None and bool(cuda_graphs) != bool(lever) else f"{engine} preset: ")
                         + preset.get("source", "")) if engine else ""
        if cuda_graphs is None:
            cuda_graphs = lever
            graphs_source = "the scenario's CUDA-graphs lever"
    else:
        graphs_source = "given"
    launch = eff["launch"]

    def shared(name: str, prior: float, prior_source: str) -> Constant:
        got = _fitted(None, name)
        return Constant(*got) if got else Constant(prior, f"prior: {prior_source}")

    return EngineParameters(
        engine=engine, weight_format=weight_format, format_class=cls, link=link,
        fusion=preset.get("fusion", "unfused"),
        stream_fraction=stream,
        kernel_efficiency=kernel, kv_efficiency=kv, grouped_kv_factor=grouped, dequant_factor=dequant,
        gemm_fraction=gemm,
        gemm_engine_factor=gemm_engine,
        attention_fraction=_per_gpu(eff["attention_fraction"], gpu, "attention fraction of the BF16 peak"),
        overlap_n=shared("overlap_n", eff["overlap"]["prior_n"], eff["overlap"]["_about"]),
        allreduce_alpha_s=alpha, bus_bandwidth=busbw,
        cuda_graphs=Constant(1.0 if cuda_graphs else 0.0, graphs_source), launch_cpu_s=launch_cpu,
        graph_gap_s=shared("graph_gap_s", overhead.GRAPH_NODE_GAP_S, "core.overhead.GRAPH_NODE_GAP_S (an assumption)"),
        stream_gap_s=shared("stream_gap_s", launch["stream_gap_prior_s"], launch["stream_gap_source"]),
        step_overhead_s=fitted_or(("step_overhead_s",), 0.0, "no fitted value: none counted", "step_overhead"),
        request_overhead_s=fitted_or(("request_overhead_s",), 0.0, "no fitted value: none counted",
                                     "request_overhead"))


def ceiling_launch_s(result: ScenarioResult, params: EngineParameters) -> float:
    """The third ceiling's launch time, seconds, at the engine's launch mode: the scenario's own where the engine
    launches as its CUDA-graphs lever says, else the slowest stage's kernels launched the engine's way
    (:func:`core.overhead.overhead_time`).  The ceiling an engine's expected step starts from counts its launches as
    the engine makes them: a ceiling of the lever's uncaptured launches under vLLM's captured ones was one the
    expected step beat by 36 % (an engineer's trial: Qwen3-30B-A3B in INT4 at B = 1 on an H100)."""
    graphs = bool(params.cuda_graphs.value)
    if graphs == bool(result.deployment.cuda_graphs):
        return result.launch_overhead_s
    return overhead.overhead_time(int(result.kernels_per_step), cuda_graphs=graphs)


def chain_inputs(result: ScenarioResult, params: EngineParameters) -> ChainInputs:
    """The :class:`ChainInputs` of ``result`` (its public fields) under ``params``' format and fusion.

    Weight bytes per GPU: the lab's ``weight_bytes_read``; in the real format, the parameters one GPU reads
    split into the embedding table ``V·h/TP``, the LM head ``V·h/TP`` (none when tied) and the rest, each at
    the format's bytes; gathered, the embedding table's share becomes the ``B·k·h/TP`` rows a step looks up
    (a tied table is read whole by the LM head: unchanged).  A checkpoint evaluated "as stored" keeps the
    lab's bytes (they are the checkpoint's), and its GEMMs the lab's roof (two formats' mix where it has
    two).  With PP > 1 every weight is counted at the matrix bytes and the
    embedding is not re-counted (the lab's numbers are the most loaded stage's).
    """
    fmt = load_efficiency()["formats"][params.weight_format]
    m, r = result.model, result
    tp = max(int(r.tp), 1)
    table = m.vocab_size * m.hidden_size / tp
    head = 0.0 if m.tie_word_embeddings else table
    w_lab = float(r.weight_bytes_read)
    if r.weight_dtype == "stored":
        w_fmt = w_lab
        emb_bytes = m.stored_bytes_per_param_parts()[0]
    elif r.pp > 1:
        w_fmt = w_lab * fmt["matrix"] / r.bytes_per_weight
        emb_bytes = fmt["embedding"]
    else:
        rest = float(r.weight_params_read) - table - head
        w_fmt = rest * fmt["matrix"] + table * fmt["embedding"] + head * fmt["head"]
        emb_bytes = fmt["embedding"]
    gathered = w_fmt
    if r.pp == 1 and not m.tie_word_embeddings:
        rows = r.batch * r.tokens_per_read * m.hidden_size / tp
        gathered = w_fmt - table * emb_bytes + min(rows, table) * emb_bytes
    gpu = r.gpu
    compute = fmt["compute"] if fmt["compute"] in gpu.dense_flop_per_s else "bf16"
    # The slowest stage's layers, whose step the ceiling is (Nemotron-H at PP = 4: 29, where the fullest stage's 30
    # gave 334 kernels beside the ceiling's 323)
    layers = r.deployment.profile.stages[r.slowest_stage].layers
    calls = 2 * layers if r.tp > 1 else 0
    # Each collective call is a kernel launched (an engineer's trial: 60 all-to-alls left out of "334 + 60 all-reduces")
    other_calls = sum(c.calls for c in r.deployment.profile.stages[r.slowest_stage].collectives
                      if c.name != "TP all-reduce")
    kernels = overhead.kernels_per_step(layers, params.fusion) + calls + other_calls
    return ChainInputs(
        compute_s=r.compute_time_s,
        compute_attention_s=r.attention_flop_per_step / r.peak_flop_per_s,
        memory_s=r.memory_time_s, communication_s=r.communication_time_s, launch_s=ceiling_launch_s(r, params),
        bandwidth=r.bandwidth, weight_bytes_lab=w_lab, weight_bytes_format=w_fmt, weight_bytes_gathered=gathered,
        kv_bytes=r.kv_traffic_bytes,
        flop_gemm=r.flop_per_step_weights, flop_attention=r.attention_flop_per_step, peak_lab=r.peak_flop_per_s,
        # As stored, the GEMMs run on the lab's roof: a checkpoint in two formats multiplies each on its own
        # (core.precision.mixed_roof; gpt-oss's BF16 attention and LM head beside its MXFP4 experts).
        peak_gemm=(r.peak_flop_per_s if r.weight_dtype == "stored" and compute == r.compute_roof
                   else gpu.dense_flop_per_s[compute]),
        peak_bf16=gpu.dense_flop_per_s["bf16"],
        allreduce_calls=calls, allreduce_bytes=r.allreduce_bytes, tp=r.tp,
        communication_other_s=_other_communication(r, calls), kernels=kernels,
        is_prefill=1.0 if r.phase == "prefill" else 0.0, grouped_kv=1.0 if m.kv_heads(r.gqa) < m.n_heads else 0.0,
        other_calls=float(other_calls))


def _other_communication(r: ScenarioResult, calls: int) -> float:
    """The ceiling's communication that is not its TP all-reduces (PP sends, EP all-to-all), s: what is left of
    ``communication_time_s`` past ``calls`` all-reduces, 0 where that is rounding (a TP-only step printed
    "0.000000000000108 µs of other communication")."""
    other = r.communication_time_s - calls * r.allreduce_time_s
    return other if other > 1e-9 * r.communication_time_s else 0.0


# -- the expected step ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Term:
    """One term between the ceiling and the expected step.

    Attributes:
        key: stable id (:data:`TERM_NAMES`).
        name: what it is, in words.
        seconds: what it adds to the step (negative: it takes time away), seconds.
        formula: how it is computed, with this scenario's numbers.
        source: where its constants come from.
        gpu_seconds: what it adds to the GPU's time where that differs from ``seconds`` because the host's
            launches hold the step (``max(GPU time, launches)``), seconds; None elsewhere.
        compute_seconds: what it adds to the step's compute time where the memory time hides it (the GEMMs' and
            attention's terms of a memory-bound step: the step unchanged), seconds; None elsewhere.
        memory_seconds: what it adds to the step's memory time where the compute time hides it (the byte and
            bandwidth terms of a compute-bound step, a prefill: the step unchanged), seconds; None elsewhere.
    """

    key: str
    name: str
    seconds: float
    formula: str
    source: str
    gpu_seconds: float | None = None
    compute_seconds: float | None = None
    memory_seconds: float | None = None

    @property
    def shown(self) -> bool:
        """Whether the waterfall lists it: it changes the step, the GPU's time under the launches, or the compute
        time under the memory time or the memory time under the compute time (the overlap's row reads both)."""
        return (self.seconds != 0 or bool(self.gpu_seconds) or bool(self.compute_seconds)
                or bool(self.memory_seconds))


@dataclass(frozen=True)
class ExpectedStep:
    """The expected step of one scenario beside its ceiling (SI units).

    ``expected_step_time_s == math.fsum([ceiling_step_time_s, *(t.seconds for t in terms)])`` exactly; the
    tokens/s scale the scenario's ceiling tokens/s by ``scenario ceiling / step`` (per sequence ``E / (PP·step)``,
    aggregate ``B·E / step`` × EP groups × replicas, as :class:`ScenarioResult` defines them).

    The ceiling is the roofline's three ceilings with the kernels launched as the engine launches them: the
    scenario's own, unless the engine captures CUDA graphs where the scenario's lever does not, or the reverse
    (:func:`ceiling_launch_s`; ``scenario_ceiling_step_time_s`` is then the scenario's, the Roofline tab's).

    Attributes:
        engine: the preset used, or None (generic).
        embedding_convention: "gathered" or "article" (:data:`EMBEDDING_CONVENTIONS`): which count of the input
            embedding the expected step uses; the ceiling always uses the articles' (the table read every step).
        parameters: the constants and their sources.
        ttft_terms, expected_ttft_s, ceiling_ttft_s: the same chain on the prefill of one prompt (None when no
            prefill result was given).
        scenario_ceiling_step_time_s: the scenario's own ceiling step, seconds (the Roofline tab's).
    """

    engine: str | None
    phase: str
    embedding_convention: str
    parameters: EngineParameters
    ceiling_step_time_s: float
    expected_step_time_s: float
    terms: tuple[Term, ...]
    ceiling_tokens_per_s_per_sequence: float
    expected_tokens_per_s_per_sequence: float
    ceiling_tokens_per_s_aggregate: float
    expected_tokens_per_s_aggregate: float
    ceiling_ttft_s: float | None = None
    expected_ttft_s: float | None = None
    ttft_terms: tuple[Term, ...] = field(default_factory=tuple)
    scenario_ceiling_step_time_s: float | None = None

    @property
    def ceiling_rebased(self) -> bool:
        """Whether the ceiling is not the scenario's own (the Roofline tab's): the engine launches its kernels
        otherwise than the scenario's CUDA-graphs lever says, and its ceiling counts the engine's launches
        (:func:`ceiling_launch_s`)."""
        return (self.scenario_ceiling_step_time_s is not None
                and self.scenario_ceiling_step_time_s != self.ceiling_step_time_s)

    @property
    def of_scenario_ceiling(self) -> float:
        """Expected tokens/s ÷ the scenario's own ceiling tokens/s (the Roofline tab's): ``scenario ceiling step /
        expected step``; :attr:`fraction_of_ceiling` where the ceiling is the scenario's."""
        own = self.scenario_ceiling_step_time_s
        return (self.ceiling_step_time_s if own is None else own) / self.expected_step_time_s

    def _tpot(self, tokens_per_s_per_sequence: float) -> float | None:
        return None if self.phase != "decode" or tokens_per_s_per_sequence <= 0 else 1.0 / tokens_per_s_per_sequence

    @property
    def expected_tpot_s(self) -> float | None:
        """Expected time per output token of one sequence, seconds: ``1 / expected tokens/s per sequence`` (the
        expected step over the E tokens a sequence gains in it, times the stages); None in prefill."""
        return self._tpot(self.expected_tokens_per_s_per_sequence)

    @property
    def ceiling_tpot_s(self) -> float | None:
        """The ceiling's time per output token, seconds, as :attr:`expected_tpot_s` (None in prefill)."""
        return self._tpot(self.ceiling_tokens_per_s_per_sequence)

    @property
    def fraction_of_ceiling(self) -> float:
        """Expected tokens/s ÷ the ceiling's: ``ceiling step / expected step`` (the article's "60–85 %")."""
        return self.ceiling_step_time_s / self.expected_step_time_s

    @cached_property  # read by a readout and its work, the Expected tab and two Compare rows of each pin
    def shares(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """The expected tokens/s per sequence and of the batch as shares of their ceilings, each ``(percentage,
        ceiling)`` as :func:`core.units.fmt_share` prints them (their product prints as the expected value), the
        percentage with the same digits in both: one ratio, printed alike (a trial read "67 %" beside "67.1 %");
        the ceiling with the digits that make ``ceiling × ceiling step / expected step`` print as the expected
        value too, so a readout and its work print one ceiling ("ceiling 61.3" over "61 tokens/s × …": a trial).

        Raises:
            ValueError: a tokens/s figure that is not finite, or a ceiling that is not positive.
        """
        pairs = ((self.expected_tokens_per_s_per_sequence, self.ceiling_tokens_per_s_per_sequence),
                 (self.expected_tokens_per_s_aggregate, self.ceiling_tokens_per_s_aggregate))
        least = 2
        while True:
            got = tuple(fmt_share(value, whole, least) for value, whole in pairs)
            if got[0][0] == got[1][0] or least >= 9:
                break
            least += 1
        # The ceiling as the steps' ratio also needs it ("23 tokens/s × 42.92 ms / 60.27 ms = 17 tokens/s" is 16.4;
        # the ceiling is 23.30), never with fewer digits than its readout: one ceiling for both products.
        ratio = (seconds_value(fmt_seconds(self.ceiling_step_time_s))
                 / seconds_value(fmt_seconds(self.expected_step_time_s)))
        out = []
        for (value, ceiling), (pct, whole) in zip(pairs, got, strict=True):
            rate = fmt_rate(value)
            first = max(rate_digits(ceiling), len(whole.replace(",", "").replace(".", "").lstrip("0")))
            for digits in range(first, max(10, first + 1)):
                shown = fmt_sig(ceiling, digits)
                number = float(shown.replace(",", ""))
                if fmt_rate(number * ratio) == rate and fmt_rate(float(pct) / 100 * number) == rate:
                    break
            else:
                shown = whole
            out.append((pct, shown))
        return out[0], out[1]


def _factor(x: float, extra: int = 0) -> str:
    """A fitted constant a formula multiplies by: four significant digits (at three, "× 0.331" gave 2.065 ms where
    the term is 2.063), ``extra`` more where a row needs them to multiply out."""
    return fmt_sig(x, 4 + extra)


def _divisor(x: float, extra: int = 0) -> str:
    """A fitted efficiency a time is divided by: with three significant digits of its distance from 1, which is
    what the term is made of (a time ÷ 0.949 adds 5.4 % where ÷ 0.94927 adds 5.35 %), ``extra`` more where a row
    needs them to multiply out."""
    return fmt_sig(x, extra + (4 if x == 1 else max(4, 3 - math.floor(math.log10(abs(1 - x))))))


def _us(t: float) -> str:
    """A per-kernel or per-call time in µs to four significant digits: a count of thousands multiplies it (884 ×
    2.49 µs is 2.201 ms, 884 × 2.493 µs the 2.204 ms the term is)."""
    return f"{fmt_sig(t * 1e6, 4)} µs"


def _printed_rate(bandwidth: float, *divisors: str) -> float:
    """A bandwidth as :func:`core.units.fmt_bandwidth` prints it, times the printed ``divisors``, bytes/s: what a
    reader divides by."""
    return float(fmt_bandwidth(bandwidth).split()[0].replace(",", "")) * TB * math.prod(float(d) for d in divisors)


def _gb_giving(byte_counts: tuple[float, float], rate: float, target: str) -> tuple[str, str]:
    """Two byte counts as GB with the fewest decimals (three at least, and four significant digits) at which their
    difference over ``rate`` (bytes/s, as printed) prints as ``target`` does, to its digits: "(15.010 GB − 16.061
    GB) / 2.039 TB/s" gave 0.5152 ms where the term is 0.5154 (a verifying trial recomputed every row)."""
    number, unit = target.rsplit(" ", 1)
    decimals = len(number.split(".")[1]) if "." in number else 0
    smallest = min((abs(n) for n in byte_counts if n), default=GB)
    first = max(3, 3 - math.floor(math.log10(smallest / GB)))
    for digits in range(first, first + 6):
        rounded = [round(n / GB, digits) for n in byte_counts]
        gb = rounded[0] - sum(rounded[1:])
        if f"{abs(gb) * GB / rate / SECONDS_PER[unit]:,.{decimals}f}" == number:
            return tuple(fmt_bytes_gb(n, digits) for n in byte_counts)
    return tuple(fmt_bytes_gb(n, first) for n in byte_counts)


def _terms(states: list, x: ChainInputs, p: EngineParameters, embedding: str,
           reads: list[tuple[float, ...]]) -> tuple[Term, ...]:
    """Name, seconds, formula and source of each state change (``reads``: each state's weight- and KV-read times
    and GPU time, :func:`chain_step_times`)."""
    v = [float(s) for s in states]
    g = [r[2] for r in reads]
    at = {key: i for i, (key, _name) in enumerate(TERM_NAMES)}

    def read(key: str, what: str, part: slice, earlier: tuple[float, ...], divisor: float,
             grouped: float | None = None) -> str:
        # "weight-read time 15.010 GB / (3.35 TB/s × 0.9493) = 4.72 ms ÷ 0.7722 = 6.112 ms": the bytes and the
        # divisors of the terms before (an engineer's trial could not get 4.72 ms from 15.010 GB at 3.35 TB/s), then
        # the time the factors divide, before and after (the step holds more than it: a trial found "memory time ÷
        # 0.949" beside the step's 42.3 → 44.55 ms).  The time before is the printed bytes over the printed rate,
        # so both equalities hold at the digits printed; where they cannot at the constants' usual digits (a
        # verifying trial: "8.047 GB / (3.35 TB/s × 0.9493 × 0.7746)" is 3.267 ms, the row said 3.266), the
        # constants take a digit more, up to three.
        after = sum(reads[at[key] + 1][part])
        read_bytes = sum(reads[at["hbm"]][part]) * bw  # the bytes the chain reads, as the HBM term found them
        target = fmt_seconds(after)
        places = max(3, 3 - math.floor(math.log10(read_bytes / GB))) if read_bytes > 0 else 3
        tries = [(more, extra) for extra in range(4) for more in range(5)]  # the constants' digits last
        for more, extra in tries:
            shown_earlier = [_divisor(v, extra) for v in earlier]
            factors = [_divisor(divisor, extra), *([] if grouped is None else [_factor(grouped, extra)])]
            divide = math.prod(float(f) for f in factors)
            rate = _printed_rate(bw, *shown_earlier)
            gb = fmt_bytes_gb(read_bytes, places + more)
            gb_value = float(gb.split()[0].replace(",", "")) * GB
            shown = fmt_seconds_into(gb_value / rate, target, lambda t, d=divide: t / d)
            if fmt_seconds(seconds_value(shown) / divide) == target:
                break
        rate_text = (f"({' × '.join([fmt_bandwidth(bw), *shown_earlier])})" if earlier else fmt_bandwidth(bw))
        factor = factors[0] if grouped is None else f"({factors[0]} × grouped-KV factor {factors[1]})"
        return f"{what} {gb} / {rate_text} = {shown} ÷ {factor} = {target}"

    weights, kv, both = slice(0, 1), slice(1, 2), slice(0, 2)

    fmt = load_efficiency()["formats"][p.weight_format]
    bw = float(x.bandwidth)
    stream, kernel = float(p.stream_fraction.value), float(p.kernel_efficiency.value)
    # The ceiling's kernels (Show your work's count) and each all-reduce's own, named apart: 884 there, 1044 here.
    calls, others = float(x.allreduce_calls), float(x.other_calls)
    named = [f"{n:.0f} {one if n == 1 else many}" for n, one, many in
             ((calls, "all-reduce", "all-reduces"), (others, "other collective call", "other collective calls")) if n]
    kernels = (f"{x.kernels:.0f} kernels ({x.kernels - calls - others:.0f} + {' + '.join(named)})" if named
               else f"{x.kernels:.0f} kernels")
    # A difference of two byte counts over the bandwidth, with the digits that make it print as the term's time
    fmt_format = _gb_giving((float(x.weight_bytes_format), float(x.weight_bytes_lab)), _printed_rate(bw),
                            fmt_seconds(abs(float(x.weight_bytes_format - x.weight_bytes_lab)) / bw))
    fmt_gathered = _gb_giving((float(x.weight_bytes_gathered), float(x.weight_bytes_format)), _printed_rate(bw),
                              fmt_seconds(abs(float(x.weight_bytes_gathered - x.weight_bytes_format)) / bw))
    formulas = {
        "format": (f"({fmt_format[0]} − {fmt_format[1]}) / "
                   f"{fmt_bandwidth(bw)} [{p.weight_format}: {fmt_sig(fmt['matrix'])} B/weight, embedding "
                   f"{fmt_sig(fmt['embedding'])}, head {fmt_sig(fmt['head'])}]", fmt["source"]),
        "embedding": ((f"({fmt_gathered[0]} − {fmt_gathered[1]}) / "
                       f"{fmt_bandwidth(bw)} (B·k rows of d_model instead of all V)") if embedding == "gathered"
                      else "article convention: the whole table counted every step (0)",
                      "article 000 counts every parameter read each step; a decode step gathers B·k embedding rows"),
        "hbm": (read("hbm", "memory time", both, (), stream), p.stream_fraction.source),
        "kernels": (read("kernels", "weight-read time", weights, (stream,), kernel), p.kernel_efficiency.source),
        "kv": ((read("kv", "KV-read time", kv, (stream,), p.kv_efficiency.value, p.grouped_kv_factor.value),
                f"{p.kv_efficiency.source}; grouped KV: {p.grouped_kv_factor.source}")
               if x.grouped_kv else
               (read("kv", "KV-read time", kv, (stream,), p.kv_efficiency.value), p.kv_efficiency.source)),
        "dequant": (read("dequant", "weight-read time", weights, (stream, kernel), p.dequant_factor.value),
                    p.dequant_factor.source),
        "gemm": (f"{fmt_flop(x.flop_gemm)} / ({fmt_flops_rate(x.peak_gemm)} × {_factor(p.gemm_fraction.value)} × "
                 f"{_factor(p.gemm_engine_factor.value)})",
                 f"{p.gemm_fraction.source}; engine factor: {p.gemm_engine_factor.source}"),
        "attention": (f"{fmt_flop(x.flop_attention)} / ({fmt_flops_rate(x.peak_bf16)} × "
                      f"{_factor(p.attention_fraction.value)})", p.attention_fraction.source),
        "overlap": (_overlap_text(p.overlap_n.value, *reads[at["overlap"] + 1]), p.overlap_n.source),
        "collectives": ((f"{x.allreduce_calls:.0f} × ({_us(p.allreduce_alpha_s.value)} + "
                         f"{x.allreduce_bytes:,.0f} bytes × 2({x.tp:.0f}−1)/{x.tp:.0f} [ring, n = TP] / "
                         f"{fmt_sig(p.bus_bandwidth.value / 1e9, 4)} GB/s)") if x.allreduce_calls else "one GPU: none",
                        f"{p.allreduce_alpha_s.source}; {p.bus_bandwidth.source}" if x.allreduce_calls else ""),
        "launches": ((f"CUDA graphs: one launch + {kernels} × {_us(p.graph_gap_s.value)} "
                      "GPU gap") if p.cuda_graphs.value else
                     (f"max(GPU time + {kernels} × {_us(p.stream_gap_s.value)} gaps, {x.kernels:.0f} × "
                      f"{_us(p.launch_cpu_s.value)} host time per kernel)"),
                     f"{p.cuda_graphs.source}; host time per kernel: {p.launch_cpu_s.source}; GPU gap: "
                     f"{(p.graph_gap_s if p.cuda_graphs.value else p.stream_gap_s).source}"),
        "engine": ((f"+ {fmt_seconds(p.request_overhead_s.value)} per prefill", p.request_overhead_s.source)
                   if x.is_prefill else
                   (f"+ {fmt_seconds(p.step_overhead_s.value)} per step", p.step_overhead_s.source)),
    }
    # A change of the bytes read changes the memory time by (bytes after − before) / BW; the step changes by less
    # where compute or the host's launches hold it (max(GPU time, launches) at the ceiling's exact max): said, so
    # that the formula multiplies out to the term (Qwen3-30B-A3B gathered: −0.1857 ms of memory time, the step
    # 2.242 → 2.128 ms, the launches').
    # The times a term's formula evaluates, beside the ones the ceiling counted for the same work.
    cp = p.chain_params()
    in_place = {
        "gemm": (float(_gemm_s(x, cp)), float(x.compute_s) - float(x.compute_attention_s)),
        "attention": (float(_attention_s(x, cp)), float(x.compute_attention_s)),
        "collectives": (float(_communication_s(x, cp)), float(x.communication_s)) if x.allreduce_calls else None,
    }
    if x.allreduce_calls and float(x.communication_other_s):  # the rest of the communication, as the ceiling's
        text, source = formulas["collectives"]
        formulas["collectives"] = (f"{fmt_seconds(float(x.communication_other_s))} of other communication (EP "
                                   f"all-to-all, PP sends: the ceiling's, α not fitted for them) + {text}", source)
    raw = {"format": (x.weight_bytes_format - x.weight_bytes_lab) / bw,
           "embedding": (x.weight_bytes_gathered - x.weight_bytes_format) / bw if embedding == "gathered" else 0.0}
    # Every other term's formula gives a time the step already counted part of (the GEMMs' 40.28 ms where the
    # ceiling had 32.46 ms of compute), or a factor on a time it does not print: each ends with the step before and
    # after it, whose difference is the term (a new user's trial could not multiply them out).
    launches = fmt_seconds(float(x.launch_s))
    gpu_held: dict[str, float] = {}
    compute_hidden: dict[str, float] = {}
    memory_hidden: dict[str, float] = {}
    for i, (key, _name) in enumerate(TERM_NAMES):
        text, source = formulas[key]
        step_change, gpu_change = v[i + 1] - v[i], g[i + 1] - g[i]
        # Before the launches' and overlap's terms the step is max(GPU time, launches): where the launches hold it,
        # the term moves the GPU's time by more than the step (Qwen3-30B-A3B at TP = 2: the collectives' 2.979 −
        # 0.5769 ms = 2.402 ms beside "the step goes 2.128 → 4.383 ms", from a GPU time of 1.981 ms), or not at all.
        if key in GPU_TERMS and not math.isclose(step_change, gpu_change, rel_tol=1e-9, abs_tol=1e-15):
            gpu_held[key] = gpu_change
            replaced = in_place.get(key)
            head = (f"{text} = {_signed_seconds(raw[key])} of memory time" if key in raw else
                    f"{text} = {fmt_seconds(replaced[0])} in place of the ceiling's {fmt_seconds(replaced[1])}"
                    if replaced else text)
            stays = (f", under the launches' {launches}: the step stays {fmt_seconds(v[i])}" if step_change == 0 else
                     f" and the step, max(GPU time, launches {launches}), goes {fmt_seconds_change(v[i], v[i + 1])}")
            formulas[key] = (f"{head}; the GPU's time goes {fmt_seconds_change(g[i], g[i + 1])}{stays}", source)
        elif key in ("gemm", "attention") and step_change == 0 and reads[i + 1][3] != reads[i][3]:
            # Memory-bound, the GEMMs below peak and attention at the BF16 roof lengthen the compute the step hides:
            # a row at 0 that says by how much, or the overlap's "compute 0.242 ms" came from no row shown (the
            # ceiling's was 0.1643 ms; an engineer's trial).
            c0, c1, memory = reads[i][3], reads[i + 1][3], reads[i][0] + reads[i][1]
            compute_hidden[key] = c1 - c0
            replaced = in_place[key]
            formulas[key] = (f"{text} = {fmt_seconds(replaced[0])} in place of the ceiling's "
                             f"{fmt_seconds(replaced[1])}; the step's compute goes {fmt_seconds_change(c0, c1)}, "
                             f"under its memory time's {fmt_seconds(memory)}: the step stays {fmt_seconds(v[i])}",
                             source)
        elif (key in MEMORY_TERMS and step_change == 0
              and reads[i + 1][0] + reads[i + 1][1] != reads[i][0] + reads[i][1]):
            # Compute-bound (a prefill), the bytes and the bandwidth's fractions lengthen the memory time the step
            # hides: a row at 0 that says by how much, or the overlap's "memory 6.2232 ms" came from no row shown
            # (the ceiling's was 4.79 ms; an engineer's trial).
            m0, m1 = reads[i][0] + reads[i][1], reads[i + 1][0] + reads[i + 1][1]
            memory_hidden[key] = m1 - m0
            head = f"{text} = {_signed_seconds(raw[key])} of memory time" if key in raw else text
            formulas[key] = (f"{head}; the step's memory time goes {fmt_seconds_change(m0, m1)}, under its compute "
                             f"time's {fmt_seconds(reads[i][3])}: the step stays {fmt_seconds(v[i])}", source)
        elif key in raw and not math.isclose(step_change, raw[key], rel_tol=1e-9, abs_tol=1e-15):
            formulas[key] = (f"{text} = {_signed_seconds(raw[key])} of memory time; the step, max(GPU time, "
                             f"launches {launches}), goes {fmt_seconds_change(v[i], v[i + 1])}", source)
        elif key not in raw and key != "engine" and v[i + 1] != v[i]:  # the engine's formula is its seconds
            replaced = in_place.get(key)
            text += (f" = {fmt_seconds(replaced[0])} in place of the ceiling's {fmt_seconds(replaced[1])}"
                     if replaced else "")
            formulas[key] = (f"{text}; the step goes {fmt_seconds_change(v[i], v[i + 1])}", source)
    # A prefill's engine term is paid once a request, not a step (an engineer read "per-step" beside "per prefill").
    names = {**dict(TERM_NAMES), **({"engine": "engine per-request overhead"} if x.is_prefill else {})}
    return tuple(Term(key, names[key], v[i + 1] - v[i], *formulas[key], gpu_seconds=gpu_held.get(key),
                      compute_seconds=compute_hidden.get(key), memory_seconds=memory_hidden.get(key))
                 for i, (key, _name) in enumerate(TERM_NAMES))


def _overlap_text(n: float, m_w: float, m_kv: float, gpu: float, c: float, comm: float, cpu: float) -> str:
    """The overlap term's formula with its values (two trials could not recompute "max(a, b) → (aⁿ + bⁿ)^(1/n)"
    without a and b): compute and memory, then the GPU's time and the host's launches, each pair's smooth maximum,
    in ms with the decimals that make the GPU time's sum print right."""
    m = m_w + m_kv
    inner = float(_smooth_max(np.float64(c), np.float64(m), n))
    outer = float(_smooth_max(np.float64(gpu), np.float64(cpu), n))
    d = max(3, sum_digits([1e3 * inner, 1e3 * comm], 1e3 * gpu, digits=3))
    change = abs(outer - max(max(c, m) + comm, cpu)) * 1e3  # the term, ms: its digits show (0.822 µs of 9.58 ms)
    if change > 0:
        d = min(6, max(d, math.ceil(-math.log10(change)) + 1))

    def ms(t: float) -> str:
        return f"{1e3 * t:,.{d}f} ms"

    # n to six digits: at four (1.704 for 1.70411) the printed smooth maxima were off in their last digits (a trial)
    text = (f"max(a, b) → (aⁿ + bⁿ)^(1/n), n = {n:.6g}: compute {ms(c)} and memory {ms(m)} → {ms(inner)}")
    if comm:
        text += f"; + {ms(comm)} of communication and gaps = GPU time {ms(gpu)}"
    if cpu:
        text += f"; with the host's launches {ms(cpu)} → {ms(outer)}"
    return text


def _signed_seconds(t: float) -> str:
    """``t`` seconds, a minus sign where negative: ``−0.1858 ms``."""
    return f"−{fmt_seconds(-t)}" if t < 0 else fmt_seconds(t)


def _run(result: ScenarioResult, params: EngineParameters,
         embedding: str) -> tuple[float, tuple[Term, ...], float]:
    """``(expected step, terms, ceiling step)``, seconds: the ceiling is the scenario's own where the engine launches
    as its lever says, else the chain's first state (:func:`ceiling_launch_s`)."""
    x = chain_inputs(result, params)
    reads: list = []
    states = chain_step_times(x, params.chain_params(), embedding, reads=reads)
    terms = _terms(states, x, params, embedding, [tuple(float(v) for v in state) for state in reads])
    # The scenario's own where the launches bind in neither mode (the step is the GPU's time in both): the chain's
    # first state equals it only to rounding, and "a ceiling at the engine's launches" of the same 6.076 ms was said.
    same = x.launch_s == result.launch_overhead_s or max(x.launch_s, result.launch_overhead_s) <= result.gpu_time_s
    ceiling = result.step_time_s_with_kv if same else float(states[0])
    return math.fsum([ceiling, *(t.seconds for t in terms)]), terms, ceiling


def expected_step(result: ScenarioResult, engine: str | None = None, *, ttft_result: ScenarioResult | None = None,
                  embedding: str = "gathered", weight_format: str | None = None, cuda_graphs: bool | None = None,
                  interconnect: str | None = None, collective: str | None = None) -> ExpectedStep:
    """The expected step of ``result`` under ``engine``'s preset: the ceiling plus named, sourced terms.

    Args:
        result: a :class:`ScenarioResult` (decode or prefill).
        engine: a preset of :func:`engine_names`, or None (generic).
        ttft_result: the prefill of one prompt for the same scenario (``phase="prefill"``, ``batch=1``); its
            chain gives ``expected_ttft_s``.  A prefill ``result`` of batch 1 is its own.
        embedding: "gathered" (default) or "article" (:data:`EMBEDDING_CONVENTIONS`).
        weight_format, cuda_graphs, interconnect, collective: see :func:`engine_parameters`.

    Returns:
        an :class:`ExpectedStep`; its terms add up to ``expected − ceiling`` exactly.

    Raises:
        ValueError: an unknown engine, format, interconnect or embedding convention.
    """
    options = dict(weight_format=weight_format, cuda_graphs=cuda_graphs, interconnect=interconnect,
                   collective=collective)
    params = engine_parameters(result, engine, **options)
    expected, terms, ceiling = _run(result, params, embedding)
    own = result.step_time_s_with_kv  # the scenario's ceiling, the Roofline tab's
    if ttft_result is None and result.phase == "prefill" and result.batch == 1:
        ttft_result = result
    ttft_expected, ttft_terms, ttft_ceiling = None, (), None
    if ttft_result is not None:
        ttft_params = params if ttft_result is result else engine_parameters(ttft_result, engine, **options)
        ttft_expected, ttft_terms, ttft_ceiling = _run(ttft_result, ttft_params, embedding)
        if ttft_result.pp > 1:  # a prompt crosses every stage (ScenarioResult.ttft_s)
            ttft_expected, ttft_ceiling = ttft_expected * ttft_result.pp, ttft_ceiling * ttft_result.pp
    return ExpectedStep(
        engine=engine, phase=result.phase, embedding_convention=embedding, parameters=params,
        ceiling_step_time_s=ceiling, expected_step_time_s=expected, terms=terms,
        ceiling_tokens_per_s_per_sequence=result.tokens_per_s_per_sequence * own / ceiling,
        expected_tokens_per_s_per_sequence=result.tokens_per_s_per_sequence * own / expected,
        ceiling_tokens_per_s_aggregate=result.tokens_per_s_aggregate * own / ceiling,
        expected_tokens_per_s_aggregate=result.tokens_per_s_aggregate * own / expected,
        ceiling_ttft_s=ttft_ceiling, expected_ttft_s=ttft_expected, ttft_terms=tuple(ttft_terms),
        scenario_ceiling_step_time_s=own)


# -- renderings ----------------------------------------------------------------------------------------------------
def to_json(e: ExpectedStep) -> dict:
    """The CLI's JSON keys for an expected step (SI units; every ``expected_*`` key is new, none replaces one)."""
    return {
        "expected_engine": e.engine,
        "expected_embedding_convention": e.embedding_convention,
        "expected_weight_format": e.parameters.weight_format,
        "expected_step_time_s": e.expected_step_time_s,
        "expected_tokens_per_s_per_sequence": e.expected_tokens_per_s_per_sequence,
        "expected_tokens_per_s_aggregate": e.expected_tokens_per_s_aggregate,
        "expected_ttft_s": e.expected_ttft_s,
        "expected_time_per_output_token_s": e.expected_tpot_s,
        "expected_cuda_graphs": bool(e.parameters.cuda_graphs.value),
        "expected_fraction_of_ceiling": e.fraction_of_ceiling,
        # The ceiling the fraction is of: the scenario's own, or at the engine's launches (ceiling_basis)
        "expected_ceiling_step_time_s": e.ceiling_step_time_s,
        "expected_terms": [_term_json(t) for t in e.terms],
        "expected_ttft_terms": [_term_json(t) for t in e.ttft_terms],
    }


def _term_json(t: Term) -> dict:
    """A term's JSON: ``gpu_seconds`` where the host's launches hold the step (:attr:`Term.gpu_seconds`),
    ``compute_seconds`` where the memory time hides a longer compute (:attr:`Term.compute_seconds`) and
    ``memory_seconds`` where the compute time hides a longer memory time (:attr:`Term.memory_seconds`), else null."""
    return {"name": t.name, "key": t.key, "seconds": t.seconds, "gpu_seconds": t.gpu_seconds,
            "compute_seconds": t.compute_seconds, "memory_seconds": t.memory_seconds, "source": t.source}


def above_ceiling(e: ExpectedStep) -> str:
    """Why ``e`` beats its ceiling, or ``""`` where it does not: the terms by which the engine does better than what
    the ceiling counts (the whole embedding table read, as article 000 counts it; the ceiling's launches, each kernel
    of the unfused count at article 000's 4 µs, where an engine fuses kernels and launches them faster from C++).
    A ceiling a prediction passes is a model's, not a bound (an engineer's trial read "121.3 % of the ceiling"
    without a word).

    >>> from core import Scenario
    >>> r = Scenario(model="qwen3-30b-a3b", gpu="b200", weight_dtype="int4").evaluate()
    >>> above_ceiling(expected_step(r, "TensorRT-LLM (v0.7)"))
    'above the ceiling: the engine does better on launches than the ceiling counts'
    """
    if e.expected_step_time_s >= e.ceiling_step_time_s:
        return ""
    gains = [TERM_SHORT[t.key] for t in e.terms if t.seconds < 0]
    return (f"above the ceiling: the engine does better on {' and '.join(gains)} than the ceiling counts" if gains
            else "")


#: Said beside "ceiling" where it counts the engine's launches, not the scenario's lever's (:func:`ceiling_basis`).
CEILING_AT = ", at the engine's launches"


def ceiling_basis(e: ExpectedStep) -> str:
    """Why the ceiling is not the scenario's own, in words, or ``""`` where it is
    (:attr:`ExpectedStep.ceiling_rebased`).

    >>> from core import Scenario
    >>> r = Scenario(model="qwen3-30b-a3b", gpu="h100-sxm", weight_dtype="int4").evaluate()
    >>> ceiling_basis(expected_step(r, "vLLM"))
    "kernels launched as vLLM launches them (CUDA graphs: one launch per step); at the scenario's CUDA-graphs \
lever (off) its ceiling is 2.128 ms per step, 470 tokens/s per sequence"
    """
    if not e.ceiling_rebased:
        return ""
    graphs = bool(e.parameters.cuda_graphs.value)
    own = e.scenario_ceiling_step_time_s
    rate = e.ceiling_tokens_per_s_per_sequence * e.ceiling_step_time_s / own
    how = "CUDA graphs: one launch per step" if graphs else "no CUDA graphs: one launch per kernel"
    who = e.engine or "the generic engine"
    return (f"kernels launched as {who} launches them ({how}); at the scenario's CUDA-graphs lever "
            f"({'off' if graphs else 'on'}) its ceiling is {fmt_seconds(own)} per step, {fmt_rate(rate)} tokens/s "
            "per sequence")


def waterfall_text(e: ExpectedStep, fits: bool = True, beyond: str = "", approximate: bool = False) -> str:
    """The waterfall in plain text: the ceiling's tokens/s down to the expected tokens/s, term by term.

    Each line gives the term's seconds, the tokens/s per sequence after it, its formula and its source.  ``fits``:
    the workload fits in memory (:attr:`ScenarioResult.fits`); where not, a last line says every figure is what it
    would deliver if it fit, as the readouts do.  ``beyond``: what the scenario has beyond the calibration set
    (:func:`core.coverage.beyond_text`), said under the expected step.  ``approximate``: the model has config keys
    the lab does not model; the ceiling and the expected lines then start with "≈" and say "(approximate)".
    """
    mark, said = ("≈ ", " (approximate)") if approximate else ("", "")
    who = e.engine or "generic engine"
    lines = [f"Expected step ({who}; {e.parameters.weight_format} weights; input embedding {e.embedding_convention})",
             f"  {mark}ceiling (the roofline{CEILING_AT if e.ceiling_rebased else ''}): "
             f"{fmt_seconds(e.ceiling_step_time_s)} per step = "
             f"{fmt_rate(e.ceiling_tokens_per_s_per_sequence)} tokens/s per sequence, "
             f"{fmt_rate(e.ceiling_tokens_per_s_aggregate)} tokens/s in all{said}"
             + (f"; with its {basis}" if (basis := ceiling_basis(e)) else "")]
    t = e.ceiling_step_time_s
    per_token = e.ceiling_tokens_per_s_per_sequence * e.ceiling_step_time_s  # tokens per sequence per step (E / PP)
    for term in e.terms:
        t += term.seconds
        if not term.shown:
            continue
        sign = "+" if term.seconds >= 0 else "−"
        lines.append(f"  {sign} {fmt_seconds(abs(term.seconds))}  {term.name}: {term.formula} → "
                     f"{fmt_rate(per_token / t)} tokens/s per sequence")
        if term.source:
            lines.append(f"        source: {term.source}")
    lines.append(f"  {mark}= expected: {fmt_seconds(e.expected_step_time_s)} per step = "
                 f"{fmt_rate(e.expected_tokens_per_s_per_sequence)} tokens/s per sequence, "
                 f"{fmt_rate(e.expected_tokens_per_s_aggregate)} tokens/s in all "
                 f"({e.shares[0][0]} % of the ceiling){said}"
                 + (f"; {above}" if (above := above_ceiling(e)) else ""))
    if e.expected_tpot_s is not None:  # what judges speculation (an engineer's trial had to divide it out)
        lines.append(f"  {mark}time per output token: ceiling {fmt_seconds(e.ceiling_tpot_s)}, expected "
                     f"{fmt_seconds(e.expected_tpot_s)}{said}")
    if e.expected_ttft_s is not None:
        lines.append(f"  {mark}time to first token: ceiling {fmt_seconds(e.ceiling_ttft_s)}, expected "
                     f"{fmt_seconds(e.expected_ttft_s)}{said}")
    if not fits:
        lines.append("  it does not fit in memory (Step 5): every figure above is what it would deliver if it fit")
    if beyond:
        lines.append(f"  {beyond}")
    return "\n".join(lines)


# -- the command line's additions (kept here so core/cli.py only calls them) ---------------------------------------
def expected_for_scenario(scenario, engine: str | None = None, result=None, **options) -> ExpectedStep:
    """:func:`expected_step` of a :class:`~core.scenario.Scenario`, with the prefill of one prompt for TTFT.

    Args:
        scenario: the scenario (its levers and catalogue).
        engine, **options: as :func:`expected_step`.
        result: ``scenario.evaluate()`` where the caller holds it already (None: evaluated here).
    """
    result = scenario.evaluate() if result is None else result
    ttft = scenario.clone(phase="prefill", batch=1).evaluate()
    return expected_step(result, engine, ttft_result=ttft, **options)


def add_cli_arguments(parser) -> None:
    """``--engine`` and ``--embedding`` on the ``explain`` subcommand's parser."""
    # Any case, as the link's engine= (a trial's ``--engine vllm`` was refused), and "generic", the lab's name for
    # the default.
    names = ("generic", *engine_names())
    by_lower = {name.lower(): name for name in names}
    parser.add_argument("--engine", choices=names, metavar="NAME", type=lambda s: by_lower.get(s.lower(), s),
                        help="engine preset for the expected step: " + ", ".join(names)
                             + " (default: generic)")
    parser.add_argument("--embedding", choices=EMBEDDING_CONVENTIONS, default="gathered",
                        help="input-embedding convention of the expected step: gathered (B·k rows a decode step "
                             "looks up, default) or article (the whole table every step, as the ceiling counts it)")


def from_cli(scenario, args, result=None) -> ExpectedStep:
    """The expected step the ``explain`` flags ask for (``result``: the scenario's, where the caller holds it)."""
    engine = getattr(args, "engine", None)
    return expected_for_scenario(scenario, None if engine == "generic" else engine, result=result,
                                 embedding=getattr(args, "embedding", "gathered"))


# -- the lab's readouts (kept here so the app only renders them) ---------------------------------------------------
def engine_label(engine: str | None) -> str:
    """The preset's name as a readout says it: ``"generic engine"`` for None, else ``"<name> preset"``."""
    return "generic engine" if engine is None else f"{engine} preset"


def expected_quantities(e: ExpectedStep, approximate: bool = False, fits: bool = True,
                        beyond: tuple[str, ...] = ()) -> tuple:
    """The expected tokens/s per sequence and for all GPUs as :class:`core.explain.Quantity` records, beside the
    ceiling's, each labelled as a prediction for its engine preset; their work is the sum of the terms.

    ``approximate``: the model has config keys the lab does not model (:attr:`core.models.ModelSpec.approximate`);
    the values then say "(approximate)".  ``fits``: the workload fits in memory (:attr:`ScenarioResult.fits`);
    where it does not, the values say "(if it fit)" as the ceiling's do and the work says why no engine runs it.
    ``beyond``: what the scenario has that the calibration set had not (:func:`core.coverage.beyond_calibration`);
    the values then say "(extrapolated)" and the work names it.  Keys: ``expected-tokens``,
    ``expected-tokens-aggregate``.
    """
    from .explain import Quantity  # the derivation's record type (core.explain does not import this module)

    who = engine_label(e.engine)
    # Whether the launches are captured: the generic engine follows the CUDA-graphs lever, off by default, and INT4
    # at B = 1 pays most for it (an engineer's trial compared INT4's 264 with batch 4's 442, not knowing the 357 the
    # lever gives; only the Expected tab's sources said it).
    graphs = "with CUDA graphs" if e.parameters.cuda_graphs.value else "without CUDA graphs"
    caveats = [c for c, on in (("approximate", approximate), ("if it fit", not fits), ("extrapolated", beyond),
                               (above_ceiling(e), True)) if on and c]
    tail = f" ({'; '.join(caveats)})" if caveats else ""
    unfit = "" if fits else "; it does not fit in memory (Step 5), so no engine runs it as set"
    if beyond:  # the constants were fitted without these: a prediction made outside what was measured
        unfit += f"; extrapolated, the calibration set had none of: {'; '.join(beyond)}"
    shown = [t for t in e.terms if t.seconds != 0]  # the sum: a term the launches hide adds nothing to it
    terms = " ".join(f"{'+' if t.seconds > 0 else '−'} {fmt_seconds(abs(t.seconds))} ({TERM_SHORT[t.key]})"
                     for t in shown)
    step = (f"expected step = ceiling {fmt_seconds(e.ceiling_step_time_s)} {terms} = "
            f"{fmt_seconds(e.expected_step_time_s)}")
    # The ceiling counts the engine's launches where they are not the lever's (ceiling_basis): named so, in the value
    # beside the readouts' own ceiling, and its work says the scenario's.
    ceiling = f"ceiling {graphs}" if e.ceiling_rebased else "ceiling"
    if e.ceiling_rebased:
        unfit += f"; the ceiling has its {ceiling_basis(e)}"

    def one(key: str, label: str, value: float, share: tuple[str, str]) -> Quantity:
        # One ceiling, printed once, in the value and its work, with the digits that make both of its products print
        # as the value (ExpectedStep.shares): "ceiling 196 tokens/s … 65.6 % of the ceiling's 195.5" and "ceiling
        # 61.3 tokens/s" over "61 tokens/s × …" each gave it two ways (two trials).
        pct, shown = share
        rate = fmt_rate(value)
        return Quantity(
            key, f"{label} (a prediction, {who})",
            "expected = ceiling tokens/s × ceiling step / expected step; expected step = ceiling step + Σ terms "
            "(Expected tab)",
            f"{step}; {shown} tokens/s × {fmt_seconds(e.ceiling_step_time_s)} / "
            f"{fmt_seconds(e.expected_step_time_s)} = {rate} tokens/s ({pct} % of the ceiling){unfit}",
            f"{ceiling} {'≈ ' if approximate else ''}{shown} tokens/s; expected ≈ {rate} "
            f"tokens/s ({pct} % of the ceiling), {who} {graphs}{tail}")

    shares = e.shares
    return (one("expected-tokens", "Expected tokens/s per sequence", e.expected_tokens_per_s_per_sequence, shares[0]),
            one("expected-tokens-aggregate", "Expected tokens/s, all GPUs", e.expected_tokens_per_s_aggregate,
                shares[1]))
