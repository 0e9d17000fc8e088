"""Data out: the scenario, its batch ladder and the pins as JSON and CSV.

SI units throughout; every CSV column header names its unit
(``attainable_flop_per_s``, ``kv_cache_bytes``), so a spreadsheet never has to
guess whether a figure was GB or GiB.
"""

from __future__ import annotations

import csv
import io
import json
import math
import unicodedata

from .coverage import beyond_calibration
from .expected import ExpectedStep
from .expected import to_json as expected_json
from .hardware import load_catalogue, sparse_warnings
from .pins import PinRow, bound_word, compare_metrics
from .scenario import ScenarioResult

LADDER_COLUMNS = (
    ("batch", "batch"),
    ("arithmetic_intensity_weights", "arithmetic_intensity_weights_flop_per_byte"),
    ("arithmetic_intensity_with_kv", "arithmetic_intensity_with_kv_flop_per_byte"),
    ("attainable_flop_per_s_weights", "attainable_flop_per_s_weights"),
    ("peak_fraction_weights", "peak_fraction_weights"),
    ("tokens_per_s_with_kv", "tokens_per_s_with_kv"),
    ("tokens_per_s_weights", "tokens_per_s_weights"),
    ("fits", "fits_in_memory"),
)

#: The config keys the lab does not model, "; "-separated, the last column of the ladder's and the pins' CSV: where
#: there are any, every figure of the row is approximate (the Pins table's "≈"; a trial found the CSV's figures
#: unmarked).
APPROXIMATE_COLUMN = "approximate_keys_not_modelled"

#: The pins' one column list, for the Export tab's "Pins (CSV)", the Compare tab's "These rows (CSV)" and the
#: JSON's pins (issue 30: the Pins CSV lacked the per-sequence tokens/s and time per token the Compare CSV had):
#: each pin's number, name and levers, its split (the aggregate tokens/s is ``sequences_in_flight``, B × PP
#: micro-batches, times the tokens/s per sequence), the Compare tab's rows in SI (:func:`core.pins.compare_metrics`:
#: the expected tokens/s per sequence among them, empty where no expected step could be computed) with the engine
#: preset that expected step used, then the rest.
PIN_COLUMNS = (
    "pin", "name", "model", "gpu", "weight_dtype", "kv_dtype", "batch", "spec_k", "context_tokens", "gqa",
    "cuda_graphs", "tensor_parallel", "pipeline_parallel", "expert_parallel", "gpus", "sequences_in_flight",
    *(m.column for m in compare_metrics()), "expected_engine_preset",
    "arithmetic_intensity_weights_flop_per_byte", "attainable_flop_per_s_weights", "weight_bytes_read",
    "memory_used_bytes", "capacity_bytes", "fits_in_memory", "bound", "differs_by",
    APPROXIMATE_COLUMN,
)


#: The scenario each ladder row is of, in the ladder CSV's first columns (a docs writer's trial: a pasted table had
#: batch and numbers only, no model, GPU or precision).  ``(header, how the result gives it)``.
SCENARIO_COLUMNS = (
    ("model", lambda r: r.model.name), ("gpu", lambda r: r.gpu.name), ("weight_dtype", lambda r: r.weight_dtype),
    ("kv_dtype", lambda r: r.kv_dtype), ("spec_k", lambda r: r.spec_k), ("context_tokens", lambda r: r.context),
    ("tensor_parallel", lambda r: r.tp), ("pipeline_parallel", lambda r: r.pp),
)


def ladder_records(r: ScenarioResult) -> list[dict]:
    """The batch ladder as one dict per rung (keys as in :data:`LADDER_COLUMNS`, then :data:`APPROXIMATE_COLUMN`)."""
    lad, approximate = r.ladder, "; ".join(r.model.unmodelled)
    return [
        {**{header: getattr(lad, attr)[i].item() for attr, header in LADDER_COLUMNS}, APPROXIMATE_COLUMN: approximate}
        for i in range(len(lad.batch))
    ]


def pin_records(rows: list[PinRow], engine: str | None = None) -> list[dict]:
    """The pins, evaluated, one dict per pin (keys as in :data:`PIN_COLUMNS`; SI units); the expected tokens/s
    under ``engine``'s preset (None: generic; :func:`core.expected.expected_step`), None where it has none.

    Raises:
        ValueError: an engine :func:`core.expected.engine_names` does not list.
    """
    metrics = compare_metrics(engine)
    out = []
    for i, row in enumerate(rows):
        r = row.result
        record = {
            "pin": i + 1, "name": row.pin.name, "model": r.model.id, "gpu": r.gpu.id,
            "weight_dtype": r.weight_dtype, "kv_dtype": r.kv_dtype, "batch": r.batch, "spec_k": r.spec_k,
            "context_tokens": r.context, "gqa": r.gqa,
            # the launches the ceiling counts (a serving engineer's trial: two INT4 rows at 470 and 1,350 tokens/s
            # differed in the CSV by their numbers only)
            "cuda_graphs": r.deployment.cuda_graphs,
            "tensor_parallel": r.tp, "pipeline_parallel": r.pp, "expert_parallel": r.ep, "gpus": r.gpus_total,
            "sequences_in_flight": r.batch * r.pp,
            **{m.column: _finite_or_none(m.si(r)) for m in metrics},
            "expected_engine_preset": engine or "generic",
            "arithmetic_intensity_weights_flop_per_byte": r.arithmetic_intensity_weights,
            "attainable_flop_per_s_weights": r.attainable_flop_per_s_weights,
            "weight_bytes_read": r.weight_bytes_read,
            "memory_used_bytes": r.memory_used_bytes, "capacity_bytes": r.capacity_bytes,
            "fits_in_memory": r.fits,
            "bound": bound_word(r),  # the Pins table's word under its tokens/s
            "differs_by": "; ".join(row.differs_by),
            APPROXIMATE_COLUMN: "; ".join(r.model.unmodelled),
        }
        out.append({column: record[column] for column in PIN_COLUMNS})  # KeyError on a column left out
    return out


