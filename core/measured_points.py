"""Your measurements against the roof: MBU, MFU and the gap for measured decode points.

A measured point is plain decode (k = 1) of the scenario's model on its GPU at
a batch B and context S, with a measured throughput in tokens/s.  One step
yields B tokens, so steps/s = tokens/s ÷ B, and

* achieved bandwidth = bytes per step × steps/s; **MBU** = that / peak bandwidth;
* achieved FLOP/s = FLOPs per step × steps/s; **MFU** = that / peak FLOP/s;
* the gap = the roofline ceiling (tokens/s, counting KV reads) ÷ measured.

(Model bandwidth and FLOP utilisation as in Chowdhery et al. 2022, PaLM, and the
serving literature that followed.)  On the roofline a point sits at its
intensity counting KV reads, at its achieved FLOP/s.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

import numpy as np

from .scenario import LEVERS, Scenario, ScenarioResult
from .step import step
from .units import parse_number

MAX_ROWS = 1000
#: Longest measurements text read, characters (the file dropper's 2 MB; a thousand rows take ~30 kB).
MAX_CSV_CHARS = 2_000_000
#: A measured bandwidth this far over the datasheet's is still read as on the roof (datasheet
#: bandwidths are rounded, and a streaming copy can beat them slightly); beyond it a point
#: is "above the roof": measured on another model, GPU or precision.
BANDWIDTH_SLACK = 0.05
#: Why a measured point lies above the roof, in words (the Bring your own tab and the readouts say it).
ABOVE_ROOF_CAUSE = "measured on another model, GPU or precision?"
#: Highest plausible measured decode throughput of one GPU, tokens/s (the fastest parts serve ~1e5).
MAX_TOKENS_PER_S = 1e9
#: Lowest plausible one, tokens/s: a token every 1,000 s, slower than a 405B model streamed from disk on a CPU
#: (~0.01–0.1 tokens/s).  Below it the gap to the roof and the point's FLOP/s leave float range (5e-324 gave a
#: gap of "inf×" and a point at y = 0 on the log axis).
MIN_TOKENS_PER_S = 1e-3
COLUMNS = {"batch": ("batch", "b", "batch_size"), "context": ("context", "s", "context_tokens", "seq_len"),
           "tokens_per_s": ("tokens_per_s", "tokens/s", "tok/s", "tok_s", "throughput")}


#: The throughputs a measurement may give, in words.
THROUGHPUT_RANGE = f"a number from {MIN_TOKENS_PER_S:g} to {MAX_TOKENS_PER_S:g}"


@dataclass(frozen=True)
class Measurement:
    """One measured decode point: batch B, context S (tokens), throughput (tokens/s)."""

    batch: int
    context: int
    tokens_per_s: float

    def __post_init__(self):
        """Refuse values outside the plausible ranges: batch and context as the Scenario's levers bound them,
        tokens/s from :data:`MIN_TOKENS_PER_S` to :data:`MAX_TOKENS_PER_S`.

        Raises:
            ValueError: ``field=value is not …``, naming the range.
        """
        for name, value in (("batch", self.batch), ("context", self.context)):
            lo, hi = LEVERS[name].parameter.bounds
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ValueError(f"{name}={value!r} is not {LEVERS[name].accepted()}")
        t = self.tokens_per_s
        if isinstance(t, bool) or not isinstance(t, int | float) or not MIN_TOKENS_PER_S <= t <= MAX_TOKENS_PER_S:
            raise ValueError(f"tokens/s={t!r} is not {THROUGHPUT_RANGE}")


@dataclass(frozen=True)
class MeasuredPoint:
    """A measurement set against the roof (SI units)."""

    measurement: Measurement
    intensity: float
    achieved_flop_per_s: float
    achieved_bandwidth: float
    mbu: float
    mfu: float
    ceiling_tokens_per_s: float
    gap: float
    above_roof: bool  #: achieved bandwidth or FLOP/s beyond the GPU's roof (see BANDWIDTH_SLACK)
    fits: bool = True  #: the batch's weights and KV cache fit the split's memory (else the ceiling is "if it fit")


def parse_measurements(text: str) -> tuple[list[Measurement], list[str]]:
    """Measurements from CSV text with a header naming batch, context and tokens/s columns.

    Returns:
        ``(measurements, problems)``: every valid row, and one line per refused
        row or missing column saying what and why (nothing raised); text over
        :data:`MAX_CSV_CHARS` is not read, and says so.
    """
    if len(text) > MAX_CSV_CHARS:
        return [], [f"the CSV is over {MAX_CSV_CHARS / 1e6:g} MB, the limit; its rows are not read"]
    # A byte-order mark (Excel's "CSV UTF-8" writes one) is not part of the first column's name.
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff").strip(), newline=""))
    try:
        header = {(h or "").strip().lower(): h for h in (reader.fieldnames or [])}
    except csv.Error as exc:
        return [], [f"not CSV: {exc}"]
    found = {key: next((header[a] for a in aliases if a in header), None) for key, aliases in COLUMNS.items()}
    missing = [key for key, col in found.items() if col is None]
    if missing:
        return [], [f"the header must name {', '.join(missing)} (got: {', '.join(header) or 'nothing'})"]
    rows, problems = [], []
    for line, rec in _rows(reader, problems):
        if len(rows) >= MAX_ROWS:
            problems.append(f"only the first {MAX_ROWS} rows are read")
            break
        if None in rec:  # csv.DictReader's key for values past the header's last column
            problems.append(f"row {line}: {len(rec) - 1 + len(rec[None])} fields, but the header names "
                            f"{len(header)}; the row is not read")
            continue
        try:
            # Batch and context are the Scenario's own levers: the same validation and bounds.
            b = LEVERS["batch"].decode(rec[found["batch"]] or "")
            s = LEVERS["context"].decode(rec[found["context"]] or "")
            text = str(rec[found["tokens_per_s"]] or "")
            t = _number(text)
            if not (MIN_TOKENS_PER_S <= t <= MAX_TOKENS_PER_S):
                raise ValueError(f"tokens/s={text[:20]!r} is not {THROUGHPUT_RANGE}")
        except ValueError as exc:
            reason = str(exc) or "not a number"
            problems.append(f"row {line}: {reason}")
            continue
        rows.append(Measurement(int(b), int(s), t))
    return rows, problems


def _rows(reader: csv.DictReader, problems: list[str]):
    """``(line, record)`` pairs; a malformed row ends the reading, said in ``problems`` (earlier rows stand)."""
    line = 1
    try:
        for line, rec in enumerate(reader, start=2):  # noqa: B007 - the last line is reported below
            yield line, rec
    except csv.Error as exc:
        problems.append(f"row {line + 1}: not CSV ({exc}); the rows after it are not read")


def _number(text: str) -> float:
    """``text`` as a float (ASCII digits: :func:`core.units.parse_number`), NaN when it is not one (or is
    implausibly long)."""
    try:
        return parse_number(text) if len(text) <= 64 else math.nan
    except ValueError:
        return math.nan


def analyse(scenario: Scenario, measurements: list[Measurement]) -> list[MeasuredPoint]:
    """Each measurement against the roof of ``scenario``'s model, GPU and precisions (plain decode, k = 1).

    One step (:func:`core.step.step`) over every row's B and S on the scenario's profile, not one evaluation per
    row: 1,000 pasted rows took ~1.4 s of the shared event loop on every lever move (an attacker's trial held other
    students' moves 1.15-1.5 s); the same numbers, exactly (tests/unit/test_measure.py).
    """
    if not measurements:
        return []
    r: ScenarioResult = scenario.clone(phase="decode", spec_k=1).evaluate()
    batch = np.array([m.batch for m in measurements], dtype=float)
    context = np.array([m.context for m in measurements], dtype=float)
    st = step(r.deployment.profile, batch, tokens=1, context=context, gained=r.expected_tokens_per_step,
              p_kv=r.kv_bytes_per_element, gqa=r.gqa)
    points = []
    for i, m in enumerate(measurements):
        steps = m.tokens_per_s / m.batch
        flops, bandwidth = float(st.flop[i]) * steps, float(st.bytes_moved[i]) * steps
        ceiling = float(st.tokens_per_s_with_kv[i])
        points.append(MeasuredPoint(
            measurement=m, intensity=float(st.arithmetic_intensity_with_kv[i]), achieved_flop_per_s=flops,
            achieved_bandwidth=bandwidth, mbu=bandwidth / r.bandwidth, mfu=flops / r.peak_flop_per_s,
            ceiling_tokens_per_s=ceiling, gap=ceiling / m.tokens_per_s,
            above_roof=bandwidth > (1 + BANDWIDTH_SLACK) * r.bandwidth or flops > r.peak_flop_per_s,
            fits=bool(st.fits[i]),
        ))
    return points
