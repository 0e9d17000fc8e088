"""Pinned scenarios and their comparison.

A :class:`Pin` keeps a scenario (a label and every lever) while the controls move
on.  :func:`compare` evaluates pins side by side and says what still differs
between pins that land on the same intensity — "batch 4 vs INT4 vs 4-token
speculation" coincide at I = 4 (article 004, section 03) but are not the same
thing: KV memory grows with B only, INT4 changes the weights (and quality) but
not the cache, and speculation pays only with acceptance.
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalogue import Catalogue
from .precision import get_precision
from .scenario import ScenarioResult, evaluate
from .units import GiB

__all__ = ["MAX_PINS", "Pin", "PinRow", "compare", "evaluate_pin", "lever_preset"]

#: Pins a session keeps at once.
MAX_PINS = 8


@dataclass(frozen=True)
class Pin:
    """A pinned scenario: a label and every lever (Scenario parameter names, SI values)."""

    name: str
    levers: dict


@dataclass(frozen=True)
class PinRow:
    """One pin, evaluated: its result and what distinguishes it from pins at the same intensity."""

    pin: Pin
    result: ScenarioResult
    notes: tuple[str, ...]


def evaluate_pin(pin: Pin, catalogue: Catalogue | None = None) -> ScenarioResult:
    """The :class:`ScenarioResult` of a pin's levers, its ids looked up in ``catalogue``.

    Raises:
        ValueError: a model or GPU the catalogue does not hold.
    """
    catalogue = catalogue or Catalogue()
    levers = dict(pin.levers)
    return evaluate(gpu=catalogue.gpu(levers.pop("gpu")), model=catalogue.model(levers.pop("model")), **levers)


def compare(pins: list[Pin], catalogue: Catalogue | None = None) -> list[PinRow]:
    """Evaluate ``pins`` and note, for pins sharing an intensity, what still differs.

    ``catalogue`` resolves ids (a session's own models and GPUs as well as the
    shipped ones: :attr:`core.Scenario.catalogue`).
    """
    results = [evaluate_pin(p, catalogue) for p in pins]
    rows = []
    for i, (pin, r) in enumerate(zip(pins, results, strict=True)):
        twins = [o for j, o in enumerate(results) if j != i and _same_point(o, r)]
        rows.append(PinRow(pin, r, tuple(_differences(r, twins)) if twins else ()))
    return rows


def _same_point(a: ScenarioResult, b: ScenarioResult) -> bool:
    return abs(a.arithmetic_intensity_weights - b.arithmetic_intensity_weights) <= 1e-9 * b.arithmetic_intensity_weights


def _differences(r: ScenarioResult, twins: list[ScenarioResult]) -> list[str]:
    """The levers on which ``r`` differs from every other pin at its intensity, and what that means."""
    notes = []
    if all(t.batch != r.batch for t in twins):
        notes.append(f"B = {r.batch}: KV memory grows with B only — {r.kv_bytes / GiB:,.2f} GiB of cache for "
                     f"{r.batch} sequence{'s' if r.batch > 1 else ''}")
    if all(t.weight_dtype != r.weight_dtype for t in twins):
        notes.append(f"{r.weight_format} weights: {r.weight_bytes_held / GiB:,.1f} GiB held — "
                     "p changes the weights (and quality), not the KV cache")
    if all(t.spec_k != r.spec_k for t in twins) and r.spec_k > 1:
        notes.append(f"k = {r.spec_k}: pays only with acceptance — at α = {r.acceptance:.2f} a verify step yields "
                     f"{r.expected_tokens_per_step:.2f} tokens, {r.tokens_per_s_with_kv:,.0f} tokens/s")
    if all(t.kv_dtype != r.kv_dtype for t in twins):
        notes.append(f"KV cache in {get_precision(r.kv_dtype).label}: {r.kv_bytes / GiB:,.2f} GiB")
    if all(t.tp != r.tp for t in twins):
        notes.append(f"TP = {r.tp}: same intensity (TP divides FLOPs and weight bytes alike) — "
                     f"{r.weight_bytes_held / GiB:,.1f} GiB of weights per GPU, {r.tpot_s * 1e3:.2f} ms per token, "
                     f"{r.communication_time_s * 1e3:.2f} ms of it communication")
    if all(t.gpu.id != r.gpu.id for t in twins):
        notes.append(f"{r.gpu.name}: ridge {r.ridge_point:,.0f}, {100 * r.peak_fraction_weights:.3g} % of its peak")
    return notes


def lever_preset(levers: dict) -> list[Pin]:
    """Article 004's three levers from ``levers`` at B = 1, k = 1, BF16: batch 4, INT4, k = 4."""
    base = {**levers, "batch": 1, "spec_k": 1, "weight_dtype": "bf16", "phase": "decode"}
    return [
        Pin("batch 4", {**base, "batch": 4}),
        Pin("INT4 weights", {**base, "weight_dtype": "int4"}),
        Pin("4-token speculation", {**base, "spec_k": 4}),
    ]
