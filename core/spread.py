"""The expected step's spread per regime: how far published measurements land from it, honestly scored.

The spread is the 10th to 90th percentile of **measured speed ÷ expected speed** over the calibration set's
leave-one-out scores (:func:`core.published.leave_one_out`: each calibration measurement scored by a fit on the
other 56, as ``python -m core validate`` prints them), per regime of the step (:data:`REGIMES`), or over all of
them where a regime has fewer than :data:`MIN_POINTS`.  A speed ratio is ``measured / expected`` for a rate and
``expected / measured`` for a time (latency, time to first token), so below 1 always means slower than expected.

The numbers live in ``core/expected_spread.json`` (with each measurement's ratio, so the percentiles can be
recomputed from the file, and what they were computed on); :func:`write_spread` recomputes them (a minute here: 57
refits).  Percentiles: numpy's default (linear interpolation between order statistics).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

SPREAD_PATH = Path(__file__).with_name("expected_spread.json")
#: Fewest leave-one-out scores a regime needs for a spread of its own; with fewer, the overall spread applies.
MIN_POINTS = 8
#: Percentiles of measured ÷ expected speed the whisker spans, and the middle one.
PERCENTILES = (10, 50, 90)
#: The regimes, by key: what each covers.  A decode step (or a static-batch generation, timed mostly in decode)
#: is classed by its batch and its weights' class; a prefill (time to first token) is its own regime.
REGIMES = {
    "prefill": "prefill (time to first token)",
    "small-batch-16bit": "decode at B ≤ 8 with 16-bit weights",
    "small-batch-quantised": "decode at B ≤ 8 with quantised weights (8-bit, FP8, 4-bit)",
    "large-batch": "decode at B > 8",
}
#: The batch above which a decode step is "large-batch".
SMALL_BATCH = 8


def regime(phase: str, batch: int, format_class: str) -> str:
    """The :data:`REGIMES` key of a step: ``phase`` "decode" or "prefill", batch B, the weights' format class
    ("16-bit", "8-bit", "fp8", "4-bit": ``core/efficiency.json`` ``formats``)."""
    if phase == "prefill":
        return "prefill"
    if batch > SMALL_BATCH:
        return "large-batch"
    return "small-batch-16bit" if format_class == "16-bit" else "small-batch-quantised"


def measurement_regime(m) -> str:
    """The regime of a :class:`core.published.Measurement` (a TTFT is a prefill; decode and generate, decode)."""
    from .published import format_class

    return regime("prefill" if m.timing == "ttft" else "decode", m.batch, format_class(m))


def speed_ratio(m, expected_value: float) -> float:
    """Measured speed ÷ expected speed of measurement ``m`` whose expected metric is ``expected_value``."""
    return expected_value / m.measured if m.is_time else m.measured / expected_value


def _summary(values: list[float]) -> dict:
    p10, p50, p90 = (float(f"{v:.6g}") for v in np.percentile(np.array(values, float), PERCENTILES))
    return {"n": len(values), "p10": p10, "p50": p50, "p90": p90}


def spread_table(points: dict[str, tuple[str, float]]) -> dict:
    """Per regime and overall: n and the 10th, 50th and 90th percentiles of the ratios.

    Args:
        points: measurement id -> (regime key, measured ÷ expected speed).
    """
    table = {"overall": _summary([r for _, r in points.values()])}
    for key in REGIMES:
        values = [r for k, r in points.values() if k == key]
        table[key] = _summary(values) if values else {"n": 0}
    return table


def compute_spread() -> dict:
    """The ``expected_spread.json`` content, from the calibration set's leave-one-out scores (57 refits)."""
    from .published import calibration_set, leave_one_out

    rows = leave_one_out(calibration_set())
    points = {r.measurement.id: (measurement_regime(r.measurement),
                                 float(f"{speed_ratio(r.measurement, r.expected):.6g}")) for r in rows}
    return {
        "_about": ("The expected step's spread per regime (core/spread.py): percentiles of measured speed ÷ expected "
                   "speed over the leave-one-out scores of core/measurements.json's calibration set (each scored by "
                   "a fit on the others, core.published.leave_one_out, as python -m core validate prints them). "
                   "A regime with fewer than min_points scores uses the overall spread. Rewritten by "
                   "core.spread.write_spread(); a test recomputes the table from 'points' and refits a few of them."),
        "fitted_on": f"core/measurements.json calibration set ({len(rows)} measurements), leave-one-out",
        "ratio": "measured speed / expected speed (a time's ratio inverted: below 1 is slower than expected)",
        "percentiles": list(PERCENTILES),
        "min_points": MIN_POINTS,
        "regimes": {k: {"covers": v, **s} for k, s in spread_table(points).items()
                    for v in [REGIMES.get(k, "every regime")]},
        "points": {i: {"regime": k, "ratio": r} for i, (k, r) in points.items()},
    }


def write_spread(path: Path = SPREAD_PATH) -> dict:
    """Recompute the spread and store it in ``core/expected_spread.json`` (returns what was written)."""
    data = compute_spread()
    Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    load_spread.cache_clear()
    return data


@cache
def load_spread(path: Path = SPREAD_PATH) -> dict:
    """``core/expected_spread.json`` as shipped."""
    return json.loads(Path(path).read_text())


@dataclass(frozen=True)
class Spread:
    """Where measurements land around the expected speed in one regime.

    Attributes:
        regime: the step's regime (:data:`REGIMES` key); covers: it in words.
        used: the regime whose numbers apply: ``regime``, or "overall" when it has too few scores.
        n: leave-one-out scores the numbers come from.
        low, median, high: the 10th, 50th and 90th percentiles of measured ÷ expected speed.
        source: what they were computed on.
    """

    regime: str
    covers: str
    used: str
    n: int
    low: float
    median: float
    high: float
    source: str


def spread_for(phase: str, batch: int, format_class: str) -> Spread:
    """The spread that applies to a step (see :func:`regime`)."""
    data = load_spread()
    key = regime(phase, batch, format_class)
    own = data["regimes"][key]
    used = key if own.get("n", 0) >= data["min_points"] else "overall"
    s = data["regimes"][used]
    why = "" if used == key else f"; this regime has {own.get('n', 0)}, fewer than {data['min_points']}: all regimes'"
    return Spread(key, REGIMES[key], used, s["n"], s["p10"], s["p50"], s["p90"],
                  f"{s['n']} of the {len(data['points'])} leave-one-out scores of core/measurements.json's "
                  f"calibration set{why} (core/expected_spread.json)")


@dataclass(frozen=True)
class ExpectedPoint:
    """The expected step on the roofline: where a real engine's decode (or prefill) is predicted to land.

    Attributes (SI):
        intensity: the step's arithmetic intensity counting KV reads, FLOP/byte (where measured points sit).
        flop_per_s: attainable FLOP/s expected, ``FLOP per step / expected step time`` (per GPU).
        low, high: the spread's 10th and 90th percentiles of measured speed applied to it, FLOP/s.
        spread: the :class:`Spread` used.
    """

    intensity: float
    flop_per_s: float
    low: float
    high: float
    spread: Spread


def expected_point(result, e) -> ExpectedPoint:
    """The expected point of ``result`` (a :class:`~core.scenario.ScenarioResult`) under its expected step ``e``
    (:class:`~core.expected.ExpectedStep`): same FLOP per step, the expected step's time."""
    flops = result.flop_per_step / e.expected_step_time_s
    s = spread_for(result.phase, result.batch, e.parameters.format_class)
    return ExpectedPoint(result.arithmetic_intensity_with_kv, flops, flops * s.low, flops * s.high, s)