def _finite_or_none(value):
    """A number as written out: None (JSON's null, an empty CSV cell) for NaN, a value not computed."""
    return None if isinstance(value, float) and math.isnan(value) else value


def scenario_json(r: ScenarioResult, expected: ExpectedStep | None = None) -> dict:
    """One scenario as ``python -m core explain --json`` prints it and the Export tab's JSON carries it (SI units):
    the result's keys (:meth:`ScenarioResult.to_json`), the model as read and its assumptions, the config keys the
    lab does not model (``approximate``: where there are any, every number depends on them), and with ``expected``
    (:func:`core.expected.expected_for_scenario`, TTFT included) the ``expected_*`` keys and
    ``expected_beyond_calibration``; for a GPU of the user's own, ``gpu_warnings`` (a peak that looks like a 2:4
    sparsity headline: :func:`core.hardware.sparse_warnings`)."""
    out = r.to_json()
    out["model_read"] = r.model.architecture()
    out["assumptions"] = list(r.model.assumptions)
    if expected is not None:
        out.update(expected_json(expected))
        out["expected_beyond_calibration"] = list(beyond_calibration(r, expected.engine))
    out["approximate"] = list(r.model.unmodelled)
    if r.gpu.id not in load_catalogue():  # a GPU of the user's own: its figures' checks, as its form said them
        out["gpu_warnings"] = sparse_warnings(r.gpu)
    return out


def to_json(r: ScenarioResult, pins: list[PinRow] = (), engine: str | None = None,
            expected: ExpectedStep | None = None) -> str:
    """Scenario (:func:`scenario_json`, the keys ``explain --json`` prints), ladder and pins as one JSON document (SI
    units); the pins' expected tokens/s under ``engine``'s preset (None: generic); ``expected``: the scenario's
    :class:`~core.expected.ExpectedStep` under that preset (None: the scenario has no ``expected_*`` keys)."""
    scenario = scenario_json(r, expected)
    doc = {
        "units": "SI: bytes, FLOP, seconds, FLOP/s, bytes/s; intensities in FLOP/byte",
        "scenario": scenario,
        "ladder": ladder_records(r),
        "pins": pin_records(list(pins), engine),
    }
    return json.dumps(doc, indent=2, allow_nan=False)  # strict JSON: never Infinity or NaN


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value):
    """A CSV cell that a spreadsheet shows as text, never runs.

    A text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
    apostrophe, OWASP's rule against CSV injection (a pin renamed ``=HYPERLINK(…)`` stays that text).
    The sign is looked for after any leading whitespace (spreadsheets skip it: `` =1+1`` is a formula) and
    in its compatibility forms (NFKC: the fullwidth ``＝ ＋ － ＠`` and the small ``﹦`` that a spreadsheet
    with an East Asian input method reads as ``=``); numbers and booleans pass unchanged.
    """
    if isinstance(value, str) and (value.startswith(FORMULA_STARTS)
                                   or unicodedata.normalize("NFKC", value.lstrip()[:1]).startswith(FORMULA_STARTS)):
        return "'" + value
    return value


def _csv(records: list[dict], columns) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: neutralise(value) for key, value in rec.items()} for rec in records)
    return buf.getvalue()


def ladder_csv(r: ScenarioResult) -> str:
    """The batch ladder as CSV with unit-named headers, each row led by its scenario (:data:`SCENARIO_COLUMNS`)."""
    scenario = {header: of(r) for header, of in SCENARIO_COLUMNS}
    return _csv([{**scenario, **rec} for rec in ladder_records(r)],
                [*(h for h, _ in SCENARIO_COLUMNS), *(h for _, h in LADDER_COLUMNS), APPROXIMATE_COLUMN])


def pins_csv(rows: list[PinRow], engine: str | None = None) -> str:
    """The pins as CSV with unit-named headers (:data:`PIN_COLUMNS`), the one file both the Export tab's
    "Pins (CSV)" and the Compare tab's "These rows (CSV)" write: per pin, its levers, tokens/s per sequence and
    for the batch, time per output token (s), weights and KV held (bytes), memory over capacity and whether it
    fits, intensities and fraction of peak, what bounds it, the expected tokens/s per sequence under ``engine``'s
    preset (None: generic); a name a spreadsheet would run as a formula is neutralised (:func:`neutralise`)."""
    return _csv(pin_records(rows, engine), PIN_COLUMNS)
