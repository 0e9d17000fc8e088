"""What the expected step's calibration set covers, and what a scenario has beyond it.

The expected step's fitted constants (``core/efficiency.json``) and its spread (``core/expected_spread.json``) come
from the calibration set of ``core/measurements.json``: dense Llama models and one small MoE, on eight GPUs, at
TP ≤ 8 with no expert or pipeline parallelism, at short contexts.  A scenario with something none of those
measurements had (MLA, 256 routed experts, EP = 8, a GPU no one measured, S = 131,072) is read with constants
fitted without it: :func:`beyond_calibration` names each such thing, so the Expected tab, the command line and
their JSON say so where the prediction and its range are printed.

Every bound here is computed from the calibration set as shipped (``python -m core validate`` lists it): a
measurement added to the set moves it.

Example:
    >>> from core import Scenario
    >>> beyond_calibration(Scenario(model="llama-2-7b", gpu="a100-80gb", context=1024).evaluate())
    ()
    >>> beyond_calibration(Scenario(model="deepseek-v3", tp=8, context=1024).evaluate())
    ('multi-head latent attention (MLA)', 'shared experts', "256 routed experts (the set's MoE models have at most 8)")
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .expected import load_efficiency
from .hardware import get_accelerator
from .model_catalogue import get_model
from .models import ModelSpec
from .published import calibration_set, format_class
from .units import fmt_count

__all__ = ["Coverage", "beyond_calibration", "beyond_engine", "beyond_text", "calibration_coverage", "engine_coverage"]

#: Architectural features a model may have, by name: what the calibration set is checked for.
FEATURES = {
    "multi-head latent attention (MLA)": lambda m: m.mla is not None,
    "sliding-window or chunked attention layers": lambda m: any(w is not None for w in m.layer_windows),
    "recurrent-state layers (Mamba or linear attention)": lambda m: m.state_bytes_per_sequence() > 0,
    "a sparse-attention indexer": lambda m: m.indexer is not None,
    "cross-attention to image tokens": lambda m: bool(m.cross_attention_tokens),
    "shared experts": lambda m: bool(m.moe and m.moe.n_shared_experts),
}


@dataclass(frozen=True)
class Coverage:
    """The calibration set's reach (each the largest value a calibration measurement has, or the set's members).

    Attributes:
        features: the :data:`FEATURES` some calibration model has.
        max_experts: the most routed experts of a calibration MoE model (0: none is MoE).
        max_layers: the most layers of a calibration model (the launch term counts kernels per layer).
        max_tp, max_ep, max_pp: the largest splits measured.
        max_batch: the largest batch B, sequences.
        max_batch_by_class: the largest batch B measured in each weight format's class (``16-bit``, ``fp8``,
            ``8-bit``, ``4-bit``: each non-16-bit class has its own fitted dequantisation factor per engine), sequences.
        max_context: the longest decode context S, tokens (prompt + half the output, as the lab reads a generation).
        max_prompt: the longest prompt, tokens (what a prefill reads).
        max_spec_k: the most tokens a measured decode step verified (1: none speculated).
        gpus: the GPU ids measured.
        n: measurements in the set.
    """

    features: frozenset[str]
    max_experts: int
    max_layers: int
    max_tp: int
    max_ep: int
    max_pp: int
    max_batch: int
    max_context: int
    max_prompt: int
    gpus: frozenset[str]
    n: int
    max_spec_k: int = 1
    max_batch_by_class: tuple[tuple[str, int], ...] = ()


@cache
def calibration_coverage() -> Coverage:
    """The :class:`Coverage` of ``core/measurements.json``'s calibration set (the set has no EP, PP or speculation
    field: its measurements ran without them, 1 each)."""
    ms = calibration_set()
    models = {m.model: get_model(m.model) for m in ms}
    return Coverage(
        features=frozenset(name for name, has in FEATURES.items() if any(has(spec) for spec in models.values())),
        max_experts=max((spec.moe.n_experts for spec in models.values() if spec.moe), default=0),
        max_layers=max(spec.n_layers for spec in models.values()),
        max_tp=max(m.tp for m in ms), max_ep=1, max_pp=1,
        max_batch=max(m.batch for m in ms),
        max_context=max(m.decode_context for m in ms), max_prompt=max(m.prompt_len for m in ms),
        gpus=frozenset(m.gpu for m in ms), n=len(ms),
        max_batch_by_class=tuple(sorted({cls: max(m.batch for m in ms if format_class(m) == cls)
                                         for cls in {format_class(m) for m in ms}}.items())))


def weight_class(weight_dtype: str) -> str | None:
    """The class of the weight-precision lever ``weight_dtype`` (``core/efficiency.json``: ``int4`` is ``4-bit``), or
    None for a lever with none (a pasted model's weights as stored)."""
    fmt = load_efficiency()["formats"].get(weight_dtype)
    return fmt.get("class") if isinstance(fmt, dict) else None


@cache
def engine_coverage(engine: str) -> tuple[int, frozenset[str], tuple[int, int], tuple[int, int]]:
    """``(measurements, GPU ids, (least, most TP), (least, most decode B))`` of ``engine``'s own calibration
    measurements, on which its per-engine constants were fitted (``(0, …)`` for an engine with none)."""
    ms = [m for m in calibration_set() if m.preset == engine]
    if not ms:
        return 0, frozenset(), (0, 0), (0, 0)
    tps, batches = [m.tp for m in ms], [m.batch for m in ms]
    return len(ms), frozenset(m.gpu for m in ms), (min(tps), max(tps)), (min(batches), max(batches))


def _span(low: int, high: int) -> str:
    return fmt_count(low) if low == high else f"{fmt_count(low)}–{fmt_count(high)}"


def beyond_engine(result, engine: str | None) -> str:
    """Where ``result`` lies outside ``engine``'s own calibration measurements (its GPU, TP or decode B), in words,
    or ``""``: the preset's per-engine constants were fitted there (an engineer's trial: vLLM's three, on A100s at
    TP = 4 and MI300Xs at TP = 8, read for an H100 at TP = 1 without a word).  None (the generic engine) has none.

    >>> from core import Scenario
    >>> beyond_engine(Scenario(model="llama-3-8b", gpu="h100-sxm").evaluate(), "vLLM")
    "vLLM's own constants were fitted on 3 measurements (A100 SXM4 80GB, MI300X; TP 4–8; B 1–64): not on this GPU, not \
at TP = 1"
    """
    if engine is None:
        return ""
    n, gpus, (tp_lo, tp_hi), (b_lo, b_hi) = engine_coverage(engine)
    if not n:
        return ""
    outside = []
    if result.gpu.id not in gpus:
        outside.append("not on this GPU")
    if not tp_lo <= result.tp <= tp_hi:
        outside.append(f"not at TP = {result.tp}")
    if result.phase == "decode" and not b_lo <= result.batch <= b_hi:
        outside.append(f"not at B = {fmt_count(result.batch)}")
    if not outside:
        return ""
    names = ", ".join(sorted(get_accelerator(g).short_name for g in gpus))
    return (f"{engine}'s own constants were fitted on {n} measurement{'s' if n > 1 else ''} ({names}; TP "
            f"{_span(tp_lo, tp_hi)}; B {_span(b_lo, b_hi)}): {', '.join(outside)}")


def beyond_calibration(result, engine: str | None = None) -> tuple[str, ...]:
    """What ``result`` (a :class:`~core.scenario.ScenarioResult`) has that no calibration measurement had, in words,
    or ``()``: its model's features, its routed experts, its split, its GPU, its batch (overall and in its weights'
    class) and its context; with ``engine``, also where it lies outside that engine's own measurements
    (:func:`beyond_engine`)."""
    c = calibration_coverage()
    m: ModelSpec = result.model
    out = [name for name, has in FEATURES.items() if name not in c.features and has(m)]
    if m.moe and m.moe.n_experts > c.max_experts:
        out.append(f"{m.moe.n_experts:,} routed experts (the set's MoE models have at most {c.max_experts})")
    if m.n_layers > c.max_layers:  # the launches and the per-layer terms were fitted on at most this deep a stack
        out.append(f"{m.n_layers:,} layers (the set's deepest model has {c.max_layers})")
    for symbol, value, most in (("TP", result.tp, c.max_tp), ("EP", result.ep, c.max_ep), ("PP", result.pp, c.max_pp)):
        if value > most:
            out.append(f"{symbol} = {value} (the set's largest is {most})")
    if result.gpu.id not in c.gpus:
        out.append(f"{result.gpu.name} (no measurement in the set ran on it)")
    if result.phase == "decode" and result.batch > c.max_batch:
        out.append(f"B = {fmt_count(result.batch)} (the set's largest is {fmt_count(c.max_batch)})")
    elif result.phase == "decode" and (cls := weight_class(result.weight_dtype)) is not None:
        # Within the set's batches, but past its batches in this class: the class's dequantisation factor was fitted
        # only there (every 4-bit measurement is at B = 1, and a W4A16 GEMM at B = 256 is not a B = 1 matvec).
        most = dict(c.max_batch_by_class).get(cls)
        if most is None:
            out.append(f"{cls} weights (no measurement in the set has them)")
        elif result.batch > most:
            measured = "all at B = 1" if most == 1 else f"at B ≤ {fmt_count(most)}"
            out.append(f"B = {fmt_count(result.batch)} with {cls} weights (the set's {cls} measurements are "
                       f"{measured})")
    if result.phase == "decode" and result.context > c.max_context:
        out.append(f"S = {fmt_count(result.context)} tokens (the set's longest decode context is "
                   f"{fmt_count(c.max_context)})")
    if result.phase == "decode" and result.spec_k > c.max_spec_k:
        out.append(f"k = {result.spec_k} tokens a verify step (the set's measurements decode one token a step, without "
                   "speculation; the draft model's own steps are not counted)")
    if result.phase == "prefill" and result.tokens_per_read > c.max_prompt:
        out.append(f"a prompt of {fmt_count(result.tokens_per_read)} tokens (the set's longest is "
                   f"{fmt_count(c.max_prompt)})")
    if own := beyond_engine(result, engine):
        out.append(own)
    return tuple(out)


def beyond_text(beyond: tuple[str, ...]) -> str:
    """:func:`beyond_calibration`'s list as one sentence (``""`` for none), for the places a prediction is printed."""
    if not beyond:
        return ""
    return (f"Not in the {calibration_coverage().n} calibration measurements the expected step's constants and "
            f"range were fitted on: {'; '.join(beyond)}. Read the prediction as an extrapolation.")
